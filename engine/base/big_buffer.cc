// base/big_buffer.h: huge pages for large kept buffers.
#include "base/big_buffer.h"

#include <cstdlib>
#include <new>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#define ONEMODEL_BIG_HUGE_PAGES 1
#else
#define ONEMODEL_BIG_HUGE_PAGES 0
#endif

namespace onemodel {

namespace {
constexpr size_t kHugePage = size_t{2} << 20;
// From 1 MiB a buffer is rounded up to whole huge pages: one fault of ~60 us instead of 256 or more of ~11 us.
constexpr size_t kHugeFrom = size_t{1} << 20;
// A growing buffer that reaches 256 KiB takes a whole huge page at once (it is kept, and grows again).
constexpr size_t kGrowHugeFrom = size_t{256} << 10;
}  // namespace

void BigBufferFree::operator()(void* p) const { std::free(p); }

BigBuffer allocate_big_buffer(size_t bytes, bool whole_pages) {
  const bool huge = ONEMODEL_BIG_HUGE_PAGES && bytes >= kHugeFrom;
  // 2 MiB aligned; rounded up to whole huge pages only when asked: otherwise a partial last one stays 4 KiB
  // pages (rounding packed weights of 2.4 MB up to 4 MiB added 22 MB to MiniLM's peak RSS).
  const size_t align = huge ? kHugePage : 64;
  const size_t unit = huge && whole_pages ? kHugePage : 64;
  const size_t len = (bytes + unit - 1) / unit * unit;
  void* p = nullptr;
  if (posix_memalign(&p, align, len == 0 ? 64 : len) != 0 || !p) throw std::bad_alloc();
#if ONEMODEL_BIG_HUGE_PAGES
  // A hint (THP "madvise" mode, the default on the machines we measure); refused, the pages stay 4 KiB.
  if (huge) madvise(p, (len + 4095) / 4096 * 4096, MADV_HUGEPAGE);
#endif
  return BigBuffer(static_cast<std::byte*>(p));
}

float* GrowingFloats::get(size_t floats) {
  if (floats > capacity_) {
    const size_t grown = capacity_ + capacity_ / 2;
    size_t want = floats > grown ? floats : grown;
    if (ONEMODEL_BIG_HUGE_PAGES && want * sizeof(float) >= kGrowHugeFrom)
      want = (want * sizeof(float) + kHugePage - 1) / kHugePage * kHugePage / sizeof(float);
    mem_.reset();  // the old contents are not kept: free first, so the peak is one buffer
    mem_ = allocate_big_buffer(want * sizeof(float), true);
    capacity_ = want;
  }
  return reinterpret_cast<float*>(mem_.get());
}

}  // namespace onemodel
