// binary_channels_generic: BinaryChannels on portable 4-lane vectors (the
// compiler's baseline SIMD).

#include "mace/kernels/binary_channels_impl.h"

namespace mace {
namespace kernels {

BinaryRowsFn BinaryRowsGeneric() { return BinaryRowsKernel<VecGeneric>; }

}  // namespace kernels
}  // namespace mace
