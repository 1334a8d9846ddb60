// Internal to mace/kernels: the table of InterleaveThreePlanes kernels by
// vector ISA (isa_kernels.h). Only AVX-512 has one of its own; the other
// tables hold the baseline kernel of interleave.cc (SSE2 on x86-64, NEON
// on aarch64, a plain loop elsewhere).

#ifndef MACE_KERNELS_INTERLEAVE_IMPL_H_
#define MACE_KERNELS_INTERLEAVE_IMPL_H_

#include <cstdint>

#include "mace/kernels/isa_kernels.h"

namespace mace {
namespace kernels {

// dst[3 * r + j] = src[j * plane + r] for r < rows and j < 3.
using ThreePlanesFn = void (*)(const float *src, int64_t plane, int64_t rows,
                               float *dst);

struct InterleaveKernels {
  ThreePlanesFn three_planes;
};

void InterleaveThreePlanesBaseline(const float *src, int64_t plane,
                                   int64_t rows, float *dst);

// Defined by the per-ISA files that the build includes.
template <>
const InterleaveKernels &IsaKernels<InterleaveKernels, VectorIsa::kGeneric>();
template <>
const InterleaveKernels &IsaKernels<InterleaveKernels, VectorIsa::kAvx2>();
template <>
const InterleaveKernels &IsaKernels<InterleaveKernels, VectorIsa::kAvx512>();
template <>
const InterleaveKernels &IsaKernels<InterleaveKernels, VectorIsa::kNeon>();

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_INTERLEAVE_IMPL_H_
