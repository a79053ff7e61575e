// An independent statement of RowReduce.Sum16 (ops-norms.md "The canonical sum") for the norms tests:
// term j to partial j mod 16 from +0, then the fixed pairwise tree. Written from the spec text, not from
// the engine's code, so the tests compare two implementations.
#pragma once
#include <vector>

namespace onemodel::test {

inline float ref_sum16(const std::vector<float>& t) {
  float p[16] = {};
  for (size_t j = 0; j < t.size(); ++j) p[j % 16] = p[j % 16] + t[j];
  float a[8], b[4];
  for (int k = 0; k < 8; ++k) a[k] = p[k] + p[k + 8];
  for (int k = 0; k < 4; ++k) b[k] = a[k] + a[k + 4];
  return (b[0] + b[2]) + (b[1] + b[3]);
}

}  // namespace onemodel::test
