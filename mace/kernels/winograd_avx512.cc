// Winograd transforms built with -mavx512f (run only on CPUs with it): each
// loop over 16 channel lanes becomes one zmm operation.

#include "mace/kernels/winograd_transform.h"

namespace mace {
namespace kernels {
namespace {

struct Avx512Tag {};

}  // namespace

const WinogradTransforms &WinogradTransformsAvx512(int tile_m) {
  return WinogradTransformsFor<Avx512Tag>(tile_m);
}

}  // namespace kernels
}  // namespace mace
