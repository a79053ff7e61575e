// Integer division rounding toward minus and plus infinity, for window arithmetic (ops/window.h) and the
// convolution drivers (kernels/conv_driver.cc). C++ `/` truncates toward zero, which is wrong for the negative
// offsets of taps that start in the padding.
#pragma once
#include <cstdint>

namespace onemodel {

// floor(a / b) for b > 0, without the overflow of a formula that negates `a`.
inline int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// ceil(a / b) for b > 0 (a > INT64_MIN).
inline int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

}  // namespace onemodel
