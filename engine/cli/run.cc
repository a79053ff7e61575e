// `onemodel run MODEL [--input NAME=FILE.npy]... [--mode fast|exact] [--threads N] [--save-outputs DIR]`
// Loads the model through the public Session API, binds the given .npy inputs and deterministic random
// values for the rest, runs once and prints each output's shape, first values and output hash
// (tensor/hash.h), so two runs can be compared line by line.
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "cli/cli.h"
#include "cli/npy.h"
#include "tensor/hash.h"

namespace onemodel::cli {

namespace {

struct RunArgs {
  std::string model;
  std::vector<std::pair<std::string, std::string>> inputs;  // name, file
  Mode mode = Mode::Fast;
  int threads = 0;
  std::string save_dir;
};

int parse_threads(const std::string& v) {
  size_t used = 0;
  long n = 0;
  try {
    n = std::stol(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || v.empty() || n < 0 || n > 1024)
    throw UsageError("--threads expects a whole number from 0 to 1024, got '" + v + "'");
  return static_cast<int>(n);
}

RunArgs parse_args(const std::vector<std::string>& args) {
  RunArgs r;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i], value;
    bool has_value = false;
    // Accept both "--opt value" and "--opt=value".
    if (a.rfind("--", 0) == 0) {
      size_t eq = a.find('=');
      if (eq != std::string::npos) {
        value = a.substr(eq + 1);
        a = a.substr(0, eq);
        has_value = true;
      }
    }
    auto take = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "--input") {
      std::string v = take();
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
        throw UsageError("--input expects NAME=FILE.npy, got '" + v + "'");
      r.inputs.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (a == "--mode") {
      std::string v = take();
      if (v == "fast") r.mode = Mode::Fast;
      else if (v == "exact") r.mode = Mode::Exact;
      else throw UsageError("--mode expects fast or exact, got '" + v + "'");
    } else if (a == "--threads") {
      r.threads = parse_threads(take());
    } else if (a == "--save-outputs") {
      r.save_dir = take();
      if (r.save_dir.empty()) throw UsageError("--save-outputs needs a directory");
    } else if (a.rfind("-", 0) == 0 && a.size() > 1) {
      throw UsageError("unknown option '" + a + "'");
    } else if (r.model.empty()) {
      r.model = a;
    } else {
      throw UsageError("unexpected argument '" + a + "' (the model is '" + r.model + "')");
    }
  }
  if (r.model.empty()) throw UsageError("run needs a MODEL");
  return r;
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  RunArgs ra = parse_args(args);
  SessionOptions opts;
  opts.mode = ra.mode;
  opts.intra_op_threads = ra.threads;
  Session session = Session::load(ra.model, opts);

  std::map<std::string, Tensor> given;
  for (const auto& [name, file] : ra.inputs) {
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

  std::printf("model: %s\n", ra.model.c_str());
  std::printf("mode: %s, threads: %d, kernels: %s\n", ra.mode == Mode::Exact ? "exact" : "fast", ra.threads,
              std::string(session.kernel_path()).c_str());
  std::vector<NamedTensor> inputs;
  uint64_t seed = 20240601;  // fixed: the same random inputs on every run and machine
  for (const ValueInfo& in : session.inputs()) {
    auto it = given.find(in.name);
    Tensor t = it != given.end() ? it->second : random_input(in, seed);
    ++seed;
    std::printf("input %s: %s %s%s\n", in.name.c_str(), std::string(dtype_short_name(t.dtype())).c_str(),
                t.shape().to_string().c_str(), it != given.end() ? "" : " (random)");
    inputs.push_back({in.name, std::move(t)});
  }

  std::vector<Tensor> outputs = session.run(inputs);
  const auto& infos = session.outputs();
  if (outputs.size() != infos.size())
    throw Error(ErrorKind::Internal, "run returned " + std::to_string(outputs.size()) + " outputs for " +
                                         std::to_string(infos.size()) + " declared");

  std::filesystem::path dir;
  if (!ra.save_dir.empty()) {
    dir = ra.save_dir;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw Error(ErrorKind::Io, "cannot create directory " + dir.string() + ": " + ec.message());
  }
  std::set<std::string> used_names;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& t = outputs[i];
    std::printf("output %s: %s %s\n", infos[i].name.c_str(), std::string(dtype_short_name(t.dtype())).c_str(),
                t.shape().to_string().c_str());
    std::printf("  values: %s\n", format_values(t).c_str());
    std::printf("  sha256: %s\n", tensor_sha256_hex(t).c_str());
    if (!ra.save_dir.empty()) {
      // Two names can sanitize to the same stem ("a/b" and "a:b"); later ones get a numeric suffix.
      std::string stem = sanitize_output_name(infos[i].name), name = stem;
      for (int k = 2; used_names.count(name); ++k) name = stem + "_" + std::to_string(k);
      used_names.insert(name);
      std::filesystem::path file = dir / (name + ".npy");
      write_npy(file, t);
      std::printf("  saved: %s\n", file.string().c_str());
    }
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace onemodel::cli
