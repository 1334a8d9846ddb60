// Internal to mace/kernels: the kernels InterleaveThreePlanes (interleave.h)
// chooses from. Only AVX-512 has one of its own; every other ISA runs the
// baseline kernel (SSE2 on x86-64, NEON on aarch64, a plain loop
// elsewhere), so there is no per-ISA table (isa_kernels.h) to fill.

#ifndef MACE_KERNELS_INTERLEAVE_IMPL_H_
#define MACE_KERNELS_INTERLEAVE_IMPL_H_

#include <cstdint>

namespace mace {
namespace kernels {

// dst[3 * r + j] = src[j * plane + r] for r < rows and j < 3.
void InterleaveThreePlanesBaseline(const float *src, int64_t plane,
                                   int64_t rows, float *dst);

#if defined(__x86_64__)
// interleave_avx512.cc, built on x86-64 only; call it only when the CPU
// has AVX-512.
void InterleaveThreePlanesAvx512(const float *src, int64_t plane, int64_t rows,
                                 float *dst);
#endif

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_INTERLEAVE_IMPL_H_
