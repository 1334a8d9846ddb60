// softmax_avx2: the softmax kernels on 8-lane AVX2 + FMA vectors (built
// with -mavx2 -mfma, called only when the CPU has both).

#include "mace/kernels/softmax_impl.h"

namespace mace {
namespace kernels {

template <>
const SoftmaxKernels &IsaKernels<SoftmaxKernels, VectorIsa::kAvx2>() {
  static const SoftmaxKernels kKernels =
      MakeSoftmaxKernels<VecAvx2>("softmax_avx2");
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
