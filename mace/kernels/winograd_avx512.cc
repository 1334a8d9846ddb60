// Winograd transforms built with -mavx512f (run only on CPUs with it): each
// loop over 16 channel lanes becomes one zmm operation.

// GCC 12 flags the _mm512_undefined_ps() inside AVX-512 intrinsics such as
// _mm512_max_ps as maybe uninitialized once they are inlined (a known false
// positive); the value is never read.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "mace/kernels/winograd_1d_transform.h"
#include "mace/kernels/winograd_transform.h"

namespace mace {
namespace kernels {
namespace {

struct Avx512Tag {};

}  // namespace

const WinogradTransforms &WinogradTransformsAvx512(int kernel, int tile_m) {
  return WinogradTransformsFor<Avx512Tag>(kernel, tile_m);
}

const Winograd1dTransforms &Winograd1dTransformsAvx512(int r, int t) {
  return Winograd1dTransformsFor<Avx512Tag>(r, t);
}

}  // namespace kernels
}  // namespace mace
