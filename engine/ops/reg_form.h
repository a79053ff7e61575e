// The register epilogue (kern::RegEpilogue, kernels-gemm.md section 7) of a product's element-wise program: which
// programs the microkernel can apply to its finished tiles, for Conv and MatMul alike. Each caller says how every
// program input walks the product's C (RegInput); the matching is the same for both.
#ifndef ONEMODEL_OPS_REG_FORM_H_
#define ONEMODEL_OPS_REG_FORM_H_

#include <cstdint>
#include <optional>
#include <span>

#include "ir/ew_program.h"
#include "kernels/gemm.h"

namespace onemodel::rt {

// How program input i walks C (rows: a convolution's output channels or a MatMul's rows; columns: positions or
// a MatMul's columns). Input 0 is the product itself (Kind::Other).
struct RegInput {
  enum class Kind : uint8_t { Other, Value, PerRow, PerCol, Tile };
  Kind kind = Kind::Other;
  float value = 0;               // Value
  const float* p = nullptr;      // PerRow, PerCol: one value per row / column; Tile: C's shape
  int64_t ld = 0, n_stride = 0;  // Tile: row stride, and image stride of a convolution's batch
};

// The register epilogue of `p`, or nothing. `bias` (or null) is a per-row bias added before the program (a
// convolution's own bias loop). A first instruction Add(product, x) with x per row or per column is the bias;
// then a Mul and an Add per row (a batch normalisation), up to two steps by one value, a residual (a Tile input;
// not after those steps, and after the batch normalisation in exact mode only), a tail (Relu, Clip, LeakyRelu,
// HardSwish, Gelu, or hard-swish as four steps without a residual) and up to two steps by one value after it
// (not with a residual, not after a Gelu). `res_n` receives the residual's image stride.
std::optional<kern::RegEpilogue> register_form(const ir::EwProgram& p, std::span<const RegInput> in, const float* bias,
                                               bool exact, int64_t& res_n);

}  // namespace onemodel::rt

#endif
