// activation_generic: the activation kernel on portable 4-lane vectors (the
// compiler's baseline SIMD).

#include "mace/kernels/activation_impl.h"

namespace mace {
namespace kernels {

template <>
const ActivationKernels &IsaKernels<ActivationKernels, VectorIsa::kGeneric>() {
  static const ActivationKernels kKernels = {
      "activation_generic", ActivateChannelsKernel<VecGeneric>};
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
