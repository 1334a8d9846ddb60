// depthwise_neon: the depthwise row kernels on 4-lane AArch64 NEON vectors.
// Empty on other targets.

#if defined(__aarch64__)

#include "mace/kernels/depthwise_impl.h"

namespace mace {
namespace kernels {

template <>
const DepthwiseKernels &IsaKernels<DepthwiseKernels, VectorIsa::kNeon>() {
  static const DepthwiseKernels kKernels =
      MakeDepthwiseKernels<VecNeon>("depthwise_neon");
  return kKernels;
}

}  // namespace kernels
}  // namespace mace

#endif  // defined(__aarch64__)
