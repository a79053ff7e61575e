// BumpArena and NodeInfo: alignment, chunk reuse across resets, attribute type checks and error text.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "base/big_buffer.h"
#include "runtime/arena.h"
#include "runtime/kernel.h"
#include "runtime/run_memory.h"

namespace onemodel::rt {
namespace {

TEST(RuntimeArena, AlignedAndDisjoint) {
  BumpArena a;
  Tensor x = a.allocate(DType::F32, Shape{3});
  Tensor y = a.allocate(DType::U8, Shape{1});
  Tensor z = a.allocate(DType::F64, Shape{2, 2});
  for (const Tensor* t : {&x, &y, &z}) EXPECT_EQ(reinterpret_cast<uintptr_t>(t->raw()) % 64, 0u);
  auto bx = static_cast<const std::byte*>(x.raw()), by = static_cast<const std::byte*>(y.raw());
  auto bz = static_cast<const std::byte*>(z.raw());
  EXPECT_GE(by - bx, 12);
  EXPECT_GE(bz - by, 1);
  EXPECT_EQ(a.chunk_count(), 1u);
  EXPECT_EQ(x.shape(), Shape({3}));
  EXPECT_TRUE(x.is_contiguous());
}

TEST(RuntimeArena, LargeRequestGetsOwnChunkAndWarmRunAllocatesNothing) {
  BumpArena a;
  auto run = [&] {
    a.reset();
    Tensor s = a.allocate(DType::F32, Shape{100});
    constexpr int64_t kBig = static_cast<int64_t>(BumpArena::kChunkBytes / 4) + 1024;  // larger than a chunk
    Tensor big = a.allocate(DType::F32, Shape{kBig});
    Tensor s2 = a.allocate(DType::F32, Shape{1000});
    big.mutable_data<float>()[kBig - 1] = 1.0f;
    return std::make_tuple(s.raw(), big.raw(), s2.raw());
  };
  auto first = run();
  size_t after_first = a.system_allocations();
  EXPECT_GE(after_first, 2u);
  auto second = run();
  EXPECT_EQ(a.system_allocations(), after_first);
  EXPECT_EQ(first, second);  // same requests land on the same addresses
}

// graph-runtime.md section 5, "Huge pages": on huge pages or not, run storage is 64-byte aligned, zero-filled,
// writable over its whole length and independent of other buffers; at 2 MiB and more, where the machine offers
// huge pages, it starts on a 2 MiB boundary.
TEST(RuntimeArena, RunStorageZeroAlignedAndWritable) {
  const size_t mib = size_t{1} << 20;
  for (size_t bytes : {size_t{100}, 2 * mib - 64, 2 * mib, 2 * mib + 1, 5 * mib + 3}) {
    Storage a = allocate_run_storage(bytes);
    Storage b = allocate_run_storage(bytes);
    ASSERT_EQ(a.bytes, bytes);
    const auto at = reinterpret_cast<uintptr_t>(a.data.get());
    ASSERT_EQ(at % 64, 0u) << bytes;
    if (bytes >= 2 * mib && run_storage_uses_huge_pages()) EXPECT_EQ(at % (2 * mib), 0u) << bytes;
    const std::byte* pa = a.data.get();
    for (size_t i = 0; i < bytes; i += 4093) ASSERT_EQ(pa[i], std::byte{0}) << bytes << " at " << i;
    ASSERT_EQ(pa[bytes - 1], std::byte{0});
    std::fill(a.data.get(), a.data.get() + bytes, std::byte{0x5A});
    ASSERT_EQ(b.data.get()[0], std::byte{0});
    ASSERT_EQ(b.data.get()[bytes - 1], std::byte{0});
    ASSERT_EQ(pa[bytes / 2], std::byte{0x5A});
    ASSERT_EQ(pa[bytes - 1], std::byte{0x5A});
  }
}

// graph-runtime.md section 5, "Reuse": a mapping given back is handed out again for a request it holds (the
// smallest such), and a buffer still out when its RunMemory goes away is unmapped on its own.
TEST(RuntimeArena, RunMemoryReusesKeptMappings) {
  if (!run_storage_uses_huge_pages()) GTEST_SKIP() << "no transparent huge pages offered here";
  const size_t mib = size_t{1} << 20;
  auto memory = std::make_shared<RunMemory>();
  Storage a = memory->take(3 * mib);  // a 4 MiB mapping
  Storage b = memory->take(7 * mib);  // 8 MiB
  std::byte* pa = a.data.get();
  std::byte* pb = b.data.get();
  ASSERT_EQ(reinterpret_cast<uintptr_t>(pa) % (2 * mib), 0u);
  std::fill(pa, pa + a.bytes, std::byte{0x11});
  std::fill(pb, pb + b.bytes, std::byte{0x22});
  EXPECT_EQ(memory->kept(), 0u);
  a = Storage{};
  b = Storage{};
  EXPECT_EQ(memory->kept(), 2u);
  Storage c = memory->take(4 * mib);  // fits both: the smaller one
  EXPECT_EQ(c.data.get(), pa);
  EXPECT_EQ(c.bytes, 4 * mib);
  EXPECT_EQ(c.data.get()[3 * mib - 1], std::byte{0x11});  // kept contents: callers write what they need
  Storage d = memory->take(9 * mib);                      // fits neither: a new mapping
  EXPECT_NE(d.data.get(), pb);
  EXPECT_EQ(d.data.get()[9 * mib - 1], std::byte{0});
  Storage e = memory->take(100);  // below 2 MiB: not from the mappings
  EXPECT_EQ(memory->reused(), 1u);
  EXPECT_EQ(memory->kept(), 1u);
  memory.reset();  // c, d and e outlive it
  std::fill(c.data.get(), c.data.get() + c.bytes, std::byte{0x33});
  c = Storage{};
  d = Storage{};
}

// base/big_buffer.h: aligned, writable, on 2 MiB boundaries from 1 MiB where huge pages are offered; a growing
// buffer keeps its capacity and grows by at least half.
TEST(RuntimeArena, BigBuffersAndGrowingFloats) {
  const size_t mib = size_t{1} << 20;
  for (size_t bytes : {size_t{64}, size_t{1000}, mib - 4, mib, 3 * mib + 5}) {
    BigBuffer b = allocate_big_buffer(bytes);
    const auto at = reinterpret_cast<uintptr_t>(b.get());
    EXPECT_EQ(at % 64, 0u) << bytes;
    if (bytes >= mib && run_storage_uses_huge_pages()) {
      EXPECT_EQ(at % (2 * mib), 0u) << bytes;
    }
    std::fill(b.get(), b.get() + bytes, std::byte{0x7F});
    EXPECT_EQ(b.get()[bytes - 1], std::byte{0x7F});
  }
  GrowingFloats g;
  float* p = g.get(1000);
  ASSERT_GE(g.capacity(), 1000u);
  p[999] = 1.0f;
  EXPECT_EQ(g.get(10), p);  // smaller: the same buffer
  const size_t cap = g.capacity();
  g.get(cap + 1);
  EXPECT_GE(g.capacity(), cap + cap / 2);
  g.get(300000);  // 1.2 MB: whole huge pages where offered
  EXPECT_GE(g.capacity(), 300000u);
  if (run_storage_uses_huge_pages()) {
    EXPECT_EQ(g.capacity() * sizeof(float) % (2 * mib), 0u);
  }
  float* q = g.get(300000);
  q[299999] = 2.0f;
  EXPECT_EQ(q[299999], 2.0f);
}

TEST(RuntimeArena, AllocationIsZeroFilledAfterReset) {
  BumpArena a;
  Tensor t = a.allocate(DType::I32, Shape{4});
  t.mutable_data<int32_t>()[2] = 7;
  a.reset();
  Tensor u = a.allocate(DType::I32, Shape{4});
  EXPECT_EQ(u.raw(), t.raw());
  EXPECT_EQ(u.data<int32_t>()[2], 0);
}

TEST(RuntimeArena, EmptyTensorsAndOversize) {
  BumpArena a;
  Tensor e = a.allocate(DType::F32, Shape{0, 5});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_FALSE(e.empty());
  try {
    a.allocate(DType::F64, Shape{1 << 28});  // 2 GiB
    FAIL();
  } catch (const Error& err) {
    EXPECT_EQ(err.kind(), ErrorKind::Unsupported);
  }
}

ir::Node make_node() {
  ir::Node n;
  n.name = "n1";
  n.op_type = "Conv";
  n.opset = 17;
  ir::Attribute a;
  a.name = "group";
  a.type = ir::AttrType::Int;
  a.i = 2;
  n.attributes.push_back(a);
  ir::Attribute b;
  b.name = "pads";
  b.type = ir::AttrType::Ints;
  b.ints = {1, 1, 1, 1};
  n.attributes.push_back(b);
  ir::Attribute c;
  c.name = "alpha";
  c.type = ir::AttrType::Float;
  c.f = 0.5f;
  n.attributes.push_back(c);
  ir::Attribute d;
  d.name = "auto_pad";
  d.type = ir::AttrType::String;
  d.s = "SAME_UPPER";
  n.attributes.push_back(d);
  return n;
}

TEST(RuntimeNodeInfo, ReadersAndDefaults) {
  ir::Node n = make_node();
  NodeInfo info(n, false);
  EXPECT_EQ(info.get_int("group", 1), 2);
  EXPECT_EQ(info.get_int("missing", 9), 9);
  EXPECT_EQ(info.get_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_TRUE(info.get_ints("strides").empty());
  EXPECT_FLOAT_EQ(info.get_float("alpha", 1.0f), 0.5f);
  EXPECT_EQ(info.get_string("auto_pad", "NOTSET"), "SAME_UPPER");
  EXPECT_EQ(info.get_string("mode", "x"), "x");
  EXPECT_EQ(info.get_tensor("value"), nullptr);
  EXPECT_TRUE(info.get_floats("scales").empty());
}

TEST(RuntimeNodeInfo, WrongTypeIsInvalidModelNamingNode) {
  ir::Node n = make_node();
  NodeInfo info(n, false);
  try {
    info.get_int("pads", 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidModel);
    EXPECT_EQ(e.node(), "n1");
    EXPECT_EQ(e.message(), "Conv node 'n1': attribute 'pads' must be INT, not INTS");
  }
  EXPECT_THROW(info.get_float("group", 0), Error);
  EXPECT_THROW(info.get_string("alpha", ""), Error);
  EXPECT_THROW(info.get_tensor("group"), Error);
}

TEST(RuntimeNodeInfo, FailFormatsMessage) {
  ir::Node n = make_node();
  NodeInfo info(n, true);
  EXPECT_TRUE(info.exact());
  try {
    info.fail(ErrorKind::InvalidInput, "bad shape");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_EQ(e.message(), "Conv node 'n1': bad shape");
    EXPECT_EQ(e.node(), "n1");
  }
}

}  // namespace
}  // namespace onemodel::rt
