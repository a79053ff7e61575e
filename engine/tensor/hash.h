// The output hash (golden-hashes.md): one SHA-256 that identifies a tensor's element type, shape and bits,
// so exact-mode results can be compared across machines by a single line of text.
//
// Hashed bytes, in this order, all little-endian:
//   int64  element type code (the ONNX TensorProto.DataType value, e.g. 1 for F32)
//   int64  rank
//   int64  each dimension, outermost first
//   the elements in row-major order, each in its stored little-endian form (Bool as one byte 0/1,
//   F16/BF16 as their 2-byte patterns); a non-contiguous tensor is hashed as its contiguous() copy.
// A scalar therefore hashes code, 0, then its one element; an empty tensor hashes no element bytes.
#pragma once
#include <string>

#include "onemodel/tensor.h"

namespace onemodel {

// Lower-case hex SHA-256 of the layout above. Error(InvalidArgument) for an unset (empty()) tensor.
std::string tensor_sha256_hex(const Tensor& t);

}  // namespace onemodel
