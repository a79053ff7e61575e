// The onemodel command-line tool: shared declarations of its commands and of the small helpers the unit
// tests check directly (file names for saved outputs, random inputs, value printing).
#pragma once
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "onemodel/session.h"
#include "onemodel/tensor.h"

namespace onemodel::cli {

// A command line the tool cannot make sense of: printed with the usage text, exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What `run` and `bench` share on their command lines.
struct CommonArgs {
  std::string model;
  std::vector<std::pair<std::string, std::string>> inputs;  // name, file
  Mode mode = Mode::Fast;
  int threads = 0;
  OptimizationLevel optimization = OptimizationLevel::All;
  WeightStorage weight_storage = WeightStorage::Float32;
  std::string save_dir;
};

// --weight-storage's value (float32, float16, bfloat16), or a UsageError.
WeightStorage parse_weight_storage(const std::string& v);

// Reads `--opt value` and `--opt=value` forms: --input NAME=FILE, --mode, --threads, --optimization,
// --weight-storage, --save-outputs and
// the one MODEL argument into `r`; any other option is offered to `extra(name, take)` (take() returns its value or
// throws), which returns false for an option it does not know. UsageError for anything else, and when
// `command` got no MODEL.
using OptionValue = std::function<std::string()>;
void parse_common_args(const std::vector<std::string>& args, const std::string& command, CommonArgs& r,
                       const std::function<bool(const std::string&, const OptionValue&)>& extra);

// A whole number in [lo, hi], or a UsageError naming the option.
int64_t parse_int(const std::string& opt, const std::string& v, int64_t lo, int64_t hi);

// Commands; `args` excludes the program and command names. Return the exit status.
int cmd_info(const std::vector<std::string>& args);
int cmd_run(const std::vector<std::string>& args);
int cmd_bench(const std::vector<std::string>& args);
int cmd_convert(const std::vector<std::string>& args);

// The file name stem for an output: every character outside [A-Za-z0-9._-] becomes '_' (so "a/b:c" ->
// "a_b_c"); an empty name becomes "_". Keeps saved outputs inside the chosen directory whatever the model
// calls them.
std::string sanitize_output_name(const std::string& name);

// Deterministic random input for a declared input (seeded by `seed`, the same on every platform):
// symbolic and unknown dims are 1; floats uniform in [-1, 1) on a 2^-23 grid (2^-10 for F16, 2^-7 for
// BF16, so each value is exact in its type); integers in [0, 4); Bool 0 or 1.
// Error(Unsupported) for non-tensor inputs or element types the engine does not store, and
// Error(InvalidArgument) for an input of unknown rank (it must then be given with --input).
Tensor random_input(const ValueInfo& info, uint64_t seed);

// Up to `max_values` leading elements (row-major) as text, floats with 6 significant digits.
std::string format_values(const Tensor& t, int max_values = 8);

// "F32 [batch,4]": element type and declared dims with symbolic names ("?" for unknown, "[...]" for
// unknown rank).
std::string describe_value(const ValueInfo& info);

}  // namespace onemodel::cli
