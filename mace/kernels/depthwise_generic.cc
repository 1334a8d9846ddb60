// depthwise_generic: the depthwise row kernels on portable 4-lane vectors (the
// compiler's baseline SIMD).

#include "mace/kernels/depthwise_impl.h"

namespace mace {
namespace kernels {

template <>
const DepthwiseKernels &IsaKernels<DepthwiseKernels, VectorIsa::kGeneric>() {
  static const DepthwiseKernels kKernels =
      MakeDepthwiseKernels<VecGeneric>("depthwise_generic");
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
