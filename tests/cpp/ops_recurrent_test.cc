// RNN, GRU and LSTM beyond the backend cases: sequence_lens with zero and short rows in every direction,
// layout 1 against layout 0, activation parameter cursors, clip, input_forget, exact-mode NaN, and errors
// naming the node. Expected values come from an independent double-precision reference written here from
// the ONNX equations (per time step, per batch row, no shared code with the kernel), or from hand work.
#include <cmath>
#include <functional>
#include <random>

#include "base/thread_pool.h"
#include "kernels/isa.h"
#include "ops_test_util.h"

namespace onemodel::test {
namespace {

Tensor f32(const std::vector<float>& v, std::vector<int64_t> s) {
  return Tensor::from_values(std::span<const float>(v), Shape(std::span<const int64_t>(s)));
}
Tensor i32(const std::vector<int32_t>& v, std::vector<int64_t> s) {
  return Tensor::from_values(std::span<const int32_t>(v), Shape(std::span<const int64_t>(s)));
}
std::vector<float> rnd(std::mt19937& g, int64_t n, float lim = 1.0f) {
  std::uniform_real_distribution<float> d(-lim, lim);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(g);
  return v;
}

using Fn = std::function<double(double)>;
double sigm(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Reference over layout 0: X [S,B,I], W [D,G*H,I], R [D,G*H,H], B [D,2GH] (or empty), lens (or empty),
// h0/c0 [D,B,H] (or empty), P [D,3H] (or empty). acts[d] = f, g, h. Returns Y [S,D,B,H], Yh, Yc [D,B,H].
struct Ref {
  std::vector<double> y, yh, yc;
};
Ref reference(char cell, int64_t S, int64_t Bt, int64_t I, int64_t H, int64_t D, bool reverse_only,
              const std::vector<float>& X, const std::vector<float>& W, const std::vector<float>& R,
              const std::vector<float>& Bv, const std::vector<int32_t>& lens, const std::vector<float>& h0,
              const std::vector<float>& c0, const std::vector<float>& P, const std::vector<std::vector<Fn>>& acts,
              double clip = 0, bool input_forget = false, bool lbr = false) {
  const int64_t G = cell == 'L' ? 4 : (cell == 'G' ? 3 : 1);
  Ref r;
  r.y.assign(static_cast<size_t>(S * D * Bt * H), 0.0);
  r.yh.assign(static_cast<size_t>(D * Bt * H), 0.0);
  r.yc = r.yh;
  auto cl = [&](double v) { return clip > 0 ? std::min(clip, std::max(-clip, v)) : v; };
  for (int64_t d = 0; d < D; ++d) {
    const bool rev = reverse_only || d == 1;
    const auto& a = acts[static_cast<size_t>(d)];
    for (int64_t b = 0; b < Bt; ++b) {
      const int64_t len = lens.empty() ? S : lens[static_cast<size_t>(b)];
      std::vector<double> h(static_cast<size_t>(H)), c(static_cast<size_t>(H));
      for (int64_t j = 0; j < H; ++j) {
        h[j] = h0.empty() ? 0 : h0[static_cast<size_t>((d * Bt + b) * H + j)];
        c[j] = c0.empty() ? 0 : c0[static_cast<size_t>((d * Bt + b) * H + j)];
      }
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = rev ? len - 1 - s : s;
        // gate pre-activations without bias: xw[g*H+j], rw[g*H+j]
        auto xw = [&](int64_t row) {
          double acc = 0;
          for (int64_t p = 0; p < I; ++p)
            acc += double(X[static_cast<size_t>((t * Bt + b) * I + p)]) *
                   W[static_cast<size_t>((d * G * H + row) * I + p)];
          return acc;
        };
        auto rw = [&](int64_t row, const std::vector<double>& hv) {
          double acc = 0;
          for (int64_t p = 0; p < H; ++p) acc += hv[p] * R[static_cast<size_t>((d * G * H + row) * H + p)];
          return acc;
        };
        auto wb = [&](int64_t row) { return Bv.empty() ? 0.0 : double(Bv[static_cast<size_t>(d * 2 * G * H + row)]); };
        auto rb = [&](int64_t row) {
          return Bv.empty() ? 0.0 : double(Bv[static_cast<size_t>(d * 2 * G * H + G * H + row)]);
        };
        std::vector<double> hn(static_cast<size_t>(H)), cn(static_cast<size_t>(H));
        if (cell == 'R') {
          for (int64_t j = 0; j < H; ++j) hn[j] = a[0](cl(xw(j) + rw(j, h) + wb(j) + rb(j)));
        } else if (cell == 'G') {
          std::vector<double> z(static_cast<size_t>(H)), rr(static_cast<size_t>(H)), rh(static_cast<size_t>(H));
          for (int64_t j = 0; j < H; ++j) {
            z[j] = a[0](cl(xw(j) + rw(j, h) + wb(j) + rb(j)));
            rr[j] = a[0](cl(xw(H + j) + rw(H + j, h) + wb(H + j) + rb(H + j)));
            rh[j] = rr[j] * h[j];
          }
          for (int64_t j = 0; j < H; ++j) {
            const int64_t row = 2 * H + j;
            const double ph =
                lbr ? xw(row) + rr[j] * (rw(row, h) + rb(row)) + wb(row) : xw(row) + rw(row, rh) + wb(row) + rb(row);
            const double ht = a[1](cl(ph));
            hn[j] = (1 - z[j]) * ht + z[j] * h[j];
          }
        } else {
          auto pp = [&](int64_t k, int64_t j) {
            return P.empty() ? 0.0 : double(P[static_cast<size_t>(d * 3 * H + k * H + j)]);
          };
          for (int64_t j = 0; j < H; ++j) {
            const double i = a[0](cl(xw(j) + rw(j, h) + wb(j) + rb(j) + pp(0, j) * c[j]));
            const double f =
                input_forget
                    ? 1 - i
                    : a[0](cl(xw(2 * H + j) + rw(2 * H + j, h) + wb(2 * H + j) + rb(2 * H + j) + pp(2, j) * c[j]));
            const double g = a[1](cl(xw(3 * H + j) + rw(3 * H + j, h) + wb(3 * H + j) + rb(3 * H + j)));
            cn[j] = f * c[j] + i * g;
            const double o = a[0](cl(xw(H + j) + rw(H + j, h) + wb(H + j) + rb(H + j) + pp(1, j) * cn[j]));
            hn[j] = o * a[2](cn[j]);
          }
          c = cn;
        }
        h = hn;
        for (int64_t j = 0; j < H; ++j) r.y[static_cast<size_t>(((t * D + d) * Bt + b) * H + j)] = h[j];
      }
      for (int64_t j = 0; j < H; ++j) {
        r.yh[static_cast<size_t>((d * Bt + b) * H + j)] = len == 0 ? 0 : h[j];
        r.yc[static_cast<size_t>((d * Bt + b) * H + j)] = len == 0 ? 0 : c[j];
      }
    }
  }
  return r;
}

void expect_near(const Tensor& t, const std::vector<double>& want, double tol, const char* what) {
  const auto v = values<float>(t);
  ASSERT_EQ(v.size(), want.size()) << what;
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], want[i], tol) << what << " [" << i << "]";
}

const Fn kSig = sigm;
const Fn kTanh = [](double x) { return std::tanh(x); };

struct Layer {
  char cell;
  int64_t S, B, I, H, D;
  std::vector<float> X, W, R, Bv, h0, c0, P;
  std::vector<int32_t> lens;
};

Layer make_layer(char cell, int64_t S, int64_t B, int64_t I, int64_t H, int64_t D, unsigned seed) {
  std::mt19937 g(seed);
  const int64_t G = cell == 'L' ? 4 : (cell == 'G' ? 3 : 1);
  Layer l{cell, S, B, I, H, D, {}, {}, {}, {}, {}, {}, {}, {}};
  l.X = rnd(g, S * B * I);
  l.W = rnd(g, D * G * H * I, 0.6f);
  l.R = rnd(g, D * G * H * H, 0.6f);
  l.Bv = rnd(g, D * 2 * G * H, 0.3f);
  l.h0 = rnd(g, D * B * H, 0.5f);
  l.c0 = rnd(g, D * B * H, 0.5f);
  l.P = rnd(g, D * 3 * H, 0.4f);
  return l;
}

const char* op_name(char cell) { return cell == 'L' ? "LSTM" : (cell == 'G' ? "GRU" : "RNN"); }

OpCase layer_case(const Layer& l, const std::string& direction, bool exact, int64_t layout = 0) {
  OpCase c;
  c.op_type = op_name(l.cell);
  c.opset = 14;
  c.exact = exact;
  const int64_t G = l.cell == 'L' ? 4 : (l.cell == 'G' ? 3 : 1);
  c.attrs = {attr_i("hidden_size", l.H), attr_s("direction", direction), attr_i("layout", layout)};
  c.inputs = {f32(l.X, {l.S, l.B, l.I}),
              f32(l.W, {l.D, G * l.H, l.I}),
              f32(l.R, {l.D, G * l.H, l.H}),
              f32(l.Bv, {l.D, 2 * G * l.H}),
              l.lens.empty() ? Tensor() : i32(l.lens, {l.B}),
              f32(l.h0, {l.D, l.B, l.H})};
  if (l.cell == 'L') {
    c.inputs.push_back(f32(l.c0, {l.D, l.B, l.H}));
    c.inputs.push_back(f32(l.P, {l.D, 3 * l.H}));
  }
  c.num_outputs = l.cell == 'L' ? 3 : 2;
  return c;
}

std::vector<std::vector<Fn>> default_acts(char cell, int64_t D) {
  std::vector<Fn> one = cell == 'L' ? std::vector<Fn>{kSig, kTanh, kTanh}
                                    : (cell == 'G' ? std::vector<Fn>{kSig, kTanh} : std::vector<Fn>{kTanh});
  return std::vector<std::vector<Fn>>(static_cast<size_t>(D), one);
}

TEST(OpsRecurrentTest, RnnHandComputed) {
  // One unit, Relu: h1 = relu(1*0.5 + 0*0.25 + 0.1 + 0.2) = 0.8; h2 = relu(2*0.5 + 0.8*0.25 + 0.3) = 1.5.
  OpCase c;
  c.op_type = "RNN";
  c.opset = 14;
  c.attrs = {attr_i("hidden_size", 1), attr_strs("activations", {"Relu"})};
  c.inputs = {f32({1, 2}, {2, 1, 1}), f32({0.5f}, {1, 1, 1}), f32({0.25f}, {1, 1, 1}), f32({0.1f, 0.2f}, {1, 2})};
  c.num_outputs = 2;
  for (bool exact : {false, true}) {
    c.exact = exact;
    auto r = run_op(c);
    EXPECT_EQ(r.outputs[0].shape(), (Shape{2, 1, 1, 1}));
    expect_near(r.outputs[0], {0.8, 1.5}, 1e-6, "Y");
    expect_near(r.outputs[1], {1.5}, 1e-6, "Y_h");
  }
}

// Every cell, every direction, with sequence_lens holding a zero, a short and a full row.
TEST(OpsRecurrentTest, SequenceLensAllCellsAndDirections) {
  for (char cell : {'R', 'G', 'L'})
    for (const std::string dir : {"forward", "reverse", "bidirectional"})
      for (bool exact : {false, true}) {
        const int64_t D = dir == "bidirectional" ? 2 : 1;
        Layer l = make_layer(cell, 4, 3, 3, 5, D, 7u + static_cast<unsigned>(cell));
        l.lens = {0, 2, 4};
        auto r = run_op(layer_case(l, dir, exact));
        const Ref want = reference(cell, l.S, l.B, l.I, l.H, D, dir == "reverse", l.X, l.W, l.R, l.Bv, l.lens, l.h0,
                                   cell == 'L' ? l.c0 : std::vector<float>{}, cell == 'L' ? l.P : std::vector<float>{},
                                   default_acts(cell, D));
        SCOPED_TRACE(std::string(1, cell) + " " + dir + (exact ? " exact" : " fast"));
        expect_near(r.outputs[0], want.y, 2e-5, "Y");
        expect_near(r.outputs[1], want.yh, 2e-5, "Y_h");
        if (cell == 'L') expect_near(r.outputs[2], want.yc, 2e-5, "Y_c");
        // Zero-length row: Y_h is zero (not the initial state), and Y is zero at every step.
        for (int64_t d = 0; d < D; ++d)
          for (int64_t j = 0; j < l.H; ++j)
            EXPECT_EQ(values<float>(r.outputs[1])[static_cast<size_t>(d * l.B * l.H + j)], 0.0f);
      }
}

// Layout 1 is layout 0 with X, the states and the outputs transposed: the bits must be equal.
TEST(OpsRecurrentTest, BidirectionalLayoutOneMatchesLayoutZero) {
  for (char cell : {'R', 'G', 'L'}) {
    Layer l = make_layer(cell, 3, 2, 4, 3, 2, 99u);
    l.lens = {3, 1};
    OpCase c0 = layer_case(l, "bidirectional", true, 0);
    auto r0 = run_op(c0);
    // Transpose X [S,B,I] -> [B,S,I] and states [D,B,H] -> [B,D,H].
    std::vector<float> xt(l.X.size()), ht(l.h0.size()), ct(l.c0.size());
    for (int64_t s = 0; s < l.S; ++s)
      for (int64_t b = 0; b < l.B; ++b)
        for (int64_t i = 0; i < l.I; ++i)
          xt[static_cast<size_t>((b * l.S + s) * l.I + i)] = l.X[static_cast<size_t>((s * l.B + b) * l.I + i)];
    for (int64_t d = 0; d < 2; ++d)
      for (int64_t b = 0; b < l.B; ++b)
        for (int64_t j = 0; j < l.H; ++j) {
          ht[static_cast<size_t>((b * 2 + d) * l.H + j)] = l.h0[static_cast<size_t>((d * l.B + b) * l.H + j)];
          ct[static_cast<size_t>((b * 2 + d) * l.H + j)] = l.c0[static_cast<size_t>((d * l.B + b) * l.H + j)];
        }
    OpCase c1 = layer_case(l, "bidirectional", true, 1);
    c1.inputs[0] = f32(xt, {l.B, l.S, l.I});
    c1.inputs[5] = f32(ht, {l.B, 2, l.H});
    if (cell == 'L') c1.inputs[6] = f32(ct, {l.B, 2, l.H});
    auto r1 = run_op(c1);
    ASSERT_EQ(r1.outputs[0].shape(), (Shape{l.B, l.S, 2, l.H}));
    ASSERT_EQ(r1.outputs[1].shape(), (Shape{l.B, 2, l.H}));
    const auto y0 = values<float>(r0.outputs[0]), y1 = values<float>(r1.outputs[0]);
    for (int64_t s = 0; s < l.S; ++s)
      for (int64_t d = 0; d < 2; ++d)
        for (int64_t b = 0; b < l.B; ++b)
          for (int64_t j = 0; j < l.H; ++j)
            EXPECT_EQ(fbits(y0[static_cast<size_t>(((s * 2 + d) * l.B + b) * l.H + j)]),
                      fbits(y1[static_cast<size_t>(((b * l.S + s) * 2 + d) * l.H + j)]));
    for (size_t o = 1; o < r0.outputs.size(); ++o) {
      const auto a = values<float>(r0.outputs[o]), b1 = values<float>(r1.outputs[o]);
      for (int64_t d = 0; d < 2; ++d)
        for (int64_t b = 0; b < l.B; ++b)
          for (int64_t j = 0; j < l.H; ++j)
            EXPECT_EQ(fbits(a[static_cast<size_t>((d * l.B + b) * l.H + j)]),
                      fbits(b1[static_cast<size_t>((b * 2 + d) * l.H + j)]));
    }
  }
}

// Separate alpha and beta cursors: HardSigmoid takes alpha 0.3 and beta 0.4, LeakyRelu alpha 0.2,
// ScaledTanh alpha 1.2 and beta 0.7 (ops-recurrent.md). Also clip and GRU linear_before_reset.
TEST(OpsRecurrentTest, ActivationCursorsClipAndVariants) {
  Layer l = make_layer('L', 3, 2, 3, 4, 1, 5u);
  OpCase c = layer_case(l, "forward", false);
  c.attrs.push_back(attr_strs("activations", {"HardSigmoid", "LeakyRelu", "ScaledTanh"}));
  c.attrs.push_back(attr_floats("activation_alpha", {0.3f, 0.2f, 1.2f}));
  c.attrs.push_back(attr_floats("activation_beta", {0.4f, 0.7f}));
  c.attrs.push_back(attr_f("clip", 0.5f));
  auto r = run_op(c);
  const Fn hs = [](double x) { return std::min(1.0, std::max(0.0, double(0.3f) * x + double(0.4f))); };
  const Fn lr = [](double x) { return x < 0 ? double(0.2f) * x : x; };
  const Fn st = [](double x) { return double(1.2f) * std::tanh(double(0.7f) * x); };
  const Ref want =
      reference('L', l.S, l.B, l.I, l.H, 1, false, l.X, l.W, l.R, l.Bv, {}, l.h0, l.c0, l.P, {{hs, lr, st}}, 0.5);
  expect_near(r.outputs[0], want.y, 2e-5, "Y");
  expect_near(r.outputs[2], want.yc, 2e-5, "Y_c");

  OpCase f = layer_case(l, "forward", true);
  f.attrs.push_back(attr_i("input_forget", 1));
  auto rf = run_op(f);
  const Ref wf = reference('L', l.S, l.B, l.I, l.H, 1, false, l.X, l.W, l.R, l.Bv, {}, l.h0, l.c0, l.P,
                           default_acts('L', 1), 0, true);
  expect_near(rf.outputs[0], wf.y, 2e-5, "Y input_forget");

  Layer g = make_layer('G', 3, 2, 3, 4, 2, 6u);
  OpCase gc = layer_case(g, "bidirectional", true);
  gc.attrs.push_back(attr_i("linear_before_reset", 1));
  gc.attrs.push_back(attr_strs("activations", {"Sigmoid", "Tanh", "Softsign", "Elu"}));  // one set per direction
  auto rg = run_op(gc);
  const Fn ss = [](double x) { return x / (1 + std::fabs(x)); };
  const Fn elu = [](double x) { return x >= 0 ? x : std::exp(x) - 1; };
  const Ref wg = reference('G', g.S, g.B, g.I, g.H, 2, false, g.X, g.W, g.R, g.Bv, {}, g.h0, {}, {},
                           {{kSig, kTanh}, {ss, elu}}, 0, false, true);
  expect_near(rg.outputs[0], wg.y, 2e-5, "Y GRU lbr");
}

TEST(OpsRecurrentTest, ExactModeCanonicalNan) {
  Layer l = make_layer('R', 2, 1, 2, 2, 1, 3u);
  l.X[0] = -std::numeric_limits<float>::quiet_NaN();
  OpCase c = layer_case(l, "forward", true);
  auto r = run_op(c);
  for (float v : values<float>(r.outputs[0])) EXPECT_EQ(fbits(v), 0x7FC00000u);
}

// Runs a case with a given target and pool (run_op uses the scalar target and no pool).
std::vector<Tensor> run_on(const OpCase& c, kern::Isa isa, ThreadPool* pool) {
  const ir::Node node = make_node(c);
  const rt::NodeInfo info(node, c.exact);
  auto k = rt::find_op("", c.op_type, c.opset)->factory(info);
  std::vector<rt::InputMeta> metas(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (!c.inputs[i].empty()) metas[i] = rt::InputMeta{true, c.inputs[i].dtype(), c.inputs[i].shape(), nullptr};
  std::vector<rt::OutputMeta> outs(c.num_outputs);
  rt::InferContext ictx{info, metas, outs, c.exact};
  k->infer(ictx);
  std::vector<Tensor> res;
  for (auto& o : outs) res.push_back(Tensor::zeros(o.dtype, o.shape));
  TestArena arena;
  rt::RunContext rctx{info, c.inputs, res, c.exact, nullptr, &arena, pool, isa};
  k->run(rctx);
  return res;
}

// Exact mode gives the same bits on every kernel path and thread count (ops-recurrent.md "Exact mode");
// fast mode stays within rounding of it.
TEST(OpsRecurrentTest, ExactBitsEqualOnEveryPathAndThreadCount) {
  ThreadPool three(3);
  for (char cell : {'R', 'G', 'L'}) {
    Layer l = make_layer(cell, 5, 7, 19, 13, 2, 21u);
    l.lens = {5, 0, 3, 1, 5, 2, 4};
    const OpCase ce = layer_case(l, "bidirectional", true);
    const auto ref = run_on(ce, kern::Isa::Scalar, nullptr);
    OpCase cf = ce;
    cf.exact = false;
    for (kern::Isa isa : kern::available_isas())
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &three}) {
        SCOPED_TRACE(std::string(1, cell) + " " + std::string(kern::isa_name(isa)) +
                     (pool ? " 3 threads" : " 1 thread"));
        const auto got = run_on(ce, isa, pool);
        for (size_t o = 0; o < ref.size(); ++o) {
          const auto a = values<float>(ref[o]), b = values<float>(got[o]);
          ASSERT_EQ(a.size(), b.size());
          for (size_t i = 0; i < a.size(); ++i)
            ASSERT_EQ(fbits(a[i]), fbits(b[i])) << "output " << o << " [" << i << "]";
        }
        const auto fast = run_on(cf, isa, pool);
        for (size_t o = 0; o < ref.size(); ++o) {
          const auto a = values<float>(ref[o]), b = values<float>(fast[o]);
          for (size_t i = 0; i < a.size(); ++i)
            ASSERT_NEAR(a[i], b[i], 1e-5f) << "fast output " << o << " [" << i << "]";
        }
      }
  }
}

TEST(OpsRecurrentTest, ErrorsNameTheNode) {
  Layer l = make_layer('L', 2, 2, 3, 4, 1, 1u);
  OpCase c = layer_case(l, "forward", false);
  c.attrs[0] = attr_i("hidden_size", 5);
  expect_error([&] { run_op(c); }, ErrorKind::InvalidModel, "node 'n0': hidden_size 5 does not match R");
  OpCase w = layer_case(l, "forward", false);
  w.inputs[1] = f32(std::vector<float>(16 * 2, 0.0f), {1, 16, 2});
  expect_error([&] { run_op(w); }, ErrorKind::InvalidModel, "W [1,16,2] does not match [1,16,3]");
  OpCase s = layer_case(l, "forward", false);
  s.inputs[4] = i32({1, 3}, {2});
  expect_error([&] { run_op(s); }, ErrorKind::InvalidInput, "sequence_lens[1] = 3 is outside [0, 2]");
  OpCase d = layer_case(l, "sideways", false);
  expect_error([&] { run_op(d); }, ErrorKind::InvalidModel, "direction must be");
  OpCase a = layer_case(l, "forward", false);
  a.attrs.push_back(attr_strs("activations", {"Sigmoid", "Swish", "Tanh"}));
  expect_error([&] { run_op(a); }, ErrorKind::Unsupported, "activation function 'Swish'");
  OpCase h = layer_case(l, "forward", false);
  h.inputs[5] = f32(std::vector<float>(8, 0.0f), {2, 1, 4});
  expect_error([&] { run_op(h); }, ErrorKind::InvalidModel, "initial_h [2,1,4] does not match [1,2,4]");
}

}  // namespace
}  // namespace onemodel::test
