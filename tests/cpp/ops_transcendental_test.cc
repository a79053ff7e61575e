// Exp, Log, Tanh, Sigmoid, Erf, Gelu, Softmax and LogSoftmax on the vector kernels, run through their operator
// kernels with a chosen target and thread pool: exact outputs equal the scalar exact_math functions element
// for element (element-wise operators) and are identical for every target and 1, 2 or 7 threads; tensors are
// large enough to be cut into several chunks.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include "base/thread_pool.h"
#include "kernels/exact_math.h"
#include "kernels/isa.h"
#include "ops_test_util.h"

namespace onemodel::test {
namespace {

struct Run {
  kern::Isa isa;
  ThreadPool* pool;
};

// One operator run with the given target and pool, in exact or fast mode.
Tensor run_with(const std::string& op, int64_t opset, std::vector<ir::Attribute> attrs, const Tensor& x, bool exact,
                Run how) {
  OpCase c;
  c.op_type = op;
  c.opset = opset;
  c.attrs = std::move(attrs);
  c.inputs = {x};
  c.exact = exact;
  const rt::OpDef* def = rt::find_op("", op, opset);
  EXPECT_NE(def, nullptr) << op;
  const ir::Node node = make_node(c);
  const rt::NodeInfo info(node, exact);
  auto k = def->factory(info);
  std::vector<rt::InputMeta> metas(1);
  metas[0].present = true;
  metas[0].dtype = x.dtype();
  metas[0].shape = x.shape();
  std::vector<rt::OutputMeta> outs(1);
  rt::InferContext ictx{info, metas, outs, exact};
  k->infer(ictx);
  std::vector<Tensor> results{Tensor::zeros(outs[0].dtype, outs[0].shape)};
  TestArena arena;
  rt::RunContext rctx{info, c.inputs, results, exact, nullptr, &arena, how.pool, how.isa};
  k->run(rctx);
  return results[0];
}

Tensor random_tensor(const Shape& s, float scale, uint32_t seed) {
  Tensor t = Tensor::zeros(DType::F32, s);
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, scale);
  auto v = t.mutable_data<float>();
  for (float& x : v) x = g(rng);
  // A few specials so the canonical NaN and the infinities travel through every path.
  const float sp[] = {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                      std::bit_cast<float>(0xFFC00001u), -0.0f, 1e-40f};
  for (size_t i = 0; i < v.size(); i += 9973) v[i] = sp[(i / 9973) % 5];
  return t;
}

struct Unary {
  const char* op;
  int64_t opset;
  std::vector<ir::Attribute> attrs;
  float (*ref)(float);
};

TEST(OpsTranscendental, ElementwiseExactEqualsScalarOnEveryTargetAndThreadCount) {
  const Unary ops[] = {
      {"Exp", 13, {}, &kern::exact_exp},
      {"Log", 13, {}, &kern::exact_log},
      {"Tanh", 13, {}, &kern::exact_tanh},
      {"Sigmoid", 13, {}, &kern::exact_sigmoid},
      {"Erf", 13, {}, &kern::exact_erf},
      {"Gelu", 20, {}, &kern::exact_gelu_erf},
      {"Gelu", 20, {attr_s("approximate", "tanh")}, &kern::exact_gelu_tanh},
  };
  ThreadPool pool2(2), pool7(7);
  const Tensor x = random_tensor(Shape{3, 17, 1001}, 6.0f, 4);  // 51051 elements: 4 chunks of 16384
  const auto xv = x.data<float>();
  for (const Unary& u : ops) {
    for (kern::Isa isa : kern::available_isas()) {
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2, &pool7}) {
        const Tensor y = run_with(u.op, u.opset, u.attrs, x, true, {isa, pool});
        const auto yv = y.data<float>();
        for (size_t i = 0; i < xv.size(); ++i)
          ASSERT_EQ(fbits(yv[i]), fbits(u.ref(xv[i]))) << u.op << " " << kern::isa_name(isa) << " i=" << i;
        // Fast mode: close to exact (same algorithms, fused steps); 1e-4 relative is the transcendental bound
        // of ops-elementwise.md "Verification" (GELU's negative tail amplifies a rounding by about x^2); subnormal
        // results (the tail of GELU) get an absolute 1e-37.
        const Tensor f = run_with(u.op, u.opset, u.attrs, x, false, {isa, pool});
        const auto fv = f.data<float>();
        for (size_t i = 0; i < xv.size(); ++i) {
          const float e = yv[i];
          if (std::isnan(e)) {
            ASSERT_TRUE(std::isnan(fv[i]));
          } else if (std::isinf(e) || e == 0.0f) {
            ASSERT_EQ(fv[i], e) << u.op;
          } else {
            ASSERT_LE(std::fabs(fv[i] - e), 1e-4f * std::fabs(e) + 1e-37f) << u.op << " x=" << xv[i];
          }
        }
      }
    }
  }
}

TEST(OpsTranscendental, SoftmaxRowsIdenticalOnEveryTargetAndThreadCount) {
  ThreadPool pool2(2), pool7(7);
  // Rows of 700 along the last axis (23 rows per chunk) and along axis 1 (the strided path).
  const Tensor x = random_tensor(Shape{4, 700, 30}, 5.0f, 8);
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int64_t axis : {-1, 1}) {
      for (bool exact : {true, false}) {
        const Tensor want = run_with(op, 13, {attr_i("axis", axis)}, x, exact, {kern::Isa::Scalar, nullptr});
        for (kern::Isa isa : kern::available_isas()) {
          for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2, &pool7}) {
            const Tensor y = run_with(op, 13, {attr_i("axis", axis)}, x, exact, {isa, pool});
            const auto a = y.data<float>(), b = want.data<float>();
            if (exact) {
              for (size_t i = 0; i < a.size(); ++i)
                ASSERT_EQ(fbits(a[i]), fbits(b[i])) << op << " axis=" << axis << " " << kern::isa_name(isa);
            } else {
              for (size_t i = 0; i < a.size(); ++i) {
                if (std::isnan(b[i])) {
                  ASSERT_TRUE(std::isnan(a[i]));
                } else if (std::isinf(b[i])) {
                  ASSERT_EQ(a[i], b[i]);
                } else {
                  ASSERT_NEAR(a[i], b[i], 1e-6f * (1.0f + std::fabs(b[i]))) << op << " " << kern::isa_name(isa);
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace onemodel::test
