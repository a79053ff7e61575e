#!/usr/bin/env bash
# Installs whatever is missing (Debian packages, npm packages) and builds the native and wasm engines and
# the npm package. Idempotent: a second run only rebuilds what changed.
#   ./tools/setup.sh            everything
#   ONEMODEL_SETUP_NO_BUILD=1   install only
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

log() { printf '[setup] %s\n' "$*"; }

# --- Debian packages -----------------------------------------------------------------------------------
# Each one is named, with the reason, in docs/dependencies.md.
# g++-aarch64-linux-gnu and qemu-user: the arm64 cross build and its runs under emulation (docs/arm64.md).
# clang-14 and libclang-rt-14-dev (its libFuzzer and sanitizer runtimes): the fuzz targets (docs/fuzzing.md).
apt_packages=(cmake ninja-build g++ pkg-config libgtest-dev libhwy-dev nlohmann-json3-dev
              python3 python3-onnx python3-numpy emscripten node-acorn chromium espeak-ng clang-format-14
              g++-aarch64-linux-gnu qemu-user clang-14 libclang-rt-14-dev)
missing=()
for p in "${apt_packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then missing+=("$p"); fi
done
# Node.js and npm may come from another packaging of nodejs (which bundles npm and conflicts with Debian's
# npm package): ask for the commands, not the package names.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  sudo_cmd=""
  if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- npm packages (dev tools only: typescript, vitest, playwright-core) ---------------------------------
stamp=node_modules/.onemodel-lock-stamp
if [ -f package-lock.json ]; then
  if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
    log "npm ci"
    npm ci --no-audit --no-fund --loglevel=error
    cp package-lock.json "$stamp"
  fi
fi

if [ "${ONEMODEL_SETUP_NO_BUILD:-0}" = 1 ]; then exit 0; fi

# --- builds ---------------------------------------------------------------------------------------------
jobs=$(nproc)
log "native build (build/native)"
cmake --preset native >/dev/null
# What the suites use of the Release build: the CLI, the conformance runner, the Node addon and the built-model
# zoo of tests/builder/oracle.mjs. The unit tests run in the ASan build (tools/test.sh step 1); `cmake --build
# --preset native` builds them in Release too (half of this build's compile time).
cmake --build --preset native -j "$jobs" --target onemodel_cli conformance_runner onemodel_node onemodel_build_zoo

log "wasm build (build/wasm)"
export NODE_PATH=/usr/share/nodejs
cmake --preset wasm >/dev/null
cmake --build --preset wasm -j "$jobs"
# The C++ kernel tests as a Node program: the native CTest entry wasm_kernel_tests runs it (skipped if absent).
cmake --build --preset wasm -j "$jobs" --target wasm_kernel_tests

if [ -f package.json ]; then
  log "npm package (dist/)"
  npm run --silent build
fi
log "done"
