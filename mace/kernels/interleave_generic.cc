// interleave_generic: the baseline InterleaveThreePlanes (interleave.cc).

#include "mace/kernels/interleave_impl.h"

namespace mace {
namespace kernels {

template <>
const InterleaveKernels &IsaKernels<InterleaveKernels, VectorIsa::kGeneric>() {
  static const InterleaveKernels kKernels{InterleaveThreePlanesBaseline};
  return kKernels;
}

}  // namespace kernels
}  // namespace mace
