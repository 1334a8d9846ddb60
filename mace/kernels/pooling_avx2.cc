// pooling_avx2: the pooling row kernels on 8-lane AVX2 + FMA vectors (built
// with -mavx2 -mfma, called only when the CPU has both).

#include "mace/kernels/pooling_impl.h"

namespace mace {
namespace kernels {

template <>
const PoolingKernels &IsaKernels<PoolingKernels, VectorIsa::kAvx2>() {
  static const PoolingKernels kKernels =
      MakePoolingKernels<VecAvx2>("pooling_avx2");
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
