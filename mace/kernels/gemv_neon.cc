// gemv_neon: the matrix-vector kernel on 4-lane AArch64 NEON vectors. Empty
// on other targets.

#if defined(__aarch64__)

#include "mace/kernels/gemv_impl.h"

namespace mace {
namespace kernels {

template <>
const GemvKernels &IsaKernels<GemvKernels, VectorIsa::kNeon>() {
  static const GemvKernels kKernels = MakeGemvKernels<VecNeon>("gemv_neon");
  return kKernels;
}

}  // namespace kernels
}  // namespace mace

#endif  // defined(__aarch64__)
