// Vector kernels of the channel-last element families (activation,
// depthwise convolution, pooling), and the ISA choice they share.
//
// Each family has one algorithm, written once over a small vector type
// (activation_vec.h) and compiled per ISA: *_generic.cc (portable, 4 lanes
// the compiler may vectorise), *_avx2.cc (8 lanes), *_avx512.cc (16 lanes),
// *_neon.cc (4 lanes, aarch64 only). The ISA is picked once from the CPU
// features; tests force each one in turn with SetVectorIsaForTesting. The
// reference code of each op (mace/ops) stays the specification.

#ifndef MACE_KERNELS_ACTIVATION_H_
#define MACE_KERNELS_ACTIVATION_H_

#include <cstdint>
#include <vector>

#include "mace/core/thread_pool.h"

namespace mace {
namespace kernels {

enum class VectorIsa { kGeneric, kAvx2, kAvx512, kNeon };

const char *VectorIsaName(VectorIsa isa);

// Whether this binary has the kernels and this CPU can run them.
bool VectorIsaAvailable(VectorIsa isa);

// Every ISA of VectorIsaAvailable, generic first.
std::vector<VectorIsa> AvailableVectorIsas();

// The best available ISA, unless SetVectorIsaForTesting forced another.
VectorIsa SelectedVectorIsa();

// Forces the ISA the kernels' entry points use when not given one (ignored
// when not available; returns whether it was applied).
bool SetVectorIsaForTesting(VectorIsa isa);

// The activations the vector kernels apply themselves (as fused epilogues
// too). Ops with another activation run the kernel with kNone and then
// their reference activation.
enum class ActivationKind {
  kNone,
  kRelu,         // max(x, 0)
  kReluX,        // min(max(x, 0), max_limit)
  kLeakyRelu,    // x >= 0 ? x : x * coefficient
  kPRelu,        // x >= 0 ? x : x * slope[channel]
  kSigmoid,      // 1 / (1 + exp(-x)), exp approximated (~2 ulp)
  kTanh,         // tanh(x), approximated (~2 ulp)
  kHardSigmoid,  // min(max(alpha * x + beta, 0), 1)
  kHardSwish,    // x * min(max(x + 3, 0), 6) / 6
  kSwish,        // x / (1 + exp(-coefficient * x)), exp approximated
  kErf,          // erf(x), approximated (|error| < 5e-7)
  kGelu,         // 0.5 * x * (1 + erf(x / sqrt(2))), erf as kErf
};

struct ActivationParams {
  ActivationKind kind = ActivationKind::kNone;
  float max_limit = 6.0f;
  float coefficient = 0.0f;
  float hardsigmoid_alpha = 0.2f;
  float hardsigmoid_beta = 0.5f;
  // PRELU: slope_size is 1 (shared) or the channel count.
  const float *slope = nullptr;
  int64_t slope_size = 0;
  // When set, n values added before the activation (a residual addition
  // fused into a convolution): act(x[i] + addend[i]).
  const float *addend = nullptr;
};

// Whether `act` is a clamp, min(max(x, lo), hi): ReLU is (0, +inf), ReLUX
// (0, max_limit); then sets bounds to {lo, hi}. Kernels apply such an
// activation in registers before they store (the SGEMM's clamp, the
// depthwise rows), where max returns lo for a NaN as the reference ReLU
// makes it 0.
bool ClampBounds(const ActivationParams &act, float bounds[2]);

// y[i] = act(x[i]) (act(x[i] + act.addend[i]) with an addend) for n
// channel-last values (value i in channel i % channels; n a multiple of
// channels when the slope is per channel). y may equal x or the addend.
// Parallel over chunks of rows (pool may be null).
void ActivateChannels(const ActivationParams &act, int64_t channels,
                      const float *x, float *y, int64_t n, ThreadPool *pool);
void ActivateChannels(VectorIsa isa, const ActivationParams &act,
                      int64_t channels, const float *x, float *y, int64_t n,
                      ThreadPool *pool);

// y[r * ld + c] = act(x[r * ld + c]) (the addend alike) for r < rows and
// c < cols, channel c; one thread, for a block of a GEMM's output while it
// is in cache: one call, where a call per row would cost more than a short
// row's activation.
void ActivateRows(const ActivationParams &act, int64_t rows, int64_t cols,
                  int64_t ld, const float *x, float *y);
void ActivateRows(VectorIsa isa, const ActivationParams &act, int64_t rows,
                  int64_t cols, int64_t ld, const float *x, float *y);

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_ACTIVATION_H_
