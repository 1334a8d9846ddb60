// Internal to mace/kernels: the SIMD micro-kernel, written once over a
// vector type (activation_vec.h) and instantiated by sgemm_<isa>.cc with
// the tile shape that fits that ISA's registers.
//
// A family F gives: V (the vector type), kName, kMr (rows), kNr (columns,
// a multiple of V::kWidth), kPairSteps (whether its widths may alternate
// two accumulator sets, SgemmPairsSteps), kRegisters (V's registers) and
// NarrowRows(vectors), the rows of its narrow kernels of that width. Each
// row of a tile is kNr / V::kWidth accumulators; the narrow kernels (a
// panel whose last vectors are padding) read the same packed panel but
// compute and write only its first vectors.

#ifndef MACE_KERNELS_SGEMM_UKERNEL_IMPL_H_
#define MACE_KERNELS_SGEMM_UKERNEL_IMPL_H_

#include <cstdint>
#include <utility>

#include "mace/kernels/activation_vec.h"
#include "mace/kernels/sgemm_ukernel.h"

namespace mace {
namespace kernels {
namespace {

// The kernel for kRows rows computing the first kVecs vectors of each
// panel row. Every lambda is always_inline: with a few families in one
// file, GCC's inlining budget otherwise left some of them calls inside the
// depth loop (3-5x slower kernels).
template <class F, int kRows, int kVecs>
void SgemmVecUkernel(const SgemmTileA &a, const float *b, const float *bias,
                     const float *clamp, const float *addend, float *c,
                     int64_t ldc, const char *prefetch) {
  using V = typename F::V;
  using T = typename V::T;
  constexpr int kNr = F::kNr;
  static_assert(kNr % V::kWidth == 0 && kVecs * V::kWidth <= kNr,
                "whole vectors of the panel");
  auto each = [](auto f) __attribute__((always_inline)) {
    ForEachRow<kRows>([&](auto r) __attribute__((always_inline)) {
      Unroll<kVecs>([&](auto v) __attribute__((always_inline)) { f(r, v); });
    });
  };

  T acc[kRows][kVecs];
  T bias_vec[kVecs];
  Unroll<kVecs>([&](auto v) __attribute__((always_inline)) {
    bias_vec[v] = bias != nullptr ? V::Load(bias + v * V::kWidth) : V::Zero();
  });
  each([&](auto r, auto v) __attribute__((always_inline)) {
    acc[r][v] = bias_vec[v];
  });
  if (addend != nullptr) {
    each([&](auto r, auto v) __attribute__((always_inline)) {
      acc[r][v] = V::Add(acc[r][v], V::Load(addend + r * ldc + v * V::kWidth));
    });
  }
  const int64_t lda = a.lda;
  // A width of few chains sums its odd steps into a second set, at every
  // height of its tiles.
  constexpr int kTallRows =
      kVecs * V::kWidth == kNr ? F::kMr : F::NarrowRows(kVecs);
  constexpr bool kPaired =
      F::kPairSteps && SgemmPairsSteps(kTallRows, kVecs, F::kRegisters);
  T odd[kPaired ? kRows : 1][kVecs];
  if constexpr (kPaired) {
    each([&](auto r, auto v) __attribute__((always_inline)) {
      odd[r][v] = V::Zero();
    });
  }
  ForEachRunStep<kNr, kPaired>(
      a, b, prefetch,
      [&](const float *a_run, const float *b_run, int64_t p, auto parity)
          __attribute__((always_inline)) {
            T b_row[kVecs];
            Unroll<kVecs>([&](auto v) __attribute__((always_inline)) {
              b_row[v] = V::Load(b_run + p * kNr + v * V::kWidth);
            });
            ForEachRow<kRows>([&](auto r) __attribute__((always_inline)) {
              const T ar = V::Set1(a_run[r * lda + p]);
              Unroll<kVecs>([&](auto v) __attribute__((always_inline)) {
                if constexpr (kPaired && parity == 1) {
                  odd[r][v] = V::Fma(ar, b_row[v], odd[r][v]);
                } else {
                  acc[r][v] = V::Fma(ar, b_row[v], acc[r][v]);
                }
              });
            });
          });
  if constexpr (kPaired) {
    each([&](auto r, auto v) __attribute__((always_inline)) {
      acc[r][v] = V::Add(acc[r][v], odd[r][v]);
    });
  }
  if (clamp != nullptr) {
    // V::Max(x, lo) is lo for a NaN x, as the reference ReLU makes it 0.
    const T lo = V::Set1(clamp[0]);
    const T hi = V::Set1(clamp[1]);
    each([&](auto r, auto v) __attribute__((always_inline)) {
      acc[r][v] = V::Min(V::Max(acc[r][v], lo), hi);
    });
  }
  each([&](auto r, auto v) __attribute__((always_inline)) {
    V::Store(c + r * ldc + v * V::kWidth, acc[r][v]);
  });
}

// The kernels of kVecs vectors' width for 1 .. F::NarrowRows(kVecs) rows.
template <class F, int kVecs, int... kRow>
constexpr SgemmNarrowUkernels NarrowUkernelsImpl(
    std::integer_sequence<int, kRow...>) {
  return {kVecs * F::V::kWidth,
          static_cast<int>(sizeof...(kRow)),
          {nullptr, SgemmVecUkernel<F, kRow + 1, kVecs>...}};
}
template <class F, int kVecs>
constexpr SgemmNarrowUkernels NarrowUkernels() {
  static_assert(F::NarrowRows(kVecs) <= kSgemmMaxNarrowMr,
                "the dispatch table's bounds");
  return NarrowUkernelsImpl<F, kVecs>(
      std::make_integer_sequence<int, F::NarrowRows(kVecs)>{});
}

// The full-width kernels and the narrow ones (1 .. all but one vectors of
// the panel, narrowest first).
template <class F, int... kRow, int... kVec>
constexpr SgemmUkernels MakeSgemmUkernelsImpl(
    std::integer_sequence<int, kRow...>, std::integer_sequence<int, kVec...>) {
  constexpr int kFullVecs = F::kNr / F::V::kWidth;
  static_assert(F::kMr <= kSgemmMaxMr && F::kNr <= kSgemmMaxNr &&
                    kFullVecs - 1 <= kSgemmMaxNarrow,
                "the dispatch table's bounds");
  return {F::kName,
          F::kMr,
          F::kNr,
          {nullptr, SgemmVecUkernel<F, kRow + 1, kFullVecs>...},
          {NarrowUkernels<F, kVec + 1>()...}};
}

// The family's kernels for 1 .. kMr rows, of every width in vectors.
template <class F>
constexpr SgemmUkernels MakeSgemmUkernels() {
  return MakeSgemmUkernelsImpl<F>(
      std::make_integer_sequence<int, F::kMr>{},
      std::make_integer_sequence<int, F::kNr / F::V::kWidth - 1>{});
}

}  // namespace
}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_SGEMM_UKERNEL_IMPL_H_
