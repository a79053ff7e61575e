// Huge pages, in one place: buffers that kernels keep across calls (packing scratch, packed weights) and run
// outputs (allocate_big_buffer, GrowingFloats), and whole mappings for run states (runtime/run_memory.h).
// 64-byte aligned, and from 1 MiB up 2 MiB aligned and marked for transparent huge pages where the kernel
// offers them, so the whole 2 MiB pages inside are huge (graph-runtime.md section 5, "Reuse"). On the virtual
// machines we measure on, the first write to a 4 KiB page costs about 11 us and to a 2 MiB huge page about
// 60 us: a 4 MiB packing buffer grown at a new input shape took 11 ms in small pages.
#pragma once
#include <cstddef>
#include <memory>

namespace onemodel {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// True on Linux when the kernel offers transparent huge pages (`always` or `madvise` in
// /sys/kernel/mm/transparent_hugepage/enabled); false elsewhere and in wasm.
bool huge_pages_offered();

// `len` (a multiple of kHugePageBytes) bytes of fresh, zero-filled anonymous memory on a 2 MiB boundary,
// marked for huge pages; null when huge pages are not offered or the mapping fails. Freed with
// unmap_huge_pages(p, len).
std::byte* map_huge_pages(size_t len);
void unmap_huge_pages(std::byte* p, size_t len);

// A hint that the whole 4 KiB pages inside [p, p + bytes) are not needed again soon: clean file-backed pages (a
// mapped model file's) leave the process's resident memory and are read from the file again if touched; other
// memory is left as it is (anonymous pages without swap cannot be paged out). Linux MADV_PAGEOUT; nothing
// elsewhere and in wasm. Used for the float32 bytes of weights kept compact (docs/fp16.md section 6).
void release_clean_pages(const void* p, size_t bytes);

struct BigBufferFree {
  void operator()(void* p) const;
};
using BigBuffer = std::unique_ptr<std::byte[], BigBufferFree>;

// `bytes` (> 0) bytes, 64-byte aligned, contents unspecified; `whole_pages`: from 1 MiB, rounded up to whole
// 2 MiB pages (a buffer written whole and soon, such as a run's output). Throws std::bad_alloc.
BigBuffer allocate_big_buffer(size_t bytes, bool whole_pages = false);

// A buffer one thread keeps and grows: get(n) returns at least n floats, reallocating (contents lost) only
// when n exceeds the capacity, then by at least half again (from 256 KiB, to whole huge pages), so a shape that
// grows a little at a time (OCR's recogniser at a new width per text line) does not reallocate at every step.
class GrowingFloats {
 public:
  float* get(size_t floats);
  size_t capacity() const { return capacity_; }

 private:
  BigBuffer mem_;
  size_t capacity_ = 0;
};

}  // namespace onemodel
