// interleave_avx512: InterleaveThreePlanes in 16-pixel blocks of AVX-512
// registers (built with the AVX-512 flags, called only when the CPU has
// them). Each of a block's three output vectors takes two permutes: a
// two-source one for its values of the first two planes, a masked one for
// the third's; SSE2's kernel spends eight shuffles on four pixels, and ran
// the input transpose of a 224x224 RGB image at the shuffle port's rate.

#include <immintrin.h>

#include <array>

#include "mace/kernels/interleave_impl.h"

namespace mace {
namespace kernels {
namespace {

constexpr int kLanes = 16;

// Where output vector `part` (0-2) of a block takes each lane from: lane j
// holds interleaved value g = 16 * part + j, pixel g / 3 of plane g % 3.
struct PartIndices {
  std::array<int, kLanes> first_two;  // a[p], or b[p] as 16 + p
  std::array<int, kLanes> third;      // c[p]
  __mmask16 third_mask;               // lanes taken from c
};

constexpr PartIndices MakePartIndices(int part) {
  PartIndices indices{};
  for (int j = 0; j < kLanes; ++j) {
    const int g = kLanes * part + j;
    const int pixel = g / 3;
    const int plane = g % 3;
    indices.first_two[j] = plane == 1 ? kLanes + pixel : pixel;
    indices.third[j] = pixel;
    if (plane == 2) {
      indices.third_mask =
          static_cast<__mmask16>(indices.third_mask | (1 << j));
    }
  }
  return indices;
}

constexpr std::array<PartIndices, 3> kParts = {
    MakePartIndices(0), MakePartIndices(1), MakePartIndices(2)};

inline __m512i LoadIndices(const std::array<int, kLanes> &indices) {
  return _mm512_loadu_si512(indices.data());
}

}  // namespace

void InterleaveThreePlanesAvx512(const float *src, int64_t plane, int64_t rows,
                                 float *dst) {
  const float *a = src;
  const float *b = src + plane;
  const float *c = src + 2 * plane;
  __m512i first_two[3];
  __m512i third[3];
  for (int part = 0; part < 3; ++part) {
    first_two[part] = LoadIndices(kParts[part].first_two);
    third[part] = LoadIndices(kParts[part].third);
  }
  int64_t r = 0;
  for (; r + kLanes <= rows; r += kLanes) {
    const __m512 va = _mm512_loadu_ps(a + r);
    const __m512 vb = _mm512_loadu_ps(b + r);
    const __m512 vc = _mm512_loadu_ps(c + r);
    float *out = dst + 3 * r;
    for (int part = 0; part < 3; ++part) {
      const __m512 ab = _mm512_permutex2var_ps(va, first_two[part], vb);
      _mm512_storeu_ps(out + part * kLanes,
                       _mm512_mask_permutexvar_ps(ab, kParts[part].third_mask,
                                                  third[part], vc));
    }
  }
  if (r < rows) {
    InterleaveThreePlanesBaseline(src + r, plane, rows - r, dst + 3 * r);
  }
}

}  // namespace kernels
}  // namespace mace
