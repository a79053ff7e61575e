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

}  // namespace

bool run_storage_uses_huge_pages() { return huge_pages_offered(); }

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
