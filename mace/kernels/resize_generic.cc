// resize_generic: the resize row kernels on portable 4-lane vectors (the
// compiler's baseline SIMD).

#include "mace/kernels/resize_impl.h"

namespace mace {
namespace kernels {

template <>
const ResizeKernels &IsaKernels<ResizeKernels, VectorIsa::kGeneric>() {
  static const ResizeKernels kKernels =
      MakeResizeKernels<VecGeneric>("resize_generic");
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
