// sgemm_6x64_avx512: AVX-512F micro-kernel (compiled with -mavx512f and
// friends, called only when the CPU has AVX-512F). 6 rows x 64 columns = 24
// zmm accumulators + 4 for the B row + 1 broadcast of A, inside the 32
// registers; per k step 10 loads feed 24 FMAs. Narrow variants of 16, 32
// and 48 columns serve panels whose other columns are padding (the last
// panel of 40 or 80 output channels).
//
// Why 64 columns: on an Intel core with two 512-bit FMA units (Ice Lake
// server, 2026-12-01) a kernel of two B vectors a row, whose every A
// broadcast feeds 2 FMAs, ran at 78-84% of the FMA peak with all its data
// in L1, four B vectors a row (4 FMAs a broadcast) at 96-100%; the
// 8 x 32 kernel this replaces was 3-20% slower than this one on the GEMM
// shapes of ResNet-50, MobileNet and EfficientNet (in-process A/B,
// 1 thread), save very deep K (1.04) and N = 24 (0.94 on 6-row narrow
// tiles; see NarrowRows).

#include <algorithm>

#include "mace/kernels/sgemm_ukernel_impl.h"

namespace mace {
namespace kernels {
namespace {

struct SgemmAvx512Family {
  using V = VecAvx512;
  static constexpr const char *kName = "sgemm_6x64_avx512";
  static constexpr int kMr = 6;
  static constexpr int kNr = 64;
  static constexpr bool kPairSteps = true;
  static constexpr int kRegisters = 32;
  // As many accumulators as the full tile, at most kSgemmMaxNarrowMr rows:
  // a 32-column panel on 6 rows (12 accumulators, a broadcast for every 2
  // FMAs) ran MobileNet-v2's 96 -> 24 projection at 0.66 of the 8 x 32
  // kernel's speed on the lent Xeon.
  static constexpr int NarrowRows(int vectors) {
    return std::min(kSgemmMaxNarrowMr, kMr * (kNr / V::kWidth) / vectors);
  }
};

}  // namespace

const SgemmUkernels &SgemmUkernels6x64Avx512() {
  static constexpr SgemmUkernels kUkernels =
      MakeSgemmUkernels<SgemmAvx512Family>();
  return kUkernels;
}

}  // namespace kernels
}  // namespace mace
