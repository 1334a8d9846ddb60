// Internal to mace/kernels: the SIMD micro-kernel, written once over a
// vector type (activation_vec.h) and instantiated by sgemm_<isa>.cc with
// the tile shape that fits that ISA's registers.
//
// A family F gives: V (the vector type), kName, kMr (rows), kNr (columns,
// a multiple of 2 * V::kWidth) and kPairSteps (whether kernels of fewer
// than kSgemmFmaChains accumulators alternate two sets, SgemmPairsSteps).
// Each row of a tile is kNr / V::kWidth accumulators; the half-width
// kernels (a panel whose columns past kNr / 2 are padding) read the same
// packed panel but compute and write only the first half.

#ifndef MACE_KERNELS_SGEMM_UKERNEL_IMPL_H_
#define MACE_KERNELS_SGEMM_UKERNEL_IMPL_H_

#include <cstdint>
#include <utility>

#include "mace/kernels/activation_vec.h"
#include "mace/kernels/sgemm_ukernel.h"

namespace mace {
namespace kernels {
namespace {

template <class F, int kRows, bool kHalf>
void SgemmVecUkernel(const SgemmTileA &a, const float *b, const float *bias,
                     const float *clamp, const float *addend, float *c,
                     int64_t ldc, const char *prefetch) {
  using V = typename F::V;
  using T = typename V::T;
  constexpr int kNr = F::kNr;
  constexpr int kVecs = (kHalf ? kNr / 2 : kNr) / V::kWidth;
  static_assert(kNr % (2 * V::kWidth) == 0, "a half panel is whole vectors");
  auto each = [](auto f) __attribute__((always_inline)) {
    ForEachRow<kRows>([&](auto r) { Unroll<kVecs>([&](auto v) { f(r, v); }); });
  };

  T acc[kRows][kVecs];
  T bias_vec[kVecs];
  Unroll<kVecs>([&](auto v) {
    bias_vec[v] = bias != nullptr ? V::Load(bias + v * V::kWidth) : V::Zero();
  });
  each([&](auto r, auto v) { acc[r][v] = bias_vec[v]; });
  if (addend != nullptr) {
    each([&](auto r, auto v) {
      acc[r][v] = V::Add(acc[r][v], V::Load(addend + r * ldc + v * V::kWidth));
    });
  }
  const int64_t lda = a.lda;
  // A kernel of few chains sums its odd steps into a second set.
  constexpr bool kPaired = F::kPairSteps && SgemmPairsSteps(kRows, kVecs);
  T odd[kPaired ? kRows : 1][kVecs];
  if constexpr (kPaired) each([&](auto r, auto v) { odd[r][v] = V::Zero(); });
  ForEachRunStep<kNr, kPaired>(
      a, b, prefetch,
      [&](const float *a_run, const float *b_run, int64_t p, auto parity) {
        T b_row[kVecs];
        Unroll<kVecs>([&](auto v) {
          b_row[v] = V::Load(b_run + p * kNr + v * V::kWidth);
        });
        ForEachRow<kRows>([&](auto r) {
          const T ar = V::Set1(a_run[r * lda + p]);
          Unroll<kVecs>([&](auto v) {
            if constexpr (kPaired && parity == 1) {
              odd[r][v] = V::Fma(ar, b_row[v], odd[r][v]);
            } else {
              acc[r][v] = V::Fma(ar, b_row[v], acc[r][v]);
            }
          });
        });
      });
  if constexpr (kPaired) {
    each([&](auto r, auto v) { acc[r][v] = V::Add(acc[r][v], odd[r][v]); });
  }
  if (clamp != nullptr) {
    // V::Max(x, lo) is lo for a NaN x, as the reference ReLU makes it 0.
    const T lo = V::Set1(clamp[0]);
    const T hi = V::Set1(clamp[1]);
    each(
        [&](auto r, auto v) { acc[r][v] = V::Min(V::Max(acc[r][v], lo), hi); });
  }
  each([&](auto r, auto v) {
    V::Store(c + r * ldc + v * V::kWidth, acc[r][v]);
  });
}

template <class F, int... kRow>
constexpr SgemmUkernels MakeSgemmUkernelsImpl(
    std::integer_sequence<int, kRow...>) {
  static_assert(F::kMr <= kSgemmMaxMr && F::kNr <= kSgemmMaxNr,
                "the dispatch table's bounds");
  return {F::kName,
          F::kMr,
          F::kNr,
          {nullptr, SgemmVecUkernel<F, kRow + 1, false>...},
          {nullptr, SgemmVecUkernel<F, kRow + 1, true>...}};
}

// The family's kernels for 1 .. kMr rows, full and half width.
template <class F>
constexpr SgemmUkernels MakeSgemmUkernels() {
  return MakeSgemmUkernelsImpl<F>(std::make_integer_sequence<int, F::kMr>{});
}

}  // namespace
}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_SGEMM_UKERNEL_IMPL_H_
