// softmax_generic: the softmax kernels on portable 4-lane vectors (the
// compiler's baseline SIMD).

#include "mace/kernels/softmax_impl.h"

namespace mace {
namespace kernels {

template <>
const SoftmaxKernels &IsaKernels<SoftmaxKernels, VectorIsa::kGeneric>() {
  static const SoftmaxKernels kKernels =
      MakeSoftmaxKernels<VecGeneric>("softmax_generic");
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
