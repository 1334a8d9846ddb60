// sgemm_4x8_generic: portable micro-kernel in C++ with GCC / Clang vector
// types (4 floats: SSE2 on any x86-64, NEON on ARM, scalar code elsewhere).
// 4 x 8 accumulators = 8 vectors of 4 + 2 for the B row + 1 broadcast fit
// the 16 registers of SSE2.

#include <cstring>

#include "mace/kernels/sgemm_ukernel.h"

namespace mace {
namespace kernels {
namespace {

constexpr int kNr = 8;

typedef float Float4 __attribute__((vector_size(16)));

inline Float4 Load4(const float *p) {
  Float4 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline void Store4(float *p, Float4 v) { std::memcpy(p, &v, sizeof(v)); }

template <int kRows>
void sgemm_4x8_generic(const SgemmTileA &a, const float *b, const float *bias,
                       const float *clamp, const float *addend, float *c,
                       int64_t ldc, const char *prefetch) {
  Float4 acc0[kRows];
  Float4 acc1[kRows];
  const Float4 zero = {0.0f, 0.0f, 0.0f, 0.0f};
  const Float4 bias0 = bias != nullptr ? Load4(bias) : zero;
  const Float4 bias1 = bias != nullptr ? Load4(bias + 4) : zero;
  ForEachRow<kRows>([&](auto r) {
    acc0[r] = bias0;
    acc1[r] = bias1;
  });
  if (addend != nullptr) {
    ForEachRow<kRows>([&](auto r) {
      acc0[r] += Load4(addend + r * ldc);
      acc1[r] += Load4(addend + r * ldc + 4);
    });
  }
  const int64_t lda = a.lda;
  ForEachRunStep<kNr>(
      a, b, prefetch,
      [&](const float *a_run, const float *b_run, int64_t p, auto /*parity*/) {
        const Float4 b0 = Load4(b_run + p * kNr);
        const Float4 b1 = Load4(b_run + p * kNr + 4);
        ForEachRow<kRows>([&](auto r) {
          const float ar = a_run[r * lda + p];
          acc0[r] += ar * b0;
          acc1[r] += ar * b1;
        });
      });
  if (clamp != nullptr) {
    // A comparison with NaN is false: NaN becomes lo.
    const Float4 lo = {clamp[0], clamp[0], clamp[0], clamp[0]};
    const Float4 hi = {clamp[1], clamp[1], clamp[1], clamp[1]};
    ForEachRow<kRows>([&](auto r) {
      acc0[r] = acc0[r] > lo ? acc0[r] : lo;
      acc0[r] = acc0[r] < hi ? acc0[r] : hi;
      acc1[r] = acc1[r] > lo ? acc1[r] : lo;
      acc1[r] = acc1[r] < hi ? acc1[r] : hi;
    });
  }
  ForEachRow<kRows>([&](auto r) {
    Store4(c + r * ldc, acc0[r]);
    Store4(c + r * ldc + 4, acc1[r]);
  });
}

}  // namespace

const SgemmUkernels &SgemmUkernels4x8Generic() {
  static const SgemmUkernels kUkernels = {
      "sgemm_4x8_generic",
      4,
      kNr,
      {nullptr, sgemm_4x8_generic<1>, sgemm_4x8_generic<2>,
       sgemm_4x8_generic<3>, sgemm_4x8_generic<4>},
      {}};
  return kUkernels;
}

}  // namespace kernels
}  // namespace mace
