// Internal to mace/kernels: how a driver finds its family's kernels for a
// vector ISA.
//
// A family (a table type such as DepthwiseKernels) has one table per ISA,
// defined by <family>_<isa>.cc, which the build compiles with that ISA's
// flags and only on the architecture that has it (x86-64: generic, AVX2,
// AVX-512; aarch64: generic, NEON). Each file defines its ISA's
// specialization of IsaKernels; the family's impl header declares the four.

#ifndef MACE_KERNELS_ISA_KERNELS_H_
#define MACE_KERNELS_ISA_KERNELS_H_

#include "mace/kernels/activation.h"

namespace mace {
namespace kernels {

template <class Kernels, VectorIsa kIsa>
const Kernels &IsaKernels();

// The table of `isa`, or the generic one where this build has none.
template <class Kernels>
const Kernels &KernelsFor(VectorIsa isa) {
  switch (isa) {
#if defined(__x86_64__)
    case VectorIsa::kAvx2:
      return IsaKernels<Kernels, VectorIsa::kAvx2>();
    case VectorIsa::kAvx512:
      return IsaKernels<Kernels, VectorIsa::kAvx512>();
#endif
#if defined(__aarch64__)
    case VectorIsa::kNeon:
      return IsaKernels<Kernels, VectorIsa::kNeon>();
#endif
    default:
      return IsaKernels<Kernels, VectorIsa::kGeneric>();
  }
}

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_ISA_KERNELS_H_
