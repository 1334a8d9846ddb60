// Internal to mace/kernels: the matrix-vector kernel, written once over a
// vector type (activation_vec.h) and instantiated by gemv_<isa>.cc.
//
// Rows go in blocks of kGemvRowBlock: each vector of x is loaded once for
// the block's rows, cutting the loads per multiply-add from 2 to 1.25. Every
// row has two accumulators (even and odd vectors), so a block keeps eight
// independent FMA chains in flight, enough to cover the FMA latency. A row
// outside a block is summed with the same accumulators in the same order,
// so its result does not depend on where the thread split falls.
//
// The generic type is the exception, one row at a time: its lanes are
// plain floats that GCC -O3 must regroup into SSE registers, which it does
// for one row's 8 sums but not for 4 rows' 32 (those come out 2.7x slower,
// half scalar with spills).

#ifndef MACE_KERNELS_GEMV_IMPL_H_
#define MACE_KERNELS_GEMV_IMPL_H_

#include <cstdint>

#include "mace/kernels/activation_vec.h"
#include "mace/kernels/gemv.h"
#include "mace/kernels/isa_kernels.h"

namespace mace {
namespace kernels {

// Rows per block; the driver hands each thread whole blocks.
constexpr int64_t kGemvRowBlock = 4;

// y[o] = dot(w[o, :], x) + bias[o] for o in [begin, end); bias may be null.
using GemvRowsFn = void (*)(const float *w, const float *x, const float *bias,
                            int64_t k, int64_t begin, int64_t end, float *y);

struct GemvKernels {
  const char *name;
  GemvRowsFn rows;
};

// Defined by the per-ISA files that the build includes.
template <>
const GemvKernels &IsaKernels<GemvKernels, VectorIsa::kGeneric>();
template <>
const GemvKernels &IsaKernels<GemvKernels, VectorIsa::kAvx2>();
template <>
const GemvKernels &IsaKernels<GemvKernels, VectorIsa::kAvx512>();
template <>
const GemvKernels &IsaKernels<GemvKernels, VectorIsa::kNeon>();

namespace {

// dots[r] = dot(w[r * k, ...], x) for the kRows rows starting at w.
template <class V, int kRows>
inline __attribute__((always_inline)) void GemvDots(const float *w,
                                                    const float *x, int64_t k,
                                                    float *dots) {
  using T = typename V::T;
  constexpr int kW = V::kWidth;
  T even[kRows], odd[kRows];
  Unroll<kRows>([&](auto r) {
    even[r] = V::Zero();
    odd[r] = V::Zero();
  });
  int64_t i = 0;
  for (; i + 2 * kW <= k; i += 2 * kW) {
    const T x0 = V::Load(x + i);
    const T x1 = V::Load(x + i + kW);
    Unroll<kRows>([&](auto r) {
      even[r] = V::Fma(V::Load(w + r * k + i), x0, even[r]);
      odd[r] = V::Fma(V::Load(w + r * k + i + kW), x1, odd[r]);
    });
  }
  if (i + kW <= k) {
    const T x0 = V::Load(x + i);
    Unroll<kRows>(
        [&](auto r) { even[r] = V::Fma(V::Load(w + r * k + i), x0, even[r]); });
    i += kW;
  }
  if (i < k) {
    // Both operands' missing lanes read as 0, so they add nothing.
    const int lanes = static_cast<int>(k - i);
    const T x0 = V::LoadPartial(x + i, lanes);
    Unroll<kRows>([&](auto r) {
      odd[r] = V::Fma(V::LoadPartial(w + r * k + i, lanes), x0, odd[r]);
    });
  }
  Unroll<kRows>(
      [&](auto r) { dots[r] = V::ReduceAdd(V::Add(even[r], odd[r])); });
}

// kRows rows at a time sharing the loads of x, then the rest one by one.
template <class V, int kRows>
void GemvRows(const float *w, const float *x, const float *bias, int64_t k,
              int64_t begin, int64_t end, float *y) {
  float dots[kRows];
  int64_t o = begin;
  for (; o + kRows <= end; o += kRows) {
    GemvDots<V, kRows>(w + o * k, x, k, dots);
    for (int r = 0; r < kRows; ++r) {
      y[o + r] = dots[r] + (bias != nullptr ? bias[o + r] : 0.0f);
    }
  }
  for (; o < end; ++o) {
    GemvDots<V, 1>(w + o * k, x, k, dots);
    y[o] = dots[0] + (bias != nullptr ? bias[o] : 0.0f);
  }
}

template <class V, int kRows = static_cast<int>(kGemvRowBlock)>
GemvKernels MakeGemvKernels(const char *name) {
  static_assert(kGemvRowBlock % kRows == 0, "blocks must not straddle tasks");
  return {name, GemvRows<V, kRows>};
}

}  // namespace
}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_GEMV_IMPL_H_
