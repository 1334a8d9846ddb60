// activation_avx2: the activation kernel on 8-lane AVX2 + FMA vectors (built
// with -mavx2 -mfma, called only when the CPU has both).

#include "mace/kernels/activation_impl.h"

namespace mace {
namespace kernels {

template <>
const ActivationKernels &IsaKernels<ActivationKernels, VectorIsa::kAvx2>() {
  static const ActivationKernels kKernels = {"activation_avx2",
                                             ActivateChannelsKernel<VecAvx2>};
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
