// sgemm_6x16_avx2: AVX2 + FMA micro-kernel (compiled with -mavx2 -mfma,
// called only when the CPU has both). 6 rows x 16 columns = 12 ymm
// accumulators + 2 for the B row + 1 broadcast of A: 15 of 16 registers;
// per k step 8 loads feed 12 FMAs, enough to keep both FMA ports busy. A
// half-width variant serves panels whose columns past 8 are padding.

#include <immintrin.h>

#include "mace/kernels/sgemm_ukernel.h"

namespace mace {
namespace kernels {
namespace {

constexpr int kNr = 16;

// kHalf: the narrow variant, for a panel whose columns past 8 are all
// padding (24 or 40 output channels leave one): the same packed panel, only
// its first 8 columns read and written, half the FMAs.
template <int kRows, bool kHalf>
void sgemm_6x16_avx2(const SgemmTileA &a, const float *b, const float *bias,
                     const float *clamp, const float *addend, float *c,
                     int64_t ldc, const char *prefetch) {
  __m256 acc0[kRows];
  __m256 acc1[kRows];
  const __m256 bias0 =
      bias != nullptr ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
  const __m256 bias1 = bias != nullptr && !kHalf ? _mm256_loadu_ps(bias + 8)
                                                 : _mm256_setzero_ps();
  ForEachRow<kRows>([&](auto r) {
    acc0[r] = bias0;
    acc1[r] = bias1;
  });
  if (addend != nullptr) {
    ForEachRow<kRows>([&](auto r) {
      acc0[r] = _mm256_add_ps(acc0[r], _mm256_loadu_ps(addend + r * ldc));
      if (!kHalf) {
        acc1[r] = _mm256_add_ps(acc1[r], _mm256_loadu_ps(addend + r * ldc + 8));
      }
    });
  }
  const int64_t lda = a.lda;
  // A kernel of few chains (a row of a half-width kernel is one vector, of
  // a full one two) sums its odd steps into a second set, odd0 / odd1.
  constexpr bool kPaired = SgemmPairsSteps(kRows, kHalf ? 1 : 2);
  __m256 odd0[kRows];
  __m256 odd1[kRows];
  if constexpr (kPaired) {
    ForEachRow<kRows>([&](auto r) {
      odd0[r] = _mm256_setzero_ps();
      odd1[r] = _mm256_setzero_ps();
    });
  }
  ForEachRunStep<kNr, kPaired>(
      a, b, prefetch,
      [&](const float *a_run, const float *b_run, int64_t p, auto parity) {
        const __m256 b0 = _mm256_loadu_ps(b_run + p * kNr);
        const __m256 b1 = kHalf ? b0 : _mm256_loadu_ps(b_run + p * kNr + 8);
        ForEachRow<kRows>([&](auto r) {
          const __m256 ar = _mm256_broadcast_ss(a_run + r * lda + p);
          if constexpr (kPaired && parity == 1) {
            odd0[r] = _mm256_fmadd_ps(ar, b0, odd0[r]);
            if constexpr (!kHalf) odd1[r] = _mm256_fmadd_ps(ar, b1, odd1[r]);
          } else {
            acc0[r] = _mm256_fmadd_ps(ar, b0, acc0[r]);
            if constexpr (!kHalf) acc1[r] = _mm256_fmadd_ps(ar, b1, acc1[r]);
          }
        });
      });
  if constexpr (kPaired) {
    ForEachRow<kRows>([&](auto r) {
      acc0[r] = _mm256_add_ps(acc0[r], odd0[r]);
      if constexpr (!kHalf) acc1[r] = _mm256_add_ps(acc1[r], odd1[r]);
    });
  }
  if (clamp != nullptr) {
    // max_ps returns its second operand when either is NaN.
    const __m256 lo = _mm256_set1_ps(clamp[0]);
    const __m256 hi = _mm256_set1_ps(clamp[1]);
    ForEachRow<kRows>([&](auto r) {
      acc0[r] = _mm256_min_ps(_mm256_max_ps(acc0[r], lo), hi);
      if (!kHalf) acc1[r] = _mm256_min_ps(_mm256_max_ps(acc1[r], lo), hi);
    });
  }
  ForEachRow<kRows>([&](auto r) {
    _mm256_storeu_ps(c + r * ldc, acc0[r]);
    if (!kHalf) _mm256_storeu_ps(c + r * ldc + 8, acc1[r]);
  });
}

}  // namespace

const SgemmUkernels &SgemmUkernels6x16Avx2() {
  static const SgemmUkernels kUkernels = {
      "sgemm_6x16_avx2",
      6,
      kNr,
      {nullptr, sgemm_6x16_avx2<1, false>, sgemm_6x16_avx2<2, false>,
       sgemm_6x16_avx2<3, false>, sgemm_6x16_avx2<4, false>,
       sgemm_6x16_avx2<5, false>, sgemm_6x16_avx2<6, false>},
      {nullptr, sgemm_6x16_avx2<1, true>, sgemm_6x16_avx2<2, true>,
       sgemm_6x16_avx2<3, true>, sgemm_6x16_avx2<4, true>,
       sgemm_6x16_avx2<5, true>, sgemm_6x16_avx2<6, true>}};
  return kUkernels;
}

}  // namespace kernels
}  // namespace mace
