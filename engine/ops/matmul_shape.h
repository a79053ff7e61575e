// The numpy matmul shape rule shared by MatMul (matmul.cc) and the integer products (quant_products.cc).
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "onemodel/error.h"
#include "onemodel/tensor.h"

namespace onemodel::rt {

struct MatMulDims {
  Shape a_batch, b_batch, out_batch, out;
  int64_t m = 1, n = 1, k = 0;
};

// numpy matmul shapes: 1-D A gets a leading 1 (removed again), 1-D B a trailing 1 (removed again); the
// batch dimensions broadcast. Returns false with a message on mismatch.
inline bool matmul_dims(const Shape& a, const Shape& b, MatMulDims& d, std::string& why) {
  if (a.rank() == 0 || b.rank() == 0) {
    why = "inputs must have rank >= 1";
    return false;
  }
  const int64_t ak = a[a.rank() - 1];
  const int64_t bk = b.rank() == 1 ? b[0] : b[b.rank() - 2];
  if (ak != bk) {
    why = "inner dimensions differ: " + a.to_string() + " x " + b.to_string();
    return false;
  }
  d.k = ak;
  d.m = a.rank() == 1 ? 1 : a[a.rank() - 2];
  d.n = b.rank() == 1 ? 1 : b[b.rank() - 1];
  auto dims = a.to_vector();
  d.a_batch = Shape(std::span<const int64_t>(dims.data(), static_cast<size_t>(std::max(0, a.rank() - 2))));
  auto bdims = b.to_vector();
  d.b_batch = Shape(std::span<const int64_t>(bdims.data(), static_cast<size_t>(std::max(0, b.rank() - 2))));
  try {
    d.out_batch = Shape::broadcast(d.a_batch, d.b_batch);
  } catch (const Error&) {
    why = "batch dimensions do not broadcast: " + a.to_string() + " x " + b.to_string();
    return false;
  }
  std::vector<int64_t> o = d.out_batch.to_vector();
  if (a.rank() > 1) o.push_back(d.m);
  if (b.rank() > 1) o.push_back(d.n);
  d.out = Shape(std::span<const int64_t>(o));
  return true;
}

}  // namespace onemodel::rt
