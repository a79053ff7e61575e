// Exact mode against fast mode in one process (issue 10's target: exact at most 1.3x fast on the convolution and
// matrix-product models; docs/bench-method.md section 9). Separate processes on a shared machine moved by 10-40%
// within minutes in session 38, more than the effect measured; here one session per mode runs in the same
// process, ROUNDS times each in turn (three calls per turn, the turn's fastest kept), and each mode's minimum over
// the rounds is compared.
//
//   build/native/bench/cpp/onemodel_exact_fast MODEL [--input NAME=FILE.npy]... [--threads N] [--rounds R]
//   (threads: default one per logical core, as SessionOptions; rounds: default 12)
//
// Every input of the model must be given. Prints one line: fast_min_ms=.. exact_min_ms=.. exact_over_fast=..
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "cli/npy.h"
#include "onemodel/onemodel.h"

using namespace onemodel;

namespace {

double fastest_of_three(const Session& s, const std::vector<NamedTensor>& inputs) {
  double best = 1e30;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    s.run(inputs);
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

int usage() {
  std::fprintf(stderr, "usage: onemodel_exact_fast MODEL [--input NAME=FILE.npy]... [--threads N] [--rounds R]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  SessionOptions fast, exact;
  fast.mode = Mode::Fast;
  exact.mode = Mode::Exact;
  int rounds = 12;
  std::vector<std::pair<std::string, std::string>> files;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return usage();
    const std::string value = argv[++i];
    if (arg == "--threads") {
      fast.intra_op_threads = exact.intra_op_threads = std::atoi(value.c_str());
    } else if (arg == "--rounds") {
      rounds = std::max(1, std::atoi(value.c_str()));
    } else if (arg == "--input" && value.find('=') != std::string::npos && value.find('=') > 0) {
      files.emplace_back(value.substr(0, value.find('=')), value.substr(value.find('=') + 1));
    } else {
      return usage();
    }
  }
  try {
    const Session sf = Session::load(argv[1], fast), se = Session::load(argv[1], exact);
    std::vector<NamedTensor> inputs;
    for (const auto& [name, path] : files) inputs.push_back({name, cli::read_npy(path)});
    fastest_of_three(sf, inputs);  // plans built, weights packed, caches warm
    fastest_of_three(se, inputs);
    double f = 1e30, e = 1e30;
    for (int r = 0; r < rounds; ++r) {
      f = std::min(f, fastest_of_three(sf, inputs));
      e = std::min(e, fastest_of_three(se, inputs));
    }
    std::printf("fast_min_ms=%.4f exact_min_ms=%.4f exact_over_fast=%.3f\n", f, e, e / f);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "onemodel_exact_fast: %s\n", ex.what());
    return 1;
  }
  return 0;
}
