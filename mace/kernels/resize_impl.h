// Internal to mace/kernels: the resize row kernels, written once over a
// vector type (activation_vec.h) and instantiated by resize_<isa>.cc.
//
// Bilinear runs in two steps: an input row interpolated along x
// (LerpColumns; per output pixel the channels go in groups of two vectors,
// then single vectors, then one masked vector for the tail), then two such
// rows blended along y (LerpRows, one contiguous run of out_w * C values).
// The driver keeps the last two x-interpolated rows, so upsampling
// interpolates each input row along x once rather than once per output row.

#ifndef MACE_KERNELS_RESIZE_IMPL_H_
#define MACE_KERNELS_RESIZE_IMPL_H_

#include "mace/kernels/activation_vec.h"
#include "mace/kernels/isa_kernels.h"
#include "mace/kernels/resize.h"

namespace mace {
namespace kernels {

// One input row ([in_w, C]) interpolated along x to [out_w, C].
using LerpColumnsFn = void (*)(const float *src, const ResizeAxis &cols,
                               int64_t out_w, int64_t channels, float *dst);
// dst[i] = top[i] + (bottom[i] - top[i]) * lerp for i < n.
using LerpRowsFn = void (*)(const float *top, const float *bottom, float lerp,
                            int64_t n, float *dst);
// One nearest output row from input row src ([in_w, C]).
using NearestRowFn = void (*)(const float *src, const int64_t *cols,
                              int64_t out_w, int64_t channels, float *y_row);

struct ResizeKernels {
  const char *name;
  LerpColumnsFn lerp_columns;
  LerpRowsFn lerp_rows;
  NearestRowFn nearest_row;
};

// Defined by the per-ISA files that the build includes.
template <>
const ResizeKernels &IsaKernels<ResizeKernels, VectorIsa::kGeneric>();
template <>
const ResizeKernels &IsaKernels<ResizeKernels, VectorIsa::kAvx2>();
template <>
const ResizeKernels &IsaKernels<ResizeKernels, VectorIsa::kAvx512>();
template <>
const ResizeKernels &IsaKernels<ResizeKernels, VectorIsa::kNeon>();

namespace {

// a + (b - a) * w, fused where the ISA has FMA.
template <class V>
inline typename V::T Lerp(typename V::T a, typename V::T b, typename V::T w) {
  return V::Fma(V::Sub(b, a), w, a);
}

// kVectors vectors of channels from c (lanes < kWidth: one masked vector)
// of dst = lerp(left, right, lx).
template <class V, int kVectors, bool kFull>
inline __attribute__((always_inline)) void LerpBlock(const float *left,
                                                     const float *right,
                                                     typename V::T lx,
                                                     float *dst, int64_t c,
                                                     int lanes) {
  constexpr int kW = V::kWidth;
  Unroll<kVectors>([&](auto i) {
    if (kFull) {
      V::Store(dst + c + i * kW, Lerp<V>(V::Load(left + c + i * kW),
                                         V::Load(right + c + i * kW), lx));
    } else {
      V::StorePartial(dst + c, lanes,
                      Lerp<V>(V::LoadPartial(left + c, lanes),
                              V::LoadPartial(right + c, lanes), lx));
    }
  });
}

template <class V>
void LerpColumns(const float *src, const ResizeAxis &cols, int64_t out_w,
                 int64_t channels, float *dst) {
  constexpr int kW = V::kWidth;
  for (int64_t ox = 0; ox < out_w; ++ox) {
    const float *left = src + cols.lower[ox] * channels;
    const float *right = src + cols.upper[ox] * channels;
    const typename V::T lx = V::Set1(cols.lerp[ox]);
    float *to = dst + ox * channels;
    int64_t c = 0;
    for (; c + 2 * kW <= channels; c += 2 * kW) {
      LerpBlock<V, 2, true>(left, right, lx, to, c, kW);
    }
    for (; c + kW <= channels; c += kW) {
      LerpBlock<V, 1, true>(left, right, lx, to, c, kW);
    }
    if (c < channels) {
      LerpBlock<V, 1, false>(left, right, lx, to, c,
                             static_cast<int>(channels - c));
    }
  }
}

template <class V>
void LerpRows(const float *top, const float *bottom, float lerp, int64_t n,
              float *dst) {
  constexpr int kW = V::kWidth;
  const typename V::T ly = V::Set1(lerp);
  int64_t i = 0;
  for (; i + 4 * kW <= n; i += 4 * kW) {
    LerpBlock<V, 4, true>(top, bottom, ly, dst, i, kW);
  }
  for (; i + kW <= n; i += kW)
    LerpBlock<V, 1, true>(top, bottom, ly, dst, i, kW);
  if (i < n) {
    LerpBlock<V, 1, false>(top, bottom, ly, dst, i, static_cast<int>(n - i));
  }
}

template <class V>
void NearestRow(const float *src, const int64_t *cols, int64_t out_w,
                int64_t channels, float *y_row) {
  constexpr int kW = V::kWidth;
  for (int64_t ox = 0; ox < out_w; ++ox) {
    const float *from = src + cols[ox] * channels;
    float *to = y_row + ox * channels;
    int64_t c = 0;
    for (; c + 2 * kW <= channels; c += 2 * kW) {
      const typename V::T a = V::Load(from + c);
      const typename V::T b = V::Load(from + c + kW);
      V::Store(to + c, a);
      V::Store(to + c + kW, b);
    }
    for (; c + kW <= channels; c += kW) V::Store(to + c, V::Load(from + c));
    if (c < channels) {
      const int lanes = static_cast<int>(channels - c);
      V::StorePartial(to + c, lanes, V::LoadPartial(from + c, lanes));
    }
  }
}

template <class V>
ResizeKernels MakeResizeKernels(const char *name) {
  return {name, LerpColumns<V>, LerpRows<V>, NearestRow<V>};
}

}  // namespace
}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_RESIZE_IMPL_H_
