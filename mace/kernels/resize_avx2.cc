// resize_avx2: the resize row kernels on 8-lane AVX2 + FMA vectors (built
// with -mavx2 -mfma, called only when the CPU has both).

#include "mace/kernels/resize_impl.h"

namespace mace {
namespace kernels {

template <>
const ResizeKernels &IsaKernels<ResizeKernels, VectorIsa::kAvx2>() {
  static const ResizeKernels kKernels =
      MakeResizeKernels<VecAvx2>("resize_avx2");
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
