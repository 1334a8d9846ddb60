// softmax_neon: the softmax kernels on 4-lane AArch64 NEON vectors.
// Empty on other targets.

#if defined(__aarch64__)

#include "mace/kernels/softmax_impl.h"

namespace mace {
namespace kernels {

template <>
const SoftmaxKernels &IsaKernels<SoftmaxKernels, VectorIsa::kNeon>() {
  static const SoftmaxKernels kKernels =
      MakeSoftmaxKernels<VecNeon>("softmax_neon");
  return kKernels;
}

}  // namespace kernels
}  // namespace mace

#endif  // defined(__aarch64__)
