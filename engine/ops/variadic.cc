// Max, Min (6+, all numeric), Sum and Mean (6+, f16/f32/f64): any number of inputs of one type, broadcast
// together and folded left to right (ops-elementwise.md), so the result depends on nothing but the input
// order. Each fold step is one rounded operation (f16: in float, rounded to half after every step); Mean
// divides the sum by the input count once at the end. Max/Min: NaN wins, equal operands give the later one.
#include "ops/elementwise_common.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

using namespace ew;

enum class Fold { Max, Min, Sum, Mean };

template <class C>
C fold_step(Fold f, C acc, C v) {
  switch (f) {
    case Fold::Max: return nan_max(acc, v);
    case Fold::Min: return nan_min(acc, v);
    case Fold::Sum:
    case Fold::Mean:
      if constexpr (std::is_integral_v<C>)
        return wrap_add(acc, v);
      else
        return acc + v;
  }
  return acc;
}

template <class F>
void with_fold(Fold f, F&& body) {
  switch (f) {
    case Fold::Max: body(std::integral_constant<Fold, Fold::Max>{}); break;
    case Fold::Min: body(std::integral_constant<Fold, Fold::Min>{}); break;
    case Fold::Sum: body(std::integral_constant<Fold, Fold::Sum>{}); break;
    case Fold::Mean: body(std::integral_constant<Fold, Fold::Mean>{}); break;
  }
}

class VariadicKernel final : public Kernel {
 public:
  explicit VariadicKernel(Fold f) : Kernel(KernelFlags{.exact = true}), fold_(f) {}

  void infer(InferContext& ctx) const override {
    if (ctx.inputs.empty()) ctx.fail(ErrorKind::InvalidModel, "expects at least one input");
    require_inputs(ctx, ctx.inputs.size());
    require_same_type(ctx, 0, ctx.inputs.size());
    check_type(ctx.info, ctx.input(0).dtype, types());
    std::vector<const Shape*> s;
    for (const InputMeta& m : ctx.inputs) s.push_back(&m.shape);
    ctx.set_output(0, ctx.input(0).dtype, broadcast_all(ctx.info, s, ErrorKind::InvalidModel));
  }

  void run(RunContext& ctx) const override {
    Tensor& out = ctx.output(0);
    std::vector<const Shape*> s;
    for (const Tensor& t : ctx.inputs) {
      if (t.dtype() != out.dtype()) ctx.fail(ErrorKind::InvalidInput, "input types differ from the planned output");
      s.push_back(&t.shape());
    }
    if (s.empty()) ctx.fail(ErrorKind::InvalidInput, "expects at least one input");
    check_run_shapes(ctx, s, out);
    const bool ok = visit<kNumeric>(out.dtype(), [&](auto tag) {
      using E = Elem<decltype(tag)>;
      using S = typename E::Store;
      S* po = out_ptr<S>(out);
      const Shape& os = out.shape();
      const int64_t inner = os.rank() == 0 ? 1 : os[os.rank() - 1];
      const int64_t rows = inner == 0 ? 0 : os.numel() / inner;
      // The fold and the exact flag as constants, and one loop per stride pattern, so the loops vectorise;
      // chunks of rows on the pool, each folding its rows over every input in order.
      with_fold(fold_, [&](auto fold_c) {
        constexpr Fold kF = decltype(fold_c)::value;
        with_exact(ctx.exact, [&](auto ex) {
          constexpr bool kExact = decltype(ex)::value;
          for_row_chunks(ctx.pool, rows, inner, [&](int64_t r0, int64_t r1) {
            for (size_t k = 0; k < ctx.inputs.size(); ++k) {
              const S* pi = in_ptr<S>(ctx.inputs[k]);
              const std::array<const Shape*, 2> sh{&os, &ctx.inputs[k].shape()};
              broadcast_rows<2>(os, sh, r0, r1, [&](int64_t o, const auto& off, int64_t n, const auto& st) {
                const S* src = pi + off[1];
                S* dst = po + o;
                if (k == 0) {
                  for (int64_t j = 0; j < n; ++j) dst[j] = E::store(E::load(src[j * st[1]]), kExact);
                } else if (st[1] == 1) {
                  for (int64_t j = 0; j < n; ++j)
                    dst[j] = E::store(fold_step(kF, E::load(dst[j]), E::load(src[j])), kExact);
                } else {
                  for (int64_t j = 0; j < n; ++j)
                    dst[j] = E::store(fold_step(kF, E::load(dst[j]), E::load(src[j * st[1]])), kExact);
                }
              });
            }
            if constexpr (kF == Fold::Mean && std::is_floating_point_v<typename E::Calc>) {
              const auto count = static_cast<typename E::Calc>(ctx.inputs.size());
              for (int64_t i = r0 * inner; i < r1 * inner; ++i) po[i] = E::store(E::load(po[i]) / count, kExact);
            }
          });
        });
      });
    });
    if (!ok) ctx.fail(ErrorKind::Unsupported, "element type " + type_str(out.dtype()) + " is not supported");
  }

 private:
  uint32_t types() const { return fold_ == Fold::Max || fold_ == Fold::Min ? kNumeric : kFloats; }
  Fold fold_;
};

}  // namespace

std::unique_ptr<Kernel> make_max(const NodeInfo&) { return std::make_unique<VariadicKernel>(Fold::Max); }
std::unique_ptr<Kernel> make_min(const NodeInfo&) { return std::make_unique<VariadicKernel>(Fold::Min); }
std::unique_ptr<Kernel> make_sum(const NodeInfo&) { return std::make_unique<VariadicKernel>(Fold::Sum); }
std::unique_ptr<Kernel> make_mean(const NodeInfo&) { return std::make_unique<VariadicKernel>(Fold::Mean); }

}  // namespace onemodel::rt
