// The SGEMM kernel table: which micro-kernel families this binary has, which
// of them the CPU can run, and the one chosen by default (best first:
// avx512f -> sgemm_6x64_avx512, avx2 + fma -> sgemm_6x16_avx2, neon ->
// sgemm_4x16_neon, else sgemm_4x8_generic). The x86 kernels are built only
// when CMake defines MACE_SGEMM_X86 (x86-64 targets).

#include <atomic>

#include "mace/core/cpu_info.h"
#include "mace/kernels/sgemm_ukernel.h"

namespace mace {
namespace kernels {
namespace {

bool CpuRuns(SgemmIsa isa) {
  const CpuFeatures &f = GetCpuFeatures();
  switch (isa) {
    case SgemmIsa::kGeneric:
      return true;
    case SgemmIsa::kAvx2:
      return f.avx2 && f.fma;
    case SgemmIsa::kAvx512:
      return f.avx512f && f.fma;
    case SgemmIsa::kNeon:
      return f.neon;
  }
  return false;
}

SgemmIsa BestIsa() {
  for (SgemmIsa isa : {SgemmIsa::kAvx512, SgemmIsa::kAvx2, SgemmIsa::kNeon}) {
    if (SgemmIsaAvailable(isa)) return isa;
  }
  return SgemmIsa::kGeneric;
}

// -1: no override.
std::atomic<int> g_forced_isa{-1};

}  // namespace

const SgemmUkernels *SgemmUkernelsFor(SgemmIsa isa) {
  switch (isa) {
    case SgemmIsa::kGeneric:
      return &SgemmUkernels4x8Generic();
#if defined(MACE_SGEMM_X86)
    case SgemmIsa::kAvx2:
      return &SgemmUkernels6x16Avx2();
    case SgemmIsa::kAvx512:
      return &SgemmUkernels6x64Avx512();
#endif
#if defined(__aarch64__)
    case SgemmIsa::kNeon:
      return &SgemmUkernels4x16Neon();
#endif
    default:
      return nullptr;
  }
}

const char *SgemmIsaName(SgemmIsa isa) {
  switch (isa) {
    case SgemmIsa::kGeneric:
      return "generic";
    case SgemmIsa::kAvx2:
      return "avx2";
    case SgemmIsa::kAvx512:
      return "avx512";
    case SgemmIsa::kNeon:
      return "neon";
  }
  return "unknown";
}

bool SgemmIsaAvailable(SgemmIsa isa) {
  return SgemmUkernelsFor(isa) != nullptr && CpuRuns(isa);
}

std::vector<SgemmIsa> AvailableSgemmIsas() {
  std::vector<SgemmIsa> isas;
  for (SgemmIsa isa : {SgemmIsa::kGeneric, SgemmIsa::kAvx2, SgemmIsa::kAvx512,
                       SgemmIsa::kNeon}) {
    if (SgemmIsaAvailable(isa)) isas.push_back(isa);
  }
  return isas;
}

SgemmIsa SelectedSgemmIsa() {
  static const SgemmIsa best = BestIsa();
  const int forced = g_forced_isa.load(std::memory_order_relaxed);
  return forced >= 0 ? static_cast<SgemmIsa>(forced) : best;
}

bool SetSgemmIsaForTesting(SgemmIsa isa) {
  if (!SgemmIsaAvailable(isa)) return false;
  g_forced_isa.store(static_cast<int>(isa), std::memory_order_relaxed);
  return true;
}

}  // namespace kernels
}  // namespace mace
