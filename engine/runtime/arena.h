// The run's scratch arena (graph-runtime.md section 5): dynamic values and kernel temporaries of one run.
// Bump allocation keeps allocation cheap and ordered; chunks are kept across runs and reused in the same
// order, so a warm run with the same request sequence allocates nothing from the system.
#pragma once
#include <cstddef>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/run_memory.h"

namespace onemodel::rt {

class BumpArena final : public Arena {
 public:
  static constexpr size_t kAlign = 64;
  // 2 MiB (one huge page, graph-runtime.md section 5), or the request when larger.
  static constexpr size_t kChunkBytes = size_t{2} << 20;

  BumpArena() = default;
  BumpArena(const BumpArena&) = delete;
  BumpArena& operator=(const BumpArena&) = delete;

  // A contiguous tensor of `shape`, 64-byte aligned, zero-filled. The tensor shares ownership of its chunk,
  // so it stays valid memory even after reset(); its contents are only meaningful until the next reset().
  Tensor allocate(DType dtype, const Shape& shape) override;
  // The same without the zero fill (kernel workspaces written before they are read).
  Tensor allocate_workspace(DType dtype, const Shape& shape) override;
  // Starts a new run: every chunk becomes free again (nothing is returned to the system).
  void reset();
  // Where new chunks come from (null: allocate_run_storage). Set before the first allocation.
  void set_memory(RunMemory* memory) { memory_ = memory; }

  size_t chunk_count() const { return chunks_.size(); }
  // Number of chunks obtained from the system since construction (tests check warm runs add none).
  size_t system_allocations() const { return system_allocations_; }

 private:
  struct Chunk {
    Storage storage;
    size_t used = 0;
  };
  std::vector<Chunk> chunks_;
  size_t current_ = 0;  // index of the chunk being filled
  RunMemory* memory_ = nullptr;
  size_t system_allocations_ = 0;
};

}  // namespace onemodel::rt
