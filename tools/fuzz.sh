#!/usr/bin/env bash
# Builds the libFuzzer targets (cmake --preset fuzz: clang-14, ASan + UBSan) and runs each for SECONDS
# (docs/fuzzing.md):
#   tools/fuzz.sh [SECONDS] [TARGET ...]      SECONDS per target (default 60); targets default to all three:
#                                             fuzz_onnx_reader fuzz_format_reader fuzz_load_run
#   tools/fuzz.sh --build                     the build alone (tools/test.sh starts it early, in the background)
# Seeds are made afresh each run in build/fuzz/seeds/: the small models of testdata/ (ONNX files up to 20 KB)
# and their conversions to the OneModel format (by the Release CLI, build/native/onemodel, built if absent).
# What libFuzzer learns is kept in build/fuzz/corpus/TARGET/; a finding (crash, sanitizer report, leak,
# uncaught non-onemodel exception, timeout, out-of-memory) is written to build/fuzz/findings/TARGET/.
# Ends with `fuzz: N passed, M failed` (a target fails on any finding) and exits non-zero on any finding.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build_only=0
if [ "${1:-}" = --build ]; then build_only=1; shift; fi
seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(fuzz_onnx_reader fuzz_format_reader fuzz_load_run)
jobs=${ONEMODEL_FUZZ_JOBS:-$(nproc)}

if ! { cmake --preset fuzz >/dev/null && cmake --build --preset fuzz -j "$jobs" --target "${targets[@]}"; }; then
  echo "fuzz: the fuzz build failed"
  echo "fuzz: 0 passed, ${#targets[@]} failed"
  exit 1
fi
((build_only)) && exit 0

# Seeds: testdata models, and the same models converted to the OneModel format.
cli=build/native/onemodel
if [ ! -x "$cli" ]; then
  cmake --preset native >/dev/null && cmake --build --preset native -j "$jobs" --target onemodel_cli >/dev/null
fi
seeds=build/fuzz/seeds
rm -rf "$seeds"
mkdir -p "$seeds/onnx" "$seeds/onemodel"
n=0
while IFS= read -r model; do
  n=$((n + 1))
  cp "$model" "$seeds/onnx/$n.onnx"
  "$cli" convert "$model" "$seeds/onemodel/$n.onemodel" >/dev/null 2>&1 || rm -f "$seeds/onemodel/$n.onemodel"
done < <(find testdata -name '*.onnx' -size -20k | sort)
echo "fuzz: seeds: $(ls "$seeds/onnx" | wc -l) ONNX files, $(ls "$seeds/onemodel" | wc -l) converted"

# run_target T: one target for SECONDS; its exit status goes to build/fuzz/T.rc. The targets run side by side,
# as many at a time as there are cores (each is one process on one core).
run_target() {
  local t=$1 dirs corpus findings log
  case $t in
    fuzz_onnx_reader) dirs=("$seeds/onnx") ;;
    fuzz_format_reader) dirs=("$seeds/onemodel") ;;
    *) dirs=("$seeds/onnx" "$seeds/onemodel") ;;
  esac
  corpus=build/fuzz/corpus/$t findings=build/fuzz/findings/$t log=build/fuzz/$t.log
  mkdir -p "$corpus" "$findings"
  # -timeout: one input may run 20 s (a finding beyond); -rss_limit_mb also caps single allocations.
  ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "build/fuzz/$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$root/$findings/" "$corpus" "${dirs[@]}" >"$log" 2>&1
  echo $? >"build/fuzz/$t.rc"
}
for t in "${targets[@]}"; do
  rm -f "build/fuzz/$t.rc"
  while (($(jobs -rp | wc -l) >= $(nproc))); do wait -n; done
  run_target "$t" &
done
wait

passed=0
failed=0
for t in "${targets[@]}"; do
  corpus=build/fuzz/corpus/$t findings=build/fuzz/findings/$t log=build/fuzz/$t.log
  rc=$(cat "build/fuzz/$t.rc" 2>/dev/null || echo "none")
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo 0)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 || true)
  if [ "$rc" = 0 ]; then
    passed=$((passed + 1))
    echo "ok   $t: ${runs:-0} inputs in ${seconds} s, $cov, corpus $(ls "$corpus" | wc -l) files"
  else
    failed=$((failed + 1))
    echo "FAIL $t (exit $rc): findings in $findings/, log $log; its end:"
    grep -vE '^#[0-9]+' "$log" | tail -40 | sed 's/^/    /'
  fi
done
echo "fuzz: $passed passed, $failed failed"
((failed == 0))
