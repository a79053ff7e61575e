// Liveness-based slab placement. Each placed value belongs to a block; a block is reference-counted by the
// values that live in it (the value itself, views of it, an in-place successor), and returns to the free
// list, coalesced with its neighbours, when its last value dies. Outputs of a step are placed before the
// step's dying inputs are released, so a kernel never writes over memory it is still reading unless the
// kernel explicitly asked for the in-place alias.
#include "runtime/memory_planner.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "onemodel/error.h"
#include "onemodel/tensor.h"

namespace onemodel::rt {

namespace {

constexpr int kForever = std::numeric_limits<int>::max();

size_t round_up(size_t n) { return (std::max<size_t>(n, 1) + kSlabAlign - 1) / kSlabAlign * kSlabAlign; }

struct Block {
  size_t offset = 0, size = 0;
  int refs = 0;
  DType dtype = DType::Undefined;
};

class FreeList {
 public:
  // Best fit: the smallest free block that can hold `size` (lowest offset among equals); otherwise the slab
  // grows, absorbing a free block that ends at the current top.
  size_t take(size_t size, size_t& top) {
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->second >= size && (best == free_.end() || it->second < best->second)) best = it;
    if (best != free_.end()) {
      size_t off = best->first, rest = best->second - size;
      free_.erase(best);
      if (rest) free_[off + size] = rest;
      return off;
    }
    if (!free_.empty()) {
      auto last = std::prev(free_.end());
      if (last->first + last->second == top) {
        size_t off = last->first;
        free_.erase(last);
        top = off + size;
        return off;
      }
    }
    size_t off = top;
    top += size;
    return off;
  }

  void give(size_t off, size_t size) {
    auto next = free_.lower_bound(off);
    if (next != free_.end() && off + size == next->first) {
      size += next->second;
      next = free_.erase(next);
    }
    if (next != free_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == off) {
        prev->second += size;
        return;
      }
    }
    free_[off] = size;
  }

 private:
  std::map<size_t, size_t> free_;  // offset -> size, never adjacent (always coalesced)
};

}  // namespace

MemoryPlan plan_memory(const std::vector<SlabValue>& values, const std::vector<SlabStep>& steps,
                       const std::vector<int>& graph_outputs) {
  const size_t nv = values.size();
  auto valid = [&](int v) { return v >= 0 && static_cast<size_t>(v) < nv; };
  MemoryPlan plan;
  plan.offsets.assign(nv, MemoryPlan::kNotInSlab);
  plan.last_use.assign(nv, -1);

  // 1. lastUse: last reader, else the producing step; graph outputs forever; views extend their source.
  for (size_t s = 0; s < steps.size(); ++s) {
    for (int v : steps[s].outputs)
      if (valid(v))
        plan.last_use[static_cast<size_t>(v)] = std::max(plan.last_use[static_cast<size_t>(v)], static_cast<int>(s));
    for (int v : steps[s].inputs)
      if (valid(v)) plan.last_use[static_cast<size_t>(v)] = static_cast<int>(s);
  }
  for (int v : graph_outputs)
    if (valid(v)) plan.last_use[static_cast<size_t>(v)] = kForever;
  for (size_t s = steps.size(); s-- > 0;) {
    const SlabStep& st = steps[s];
    if (st.view && !st.inputs.empty() && !st.outputs.empty() && valid(st.inputs[0]) && valid(st.outputs[0])) {
      int& src = plan.last_use[static_cast<size_t>(st.inputs[0])];
      src = std::max(src, plan.last_use[static_cast<size_t>(st.outputs[0])]);
    }
  }

  std::vector<std::vector<int>> dies(steps.size());
  for (size_t v = 0; v < nv; ++v) {
    int lu = plan.last_use[v];
    if (lu >= 0 && lu != kForever && static_cast<size_t>(lu) < steps.size())
      dies[static_cast<size_t>(lu)].push_back(static_cast<int>(v));
  }

  // 2. Walk the steps.
  std::vector<Block> blocks;
  std::vector<int> block_of(nv, -1);
  FreeList free_list;
  size_t top = 0;

  plan.freed_after.assign(steps.size(), {});
  size_t current_step = 0;
  auto release = [&](int v) {
    int b = block_of[static_cast<size_t>(v)];
    if (b < 0) return;
    block_of[static_cast<size_t>(v)] = -1;
    const Block& blk = blocks[static_cast<size_t>(b)];
    if (--blocks[static_cast<size_t>(b)].refs == 0) {
      free_list.give(blk.offset, blk.size);
      plan.freed_after[current_step].emplace_back(blk.offset, blk.size);
    }
  };

  for (size_t s = 0; s < steps.size(); ++s) {
    const SlabStep& st = steps[s];
    current_step = s;
    for (size_t oi = 0; oi < st.outputs.size(); ++oi) {
      int v = st.outputs[oi];
      if (!valid(v) || !values[static_cast<size_t>(v)].in_slab || block_of[static_cast<size_t>(v)] >= 0) continue;
      const SlabValue& pv = values[static_cast<size_t>(v)];
      int in = -1;
      if (oi == 0 && st.view && !st.inputs.empty()) in = st.inputs[0];
      if (in >= 0 && valid(in) && block_of[static_cast<size_t>(in)] >= 0) {
        // A view shares its source's block.
        int b = block_of[static_cast<size_t>(in)];
        blocks[static_cast<size_t>(b)].refs++;
        block_of[static_cast<size_t>(v)] = b;
        plan.offsets[static_cast<size_t>(v)] = plan.offsets[static_cast<size_t>(in)];
        continue;
      }
      if (oi == 0 && !st.view && st.in_place_input >= 0 && static_cast<size_t>(st.in_place_input) < st.inputs.size()) {
        int src = st.inputs[static_cast<size_t>(st.in_place_input)];
        bool read_once = std::count(st.inputs.begin(), st.inputs.end(), src) == 1;
        if (valid(src) && read_once && block_of[static_cast<size_t>(src)] >= 0 &&
            plan.last_use[static_cast<size_t>(src)] == static_cast<int>(s)) {
          int b = block_of[static_cast<size_t>(src)];
          Block& blk = blocks[static_cast<size_t>(b)];
          if (blk.refs == 1 && blk.size >= pv.bytes && blk.dtype == pv.dtype) {
            blk.refs++;  // the input's own reference is dropped with the other dying inputs below
            block_of[static_cast<size_t>(v)] = b;
            plan.offsets[static_cast<size_t>(v)] = static_cast<int64_t>(blk.offset);
            continue;
          }
        }
      }
      Block blk;
      blk.size = round_up(pv.bytes);
      blk.offset = free_list.take(blk.size, top);
      blk.refs = 1;
      blk.dtype = pv.dtype;
      if (top > static_cast<size_t>(kMaxElements))
        throw Error(ErrorKind::Unsupported,
                    "the plan needs a slab of more than 2^31-1 bytes (at least " + std::to_string(top) + ")");
      blocks.push_back(blk);
      block_of[static_cast<size_t>(v)] = static_cast<int>(blocks.size() - 1);
      plan.offsets[static_cast<size_t>(v)] = static_cast<int64_t>(blk.offset);
    }
    // Values whose life ends here: dying inputs, sources of views that died here, outputs nobody reads.
    for (int v : dies[s]) release(v);
  }
  plan.slab_bytes = top;
  return plan;
}

}  // namespace onemodel::rt
