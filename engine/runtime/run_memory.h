// Memory of run states: the slab and the arena's chunks (graph-runtime.md section 5, "Huge pages").
#pragma once
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "onemodel/tensor.h"

namespace onemodel::rt {

// Like allocate_storage (64-byte aligned, zero-filled, bytes <= 2^31-1), for buffers a run state keeps: on
// Linux, where the kernel offers transparent huge pages, a buffer of 2 MiB or more is its own anonymous mapping
// of whole 2 MiB huge pages (its length rounded up to them); elsewhere, and below 2 MiB, allocate_storage.
Storage allocate_run_storage(size_t bytes);

// True when allocate_run_storage maps huge pages on this machine (tests).
bool run_storage_uses_huge_pages();

// `bytes` (<= 2^31-1) rounded up to whole 2 MiB huge pages in an anonymous mapping of its own, zero-filled and
// unmapped when the storage goes; Storage::bytes is the whole mapping. Empty where huge pages are not offered
// or the mapping fails. allocate_run_storage's buffers, and a run's big outputs (Session::run).
Storage map_huge_storage(size_t bytes);

// The huge-page mappings of one plan cache's run states, kept for reuse when their run state goes away
// (graph-runtime.md section 5, "Reuse"): a new input shape's run state then runs in memory that earlier run
// states wrote already instead of fresh pages, which the virtual machines we measure on fault in slowly (a
// first call of PP-OCRv4 rec at a new width spent about a fifth of its time zeroing fresh huge pages).
// Thread-safe. Held by shared_ptr: buffers it hands out return to it while it lives, else are unmapped.
class RunMemory : public std::enable_shared_from_this<RunMemory> {
 public:
  RunMemory() = default;
  ~RunMemory();
  RunMemory(const RunMemory&) = delete;
  RunMemory& operator=(const RunMemory&) = delete;

  // What allocate_run_storage gives, except that a huge-page buffer may be a kept mapping (the smallest one
  // that holds `bytes`) whose contents are whatever its last user left: callers that need zeros write them
  // (a slab's values are written before they are read, as in every warm run; BumpArena::allocate zeroes).
  Storage take(size_t bytes);

  // Mappings kept now, and how many take() calls were served by one (tests).
  size_t kept() const;
  size_t reused() const;

 private:
  struct Mapping {
    std::byte* data;
    size_t len;
  };
  void give_back(Mapping m);

  mutable std::mutex mutex_;
  std::vector<Mapping> free_;
  size_t free_bytes_ = 0;
  size_t reused_ = 0;
};

// `memory` may be null: then allocate_run_storage.
inline Storage take_run_storage(RunMemory* memory, size_t bytes) {
  return memory ? memory->take(bytes) : allocate_run_storage(bytes);
}

}  // namespace onemodel::rt
