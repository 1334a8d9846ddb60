// pooling_neon: the pooling row kernels on 4-lane AArch64 NEON vectors.
// Empty on other targets.

#if defined(__aarch64__)

#include "mace/kernels/pooling_impl.h"

namespace mace {
namespace kernels {

template <>
const PoolingKernels &IsaKernels<PoolingKernels, VectorIsa::kNeon>() {
  static const PoolingKernels kKernels =
      MakePoolingKernels<VecNeon>("pooling_neon");
  return kKernels;
}

}  // namespace kernels
}  // namespace mace

#endif  // defined(__aarch64__)
