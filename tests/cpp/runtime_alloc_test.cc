// "A warm run allocates nothing" (graph-runtime.md section 4): counts operator new calls made on this
// thread while the span form runs a warm plan built from test-only kernels that themselves never allocate.
// The replacement operators forward to malloc/free and only count while a thread-local flag is set, so the
// rest of the test binary is unaffected.
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>

#include "runtime/session_impl.h"
#include "runtime_fake_ops.h"

namespace {
thread_local bool g_counting = false;
thread_local long g_allocations = 0;
}  // namespace

void* operator new(std::size_t n) {
  if (g_counting) ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// The replaced operator new above allocates with malloc, so free is the matching release; GCC 12 cannot see
// the replacement and warns at every inlined delete.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace onemodel::rt {
namespace {

using fake::Builder;
using test::attr_f;
using test::attr_i;

TEST(RuntimeAlloc, WarmSpanRunAllocatesNothing) {
  // x -> AddK (in place) -> Positives (data-dependent, arena) -> AddK: static, dynamic and arena paths.
  Builder b;
  b.input("x", DType::F32, {-1});
  b.node("AddK", {"x"}, {"a"}, {attr_f("k", 1.0f), attr_i("inplace", 1)});
  b.node("Positives", {"a"}, {"p"}).node("AddK", {"p"}, {"y"}, {attr_f("k", 0.5f)}).output("y");
  Session s = make_session(b.model(), SessionOptions{}, &fake::lookup);
  std::vector<float> x = {1, -3, 2, -5, 0}, y(5);
  std::vector<int64_t> shape = {5};
  s.run<float, float>(x, shape, y);  // makes the plan, the run state and the arena chunk
  s.run<float, float>(x, shape, y);
  g_allocations = 0;
  g_counting = true;
  // The returned shape vector is the one allocation the span form's signature requires.
  std::vector<int64_t> out = s.run<float, float>(x, shape, y);
  g_counting = false;
  EXPECT_EQ(out, (std::vector<int64_t>{3}));
  EXPECT_EQ(g_allocations, 1);
  EXPECT_EQ(y[0], 2.5f);
  EXPECT_EQ(y[1], 3.5f);
  EXPECT_EQ(y[2], 1.5f);
}

}  // namespace
}  // namespace onemodel::rt
