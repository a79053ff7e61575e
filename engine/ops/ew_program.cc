#include "ops/ew_program.h"

#include <algorithm>
#include <array>
#include <vector>

#include "kernels/bias.h"
#include "ops/common.h"
#include "ops/elementwise_common.h"

namespace onemodel::rt::ewp {

void run_span(const kern::EwPlan& prog, kern::Isa isa, bool exact, std::span<const Operand> in, int64_t n, float* out) {
  if (n <= kern::kEwBlock) return kern::ew_block(isa, exact, prog, in.data(), n, out);
  std::array<Operand, ir::kEwMaxInputs> at;
  std::copy(in.begin(), in.end(), at.begin());
  for (int64_t b = 0; b < n; b += kern::kEwBlock) {
    kern::ew_block(isa, exact, prog, at.data(), std::min(kern::kEwBlock, n - b), out + b);
    for (size_t i = 0; i < in.size(); ++i)
      if (!at[i].scalar) at[i].p += kern::kEwBlock;
  }
}

void run_broadcast(const kern::EwPlan& prog, kern::Isa isa, bool exact, std::span<const Tensor* const> inputs,
                   Tensor& out, ThreadPool* pool) {
  const Shape& os = out.shape();
  const int64_t total = os.numel();
  if (total == 0) return;
  const size_t ni = inputs.size();
  // Strides of every input over the output, then adjacent axes merged wherever every input walks them as one
  // (contiguous, or broadcast along both): [1, C, H, W] against [1, C, 1, 1] becomes rows of H * W.
  std::vector<std::array<int64_t, kMaxRank>> st(ni);
  for (size_t i = 0; i < ni; ++i) st[i] = broadcast_strides(inputs[i]->shape(), os);
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides(ni);
  for (int d = 0; d < os.rank(); ++d) {
    const auto du = static_cast<size_t>(d);
    bool merge = !dims.empty();
    for (size_t i = 0; i < ni && merge; ++i) merge = strides[i].back() == st[i][du] * os[d];
    if (merge) {
      dims.back() *= os[d];
      for (size_t i = 0; i < ni; ++i) strides[i].back() = st[i][du];
    } else {
      dims.push_back(os[d]);
      for (size_t i = 0; i < ni; ++i) strides[i].push_back(st[i][du]);
    }
  }
  if (dims.empty()) {  // rank 0
    dims.push_back(1);
    for (size_t i = 0; i < ni; ++i) strides[i].push_back(0);
  }
  const size_t r = dims.size();
  const int64_t inner = dims[r - 1];
  const int64_t rows = total / inner;
  float* po = out.mutable_data<float>().data();
  auto offset = [&](size_t i, int64_t row) {
    int64_t off = 0;
    for (int64_t rem = row, d = static_cast<int64_t>(r) - 2; d >= 0; --d) {
      const auto du = static_cast<size_t>(d);
      off += (rem % dims[du]) * strides[i][du];
      rem /= dims[du];
    }
    return off;
  };
  // Rows whose inputs are each either laid out as the output or one value per row (run_rows): short rows several
  // to a block, the per-row values spread over it (SE blocks' [C, 1, 1] scale over 7 x 7 planes ran a block of
  // 49 values at a time); a longer row in blocks of its own, where its value stays one value (MobileNetV3's
  // 672-channel scale over 14 x 14 planes, standalone with its 168 -> 672 product, one thread: 0.099-0.105 ->
  // 0.089-0.095 ms, alternated). Every element still gets the same operations. Rows longer than a chunk go in
  // segments (below) so that one long row still spreads over the pool.
  // The estimate is twice a plain element-wise pass's: a program with per-row values measured about 1 ns per
  // value (MobileNetV3's SE gate and scale over 960 planes of 7 x 7, 47K values, 45 us at one thread), and at
  // 0.25 it stayed on one thread (12 us estimated).
  bool rowwise = inner <= ew::kChunk;
  for (size_t i = 0; i < ni && rowwise; ++i) rowwise = strides[i][r - 1] == 0 || inputs[i]->numel() == total;
  // A program ending in a Mul of the one input laid out as the output by a factor of one value per row (an
  // excitation gate times its features, kern::EwPlan::scale_input): the factor once per row, then the Mul alone
  // (graph-passes.md section 6). The same operations on every element. MobileNetV3's HardSigmoid gate over 672
  // planes of 14 x 14 with its 168 -> 672 product, one thread, AVX-512: 0.079 -> 0.050 ms.
  auto xs = static_cast<size_t>(prog.scale_input);
  auto vs = static_cast<size_t>(prog.scale_value_input);  // a Mul of two inputs: either may be the tensor
  bool first = prog.scale_first;
  bool by_rows = rowwise && prog.scale_input >= 0 && xs < ni && (prog.scale_prefix || vs < ni);
  if (by_rows && !prog.scale_prefix && strides[xs][r - 1] == 0) {
    std::swap(xs, vs);
    first = !first;
  }
  for (size_t i = 0; i < ni && by_rows; ++i) by_rows = i == xs ? strides[i][r - 1] != 0 : strides[i][r - 1] == 0;
  if (by_rows) {
    const float* x = inputs[xs]->data<float>().data();
    ew::for_row_chunks(pool, rows, inner, [&](int64_t r0, int64_t r1) {
      alignas(64) float values[ir::kEwMaxInputs][kern::kEwBlock];
      alignas(64) float scale[kern::kEwBlock];
      static constexpr float kUnread = 0.0f;  // the operand of the input the factor does not read
      std::array<kern::EwOperand, ir::kEwMaxInputs> ops{};
      for (int64_t b0 = r0; b0 < r1; b0 += kern::kEwBlock) {
        const int64_t nb = std::min(kern::kEwBlock, r1 - b0);
        auto gather = [&](size_t i, float* to) {
          const float* in = inputs[i]->data<float>().data();
          for (int64_t j = 0; j < nb; ++j) to[j] = in[offset(i, b0 + j)];
        };
        if (prog.scale_prefix) {
          for (size_t i = 0; i < ni; ++i) {
            if (i == xs) {
              ops[i] = kern::EwOperand{&kUnread, true};
              continue;
            }
            gather(i, values[i]);
            ops[i] = kern::EwOperand{values[i], false};
          }
          kern::ew_block(isa, exact, *prog.scale_prefix, ops.data(), nb, scale);
        } else {
          gather(vs, scale);
        }
        kern::scale_rows(isa, exact, first, scale, x + b0 * inner, nb, inner, po + b0 * inner);
      }
    });
    return;
  }
  if (rowwise) {
    std::array<const float*, ir::kEwMaxInputs> base{};
    for (size_t i = 0; i < ni; ++i) base[i] = inputs[i]->data<float>().data();
    ew::for_row_chunks(
        pool, rows, inner,
        [&](int64_t r0, int64_t r1) {
          std::array<const float*, ir::kEwMaxInputs> runs{};
          for (size_t i = 0; i < ni; ++i)
            if (strides[i][r - 1] != 0) runs[i] = base[i] + r0 * inner;
          run_rows(
              prog, isa, exact, ni, runs.data(), [&](size_t i, int64_t row) { return base[i][offset(i, r0 + row)]; },
              r1 - r0, inner, po + r0 * inner);
        },
        2 * ew::kNsPerElement);
    return;
  }
  // Rows longer than a chunk go in segments of one chunk each, so a tensor that merges into one row (PP-OCRv4
  // det's Sigmoid over [1, 1, 640, 640]: 0.32 ms at one thread and at two before) still spreads over the pool.
  // Each element gets the same operations in any segment.
  if (inner > ew::kChunk) {
    const int64_t segs = (inner + ew::kChunk - 1) / ew::kChunk;
    parallel_for(pool, rows * segs, ew::kNsPerElement * static_cast<double>(total), [&](int64_t c) {
      const int64_t row = c / segs, s0 = (c % segs) * ew::kChunk;
      std::array<Operand, ir::kEwMaxInputs> ops;
      for (size_t i = 0; i < ni; ++i) {
        const bool one = strides[i][r - 1] == 0;
        ops[i] = Operand{inputs[i]->data<float>().data() + offset(i, row) + (one ? 0 : s0), one};
      }
      run_span(prog, isa, exact, std::span<const Operand>(ops.data(), ni), std::min(ew::kChunk, inner - s0),
               po + row * inner + s0);
    });
    return;
  }
  ew::for_row_chunks(pool, rows, inner, [&](int64_t r0, int64_t r1) {
    std::array<Operand, ir::kEwMaxInputs> ops;
    for (int64_t row = r0; row < r1; ++row) {
      for (size_t i = 0; i < ni; ++i)
        ops[i] = Operand{inputs[i]->data<float>().data() + offset(i, row), strides[i][r - 1] == 0};
      run_span(prog, isa, exact, std::span<const Operand>(ops.data(), ni), inner, po + row * inner);
    }
  });
}

Shape program_inputs(const RunContext& ctx, const Shape& result, std::vector<const Tensor*>& in) {
  std::vector<const Shape*> s{&result};
  for (size_t i = 3; i < ctx.inputs.size(); ++i) {
    const Tensor& t = ctx.input(i);
    if (t.dtype() != DType::F32 || !t.is_contiguous())
      ctx.fail(ErrorKind::InvalidInput, "program inputs must be contiguous float32 tensors");
    in.push_back(&t);
    s.push_back(&t.shape());
  }
  return ew::broadcast_all(ctx.info, s, ErrorKind::InvalidInput);
}

ir::EwProgram read_program(const NodeInfo& info, size_t inputs) {
  std::string error;
  std::optional<ir::EwProgram> p = ir::ew_read(info.node(), error);
  if (!p) info.fail(ErrorKind::InvalidModel, "element-wise program: " + error);
  if (static_cast<size_t>(p->inputs) > inputs)
    info.fail(ErrorKind::InvalidModel,
              "element-wise program reads input " + std::to_string(p->inputs - 1) + " of " + std::to_string(inputs));
  return *std::move(p);
}

}  // namespace onemodel::rt::ewp
