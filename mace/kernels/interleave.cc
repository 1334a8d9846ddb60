#include "mace/kernels/interleave.h"

#include <algorithm>

#include "mace/kernels/interleave_impl.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace mace {
namespace kernels {
namespace {

// Rows of one run of TransposeRows: a run of a 32-column destination
// (an SGEMM panel) is 8 KiB, and its four source streams 256 bytes each.
constexpr int64_t kTransposeRunRows = 64;

// Four source rows' values [r, r + 4) into four destination rows.
inline void Transpose4x4(const float *src, int64_t src_stride, float *dst,
                         int64_t dst_stride) {
#if defined(__SSE2__)
  __m128 a0 = _mm_loadu_ps(src);
  __m128 a1 = _mm_loadu_ps(src + src_stride);
  __m128 a2 = _mm_loadu_ps(src + 2 * src_stride);
  __m128 a3 = _mm_loadu_ps(src + 3 * src_stride);
  _MM_TRANSPOSE4_PS(a0, a1, a2, a3);
  _mm_storeu_ps(dst, a0);
  _mm_storeu_ps(dst + dst_stride, a1);
  _mm_storeu_ps(dst + 2 * dst_stride, a2);
  _mm_storeu_ps(dst + 3 * dst_stride, a3);
#elif defined(__aarch64__)
  const float32x4_t a0 = vld1q_f32(src);
  const float32x4_t a1 = vld1q_f32(src + src_stride);
  const float32x4_t a2 = vld1q_f32(src + 2 * src_stride);
  const float32x4_t a3 = vld1q_f32(src + 3 * src_stride);
  // Pairs of lanes first, then pairs of pairs as 64-bit lanes.
  const float64x2_t t0 = vreinterpretq_f64_f32(vtrn1q_f32(a0, a1));
  const float64x2_t t1 = vreinterpretq_f64_f32(vtrn2q_f32(a0, a1));
  const float64x2_t t2 = vreinterpretq_f64_f32(vtrn1q_f32(a2, a3));
  const float64x2_t t3 = vreinterpretq_f64_f32(vtrn2q_f32(a2, a3));
  vst1q_f32(dst, vreinterpretq_f32_f64(vtrn1q_f64(t0, t2)));
  vst1q_f32(dst + dst_stride, vreinterpretq_f32_f64(vtrn1q_f64(t1, t3)));
  vst1q_f32(dst + 2 * dst_stride, vreinterpretq_f32_f64(vtrn2q_f64(t0, t2)));
  vst1q_f32(dst + 3 * dst_stride, vreinterpretq_f32_f64(vtrn2q_f64(t1, t3)));
#else
  for (int r = 0; r < 4; ++r) {
    for (int j = 0; j < 4; ++j) {
      dst[r * dst_stride + j] = src[j * src_stride + r];
    }
  }
#endif
}

}  // namespace

void InterleaveThreePlanes(const float *src, int64_t plane, int64_t rows,
                           float *dst) {
  InterleaveThreePlanes(SelectedVectorIsa(), src, plane, rows, dst);
}

void InterleaveThreePlanes(VectorIsa isa, const float *src, int64_t plane,
                           int64_t rows, float *dst) {
#if defined(__x86_64__)
  if (isa == VectorIsa::kAvx512 && VectorIsaAvailable(isa)) {
    InterleaveThreePlanesAvx512(src, plane, rows, dst);
    return;
  }
#endif
  InterleaveThreePlanesBaseline(src, plane, rows, dst);
}

void InterleaveThreePlanesBaseline(const float *src, int64_t plane,
                                   int64_t rows, float *dst) {
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

void TransposeRows(const float *src, int64_t src_stride, int64_t rows,
                   int64_t cols, float *dst, int64_t dst_stride) {
  for (int64_t r0 = 0; r0 < rows; r0 += kTransposeRunRows) {
    const int64_t r_end = std::min(rows, r0 + kTransposeRunRows);
    int64_t j = 0;
    for (; j + 4 <= cols; j += 4) {
      const float *column = src + j * src_stride;
      int64_t r = r0;
      for (; r + 4 <= r_end; r += 4) {
        Transpose4x4(column + r, src_stride, dst + r * dst_stride + j,
                     dst_stride);
      }
      for (; r < r_end; ++r) {
        for (int64_t q = 0; q < 4; ++q) {
          dst[r * dst_stride + j + q] = column[q * src_stride + r];
        }
      }
    }
    for (; j < cols; ++j) {
      for (int64_t r = r0; r < r_end; ++r) {
        dst[r * dst_stride + j] = src[j * src_stride + r];
      }
    }
  }
}

}  // namespace kernels
}  // namespace mace
