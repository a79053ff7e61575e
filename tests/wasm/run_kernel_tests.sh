#!/bin/sh
# CTest entry wasm_kernel_tests: runs the wasm build of the C++ kernel tests under Node.
#   run_kernel_tests.sh NODE PROGRAM.cjs
# Exit 77 (CTest: skipped) when Node or the wasm program is absent (the wasm build is optional for a native
# developer; tools/setup.sh builds it, so tools/test.sh really runs it).
node=$1
program=$2
if [ -z "$node" ] || ! command -v "$node" >/dev/null 2>&1; then
  echo "wasm_kernel_tests: Node.js not found, skipped"; exit 77
fi
if [ ! -f "$program" ]; then
  echo "wasm_kernel_tests: $program is not built (cmake --build --preset wasm --target wasm_kernel_tests), skipped"
  exit 77
fi
# The wasm build has threads (docs/wasm-threads.md): the program keeps 8 Workers ready (-sPTHREAD_POOL_SIZE=8,
# tests/wasm/CMakeLists.txt), so the thread pool's own tests run here as they do natively.
exec "$node" "$program"
