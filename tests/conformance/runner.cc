// conformance_runner: runs the ONNX backend-test cases (node and simple) in fast and exact mode and prints
// one line per case and mode, then `conformance: N passed, N failed` and the count per status.
//
//   conformance_runner DATA_DIR [--filter SUBSTR]... [--mode fast|exact|both] [--report FILE]
//                      [--hashes FILE] [--list-status] [--via-format]
//
// DATA_DIR is the output of tools/gen_backend_data.py (DATA_DIR/node/<case>, DATA_DIR/simple/<case>) or another
// directory of that layout (testdata/newer-ops, made by tools/newer_ops_reference.py, has only node/).
// --filter keeps cases whose id ("node/test_abs") contains any of the given substrings. --list-status
// prints only "<case> <mode> <status>" (no detail), the form compared between the native and wasm builds.
// --via-format also runs each model converted to the OneModel format and fails a case whose outputs differ in
// any bit from the ONNX file's (docs/format.md).
// Exit status: 0 when no case fails, 1 when one does, 2 for usage errors.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "conformance.h"

namespace fs = std::filesystem;

namespace onemodel::conformance {

// Differences whose cause is understood and documented. A listed case that fails is reported as known-diff
// with this reason; a listed case that passes is simply a pass. Never a place to hide a defect.
const std::vector<KnownDiff>& known_diffs() {
  // ONNX 1.12's cast.py makes the bfloat16 expectations by keeping the upper 16 bits of each float32
  // (truncation), and for CastLike declares input 'like' with the input's shape [3,4] while writing a [1]
  // tensor for it. The engine rounds float32 -> bfloat16 to nearest even (tensors.md section 10, as later
  // ONNX releases specify), and refuses an input whose shape contradicts a declared fixed extent
  // (graph-runtime.md section 4). Both are defects of that release's data, not of the engine.
  static constexpr const char* kTruncated =
      "ONNX 1.12 expected data truncates float32 to bfloat16 (0.48033667 -> 0.478515625); the engine rounds to "
      "nearest even (0.48046875)";
  static constexpr const char* kLikeShape =
      "ONNX 1.12 declares input 'like' as [3,4] but its data is [1]; the engine refuses inputs that contradict "
      "a declared fixed extent";
  static constexpr const char* kLikeError = "InvalidInput: input 'like'";
  // ops-conv.md (Resize, align_corners): these two cases divide by the unrounded size in * scale; the spec and
  // ONNX Runtime divide by the rounded output size, so they fail by design.
  static constexpr const char* kAlignCorners =
      "ONNX 1.12 expected data divides align_corners coordinates by the unrounded size in * scale; the spec and "
      "ONNX Runtime use the rounded output size (ops-conv.md)";
  static const std::vector<KnownDiff> list = {
      {"node/test_cast_FLOAT_to_BFLOAT16", "got 0.48046875, want 0.478515625", kTruncated},
      {"node/test_castlike_FLOAT_to_BFLOAT16", kLikeError, kLikeShape},
      {"node/test_castlike_FLOAT_to_BFLOAT16_expanded", kLikeError, kLikeShape},
      {"node/test_castlike_BFLOAT16_to_FLOAT", kLikeError, kLikeShape},
      {"node/test_castlike_BFLOAT16_to_FLOAT_expanded", kLikeError, kLikeShape},
      {"node/test_resize_downsample_scales_linear_align_corners", "[1] got 4, want 3.14285707", kAlignCorners},
      {"node/test_resize_downsample_scales_cubic_align_corners", "[1] got 2.5, want 2.39519167", kAlignCorners},
  };
  return list;
}

namespace {

int usage(const char* msg) {
  std::fprintf(stderr,
               "conformance_runner: %s\nusage: conformance_runner DATA_DIR [--filter SUBSTR]... "
               "[--mode fast|exact|both] [--report FILE] [--hashes FILE] [--list-status] [--via-format]\n",
               msg);
  return 2;
}

const char* known_reason(const std::string& id, const std::string& detail) {
  for (const KnownDiff& k : known_diffs())
    if (id == k.case_id && detail.find(k.expect) != std::string::npos) return k.reason;
  return nullptr;
}

void finish(CaseResult& c, ModeResult& r) {
  if (r.status != Status::Fail) return;
  if (const char* why = known_reason(c.id(), r.detail)) {
    r.status = Status::KnownDiff;
    r.detail = std::string(why) + " [" + r.detail + "]";
  }
}

}  // namespace
}  // namespace onemodel::conformance

int main(int argc, char** argv) {
  using namespace onemodel::conformance;
  std::string data_dir, report, hashes;
  std::vector<std::string> filters;
  bool do_fast = true, do_exact = true, list_status = false, via_format = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--filter" || a == "--mode" || a == "--report" || a == "--hashes") {
      if (i + 1 >= argc) return usage((a + " expects a value").c_str());
      const char* v = argv[++i];
      if (a == "--filter")
        filters.push_back(v);
      else if (a == "--report")
        report = v;
      else if (a == "--hashes")
        hashes = v;
      else if (std::strcmp(v, "fast") == 0)
        do_exact = false;
      else if (std::strcmp(v, "exact") == 0)
        do_fast = false;
      else if (std::strcmp(v, "both") != 0)
        return usage("--mode expects fast, exact or both");
    } else if (a == "--list-status") {
      list_status = true;
    } else if (a == "--via-format") {
      via_format = true;
    } else if (!a.empty() && a[0] == '-') {
      return usage(("unknown option " + a).c_str());
    } else if (data_dir.empty()) {
      data_dir = a;
    } else {
      return usage("more than one DATA_DIR");
    }
  }
  if (data_dir.empty()) return usage("DATA_DIR is required");

  // A data directory holds node/, simple/ or both (the backend data has both; testdata/newer-ops only node/).
  std::vector<CaseResult> cases;
  int groups = 0;
  for (const char* group : {"node", "simple"}) {
    fs::path g = fs::path(data_dir) / group;
    std::error_code ec;
    if (!fs::is_directory(g, ec)) continue;
    ++groups;
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(g))
      if (e.is_directory()) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) {
      CaseResult c;
      c.group = group;
      c.name = n;
      bool keep = filters.empty();
      for (const std::string& f : filters) keep = keep || c.id().find(f) != std::string::npos;
      if (keep) cases.push_back(std::move(c));
    }
  }

  if (groups == 0) {
    std::fprintf(stderr, "conformance_runner: %s has neither node/ nor simple/\n", data_dir.c_str());
    return 2;
  }

  // An _expanded case is its operator's function body: it counts under the operator of its sibling case.
  for (CaseResult& c : cases) describe_case(fs::path(data_dir) / c.group / c.name, c);
  for (CaseResult& c : cases) {
    const std::string suffix = "_expanded";
    if (c.name.size() <= suffix.size() || c.name.compare(c.name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    std::string base = c.name.substr(0, c.name.size() - suffix.size());
    for (const CaseResult& s : cases)
      if (s.group == c.group && s.name == base && s.ops.size() == 1) {
        c.attributed_op = s.attributed_op;
        c.attributed_opset = s.attributed_opset;
      }
  }

  auto start = std::chrono::steady_clock::now();
  long counts[2][kStatusCount] = {};
  long passed = 0, fails = 0;
  for (CaseResult& c : cases) {
    fs::path dir = fs::path(data_dir) / c.group / c.name;
    for (int m = 0; m < 2; ++m) {
      bool exact = m == 1;
      if (exact ? !do_exact : !do_fast) continue;
      ModeResult& r = exact ? c.exact : c.fast;
      (exact ? c.ran_exact : c.ran_fast) = true;
      r = run_case(dir, exact ? onemodel::Mode::Exact : onemodel::Mode::Fast, via_format);
      finish(c, r);
      ++counts[m][static_cast<int>(r.status)];
      if (r.status == Status::Pass) ++passed;
      if (r.status == Status::Fail) ++fails;
      std::cout << c.id() << ' ' << (exact ? "exact" : "fast") << ' ' << status_name(r.status);
      if (!list_status && !r.detail.empty()) std::cout << ' ' << r.detail;
      std::cout << '\n';
    }
  }
  std::cout.flush();

  if (!hashes.empty()) {
    std::vector<std::string> lines;
    for (const CaseResult& c : cases)
      if (c.ran_exact && !c.exact.hash.empty()) lines.push_back(c.id() + " " + c.exact.hash);
    std::sort(lines.begin(), lines.end());
    std::ofstream f(hashes);
    for (const std::string& l : lines) f << l << '\n';
    if (!f) {
      std::fprintf(stderr, "conformance_runner: cannot write %s\n", hashes.c_str());
      return 2;
    }
  }
  if (!report.empty()) {
    try {
      write_report(report, cases, do_fast, do_exact);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "conformance_runner: %s\n", e.what());
      return 2;
    }
  }

  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("conformance: %ld passed, %ld failed\n", passed, fails);
  for (int m = 0; m < 2; ++m) {
    if (m == 0 ? !do_fast : !do_exact) continue;
    std::printf("%s:", m == 0 ? "fast" : "exact");
    for (int s = 0; s < kStatusCount; ++s) std::printf(" %s %ld", status_name(static_cast<Status>(s)), counts[m][s]);
    std::printf("\n");
  }
  std::fprintf(stderr, "conformance_runner: %zu cases in %.1f s\n", cases.size(), secs);
  return fails ? 1 : 0;
}
