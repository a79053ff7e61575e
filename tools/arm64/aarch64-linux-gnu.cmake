# Cross build for 64-bit Arm Linux with Debian's g++-aarch64-linux-gnu, run under qemu-aarch64 (docs/arm64.md).
# -march=armv8-a+crypto: the baseline Highway 1.0.3's NEON target needs with GCC 12 (it uses the AES and
# polynomial-multiply instructions, so a CPU without the crypto extension, e.g. the Raspberry Pi 4's, cannot
# run this build). Nothing newer: the dot-product instructions are chosen at run time (docs/arm64.md).
# -static: the programs run under qemu-aarch64 without an aarch64 sysroot.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_C_FLAGS_INIT "-march=armv8-a+crypto")
set(CMAKE_CXX_FLAGS_INIT "-march=armv8-a+crypto")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
# Libraries and headers come from the aarch64 root only; host headers the build needs (Highway, nlohmann-json,
# both header-only) are linked in by the CMake files, and GoogleTest is built from /usr/src/googletest.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
