#!/usr/bin/env bash
# The arm64 checks under qemu-aarch64 (docs/arm64.md sections 3 and 5). Cross-builds what it runs
# (tools/arm64/build.sh).
#   tools/arm64/run.sh   what tools/test.sh runs:
#     - the golden rows arm64-{scalar,neon}-t{1,2} on every case of testdata/golden/cases.txt except the real
#       models (model/*), against testdata/golden-exact.txt
#     - the C++ kernel tests (tests/cpp/kernel_*_test.cc: every target against the plain-loop references) on a
#       CPU with the dot-product instructions (-cpu max), and the integer product's on one without
#       (-cpu cortex-a53)
#     - the conformance runner on the ONNX backend data and testdata/newer-ops, fast and exact, compared with
#       the x86 results tools/conformance.sh leaves in build/ when they are there
#   ONEMODEL_TEST_ARM64_FULL=1 tools/arm64/run.sh   also the real models on the golden rows, and the whole C++
#     suite (onemodel_tests) on both CPUs
#   tools/arm64/run.sh --build   the cross build alone (tools/test.sh starts it early, in the background)
# Prints `arm64-golden: ...`, `arm64-kernels: ...` and `arm64-conformance: N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/../.."
full=${ONEMODEL_TEST_ARM64_FULL:-0}
build_only=0
[ "${1:-}" = --build ] && build_only=1
t0=$(date +%s)
rc=0
elapsed() { echo "arm64: $1 took $(($(date +%s) - $2)) s"; }

targets=(onemodel_cli conformance_runner onemodel_kernel_tests)
((full)) && targets+=(onemodel_tests)
if ! tools/arm64/build.sh "${targets[@]}"; then
  echo "arm64 build failed"
  for s in golden kernels conformance; do echo "arm64-$s: 0 passed, 1 failed"; done
  exit 1
fi
elapsed "the cross build (${targets[*]})" "$t0"
((build_only)) && exit 0

# --- golden rows ---------------------------------------------------------------------------------------
t=$(date +%s)
golden_args=(--strict --rows arm64 --check testdata/golden-exact.txt)
if ((full)); then
  echo "arm64: golden rows on every case of testdata/golden/cases.txt (real models included)"
else
  echo "arm64: golden rows on every case of testdata/golden/cases.txt except the real models (model/*;" \
    "ONEMODEL_TEST_ARM64_FULL=1 runs them)"
  golden_args+=(--exclude model/)
fi
node tools/golden/golden.mjs "${golden_args[@]}" >build/arm64/golden.log 2>&1 || rc=1
grep -E '^golden: ' build/arm64/golden.log | grep -v 'passed, [0-9]* failed$'
grep -A3 -E 'UNEQUAL|missing' build/arm64/golden.log | head -40
closing=$(grep -E '^golden: [0-9]+ passed, [0-9]+ failed$' build/arm64/golden.log | tail -1)
echo "arm64-${closing:-golden: 0 passed, 1 failed}"
elapsed "golden rows" "$t"

# --- C++ tests -------------------------------------------------------------------------------------------
# gtest PROGRAM CPU [ARGS...]: runs a GoogleTest program under qemu-aarch64 -cpu CPU; adds its test counts.
k_pass=0 k_fail=0
gtest() {
  local prog=$1 cpu=$2 log
  shift 2
  log=build/arm64/$(basename "$prog")-$cpu.log
  echo "arm64: $prog $* under qemu-aarch64 -cpu $cpu"
  qemu-aarch64 -cpu "$cpu" "$prog" "$@" >"$log" 2>&1
  local status=$? p f
  p=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) tests?\.$/\1/p' "$log" | tail -1)
  f=$(sed -nE 's/^ *([0-9]+) FAILED TESTS?$/\1/p' "$log" | tail -1)
  p=${p:-0} f=${f:-0}
  if ((status != 0 && f == 0)); then f=1; fi  # a crash or a missing summary
  grep -E '^\[  FAILED  \] [A-Za-z]|^\[  SKIPPED \] [A-Za-z]' "$log" | sort -u
  echo "  $p passed, $f failed"
  k_pass=$((k_pass + p)) k_fail=$((k_fail + f))
  ((f)) && rc=1
  return 0
}
t=$(date +%s)
gtest build/arm64/tests/onemodel_kernel_tests max
gtest build/arm64/tests/onemodel_kernel_tests cortex-a53 --gtest_filter='KernelQGemm*:KernelIsa*'
if ((full)); then
  gtest build/arm64/tests/onemodel_tests max
  gtest build/arm64/tests/onemodel_tests cortex-a53
fi
echo "arm64-kernels: $k_pass passed, $k_fail failed"
elapsed "C++ tests" "$t"

# --- conformance -----------------------------------------------------------------------------------------
t=$(date +%s)
data=${ONEMODEL_BACKEND_DATA:-$(/usr/bin/python3 tools/gen_backend_data.py)}
echo "arm64: conformance runner on $data and testdata/newer-ops, fast and exact"
qemu-aarch64 build/arm64/conformance_runner "$data" --mode both --hashes build/arm64/conformance-hashes.txt \
  >build/arm64/conformance.log 2>&1
qemu-aarch64 build/arm64/conformance_runner testdata/newer-ops --mode both \
  --hashes build/arm64/conformance-newer-hashes.txt >build/arm64/conformance-newer.log 2>&1
c_pass=0 c_fail=0
for log in build/arm64/conformance.log build/arm64/conformance-newer.log; do
  grep -E '^[^ ]+ (fast|exact) fail' "$log"
  grep -E '^(fast|exact):' "$log"
  closing=$(grep -E '^conformance: [0-9]+ passed, [0-9]+ failed$' "$log")
  if [ -z "$closing" ]; then
    echo "arm64: $log has no closing line"
    c_fail=$((c_fail + 1))
    continue
  fi
  c_pass=$((c_pass + $(sed -E 's/^conformance: ([0-9]+) passed.*/\1/' <<<"$closing")))
  c_fail=$((c_fail + $(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$closing")))
done
# The x86 results of tools/conformance.sh (tools/test.sh step 2), when present: the same status for every case
# and mode, and the same exact-mode hash for every exact pass.
if [ -f build/conformance-hashes.txt ] && [ -f build/conformance.log ] && [ -f build/conformance-newer.log ]; then
  statuses() { grep -E '^[^ ]+ (fast|exact) ' "$1" | cut -d' ' -f1-3; }
  differ=$( (diff <(statuses build/conformance.log) <(statuses build/arm64/conformance.log)
    diff build/conformance-hashes.txt build/arm64/conformance-hashes.txt
    diff <(statuses build/conformance-newer.log) <(statuses build/arm64/conformance-newer.log)
    diff build/conformance-newer-hashes.txt build/arm64/conformance-newer-hashes.txt) |
    grep -E '^[<>] ' | cut -c3- | cut -d' ' -f1 | sort -u)
  if [ -n "$differ" ]; then
    echo "arm64: differs from the x86 run in $(wc -l <<<"$differ") cases (status or exact-mode hash):"
    sed 's/^/  /' <<<"$differ"
    c_fail=$((c_fail + $(wc -l <<<"$differ")))
  else
    echo "arm64: the x86 status for every case and mode, and the x86 hash for every exact-mode pass"
  fi
else
  echo "arm64: no x86 conformance results in build/ (tools/conformance.sh writes them): not compared"
fi
echo "arm64-conformance: $c_pass passed, $c_fail failed"
((c_fail)) && rc=1
elapsed "conformance" "$t"

echo "arm64: $(($(date +%s) - t0)) s in all"
exit $rc
