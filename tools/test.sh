#!/usr/bin/env bash
# Sets up whatever is missing, then runs every suite:
#   0. every citation of a document in the code resolves in docs/ (tools/check_doc_refs.py), and every C++,
#      TypeScript and JavaScript file is formatted (tools/format.sh --check)
#   1. C++ tests under AddressSanitizer + UndefinedBehaviorSanitizer (CTest, preset native-asan)
#   2. the ONNX backend conformance set, fast and exact, native and wasm (tools/conformance.sh)
#   3. JS tests of the npm package in Node (Vitest)
#   4. the browser test (npm pack tarball served locally, headless Chromium via playwright-core), and the
#      package in pages built by Vite (dev server and build) and esbuild (tests/bundlers/)
#   5. real models against ONNX Runtime: PP-OCRv4 det/rec/cls, Silero VAD, the MiniLM-shaped encoder, fast and
#      exact, native and wasm (tools/models/compare.mjs; models fetched into ~/.cache/onemodel, docs/models.md),
#      and the same models through the ASan+UBSan CLI (tools/models/sanitize.mjs; ISNet medium only with
#      ONEMODEL_TEST_MODELS_FULL=1: 150 s under the sanitizers), and CTC decoding of PP-OCRv4
#      recognition on text lines rendered in Chromium (tools/models/ctc_ocr.mjs), and models built in code
#      (GraphBuilder) against onnxruntime-node (tests/builder/oracle.mjs); then two npm packages
#      written for onnxruntime-node run unmodified on this package, native addon and wasm (tests/clients/)
#   6. golden hashes: exact mode on every row the machine offers (native targets x 1/2 threads, wasm in Node,
#      wasm in Chromium) against testdata/golden-exact.txt (tools/golden/README.md), the real models included
#      but ISNet medium (3.5 minutes; ONEMODEL_TEST_GOLDEN_FULL=1 adds it)
#   7. arm64 under qemu-aarch64 (tools/arm64/run.sh, docs/arm64.md section 5): the aarch64 cross build, the
#      golden rows arm64-{scalar,neon}-t{1,2} on every golden case except the real models, the C++ kernel
#      tests (with and without SDOT) and the conformance runner against step 2's x86 results;
#      ONEMODEL_TEST_ARM64_FULL=1 adds the real models and the whole C++ suite
#   8. the libFuzzer targets (tools/fuzz.sh, docs/fuzzing.md): the ONNX reader, the OneModel-format reader and
#      load-then-run, 20 s each, side by side (ONEMODEL_TEST_FUZZ_SECONDS); any finding fails
# Ends with one line `N passed, N failed` and exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mkdir -p build
start=$(date +%s)

passed=0
failed=0
suite_failed=()
# Each section's header says when it started (seconds since the start): CI's log then shows where time goes.
note() { printf '\n=== %s (at %d s)\n' "$*" "$(( $(date +%s) - start ))"; }
# tally SUITE LOG PREFIX [OKWORD FAILWORD]: adds the counts of the last line "PREFIX: N passed, M failed" of
# LOG (other words for passed/failed when given) to the totals; a missing line counts as one failure.
tally() {
  local suite=$1 log=$2 prefix=$3 ok=${4:-passed} bad=${5:-failed} line p=0 f=1
  line=$(grep -E "^$prefix: [0-9]+ $ok, [0-9]+ $bad" "$log" 2>/dev/null | tail -1)
  if [ -n "$line" ]; then
    p=$(sed -E "s/^$prefix: ([0-9]+) $ok.*/\\1/" <<<"$line")
    f=$(sed -E "s/.* ([0-9]+) $bad.*/\\1/" <<<"$line")
  fi
  passed=$((passed + p)); failed=$((failed + f))
  ((f)) && suite_failed+=("$suite")
  return 0
}

# tools/setup.sh, or the summary line of a failed run and exit.
setup_or_exit() {
  if ! "$@" ./tools/setup.sh; then
    echo "setup failed"
    echo "0 passed, 1 failed"
    exit 1
  fi
}

# Debian and npm packages first (setup without its builds): the background builds below need them.
setup_or_exit env ONEMODEL_SETUP_NO_BUILD=1

# Two builds in the background at the lowest priority (nice 19): the aarch64 cross build of step 7, then the fuzz
# build of step 8 (clang). They take the cycles the other steps leave idle (links, single-threaded suites) and
# barely slow those down; steps 7 and 8 wait for them. This run is bound by CPU time on two cores: when the fuzz
# build alone started after step 1, on one core at normal priority, it ran into the arm64 cross build and CI went
# past its budget (session 28).
mkdir -p build
nice -n 19 ./tools/arm64/run.sh --build >build/arm64-build.log 2>&1 &
arm64_build=$!
(
  while kill -0 "$arm64_build" 2>/dev/null; do sleep 5; done
  exec nice -n 19 ./tools/fuzz.sh --build
) >build/fuzz-build.log 2>&1 &
fuzz_build=$!

# The native and wasm builds and the npm package.
setup_or_exit env

# The ONNX backend-test data (generated once into a cache outside the repository): CTest's
# conformance_backend entry runs every case under ASan/UBSan, tools/conformance.sh below runs the report.
if data=$(/usr/bin/python3 tools/gen_backend_data.py); then
  export ONEMODEL_BACKEND_DATA=$data
else
  echo "generating the ONNX backend-test data failed"; failed=$((failed + 1)); suite_failed+=("backend data")
fi

# 0. Every citation of a document in the code resolves to a file (and section) of the repository ----------
note "document citations (tools/check_doc_refs.py)"
if /usr/bin/python3 tools/check_doc_refs.py; then
  passed=$((passed + 1))
else
  failed=$((failed + 1)); suite_failed+=("doc citations")
fi

# 0b. Every C++, TypeScript and JavaScript file is formatted (tools/format.sh: clang-format-14, Prettier) ------
note "formatting (tools/format.sh --check)"
if ./tools/format.sh --check; then
  passed=$((passed + 1))
else
  failed=$((failed + 1)); suite_failed+=("formatting")
fi

# 1. C++ under ASan/UBSan -------------------------------------------------------------------------------
note "C++ tests (native-asan)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if cmake --preset native-asan >/dev/null && cmake --build --preset native-asan -j "$(nproc)"; then
  # The GoogleTest binary runs as shards, each writing its own report (tests/CMakeLists.txt): a report left from
  # an earlier run must not count.
  rm -rf build/native-asan/gtest-xml
  ctest --preset native-asan --output-junit "$root/build/ctest-junit.xml" | tee build/ctest.log | grep -vE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed' || true
  # Counts each test of the shards' reports, and keeps the end of each failure's output for the summary.
  c_line=$(/usr/bin/python3 tools/ctest_report.py build/ctest-junit.xml build/native-asan/gtest-xml build/ctest-failures.txt)
  [[ $c_line =~ ^C\+\+:\ [0-9]+\ passed,\ [0-9]+\ failed ]] || c_line="C++: 0 passed, 1 failed (tools/ctest_report.py failed)"
  c_pass=$(sed -E 's/^C\+\+: ([0-9]+) passed.*/\1/' <<<"$c_line")
  c_fail=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$c_line")
  if ! grep -qE 'tests passed, [0-9]+ tests failed out of' build/ctest.log; then c_fail=$((c_fail + 1)); fi
  echo "$c_line"
  passed=$((passed + c_pass)); failed=$((failed + c_fail))
  ((c_fail)) && suite_failed+=("C++")
else
  echo "C++ build failed"; failed=$((failed + 1)); suite_failed+=("C++ build")
fi

# 2. ONNX conformance (native Release, fast + exact; the wasm runner must agree case by case) -----------
note "ONNX backend conformance (tools/conformance.sh)"
./tools/conformance.sh | tee build/conformance-summary.log
tally conformance build/conformance-summary.log conformance

# 3. JS in Node ----------------------------------------------------------------------------------------
note "JS tests (Vitest, Node $(node --version))"
rm -f build/vitest.json
npm run --silent test -- --reporter=default --reporter=json --outputFile="$root/build/vitest.json"
if [ -f build/vitest.json ]; then
  read -r j_pass j_fail < <(node -e '
    const r = require(process.argv[1]);
    console.log(r.numPassedTests, r.numFailedTests + (r.numTotalTestSuites && !r.success && r.numFailedTests === 0 ? 1 : 0));
  ' "$root/build/vitest.json")
else
  j_pass=0; j_fail=1
fi
echo "JS: $j_pass passed, $j_fail failed"
passed=$((passed + j_pass)); failed=$((failed + j_fail))
((j_fail)) && suite_failed+=("JS")

# 4. Browser ------------------------------------------------------------------------------------------
note "Browser test (headless Chromium)"
npm run --silent test:browser | tee build/browser.log
tally browser build/browser.log browser

# 4b. Bundlers: Vite (dev server and build) and esbuild, each page checked in headless Chromium.
note "Bundlers (tests/bundlers/run.mjs)"
node tests/bundlers/run.mjs | tee build/bundlers.log
tally bundlers build/bundlers.log bundlers

# 5. Real models --------------------------------------------------------------------------------------------
# onnxruntime-node is the oracle: a dev tool installed into bench/ only, never a dependency of the package.
note "Real models against ONNX Runtime (tools/models/compare.mjs)"
if tools/models/fetch.sh >build/models-fetch.log 2>&1 &&
   { [ -d bench/node_modules/onnxruntime-node ] || npm --prefix bench ci --ignore-scripts --no-audit --no-fund >>build/models-fetch.log 2>&1; }; then
  node tools/models/compare.mjs | tee build/models.log
  tally models build/models.log models ok missed
  # The same models through the ASan+UBSan CLI of step 1 (fast and exact): real exports reach paths the
  # unit tests' small models do not.
  node tools/models/sanitize.mjs | tee build/models-sanitize.log
  tally "models (sanitizer)" build/models-sanitize.log sanitize
  # CTC decoding end to end: PP-OCRv4 recognition of text lines rendered in Chromium (docs/ctc.md section 6).
  node tools/models/ctc_ocr.mjs | tee build/ctc-ocr.log
  tally "ctc ocr" build/ctc-ocr.log ctc-ocr ok missed
  # Models built in code (docs/model-building.md section 6): every exported model loads in onnxruntime-node and
  # agrees with our fast and exact outputs at fixed and symbolic shapes.
  node tests/builder/oracle.mjs | tee build/builder.log
  tally "built models" build/builder.log "built models against onnxruntime-node" ok missed
else
  tail -20 build/models-fetch.log
  echo "fetching the models or installing onnxruntime-node into bench/ failed"
  failed=$((failed + 1)); suite_failed+=("models")
fi

# 5b. Real clients: npm packages written for onnxruntime-node, run with their ORT imports resolved to this
# package (tests/clients/run.mjs; installs into ~/.cache/onemodel/clients from the npm registry).
note "Real clients against ONNX Runtime (tests/clients/run.mjs)"
node tests/clients/run.mjs | tee build/clients.log
tally clients build/clients.log clients

# 5c. The demo page (web/demo/): PP-OCRv4 detection in Chromium, boxes drawn, exact hash equal to native.
note "Demo page (tests/demo/run.mjs)"
node tests/demo/run.mjs | tee build/demo.log
tally demo build/demo.log demo

# 6. Golden hashes -------------------------------------------------------------------------------------
# ISNet medium (float16, 1024 x 1024) takes 3.5 minutes on the twelve rows of this machine: only with
# ONEMODEL_TEST_GOLDEN_FULL=1 (its hashes are in the expected file; tools/golden/README.md).
golden_args=(--strict --check testdata/golden-exact.txt)
[ "${ONEMODEL_TEST_GOLDEN_FULL:-0}" = 1 ] || golden_args+=(--exclude model/isnet16)
note "Golden hashes (tools/golden/golden.sh ${golden_args[*]})"
./tools/golden/golden.sh "${golden_args[@]}" | tee build/golden.log
tally golden build/golden.log golden

# 7. arm64 under qemu-aarch64 ------------------------------------------------------------------------------
note "arm64 (tools/arm64/run.sh; ONEMODEL_TEST_ARM64_FULL=${ONEMODEL_TEST_ARM64_FULL:-0})"
# The cross build started after setup (its log: build/arm64-build.log); run.sh builds again what is missing.
wait "$arm64_build"
ONEMODEL_ARM64_JOBS=$(nproc) ./tools/arm64/run.sh | tee build/arm64.log
tally "arm64 golden" build/arm64.log arm64-golden
tally "arm64 C++" build/arm64.log arm64-kernels
tally "arm64 conformance" build/arm64.log arm64-conformance

# 8. Fuzzing --------------------------------------------------------------------------------------------
note "libFuzzer targets (tools/fuzz.sh ${ONEMODEL_TEST_FUZZ_SECONDS:-20})"
if wait "$fuzz_build"; then
  ./tools/fuzz.sh "${ONEMODEL_TEST_FUZZ_SECONDS:-20}" | tee build/fuzz.log
else
  tail -30 build/fuzz-build.log
  echo "fuzz: the fuzz build failed" >build/fuzz.log
fi
tally fuzz build/fuzz.log fuzz

note "Summary ($(( $(date +%s) - start )) s)"
[ -s build/ctest-failures.txt ] && cat build/ctest-failures.txt
if ((${#suite_failed[@]})); then echo "failing suites: ${suite_failed[*]}"; fi
echo "$passed passed, $failed failed"
((failed == 0))
