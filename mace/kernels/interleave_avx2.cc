// interleave_avx2: AVX2 has no two-source permute across its 256 bits, so
// it keeps the baseline SSE2 kernel (interleave.cc).

#include "mace/kernels/interleave_impl.h"

namespace mace {
namespace kernels {

template <>
const InterleaveKernels &IsaKernels<InterleaveKernels, VectorIsa::kAvx2>() {
  static const InterleaveKernels kKernels{InterleaveThreePlanesBaseline};
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
