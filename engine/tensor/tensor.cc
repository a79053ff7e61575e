// Tensor storage and the core accessors. Views live in tensor/views.cc.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "onemodel/tensor.h"

namespace onemodel {

namespace {

// A 64-byte-aligned buffer of `bytes` bytes, zero-filled when `zero`.
Storage allocate(size_t bytes, bool zero) {
  if (bytes > static_cast<size_t>(kMaxElements))
    throw Error(ErrorKind::Unsupported, "buffer of " + std::to_string(bytes) + " bytes exceeds 2^31-1");
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  // calloc, not aligned_alloc + memset: memory fresh from the system is zero already and calloc knows it, so
  // a new run state's slab (megabytes at a new input shape) is not written twice. 64 bytes more for alignment.
  // A buffer about to be overwritten (copy_of) skips the fill: for reused heap memory calloc must memset,
  // which was 9% of a Node call returning a 3 MiB output (bindings/node/addon.cc).
  void* raw = zero ? std::calloc(1, rounded + 64) : std::malloc(rounded + 64);
  if (!raw) throw std::bad_alloc();
  auto* p = reinterpret_cast<std::byte*>((reinterpret_cast<uintptr_t>(raw) + 63) & ~uintptr_t{63});
  Storage s;
  s.data = std::shared_ptr<std::byte>(p, [raw](std::byte*) { std::free(raw); });
  s.bytes = bytes;
  return s;
}

}  // namespace

Storage allocate_storage(size_t bytes) { return allocate(bytes, true); }

namespace {
void contiguous_strides(const Shape& shape, std::array<int64_t, kMaxRank>& strides) {
  int64_t s = 1;
  for (int i = shape.rank() - 1; i >= 0; --i) {
    strides[static_cast<size_t>(i)] = s;
    s *= shape[i];
  }
}
}  // namespace

Tensor::Tensor(Storage storage, DType dtype, const Shape& shape, std::span<const int64_t> strides, int64_t offset)
    : storage_(std::move(storage)), dtype_(dtype), shape_(shape), offset_(offset) {
  for (size_t i = 0; i < strides.size() && i < static_cast<size_t>(kMaxRank); ++i) strides_[i] = strides[i];
}

namespace {

// Bytes of a contiguous `shape` of `dtype`, checked against the engine's limits.
size_t tensor_bytes(DType dtype, const Shape& shape) {
  size_t es = dtype_size(dtype);
  if (es == 0) throw Error(ErrorKind::Unsupported, "element type " + std::string(dtype_name(dtype)) + " is not stored");
  auto bytes = static_cast<uint64_t>(shape.numel()) * es;
  if (bytes > static_cast<uint64_t>(kMaxElements))
    throw Error(ErrorKind::Unsupported, "tensor " + shape.to_string() + " of " + std::string(dtype_name(dtype)) +
                                            " needs more than 2^31-1 bytes");
  return static_cast<size_t>(bytes);
}

}  // namespace

Tensor Tensor::zeros(DType dtype, const Shape& shape) {
  Tensor t;
  t.storage_ = allocate(tensor_bytes(dtype, shape), true);
  t.dtype_ = dtype;
  t.shape_ = shape;
  contiguous_strides(shape, t.strides_);
  return t;
}

Tensor Tensor::copy_of(DType dtype, const Shape& shape, const void* bytes, size_t nbytes) {
  const size_t need = tensor_bytes(dtype, shape);
  if (nbytes != need)
    throw Error(ErrorKind::InvalidArgument, "expected " + std::to_string(need) + " bytes for " + shape.to_string() +
                                                " " + std::string(dtype_name(dtype)) + ", got " +
                                                std::to_string(nbytes));
  Tensor t;
  t.storage_ = allocate(need, false);
  t.dtype_ = dtype;
  t.shape_ = shape;
  contiguous_strides(shape, t.strides_);
  if (nbytes) std::memcpy(t.raw_mut(), bytes, nbytes);
  return t;
}

Tensor Tensor::view_of(Storage storage, size_t byte_offset, DType dtype, const Shape& shape) {
  size_t es = dtype_size(dtype);
  if (es == 0) throw Error(ErrorKind::Unsupported, "element type " + std::string(dtype_name(dtype)) + " is not stored");
  uint64_t need = static_cast<uint64_t>(shape.numel()) * es;
  if (byte_offset > storage.bytes || need > storage.bytes - byte_offset)
    throw Error(ErrorKind::Internal, "view of " + std::to_string(need) + " bytes at offset " +
                                         std::to_string(byte_offset) + " exceeds storage of " +
                                         std::to_string(storage.bytes) + " bytes");
  Tensor t;
  t.storage_.data = std::shared_ptr<std::byte>(storage.data, storage.data.get() + byte_offset);
  t.storage_.bytes = storage.bytes - byte_offset;
  t.dtype_ = dtype;
  t.shape_ = shape;
  contiguous_strides(shape, t.strides_);
  return t;
}

bool Tensor::is_contiguous() const noexcept {
  int64_t expect = 1;
  for (int i = shape_.rank() - 1; i >= 0; --i) {
    if (shape_[i] == 0) return true;
    if (shape_[i] != 1 && strides_[static_cast<size_t>(i)] != expect) return false;
    expect *= shape_[i];
  }
  return true;
}

void Tensor::check_access(DType want) const {
  if (empty()) throw Error(ErrorKind::InvalidArgument, "tensor is empty");
  if (want != dtype_)
    throw Error(ErrorKind::InvalidArgument,
                "tensor holds " + std::string(dtype_name(dtype_)) + ", not " + std::string(dtype_name(want)));
  if (!is_contiguous()) throw Error(ErrorKind::InvalidArgument, "typed access needs a contiguous tensor");
}

Tensor Tensor::clone() const {
  if (empty()) return {};
  Tensor src = contiguous();
  if (src.storage_.data == storage_.data && src.offset_ == offset_) {
    Tensor out = zeros(dtype_, shape_);
    if (nbytes()) std::memcpy(out.raw_mut(), raw(), nbytes());
    return out;
  }
  return src;
}

}  // namespace onemodel
