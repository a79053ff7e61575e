// Whether kernels may read a tensor where it lies. Kernels use typed loads over row-major data, so a tensor
// given by a caller, an initializer viewing a file's bytes or a constant must be contiguous and its data
// aligned to its element size; otherwise the holder reads a copy (each holder makes its own kind of copy).
#pragma once
#include <cstddef>
#include <cstdint>

#include "onemodel/tensor.h"

namespace onemodel {

inline bool readable_in_place(const Tensor& t) noexcept {
  const size_t es = dtype_size(t.dtype());
  return t.is_contiguous() && es != 0 && reinterpret_cast<uintptr_t>(t.raw()) % es == 0;
}

}  // namespace onemodel
