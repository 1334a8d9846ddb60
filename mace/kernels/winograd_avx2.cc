// Winograd transforms built with -mavx2 -mfma (run only on CPUs with both):
// each loop over 16 channel lanes becomes 2 ymm operations.

#include "mace/kernels/winograd_1d_transform.h"
#include "mace/kernels/winograd_transform.h"

namespace mace {
namespace kernels {
namespace {

struct Avx2Tag {};

}  // namespace

const WinogradTransforms &WinogradTransformsAvx2(int kernel, int tile_m) {
  return WinogradTransformsFor<Avx2Tag>(kernel, tile_m);
}

const Winograd1dTransforms &Winograd1dTransformsAvx2(int r, int t) {
  return Winograd1dTransformsFor<Avx2Tag>(r, t);
}

}  // namespace kernels
}  // namespace mace
