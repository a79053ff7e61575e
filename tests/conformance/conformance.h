// The ONNX backend-test conformance runner (docs/conformance.md, "Method"): shared types of the runner's
// three parts. case_run.cc runs one case in one mode, report.cc writes the Markdown report, runner.cc walks
// the data directory and prints one line per case and mode.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "onemodel/session.h"

namespace onemodel::conformance {

enum class Status { Pass, Fail, UnsupportedOp, UnsupportedType, NotExact, KnownDiff };
inline constexpr int kStatusCount = 6;
const char* status_name(Status s);

// One operator used by a case's model: "Type" for ai.onnx, "domain.Type" otherwise.
struct OpUse {
  std::string op;
  long long opset = 0;
};

struct ModeResult {
  Status status = Status::Fail;
  std::string detail;  // empty for pass; never a file path, so the report does not depend on where data lives
  std::string hash;    // exact mode, when every data set ran: SHA-256 over the outputs (see case_run.cc)
};

struct CaseResult {
  std::string group;  // "node" or "simple"
  std::string name;   // directory name, e.g. "test_abs"
  std::string id() const { return group + "/" + name; }
  std::vector<OpUse> ops;     // distinct, in model order
  std::string attributed_op;  // the operator the case counts under in the report
  long long attributed_opset = 0;
  bool ran_fast = false, ran_exact = false;
  ModeResult fast, exact;
};

// Reads the model's operators and picks the one the case is attributed to. Never throws: a model the
// importer refuses yields no operators (the run itself then reports the error).
void describe_case(const std::filesystem::path& dir, CaseResult& c);

// Runs every test_data_set_* of the case in `mode` at one intra-op thread and classifies the outcome.
// `via_format`: the model is also converted to the OneModel format in memory (docs/format.md) and run from
// those bytes on the same inputs; any output whose bits differ from the ONNX file's fails the case.
ModeResult run_case(const std::filesystem::path& dir, Mode mode, bool via_format = false);

// A listed difference whose cause is understood; the runner turns a fail of that case into known-diff.
// `expect` must occur in the failure's detail: a different failure of a listed case stays a fail.
struct KnownDiff {
  const char* case_id;
  const char* expect;
  const char* reason;
};
const std::vector<KnownDiff>& known_diffs();

void write_report(const std::filesystem::path& out, const std::vector<CaseResult>& cases, bool fast, bool exact);

}  // namespace onemodel::conformance
