// The Reduce* operators (ops-norms.md "Reductions"): axes from the attribute (before the change) or from the
// optional second input (after it, with noop_with_empty_axes), keepdims, and one shared walk over each
// output's sequence of reduced elements (ops/reduce_walk.h). Every kernel is exact: the orders are fixed by
// the geometry, the transcendentals are the library's own, NaN results are 0x7FC00000 in both modes.
#include <limits>

#include "ops/ops.h"
#include "ops/reduce_walk.h"

namespace onemodel::rt {
namespace {

enum class ReduceOp { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

template <class T>
struct log_exp_fn;
template <>
struct log_exp_fn<float> {
  static float exp(float x) { return kern::exact_exp(x); }
  static float log(float x) { return kern::exact_log(x); }
};
template <>
struct log_exp_fn<double> {
  static double exp(double x) { return std::exp(x); }
  static double log(double x) { return std::log(x); }
};

bool is_log_reduction(ReduceOp op) { return op == ReduceOp::LogSum || op == ReduceOp::LogSumExp; }

// Element types served (ops-norms.md table): float32/64 and the 8-, 32- and 64-bit integers; L2 and the
// logarithmic reductions on floats only. The logarithmic ones on float64 use the platform's double log and
// exp, so they have no exact flavour: exact mode refuses them when the plan learns the type.
bool type_served(ReduceOp op, DType t) {
  if (op == ReduceOp::L2 || is_log_reduction(op)) return t == DType::F32 || t == DType::F64;
  switch (t) {
    case DType::F32:
    case DType::F64:
    case DType::I8:
    case DType::U8:
    case DType::I32:
    case DType::I64:
    case DType::U32:
    case DType::U64: return true;
    default: return false;
  }
}

// Calls f(T{}) for the served element types.
template <class F>
void visit_reduce_type(DType t, F&& f) {
  switch (t) {
    case DType::F32: f(float{}); break;
    case DType::F64: f(double{}); break;
    case DType::I8: f(int8_t{}); break;
    case DType::U8: f(uint8_t{}); break;
    case DType::I32: f(int32_t{}); break;
    case DType::I64: f(int64_t{}); break;
    case DType::U32: f(uint32_t{}); break;
    case DType::U64: f(uint64_t{}); break;
    default: break;
  }
}

// Maximum (Max) or minimum scan: start from the first element, replace only by a strictly better one, so
// NaN wins only when first; an empty sequence gives -inf / +inf (lowest / highest integer).
template <class T>
T scan_extreme(const ReduceGeometry& g, const T* x, int64_t o, bool max) {
  T best = max ? (std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest())
               : (std::is_floating_point_v<T> ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max());
  bool first = true;
  walk_sequence(g, x, o, [&](const T* p, int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
      if (first || (max ? p[j] > best : p[j] < best)) best = p[j];
      first = false;
    }
  });
  return best;
}

// m + log(sum of exp(x - m)) with m the maximum (NaN if any element is NaN), the sum sequential in sequence
// order; infinite maxima are returned as they are. float32 uses the library's exact exp and log, float64 the
// platform's (fast mode only).
template <class T>
T log_sum_exp(const ReduceGeometry& g, const T* x, int64_t o) {
  T m = -std::numeric_limits<T>::infinity();
  bool nan = false;
  walk_sequence(g, x, o, [&](const T* p, int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
      if (p[j] != p[j])
        nan = true;
      else if (p[j] > m)
        m = p[j];
    }
  });
  if (nan) return std::numeric_limits<T>::quiet_NaN();
  if (std::isinf(m)) return m;
  T s = T(0);
  walk_sequence(g, x, o, [&](const T* p, int64_t n) {
    for (int64_t j = 0; j < n; ++j) s = s + log_exp_fn<T>::exp(p[j] - m);
  });
  return m + log_exp_fn<T>::log(s);
}

template <class T>
T reduce_one(ReduceOp op, const ReduceGeometry& g, const T* x, int64_t o) {
  switch (op) {
    case ReduceOp::Sum: return reduce_sum(g, x, o, [](T v) { return v; });
    case ReduceOp::Mean: {
      const T s = reduce_sum(g, x, o, [](T v) { return v; });
      if (g.count == 0) return T(0);
      if constexpr (std::is_floating_point_v<T>)
        return s / static_cast<T>(static_cast<float>(g.count));
      else if constexpr (std::is_signed_v<T>)
        return static_cast<T>(static_cast<int64_t>(s) / g.count);
      else
        return static_cast<T>(static_cast<uint64_t>(s) / static_cast<uint64_t>(g.count));
    }
    case ReduceOp::Max: return scan_extreme(g, x, o, true);
    case ReduceOp::Min: return scan_extreme(g, x, o, false);
    case ReduceOp::Prod: {
      T acc = T(1);
      walk_sequence(g, x, o, [&](const T* p, int64_t n) {
        for (int64_t j = 0; j < n; ++j) acc = mul_wrap(acc, p[j]);
      });
      return acc;
    }
    case ReduceOp::L1: return reduce_sum(g, x, o, [](T v) { return abs_wrap(v); });
    case ReduceOp::SumSquare: return reduce_sum(g, x, o, [](T v) { return mul_wrap(v, v); });
    case ReduceOp::L2:
      if constexpr (std::is_floating_point_v<T>) return std::sqrt(reduce_sum(g, x, o, [](T v) { return v * v; }));
      break;
    case ReduceOp::LogSum:
      if constexpr (std::is_floating_point_v<T>) return log_exp_fn<T>::log(reduce_sum(g, x, o, [](T v) { return v; }));
      break;
    case ReduceOp::LogSumExp:
      if constexpr (std::is_floating_point_v<T>) return log_sum_exp(g, x, o);
      break;
  }
  return T(0);  // unreachable: type_served() rejected the combination at plan time
}

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(ReduceOp op, bool axes_from_input, std::vector<int64_t> attr_axes, bool keepdims, bool noop)
      : Kernel(KernelFlags{.exact = true}),
        op_(op),
        axes_from_input_(axes_from_input),
        attr_axes_(std::move(attr_axes)),
        keepdims_(keepdims),
        noop_(noop) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects a data input");
    const DType t = ctx.input(0).dtype;
    if (!type_served(op_, t)) ctx.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported");
    if (ctx.exact && t == DType::F64 && is_log_reduction(op_))
      throw Error(ErrorKind::ExactModeUnavailable,
                  "Exact mode is not available: float64 " + ctx.info.op_type() + " has no exact kernel.")
          .with_node(ctx.info.name())
          .with_operators({ctx.info.op_type()});
    std::vector<int64_t> axes = attr_axes_;
    if (axes_from_input_ && ctx.has_input(1)) {
      if (!ctx.input(1).value) {
        // The runtime shapes this node again with the real axes in every run.
        ctx.require_runtime_values();
        return;
      }
      axes = read_int_tensor(ctx.info, *ctx.input(1).value, "axes");
    }
    ctx.set_output(0, t, reduce_axes(ctx.info, ctx.input(0).shape, axes, keepdims_, noop_).out);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> axes = attr_axes_;
    if (axes_from_input_ && ctx.has_input(1)) axes = read_int_tensor(ctx.info, ctx.input(1), "axes");
    const ReduceAxes p = reduce_axes(ctx.info, x.shape(), axes, keepdims_, noop_);
    Tensor& y = ctx.output(0);
    if (y.shape() != p.out || y.dtype() != x.dtype() || !type_served(op_, x.dtype()))
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output " + y.shape().to_string());
    const ReduceGeometry g = reduce_geometry(x.shape(), p.reduced);
    visit_reduce_type(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>().data();
      T* py = y.mutable_data<T>().data();
      const int64_t n = y.numel();
      for (int64_t o = 0; o < n; ++o) py[o] = canon_any(reduce_one<T>(op_, g, px, o));
    });
  }

 private:
  ReduceOp op_;
  bool axes_from_input_;
  std::vector<int64_t> attr_axes_;
  bool keepdims_, noop_;
};

// `axes_input_from`: the first opset that reads the axes from the second input.
std::unique_ptr<Kernel> make_reduce(const NodeInfo& info, ReduceOp op, int64_t axes_input_from) {
  const bool from_input = info.opset() >= axes_input_from;
  return std::make_unique<ReduceKernel>(op, from_input, from_input ? std::vector<int64_t>{} : info.get_ints("axes"),
                                        info.get_int("keepdims", 1) != 0,
                                        from_input && info.get_int("noop_with_empty_axes", 0) != 0);
}

}  // namespace

std::unique_ptr<Kernel> make_reduce_sum(const NodeInfo& info) { return make_reduce(info, ReduceOp::Sum, 13); }
std::unique_ptr<Kernel> make_reduce_mean(const NodeInfo& info) { return make_reduce(info, ReduceOp::Mean, 18); }
std::unique_ptr<Kernel> make_reduce_max(const NodeInfo& info) { return make_reduce(info, ReduceOp::Max, 18); }
std::unique_ptr<Kernel> make_reduce_min(const NodeInfo& info) { return make_reduce(info, ReduceOp::Min, 18); }
std::unique_ptr<Kernel> make_reduce_prod(const NodeInfo& info) { return make_reduce(info, ReduceOp::Prod, 18); }
std::unique_ptr<Kernel> make_reduce_l1(const NodeInfo& info) { return make_reduce(info, ReduceOp::L1, 18); }
std::unique_ptr<Kernel> make_reduce_l2(const NodeInfo& info) { return make_reduce(info, ReduceOp::L2, 18); }
std::unique_ptr<Kernel> make_reduce_sum_square(const NodeInfo& info) {
  return make_reduce(info, ReduceOp::SumSquare, 18);
}
std::unique_ptr<Kernel> make_reduce_log_sum(const NodeInfo& info) { return make_reduce(info, ReduceOp::LogSum, 18); }
std::unique_ptr<Kernel> make_reduce_log_sum_exp(const NodeInfo& info) {
  return make_reduce(info, ReduceOp::LogSumExp, 18);
}

}  // namespace onemodel::rt
