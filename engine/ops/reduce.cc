// ReduceMax: axes from the attribute (opsets 1-17) or from the optional second input (18+, with
// noop_with_empty_axes). All numeric types except the 16-bit floats. The result is a sequential scan in
// row-major order of the reduced index tuples: start from the first element, replace only by a strictly
// greater one (ops-norms.md), so NaN wins only when it is first; an empty reduction gives -inf (lowest for
// integers). NaN results are 0x7FC00000 in both modes; nothing is rounded, so fast and exact agree.
#include <limits>
#include <type_traits>

#include "ops/common.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

struct ReducePlan {
  std::array<bool, kMaxRank> reduced{};
  Shape out;
};

class ReduceMaxKernel final : public Kernel {
 public:
  ReduceMaxKernel(bool axes_from_input, std::vector<int64_t> attr_axes, bool keepdims, bool noop)
      : Kernel(KernelFlags{.exact = true}),
        axes_from_input_(axes_from_input),
        attr_axes_(std::move(attr_axes)),
        keepdims_(keepdims),
        noop_(noop) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects a data input");
    const DType t = ctx.input(0).dtype;
    if (!visit_numeric(t, [](auto) {})) ctx.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported");
    std::vector<int64_t> axes = attr_axes_;
    if (axes_from_input_ && ctx.has_input(1)) {
      if (!ctx.input(1).value) {
        // The runtime shapes this node again with the real axes in every run.
        ctx.require_runtime_values();
        return;
      }
      axes = read_int_tensor(ctx.info, *ctx.input(1).value, "axes");
    }
    ctx.set_output(0, t, plan(ctx.info, ctx.input(0).shape, axes).out);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> axes = attr_axes_;
    if (axes_from_input_ && ctx.has_input(1)) axes = read_int_tensor(ctx.info, ctx.input(1), "axes");
    const ReducePlan p = plan(ctx.info, x.shape(), axes);
    Tensor& y = ctx.output(0);
    if (y.shape() != p.out || y.dtype() != x.dtype())
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output " + y.shape().to_string());
    visit_numeric(x.dtype(), [&](auto tag) { reduce_typed<decltype(tag)>(x, y, p); });
  }

 private:
  ReducePlan plan(const NodeInfo& info, const Shape& in, const std::vector<int64_t>& axes) const {
    ReducePlan p;
    const int r = in.rank();
    if (axes.empty()) {
      if (!noop_)
        for (int d = 0; d < r; ++d) p.reduced[static_cast<size_t>(d)] = true;
    } else {
      for (int64_t a : axes) {
        const int d = normalize_axis(info, a, r);
        if (p.reduced[static_cast<size_t>(d)]) info.fail(ErrorKind::InvalidModel, "axis " + std::to_string(a) + " appears twice");
        p.reduced[static_cast<size_t>(d)] = true;
      }
    }
    std::vector<int64_t> od;
    for (int d = 0; d < r; ++d) {
      if (!p.reduced[static_cast<size_t>(d)]) od.push_back(in[d]);
      else if (keepdims_) od.push_back(1);
    }
    p.out = Shape(std::span<const int64_t>(od));
    return p;
  }

  template <class T>
  static void reduce_typed(const Tensor& x, Tensor& y, const ReducePlan& p) {
    const T* px = x.data<T>().data();
    T* py = y.mutable_data<T>().data();
    const T empty = std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
    for (T& v : y.mutable_data<T>()) v = empty;
    const Shape& s = x.shape();
    const int r = s.rank();
    if (x.numel() == 0) return;
    // Output stride of every input dimension (0 when reduced), in output elements.
    std::array<int64_t, kMaxRank> os{};
    int64_t step = 1;
    for (int d = r - 1; d >= 0; --d) {
      const auto du = static_cast<size_t>(d);
      os[du] = p.reduced[du] ? 0 : step;
      if (!p.reduced[du]) step *= s[d];
    }
    // Walk the input in row-major order, which visits each output's reduced tuples in row-major order.
    // `nonzero` counts reduced dimensions whose index is not 0: when it is 0 this is the first element.
    std::array<int64_t, kMaxRank> idx{};
    int64_t o = 0;
    int nonzero = 0;
    const int64_t total = x.numel();
    for (int64_t i = 0; i < total; ++i) {
      const T v = px[i];
      if (nonzero == 0 || v > py[o]) py[o] = v;
      for (int d = r - 1; d >= 0; --d) {
        const auto du = static_cast<size_t>(d);
        ++idx[du];
        o += os[du];
        if (idx[du] < s[d]) {
          if (p.reduced[du] && idx[du] == 1) ++nonzero;
          break;
        }
        o -= os[du] * s[d];
        if (p.reduced[du] && s[d] > 1) --nonzero;
        idx[du] = 0;
      }
    }
    if constexpr (std::is_floating_point_v<T>)
      for (T& v : y.mutable_data<T>()) v = kernels::canon(v);
  }

  bool axes_from_input_;
  std::vector<int64_t> attr_axes_;
  bool keepdims_, noop_;
};

}  // namespace

std::unique_ptr<Kernel> make_reduce_max(const NodeInfo& info) {
  const bool from_input = info.opset() >= 18;
  return std::make_unique<ReduceMaxKernel>(from_input, from_input ? std::vector<int64_t>{} : info.get_ints("axes"),
                                           info.get_int("keepdims", 1) != 0,
                                           from_input && info.get_int("noop_with_empty_axes", 0) != 0);
}

}  // namespace onemodel::rt
