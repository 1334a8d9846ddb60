// sgemm_8x32_avx512: AVX-512F micro-kernel (compiled with -mavx512f and
// friends, called only when the CPU has AVX-512F). 8 rows x 32 columns = 16
// zmm accumulators + 2 for the B row + 1 broadcast of A, well inside the 32
// registers; per k step 10 loads feed 16 FMAs. A half-width variant serves
// panels of at most 16 real columns.

// GCC 12 flags the _mm512_undefined_ps() inside AVX-512 intrinsics such as
// _mm512_max_ps as maybe uninitialized once they are inlined (a known false
// positive); the value is never read.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include "mace/kernels/sgemm_ukernel.h"

namespace mace {
namespace kernels {
namespace {

constexpr int kNr = 32;

// kHalf: the narrow variant, for a panel whose columns past 16 are all
// padding (n <= 16, or the last panel of such a remainder): the same packed
// panel, only its first 16 columns read and written, half the FMAs.
template <int kRows, bool kHalf>
void sgemm_8x32_avx512(const SgemmTileA &a, const float *b, const float *bias,
                       const float *clamp, const float *addend, float *c,
                       int64_t ldc, const char *prefetch) {
  __m512 acc0[kRows];
  __m512 acc1[kRows];
  const __m512 bias0 =
      bias != nullptr ? _mm512_loadu_ps(bias) : _mm512_setzero_ps();
  const __m512 bias1 = bias != nullptr && !kHalf ? _mm512_loadu_ps(bias + 16)
                                                 : _mm512_setzero_ps();
  ForEachRow<kRows>([&](auto r) {
    acc0[r] = bias0;
    acc1[r] = bias1;
  });
  if (addend != nullptr) {
    ForEachRow<kRows>([&](auto r) {
      acc0[r] = _mm512_add_ps(acc0[r], _mm512_loadu_ps(addend + r * ldc));
      if (!kHalf) {
        acc1[r] =
            _mm512_add_ps(acc1[r], _mm512_loadu_ps(addend + r * ldc + 16));
      }
    });
  }
  const int64_t lda = a.lda;
  // A kernel of few chains (a row of a half-width kernel is one vector, of
  // a full one two) sums its odd steps into a second set, odd0 / odd1.
  constexpr bool kPaired = SgemmPairsSteps(kRows, kHalf ? 1 : 2);
  __m512 odd0[kRows];
  __m512 odd1[kRows];
  if constexpr (kPaired) {
    ForEachRow<kRows>([&](auto r) {
      odd0[r] = _mm512_setzero_ps();
      odd1[r] = _mm512_setzero_ps();
    });
  }
  ForEachRunStep<kNr, kPaired>(
      a, b, prefetch,
      [&](const float *a_run, const float *b_run, int64_t p, auto parity) {
        const __m512 b0 = _mm512_loadu_ps(b_run + p * kNr);
        const __m512 b1 = kHalf ? b0 : _mm512_loadu_ps(b_run + p * kNr + 16);
        ForEachRow<kRows>([&](auto r) {
          const __m512 ar = _mm512_set1_ps(a_run[r * lda + p]);
          if constexpr (kPaired && parity == 1) {
            odd0[r] = _mm512_fmadd_ps(ar, b0, odd0[r]);
            if constexpr (!kHalf) odd1[r] = _mm512_fmadd_ps(ar, b1, odd1[r]);
          } else {
            acc0[r] = _mm512_fmadd_ps(ar, b0, acc0[r]);
            if constexpr (!kHalf) acc1[r] = _mm512_fmadd_ps(ar, b1, acc1[r]);
          }
        });
      });
  if constexpr (kPaired) {
    ForEachRow<kRows>([&](auto r) {
      acc0[r] = _mm512_add_ps(acc0[r], odd0[r]);
      if constexpr (!kHalf) acc1[r] = _mm512_add_ps(acc1[r], odd1[r]);
    });
  }
  if (clamp != nullptr) {
    // max_ps returns its second operand when either is NaN.
    const __m512 lo = _mm512_set1_ps(clamp[0]);
    const __m512 hi = _mm512_set1_ps(clamp[1]);
    ForEachRow<kRows>([&](auto r) {
      acc0[r] = _mm512_min_ps(_mm512_max_ps(acc0[r], lo), hi);
      if (!kHalf) acc1[r] = _mm512_min_ps(_mm512_max_ps(acc1[r], lo), hi);
    });
  }
  ForEachRow<kRows>([&](auto r) {
    _mm512_storeu_ps(c + r * ldc, acc0[r]);
    if (!kHalf) _mm512_storeu_ps(c + r * ldc + 16, acc1[r]);
  });
}

}  // namespace

const SgemmUkernels &SgemmUkernels8x32Avx512() {
  static const SgemmUkernels kUkernels = {
      "sgemm_8x32_avx512",
      8,
      kNr,
      {nullptr, sgemm_8x32_avx512<1, false>, sgemm_8x32_avx512<2, false>,
       sgemm_8x32_avx512<3, false>, sgemm_8x32_avx512<4, false>,
       sgemm_8x32_avx512<5, false>, sgemm_8x32_avx512<6, false>,
       sgemm_8x32_avx512<7, false>, sgemm_8x32_avx512<8, false>},
      {nullptr, sgemm_8x32_avx512<1, true>, sgemm_8x32_avx512<2, true>,
       sgemm_8x32_avx512<3, true>, sgemm_8x32_avx512<4, true>,
       sgemm_8x32_avx512<5, true>, sgemm_8x32_avx512<6, true>,
       sgemm_8x32_avx512<7, true>, sgemm_8x32_avx512<8, true>}};
  return kUkernels;
}

}  // namespace kernels
}  // namespace mace
