#include "mace/kernels/interleave.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace mace {
namespace kernels {

void InterleaveThreePlanes(const float *src, int64_t plane, int64_t rows,
                           float *dst) {
  const float *a = src;
  const float *b = src + plane;
  const float *c = src + 2 * plane;
  int64_t r = 0;
#if defined(__SSE2__)
  for (; r + 4 <= rows; r += 4) {
    const __m128 va = _mm_loadu_ps(a + r);
    const __m128 vb = _mm_loadu_ps(b + r);
    const __m128 vc = _mm_loadu_ps(c + r);
    const __m128 ab_lo = _mm_unpacklo_ps(va, vb);  // a0 b0 a1 b1
    const __m128 ab_hi = _mm_unpackhi_ps(va, vb);  // a2 b2 a3 b3
    // a0 b0 c0 a1 | b1 c1 a2 b2 | c2 a3 b3 c3
    const __m128 out0 = _mm_shuffle_ps(
        ab_lo, _mm_shuffle_ps(vc, ab_lo, _MM_SHUFFLE(2, 2, 0, 0)),
        _MM_SHUFFLE(2, 0, 1, 0));
    const __m128 out1 =
        _mm_shuffle_ps(_mm_shuffle_ps(ab_lo, vc, _MM_SHUFFLE(1, 1, 3, 3)),
                       ab_hi, _MM_SHUFFLE(1, 0, 2, 0));
    const __m128 out2 =
        _mm_shuffle_ps(_mm_shuffle_ps(vc, ab_hi, _MM_SHUFFLE(2, 2, 2, 2)),
                       _mm_shuffle_ps(ab_hi, vc, _MM_SHUFFLE(3, 3, 3, 3)),
                       _MM_SHUFFLE(2, 0, 2, 0));
    float *out = dst + 3 * r;
    _mm_storeu_ps(out, out0);
    _mm_storeu_ps(out + 4, out1);
    _mm_storeu_ps(out + 8, out2);
  }
#elif defined(__aarch64__)
  for (; r + 4 <= rows; r += 4) {
    float32x4x3_t v;
    v.val[0] = vld1q_f32(a + r);
    v.val[1] = vld1q_f32(b + r);
    v.val[2] = vld1q_f32(c + r);
    vst3q_f32(dst + 3 * r, v);
  }
#endif
  for (; r < rows; ++r) {
    dst[3 * r] = a[r];
    dst[3 * r + 1] = b[r];
    dst[3 * r + 2] = c[r];
  }
}

}  // namespace kernels
}  // namespace mace
