// binary_channels_neon: BinaryChannels on 4-lane AArch64 NEON vectors. Empty
// on other targets.

#if defined(__aarch64__)

#include "mace/kernels/binary_channels_impl.h"

namespace mace {
namespace kernels {

template <>
const BinaryChannelsKernels &
IsaKernels<BinaryChannelsKernels, VectorIsa::kNeon>() {
  static const BinaryChannelsKernels kKernels{BinaryRowsKernel<VecNeon>};
  return kKernels;
}

}  // namespace kernels
}  // namespace mace

#endif  // defined(__aarch64__)
