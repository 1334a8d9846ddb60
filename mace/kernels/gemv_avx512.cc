// gemv_avx512: the matrix-vector kernel on 16-lane AVX-512 vectors (built
// with the AVX-512 flags, called only when the CPU has F, BW, VL and DQ).

// GCC 12 flags the _mm512_undefined_ps() inside AVX-512 intrinsics such as
// _mm512_reduce_add_ps as maybe uninitialized once they are inlined (a known
// false positive); the value is never read.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "mace/kernels/gemv_impl.h"

namespace mace {
namespace kernels {

template <>
const GemvKernels &IsaKernels<GemvKernels, VectorIsa::kAvx512>() {
  static const GemvKernels kKernels = MakeGemvKernels<VecAvx512>("gemv_avx512");
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
