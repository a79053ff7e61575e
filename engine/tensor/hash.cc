// Output hash; layout documented in tensor/hash.h.
#include "tensor/hash.h"

#include <bit>

#include "base/sha256.h"

namespace onemodel {

// Tensors store their elements little-endian (tensors.md section 2) and we hash the stored bytes directly.
static_assert(std::endian::native == std::endian::little, "the output hash assumes a little-endian host");

namespace {
void put_i64(Sha256& h, int64_t v) {
  uint8_t b[8];
  auto u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(u >> (8 * i));
  h.update(b, 8);
}
}  // namespace

std::string tensor_sha256_hex(const Tensor& t) {
  if (t.empty()) throw Error(ErrorKind::InvalidArgument, "cannot hash an unset tensor");
  Sha256 h;
  put_i64(h, static_cast<int64_t>(t.dtype()));
  put_i64(h, t.rank());
  for (int64_t d : t.shape().dims()) put_i64(h, d);
  Tensor c = t.contiguous();
  if (c.nbytes()) h.update(c.raw(), c.nbytes());
  return h.hex_digest();
}

}  // namespace onemodel
