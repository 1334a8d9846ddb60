// pooling_generic: the pooling row kernels on portable 4-lane vectors (the
// compiler's baseline SIMD).

#include "mace/kernels/pooling_impl.h"

namespace mace {
namespace kernels {

template <>
const PoolingKernels &IsaKernels<PoolingKernels, VectorIsa::kGeneric>() {
  static const PoolingKernels kKernels =
      MakePoolingKernels<VecGeneric>("pooling_generic");
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
