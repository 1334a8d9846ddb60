// pooling_avx512: the pooling row kernels on 16-lane AVX-512 vectors (built
// with the AVX-512 flags, called only when the CPU has F, BW, VL and DQ).

// GCC 12 flags the _mm512_undefined_ps() inside AVX-512 intrinsics such as
// _mm512_max_ps as maybe uninitialized once they are inlined (a known false
// positive); the value is never read.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "mace/kernels/pooling_impl.h"

namespace mace {
namespace kernels {

template <>
const PoolingKernels &IsaKernels<PoolingKernels, VectorIsa::kAvx512>() {
  static const PoolingKernels kKernels =
      MakePoolingKernels<VecAvx512>("pooling_avx512");
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
