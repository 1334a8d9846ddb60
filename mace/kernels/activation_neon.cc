// activation_neon: the activation kernel on 4-lane AArch64 NEON vectors. Empty
// on other targets.

#if defined(__aarch64__)

#include "mace/kernels/activation_impl.h"

namespace mace {
namespace kernels {

template <>
const ActivationKernels &IsaKernels<ActivationKernels, VectorIsa::kNeon>() {
  static const ActivationKernels kKernels = {"activation_neon",
                                             ActivateChannelsKernel<VecNeon>};
  return kKernels;
}

}  // namespace kernels
}  // namespace mace

#endif  // defined(__aarch64__)
