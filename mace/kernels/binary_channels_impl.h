// Internal to mace/kernels: the BinaryChannels kernel, compiled by each
// binary_channels_<isa>.cc for its ISA with the vector types of
// activation_vec.h.

#ifndef MACE_KERNELS_BINARY_CHANNELS_IMPL_H_
#define MACE_KERNELS_BINARY_CHANNELS_IMPL_H_

#include "mace/kernels/activation_vec.h"
#include "mace/kernels/binary_channels.h"
#include "mace/kernels/isa_kernels.h"

namespace mace {
namespace kernels {

// `rows` rows of `period` values: y = a op b (b op a when repeated_first),
// b the same `period` values for every row.
using BinaryRowsFn = void (*)(BinaryKind kind, const float *a, const float *b,
                              int64_t period, bool repeated_first, float *y,
                              int64_t rows);

// One ISA's kernel.
struct BinaryChannelsKernels {
  BinaryRowsFn rows;
};

// Defined by the per-ISA files that the build includes.
template <>
const BinaryChannelsKernels &
IsaKernels<BinaryChannelsKernels, VectorIsa::kGeneric>();
template <>
const BinaryChannelsKernels &
IsaKernels<BinaryChannelsKernels, VectorIsa::kAvx2>();
template <>
const BinaryChannelsKernels &
IsaKernels<BinaryChannelsKernels, VectorIsa::kAvx512>();
template <>
const BinaryChannelsKernels &
IsaKernels<BinaryChannelsKernels, VectorIsa::kNeon>();

namespace {

template <class V, BinaryKind kKind>
inline typename V::T Combine(typename V::T p, typename V::T q) {
  if constexpr (kKind == BinaryKind::kSum) {
    return V::Add(p, q);
  } else if constexpr (kKind == BinaryKind::kSub) {
    return V::Sub(p, q);
  } else if constexpr (kKind == BinaryKind::kProd) {
    return V::Mul(p, q);
  } else {
    static_assert(kKind == BinaryKind::kDiv, "every BinaryKind is handled");
    return V::Div(p, q);
  }
}

template <class V, BinaryKind kKind, bool kRepeatedFirst>
void BinaryRowsLoops(const float *a, const float *b, int64_t period, float *y,
                     int64_t rows) {
  constexpr int kW = V::kWidth;
  auto combine = [](typename V::T x, typename V::T r) {
    return kRepeatedFirst ? Combine<V, kKind>(r, x) : Combine<V, kKind>(x, r);
  };
  for (int64_t row = 0; row < rows; ++row) {
    const float *x = a + row * period;
    float *out = y + row * period;
    int64_t j = 0;
    for (; j + 2 * kW <= period; j += 2 * kW) {
      const typename V::T x0 = V::Load(x + j);
      const typename V::T x1 = V::Load(x + j + kW);
      V::Store(out + j, combine(x0, V::Load(b + j)));
      V::Store(out + j + kW, combine(x1, V::Load(b + j + kW)));
    }
    for (; j < period; j += kW) {
      const int lanes = static_cast<int>(MinIndex(kW, period - j));
      V::StorePartial(
          out + j, lanes,
          combine(V::LoadPartial(x + j, lanes), V::LoadPartial(b + j, lanes)));
    }
  }
}

template <class V>
void BinaryRowsKernel(BinaryKind kind, const float *a, const float *b,
                      int64_t period, bool repeated_first, float *y,
                      int64_t rows) {
  auto run = [&](auto k) {
    constexpr BinaryKind kKind = decltype(k)::value;
    if (repeated_first) {
      BinaryRowsLoops<V, kKind, true>(a, b, period, y, rows);
    } else {
      BinaryRowsLoops<V, kKind, false>(a, b, period, y, rows);
    }
  };
  using K = BinaryKind;
  switch (kind) {
    case K::kSum:
      return run(std::integral_constant<K, K::kSum>{});
    case K::kSub:
      return run(std::integral_constant<K, K::kSub>{});
    case K::kProd:
      return run(std::integral_constant<K, K::kProd>{});
    case K::kDiv:
      return run(std::integral_constant<K, K::kDiv>{});
  }
}

}  // namespace
}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_BINARY_CHANNELS_IMPL_H_
