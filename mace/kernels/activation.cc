// The vector ISA choice shared by the activation, depthwise and pooling
// kernels, and the activation driver. The x86 kernels exist on x86-64
// builds only (CMake compiles *_avx2.cc / *_avx512.cc there), the NEON ones
// on aarch64.

#include "mace/kernels/activation.h"

#include <atomic>
#include <limits>

#include "mace/core/cpu_info.h"
#include "mace/kernels/activation_impl.h"

namespace mace {
namespace kernels {
namespace {

bool CompiledIn(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::kGeneric:
      return true;
    case VectorIsa::kAvx2:
    case VectorIsa::kAvx512:
#if defined(__x86_64__)
      return true;
#else
      return false;
#endif
    case VectorIsa::kNeon:
#if defined(__aarch64__)
      return true;
#else
      return false;
#endif
  }
  return false;
}

// The AVX-512 files are built with F, BW, VL and DQ, any of which the
// compiler may use.
bool CpuRuns(VectorIsa isa) {
  const CpuFeatures &f = GetCpuFeatures();
  switch (isa) {
    case VectorIsa::kGeneric:
      return true;
    case VectorIsa::kAvx2:
      return f.avx2 && f.fma;
    case VectorIsa::kAvx512:
      return f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.fma;
    case VectorIsa::kNeon:
      return f.neon;
  }
  return false;
}

VectorIsa BestIsa() {
  for (VectorIsa isa :
       {VectorIsa::kAvx512, VectorIsa::kAvx2, VectorIsa::kNeon}) {
    if (VectorIsaAvailable(isa)) return isa;
  }
  return VectorIsa::kGeneric;
}

// -1: no override.
std::atomic<int> g_forced_isa{-1};

}  // namespace

bool ClampBounds(const ActivationParams &act, float bounds[2]) {
  if (act.kind != ActivationKind::kRelu && act.kind != ActivationKind::kReluX) {
    return false;
  }
  bounds[0] = 0.0f;
  bounds[1] = act.kind == ActivationKind::kRelu
                  ? std::numeric_limits<float>::infinity()
                  : act.max_limit;
  return true;
}

const char *VectorIsaName(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::kGeneric:
      return "generic";
    case VectorIsa::kAvx2:
      return "avx2";
    case VectorIsa::kAvx512:
      return "avx512";
    case VectorIsa::kNeon:
      return "neon";
  }
  return "unknown";
}

bool VectorIsaAvailable(VectorIsa isa) {
  return CompiledIn(isa) && CpuRuns(isa);
}

std::vector<VectorIsa> AvailableVectorIsas() {
  std::vector<VectorIsa> isas;
  for (VectorIsa isa : {VectorIsa::kGeneric, VectorIsa::kAvx2,
                        VectorIsa::kAvx512, VectorIsa::kNeon}) {
    if (VectorIsaAvailable(isa)) isas.push_back(isa);
  }
  return isas;
}

VectorIsa SelectedVectorIsa() {
  static const VectorIsa best = BestIsa();
  const int forced = g_forced_isa.load(std::memory_order_relaxed);
  return forced >= 0 ? static_cast<VectorIsa>(forced) : best;
}

bool SetVectorIsaForTesting(VectorIsa isa) {
  if (!VectorIsaAvailable(isa)) return false;
  g_forced_isa.store(static_cast<int>(isa), std::memory_order_relaxed);
  return true;
}

void ActivateChannels(const ActivationParams &act, int64_t channels,
                      const float *x, float *y, int64_t n, ThreadPool *pool) {
  ActivateChannels(SelectedVectorIsa(), act, channels, x, y, n, pool);
}

void ActivateChannels(VectorIsa isa, const ActivationParams &act,
                      int64_t channels, const float *x, float *y, int64_t n,
                      ThreadPool *pool) {
  if (n <= 0) return;
  const ActivateFn activate = KernelsFor<ActivationKernels>(isa).activate;
  // Chunks of whole channel rows when the slope is per channel, so every
  // chunk starts at channel 0; about 16 KiB of data per chunk otherwise.
  const bool per_channel =
      act.kind == ActivationKind::kPRelu && act.slope_size != 1;
  const int64_t unit = per_channel ? channels : 1;
  const int64_t units = n / unit;
  const int64_t grain = per_channel ? (4096 + channels - 1) / channels : 4096;
  auto run = [&](int64_t begin, int64_t end) {
    ActivationParams chunk = act;
    if (chunk.addend != nullptr) chunk.addend += begin * unit;
    activate(chunk, channels, x + begin * unit, y + begin * unit,
             (end - begin) * unit, 1, 0);
  };
  ParallelForOrInline(pool, 0, units, grain, run);
}

void ActivateRows(const ActivationParams &act, int64_t rows, int64_t cols,
                  int64_t ld, const float *x, float *y) {
  ActivateRows(SelectedVectorIsa(), act, rows, cols, ld, x, y);
}

void ActivateRows(VectorIsa isa, const ActivationParams &act, int64_t rows,
                  int64_t cols, int64_t ld, const float *x, float *y) {
  if (rows <= 0 || cols <= 0) return;
  KernelsFor<ActivationKernels>(isa).activate(act, cols, x, y, cols, rows, ld);
}

}  // namespace kernels
}  // namespace mace
