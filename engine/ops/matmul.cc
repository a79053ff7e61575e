// MatMul (opsets 1, 9, 13) and Gemm (7-10 with C required, 11+ with C optional). float32 runs on the
// blocked kernel kernels/gemm.h (a constant B is packed once per session in prepare(), SharedPack); the other element
// types use the scalar reference below. Both compute every output as one accumulator starting at +0 and adding
// round(a*b) in increasing reduction index (exact-mode.md "Matrix product"); the float32 fast mode fuses the
// multiply-add. Gemm's epilogue is round(alpha*acc) then round(that + round(beta*C)) (graph-runtime.md 7).
#include <type_traits>

#include "kernels/gemm.h"
#include "ops/common.h"
#include "ops/elementwise_common.h"
#include "ops/ew_program.h"
#include "ops/matmul_shape.h"
#include "ops/ops.h"
#include "ops/reg_form.h"

namespace onemodel::rt {
namespace {

bool matmul_type(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::I32 || t == DType::I64 || t == DType::U32 || t == DType::U64;
}

// C[m x n] = A * B with row strides lda/ldb and element steps (for Gemm's transposes): i-p-j order, so
// each C[i][j] sees p = 0, 1, ... in order, starting from +0.
template <class T>
void gemm_ref(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_rs, int64_t a_cs, const T* b, int64_t b_rs,
              int64_t b_cs, T* c) {
  for (int64_t i = 0; i < m; ++i) {
    T* row = c + i * n;
    for (int64_t j = 0; j < n; ++j) row[j] = T(0);
    for (int64_t p = 0; p < k; ++p) {
      const T av = a[i * a_rs + p * a_cs];
      const T* brow = b + p * b_rs;
      for (int64_t j = 0; j < n; ++j) {
        if constexpr (std::is_floating_point_v<T>) {
          const T prod = av * brow[j * b_cs];
          row[j] = row[j] + prod;
        } else {
          // Wrap-around integer arithmetic without signed overflow.
          const uint64_t prod = static_cast<uint64_t>(av) * static_cast<uint64_t>(brow[j * b_cs]);
          row[j] = static_cast<T>(static_cast<uint64_t>(row[j]) + prod);
        }
      }
    }
  }
}

// A constant float32 B packed for the session's target: one PackedB per matrix of B's batch, row-major order.
struct PackedWeights {
  kern::Isa isa = kern::Isa::Scalar;
  Shape b_shape;
  std::vector<std::shared_ptr<const kern::PackedB>> mats;
  bool compact = false;  // packed from compact weights (16 bits each): run() sees B as their 16-bit constant
};

// B (rank >= 1, float32, contiguous) packed for `isa`, one PackedB per matrix of its batch; null for a batch
// without matrices (the unpacked path handles the empty product). `transposed`: Gemm's transB, B [n, k] read as
// op(B) through strides (no transposed copy).
std::shared_ptr<const PackedWeights> pack_weights(kern::Isa isa, const Tensor& b, const Tensor* compact,
                                                  bool transposed = false) {
  auto packed = std::make_shared<PackedWeights>();
  packed->isa = isa;
  packed->b_shape = b.shape();
  packed->compact = compact != nullptr;
  const kern::PackStorage storage = pack_storage(compact);
  const int64_t rows = b.rank() == 1 ? b.shape()[0] : b.shape()[b.rank() - 2];
  const int64_t cols = b.rank() == 1 ? 1 : b.shape()[b.rank() - 1];
  const int64_t mats = rows * cols == 0 ? 0 : b.numel() / (rows * cols);
  const float* pb = b.data<float>().data();
  for (int64_t i = 0; i < mats; ++i) {
    const float* m = pb + i * rows * cols;
    packed->mats.push_back(transposed ? kern::pack_b_f32(isa, cols, rows, kern::MatrixView{m, 1, cols}, storage)
                                      : kern::pack_b_f32(isa, rows, cols, kern::MatrixView{m, cols, 1}, storage));
  }
  if (packed->mats.empty()) return nullptr;
  return packed;
}

// A FusedMatMul program's inputs 1.. as the product's tiles read them, row i, columns j0..: one value, the same
// run in every row (a bias [N]), or the row's own run (a residual of the result's shape).
struct MatEpilogue {
  enum class Walk : uint8_t { Scalar, Row, Full };
  struct Extra {
    const float* base;
    Walk walk;
  };
  kern::Isa isa;
  bool exact;
  const kern::EwPlan* prog;
  int64_t n;  // columns of the result
  std::array<Extra, ir::kEwMaxInputs> extra;
  size_t extras;

  static void apply(const void* vctx, int64_t i0, int64_t rows, int64_t j0, int64_t cols, float* c, int64_t ldc) {
    const auto& e = *static_cast<const MatEpilogue*>(vctx);
    std::array<ewp::Operand, ir::kEwMaxInputs> ops;
    for (int64_t r = 0; r < rows; ++r) {
      float* row = c + r * ldc;
      ops[0] = ewp::Operand{row, false};
      for (size_t k = 0; k < e.extras; ++k) {
        const Extra& x = e.extra[k];
        ops[k + 1] = x.walk == Walk::Scalar ? ewp::Operand{x.base, true}
                     : x.walk == Walk::Row  ? ewp::Operand{x.base + j0, false}
                                            : ewp::Operand{x.base + (i0 + r) * e.n + j0, false};
      }
      ewp::run_span(*e.prog, e.isa, e.exact, std::span<const ewp::Operand>(ops.data(), e.extras + 1), cols, row);
    }
  }

  // The program as a register epilogue on the product's tiles (ops/reg_form.h): a bias row is one value per
  // column, an input of the result's shape a residual of row stride n.
  std::optional<kern::RegEpilogue> register_form(int64_t n) const {
    std::array<RegInput, ir::kEwMaxInputs + 1> in{};
    using K = RegInput::Kind;
    for (size_t i = 0; i < extras; ++i) {
      const Extra& x = extra[i];
      in[i + 1] = x.walk == Walk::Scalar ? RegInput{K::Value, x.base[0]}
                  : x.walk == Walk::Row  ? RegInput{K::PerCol, 0.0f, x.base}
                                         : RegInput{K::Tile, 0.0f, x.base, n, 0};
    }
    int64_t res_n = 0;
    return rt::register_form(prog->prog, std::span<const RegInput>(in.data(), static_cast<size_t>(prog->prog.inputs)),
                             nullptr, exact, res_n);
  }

  // How `in` walks `out`'s rows, or false when it cannot be read per row run.
  static bool walk(const Shape& in, const Shape& out, Walk& w) {
    if (in.numel() == 1) return w = Walk::Scalar, true;
    if (in.numel() == out.numel()) return w = Walk::Full, true;
    const auto st = broadcast_strides(in, out);
    bool row = out.rank() >= 1 && st[static_cast<size_t>(out.rank() - 1)] == 1;
    for (int d = 0; d + 1 < out.rank() && row; ++d) row = st[static_cast<size_t>(d)] == 0;
    return row ? (w = Walk::Row, true) : false;
  }
};

void matmul_f32(const MatMulDims& d, const RunContext& ctx, const Tensor& a, const Tensor& b, Tensor& out,
                const PackedWeights* packed) {
  const float* pa = a.data<float>().data();
  const float* pb = packed ? nullptr : b.data<float>().data();  // B read through the packing (maybe compact)
  float* po = out.mutable_data<float>().data();
  const int64_t as = d.m * d.k, bs = d.k * d.n, os = d.m * d.n;
  const auto one = [&](const float* am, int64_t rows, int64_t ib, float* c) {
    const kern::MatrixView av{am, d.k, 1};
    if (packed)
      kern::gemm_f32_packed(ctx.isa, ctx.exact, rows, av, *packed->mats[static_cast<size_t>(ib)], c, d.n, ctx.pool);
    else
      kern::gemm_f32(ctx.isa, ctx.exact, rows, d.n, d.k, av, kern::MatrixView{pb + ib * bs, d.n, 1}, c, d.n, ctx.pool);
  };
  // One B for every batch of A: the batches are consecutive rows of one taller product (same per-output
  // order, bigger tiles and better threading).
  if (d.b_batch.numel() == 1 && d.a_batch == d.out_batch) {
    one(pa, d.out_batch.numel() * d.m, 0, po);
    return;
  }
  broadcast_n<2>(d.out_batch, {&d.a_batch, &d.b_batch}, [&](int64_t o, const auto& off, int64_t cnt, const auto& st) {
    for (int64_t t = 0; t < cnt; ++t) one(pa + (off[0] + t * st[0]) * as, d.m, off[1] + t * st[1], po + (o + t) * os);
  });
}

template <class T>
void matmul_typed(const MatMulDims& d, bool exact, const Tensor& a, const Tensor& b, Tensor& out) {
  const T* pa = a.data<T>().data();
  const T* pb = b.data<T>().data();
  T* po = out.mutable_data<T>().data();
  const int64_t as = d.m * d.k, bs = d.k * d.n, os = d.m * d.n;
  broadcast_n<2>(d.out_batch, {&d.a_batch, &d.b_batch}, [&](int64_t o, const auto& off, int64_t cnt, const auto& st) {
    for (int64_t t = 0; t < cnt; ++t)
      gemm_ref<T>(d.m, d.n, d.k, pa + (off[0] + t * st[0]) * as, d.k, 1, pb + (off[1] + t * st[1]) * bs, d.n, 1,
                  po + (o + t) * os);
  });
  if constexpr (std::is_floating_point_v<T>) {
    if (exact)
      for (T& v : out.mutable_data<T>()) v = kern::canon(v);
  }
}

// MatMul, and FusedMatMul (domain "onemodel", the `fuse-elementwise` pass): MatMul's inputs A, B, an empty
// slot, then the inputs 1.. of the element-wise program that runs on its result (float32 only).
class MatMulKernel final : public Kernel {
 public:
  explicit MatMulKernel(std::optional<ir::EwProgram> prog = std::nullopt)
      : Kernel(KernelFlags{.exact = true, .compact_weights = true}) {
    if (prog) prog_ = kern::ew_plan(*std::move(prog));
  }

  void infer(InferContext& ctx) const override {
    const size_t want = prog_ ? ctx.inputs.size() : 2;
    if (ctx.inputs.size() != want || !ctx.has_input(0) || !ctx.has_input(1))
      ctx.fail(ErrorKind::InvalidModel, "expects two inputs");
    const DType t = ctx.input(0).dtype;
    if (ctx.input(1).dtype != t)
      ctx.fail(ErrorKind::InvalidModel, "input types differ: " + type_str(t) + " and " + type_str(ctx.input(1).dtype));
    if (!matmul_type(t)) ctx.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported");
    MatMulDims d;
    std::string why;
    if (!matmul_dims(ctx.input(0).shape, ctx.input(1).shape, d, why)) ctx.fail(ErrorKind::InvalidModel, why);
    if (!prog_) return ctx.set_output(0, t, d.out);
    if (t != DType::F32)
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported (float32 only)");
    std::vector<const Shape*> s{&d.out};
    for (size_t i = 3; i < ctx.inputs.size(); ++i) {
      if (!ctx.has_input(i) || ctx.input(i).dtype != DType::F32)
        ctx.fail(ErrorKind::InvalidModel, "program input " + std::to_string(i) + " must be a float32 tensor");
      s.push_back(&ctx.input(i).shape);
    }
    ctx.set_output(0, t, ew::broadcast_all(ctx.info, s, ErrorKind::InvalidModel));
  }

  // A constant float32 B is packed once for the session's target and shared by its plans; compact weights
  // (InputMeta::compact) in their 16 bits.
  std::shared_ptr<const void> prepare(PrepareContext& ctx) const override {
    if (ctx.packed_weight) return ctx.packed_weight;
    if (ctx.inputs.size() < 2 || !ctx.inputs[1].present || ctx.inputs[1].value == nullptr) return nullptr;
    const Tensor& b = *ctx.inputs[1].value;
    if (b.dtype() != DType::F32 || b.rank() == 0) return nullptr;
    const Tensor* compact = ctx.inputs[1].compact;
    auto packed = packed_.get(
        compact ? compact->raw() : b.raw(),
        [&](const PackedWeights& p) { return p.isa == ctx.isa && p.b_shape == b.shape() && p.compact == !!compact; },
        [&] { return pack_weights(ctx.isa, b, compact); });
    ctx.took_compact = compact && packed;
    return packed;
  }

  // Packed B serves every shape of A (run() checks B's shape against it) and is all run() reads of B.
  std::shared_ptr<const void> pack_weight(const Tensor& b, kern::Isa isa) const override {
    return b.rank() == 0 ? nullptr : pack_weights(isa, b, nullptr);
  }

  void run(RunContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Tensor& out = ctx.output(0);
    MatMulDims d;
    std::string why;
    if (!matmul_dims(a.shape(), b.shape(), d, why)) ctx.fail(ErrorKind::InvalidInput, why);
    if (prog_) return run_fused(ctx, d, a, b, out);
    const auto* packed = static_cast<const PackedWeights*>(ctx.state);
    const DType b_type = packed && packed->compact ? DType::F32 : b.dtype();  // compact: B read through the packing
    if (d.out != out.shape() || a.dtype() != b_type || out.dtype() != a.dtype())
      ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned output " + out.shape().to_string());
    if (a.dtype() == DType::F32) {
      matmul_f32(d, ctx, a, b, out, packed && packed->b_shape == b.shape() ? packed : nullptr);
      return;
    }
    if (!visit_numeric(a.dtype(), [&](auto tag) {
          using T = decltype(tag);
          if constexpr (std::is_same_v<T, double> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> ||
                        std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>)
            matmul_typed<T>(d, ctx.exact, a, b, out);
          else
            ctx.fail(ErrorKind::Unsupported, "element type " + type_str(a.dtype()) + " is not supported");
        }))
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(a.dtype()) + " is not supported");
  }

 private:
  // The program on each finished block of the product while it is in cache, when B is packed, one B serves
  // every batch of A and every program input walks the result's rows; otherwise the product, then the program
  // as a second pass. The same operations on every element either way.
  void run_fused(RunContext& ctx, const MatMulDims& d, const Tensor& a, const Tensor& b, Tensor& out) const {
    std::vector<const Tensor*> in;
    const Shape planned = ewp::program_inputs(ctx, d.out, in);
    const auto* packed = static_cast<const PackedWeights*>(ctx.state);
    const DType b_type = packed && packed->compact ? DType::F32 : b.dtype();  // compact: B read through the packing
    if (planned != out.shape() || a.dtype() != DType::F32 || b_type != DType::F32 || out.dtype() != DType::F32)
      ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned output " + out.shape().to_string());
    if (packed && packed->b_shape != b.shape()) packed = nullptr;
    MatEpilogue ep{ctx.isa, ctx.exact, &*prog_, d.n, {}, in.size()};
    bool in_tile = packed && planned == d.out && d.b_batch.numel() == 1 && d.a_batch == d.out_batch;
    for (size_t i = 0; i < in.size() && in_tile; ++i) {
      in_tile = MatEpilogue::walk(in[i]->shape(), d.out, ep.extra[i].walk);
      ep.extra[i].base = in[i]->data<float>().data();
    }
    if (in_tile) {
      if (out.numel() == 0) return;
      kern::TileEpilogue te{&MatEpilogue::apply, &ep};
      const std::optional<kern::RegEpilogue> reg = ep.register_form(d.n);
      te.reg = reg ? &*reg : nullptr;
      kern::gemm_f32_packed(ctx.isa, ctx.exact, d.out_batch.numel() * d.m,
                            kern::MatrixView{a.data<float>().data(), d.k, 1}, *packed->mats[0],
                            out.mutable_data<float>().data(), d.n, ctx.pool, &te);
      return;
    }
    Tensor product = ctx.scratch(DType::F32, d.out);
    matmul_f32(d, ctx, a, b, product, packed);
    std::vector<const Tensor*> all{&product};
    all.insert(all.end(), in.begin(), in.end());
    ewp::run_broadcast(*prog_, ctx.isa, ctx.exact, all, out, ctx.pool);
  }

  SharedPack<PackedWeights> packed_;
  std::optional<kern::EwPlan> prog_;
};

class GemmKernel final : public Kernel {
 public:
  GemmKernel(bool ta, bool tb, float alpha, float beta, bool c_required)
      : Kernel(KernelFlags{.exact = true, .compact_weights = true}),
        ta_(ta),
        tb_(tb),
        alpha_(alpha),
        beta_(beta),
        c_required_(c_required) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects inputs A and B");
    if (c_required_ && !ctx.has_input(2)) ctx.fail(ErrorKind::InvalidModel, "input C is required before opset 11");
    const DType t = ctx.input(0).dtype;
    if (t != DType::F32 && t != DType::F64)
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported");
    if (ctx.input(1).dtype != t || (ctx.has_input(2) && ctx.input(2).dtype != t))
      ctx.fail(ErrorKind::InvalidModel, "inputs must all be " + type_str(t));
    std::string why;
    int64_t m = 0, n = 0, k = 0;
    if (!dims(ctx.input(0).shape, ctx.input(1).shape, ctx.has_input(2) ? &ctx.input(2).shape : nullptr, m, n, k, why))
      ctx.fail(ErrorKind::InvalidModel, why);
    ctx.set_output(0, t, Shape{m, n});
  }

  // A constant float32 B is packed once for the session's target and shared by its plans (op(B) through
  // strides: no transposed copy).
  std::shared_ptr<const void> prepare(PrepareContext& ctx) const override {
    if (ctx.packed_weight) return ctx.packed_weight;
    if (ctx.inputs.size() < 2 || !ctx.inputs[1].present || ctx.inputs[1].value == nullptr) return nullptr;
    const Tensor& b = *ctx.inputs[1].value;
    if (b.dtype() != DType::F32 || b.rank() != 2) return nullptr;
    const Tensor* compact = ctx.inputs[1].compact;
    auto packed = packed_.get(
        compact ? compact->raw() : b.raw(),
        [&](const PackedWeights& p) { return p.isa == ctx.isa && p.b_shape == b.shape() && p.compact == !!compact; },
        [&] { return pack_weights(ctx.isa, b, compact, tb_); });
    ctx.took_compact = compact && packed;
    return packed;
  }

  // As MatMul's: packed op(B) serves every A.
  std::shared_ptr<const void> pack_weight(const Tensor& b, kern::Isa isa) const override {
    return b.rank() == 2 ? pack_weights(isa, b, nullptr, tb_) : nullptr;
  }

  void run(RunContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const bool has_c = ctx.has_input(2);
    std::string why;
    int64_t m = 0, n = 0, k = 0;
    if (!dims(a.shape(), b.shape(), has_c ? &ctx.input(2).shape() : nullptr, m, n, k, why))
      ctx.fail(ErrorKind::InvalidInput, why);
    Tensor& out = ctx.output(0);
    const auto* packed = static_cast<const PackedWeights*>(ctx.state);
    const DType b_type = packed && packed->compact ? DType::F32 : b.dtype();  // compact: B read through the packing
    if (out.shape() != Shape{m, n} || out.dtype() != a.dtype() || b_type != a.dtype() ||
        (has_c && ctx.input(2).dtype() != a.dtype()))
      ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned output " + out.shape().to_string());
    if (a.dtype() == DType::F32)
      run_typed<float>(ctx, m, n, k);
    else
      run_typed<double>(ctx, m, n, k);
  }

 private:
  // op(B) (k x n) over the stored row-major data.
  kern::MatrixView b_view(const Tensor& b) const {
    const int64_t w = b.shape()[1];
    return kern::MatrixView{b.data<float>().data(), tb_ ? 1 : w, tb_ ? w : 1};
  }

  bool dims(const Shape& a, const Shape& b, const Shape* c, int64_t& m, int64_t& n, int64_t& k,
            std::string& why) const {
    if (a.rank() != 2 || b.rank() != 2) {
      why = "A and B must be 2-D, got " + a.to_string() + " and " + b.to_string();
      return false;
    }
    m = ta_ ? a[1] : a[0];
    k = ta_ ? a[0] : a[1];
    const int64_t kb = tb_ ? b[1] : b[0];
    n = tb_ ? b[0] : b[1];
    if (k != kb) {
      why = "inner dimensions differ: A " + a.to_string() + (ta_ ? "^T" : "") + ", B " + b.to_string() +
            (tb_ ? "^T" : "");
      return false;
    }
    if (c) {
      // Unidirectional broadcast of C to [m, n].
      const int r = c->rank();
      bool ok = r <= 2;
      if (ok && r >= 1) ok = (*c)[r - 1] == n || (*c)[r - 1] == 1;
      if (ok && r == 2) ok = (*c)[0] == m || (*c)[0] == 1;
      if (!ok) {
        why = "C of shape " + c->to_string() + " does not broadcast to [" + std::to_string(m) + "," +
              std::to_string(n) + "]";
        return false;
      }
    }
    return true;
  }

  template <class T>
  void run_typed(RunContext& ctx, int64_t m, int64_t n, int64_t k) const {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    T* po = ctx.output(0).mutable_data<T>().data();
    // Row stride / column step of op(A) (m x k) and op(B) (k x n) over the stored row-major data.
    const int64_t a_rs = ta_ ? 1 : a.shape()[1], a_cs = ta_ ? a.shape()[1] : 1;
    const int64_t b_rs = tb_ ? 1 : b.shape()[1], b_cs = tb_ ? b.shape()[1] : 1;
    if constexpr (std::is_same_v<T, float>) {
      const auto* packed = static_cast<const PackedWeights*>(ctx.state);
      const kern::MatrixView av{a.data<float>().data(), a_rs, a_cs};
      if (packed && packed->b_shape == b.shape())
        kern::gemm_f32_packed(ctx.isa, ctx.exact, m, av, *packed->mats[0], po, n, ctx.pool);
      else
        kern::gemm_f32(ctx.isa, ctx.exact, m, n, k, av, b_view(b), po, n, ctx.pool);
    } else {
      gemm_ref<T>(m, n, k, a.data<T>().data(), a_rs, a_cs, b.data<T>().data(), b_rs, b_cs, po);
    }
    const bool exact = ctx.exact;
    const T alpha = static_cast<T>(alpha_), beta = static_cast<T>(beta_);
    const T* pc = nullptr;
    int64_t c_rs = 0, c_cs = 0;
    if (ctx.has_input(2)) {
      const Tensor& c = ctx.input(2);
      pc = c.data<T>().data();
      const int r = c.rank();
      c_cs = (r >= 1 && c.shape()[r - 1] != 1) ? 1 : 0;
      c_rs = (r == 2 && c.shape()[0] != 1) ? c.shape()[1] : 0;
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T acc = po[i * n + j];
        if (exact) acc = kern::canon(acc);
        T y = alpha * acc;
        if (pc) {
          const T bc = beta * pc[i * c_rs + j * c_cs];
          y = y + bc;
        }
        po[i * n + j] = exact ? kern::canon(y) : y;
      }
  }

  bool ta_, tb_;
  float alpha_, beta_;
  bool c_required_;
  SharedPack<PackedWeights> packed_;
};

}  // namespace

std::unique_ptr<Kernel> make_matmul(const NodeInfo&) { return std::make_unique<MatMulKernel>(); }

std::unique_ptr<Kernel> make_fused_matmul(const NodeInfo& info) {
  const size_t n = info.num_inputs();
  if (n < 2 || n - 2 > static_cast<size_t>(ir::kEwMaxInputs))
    info.fail(ErrorKind::InvalidModel, "expects A, B, an empty slot and at most " +
                                           std::to_string(ir::kEwMaxInputs - 1) + " program inputs, got " +
                                           std::to_string(n) + " inputs");
  return std::make_unique<MatMulKernel>(ewp::read_program(info, n < 3 ? 1 : n - 2));
}

std::unique_ptr<Kernel> make_gemm(const NodeInfo& info) {
  if (info.opset() < 7) info.fail(ErrorKind::Unsupported, "Gemm before opset 7 (broadcast attribute) is not supported");
  return std::make_unique<GemmKernel>(info.get_int("transA", 0) != 0, info.get_int("transB", 0) != 0,
                                      info.get_float("alpha", 1.0f), info.get_float("beta", 1.0f), info.opset() < 11);
}

}  // namespace onemodel::rt
