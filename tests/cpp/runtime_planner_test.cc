// The slab planner on synthetic step lists. Expected offsets are worked out by hand from the rules of
// graph-runtime.md section 5 (64-byte blocks, best fit, outputs placed before dying inputs are freed); the
// randomized test checks the safety property against an independent liveness computation.
#include <gtest/gtest.h>

#include <random>

#include "runtime/memory_planner.h"
#include "onemodel/error.h"

namespace onemodel::rt {
namespace {

SlabValue f32(size_t bytes) { return {true, bytes, DType::F32}; }

SlabStep step(std::vector<int> in, std::vector<int> out, int in_place = -1, bool view = false) {
  SlabStep s;
  s.inputs = std::move(in);
  s.outputs = std::move(out);
  s.in_place_input = in_place;
  s.view = view;
  return s;
}

TEST(RuntimePlanner, ChainReusesFreedBlocks) {
  // a -> b -> c -> d, 1024 bytes each: b cannot take a's block (a is read while b is written), c can.
  std::vector<SlabValue> v = {f32(1024), f32(1024), f32(1024), f32(1024)};
  std::vector<SlabStep> s = {step({}, {0}), step({0}, {1}), step({1}, {2}), step({2}, {3})};
  MemoryPlan p = plan_memory(v, s, {3});
  EXPECT_EQ(p.offsets, (std::vector<int64_t>{0, 1024, 0, 1024}));
  EXPECT_EQ(p.slab_bytes, 2048u);
  using Ranges = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(p.freed_after[0], Ranges{});
  EXPECT_EQ(p.freed_after[1], (Ranges{{0, 1024}}));
  EXPECT_EQ(p.freed_after[2], (Ranges{{1024, 1024}}));
  EXPECT_EQ(p.freed_after[3], (Ranges{{0, 1024}}));
}

TEST(RuntimePlanner, BestFitPicksSmallestFreeBlock) {
  // 0:a(512) 1:x(64) 2:b(128) 3:y(64) 4:z(64) 5:c(100)
  std::vector<SlabValue> v = {f32(512), f32(64), f32(128), f32(64), f32(64), f32(100)};
  std::vector<SlabStep> s = {
      step({}, {0}),       step({}, {1}),     step({}, {2}),
      step({}, {3}),       step({0, 2}, {4}),  // z at 768, then a [0,512) and b [576,704) are freed
      step({1, 3, 4}, {5})};
  MemoryPlan p = plan_memory(v, s, {5});
  EXPECT_EQ(p.offsets[0], 0);
  EXPECT_EQ(p.offsets[1], 512);
  EXPECT_EQ(p.offsets[2], 576);
  EXPECT_EQ(p.offsets[3], 704);
  EXPECT_EQ(p.offsets[4], 768);
  EXPECT_EQ(p.offsets[5], 576);  // the 128-byte hole, not the 512-byte one
  EXPECT_EQ(p.slab_bytes, 832u);
}

TEST(RuntimePlanner, FreeBlocksCoalesce) {
  // a, b, c of 128 bytes; a and b die together; a 256-byte value fits only in the merged hole.
  std::vector<SlabValue> v = {f32(128), f32(128), f32(128), f32(64), f32(256)};
  std::vector<SlabStep> s = {step({}, {0}), step({}, {1}), step({}, {2}), step({0, 1}, {3}), step({2, 3}, {4})};
  MemoryPlan p = plan_memory(v, s, {4});
  EXPECT_EQ(p.offsets[3], 384);
  EXPECT_EQ(p.offsets[4], 0);
  EXPECT_EQ(p.slab_bytes, 448u);
}

TEST(RuntimePlanner, InPlaceTakesDyingInputBlock) {
  std::vector<SlabValue> v = {f32(400), f32(400)};
  std::vector<SlabStep> s = {step({}, {0}), step({0}, {1}, 0)};
  MemoryPlan p = plan_memory(v, s, {1});
  EXPECT_EQ(p.offsets[1], p.offsets[0]);
  EXPECT_EQ(p.slab_bytes, 448u);
}

TEST(RuntimePlanner, InPlaceRefusedWhenConditionsFail) {
  // Input still read later.
  {
    std::vector<SlabValue> v = {f32(400), f32(400), f32(64)};
    std::vector<SlabStep> s = {step({}, {0}), step({0}, {1}, 0), step({0, 1}, {2})};
    MemoryPlan p = plan_memory(v, s, {2});
    EXPECT_NE(p.offsets[1], p.offsets[0]);
  }
  // Different element type.
  {
    std::vector<SlabValue> v = {f32(400), {true, 400, DType::I32}};
    std::vector<SlabStep> s = {step({}, {0}), step({0}, {1}, 0)};
    MemoryPlan p = plan_memory(v, s, {1});
    EXPECT_NE(p.offsets[1], p.offsets[0]);
  }
  // Output larger than the block.
  {
    std::vector<SlabValue> v = {f32(400), f32(1000)};
    std::vector<SlabStep> s = {step({}, {0}), step({0}, {1}, 0)};
    MemoryPlan p = plan_memory(v, s, {1});
    EXPECT_NE(p.offsets[1], p.offsets[0]);
  }
  // The block is shared with a live view.
  {
    std::vector<SlabValue> v = {f32(400), f32(400), f32(400), f32(64)};
    std::vector<SlabStep> s = {step({}, {0}), step({0}, {1}, -1, true), step({0}, {2}, 0), step({1, 2}, {3})};
    MemoryPlan p = plan_memory(v, s, {3});
    EXPECT_EQ(p.offsets[1], p.offsets[0]);
    EXPECT_NE(p.offsets[2], p.offsets[0]);
  }
  // The input is not in the slab (a caller's input).
  {
    std::vector<SlabValue> v = {{false, 400, DType::F32}, f32(400)};
    std::vector<SlabStep> s = {step({0}, {1}, 0)};
    MemoryPlan p = plan_memory(v, s, {1});
    EXPECT_EQ(p.offsets[0], MemoryPlan::kNotInSlab);
    EXPECT_EQ(p.offsets[1], 0);
  }
}

TEST(RuntimePlanner, ViewSharesBlockAndExtendsSourceLife) {
  // a; v = view(a); x written while v is live must not overlap a; a is freed only after v's last use.
  std::vector<SlabValue> v = {f32(256), f32(256), f32(256), f32(256), f32(256)};
  std::vector<SlabStep> s = {step({}, {0}), step({0}, {1}, -1, true), step({}, {2}), step({1, 2}, {3}), step({3}, {4})};
  MemoryPlan p = plan_memory(v, s, {4});
  EXPECT_EQ(p.offsets[1], p.offsets[0]);
  EXPECT_EQ(p.last_use[0], 3);
  EXPECT_NE(p.offsets[2], p.offsets[0]);
  EXPECT_NE(p.offsets[3], p.offsets[0]);
  EXPECT_EQ(p.offsets[4], 0);  // a's block is free again at step 4
}

TEST(RuntimePlanner, NonSlabValuesAreNotPlaced) {
  std::vector<SlabValue> v = {{false, 100, DType::F32}, f32(100)};
  std::vector<SlabStep> s = {step({0}, {1})};
  MemoryPlan p = plan_memory(v, s, {1});
  EXPECT_EQ(p.offsets[0], MemoryPlan::kNotInSlab);
  EXPECT_EQ(p.offsets[1], 0);
  EXPECT_EQ(p.slab_bytes, 64u * 2);
}

TEST(RuntimePlanner, SlabOver2GiBRefused) {
  std::vector<SlabValue> v = {f32(size_t{1} << 30), f32(size_t{1} << 30), f32(64)};
  std::vector<SlabStep> s = {step({}, {0}), step({}, {1}), step({0, 1}, {2})};
  try {
    plan_memory(v, s, {2});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
  }
}

// Independent check: a value is live from its producing step to its last reader (graph outputs to the
// end); two values live at the same step must not overlap, except an in-place output with its input at
// the input's last step. No views here, so no other sharing is legal.
TEST(RuntimePlanner, RandomGraphsNeverOverlapLiveValues) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<SlabValue> values;
    std::vector<SlabStep> steps;
    std::vector<int> def;
    int nsteps = 5 + static_cast<int>(rng() % 30);
    for (int s = 0; s < nsteps; ++s) {
      SlabStep st;
      if (!values.empty()) {
        int nin = 1 + static_cast<int>(rng() % 3);
        for (int k = 0; k < nin; ++k) st.inputs.push_back(static_cast<int>(rng() % values.size()));
      }
      int nout = 1 + static_cast<int>(rng() % 2);
      for (int k = 0; k < nout; ++k) {
        st.outputs.push_back(static_cast<int>(values.size()));
        values.push_back({rng() % 5 != 0, 1 + rng() % 3000, rng() % 2 ? DType::F32 : DType::I32});
        def.push_back(s);
      }
      if (!st.inputs.empty() && rng() % 2) st.in_place_input = 0;
      steps.push_back(st);
    }
    std::vector<int> outs = {static_cast<int>(values.size() - 1)};
    MemoryPlan p = plan_memory(values, steps, outs);

    std::vector<int> last(values.size());
    for (size_t v = 0; v < values.size(); ++v) last[v] = def[v];
    for (int s = 0; s < nsteps; ++s)
      for (int v : steps[static_cast<size_t>(s)].inputs)
        last[static_cast<size_t>(v)] = std::max(last[static_cast<size_t>(v)], s);
    for (int v : outs) last[static_cast<size_t>(v)] = nsteps;
    auto in_place_pair = [&](size_t a, size_t b) {  // b is output 0 of an in-place step reading a first
      const SlabStep& st = steps[static_cast<size_t>(def[b])];
      return st.in_place_input == 0 && st.outputs[0] == static_cast<int>(b) && st.inputs[0] == static_cast<int>(a) &&
             last[a] == def[b];
    };
    for (size_t a = 0; a < values.size(); ++a) {
      if (!values[a].in_slab) {
        EXPECT_EQ(p.offsets[a], MemoryPlan::kNotInSlab);
        continue;
      }
      EXPECT_EQ(p.offsets[a] % 64, 0);
      EXPECT_LE(static_cast<size_t>(p.offsets[a]) + values[a].bytes, p.slab_bytes);
      for (size_t b = a + 1; b < values.size(); ++b) {
        if (!values[b].in_slab) continue;
        bool live_together = def[a] <= last[b] && def[b] <= last[a];
        if (!live_together || in_place_pair(a, b)) continue;
        auto a0 = static_cast<size_t>(p.offsets[a]), b0 = static_cast<size_t>(p.offsets[b]);
        bool disjoint = a0 + values[a].bytes <= b0 || b0 + values[b].bytes <= a0;
        EXPECT_TRUE(disjoint) << "trial " << trial << " values " << a << " and " << b;
      }
    }
  }
}

}  // namespace
}  // namespace onemodel::rt
