#!/usr/bin/env bash
# Runs the ONNX backend-test conformance set (node + simple, onnx 1.12) in fast and exact mode with the
# native Release build, writes docs/conformance.md and build/conformance-hashes.txt, prints the runner's
# closing lines and exits with its status (non-zero when any case fails).
#
#   tools/conformance.sh [extra runner options, e.g. --filter node/test_add]
#
# Data: $ONEMODEL_BACKEND_DATA if set, else generated (once) by tools/gen_backend_data.py into
# ${ONEMODEL_CACHE:-~/.cache/onemodel}/onnx-backend-1.12.0. Nothing of it enters the repository.
# The report is only rewritten for a full run (no extra options), so a filtered run never truncates it.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p build

data=${ONEMODEL_BACKEND_DATA:-}
if [ -z "$data" ]; then
  if ! data=$(/usr/bin/python3 tools/gen_backend_data.py); then
    echo "conformance: generating the backend-test data failed"
    echo "conformance: 0 passed, 1 failed"
    exit 1
  fi
fi

if ! { cmake --preset native >/dev/null && cmake --build --preset native -j "$(nproc)" --target conformance_runner >/dev/null; }; then
  echo "conformance: building conformance_runner failed"
  echo "conformance: 0 passed, 1 failed"
  exit 1
fi

report=()
(($# == 0)) && report=(--report docs/conformance.md)
./build/native/conformance_runner "$data" --mode both "${report[@]}" --hashes build/conformance-hashes.txt "$@" \
  >build/conformance.log
status=$?
grep -E '^[^ ]+ (fast|exact) fail' build/conformance.log || true
grep -E '^(conformance:|fast:|exact:)' build/conformance.log
exit $status
