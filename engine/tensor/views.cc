// Views (tensors.md sections 3-4): every operation here returns a new Tensor value over the same buffer,
// except contiguous() (and reshape() when the strides do not allow a view), which copy.
//
// Axes may be given from the end (-1 = last), like numpy; anything outside [-rank, rank) is
// Error(InvalidArgument). Each view is checked when it is made: for a non-empty tensor the lowest and the
// highest reachable element offsets must lie inside the buffer. A view of a valid tensor is valid by
// construction, so the check only fires on a tensor built wrongly with the raw constructor - it is there so
// such a mistake surfaces as an error at the view instead of as an out-of-bounds read in a kernel later.
#include <array>
#include <cstring>
#include <string>

#include "onemodel/tensor.h"

namespace onemodel {

namespace {

using Dims = std::array<int64_t, kMaxRank>;

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::InvalidArgument, what); }

int norm_axis(int axis, int rank, const char* op) {
  int a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    bad(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return a;
}

Shape make_shape(const Dims& d, int rank) {
  return Shape(std::span<const int64_t>(d.data(), static_cast<size_t>(rank)));
}

}  // namespace

// Builds a view and runs the reachable-range check of tensors.md section 3.
static Tensor checked_view(const Storage& st, DType dt, const Shape& shape, const Dims& strides, int64_t offset) {
  std::span<const int64_t> sv(strides.data(), static_cast<size_t>(shape.rank()));
  if (shape.numel() > 0) {
    size_t es = dtype_size(dt);
    int64_t capacity = es ? static_cast<int64_t>(st.bytes / es) : 0;
    int64_t lo = offset, hi = offset;
    for (int i = 0; i < shape.rank(); ++i) {
      int64_t span = (shape[i] - 1) * sv[static_cast<size_t>(i)];
      if (span < 0)
        lo += span;
      else
        hi += span;
    }
    if (lo < 0 || hi >= capacity)
      throw Error(ErrorKind::InvalidArgument, "view " + shape.to_string() + " at offset " + std::to_string(offset) +
                                                  " reaches elements [" + std::to_string(lo) + ", " +
                                                  std::to_string(hi) + "] outside its buffer of " +
                                                  std::to_string(capacity) + " elements");
  }
  return Tensor(st, dt, shape, sv, offset);
}

static void require_storage(const Tensor& t, const char* op) {
  if (t.empty()) bad(std::string(op) + " of an empty (unset) tensor");
}

Tensor Tensor::contiguous() const {
  if (empty() || is_contiguous()) return *this;
  Tensor out = zeros(dtype_, shape_);
  const int64_t es = static_cast<int64_t>(dtype_size(dtype_));
  const int r = shape_.rank();  // >= 1: a scalar is always contiguous
  const std::byte* base = storage_.data.get();
  std::byte* dst = static_cast<std::byte*>(out.raw_mut());
  // Rows along the last axis are copied in one memcpy when that axis is dense, element by element
  // otherwise; an odometer over the outer axes moves the source offset incrementally.
  const int64_t inner = shape_[r - 1], inner_stride = strides_[static_cast<size_t>(r - 1)];
  const int64_t rows = numel() / inner;  // numel() > 0 here: empty tensors are contiguous
  Dims idx{};
  int64_t src = offset_;
  for (int64_t row = 0; row < rows; ++row) {
    if (inner_stride == 1) {
      std::memcpy(dst, base + src * es, static_cast<size_t>(inner * es));
      dst += inner * es;
    } else {
      int64_t s = src;
      for (int64_t k = 0; k < inner; ++k, s += inner_stride, dst += es)
        std::memcpy(dst, base + s * es, static_cast<size_t>(es));
    }
    for (int d = r - 2; d >= 0; --d) {
      size_t du = static_cast<size_t>(d);
      if (++idx[du] < shape_[d]) {
        src += strides_[du];
        break;
      }
      src -= (shape_[d] - 1) * strides_[du];
      idx[du] = 0;
    }
  }
  return out;
}

Tensor Tensor::permute(std::span<const int> perm) const {
  require_storage(*this, "permute");
  const int r = rank();
  if (static_cast<int>(perm.size()) != r)
    bad("permute: " + std::to_string(perm.size()) + " axes given for rank " + std::to_string(r));
  Dims d{}, s{};
  std::array<bool, kMaxRank> seen{};
  for (int i = 0; i < r; ++i) {
    int p = norm_axis(perm[static_cast<size_t>(i)], r, "permute");
    if (seen[static_cast<size_t>(p)]) bad("permute: axis " + std::to_string(p) + " appears twice");
    seen[static_cast<size_t>(p)] = true;
    d[static_cast<size_t>(i)] = shape_[p];
    s[static_cast<size_t>(i)] = strides_[static_cast<size_t>(p)];
  }
  return checked_view(storage_, dtype_, make_shape(d, r), s, offset_);
}

Tensor Tensor::transpose(int a, int b) const {
  require_storage(*this, "transpose");
  const int r = rank();
  int x = norm_axis(a, r, "transpose"), y = norm_axis(b, r, "transpose");
  std::array<int, kMaxRank> perm{};
  for (int i = 0; i < r; ++i) perm[static_cast<size_t>(i)] = i;
  std::swap(perm[static_cast<size_t>(x)], perm[static_cast<size_t>(y)]);
  return permute(std::span<const int>(perm.data(), static_cast<size_t>(r)));
}

Tensor Tensor::slice(int axis, int64_t start, int64_t end, int64_t step) const {
  require_storage(*this, "slice");
  const int r = rank();
  int a = norm_axis(axis, r, "slice");
  int64_t size = shape_[a];
  if (step < 1) bad("slice: step " + std::to_string(step) + " must be >= 1");
  if (start < 0 || start > end || end > size)
    bad("slice: range [" + std::to_string(start) + ", " + std::to_string(end) +
        ") does not satisfy 0 <= start <= end <= " + std::to_string(size));
  Dims d{}, s{};
  for (int i = 0; i < r; ++i) {
    d[static_cast<size_t>(i)] = shape_[i];
    s[static_cast<size_t>(i)] = strides_[static_cast<size_t>(i)];
  }
  size_t au = static_cast<size_t>(a);
  int64_t extent = (end - start + step - 1) / step;
  int64_t off = offset_;
  d[au] = extent;
  Shape out = make_shape(d, r);
  // Moving the offset of an empty result could point past the buffer; an empty view reads nothing anyway.
  if (out.numel() > 0) off += start * s[au];
  s[au] *= step;
  return checked_view(storage_, dtype_, out, s, off);
}

Tensor Tensor::select(int axis, int64_t index) const {
  require_storage(*this, "select");
  const int r = rank();
  int a = norm_axis(axis, r, "select");
  if (index < 0 || index >= shape_[a])
    bad("select: index " + std::to_string(index) + " is out of range for extent " + std::to_string(shape_[a]));
  Dims d{}, s{};
  int k = 0;
  for (int i = 0; i < r; ++i) {
    if (i == a) continue;
    d[static_cast<size_t>(k)] = shape_[i];
    s[static_cast<size_t>(k)] = strides_[static_cast<size_t>(i)];
    ++k;
  }
  return checked_view(storage_, dtype_, make_shape(d, r - 1), s, offset_ + index * strides_[static_cast<size_t>(a)]);
}

Tensor Tensor::flip(int axis) const {
  require_storage(*this, "flip");
  const int r = rank();
  int a = norm_axis(axis, r, "flip");
  size_t au = static_cast<size_t>(a);
  Dims s = strides_;
  int64_t off = offset_;
  if (shape_[a] > 0) off += (shape_[a] - 1) * s[au];
  s[au] = -s[au];
  return checked_view(storage_, dtype_, shape_, s, off);
}

Tensor Tensor::unsqueeze(int axis) const {
  require_storage(*this, "unsqueeze");
  const int r = rank();
  if (r >= kMaxRank) throw Error(ErrorKind::Unsupported, "unsqueeze: rank 9 exceeds the limit of 8");
  int a = axis < 0 ? axis + r + 1 : axis;
  if (a < 0 || a > r) bad("unsqueeze: axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  Dims d{}, s{};
  int k = 0;
  for (int i = 0; i <= r; ++i) {
    size_t iu = static_cast<size_t>(i);
    if (i == a) {
      d[iu] = 1;
      s[iu] = a < r ? shape_[a] * strides_[static_cast<size_t>(a)] : 1;
    } else {
      d[iu] = shape_[k];
      s[iu] = strides_[static_cast<size_t>(k)];
      ++k;
    }
  }
  return checked_view(storage_, dtype_, make_shape(d, r + 1), s, offset_);
}

Tensor Tensor::squeeze(int axis) const {
  require_storage(*this, "squeeze");
  int a = norm_axis(axis, rank(), "squeeze");
  if (shape_[a] != 1)
    bad("squeeze: axis " + std::to_string(axis) + " has extent " + std::to_string(shape_[a]) + ", not 1");
  Dims d{}, s{};
  int k = 0;
  for (int i = 0; i < rank(); ++i) {
    if (i == a) continue;
    d[static_cast<size_t>(k)] = shape_[i];
    s[static_cast<size_t>(k)] = strides_[static_cast<size_t>(i)];
    ++k;
  }
  return checked_view(storage_, dtype_, make_shape(d, k), s, offset_);
}

Tensor Tensor::squeeze() const {
  require_storage(*this, "squeeze");
  Dims d{}, s{};
  int k = 0;
  for (int i = 0; i < rank(); ++i) {
    if (shape_[i] == 1) continue;
    d[static_cast<size_t>(k)] = shape_[i];
    s[static_cast<size_t>(k)] = strides_[static_cast<size_t>(i)];
    ++k;
  }
  return checked_view(storage_, dtype_, make_shape(d, k), s, offset_);
}

Tensor Tensor::expand(const Shape& shape) const {
  require_storage(*this, "expand");
  const int r = rank(), tr = shape.rank();
  if (tr < r) bad("expand: cannot expand " + shape_.to_string() + " to the lower rank " + shape.to_string());
  Dims s{};
  for (int i = 0; i < tr; ++i) {
    int src = i - (tr - r);  // right-aligned source dimension, negative when missing
    size_t iu = static_cast<size_t>(i);
    if (src < 0) {
      s[iu] = 0;
    } else if (shape_[src] == shape[i]) {
      s[iu] = strides_[static_cast<size_t>(src)];
    } else if (shape_[src] == 1) {
      s[iu] = 0;
    } else {
      bad("expand: cannot expand " + shape_.to_string() + " to " + shape.to_string());
    }
  }
  return checked_view(storage_, dtype_, shape, s, offset_);
}

Tensor Tensor::try_reshape(const Shape& shape) const {
  require_storage(*this, "reshape");
  if (shape.numel() != numel())
    bad("reshape: cannot view " + shape_.to_string() + " (" + std::to_string(numel()) + " elements) as " +
        shape.to_string() + " (" + std::to_string(shape.numel()) + " elements)");
  const int nr = shape.rank();
  Dims s{};
  if (numel() == 0) {
    int64_t st = 1;
    for (int i = nr - 1; i >= 0; --i) {
      s[static_cast<size_t>(i)] = st;
      st *= shape[i] > 0 ? shape[i] : 1;
    }
    return checked_view(storage_, dtype_, shape, s, offset_);
  }
  // Runs: maximal groups of neighbouring non-1 source dims that are laid out contiguously relative to each other.
  Dims run_len{}, run_stride{};
  int runs = 0;
  int prev = -1;  // last non-1 source dim
  for (int i = 0; i < rank(); ++i) {
    if (shape_[i] == 1) continue;
    size_t iu = static_cast<size_t>(i);
    if (prev >= 0 && strides_[static_cast<size_t>(prev)] == strides_[iu] * shape_[i]) {
      run_len[static_cast<size_t>(runs - 1)] *= shape_[i];
      run_stride[static_cast<size_t>(runs - 1)] = strides_[iu];
    } else {
      run_len[static_cast<size_t>(runs)] = shape_[i];
      run_stride[static_cast<size_t>(runs)] = strides_[iu];
      ++runs;
    }
    prev = i;
  }
  // Partition the new dims left to right into groups whose products equal the run lengths.
  int run = 0, group_start = 0;
  int64_t prod = 1;
  for (int j = 0; j < nr; ++j) {
    if (run == runs) {  // only extent-1 dims may follow the last group
      if (shape[j] != 1) return {};
      s[static_cast<size_t>(j)] = 1;
      group_start = j + 1;
      continue;
    }
    prod *= shape[j];
    size_t ru = static_cast<size_t>(run);
    if (prod > run_len[ru] || run_len[ru] % prod != 0) return {};
    if (prod == run_len[ru]) {
      int64_t st = run_stride[ru];
      for (int k = j; k >= group_start; --k) {
        s[static_cast<size_t>(k)] = st;
        st *= shape[k];
      }
      ++run;
      prod = 1;
      group_start = j + 1;
    }
  }
  if (run != runs) return {};
  return checked_view(storage_, dtype_, shape, s, offset_);
}

Tensor Tensor::reshape(const Shape& shape) const {
  Tensor v = try_reshape(shape);
  if (!v.empty()) return v;
  return contiguous().try_reshape(shape);
}

}  // namespace onemodel
