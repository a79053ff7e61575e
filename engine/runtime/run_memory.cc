// Run-state buffers on transparent huge pages (graph-runtime.md section 5, "Huge pages" and "Reuse"). A new input
// shape makes a new run state whose slab and arena are first written during its first run; on the virtual
// machines we measure on a first write to a 4 KiB page costs about 10 us, to a 2 MiB huge page far less per
// 4 KiB. The mappings themselves are base/big_buffer.h's.
#include "runtime/run_memory.h"

#include <memory>
#include <new>

#include "base/big_buffer.h"

namespace onemodel::rt {

namespace {

// A run-state request that gets whole huge pages: 2 MiB or more (below, the allocator's memory serves), where
// they are offered.
bool huge_request(size_t bytes) {
  return bytes >= kHugePageBytes && bytes <= static_cast<size_t>(kMaxElements) && huge_pages_offered();
}

size_t whole_pages(size_t bytes) { return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes; }

// Kept mappings above this many bytes are unmapped instead (they only come from run states that were
// dropped, so keeping them adds nothing to the peak; the bound is for pathological shape sequences).
constexpr size_t kMaxKeptBytes = size_t{1} << 30;

}  // namespace

bool run_storage_uses_huge_pages() { return huge_pages_offered(); }

RunMemory::~RunMemory() {
  for (const Mapping& m : free_) unmap_huge_pages(m.data, m.len);
}

Storage RunMemory::take(size_t bytes) {
  if (huge_request(bytes)) {
    const size_t len = whole_pages(bytes);
    Mapping m{nullptr, 0};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      size_t best = free_.size();
      for (size_t i = 0; i < free_.size(); ++i)
        if (free_[i].len >= len && (best == free_.size() || free_[i].len < free_[best].len)) best = i;
      if (best < free_.size()) {
        m = free_[best];
        free_[best] = free_.back();
        free_.pop_back();
        free_bytes_ -= m.len;
        ++reused_;
      }
    }
    if (!m.data) m = Mapping{map_huge_pages(len), len};
    if (m.data) {
      Storage s;
      std::weak_ptr<RunMemory> owner = weak_from_this();
      s.data = std::shared_ptr<std::byte>(m.data, [owner, m](std::byte*) {
        if (std::shared_ptr<RunMemory> o = owner.lock())
          o->give_back(m);
        else
          unmap_huge_pages(m.data, m.len);
      });
      s.bytes = bytes;
      return s;
    }
  }
  return allocate_run_storage(bytes);
}

void RunMemory::give_back(Mapping m) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_bytes_ + m.len <= kMaxKeptBytes) {
      try {
        free_.push_back(m);  // called from a deleter: a failed allocation unmaps instead of throwing
        free_bytes_ += m.len;
        return;
      } catch (...) {
      }
    }
  }
  unmap_huge_pages(m.data, m.len);
}

size_t RunMemory::kept() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return free_.size();
}

size_t RunMemory::reused() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reused_;
}

Storage map_huge_storage(size_t bytes) {
  Storage s;
  const size_t len = whole_pages(bytes);
  if (std::byte* p = map_huge_pages(len)) {
    s.data = std::shared_ptr<std::byte>(p, [len](std::byte* q) { unmap_huge_pages(q, len); });
    s.bytes = len;
  }
  return s;
}

Storage allocate_run_storage(size_t bytes) {
  if (huge_request(bytes)) {
    // Whole huge pages: a tail of 4 KiB pages faults page by page again (filling a fresh 3 MiB mapping, one huge
    // page and 256 small ones, took 2.7 ms; a 4 MiB one, two huge pages, 0.25 ms).
    if (Storage s = map_huge_storage(bytes); s.data) {
      s.bytes = bytes;
      return s;
    }
  }
  return allocate_storage(bytes);
}

}  // namespace onemodel::rt
