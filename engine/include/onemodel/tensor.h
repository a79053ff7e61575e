// Tensors (tensors.md sections 1-4): a buffer reference, an element type, a logical shape, strides in
// elements and an offset. Views (permute, slice, reshape...) are new Tensor values over the same buffer.
// The shape lives inline (rank <= 8), so making a view allocates nothing; buffers are 64-byte aligned.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "onemodel/dtype.h"
#include "onemodel/error.h"

namespace onemodel {

inline constexpr int kMaxRank = 8;
inline constexpr int64_t kMaxElements = 2147483647;  // 2^31 - 1, also the byte limit of one buffer

// A validated shape: rank 0..8, extents >= 0, every prefix product <= 2^31-1. Construction throws, before
// anything is allocated, Error(Unsupported) naming the violated limit, or Error(InvalidArgument) for a
// negative extent.
class Shape {
 public:
  Shape() = default;  // rank 0: a scalar
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(std::span<const int64_t> dims);

  int rank() const noexcept { return rank_; }
  int64_t operator[](int i) const noexcept { return dims_[static_cast<size_t>(i)]; }
  int64_t numel() const noexcept;
  std::span<const int64_t> dims() const noexcept { return {dims_.data(), static_cast<size_t>(rank_)}; }
  std::vector<int64_t> to_vector() const { return {dims_.begin(), dims_.begin() + rank_}; }
  std::string to_string() const;  // "[2,3]"
  bool operator==(const Shape& o) const noexcept;
  bool operator!=(const Shape& o) const noexcept { return !(*this == o); }

  // numpy multidirectional broadcasting; throws Error(InvalidInput) when incompatible.
  static Shape broadcast(const Shape& a, const Shape& b);
  // Checks without throwing; returns false on any limit violation.
  static bool valid(std::span<const int64_t> dims) noexcept;

 private:
  std::array<int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

// Storage for tensors: an aliasing shared_ptr to the first byte plus the byte length. Owners can be an
// aligned allocation, a memory-mapped file, a run's slab or a caller's array.
struct Storage {
  std::shared_ptr<std::byte> data;
  size_t bytes = 0;
};

// Allocates a 64-byte-aligned, zero-filled buffer of `bytes` bytes (bytes <= 2^31-1).
Storage allocate_storage(size_t bytes);

class Tensor {
 public:
  Tensor() = default;  // empty: no storage, dtype Undefined

  // New contiguous zero-filled tensor.
  static Tensor zeros(DType dtype, const Shape& shape);
  // New contiguous tensor holding a copy of `bytes` (must be exactly numel * dtype_size).
  static Tensor copy_of(DType dtype, const Shape& shape, const void* bytes, size_t nbytes);
  template <class T>
  static Tensor from_values(std::span<const T> values, const Shape& shape) {
    return copy_of(DTypeOf<T>::value, shape, values.data(), values.size_bytes());
  }
  template <class T>
  static Tensor from_values(std::initializer_list<T> values, const Shape& shape) {
    return from_values(std::span<const T>(values.begin(), values.size()), shape);
  }
  // Contiguous view over existing storage starting at byte `byte_offset`; no copy. Checks the range.
  static Tensor view_of(Storage storage, size_t byte_offset, DType dtype, const Shape& shape);

  bool empty() const noexcept { return !storage_.data; }
  DType dtype() const noexcept { return dtype_; }
  const Shape& shape() const noexcept { return shape_; }
  int rank() const noexcept { return shape_.rank(); }
  int64_t numel() const noexcept { return shape_.numel(); }
  size_t nbytes() const noexcept { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  std::span<const int64_t> strides() const noexcept { return {strides_.data(), static_cast<size_t>(shape_.rank())}; }
  int64_t offset() const noexcept { return offset_; }  // in elements
  bool is_contiguous() const noexcept;
  const Storage& storage() const noexcept { return storage_; }

  // Pointer to element (0,...,0). For contiguous tensors this is the row-major data.
  const void* raw() const noexcept { return storage_.data.get() + offset_ * static_cast<int64_t>(dtype_size(dtype_)); }
  void* raw_mut() const noexcept { return storage_.data.get() + offset_ * static_cast<int64_t>(dtype_size(dtype_)); }

  // Typed row-major access; throws Error(InvalidArgument) on dtype mismatch or a non-contiguous tensor.
  template <class T>
  std::span<const T> data() const {
    check_access(DTypeOf<T>::value);
    return {static_cast<const T*>(raw()), static_cast<size_t>(numel())};
  }
  template <class T>
  std::span<T> mutable_data() const {
    check_access(DTypeOf<T>::value);
    return {static_cast<T*>(raw_mut()), static_cast<size_t>(numel())};
  }

  // Returns *this when contiguous, else a row-major copy.
  Tensor contiguous() const;
  // Deep copy (always new storage, contiguous).
  Tensor clone() const;

  // Views (tensors.md section 4). All throw Error(InvalidArgument) on bad arguments.
  Tensor permute(std::span<const int> perm) const;
  Tensor transpose(int a, int b) const;
  Tensor slice(int axis, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor select(int axis, int64_t index) const;
  Tensor flip(int axis) const;
  Tensor unsqueeze(int axis) const;
  Tensor squeeze(int axis) const;
  Tensor squeeze() const;
  Tensor expand(const Shape& shape) const;
  // View if the strides allow it (tensors.md "Reshape viewability"), else an empty Tensor.
  Tensor try_reshape(const Shape& shape) const;
  // View when possible, otherwise contiguous() + view. Same row-major order either way.
  Tensor reshape(const Shape& shape) const;

  // Internal constructor for views: no checks beyond the caller's.
  Tensor(Storage storage, DType dtype, const Shape& shape, std::span<const int64_t> strides, int64_t offset);

 private:
  void check_access(DType want) const;
  Storage storage_;
  DType dtype_ = DType::Undefined;
  Shape shape_;
  std::array<int64_t, kMaxRank> strides_{};
  int64_t offset_ = 0;
};

}  // namespace onemodel
