#!/usr/bin/env bash
# Runs the ONNX backend-test conformance set (node + simple, onnx 1.12) and the cases of newer operators
# (testdata/newer-ops) in fast and exact mode with the native Release build, writes docs/conformance.md (the
# backend cases) and build/conformance-hashes.txt, then runs the same cases with the wasm build of the runner
# under Node and requires the same status for every case and mode and the same exact-mode output hash for
# every case. Ends with the line `conformance: N passed, N failed`
# (N failed = failing cases + cases where wasm differs) and exits non-zero when that is not 0.
#
#   tools/conformance.sh [extra runner options, e.g. --filter node/test_add]
#
# Data: $ONEMODEL_BACKEND_DATA if set, else generated (once) by tools/gen_backend_data.py into
# ${ONEMODEL_CACHE:-~/.cache/onemodel}/onnx-backend-1.12.0. Nothing of it enters the repository.
# The report is only rewritten for a full run (no extra options), so a filtered run never truncates it.
# ONEMODEL_CONFORMANCE_WASM=0 skips the wasm comparison (it is also skipped, with a note, without emcc).
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p build

fail_setup() {
  echo "conformance: $1"
  echo "conformance: 0 passed, 1 failed"
  exit 1
}

data=${ONEMODEL_BACKEND_DATA:-}
if [ -z "$data" ]; then
  data=$(/usr/bin/python3 tools/gen_backend_data.py) || fail_setup "generating the backend-test data failed"
fi

{ cmake --preset native >/dev/null && cmake --build --preset native -j "$(nproc)" --target conformance_runner >/dev/null; } ||
  fail_setup "building the native conformance_runner failed"

report=()
(($# == 0)) && report=(--report docs/conformance.md)
./build/native/conformance_runner "$data" --mode both "${report[@]}" --hashes build/conformance-hashes.txt "$@" \
  >build/conformance.log
status=$?
grep -E '^[^ ]+ (fast|exact) fail' build/conformance.log || true
grep -E '^(fast|exact):' build/conformance.log
closing=$(grep -E '^conformance: [0-9]+ passed, [0-9]+ failed$' build/conformance.log)
[ -n "$closing" ] || fail_setup "the native runner ended without its closing line (exit status $status)"
passed=$(sed -E 's/^conformance: ([0-9]+) passed.*/\1/' <<<"$closing")
failed=$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$closing")

# The cases of operators newer than the backend data (opsets 18-26, testdata/newer-ops, made by
# tools/newer_ops_reference.py; docs/ops-newer.md). Same runner, same statuses; counted in the closing line.
newer=testdata/newer-ops
./build/native/conformance_runner "$newer" --mode both --hashes build/conformance-newer-hashes.txt "$@" \
  >build/conformance-newer.log
grep -E '^[^ ]+ (fast|exact) fail' build/conformance-newer.log || true
closing=$(grep -E '^conformance: [0-9]+ passed, [0-9]+ failed$' build/conformance-newer.log)
if [ -n "$closing" ]; then
  echo "newer operators: $closing"
  passed=$((passed + $(sed -E 's/^conformance: ([0-9]+) passed.*/\1/' <<<"$closing")))
  failed=$((failed + $(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$closing")))
else
  echo "conformance: the native runner ended without its closing line on $newer"; failed=$((failed + 1))
fi

# The wasm build: same statuses, same exact-mode hashes.
if [ "${ONEMODEL_CONFORMANCE_WASM:-1}" = 0 ]; then
  echo "conformance: wasm comparison skipped (ONEMODEL_CONFORMANCE_WASM=0)"
elif ! command -v emcc >/dev/null; then
  echo "conformance: wasm comparison skipped (no emcc; tools/setup.sh installs emscripten)"
else
  export NODE_PATH=/usr/share/nodejs
  if ! { cmake --preset wasm >/dev/null && cmake --build --preset wasm -j "$(nproc)" --target conformance_runner >/dev/null; }; then
    echo "conformance: building the wasm conformance_runner failed"
    failed=$((failed + 1))
  else
    node build/wasm/conformance_runner.cjs "$data" --mode both --list-status \
      --hashes build/conformance-hashes-wasm.txt "$@" >build/conformance-wasm.log
    node build/wasm/conformance_runner.cjs "$newer" --mode both --list-status \
      --hashes build/conformance-newer-hashes-wasm.txt "$@" >build/conformance-newer-wasm.log
    statuses() { grep -E '^[^ ]+ (fast|exact) ' "$1" | cut -d' ' -f1-3; }
    differ=$( (diff <(statuses build/conformance.log) <(statuses build/conformance-wasm.log);
               diff build/conformance-hashes.txt build/conformance-hashes-wasm.txt;
               diff <(statuses build/conformance-newer.log) <(statuses build/conformance-newer-wasm.log);
               diff build/conformance-newer-hashes.txt build/conformance-newer-hashes-wasm.txt) |
             grep -E '^[<>] ' | cut -c3- | cut -d' ' -f1 | sort -u)
    if [ -n "$differ" ]; then
      n=$(wc -l <<<"$differ")
      echo "conformance: wasm differs from native in $n cases (status or exact-mode hash):"
      sed 's/^/  /' <<<"$differ"
      failed=$((failed + n))
    else
      echo "conformance: wasm gives the native status for every case and mode and the native hash for every exact-mode pass"
    fi
  fi
fi

echo "conformance: $passed passed, $failed failed"
((failed == 0))
