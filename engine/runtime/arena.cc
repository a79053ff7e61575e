// BumpArena: chunks are filled front to back; a request that does not fit moves to the next kept chunk
// that can hold it, and only when none can is a new chunk made. Because reset() rewinds to chunk 0 and the
// walk is deterministic, a run repeating the previous run's requests lands in the same chunks.
#include "runtime/arena.h"

#include <cstring>
#include <string>

#include "runtime/run_memory.h"

namespace onemodel::rt {

namespace {
size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }
}  // namespace

Tensor BumpArena::allocate(DType dtype, const Shape& shape) {
  Tensor t = allocate_workspace(dtype, shape);
  // Zero-filled like every other fresh tensor, so a kernel that reads before writing is at least
  // deterministic across runs and modes.
  if (t.nbytes()) std::memset(t.raw_mut(), 0, t.nbytes());
  return t;
}

Tensor BumpArena::allocate_workspace(DType dtype, const Shape& shape) {
  size_t es = dtype_size(dtype);
  if (es == 0) throw Error(ErrorKind::Unsupported, "element type " + std::string(dtype_name(dtype)) + " is not stored");
  uint64_t bytes64 = static_cast<uint64_t>(shape.numel()) * es;
  if (bytes64 > static_cast<uint64_t>(kMaxElements))
    throw Error(ErrorKind::Unsupported, "scratch tensor " + shape.to_string() + " of " +
                                            std::string(dtype_name(dtype)) + " needs more than 2^31-1 bytes");
  size_t bytes = static_cast<size_t>(bytes64);
  size_t need = round_up(bytes == 0 ? 1 : bytes, kAlign);

  while (current_ < chunks_.size()) {
    Chunk& c = chunks_[current_];
    if (c.storage.bytes - c.used >= need) break;
    ++current_;
  }
  if (current_ == chunks_.size()) {
    Chunk c;
    c.storage = take_run_storage(memory_, need > kChunkBytes ? need : kChunkBytes);
    chunks_.push_back(std::move(c));
    ++system_allocations_;
  }
  Chunk& c = chunks_[current_];
  size_t offset = c.used;
  c.used += need;
  return Tensor::view_of(c.storage, offset, dtype, shape);
}

void BumpArena::reset() {
  for (Chunk& c : chunks_) {
#ifndef NDEBUG
    // Checked builds poison what the previous run used, so a tensor kept past its run reads garbage.
    if (c.used) std::memset(c.storage.data.get(), 0xFF, c.used);
#endif
    c.used = 0;
  }
  current_ = 0;
}

}  // namespace onemodel::rt
