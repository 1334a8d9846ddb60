// Winograd transforms built for the baseline target (SSE2 on x86-64): the
// loops over 16 channel lanes of winograd_transform.h become 4-wide ops.

#include "mace/kernels/winograd_1d_transform.h"
#include "mace/kernels/winograd_transform.h"

namespace mace {
namespace kernels {
namespace {

struct GenericTag {};

}  // namespace

const WinogradTransforms &WinogradTransformsGeneric(int kernel, int tile_m) {
  return WinogradTransformsFor<GenericTag>(kernel, tile_m);
}

const Winograd1dTransforms &Winograd1dTransformsGeneric(int r, int t) {
  return Winograd1dTransformsFor<GenericTag>(r, t);
}

}  // namespace kernels
}  // namespace mace
