// binary_channels_avx2: BinaryChannels on 8-lane AVX2 vectors (built with
// -mavx2 -mfma, called only when the CPU has both).

#include "mace/kernels/binary_channels_impl.h"

namespace mace {
namespace kernels {

template <>
const BinaryChannelsKernels &
IsaKernels<BinaryChannelsKernels, VectorIsa::kAvx2>() {
  static const BinaryChannelsKernels kKernels{BinaryRowsKernel<VecAvx2>};
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
