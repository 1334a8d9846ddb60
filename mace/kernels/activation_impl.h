// Internal to mace/kernels: the activation kernel table each
// activation_<isa>.cc fills with ActivateChannelsKernel (activation_vec.h)
// compiled for its ISA.

#ifndef MACE_KERNELS_ACTIVATION_IMPL_H_
#define MACE_KERNELS_ACTIVATION_IMPL_H_

#include "mace/kernels/activation.h"
#include "mace/kernels/activation_vec.h"
#include "mace/kernels/isa_kernels.h"

namespace mace {
namespace kernels {

// Applies act to `rows` rows of n values of channels [0, channels)
// repeated, ld apart; see ActivateChannelsKernel.
using ActivateFn = void (*)(const ActivationParams &act, int64_t channels,
                            const float *x, float *y, int64_t n, int64_t rows,
                            int64_t ld);

struct ActivationKernels {
  const char *name;
  ActivateFn activate;
};

// Defined by the per-ISA files that the build includes.
template <>
const ActivationKernels &IsaKernels<ActivationKernels, VectorIsa::kGeneric>();
template <>
const ActivationKernels &IsaKernels<ActivationKernels, VectorIsa::kAvx2>();
template <>
const ActivationKernels &IsaKernels<ActivationKernels, VectorIsa::kAvx512>();
template <>
const ActivationKernels &IsaKernels<ActivationKernels, VectorIsa::kNeon>();

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_ACTIVATION_IMPL_H_
