// sgemm_8x32_avx512: AVX-512F micro-kernel (compiled with -mavx512f and
// friends, called only when the CPU has AVX-512F). 8 rows x 32 columns = 16
// zmm accumulators + 2 for the B row + 1 broadcast of A, well inside the 32
// registers; per k step 10 loads feed 16 FMAs. A half-width variant serves
// panels of at most 16 real columns (n <= 16, or the last panel of such a
// remainder).

#include "mace/kernels/sgemm_ukernel_impl.h"

namespace mace {
namespace kernels {
namespace {

struct SgemmAvx512Family {
  using V = VecAvx512;
  static constexpr const char *kName = "sgemm_8x32_avx512";
  static constexpr int kMr = 8;
  static constexpr int kNr = 32;
  static constexpr bool kPairSteps = true;
};

}  // namespace

const SgemmUkernels &SgemmUkernels8x32Avx512() {
  static constexpr SgemmUkernels kUkernels =
      MakeSgemmUkernels<SgemmAvx512Family>();
  return kUkernels;
}

}  // namespace kernels
}  // namespace mace
