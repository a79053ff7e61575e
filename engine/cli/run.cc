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

CommonArgs parse_args(const std::vector<std::string>& args) {
  CommonArgs r;
  parse_common_args(args, "run", r, [](const std::string&, const OptionValue&) { return false; });
  return r;
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  CommonArgs ra = parse_args(args);
  SessionOptions opts;
  opts.mode = ra.mode;
  opts.intra_op_threads = ra.threads;
  opts.optimization_level = ra.optimization;
  opts.weight_storage = ra.weight_storage;
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
  std::string passes;
  for (const auto& [name, count] : session.graph_passes())
    passes += (passes.empty() ? "" : ", ") + name + " " + std::to_string(count);
  std::printf("graph passes: %s\n", passes.empty() ? "none" : passes.c_str());
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
