// sgemm_6x16_avx2: AVX2 + FMA micro-kernel (compiled with -mavx2 -mfma,
// called only when the CPU has both). 6 rows x 16 columns = 12 ymm
// accumulators + 2 for the B row + 1 broadcast of A: 15 of 16 registers;
// per k step 8 loads feed 12 FMAs, enough to keep both FMA ports busy. A
// half-width variant (MakeSgemmUkernels' narrow kernels) serves panels
// whose columns past 8 are padding (24 or 40 output channels leave one).

#include "mace/kernels/sgemm_ukernel_impl.h"

namespace mace {
namespace kernels {
namespace {

struct SgemmAvx2Family {
  using V = VecAvx2;
  static constexpr const char *kName = "sgemm_6x16_avx2";
  static constexpr int kMr = 6;
  static constexpr int kNr = 16;
  static constexpr int NarrowRows(int) { return kMr; }
  static constexpr bool kPairSteps = true;
  static constexpr int kRegisters = 16;
};

}  // namespace

const SgemmUkernels &SgemmUkernels6x16Avx2() {
  static constexpr SgemmUkernels kUkernels =
      MakeSgemmUkernels<SgemmAvx2Family>();
  return kUkernels;
}

}  // namespace kernels
}  // namespace mace
