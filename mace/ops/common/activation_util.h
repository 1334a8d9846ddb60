// Activation functions, shared by the Activation op and by every op that
// fuses one into its epilogue (Conv2D, FullyConnected, BatchNorm, ...).
// Arguments as MACE writes them: `activation` (RELU, RELUX, PRELU, TANH,
// SIGMOID, LEAKYRELU, ELU, HARDSIGMOID, HARDSWISH, GELU, GELU_TANH, SWISH,
// NOOP), `max_limit` (RELUX cap), `activation_coefficient` (LEAKYRELU slope,
// ELU alpha, SWISH beta), `hardsigmoid_alpha`, `hardsigmoid_beta`.

#ifndef MACE_OPS_COMMON_ACTIVATION_UTIL_H_
#define MACE_OPS_COMMON_ACTIVATION_UTIL_H_

#include <cmath>
#include <cstdint>
#include <string>

#include "mace/core/operation.h"
#include "mace/kernels/activation.h"

namespace mace {

enum class ActivationType {
  kNoop,
  kRelu,
  kReluX,
  kPRelu,
  kTanh,
  kSigmoid,
  kLeakyRelu,
  kElu,
  kHardSigmoid,
  kHardSwish,
  kGelu,
  kGeluTanh,
  kSwish,
};

struct Activation {
  ActivationType type = ActivationType::kNoop;
  float max_limit = 6.0f;
  float coefficient = 0.0f;
  float hardsigmoid_alpha = 0.2f;
  float hardsigmoid_beta = 0.5f;
};

// Reads the activation arguments of `context`'s op. PRELU is accepted only
// when `allow_prelu`: it needs a slope tensor as an input, which only the
// Activation op and the ops that take a fused PRELU's slope as their last
// input (DepthwiseConv2d, Deconv2D, DepthwiseDeconv2d, BatchNorm) have.
MaceStatus ParseActivation(const OpContext &context, bool allow_prelu,
                           Activation *activation);
// The same from arguments named `prefix` + the names above (an op fusing
// two activations: PointwiseDepthwiseConv2d's `pointwise_activation`).
MaceStatus ParseActivation(const OpContext &context, bool allow_prelu,
                           const std::string &prefix, Activation *activation);

// A PRELU slope as a kernel reads it: `size` values, either 1 (shared by
// every channel) or one per channel (channel-last data). Empty (null
// values) for every other activation.
struct PReluSlope {
  const float *values = nullptr;
  int64_t size = 0;
  float at(int64_t channel) const { return values[size == 1 ? 0 : channel]; }
};

// For an op with a fused activation whose PRELU slope is input
// `slope_index`: when `act` is PRELU, checks that the input exists, is
// float and holds 1 or `channels` values (any shape, as the Activation op
// takes it); nothing to check otherwise.
MaceStatus CheckFusedPReluSlope(const OpContext &context, const Activation &act,
                                int slope_index, int64_t channels);

// Ops shaped (input, weight[, bias]) with a fused activation: a fused
// PRELU's slope follows the then required bias, as input 3.
constexpr int kWeightedOpSlopeIndex = 3;

// Checks such an op's input count: 2 or 3 inputs, or exactly 4 (input,
// `weight_name`, bias, slope) when `act` is PRELU; with a scale of the
// input's channels (Conv2D's `input_scale`) or a fused addend (its
// `fused_add`), the bias is required, the scale follows the slope and the
// addend comes last.
MaceStatus ExpectWeightedOpInputs(const OpContext &context,
                                  const Activation &act,
                                  const char *weight_name,
                                  bool fused_addend = false,
                                  bool input_scale = false);

// The slope a kernel reads at Run: input `slope_index` when `act` is
// PRELU, empty otherwise.
PReluSlope FusedPReluSlope(const OpContext &context, const Activation &act,
                           int slope_index);

// Elementwise activation of one value (PRELU excluded).
inline float Activate(const Activation &act, float x) {
  switch (act.type) {
    case ActivationType::kNoop:
    case ActivationType::kPRelu:
      return x;
    case ActivationType::kRelu:
      return x > 0.0f ? x : 0.0f;
    case ActivationType::kReluX:
      return std::fmin(std::fmax(x, 0.0f), act.max_limit);
    case ActivationType::kTanh:
      return std::tanh(x);
    case ActivationType::kSigmoid:
      return 1.0f / (1.0f + std::exp(-x));
    case ActivationType::kLeakyRelu:
      return x >= 0.0f ? x : x * act.coefficient;
    case ActivationType::kElu:
      return x >= 0.0f ? x : act.coefficient * std::expm1(x);
    case ActivationType::kHardSigmoid:
      return std::fmin(
          std::fmax(act.hardsigmoid_alpha * x + act.hardsigmoid_beta, 0.0f),
          1.0f);
    case ActivationType::kHardSwish:
      return x * std::fmin(std::fmax(x + 3.0f, 0.0f), 6.0f) / 6.0f;
    case ActivationType::kGelu:
      return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    case ActivationType::kGeluTanh:
      return 0.5f * x *
             (1.0f +
              std::tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    case ActivationType::kSwish:
      return x / (1.0f + std::exp(-act.coefficient * x));
  }
  return x;
}

// The activations that are a clamp to [bounds[0], bounds[1]] (RELU,
// RELUX), which the SGEMM applies in registers (kernels::SgemmClamped):
// true and the bounds for those, false for any other.
bool ToClampBounds(const Activation &act, float bounds[2]);

// Applies the activation to n values in place (no-op for NOOP; PRELU
// needs a slope: see ActivateInPlaceWithSlope).
void ActivateInPlace(const Activation &act, float *data, int64_t n);

// As ActivateInPlace, for n channel-last values (data[i] in channel
// i % channels; n a multiple of channels), PRELU included:
// y = x >= 0 ? x : x * slope[channel]. Without a slope PRELU is identity.
void ActivateInPlaceWithSlope(const Activation &act, const PReluSlope &slope,
                              int64_t channels, float *data, int64_t n);

// Applies the activation to a rows x cols block (row stride ldc) of a
// channel-last matrix whose first column is channel `col0`: the epilogue
// of GEMM-based ops, which see their output one block at a time. With an
// `addend` (a block of the same layout), block = act(block + addend): a
// fused residual addition.
void ActivateBlock(const Activation &act, const PReluSlope &slope, int64_t col0,
                   float *block, int64_t rows, int64_t cols, int64_t ldc,
                   const float *addend = nullptr);

// The vector kernels' form of `act` with `slope` (see
// mace/kernels/activation.h). Returns false, leaving *params as kNone, for
// an activation they do not implement: the op then applies
// ActivateInPlaceWithSlope to the kernel's output.
bool ToKernelActivation(const Activation &act, const PReluSlope &slope,
                        kernels::ActivationParams *params);

// Applies `act` (PRELU included, see ActivateInPlaceWithSlope) to `rows`
// rows of `channels` values, the rows shared among the pool's threads.
void ActivateRowsInPlace(const Activation &act, const PReluSlope &slope,
                         int64_t channels, float *data, int64_t rows,
                         ThreadPool *pool);

}  // namespace mace

#endif  // MACE_OPS_COMMON_ACTIVATION_UTIL_H_
