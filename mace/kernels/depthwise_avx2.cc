// depthwise_avx2: the depthwise row kernels on 8-lane AVX2 + FMA vectors (built
// with -mavx2 -mfma, called only when the CPU has both).

#include "mace/kernels/depthwise_impl.h"

namespace mace {
namespace kernels {

template <>
const DepthwiseKernels &IsaKernels<DepthwiseKernels, VectorIsa::kAvx2>() {
  static const DepthwiseKernels kKernels =
      MakeDepthwiseKernels<VecAvx2>("depthwise_avx2");
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
