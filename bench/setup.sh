#!/usr/bin/env bash
# Prepares the bar runner (bench/run.mjs): installs GNU time (peak RSS), torch for the torchvision exports, the
# real models of the whole-model rows (tools/models/fetch.sh), and ONNX Runtime for Node into
# bench/node_modules (never into the root package), then builds what the runner times: the Release CLI
# (build/native/onemodel) and the npm package (build/wasm, then dist/). Idempotent; incremental builds.
#   bench/setup.sh                     everything
#   ONEMODEL_BENCH_NO_BUILD=1 ...      install only
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
log() { printf '[bench-setup] %s\n' "$*"; }

# --- /usr/bin/time -v measures each process's peak RSS (Debian package `time`) ---------------------------
# --- and torch + torchvision export ResNet-50 / MobileNetV3-Large for the whole-model rows (fetch.sh) -------
need=()
[ -x /usr/bin/time ] || need+=(time)
/usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null || need+=(python3-torch python3-torchvision)
if ((${#need[@]})); then
  log "installing Debian packages: ${need[*]}"
  sudo_cmd=""
  if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# --- the real models of the whole-model rows (cache outside the repository; SHA-256 checked) --------------
log "real models (tools/models/fetch.sh)"
"$root/tools/models/fetch.sh" >/dev/null

# --- onnxruntime-node / onnxruntime-web (+ typescript to assemble dist/ without touching the root package) -
# --ignore-scripts: onnxruntime-node ships its CPU binaries in the package; its install script only fetches
# GPU builds, which this benchmark does not use and this machine could not download anyway.
stamp=bench/node_modules/.onemodel-bench-stamp
if [ ! -f "$stamp" ] || ! cmp -s bench/package.json "$stamp"; then
  log "npm install --ignore-scripts (bench/)"
  (cd bench && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
  cp bench/package.json "$stamp"
fi

if [ "${ONEMODEL_BENCH_NO_BUILD:-0}" = 1 ]; then exit 0; fi
jobs=${ONEMODEL_BENCH_JOBS:-$(nproc)}

# --- the native CLI (Release) ---------------------------------------------------------------------------
log "native Release CLI (build/native/onemodel) and Node addon (build/native/node/onemodel.node)"
cmake --preset native >/dev/null
cmake --build --preset native -j "$jobs" --target onemodel_cli
# The addon target exists only where node_api.h is installed (bindings/node/CMakeLists.txt).
cmake --build --preset native -j "$jobs" --target onemodel_node 2>/dev/null || log "no Node addon target: onemodel-node rows will fail"

# --- the npm package: wasm build, then dist/ ------------------------------------------------------------
log "wasm build (build/wasm)"
export NODE_PATH=/usr/share/nodejs
cmake --preset wasm >/dev/null
cmake --build --preset wasm -j "$jobs"

log "npm package (dist/)"
if [ -x node_modules/.bin/tsc ]; then
  npm run --silent build
else
  # The root package's dev tools are not installed: the same steps as its "build" script with bench's tsc.
  tsc=bench/node_modules/.bin/tsc
  rm -rf dist
  "$tsc" -p web/tsconfig.json
  "$tsc" -p node/tsconfig.json --typeRoots "$root/bench/node_modules/@types"
  node node/scripts/build-dist.mjs
fi
log "done: run node bench/run.mjs (or --quick)"
