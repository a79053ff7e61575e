// RNN, GRU and LSTM (ops-recurrent.md): one kernel class for the three cells. Per direction the input
// projections of all time steps are one matrix product, then each step forms the recurrent product for the
// whole batch and runs the gate arithmetic per batch row in the order the spec writes (each + and * one
// rounding, never fused), so fast and exact mode share the gate code; exact mode only canonicalises NaN
// on the stores.
#include <cstring>
#include <string>
#include <vector>

#include "kernels/exact_math.h"
#include "ops/common.h"
#include "ops/recurrent_act.h"
#include "ops/ops.h"
#include "ops/recurrent_gemm.h"

namespace onemodel::rt {
namespace {

using recurrent::Activation;

enum class Cell { Rnn, Gru, Lstm };

// Input slots (the specification's order; LSTM adds initial_c and P).
enum : size_t { kX = 0, kW, kR, kB, kSeqLens, kInitH, kInitC, kP };

struct Dims {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
};

constexpr int64_t kScratchLimit = int64_t{1} << 30;  // floats (ops-recurrent.md "Limits")

class RecurrentKernel final : public Kernel {
 public:
  RecurrentKernel(const NodeInfo& info, Cell cell) : Kernel(KernelFlags{.exact = true}), cell_(cell) {
    gates_ = cell == Cell::Lstm ? 4 : (cell == Cell::Gru ? 3 : 1);
    const std::string dir = info.get_string("direction", "forward");
    if (dir == "forward")
      dirs_ = 1;
    else if (dir == "reverse") {
      dirs_ = 1;
      reverse_only_ = true;
    } else if (dir == "bidirectional")
      dirs_ = 2;
    else
      info.fail(ErrorKind::InvalidModel, "direction must be forward, reverse or bidirectional, got '" + dir + "'");
    layout_ = info.get_int("layout", 0);
    if (layout_ != 0 && layout_ != 1)
      info.fail(ErrorKind::InvalidModel, "layout must be 0 or 1, got " + std::to_string(layout_));
    hidden_attr_ = info.get_int("hidden_size", -1);
    if (info.has("hidden_size") && hidden_attr_ <= 0)
      info.fail(ErrorKind::InvalidModel, "hidden_size must be positive, got " + std::to_string(hidden_attr_));
    if (info.has("clip")) clip_ = info.get_float("clip", 0.0f);
    input_forget_ = cell == Cell::Lstm && info.get_int("input_forget", 0) != 0;
    linear_before_reset_ = cell == Cell::Gru && info.get_int("linear_before_reset", 0) != 0;
    std::vector<std::string> defaults;
    if (cell == Cell::Rnn)
      defaults = {"Tanh"};
    else if (cell == Cell::Gru)
      defaults = {"Sigmoid", "Tanh"};
    else
      defaults = {"Sigmoid", "Tanh", "Tanh"};
    acts_ = recurrent::parse_activations(info, static_cast<int>(dirs_), static_cast<int>(defaults.size()), defaults);
    max_inputs_ = cell == Cell::Lstm ? 8 : 6;
    max_outputs_ = cell == Cell::Lstm ? 3 : 2;
  }

  void infer(InferContext& ctx) const override {
    if (ctx.inputs.size() > max_inputs_)
      ctx.fail(ErrorKind::InvalidModel, "expects at most " + std::to_string(max_inputs_) + " inputs");
    if (ctx.info.num_outputs() > max_outputs_)
      ctx.fail(ErrorKind::InvalidModel, "expects at most " + std::to_string(max_outputs_) + " outputs");
    if (!ctx.has_input(kX) || !ctx.has_input(kW) || !ctx.has_input(kR))
      ctx.fail(ErrorKind::InvalidModel, "expects inputs X, W and R");
    std::vector<const Shape*> shapes(max_inputs_, nullptr);
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      if (!ctx.has_input(i)) continue;
      const DType want = i == kSeqLens ? DType::I32 : DType::F32;
      if (ctx.input(i).dtype != want) {
        const ErrorKind kind = i == kSeqLens ? ErrorKind::InvalidModel : ErrorKind::Unsupported;
        ctx.fail(kind, "input " + std::to_string(i) + " has element type " + type_str(ctx.input(i).dtype) +
                           ", expected " + type_str(want));
      }
      shapes[i] = &ctx.input(i).shape;
    }
    std::string why;
    Dims d;
    if (!dims(shapes, d, why)) ctx.fail(ErrorKind::InvalidModel, why);
    const int64_t scratch = d.seq * d.batch * gates_ * d.hidden + 6 * d.batch * gates_ * d.hidden;
    if (scratch >= kScratchLimit)
      ctx.fail(ErrorKind::Unsupported,
               "the layer needs " + std::to_string(scratch) + " floats of scratch (limit 2^30)");
    const Shape y = layout_ == 0 ? Shape{d.seq, d.dirs, d.batch, d.hidden} : Shape{d.batch, d.seq, d.dirs, d.hidden};
    const Shape state = layout_ == 0 ? Shape{d.dirs, d.batch, d.hidden} : Shape{d.batch, d.dirs, d.hidden};
    for (size_t o = 0; o < ctx.outputs.size(); ++o) ctx.set_output(o, DType::F32, o == 0 ? y : state);
  }

  // Constant W and R (the usual case: trained weights) are packed once per session as the products' B operands
  // (SharedPack: a new sequence length is a new plan); before, every run re-packed them through a strided
  // transpose (Silero VAD: 75 us of a 0.18 ms model).
  std::shared_ptr<const void> prepare(PrepareContext& ctx) const override {
    if (ctx.inputs.size() <= kR || !ctx.inputs[kW].value || !ctx.inputs[kR].value) return nullptr;
    const Tensor& wt = *ctx.inputs[kW].value;
    const Tensor& rt = *ctx.inputs[kR].value;
    if (wt.dtype() != DType::F32 || rt.dtype() != DType::F32 || wt.shape().rank() != 3 || rt.shape().rank() != 3)
      return nullptr;
    const int64_t H = rt.shape()[2], GH = gates_ * H, in = wt.shape()[2];
    if (wt.shape()[0] != dirs_ || rt.shape()[0] != dirs_ || wt.shape()[1] != GH || rt.shape()[1] != GH) return nullptr;
    const bool gru_split = cell_ == Cell::Gru && !linear_before_reset_;
    return packed_.get(
        wt.raw(), [&](const recurrent::PackedWeights& p) { return p.isa == ctx.isa && p.r_from == rt.raw(); },
        [&] {
          auto p = std::make_shared<recurrent::PackedWeights>();
          p->isa = ctx.isa;
          p->r_from = rt.raw();
          for (int64_t dir = 0; dir < dirs_; ++dir) {
            const float* W = wt.data<float>().data() + dir * GH * in;
            const float* R = rt.data<float>().data() + dir * GH * H;
            p->w.push_back(kern::pack_b_f32(ctx.isa, in, GH, kern::MatrixView{W, 1, in}));
            p->r.push_back(kern::pack_b_f32(ctx.isa, H, gru_split ? 2 * H : GH, kern::MatrixView{R, 1, H}));
          }
          return std::shared_ptr<const recurrent::PackedWeights>(std::move(p));
        });
  }

  void run(RunContext& ctx) const override {
    std::vector<const Shape*> shapes(max_inputs_, nullptr);
    for (size_t i = 0; i < ctx.inputs.size() && i < max_inputs_; ++i)
      if (ctx.has_input(i)) shapes[i] = &ctx.input(i).shape();
    std::string why;
    Dims d;
    if (!dims(shapes, d, why)) ctx.fail(ErrorKind::InvalidInput, why);
    for (size_t i = 0; i < ctx.inputs.size(); ++i)
      if (ctx.has_input(i) && ctx.input(i).dtype() != (i == kSeqLens ? DType::I32 : DType::F32))
        ctx.fail(ErrorKind::InvalidInput,
                 "input " + std::to_string(i) + " has element type " + type_str(ctx.input(i).dtype()));
    std::vector<int64_t> lens(static_cast<size_t>(d.batch), d.seq);
    if (ctx.has_input(kSeqLens)) {
      const auto sl = ctx.input(kSeqLens).data<int32_t>();
      for (int64_t b = 0; b < d.batch; ++b) {
        const int64_t v = sl[static_cast<size_t>(b)];
        if (v < 0 || v > d.seq)
          ctx.fail(ErrorKind::InvalidInput, "sequence_lens[" + std::to_string(b) + "] = " + std::to_string(v) +
                                                " is outside [0, " + std::to_string(d.seq) + "]");
        lens[static_cast<size_t>(b)] = v;
      }
    }
    for (int64_t dir = 0; dir < d.dirs; ++dir) run_direction(ctx, d, dir, lens);
  }

 private:
  // Checks every shape against X, W and R; returns false with a message naming the mismatch.
  bool dims(const std::vector<const Shape*>& s, Dims& d, std::string& why) const {
    const Shape& x = *s[kX];
    const Shape& w = *s[kW];
    const Shape& r = *s[kR];
    if (x.rank() != 3 || w.rank() != 3 || r.rank() != 3) {
      why = "X, W and R must be 3-D, got " + x.to_string() + ", " + w.to_string() + " and " + r.to_string();
      return false;
    }
    d.seq = layout_ == 0 ? x[0] : x[1];
    d.batch = layout_ == 0 ? x[1] : x[0];
    d.input = x[2];
    d.hidden = r[2];
    d.dirs = dirs_;
    if (hidden_attr_ >= 0 && hidden_attr_ != d.hidden) {
      why = "hidden_size " + std::to_string(hidden_attr_) + " does not match R " + r.to_string();
      return false;
    }
    if (d.hidden == 0) {
      why = "hidden size 0 (R " + r.to_string() + ")";
      return false;
    }
    const int64_t gh = gates_ * d.hidden;
    auto is = [](const Shape* sh, std::initializer_list<int64_t> want) { return *sh == Shape(want); };
    if (!is(&w, {dirs_, gh, d.input})) {
      why = "W " + w.to_string() + " does not match [" + std::to_string(dirs_) + "," + std::to_string(gh) + "," +
            std::to_string(d.input) + "]";
      return false;
    }
    if (!is(&r, {dirs_, gh, d.hidden})) {
      why = "R " + r.to_string() + " does not match [" + std::to_string(dirs_) + "," + std::to_string(gh) + "," +
            std::to_string(d.hidden) + "]";
      return false;
    }
    auto check = [&](size_t slot, const char* name, std::initializer_list<int64_t> want) {
      if (slot >= s.size() || !s[slot] || is(s[slot], want)) return true;
      why = std::string(name) + " " + s[slot]->to_string() + " does not match " + Shape(want).to_string();
      return false;
    };
    const bool l0 = layout_ == 0;
    if (!check(kB, "B", {dirs_, 2 * gh}) || !check(kSeqLens, "sequence_lens", {d.batch})) return false;
    if (l0 ? !check(kInitH, "initial_h", {dirs_, d.batch, d.hidden})
           : !check(kInitH, "initial_h", {d.batch, dirs_, d.hidden}))
      return false;
    if (cell_ == Cell::Lstm) {
      if (l0 ? !check(kInitC, "initial_c", {dirs_, d.batch, d.hidden})
             : !check(kInitC, "initial_c", {d.batch, dirs_, d.hidden}))
        return false;
      if (!check(kP, "P", {dirs_, 3 * d.hidden})) return false;
    }
    return true;
  }

  // Offset of state row (dir, b) in a [dirs, batch, H] (layout 0) or [batch, dirs, H] tensor.
  int64_t state_off(const Dims& d, int64_t dir, int64_t b) const {
    return (layout_ == 0 ? dir * d.batch + b : b * d.dirs + dir) * d.hidden;
  }
  int64_t y_off(const Dims& d, int64_t t, int64_t dir, int64_t b) const {
    return (layout_ == 0 ? (t * d.dirs + dir) * d.batch + b : (b * d.seq + t) * d.dirs + dir) * d.hidden;
  }
  float clip(float v) const { return clip_ > 0.0f ? (v < -clip_ ? -clip_ : (v > clip_ ? clip_ : v)) : v; }

  void run_direction(RunContext& ctx, const Dims& d, int64_t dir, const std::vector<int64_t>& lens) const {
    const int64_t H = d.hidden, GH = gates_ * H, B = d.batch, S = d.seq;
    const bool reverse = reverse_only_ || dir == 1;
    const bool exact = ctx.exact;
    const std::vector<Activation>& act = acts_[static_cast<size_t>(dir)];
    const float* W = ctx.input(kW).data<float>().data() + dir * GH * d.input;
    const float* R = ctx.input(kR).data<float>().data() + dir * GH * H;
    const float* Wb = ctx.has_input(kB) ? ctx.input(kB).data<float>().data() + dir * 2 * GH : nullptr;
    const float* Rb = Wb ? Wb + GH : nullptr;
    const bool lstm = cell_ == Cell::Lstm;
    const float* P = lstm && ctx.has_input(kP) ? ctx.input(kP).data<float>().data() + dir * 3 * H : nullptr;
    Tensor* Y = ctx.outputs.size() > 0 && !ctx.output(0).empty() ? &ctx.output(0) : nullptr;
    Tensor* Yh = ctx.outputs.size() > 1 && !ctx.output(1).empty() ? &ctx.output(1) : nullptr;
    Tensor* Yc = ctx.outputs.size() > 2 && !ctx.output(2).empty() ? &ctx.output(2) : nullptr;
    float* y = Y ? Y->mutable_data<float>().data() : nullptr;
    auto store = [exact](float v) { return exact ? kern::canon(v) : v; };

    // State buffers [B, H], initialised from initial_h / initial_c or zeros.
    Tensor h_t = ctx.scratch(DType::F32, Shape{B, H});
    Tensor c_t = ctx.scratch(DType::F32, Shape{B, H});
    float* h = h_t.mutable_data<float>().data();
    float* c = c_t.mutable_data<float>().data();
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t j = 0; j < H; ++j) {
        h[b * H + j] = ctx.has_input(kInitH)
                           ? ctx.input(kInitH).data<float>()[static_cast<size_t>(state_off(d, dir, b) + j)]
                           : 0.0f;
        c[b * H + j] = lstm && ctx.has_input(kInitC)
                           ? ctx.input(kInitC).data<float>()[static_cast<size_t>(state_off(d, dir, b) + j)]
                           : 0.0f;
      }
    }

    if (S > 0 && B > 0) {
      // 1. XW = X . W^T over all steps, rows in X's own order (t*B+b for layout 0, b*S+t for layout 1).
      Tensor xw_t = ctx.scratch(DType::F32, Shape{S * B, GH});
      float* xw = xw_t.mutable_data<float>().data();
      const auto* packed = static_cast<const recurrent::PackedWeights*>(ctx.state);
      const bool use_packed = packed && packed->w.size() == static_cast<size_t>(d.dirs) &&
                              kern::packed_b_rows(*packed->w[static_cast<size_t>(dir)]) == d.input &&
                              kern::packed_b_rows(*packed->r[static_cast<size_t>(dir)]) == H;
      if (use_packed)
        recurrent::product_packed(ctx, S * B, ctx.input(kX).data<float>().data(), d.input,
                                  *packed->w[static_cast<size_t>(dir)], xw, GH);
      else
        recurrent::product(ctx, S * B, GH, d.input, ctx.input(kX).data<float>().data(), d.input, W, d.input, xw, GH);
      Tensor rec_t = ctx.scratch(DType::F32, Shape{B, GH});
      Tensor aux_t = ctx.scratch(DType::F32, Shape{B, 3 * H});  // GRU: z | r (.) H ; the candidate's product
      float* rec = rec_t.mutable_data<float>().data();
      float* aux = aux_t.mutable_data<float>().data();
      const bool gru_split = cell_ == Cell::Gru && !linear_before_reset_;

      for (int64_t s = 0; s < S; ++s) {
        const int64_t t = reverse ? S - 1 - s : s;
        // 2. Rec = H . R^T for the whole batch (GRU without linear_before_reset: the z and r columns only).
        if (use_packed)
          recurrent::product_packed(ctx, B, h, H, *packed->r[static_cast<size_t>(dir)], rec, GH);
        else
          recurrent::product(ctx, B, gru_split ? 2 * H : GH, H, h, H, R, H, rec, GH);
        for (int64_t b = 0; b < B; ++b) {
          const bool active = t < lens[static_cast<size_t>(b)];
          if (!active && y)
            for (int64_t j = 0; j < H; ++j) y[y_off(d, t, dir, b) + j] = 0.0f;
        }
        const int64_t xrow_step = layout_ == 0 ? 1 : S;
        const int64_t xrow0 = layout_ == 0 ? t * B : t;
        if (cell_ == Cell::Rnn) {
          for (int64_t b = 0; b < B; ++b) {
            if (t >= lens[static_cast<size_t>(b)]) continue;
            const float* xr = xw + (xrow0 + b * xrow_step) * GH;
            const float* rr = rec + b * GH;
            for (int64_t j = 0; j < H; ++j) h[b * H + j] = act[0](clip(pre(xr[j], rr[j], Wb, Rb, j)));
          }
        } else if (lstm) {
          step_lstm(d, act, xw, xrow0, xrow_step, rec, Wb, Rb, P, lens, t, h, c);
        } else {
          step_gru(ctx, d, act, xw, xrow0, xrow_step, rec, aux, Wb, Rb, R, lens, t, h);
        }
        if (y)
          for (int64_t b = 0; b < B; ++b)
            if (t < lens[static_cast<size_t>(b)])
              for (int64_t j = 0; j < H; ++j) y[y_off(d, t, dir, b) + j] = store(h[b * H + j]);
      }
    }
    // Final states: the state after each row's last valid step; a row of length 0 gives zeros (seq > 0).
    for (int64_t b = 0; b < B; ++b) {
      const bool zero = S > 0 && lens[static_cast<size_t>(b)] == 0;
      for (int64_t j = 0; j < H; ++j) {
        if (Yh)
          Yh->mutable_data<float>()[static_cast<size_t>(state_off(d, dir, b) + j)] = zero ? 0.0f : store(h[b * H + j]);
        if (Yc)
          Yc->mutable_data<float>()[static_cast<size_t>(state_off(d, dir, b) + j)] = zero ? 0.0f : store(c[b * H + j]);
      }
    }
  }

  // ((xw + rec) + Wb) + Rb for gate column `col`, bias terms skipped when B is absent.
  static float pre(float xw, float rec, const float* Wb, const float* Rb, int64_t col) {
    float v = xw + rec;
    if (Wb) {
      v = v + Wb[col];
      v = v + Rb[col];
    }
    return v;
  }

  // LSTM step, gate order i, o, f, c; peepholes P in the order i, o, f.
  void step_lstm(const Dims& d, const std::vector<Activation>& act, const float* xw, int64_t xrow0, int64_t xrow_step,
                 const float* rec, const float* Wb, const float* Rb, const float* P, const std::vector<int64_t>& lens,
                 int64_t t, float* h, float* c) const {
    const int64_t H = d.hidden, GH = 4 * H;
    for (int64_t b = 0; b < d.batch; ++b) {
      if (t >= lens[static_cast<size_t>(b)]) continue;
      const float* xr = xw + (xrow0 + b * xrow_step) * GH;
      const float* rr = rec + b * GH;
      for (int64_t j = 0; j < H; ++j) {
        const float c_prev = c[b * H + j];
        float pi = pre(xr[j], rr[j], Wb, Rb, j);
        if (P) pi = pi + P[j] * c_prev;
        const float ig = act[0](clip(pi));
        float fg;
        if (input_forget_) {
          fg = 1.0f - ig;
        } else {
          float pf = pre(xr[2 * H + j], rr[2 * H + j], Wb, Rb, 2 * H + j);
          if (P) pf = pf + P[2 * H + j] * c_prev;
          fg = act[0](clip(pf));
        }
        const float ct = act[1](clip(pre(xr[3 * H + j], rr[3 * H + j], Wb, Rb, 3 * H + j)));
        const float keep = fg * c_prev;
        const float add = ig * ct;
        const float cn = keep + add;
        float po = pre(xr[H + j], rr[H + j], Wb, Rb, H + j);
        if (P) po = po + P[H + j] * cn;
        const float og = act[0](clip(po));
        c[b * H + j] = cn;
        h[b * H + j] = og * act[2](cn);
      }
    }
  }

  // GRU step, gate order z, r, h. Without linear_before_reset the candidate's recurrent product
  // (r (.) H) . Rh^T is a second product once r is known.
  void step_gru(RunContext& ctx, const Dims& d, const std::vector<Activation>& act, const float* xw, int64_t xrow0,
                int64_t xrow_step, const float* rec, float* aux, const float* Wb, const float* Rb, const float* R,
                const std::vector<int64_t>& lens, int64_t t, float* h) const {
    const int64_t H = d.hidden, GH = 3 * H, B = d.batch;
    // aux: [B, 2H] rows of z | r (.) H_prev (r alone for linear_before_reset), then a separate [B, H] block for
    // (r (.) H) . Rh^T, so the product's output never overlaps its input.
    float* zb = aux;
    float* rh = aux + H;
    float* rech = aux + 2 * B * H;
    for (int64_t b = 0; b < B; ++b) {
      const bool active = t < lens[static_cast<size_t>(b)];
      const float* xr = xw + (xrow0 + b * xrow_step) * GH;
      const float* rr = rec + b * GH;
      for (int64_t j = 0; j < H; ++j) {
        if (!active) {
          rh[b * 2 * H + j] = 0.0f;
          continue;
        }
        zb[b * 2 * H + j] = act[0](clip(pre(xr[j], rr[j], Wb, Rb, j)));
        const float r = act[0](clip(pre(xr[H + j], rr[H + j], Wb, Rb, H + j)));
        rh[b * 2 * H + j] = linear_before_reset_ ? r : r * h[b * H + j];
      }
    }
    if (!linear_before_reset_) recurrent::product(ctx, B, H, H, rh, 2 * H, R + 2 * H * H, H, rech, H);
    for (int64_t b = 0; b < B; ++b) {
      if (t >= lens[static_cast<size_t>(b)]) continue;
      const float* xr = xw + (xrow0 + b * xrow_step) * GH;
      const float* rr = rec + b * GH;
      for (int64_t j = 0; j < H; ++j) {
        const int64_t col = 2 * H + j;
        float ph;
        if (linear_before_reset_) {
          float inner = rr[col];
          if (Rb) inner = inner + Rb[col];
          ph = xr[col] + rh[b * 2 * H + j] * inner;
          if (Wb) ph = ph + Wb[col];
        } else {
          ph = pre(xr[col], rech[b * H + j], Wb, Rb, col);
        }
        const float ht = act[1](clip(ph));
        const float z = zb[b * 2 * H + j];
        const float a = (1.0f - z) * ht;
        const float k = z * h[b * H + j];
        h[b * H + j] = a + k;
      }
    }
  }

  Cell cell_;
  int64_t gates_ = 1, dirs_ = 1, layout_ = 0, hidden_attr_ = -1;
  bool reverse_only_ = false, input_forget_ = false, linear_before_reset_ = false;
  float clip_ = 0.0f;
  std::vector<std::vector<Activation>> acts_;
  SharedPack<recurrent::PackedWeights> packed_;
  size_t max_inputs_ = 6, max_outputs_ = 2;
};

}  // namespace

std::unique_ptr<Kernel> make_rnn(const NodeInfo& info) { return std::make_unique<RecurrentKernel>(info, Cell::Rnn); }
std::unique_ptr<Kernel> make_gru(const NodeInfo& info) { return std::make_unique<RecurrentKernel>(info, Cell::Gru); }
std::unique_ptr<Kernel> make_lstm(const NodeInfo& info) { return std::make_unique<RecurrentKernel>(info, Cell::Lstm); }

}  // namespace onemodel::rt
