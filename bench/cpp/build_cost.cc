// Graph-building cost with symbolic shapes (issue 14; ../shared/spec/traced-tensor-notes.md, "the defect to beat"):
// builds acc = acc * x + x 1600 times from a 16-element leaf whose axis is symbolic, and reports the time per operation
// for each block of 400 operations. Tenferro's measured figures: 1.2 us per operation from a concrete leaf, and
// 57 -> 422 us per operation (quadratic in total) from a symbolic one. The targets: the last block costs at most
// 1.3x the first, and the whole chain well under 2 x 1.2 us per operation.
//
//   build/native/bench/cpp/onemodel_build_cost [REPEATS]   (the minimum of REPEATS runs per block, default 20)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "onemodel/builder.h"

using namespace onemodel;

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  constexpr int kOps = 1600, kBlock = 400, kBlocks = kOps / kBlock;
  for (bool symbolic : {false, true}) {
    std::vector<double> best(kBlocks, 1e30);
    double best_total = 1e30;
    for (int r = 0; r < repeats; ++r) {
      GraphBuilder g;
      std::vector<float> data(16, 0.5f);
      Var x = g.leaf("x", Tensor::from_values(std::span<const float>(data), Shape{16}),
                     symbolic ? std::vector<std::string>{"n"} : std::vector<std::string>{});
      Var acc = x;
      double total = 0;
      for (int b = 0; b < kBlocks; ++b) {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kBlock / 2; ++i) acc = acc * x + x;  // two operations
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best[b] = std::min(best[b], s);
        total += s;
      }
      best_total = std::min(best_total, total);
      if (acc.shape_string() != (symbolic ? "[n]" : "[16]")) return std::printf("wrong shape\n"), 1;
    }
    std::printf("%s leaf:", symbolic ? "symbolic" : "concrete");
    for (int b = 0; b < kBlocks; ++b)
      std::printf("  ops %d-%d %.3f us/op", b * kBlock + 1, (b + 1) * kBlock, best[b] * 1e6 / kBlock);
    std::printf("  | last/first %.2f | whole chain %.3f ms (%.3f us/op; target < 2 x 1.2)\n",
                best[kBlocks - 1] / best[0], best_total * 1e3, best_total * 1e6 / kOps);
  }
  return 0;
}
