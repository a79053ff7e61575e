// Inference BatchNormalization as a per-channel affine map (docs/ops-conv.md "BatchNormalization"):
// a = scale / sqrt(var + epsilon), b = B - mean * a, each operation rounded on its own, then y = x * a + b.
// The kernel (ops/batchnorm_lrn.cc) and the `batchnorm-affine` pass (passes/batchnorm_affine.cc) both take a
// and b from here, so the pass's Mul by a and Add of b give the kernel's bits.
#pragma once
#include <cmath>

namespace onemodel {

template <class T>
struct BatchNormAffine {
  T a, b;
};

template <class T>
inline BatchNormAffine<T> batchnorm_affine(T scale, T bias, T mean, T var, T epsilon) {
  const T a = scale / std::sqrt(var + epsilon);
  return {a, bias - mean * a};
}

}  // namespace onemodel
