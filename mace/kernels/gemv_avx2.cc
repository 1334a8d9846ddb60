// gemv_avx2: the matrix-vector kernel on 8-lane AVX2 + FMA vectors (built
// with -mavx2 -mfma, called only when the CPU has both).

#include "mace/kernels/gemv_impl.h"

namespace mace {
namespace kernels {

template <>
const GemvKernels &IsaKernels<GemvKernels, VectorIsa::kAvx2>() {
  static const GemvKernels kKernels = MakeGemvKernels<VecAvx2>("gemv_avx2");
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
