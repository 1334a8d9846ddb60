// sgemm_4x16_neon: AArch64 NEON micro-kernel. 4 rows x 16 columns = 16
// q-register accumulators + 4 for the B row, inside the 32 registers; each
// A value is multiplied in by element (fmla by lane). Narrow variants of
// 4, 8 and 12 columns serve panels whose other columns are padding. Empty
// on other targets.

#if defined(__aarch64__)

#include "mace/kernels/sgemm_ukernel_impl.h"

namespace mace {
namespace kernels {
namespace {

// One accumulator set however few the rows: the paired steps were measured
// on x86 only, and no ARM hardware is at hand to measure them.
struct SgemmNeonFamily {
  using V = VecNeon;
  static constexpr const char *kName = "sgemm_4x16_neon";
  static constexpr int kMr = 4;
  static constexpr int kNr = 16;
  static constexpr int NarrowRows(int) { return kMr; }
  static constexpr bool kPairSteps = false;
  static constexpr int kRegisters = 32;
};

}  // namespace

const SgemmUkernels &SgemmUkernels4x16Neon() {
  static constexpr SgemmUkernels kUkernels =
      MakeSgemmUkernels<SgemmNeonFamily>();
  return kUkernels;
}

}  // namespace kernels
}  // namespace mace

#endif  // defined(__aarch64__)
