// Built models for the ONNX Runtime oracle (tests/builder/oracle.mjs, docs/model-building.md section 6): every
// operator the builder names, at fixed and at symbolic shapes, plus an MLP, a small CNN and a two-layer transformer
// encoder, each case written once for both APIs: built with a GraphBuilder, and traced from eager tensors (section 8;
// `<case>_traced`, traced at the first binding, its outputs at every binding the eager run's, fast and exact). The
// traced_* cases are eager code as users write it (sizes read as integers into Reshape). For each case it writes
// OUT/<case>/model.onnx (GraphBuilder::to_onnx) and, per size binding k of the symbols, the inputs (in<k>_<name>.npy)
// and our outputs in fast and exact mode (fast<k>_<i>.npy, exact<k>_<i>.npy; exact is skipped where the model has no
// exact kernel). The oracle runs ONNX Runtime on the same files and compares.
//
//   onemodel_build_zoo OUT_DIR
#include <cmath>
#include <cstring>
#include <cstdio>
#include <functional>
#include <map>

#include "cli/npy.h"
#include "onemodel/builder.h"
#include "onemodel/trace.h"

namespace om = onemodel;
using om::DType;
using om::GraphBuilder;
using om::Tensor;
using om::Var;

namespace {

uint64_t rng_state = 0x1234567;
float next_float() {  // [-1, 1)
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return static_cast<float>(static_cast<int>(rng_state % 2000) - 1000) / 1000.0f;
}

Tensor randn(std::vector<int64_t> dims, float scale = 1.0f) {
  Tensor t = Tensor::zeros(DType::F32, om::Shape(std::span<const int64_t>(dims)));
  for (float& v : t.mutable_data<float>()) v = next_float() * scale;
  return t;
}

Tensor positive(std::vector<int64_t> dims) {  // variances: [0.5, 1.5)
  Tensor t = randn(std::move(dims));
  for (float& v : t.mutable_data<float>()) v = std::fabs(v) + 0.5f;
  return t;
}

struct In {
  std::string name;
  DType dtype;
  std::vector<om::DimArg> dims;
  int64_t int_range = 0;  // integer inputs: values in [0, int_range)
};

template <class V>
using Outs = std::vector<std::pair<std::string, V>>;

// Eager tensors made the way a GraphBuilder makes values, so one generic case body serves both APIs.
struct EagerMaker {
  om::EagerTensor constant(const Tensor& t, const std::string& = "") { return om::EagerTensor(t); }
  om::EagerTensor concat(const std::vector<om::EagerTensor>& v, int64_t axis) {
    return om::EagerTensor::op("Concat", v, {{"axis", axis}})[0];
  }
  std::vector<om::EagerTensor> op(std::string_view type, const std::vector<om::EagerTensor>& in,
                                  const std::vector<om::Attr>& attrs = {}, int n = 1) {
    return om::EagerTensor::op(type, in, attrs, n);
  }
};

// A case: one generic body, built with a GraphBuilder and traced from eager tensors (`<name>_traced`). The weights
// are drawn after reseeding, so every call of the body makes the same ones.
struct Case {
  template <class F>
  Case(std::string n, std::vector<In> in, F body, std::vector<std::map<std::string, int64_t>> s)
      : name(std::move(n)), inputs(std::move(in)), build(body), trace(body), sizes(std::move(s)) {}
  std::string name;
  std::vector<In> inputs;
  std::function<om::Outputs(GraphBuilder&, const std::vector<Var>&)> build;
  std::function<Outs<om::EagerTensor>(EagerMaker&, const std::vector<om::EagerTensor>&)> trace;
  std::vector<std::map<std::string, int64_t>> sizes;  // one binding per run; {} for a fixed-shape case
};

void reseed(const std::string& name) {
  rng_state = 0x1234567;
  for (char ch : name) rng_state = rng_state * 131 + static_cast<unsigned char>(ch);
}

template <class G>
auto c(G& g, std::vector<int64_t> dims, float scale = 0.5f) {
  return g.constant(randn(std::move(dims), scale));
}

om::ConvAttrs attrs(std::vector<int64_t> strides, std::vector<int64_t> pads, std::vector<int64_t> kernel = {}) {
  om::ConvAttrs a;
  a.strides = std::move(strides);
  a.pads = std::move(pads);
  a.kernel_shape = std::move(kernel);
  return a;
}

// Multi-head self-attention written as the attention pattern (../shared/spec/onemodel-tracing.md section 2).
template <class G, class V>
V attention(G& g, V x, V mask, int64_t d, int64_t heads) {
  auto split = [&](V t) { return t.reshape({0, 0, heads, d / heads}).transpose({0, 2, 1, 3}); };
  V q = split(x.matmul(c(g, {d, d}))), k = split(x.matmul(c(g, {d, d}))), v = split(x.matmul(c(g, {d, d})));
  float scale = 1.0f / std::sqrt(static_cast<float>(d / heads));
  V s = q.matmul(k.transpose({0, 1, 3, 2})).mul(g.constant(Tensor::from_values({scale}, om::Shape{})));
  V p = s.add(mask).softmax(-1);
  return p.matmul(v).transpose({0, 2, 1, 3}).reshape({0, 0, d}).matmul(c(g, {d, d}));
}

template <class G, class V>
V encoder_layer(G& g, V x, V mask, int64_t d) {
  auto ln = [&](V t) { return t.layer_norm(g.constant(randn({d}, 0.2f)), c(g, {d}, 0.1f)); };
  V h = x.add(attention(g, ln(x), mask, d, 2));
  V f = ln(h).matmul(c(g, {d, 2 * d})).add(c(g, {2 * d})).gelu().matmul(c(g, {2 * d, d}));
  return h.add(f);
}

std::vector<Case> cases() {
  const std::vector<std::map<std::string, int64_t>> bs = {{{"B", 2}, {"S", 5}, {"T", 3}},
                                                          {{"B", 3}, {"S", 7}, {"T", 4}}};
  const std::vector<std::map<std::string, int64_t>> img = {{{"N", 2}, {"H", 9}, {"W", 10}},
                                                           {{"N", 2}, {"H", 12}, {"W", 15}}};
  std::vector<Case> v;
  v.push_back({"binary",
               {{"x", DType::F32, {"B", "S", 4}}, {"y", DType::F32, {4}}, {"z", DType::F32, {"B", 1, 4}}},
               [](auto& g, const auto& in) {
                 using V = std::decay_t<decltype(in[0])>;
                 V x = in[0], y = in[1], z = in[2];
                 return Outs<V>{
                     {"o", (x + y) * z - x / y.abs().add(g.constant(Tensor::from_values({1.0f}, om::Shape{})))},
                     {"p", x.abs().add(c(g, {1}, 0.1f)).pow(g.constant(Tensor::from_values({2.0f}, om::Shape{})))}};
               },
               bs});
  v.push_back({"unary",
               {{"x", DType::F32, {"B", 6}}},
               [](auto& g, const auto& in) {
                 using V = std::decay_t<decltype(in[0])>;
                 V x = in[0];
                 V one = g.constant(Tensor::from_values({1.0f}, om::Shape{}));
                 return Outs<V>{{"neg", x.neg()},           {"relu", x.relu()}, {"sigmoid", x.sigmoid()},
                                {"tanh", x.tanh()},         {"exp", x.exp()},   {"log", x.abs().add(one).log()},
                                {"sqrt", x.abs().sqrt()},   {"erf", x.erf()},   {"gelu", x.gelu()},
                                {"gelu_tanh", x.gelu(true)}};
               },
               bs});
  v.push_back({"matmul",
               {{"x", DType::F32, {"B", "S", 8}}, {"y", DType::F32, {"B", 8, "T"}}},
               [](auto& g, const auto& in) {
                 using V = std::decay_t<decltype(in[0])>;
                 return Outs<V>{{"xw", in[0].matmul(c(g, {8, 5}))}, {"xy", in[0].matmul(in[1])}};
               },
               bs});
  v.push_back({"softmax",
               {{"x", DType::F32, {"B", "S", "T"}}},
               [](auto&, const auto& in) {
                 using V = std::decay_t<decltype(in[0])>;
                 return Outs<V>{{"sm", in[0].softmax()}, {"lsm", in[0].log_softmax()}, {"sm1", in[0].softmax(1)}};
               },
               bs});
  v.push_back(
      {"norms",
       {{"x", DType::F32, {"B", "S", 16}}, {"i", DType::F32, {"N", 3, "H", "W"}}},
       [](auto& g, const auto& in) {
         using V = std::decay_t<decltype(in[0])>;
         V var = g.constant(randn({3}, 0.5f).contiguous());
         V pos = var.abs().add(g.constant(Tensor::from_values({0.5f}, om::Shape{})));  // a computed variance
         return Outs<V>{{"ln", in[0].layer_norm(c(g, {16}), c(g, {16}))},
                        {"bn", in[1].batch_norm(c(g, {3}), c(g, {3}), c(g, {3}), pos)}};
       },
       {{{"B", 2}, {"S", 5}, {"N", 3}, {"H", 4}, {"W", 6}}, {{"B", 3}, {"S", 6}, {"N", 2}, {"H", 7}, {"W", 3}}}});
  v.push_back({"conv",
               {{"x", DType::F32, {"N", 4, "H", "W"}}},
               [](auto& g, const auto& in) {
                 using V = std::decay_t<decltype(in[0])>;
                 V x = in[0];
                 om::ConvAttrs grouped = attrs({2, 2}, {1, 1, 1, 1});
                 grouped.group = 2;
                 grouped.dilations = {2, 1};
                 om::ConvAttrs up = attrs({2, 2}, {1, 1, 1, 1});
                 up.output_padding = {1, 0};
                 return Outs<V>{{"c3", x.conv(c(g, {6, 4, 3, 3}), c(g, {6}), attrs({}, {1, 1, 1, 1}))},
                                {"c3s2g2", x.conv(c(g, {4, 2, 3, 3}), {}, grouped)},
                                {"c1", x.conv(c(g, {3, 4, 1, 1}), c(g, {3}))},
                                {"ct2", x.conv_transpose(c(g, {4, 3, 2, 2}), c(g, {3}), attrs({2, 2}, {}))},
                                {"ct3", x.conv_transpose(c(g, {4, 2, 3, 3}), {}, up)}};
               },
               img});
  v.push_back({"pool",
               {{"x", DType::F32, {"N", 3, "H", "W"}}},
               [](auto&, const auto& in) {
                 using V = std::decay_t<decltype(in[0])>;
                 om::ConvAttrs mp = attrs({2, 2}, {1, 1, 1, 1}, {3, 3});
                 mp.ceil_mode = true;
                 om::ConvAttrs ap = attrs({2, 2}, {1, 0, 1, 0}, {2, 2});
                 ap.count_include_pad = true;
                 return Outs<V>{{"max", in[0].max_pool(mp)},
                                {"avg", in[0].average_pool(ap)},
                                {"avg_nopad", in[0].average_pool(attrs({1, 1}, {1, 1, 1, 1}, {3, 3}))}};
               },
               img});
  v.push_back({"resize",
               {{"x", DType::F32, {1, 3, 5, 7}}},
               [](auto&, const auto& in) {
                 using V = std::decay_t<decltype(in[0])>;
                 return Outs<V>{{"nearest", in[0].resize({1, 3, 10, 9}, "nearest")},
                                {"linear", in[0].resize({1, 3, 8, 14}, "linear")}};
               },
               {{}}});
  v.push_back(
      {"concat_gather",
       {{"x", DType::F32, {"B", "S", 4}}, {"y", DType::F32, {"B", "T", 4}}, {"ids", DType::I64, {"B", "S"}, 10}},
       [](auto& g, const auto& in) {
         using V = std::decay_t<decltype(in[0])>;
         return Outs<V>{{"cat1", g.concat({in[0], in[1]}, 1)},
                        {"cat2", g.concat({in[0], in[0].relu()}, 2)},
                        {"emb", c(g, {10, 6}).gather(in[2])},
                        {"pick", in[0].gather(g.constant(Tensor::from_values({int64_t{1}}, om::Shape{})), 2)}};
       },
       bs});
  v.push_back({"reduce",
               {{"x", DType::F32, {"B", "S", 6}}},
               [](auto&, const auto& in) {
                 using V = std::decay_t<decltype(in[0])>;
                 return Outs<V>{{"sum1", in[0].reduce_sum({1})},
                                {"mean_last", in[0].reduce_mean({-1}, false)},
                                {"sum02", in[0].reduce_sum({0, 2}, false)}};
               },
               bs});
  v.push_back({"shapes",
               {{"x", DType::F32, {"B", "S", 8}}, {"z", DType::F32, {"B", 1, 8}}},
               [](auto&, const auto& in) {
                 using V = std::decay_t<decltype(in[0])>;
                 V x = in[0];
                 return Outs<V>{{"tr", x.transpose({2, 0, 1})},
                                {"flat", x.reshape({0, -1})},
                                {"rows", x.reshape({-1, 4})},
                                {"unsq", x.unsqueeze({1, 4})},
                                {"sq", in[1].squeeze({1})},
                                {"exp", in[1].expand({1, 3, 1})},
                                {"flip", x.slice({-1}, {INT64_MIN}, {2}, {-1})},
                                {"tail", x.slice({1, 2}, {INT64_MAX, 6}, {1, 2})},
                                {"i32", x.mul(x).cast(DType::I32)},
                                {"f64", x.cast(DType::F64)}};
               },
               bs});
  v.push_back({"shape_chain",
               {{"x", DType::F32, {"B", "S", 8}}},
               [](auto& g, const auto& in) {
                 using V = std::decay_t<decltype(in[0])>;
                 V shape = in[0].shape();
                 V eight = g.constant(Tensor::from_values({int64_t{8}}, om::Shape{1}));
                 V rows = g.op("Mul", {shape.slice({0}, {1}, {0}), shape.slice({1}, {2}, {0})})[0];
                 return Outs<V>{{"flat", g.op("Reshape", {in[0], g.concat({rows, eight}, 0)})[0]}, {"shape", shape}};
               },
               bs});
  v.push_back({"recurrent",
               {{"x", DType::F32, {"S", "B", 4}}},
               [](auto& g, const auto& in) {
                 using V = std::decay_t<decltype(in[0])>;
                 std::vector<V> lstm = g.op("LSTM", {in[0], c(g, {1, 20, 4}), c(g, {1, 20, 5}), c(g, {1, 40}, 0.1f)},
                                            {{"hidden_size", int64_t{5}}}, 3);
                 std::vector<V> gru = g.op("GRU", {in[0], c(g, {1, 15, 4}), c(g, {1, 15, 5}), c(g, {1, 30}, 0.1f)},
                                           {{"hidden_size", int64_t{5}}, {"linear_before_reset", int64_t{1}}}, 2);
                 return Outs<V>{{"lstm_y", lstm[0]}, {"lstm_h", lstm[1]}, {"gru_y", gru[0]}, {"gru_h", gru[1]}};
               },
               bs});
  v.push_back({"mlp",
               {{"x", DType::F32, {"B", 12}}},
               [](auto& g, const auto& in) {
                 using V = std::decay_t<decltype(in[0])>;
                 V h = in[0].matmul(c(g, {12, 16})).add(c(g, {16})).relu();
                 h = h.matmul(c(g, {16, 16})).add(c(g, {16})).tanh();
                 return Outs<V>{{"probs", h.matmul(c(g, {16, 4})).add(c(g, {4})).softmax()}};
               },
               bs});
  v.push_back({"cnn",
               {{"image", DType::F32, {"N", 3, "H", "W"}}},
               [](auto& g, const auto& in) {
                 using V = std::decay_t<decltype(in[0])>;
                 V h = in[0].conv(c(g, {8, 3, 3, 3}), c(g, {8}), attrs({1, 1}, {1, 1, 1, 1})).relu();
                 h = h.batch_norm(g.constant(randn({8}, 0.2f)), c(g, {8}), c(g, {8}), g.constant(positive({8})));
                 h = h.max_pool(attrs({2, 2}, {}, {2, 2}));
                 h = h.conv(c(g, {16, 8, 3, 3}, 0.2f), c(g, {16}), attrs({2, 2}, {1, 1, 1, 1})).relu();
                 V pooled = h.reduce_mean({2, 3}, false);  // global average pool
                 return Outs<V>{{"logits", pooled.matmul(c(g, {16, 5})).add(c(g, {5}))}};
               },
               {{{"N", 2}, {"H", 16}, {"W", 20}}, {{"N", 1}, {"H", 23}, {"W", 18}}}});
  v.push_back({"transformer",
               {{"ids", DType::I64, {"B", "S"}, 20}, {"mask", DType::F32, {"B", 1, 1, "S"}}},
               [](auto& g, const auto& in) {
                 using V = std::decay_t<decltype(in[0])>;
                 V x = c(g, {20, 16}).gather(in[0]);
                 for (int layer = 0; layer < 2; ++layer) x = encoder_layer(g, x, in[1], 16);
                 return Outs<V>{{"hidden", x}};
               },
               bs});
  return v;
}

// ---- traced models: eager code, traced at the first binding ----

using om::EagerTensor;
using Eager = std::vector<EagerTensor>;

struct TracedCase {
  std::string name;
  std::vector<In> inputs;
  std::function<Outs<EagerTensor>(const Eager&)> run;
  std::vector<std::map<std::string, int64_t>> sizes;
};

EagerTensor e(std::vector<int64_t> dims, float scale = 0.5f) { return EagerTensor(randn(std::move(dims), scale)); }

// Self-attention over [B, S, d] as eager code writes it: sizes read as integers, heads split by Reshape.
EagerTensor eager_attention(const EagerTensor& x, const Eager& w, int64_t heads) {
  const om::Shape& s = x.sizes();
  const int64_t b = s[0], q = s[1], d = s[2];
  auto split = [&](const EagerTensor& t) { return t.reshape({b, q, heads, d / heads}).transpose({0, 2, 1, 3}); };
  EagerTensor qh = split(x.matmul(w[0])), kh = split(x.matmul(w[1])), vh = split(x.matmul(w[2]));
  EagerTensor scale(Tensor::from_values({1.0f / std::sqrt(static_cast<float>(d / heads))}, om::Shape{}));
  EagerTensor p = qh.matmul(kh.transpose({0, 1, 3, 2})).mul(scale).softmax(-1);
  return p.matmul(vh).transpose({0, 2, 1, 3}).reshape({b, q, d}).matmul(w[3]);
}

std::vector<TracedCase> traced_cases() {
  const std::vector<std::map<std::string, int64_t>> bs = {
      {{"B", 2}, {"S", 5}}, {{"B", 3}, {"S", 7}}, {{"B", 1}, {"S", 4}}};
  std::vector<TracedCase> v;
  {
    Eager w = {e({12, 16}), e({16}, 0.1f), e({16, 4})};
    v.push_back({"traced_mlp",
                 {{"x", DType::F32, {"B", "S", 12}}},
                 [w](const Eager& in) -> std::vector<std::pair<std::string, EagerTensor>> {
                   EagerTensor h = in[0].matmul(w[0]).add(w[1]).gelu();
                   const om::Shape& s = h.sizes();
                   EagerTensor rows = h.reshape({s[0] * s[1], s[2]});
                   return {{"probs", rows.matmul(w[2]).softmax()}};
                 },
                 bs});
  }
  {
    Eager w = {e({8, 3, 3, 3}), e({8}, 0.1f), e({16, 8, 3, 3}, 0.2f), e({16}, 0.1f), e({16, 5})};
    v.push_back({"traced_cnn",
                 {{"image", DType::F32, {"N", 3, "H", "W"}}},
                 [w](const Eager& in) -> std::vector<std::pair<std::string, EagerTensor>> {
                   EagerTensor h = in[0].conv(w[0], w[1], attrs({1, 1}, {1, 1, 1, 1})).relu();
                   h = h.max_pool(attrs({2, 2}, {}, {2, 2}));
                   h = h.conv(w[2], w[3], attrs({2, 2}, {1, 1, 1, 1})).relu();
                   return {{"logits", h.reduce_mean({2, 3}, false).matmul(w[4])}};
                 },
                 {{{"N", 2}, {"H", 16}, {"W", 20}}, {{"N", 3}, {"H", 23}, {"W", 18}}}});
  }
  {
    Eager table = {e({20, 16})}, att = {e({16, 16}), e({16, 16}), e({16, 16}), e({16, 16})};
    Eager ffn = {e({16}, 0.2f), e({16}, 0.1f), e({16, 32}), e({32, 16})};
    v.push_back({"traced_transformer",
                 {{"ids", DType::I64, {"B", "S"}, 20}},
                 [table, att, ffn](const Eager& in) -> std::vector<std::pair<std::string, EagerTensor>> {
                   EagerTensor x = table[0].gather(in[0]);
                   for (int layer = 0; layer < 2; ++layer) {
                     x = x.add(eager_attention(x.layer_norm(ffn[0], ffn[1]), att, 2));
                     x = x.add(x.layer_norm(ffn[0], ffn[1]).matmul(ffn[2]).gelu().matmul(ffn[3]));
                   }
                   return {{"hidden", x}};
                 },
                 bs});
  }
  return v;
}

Tensor input_for(const In& in, const std::map<std::string, int64_t>& sizes) {
  std::vector<int64_t> dims;
  for (const om::DimArg& d : in.dims) dims.push_back(d.symbol.empty() ? d.value : sizes.at(d.symbol));
  if (in.dtype == DType::I64) {
    Tensor t = Tensor::zeros(DType::I64, om::Shape(std::span<const int64_t>(dims)));
    for (int64_t& x : t.mutable_data<int64_t>()) x = static_cast<int64_t>((next_float() + 1) * 1000) % in.int_range;
    return t;
  }
  if (in.name == "mask") {  // attention mask: 0 or -10000 (the last position of odd batches masked)
    Tensor t = Tensor::zeros(DType::F32, om::Shape(std::span<const int64_t>(dims)));
    auto d = t.mutable_data<float>();
    for (int64_t b = 0; b < dims[0]; ++b)
      if (b % 2) d[static_cast<size_t>((b + 1) * dims[3] - 1)] = -10000.0f;
    return t;
  }
  return randn(dims);
}

}  // namespace

// Traces `run` at the first binding into OUT/<name>/model.onnx; the outputs at every binding are the eager run's.
void write_traced(const std::filesystem::path& out, const std::string& name, const std::vector<In>& inputs,
                  const std::vector<std::map<std::string, int64_t>>& sizes,
                  const std::function<Outs<EagerTensor>(const Eager&)>& run) {
  std::filesystem::create_directories(out / name);
  std::string bytes;
  {
    om::set_eager_mode(om::Mode::Fast);
    om::Tracer tracer = om::Tracer::begin();
    Eager ins;
    for (const In& in : inputs) {
      std::vector<std::string> axes;
      for (const om::DimArg& d : in.dims) axes.push_back(d.symbol);
      ins.push_back(tracer.input(in.name, input_for(in, sizes[0]), axes));
    }
    bytes = tracer.finish(run(ins)).onnx;
  }
  std::FILE* f = std::fopen((out / name / "model.onnx").c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  // Our own sessions of the traced model, fast and exact: checked here against the eager run (exact: the same bits,
  // the same kernels; fast: the passes may fuse, within 1e-5 scaled).
  om::SessionOptions fast, exact;
  fast.intra_op_threads = exact.intra_op_threads = 1;
  exact.mode = om::Mode::Exact;
  const auto model = std::as_bytes(std::span<const char>(bytes.data(), bytes.size()));
  om::Session sessions[2] = {om::Session::load_bytes(model, fast), om::Session::load_bytes(model, exact)};
  for (size_t s = 0; s < sizes.size(); ++s) {
    Eager ins;
    std::vector<om::NamedTensor> feeds;
    for (const In& in : inputs) {
      Tensor t = input_for(in, sizes[s]);
      onemodel::cli::write_npy(out / name / ("in" + std::to_string(s) + "_" + in.name + ".npy"), t);
      ins.emplace_back(t);
      feeds.push_back({in.name, t});
    }
    for (om::Mode mode : {om::Mode::Fast, om::Mode::Exact}) {
      om::set_eager_mode(mode);
      auto outs = run(ins);
      std::vector<Tensor> graph = sessions[mode == om::Mode::Exact].run(feeds);
      for (size_t o = 0; o < outs.size(); ++o) {
        const Tensor eager = outs[o].second.value();
        onemodel::cli::write_npy(
            out / name /
                ((mode == om::Mode::Fast ? "fast" : "exact") + std::to_string(s) + "_" + std::to_string(o) + ".npy"),
            eager);
        if (eager.dtype() != graph[o].dtype() || eager.shape() != graph[o].shape())
          throw om::Error(om::ErrorKind::Internal, "our session's " + outs[o].first + " is " +
                                                       graph[o].shape().to_string() + ", the eager run's " +
                                                       eager.shape().to_string());
        const Tensor g = graph[o].contiguous();
        if (mode == om::Mode::Exact && std::memcmp(g.raw(), eager.raw(), eager.nbytes()) != 0)
          throw om::Error(om::ErrorKind::Internal,
                          "exact mode: our session's " + outs[o].first + " differs from the eager run in its bits");
        if (mode == om::Mode::Fast && eager.dtype() == DType::F32) {
          double worst = 0, top = 0;
          auto e = eager.data<float>(), q = g.data<float>();
          for (size_t i = 0; i < e.size(); ++i) {
            worst = std::max(worst, static_cast<double>(std::fabs(e[i] - q[i])));
            top = std::max(top, static_cast<double>(std::fabs(e[i])));
          }
          if (worst > 1e-5 * std::max(top, 1e-30))
            throw om::Error(om::ErrorKind::Internal, "fast mode: our session's " + outs[o].first +
                                                         " is off the eager run by " + std::to_string(worst));
        }
      }
    }
    om::set_eager_mode(om::Mode::Fast);
  }
  std::printf("%s: traced, %zu size bindings, our sessions equal to the eager run\n", name.c_str(), sizes.size());
}

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: onemodel_build_zoo OUT_DIR\n"), 2;
  const std::filesystem::path out = argv[1];
  int failed = 0;
  for (const Case& k : cases()) {
    try {
      GraphBuilder g;
      std::vector<Var> ins;
      for (const In& in : k.inputs) ins.push_back(g.input(in.name, in.dtype, in.dims));
      reseed(k.name);
      om::Outputs outs = k.build(g, ins);
      std::filesystem::create_directories(out / k.name);
      std::string bytes = g.to_onnx(outs);
      std::FILE* f = std::fopen((out / k.name / "model.onnx").c_str(), "wb");
      std::fwrite(bytes.data(), 1, bytes.size(), f);
      std::fclose(f);
      om::SessionOptions fast, exact;
      fast.intra_op_threads = exact.intra_op_threads = 1;
      exact.mode = om::Mode::Exact;
      om::BuiltModel mf = g.compile(outs, fast);
      std::optional<om::BuiltModel> me;
      try {
        me = g.compile(outs, exact);
      } catch (const om::Error& e) {
        if (e.kind() != om::ErrorKind::ExactModeUnavailable) throw;
        std::printf("%s: no exact mode (%s)\n", k.name.c_str(), e.message().c_str());
      }
      for (size_t s = 0; s < k.sizes.size(); ++s) {
        std::vector<om::NamedTensor> feeds;
        for (const In& in : k.inputs) {
          Tensor t = input_for(in, k.sizes[s]);
          onemodel::cli::write_npy(out / k.name / ("in" + std::to_string(s) + "_" + in.name + ".npy"), t);
          feeds.push_back({in.name, t});
        }
        std::vector<Tensor> rf = mf.run(feeds);
        for (size_t o = 0; o < rf.size(); ++o)
          onemodel::cli::write_npy(out / k.name / ("fast" + std::to_string(s) + "_" + std::to_string(o) + ".npy"),
                                   rf[o]);
        if (!me) continue;
        std::vector<Tensor> re = me->run(feeds);
        for (size_t o = 0; o < re.size(); ++o)
          onemodel::cli::write_npy(out / k.name / ("exact" + std::to_string(s) + "_" + std::to_string(o) + ".npy"),
                                   re[o]);
      }
      std::printf("%s: %zu outputs, %zu size bindings\n", k.name.c_str(), outs.size(), k.sizes.size());
    } catch (const om::Error& e) {
      std::printf("%s: FAILED %s\n", k.name.c_str(), e.what());
      ++failed;
    }
  }
  for (const Case& k : cases()) {
    try {
      write_traced(out, k.name + "_traced", k.inputs, k.sizes, [&](const Eager& ins) {
        reseed(k.name);
        EagerMaker maker;
        return k.trace(maker, ins);
      });
    } catch (const om::Error& e) {
      std::printf("%s_traced: FAILED %s\n", k.name.c_str(), e.what());
      ++failed;
    }
  }
  for (const TracedCase& k : traced_cases()) {
    try {
      write_traced(out, k.name, k.inputs, k.sizes, k.run);
    } catch (const om::Error& e) {
      std::printf("%s: FAILED %s\n", k.name.c_str(), e.what());
      ++failed;
    }
  }
  return failed ? 1 : 0;
}
