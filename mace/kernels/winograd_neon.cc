// Winograd transforms for AArch64 NEON: winograd_transform.h's loops over
// 16 channel lanes become 4 q-register operations each. Empty elsewhere.

#if defined(__aarch64__)

#include "mace/kernels/winograd_1d_transform.h"
#include "mace/kernels/winograd_transform.h"

namespace mace {
namespace kernels {
namespace {

struct NeonTag {};

}  // namespace

const WinogradTransforms &WinogradTransformsNeon(int kernel, int tile_m) {
  return WinogradTransformsFor<NeonTag>(kernel, tile_m);
}

const Winograd1dTransforms &Winograd1dTransformsNeon(int r, int t) {
  return Winograd1dTransformsFor<NeonTag>(r, t);
}

}  // namespace kernels
}  // namespace mace

#endif  // defined(__aarch64__)
