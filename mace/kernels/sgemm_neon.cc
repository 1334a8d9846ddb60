// sgemm_4x16_neon: AArch64 NEON micro-kernel. 4 rows x 16 columns = 16
// q-register accumulators + 4 for the B row, inside the 32 registers; each
// A value is multiplied in by vfmaq_n_f32. A half-width variant serves
// panels whose columns past 8 are padding. Empty on other targets.

#if defined(__aarch64__)

#include <arm_neon.h>

#include "mace/kernels/sgemm_ukernel.h"

namespace mace {
namespace kernels {
namespace {

constexpr int kNr = 16;

// kHalf: the narrow variant, for a panel whose columns past 8 are all
// padding (24 or 40 output channels leave one): the same packed panel, only
// its first 8 columns read and written, half the FMAs.
template <int kRows, bool kHalf>
void sgemm_4x16_neon(const SgemmTileA &a, const float *b, const float *bias,
                     const float *clamp, const float *addend, float *c,
                     int64_t ldc, const char *prefetch) {
  float32x4_t acc0[kRows], acc1[kRows], acc2[kRows], acc3[kRows];
  const float32x4_t zero = vdupq_n_f32(0.0f);
  const float32x4_t bias0 = bias != nullptr ? vld1q_f32(bias) : zero;
  const float32x4_t bias1 = bias != nullptr ? vld1q_f32(bias + 4) : zero;
  const float32x4_t bias2 =
      bias != nullptr && !kHalf ? vld1q_f32(bias + 8) : zero;
  const float32x4_t bias3 =
      bias != nullptr && !kHalf ? vld1q_f32(bias + 12) : zero;
  ForEachRow<kRows>([&](auto r) {
    acc0[r] = bias0;
    acc1[r] = bias1;
    acc2[r] = bias2;
    acc3[r] = bias3;
  });
  if (addend != nullptr) {
    ForEachRow<kRows>([&](auto r) {
      acc0[r] = vaddq_f32(acc0[r], vld1q_f32(addend + r * ldc));
      acc1[r] = vaddq_f32(acc1[r], vld1q_f32(addend + r * ldc + 4));
      if (!kHalf) {
        acc2[r] = vaddq_f32(acc2[r], vld1q_f32(addend + r * ldc + 8));
        acc3[r] = vaddq_f32(acc3[r], vld1q_f32(addend + r * ldc + 12));
      }
    });
  }
  const int64_t lda = a.lda;
  ForEachRunStep<kNr>(
      a, b, prefetch,
      [&](const float *a_run, const float *b_run, int64_t p, auto /*parity*/) {
        const float *row = b_run + p * kNr;
        const float32x4_t b0 = vld1q_f32(row);
        const float32x4_t b1 = vld1q_f32(row + 4);
        const float32x4_t b2 = kHalf ? b0 : vld1q_f32(row + 8);
        const float32x4_t b3 = kHalf ? b1 : vld1q_f32(row + 12);
        ForEachRow<kRows>([&](auto r) {
          const float ar = a_run[r * lda + p];
          acc0[r] = vfmaq_n_f32(acc0[r], b0, ar);
          acc1[r] = vfmaq_n_f32(acc1[r], b1, ar);
          if (!kHalf) {
            acc2[r] = vfmaq_n_f32(acc2[r], b2, ar);
            acc3[r] = vfmaq_n_f32(acc3[r], b3, ar);
          }
        });
      });
  if (clamp != nullptr) {
    // The "nm" forms return the number when one operand is NaN.
    const float32x4_t lo = vdupq_n_f32(clamp[0]);
    const float32x4_t hi = vdupq_n_f32(clamp[1]);
    ForEachRow<kRows>([&](auto r) {
      acc0[r] = vminnmq_f32(vmaxnmq_f32(acc0[r], lo), hi);
      acc1[r] = vminnmq_f32(vmaxnmq_f32(acc1[r], lo), hi);
      if (!kHalf) {
        acc2[r] = vminnmq_f32(vmaxnmq_f32(acc2[r], lo), hi);
        acc3[r] = vminnmq_f32(vmaxnmq_f32(acc3[r], lo), hi);
      }
    });
  }
  ForEachRow<kRows>([&](auto r) {
    vst1q_f32(c + r * ldc, acc0[r]);
    vst1q_f32(c + r * ldc + 4, acc1[r]);
    if (!kHalf) {
      vst1q_f32(c + r * ldc + 8, acc2[r]);
      vst1q_f32(c + r * ldc + 12, acc3[r]);
    }
  });
}

}  // namespace

const SgemmUkernels &SgemmUkernels4x16Neon() {
  static const SgemmUkernels kUkernels = {
      "sgemm_4x16_neon",
      4,
      kNr,
      {nullptr, sgemm_4x16_neon<1, false>, sgemm_4x16_neon<2, false>,
       sgemm_4x16_neon<3, false>, sgemm_4x16_neon<4, false>},
      {nullptr, sgemm_4x16_neon<1, true>, sgemm_4x16_neon<2, true>,
       sgemm_4x16_neon<3, true>, sgemm_4x16_neon<4, true>}};
  return kUkernels;
}

}  // namespace kernels
}  // namespace mace

#endif  // defined(__aarch64__)
