// interleave_neon: the baseline kernel (interleave.cc), NEON's vst3q
// already. Empty on other targets.

#if defined(__aarch64__)

#include "mace/kernels/interleave_impl.h"

namespace mace {
namespace kernels {

template <>
const InterleaveKernels &IsaKernels<InterleaveKernels, VectorIsa::kNeon>() {
  static const InterleaveKernels kKernels{InterleaveThreePlanesBaseline};
  return kKernels;
}

}  // namespace kernels
}  // namespace mace

#endif  // defined(__aarch64__)
