// Internal to mace/kernels: the pooling row kernel, written once over a
// vector type (activation_vec.h) and instantiated by pooling_<isa>.cc.
//
// Per output pixel the window is clipped to the input once; channels go in
// groups of four vectors (four independent accumulators keep the adds and
// max operations pipelined), then single vectors, then one masked vector.

#ifndef MACE_KERNELS_POOLING_IMPL_H_
#define MACE_KERNELS_POOLING_IMPL_H_

#include <limits>

#include "mace/kernels/activation_vec.h"
#include "mace/kernels/isa_kernels.h"
#include "mace/kernels/pooling.h"

namespace mace {
namespace kernels {

// Computes channels [c_begin, c_end) of output row oh of one image: x_image
// is [in_h, in_w, C], y_row [out_w, C]. c_begin is a multiple of the
// kernels' lanes.
using PoolRowFn = void (*)(const PoolShape &shape, const float *x_image,
                           int64_t oh, int64_t c_begin, int64_t c_end,
                           const int64_t *row_counts, const int64_t *col_counts,
                           float *y_row);

struct PoolingKernels {
  const char *name;
  PoolRowFn max_row;
  PoolRowFn avg_row;
  int lanes;  // floats a vector
};

// Defined by the per-ISA files that the build includes.
template <>
const PoolingKernels &IsaKernels<PoolingKernels, VectorIsa::kGeneric>();
template <>
const PoolingKernels &IsaKernels<PoolingKernels, VectorIsa::kAvx2>();
template <>
const PoolingKernels &IsaKernels<PoolingKernels, VectorIsa::kAvx512>();
template <>
const PoolingKernels &IsaKernels<PoolingKernels, VectorIsa::kNeon>();

namespace {

// Window taps [*k0, *k1) whose cell start + k * dilation lies in [0, in).
inline void ClipWindow(int64_t start, int64_t kernel, int64_t dilation,
                       int64_t in, int64_t *k0, int64_t *k1) {
  *k0 = start < 0 ? (-start + dilation - 1) / dilation : 0;
  const int64_t last = in - 1 - start;
  *k1 = last >= 0 ? MinIndex(kernel, last / dilation + 1) : 0;
  *k1 = MaxIndex(*k0, *k1);
}

// kVectors vectors of channels from c (lanes < kWidth: one masked vector).
template <class V, bool kMax, int kVectors, bool kFull>
inline __attribute__((always_inline)) void PoolBlock(
    const PoolShape &s, const float *x, int64_t ih0, int64_t r0, int64_t r1,
    int64_t iw0, int64_t k0, int64_t k1, float scale, float *y_px, int64_t c,
    int lanes) {
  using T = typename V::T;
  constexpr int kW = V::kWidth;
  const T init =
      kMax ? V::Set1(-std::numeric_limits<float>::infinity()) : V::Zero();
  T acc[kVectors];
  Unroll<kVectors>([&](auto i) { acc[i] = init; });
  for (int64_t r = r0; r < r1; ++r) {
    const float *x_row =
        x + ((ih0 + r * s.dilation_h) * s.in_w + iw0) * s.channels + c;
    for (int64_t k = k0; k < k1; ++k) {
      const float *x_px = x_row + k * s.dilation_w * s.channels;
      Unroll<kVectors>([&](auto i) {
        const T v =
            kFull ? V::Load(x_px + i * kW) : V::LoadPartial(x_px, lanes);
        acc[i] = kMax ? V::Max(v, acc[i]) : V::Add(acc[i], v);
      });
    }
  }
  Unroll<kVectors>([&](auto i) {
    const T out = kMax ? acc[i] : V::Mul(acc[i], V::Set1(scale));
    if (kFull) {
      V::Store(y_px + c + i * kW, out);
    } else {
      V::StorePartial(y_px + c, lanes, out);
    }
  });
}

template <class V, bool kMax>
void PoolRow(const PoolShape &s, const float *x, int64_t oh, int64_t c_begin,
             int64_t c_end, const int64_t *row_counts,
             const int64_t *col_counts, float *y_row) {
  constexpr int kW = V::kWidth;
  const int64_t ih0 = oh * s.stride_h - s.pad_top;
  int64_t r0 = 0, r1 = 0;
  ClipWindow(ih0, s.kernel_h, s.dilation_h, s.in_h, &r0, &r1);
  for (int64_t ow = 0; ow < s.out_w; ++ow) {
    const int64_t iw0 = ow * s.stride_w - s.pad_left;
    int64_t k0 = 0, k1 = 0;
    ClipWindow(iw0, s.kernel_w, s.dilation_w, s.in_w, &k0, &k1);
    // As the reference: the sum times the reciprocal of the count.
    const float scale =
        kMax ? 1.0f
             : 1.0f / static_cast<float>(row_counts[oh] * col_counts[ow]);
    float *y_px = y_row + ow * s.channels;
    int64_t c = c_begin;
    for (; c + 4 * kW <= c_end; c += 4 * kW) {
      PoolBlock<V, kMax, 4, true>(s, x, ih0, r0, r1, iw0, k0, k1, scale, y_px,
                                  c, kW);
    }
    for (; c + kW <= c_end; c += kW) {
      PoolBlock<V, kMax, 1, true>(s, x, ih0, r0, r1, iw0, k0, k1, scale, y_px,
                                  c, kW);
    }
    if (c < c_end) {
      PoolBlock<V, kMax, 1, false>(s, x, ih0, r0, r1, iw0, k0, k1, scale, y_px,
                                   c, static_cast<int>(c_end - c));
    }
  }
}

template <class V>
PoolingKernels MakePoolingKernels(const char *name) {
  return {name, PoolRow<V, true>, PoolRow<V, false>, V::kWidth};
}

}  // namespace
}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_POOLING_IMPL_H_
