// Run-state buffers on transparent huge pages (graph-runtime.md section 5, "Huge pages"). A new input shape
// makes a new run state whose slab and arena are first written during its first run; on the virtual machines
// we measure on a first write to a 4 KiB page costs about 10 us, to a 2 MiB huge page about 0.2 us per 4 KiB.
#include "runtime/run_memory.h"

#include <cstdint>
#include <fstream>
#include <memory>
#include <new>
#include <string>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#define ONEMODEL_HUGE_PAGES 1
#else
#define ONEMODEL_HUGE_PAGES 0
#endif

namespace onemodel::rt {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

bool huge_pages_offered() {
#if ONEMODEL_HUGE_PAGES
  static const bool offered = [] {
    std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string line;
    std::getline(f, line);
    return line.find("[always]") != std::string::npos || line.find("[madvise]") != std::string::npos;
  }();
  return offered;
#else
  return false;
#endif
}

#if ONEMODEL_HUGE_PAGES
// `len` (a multiple of 2 MiB) bytes aligned to 2 MiB, zero-filled (fresh anonymous memory); null on failure.
std::byte* map_huge(size_t len) {
  void* m = mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<uintptr_t>(m);
  const uintptr_t start = (base + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1);
  if (start > base) munmap(m, start - base);
  const uintptr_t end = base + len + kHugePage;
  if (end > start + len) munmap(reinterpret_cast<void*>(start + len), end - (start + len));
  madvise(reinterpret_cast<void*>(start), len, MADV_HUGEPAGE);  // a hint: refused, the pages stay 4 KiB
  return reinterpret_cast<std::byte*>(start);
}
#endif

// Kept mappings above this many bytes are unmapped instead (they only come from run states that were
// dropped, so keeping them adds nothing to the peak; the bound is for pathological shape sequences).
constexpr size_t kMaxKeptBytes = size_t{1} << 30;

}  // namespace

bool run_storage_uses_huge_pages() { return huge_pages_offered(); }

RunMemory::~RunMemory() {
#if ONEMODEL_HUGE_PAGES
  for (const Mapping& m : free_) munmap(m.data, m.len);
#endif
}

Storage RunMemory::take(size_t bytes) {
#if ONEMODEL_HUGE_PAGES
  if (bytes >= kHugePage && bytes <= static_cast<size_t>(kMaxElements) && huge_pages_offered()) {
    const size_t len = (bytes + kHugePage - 1) / kHugePage * kHugePage;
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
    if (!m.data) m = Mapping{map_huge(len), len};
    if (m.data) {
      Storage s;
      std::weak_ptr<RunMemory> owner = weak_from_this();
      s.data = std::shared_ptr<std::byte>(m.data, [owner, m](std::byte*) {
        if (std::shared_ptr<RunMemory> o = owner.lock())
          o->give_back(m);
        else
          munmap(m.data, m.len);
      });
      s.bytes = bytes;
      return s;
    }
  }
#endif
  return allocate_run_storage(bytes);
}

void RunMemory::give_back(Mapping m) {
#if ONEMODEL_HUGE_PAGES
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
  munmap(m.data, m.len);
#else
  (void)m;
#endif
}

size_t RunMemory::kept() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return free_.size();
}

size_t RunMemory::reused() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reused_;
}

Storage allocate_run_storage(size_t bytes) {
#if ONEMODEL_HUGE_PAGES
  if (bytes >= kHugePage && bytes <= static_cast<size_t>(kMaxElements) && huge_pages_offered()) {
    // Whole huge pages: a tail of 4 KiB pages faults page by page again (filling a fresh 3 MiB mapping, one huge
    // page and 256 small ones, took 2.7 ms; a 4 MiB one, two huge pages, 0.25 ms).
    const size_t len = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    if (std::byte* p = map_huge(len)) {
      Storage s;
      s.data = std::shared_ptr<std::byte>(p, [len](std::byte* q) { munmap(q, len); });
      s.bytes = bytes;
      return s;
    }
  }
#endif
  return allocate_storage(bytes);
}

}  // namespace onemodel::rt
