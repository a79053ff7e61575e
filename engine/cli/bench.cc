// `onemodel bench MODEL [--input NAME=FILE.npy]... [--dim NAME=VALUE]... [--mode fast|exact] [--threads N]
//                 [--seconds S] [--reps N] [--save-outputs DIR] [--profile] [--profile-top N]
//                 [--reshape NAME=FILE.npy]...`
// The native side of the bar runner (docs/bench-method.md, bench/run.mjs): times one model the way the
// method prescribes and prints exactly one line,
//   load_ms=... first_ms=... median_ms=... min_ms=... max_ms=...
// so a harness can parse it without knowing anything else about the tool.
//
// Procedure: load (timed alone: parse, import, optimise), one cold call (plan building and first touches
// of memory land here), up to 3 untimed warm-up calls, then `reps` repetitions. A repetition runs calls
// back to back until about S seconds have passed (at least 1 call, at most 1000) and its value is the
// mean time per call; median/min/max are over the repetitions. The warm-up stops early once it has used S
// seconds, so a model whose single call takes several seconds does not spend three of them warming up.
//
// Inputs are bound once before timing (the timed region is the run call only) and outputs are written in
// place into the tensors of the previous call, which is the "outputs left in the engine's own buffers" of
// the method. Random inputs are the ones `onemodel run` makes; unlike `run`, symbolic dims are not
// silently 1: a benchmark at the wrong size would be a wrong number, so they must be given with --dim.
//
// --reshape gives some inputs a second value, usually of another shape (OCR runs its recogniser at a new
// width for every text line). After the timed repetitions the tool switches to it and adds to the line
//   reshape_first_ms=... reshape_min_ms=...
// the first call at the new shape (plan building for it, with the session already warm) and the fastest of
// up to 20 calls after it (at most S seconds): the cost of a new shape is their ratio.
//
// --profile adds one profiled repetition after the timed ones and prints, after the result line, the time per
// operator type and per node (self time, sorted, share of the run; docs/profiling.md). --profile-top N
// limits the node table to N rows (0: every node).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "cli/cli.h"
#include "cli/npy.h"

namespace onemodel::cli {

namespace {

struct BenchArgs : CommonArgs {
  std::map<std::string, int64_t> dims;                       // symbolic dim name -> extent
  std::vector<std::pair<std::string, std::string>> reshape;  // NAME=FILE.npy: the inputs' second values
  double seconds = 1.0;
  int reps = 3;
  bool profile = false;
  int profile_top = 30;
};

double parse_seconds(const std::string& v) {
  size_t used = 0;
  double s = 0;
  try {
    s = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  // !(s > 0) also catches NaN.
  if (v.empty() || used != v.size() || !(s > 0) || s > 600)
    throw UsageError("--seconds expects a number of seconds above 0 and at most 600, got '" + v + "'");
  return s;
}

BenchArgs parse_args(const std::vector<std::string>& args) {
  BenchArgs r;
  parse_common_args(args, "bench", r, [&](const std::string& a, const OptionValue& take) {
    if (a == "--dim") {
      std::string v = take();
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
        throw UsageError("--dim expects NAME=VALUE, got '" + v + "'");
      std::string name = v.substr(0, eq);
      if (r.dims.count(name)) throw UsageError("--dim " + name + " is given twice");
      r.dims[name] = parse_int("--dim " + name, v.substr(eq + 1), 0, int64_t{1} << 31);
    } else if (a == "--seconds") {
      r.seconds = parse_seconds(take());
    } else if (a == "--reps") {
      r.reps = static_cast<int>(parse_int("--reps", take(), 1, 100));
    } else if (a == "--reshape") {
      std::string v = take();
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
        throw UsageError("--reshape expects NAME=FILE.npy, got '" + v + "'");
      r.reshape.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (a == "--profile") {
      r.profile = true;
    } else if (a == "--profile-top") {
      r.profile = true;
      r.profile_top = static_cast<int>(parse_int("--profile-top", take(), 0, 1000000));
    } else {
      return false;
    }
    return true;
  });
  return r;
}

// The inputs of one benchmark: given files, else random values at the declared shape with symbolic dims
// taken from --dim. Every symbolic dim without a --dim, and every unnamed unknown dim, is collected first
// so that one error names them all.
std::vector<NamedTensor> bind_inputs(const Session& session, const BenchArgs& ba) {
  std::map<std::string, Tensor> given;
  for (const auto& [name, file] : ba.inputs) {
    bool known = false;
    for (const auto& in : session.inputs()) known = known || in.name == name;
    if (!known) {
      std::string names;
      for (const auto& in : session.inputs()) names += (names.empty() ? "" : ", ") + in.name;
      throw Error(ErrorKind::InvalidInput, "the model has no input '" + name + "' (its inputs: " + names + ")");
    }
    if (given.count(name)) throw UsageError("input '" + name + "' is given twice");
    given[name] = read_npy(file);
  }

  std::vector<std::string> missing_dims, unnamed;
  std::set<std::string> used_dims;
  for (const ValueInfo& in : session.inputs()) {
    if (given.count(in.name) || !in.has_shape) continue;
    for (const Dim& d : in.dims) {
      if (d.is_fixed()) continue;
      if (d.param.empty()) {
        unnamed.push_back(in.name);
      } else if (ba.dims.count(d.param)) {
        used_dims.insert(d.param);
      } else if (std::find(missing_dims.begin(), missing_dims.end(), d.param) == missing_dims.end()) {
        missing_dims.push_back(d.param);
      }
    }
  }
  if (!missing_dims.empty()) {
    std::string list, flags;
    for (const auto& n : missing_dims) {
      list += (list.empty() ? "" : ", ") + n;
      flags += " --dim " + n + "=VALUE";
    }
    throw Error(ErrorKind::InvalidArgument,
                "symbolic dims without a value: " + list + " (give them with" + flags + ")");
  }
  if (!unnamed.empty())
    throw Error(ErrorKind::InvalidArgument, "input '" + unnamed.front() +
                                                "' has a dim of unknown extent; give it with --input " +
                                                unnamed.front() + "=FILE.npy");
  for (const auto& [name, value] : ba.dims) {
    if (!used_dims.count(name)) throw UsageError("--dim " + name + " names no symbolic dim of a random input");
  }

  std::vector<NamedTensor> inputs;
  uint64_t seed = 20240601;  // the seed sequence of `onemodel run`, so both tools make the same values
  for (const ValueInfo& in : session.inputs()) {
    auto it = given.find(in.name);
    if (it != given.end()) {
      inputs.push_back({in.name, it->second});
    } else {
      ValueInfo fixed = in;
      for (Dim& d : fixed.dims) {
        if (!d.is_fixed()) d.value = ba.dims.at(d.param);
      }
      inputs.push_back({in.name, random_input(fixed, seed)});
    }
    ++seed;
  }
  return inputs;
}

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

void save_outputs(const std::string& save_dir, const std::vector<std::string>& names,
                  const std::vector<Tensor>& outputs) {
  std::filesystem::path dir = save_dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::Io, "cannot create directory " + dir.string() + ": " + ec.message());
  std::set<std::string> used;
  for (size_t i = 0; i < outputs.size(); ++i) {
    // Same file names as `onemodel run --save-outputs`.
    std::string stem = sanitize_output_name(names[i]), name = stem;
    for (int k = 2; used.count(name); ++k) name = stem + "_" + std::to_string(k);
    used.insert(name);
    write_npy(dir / (name + ".npy"), outputs[i]);
  }
}

}  // namespace

int cmd_bench(const std::vector<std::string>& args) {
  BenchArgs ba = parse_args(args);
  SessionOptions opts;
  opts.mode = ba.mode;
  opts.intra_op_threads = ba.threads;
  opts.optimization_level = ba.optimization;
  opts.weight_storage = ba.weight_storage;

  Clock::time_point t0 = Clock::now();
  Session session = Session::load(ba.model, opts);
  const double load_ms = ms_since(t0);

  std::vector<NamedTensor> bound = bind_inputs(session, ba);
  std::vector<std::string> in_names, out_names;
  std::vector<Tensor> in_tensors;
  for (auto& nt : bound) {
    in_names.push_back(nt.name);
    in_tensors.push_back(std::move(nt.tensor));
  }
  for (const ValueInfo& o : session.outputs()) out_names.push_back(o.name);
  std::vector<Tensor> outputs(out_names.size());  // empty: the first call allocates, later calls overwrite
  auto call = [&] { session.run(in_names, in_tensors, out_names, outputs); };

  t0 = Clock::now();
  call();
  const double first_ms = ms_since(t0);

  const double budget_ms = ba.seconds * 1000.0;
  t0 = Clock::now();
  for (int i = 0; i < 3; ++i) {
    call();
    if (ms_since(t0) >= budget_ms) break;
  }

  std::vector<double> reps;
  for (int r = 0; r < ba.reps; ++r) {
    int calls = 0;
    double elapsed = 0;
    t0 = Clock::now();
    do {
      call();
      ++calls;
      elapsed = ms_since(t0);
    } while (elapsed < budget_ms && calls < 1000);
    reps.push_back(elapsed / calls);
  }
  std::vector<double> sorted = reps;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;

  if (!ba.save_dir.empty()) save_outputs(ba.save_dir, out_names, outputs);
  std::printf("load_ms=%.3f first_ms=%.3f median_ms=%.4f min_ms=%.4f max_ms=%.4f", load_ms, first_ms, median,
              sorted.front(), sorted.back());
  if (!ba.reshape.empty()) {
    const std::vector<Tensor> kept = in_tensors;  // the profile below runs at the first shape
    for (const auto& [name, file] : ba.reshape) {
      auto it = std::find(in_names.begin(), in_names.end(), name);
      if (it == in_names.end()) throw UsageError("--reshape " + name + " names no input of the model");
      in_tensors[static_cast<size_t>(it - in_names.begin())] = read_npy(file);
    }
    std::vector<Tensor> fresh(out_names.size());  // new shapes: let the call allocate its outputs
    t0 = Clock::now();
    session.run(in_names, in_tensors, out_names, fresh);
    const double reshape_first = ms_since(t0);
    double reshape_min = 0;
    Clock::time_point all = Clock::now();
    for (int i = 0; i < 20 && (i == 0 || ms_since(all) < budget_ms); ++i) {
      t0 = Clock::now();
      session.run(in_names, in_tensors, out_names, fresh);
      const double ms = ms_since(t0);
      if (i == 0 || ms < reshape_min) reshape_min = ms;
    }
    std::printf(" reshape_first_ms=%.3f reshape_min_ms=%.4f", reshape_first, reshape_min);
    in_tensors = kept;
  }
  std::printf("\n");
  if (ba.profile) {
    // One more repetition, profiled, after the timed ones: timing every node adds a little to each call, so the
    // numbers above stay unprofiled.
    session.start_profiling();
    int calls = 0;
    t0 = Clock::now();
    do {
      call();
      ++calls;
    } while (ms_since(t0) < budget_ms && calls < 1000);
    std::printf("\n%s", session.end_profiling().to_text(ba.profile_top).c_str());
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace onemodel::cli
