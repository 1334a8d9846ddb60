// gemv_generic: the matrix-vector kernel on portable 4-lane vectors (the
// compiler's baseline SIMD), one row at a time (gemv_impl.h says why).

#include "mace/kernels/gemv_impl.h"

namespace mace {
namespace kernels {

template <>
const GemvKernels &IsaKernels<GemvKernels, VectorIsa::kGeneric>() {
  static const GemvKernels kKernels =
      MakeGemvKernels<VecGeneric, 1>("gemv_generic");
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
