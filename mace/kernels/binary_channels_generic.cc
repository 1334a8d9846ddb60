// binary_channels_generic: BinaryChannels on portable 4-lane vectors (the
// compiler's baseline SIMD).

#include "mace/kernels/binary_channels_impl.h"

namespace mace {
namespace kernels {

template <>
const BinaryChannelsKernels &
IsaKernels<BinaryChannelsKernels, VectorIsa::kGeneric>() {
  static const BinaryChannelsKernels kKernels{BinaryRowsKernel<VecGeneric>};
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
