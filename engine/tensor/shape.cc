#include <algorithm>
#include <string>

#include "onemodel/tensor.h"

namespace onemodel {

bool Shape::valid(std::span<const int64_t> dims) noexcept {
  if (dims.size() > static_cast<size_t>(kMaxRank)) return false;
  int64_t prefix = 1;
  for (int64_t d : dims) {
    if (d < 0 || d > kMaxElements) return false;
    // Every prefix product must fit, so [100000, 100000, 0] is refused even though its count is 0.
    if (d != 0 && prefix > kMaxElements / d) return false;
    prefix *= d;
    if (prefix > kMaxElements) return false;
  }
  return true;
}

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(std::span<const int64_t>(dims.begin(), dims.size())) {}

Shape::Shape(std::span<const int64_t> dims) {
  if (dims.size() > static_cast<size_t>(kMaxRank))
    throw Error(ErrorKind::Unsupported, "rank " + std::to_string(dims.size()) + " exceeds the limit of 8");
  if (!valid(dims)) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
    s += "]";
    for (int64_t d : dims)
      if (d < 0) throw Error(ErrorKind::InvalidArgument, "negative extent in shape " + s);
    throw Error(ErrorKind::Unsupported,
                "shape " + s + " has more than 2^31-1 elements (or a prefix product that large)");
  }
  rank_ = static_cast<int>(dims.size());
  std::copy(dims.begin(), dims.end(), dims_.begin());
}

int64_t Shape::numel() const noexcept {
  int64_t n = 1;
  for (int i = 0; i < rank_; ++i) n *= dims_[static_cast<size_t>(i)];
  return n;
}

std::string Shape::to_string() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) s += (i ? "," : "") + std::to_string(dims_[static_cast<size_t>(i)]);
  return s + "]";
}

bool Shape::operator==(const Shape& o) const noexcept {
  if (rank_ != o.rank_) return false;
  for (int i = 0; i < rank_; ++i)
    if (dims_[static_cast<size_t>(i)] != o.dims_[static_cast<size_t>(i)]) return false;
  return true;
}

Shape Shape::broadcast(const Shape& a, const Shape& b) {
  int r = std::max(a.rank(), b.rank());
  std::array<int64_t, kMaxRank> out{};
  for (int i = 0; i < r; ++i) {
    int ia = a.rank() - r + i, ib = b.rank() - r + i;
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1)
      throw Error(ErrorKind::InvalidInput,
                  "shapes " + a.to_string() + " and " + b.to_string() + " cannot be broadcast together");
    out[static_cast<size_t>(i)] = da == 1 ? db : da;
  }
  return Shape(std::span<const int64_t>(out.data(), static_cast<size_t>(r)));
}

}  // namespace onemodel
