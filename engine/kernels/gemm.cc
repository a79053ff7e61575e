// Dispatch for kernels/gemm.h: the Highway per-target pass, then the entry points, which own the packed-B
// buffers (a constant's PackedB, or a per-thread buffer reused across calls).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gemm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/gemm-inl.h"

#if HWY_ONCE
#include <algorithm>
#include <cstdint>
#include <new>
#include <string>

#include "base/big_buffer.h"
#include "base/bits.h"
#include "base/fp16.h"
#include "kernels/gemm.h"
#include "kernels/per_target.h"
#include "kernels/widen.h"
#include "onemodel/error.h"

namespace onemodel::kern {
namespace {

// Packed constants and the per-thread packing buffers, which live long: on huge pages from 1 MiB
// (base/big_buffer.h).
struct AlignedFloats {
  BigBuffer mem;
  float* get() const { return reinterpret_cast<float*>(mem.get()); }
};

AlignedFloats allocate_floats(int64_t count) {
  return AlignedFloats{allocate_big_buffer(static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(float))};
}

void check_dims(int64_t m, int64_t n, int64_t k) {
  if (m < 0 || n < 0 || k < 0)
    throw Error(ErrorKind::InvalidArgument, "gemm_f32: negative size m=" + std::to_string(m) +
                                                " n=" + std::to_string(n) + " k=" + std::to_string(k));
}

// A packing is made for one target: `what` ("gemm_f32_panels: A", ...) names the call and the operand.
void check_packed_isa(const char* what, Isa packed, Isa isa) {
  if (packed != isa)
    throw Error(ErrorKind::InvalidArgument, std::string(what) + " was packed for " + std::string(isa_name(packed)) +
                                                ", called for " + std::string(isa_name(isa)));
}

int64_t packed_floats(const GemmFns& fns, int64_t k, int64_t n) { return k * ((n + fns.nr - 1) / fns.nr) * fns.nr; }

// Packed B of one call, kept per calling thread so repeated calls (a model's every MatMul) do not allocate: up
// to kKeepFloats in one buffer of that size, larger ones in a second buffer that grows (GrowingFloats). Fresh
// memory per call is first-written page by page at every call: huge pages for a large B took PP-OCRv4 det's
// last ConvTranspose from 1.0 to 2.3 ms, and plain heap memory, which glibc reuses on the main thread,
// was handed back and faulted in again on every call from other threads (det in the Node addon, whose runs are
// on a thread of their own, bindings/run_thread.h: about 410 page faults per run, 5 with this buffer kept).
constexpr int64_t kKeepFloats = int64_t{1} << 20;  // 4 MiB

// A packing's values: float32, or (compact, gemm.h PackStorage) 16 bits each.
struct PackedValues {
  PackStorage storage = PackStorage::F32;
  int64_t count = 0;
  AlignedFloats data;  // float32
  BigBuffer half;      // 16-bit

  // Keeps `count` float32 values packed at `src` (a buffer of count floats) in `storage`. A value the format does
  // not hold exactly is a caller's error: compact weights are rounded to the format before they are packed.
  void keep(PackStorage st, AlignedFloats src, int64_t n) {
    storage = st;
    count = n;
    if (st == PackStorage::F32) {
      data = std::move(src);
      return;
    }
    half = allocate_big_buffer(static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(uint16_t));
    auto* h = reinterpret_cast<uint16_t*>(half.get());
    const float* f = src.get();
    for (int64_t i = 0; i < n; ++i) {
      h[i] = st == PackStorage::F16 ? float_to_half(f[i]) : float_to_bf16(f[i]);
      const float back = st == PackStorage::F16 ? half_to_float(h[i]) : bf16_to_float(h[i]);
      if (bit_cast<uint32_t>(back) != bit_cast<uint32_t>(f[i]))
        throw Error(ErrorKind::Internal, "a compact packing was given a value its 16-bit format does not hold");
    }
  }

  // The float32 values: the kept ones, or the 16-bit ones widened (exactly, kernels/widen.h) into a buffer the
  // calling thread keeps and grows (like gemm_f32's B buffer), in chunks of the pool. Valid until the calling
  // thread's next compact use.
  const float* floats(Isa isa, ThreadPool* pool) const {
    if (storage == PackStorage::F32) return data.get();
    thread_local GrowingFloats buf;
    float* dst = buf.get(static_cast<size_t>(std::max<int64_t>(count, 1)));
    const auto* src = reinterpret_cast<const uint16_t*>(half.get());
    constexpr int64_t kChunk = int64_t{1} << 16;
    const auto widen = storage == PackStorage::BF16 ? widen_bf16_f32 : widen_f16_f32;
    parallel_for(pool, (count + kChunk - 1) / kChunk, 0.25 * static_cast<double>(count), [&](int64_t c) {
      const int64_t at = c * kChunk;
      widen(isa, src + at, dst + at, std::min(kChunk, count - at));
    });
    return dst;
  }
};

}  // namespace

class PackedB {
 public:
  Isa isa;
  int64_t k, n;
  PackedValues values;
};

class PackedA {
 public:
  Isa isa;
  int64_t m, k;
  PackedValues values;
};

std::shared_ptr<const PackedA> pack_a_f32(Isa isa, int64_t m, int64_t k, MatrixView a, PackStorage storage) {
  check_dims(m, 0, k);
  const GemmFns& fns = *ONEMODEL_PER_TARGET(kGemmFns, isa);
  auto packed = std::make_shared<PackedA>();
  packed->isa = isa;
  packed->m = m;
  packed->k = k;
  const int64_t floats = k * ((m + fns.mr - 1) / fns.mr) * fns.mr;
  if (floats > 0) {
    AlignedFloats buf = allocate_floats(floats);
    fns.pack_a(m, k, a, buf.get());
    packed->values.keep(storage, std::move(buf), floats);
  }
  return packed;
}

// GemmFns::pack_a's layout: k-block p0 at p0 * m_pad, its strip of rows r0 at + r0 * kc, element (p, r) at
// p * mr + r.
void unpack_a_f32(const PackedA& a, float* out) {
  if (a.values.storage != PackStorage::F32) throw Error(ErrorKind::Internal, "unpack_a_f32: a 16-bit packing");
  const GemmFns& fns = *ONEMODEL_PER_TARGET(kGemmFns, a.isa);
  const int64_t mr = fns.mr, m_pad = (a.m + mr - 1) / mr * mr;
  const float* src = a.values.data.get();
  for (int64_t p0 = 0; p0 < a.k; p0 += fns.kc) {
    const int64_t kc = std::min(fns.kc, a.k - p0);
    for (int64_t i = 0; i < a.m; ++i) {
      const float* strip = src + p0 * m_pad + (i / mr) * mr * kc + i % mr;
      float* row = out + i * a.k + p0;
      for (int64_t p = 0; p < kc; ++p) row[p] = strip[p * mr];
    }
  }
}

void gemm_f32_panels(Isa isa, bool exact, const PackedA& a, int64_t n, const PanelSource& b, float* c, int64_t ldc,
                     ThreadPool* pool, const TileEpilogue* epilogue) {
  check_dims(a.m, n, a.k);
  check_packed_isa("gemm_f32_panels: A", a.isa, isa);
  const GemmFns& fns = *ONEMODEL_PER_TARGET(kGemmFns, isa);
  fns.compute_panels(exact, a.m, n, a.k, a.values.floats(isa, pool), b, c, ldc, pool, epilogue);
}

int64_t packed_b_rows(const PackedB& b) { return b.k; }
int64_t gemm_nr(Isa isa) { return ONEMODEL_PER_TARGET(kGemmFns, isa)->nr; }
int64_t gemm_mr(Isa isa) { return ONEMODEL_PER_TARGET(kGemmFns, isa)->mr; }
int64_t packed_b_cols(const PackedB& b) { return b.n; }

void gemm_f32(Isa isa, bool exact, int64_t m, int64_t n, int64_t k, MatrixView a, MatrixView b, float* c, int64_t ldc,
              ThreadPool* pool) {
  check_dims(m, n, k);
  const GemmFns& fns = *ONEMODEL_PER_TARGET(kGemmFns, isa);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    fns.compute(exact, m, n, 0, a, nullptr, c, ldc, pool, nullptr);
    return;
  }
  const int64_t floats = packed_floats(fns, k, n);
  thread_local AlignedFloats kept;
  thread_local int64_t kept_floats = 0;
  thread_local GrowingFloats large;
  float* buf = nullptr;
  if (floats <= kKeepFloats) {
    if (floats > kept_floats) {
      kept = allocate_floats(kKeepFloats);
      kept_floats = kKeepFloats;
    }
    buf = kept.get();
  } else {
    buf = large.get(static_cast<size_t>(floats));
  }
  fns.pack_b(k, n, b, buf, pool);
  fns.compute(exact, m, n, k, a, buf, c, ldc, pool, nullptr);
}

std::shared_ptr<const PackedB> pack_b_f32(Isa isa, int64_t k, int64_t n, MatrixView b, PackStorage storage) {
  check_dims(0, n, k);
  const GemmFns& fns = *ONEMODEL_PER_TARGET(kGemmFns, isa);
  auto packed = std::make_shared<PackedB>();
  packed->isa = isa;
  packed->k = k;
  packed->n = n;
  const int64_t floats = packed_floats(fns, k, n);
  if (floats > 0) {
    AlignedFloats buf = allocate_floats(floats);
    fns.pack_b(k, n, b, buf.get(), nullptr);
    packed->values.keep(storage, std::move(buf), floats);
  }
  return packed;
}

void gemm_f32_packed(Isa isa, bool exact, int64_t m, MatrixView a, const PackedB& b, float* c, int64_t ldc,
                     ThreadPool* pool, const TileEpilogue* epilogue) {
  check_dims(m, b.n, b.k);
  check_packed_isa("gemm_f32_packed: B", b.isa, isa);
  const GemmFns& fns = *ONEMODEL_PER_TARGET(kGemmFns, isa);
  fns.compute(exact, m, b.n, b.k, a, b.values.floats(isa, pool), c, ldc, pool, epilogue);
}

void gemm_f32_packed_at(Isa isa, bool exact, int64_t m, const PanelSource& at, const PackedB& b, float* a_buf, float* c,
                        int64_t ldc, ThreadPool* pool, const TileEpilogue* epilogue) {
  check_dims(m, b.n, b.k);
  check_packed_isa("gemm_f32_packed_at: B", b.isa, isa);
  const GemmFns& fns = *ONEMODEL_PER_TARGET(kGemmFns, isa);
  fns.pack_a_panels(m, b.k, at, a_buf, pool);
  PanelSource packed{nullptr, nullptr};
  packed.packed = b.values.floats(isa, pool);
  fns.compute_panels(exact, m, b.n, b.k, a_buf, packed, c, ldc, pool, epilogue);
}

}  // namespace onemodel::kern
#endif
