// Highway's headers report a broken internal invariant through hwy::Abort, which lives in libhwy. We do not
// link libhwy (kernels/isa.cc says why), so this is its definition: the message goes to stderr and the process
// aborts, as Highway's own does. Weak, so a program that also links libhwy keeps Highway's.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "hwy/base.h"

namespace hwy {

__attribute__((weak)) HWY_NORETURN void HWY_FORMAT(3, 4) Abort(const char* file, int line, const char* format, ...) {
  std::fprintf(stderr, "Highway abort at %s:%d: ", file, line);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::abort();
}

}  // namespace hwy
