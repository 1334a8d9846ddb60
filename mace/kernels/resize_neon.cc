// resize_neon: the resize row kernels on 4-lane AArch64 NEON vectors.
// Empty on other targets.

#if defined(__aarch64__)

#include "mace/kernels/resize_impl.h"

namespace mace {
namespace kernels {

template <>
const ResizeKernels &IsaKernels<ResizeKernels, VectorIsa::kNeon>() {
  static const ResizeKernels kKernels =
      MakeResizeKernels<VecNeon>("resize_neon");
  return kKernels;
}

}  // namespace kernels
}  // namespace mace

#endif  // defined(__aarch64__)
