// base/big_buffer.h: huge pages for large kept buffers and run-state mappings.
#include "base/big_buffer.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <new>
#include <string>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#define ONEMODEL_HUGE_PAGES 1
#else
#define ONEMODEL_HUGE_PAGES 0
#endif

namespace onemodel {

namespace {
// From 1 MiB a buffer is 2 MiB aligned and marked for huge pages: one fault of ~60 us per whole huge page
// instead of 512 of ~11 us.
constexpr size_t kHugeFrom = size_t{1} << 20;
// A growing buffer that reaches 256 KiB takes whole huge pages at once (it is kept, and grows again).
constexpr size_t kGrowHugeFrom = size_t{256} << 10;
}  // namespace

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

std::byte* map_huge_pages(size_t len) {
#if ONEMODEL_HUGE_PAGES
  if (!huge_pages_offered()) return nullptr;
  void* m = mmap(nullptr, len + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<uintptr_t>(m);
  const uintptr_t start = (base + kHugePageBytes - 1) & ~(uintptr_t{kHugePageBytes} - 1);
  if (start > base) munmap(m, start - base);
  const uintptr_t end = base + len + kHugePageBytes;
  if (end > start + len) munmap(reinterpret_cast<void*>(start + len), end - (start + len));
  madvise(reinterpret_cast<void*>(start), len, MADV_HUGEPAGE);  // a hint: refused, the pages stay 4 KiB
  return reinterpret_cast<std::byte*>(start);
#else
  (void)len;
  return nullptr;
#endif
}

void unmap_huge_pages(std::byte* p, size_t len) {
#if ONEMODEL_HUGE_PAGES
  munmap(p, len);
#else
  (void)p;
  (void)len;
#endif
}

void release_clean_pages(const void* p, size_t bytes) {
#if ONEMODEL_HUGE_PAGES && defined(MADV_PAGEOUT)
  constexpr uintptr_t kPage = 4096;
  const auto begin = (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
  const auto end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kPage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_PAGEOUT);  // a hint: errors ignored
#else
  (void)p;
  (void)bytes;
#endif
}

void BigBufferFree::operator()(void* p) const { std::free(p); }

BigBuffer allocate_big_buffer(size_t bytes, bool whole_pages) {
  const bool huge = bytes >= kHugeFrom && huge_pages_offered();
  // 2 MiB aligned; rounded up to whole huge pages only when asked: otherwise a partial last one stays 4 KiB
  // pages (rounding packed weights of 2.4 MB up to 4 MiB added 22 MB to MiniLM's peak RSS).
  const size_t align = huge ? kHugePageBytes : 64;
  const size_t unit = huge && whole_pages ? kHugePageBytes : 64;
  const size_t len = (bytes + unit - 1) / unit * unit;
  void* p = nullptr;
  if (posix_memalign(&p, align, len == 0 ? 64 : len) != 0 || !p) throw std::bad_alloc();
#if ONEMODEL_HUGE_PAGES
  // A hint (THP "madvise" mode, the default on the machines we measure); refused, the pages stay 4 KiB.
  if (huge) madvise(p, (len + 4095) / 4096 * 4096, MADV_HUGEPAGE);
#endif
  return BigBuffer(static_cast<std::byte*>(p));
}

float* GrowingFloats::get(size_t floats) {
  if (floats > capacity_) {
    const size_t grown = capacity_ + capacity_ / 2;
    size_t want = floats > grown ? floats : grown;
    if (want * sizeof(float) >= kGrowHugeFrom && huge_pages_offered())
      want = (want * sizeof(float) + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes / sizeof(float);
    mem_.reset();  // the old contents are not kept: free first, so the peak is one buffer
    mem_ = allocate_big_buffer(want * sizeof(float), true);
    capacity_ = want;
  }
  return reinterpret_cast<float*>(mem_.get());
}

}  // namespace onemodel
