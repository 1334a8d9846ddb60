// binary_channels_avx512: BinaryChannels on 16-lane AVX-512 vectors (built
// with the AVX-512 flags, called only when the CPU has F, BW, VL and DQ).

// GCC 12's false positive on _mm512_undefined_ps() inside inlined AVX-512
// intrinsics (see activation_avx512.cc).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "mace/kernels/binary_channels_impl.h"

namespace mace {
namespace kernels {

template <>
const BinaryChannelsKernels &
IsaKernels<BinaryChannelsKernels, VectorIsa::kAvx512>() {
  static const BinaryChannelsKernels kKernels{BinaryRowsKernel<VecAvx512>};
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
