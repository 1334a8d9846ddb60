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

namespace mace {

enum class ActivationType {
  kNoop, kRelu, kReluX, kPRelu, kTanh, kSigmoid, kLeakyRelu, kElu,
  kHardSigmoid, kHardSwish, kGelu, kGeluTanh, kSwish,
};

struct Activation {
  ActivationType type = ActivationType::kNoop;
  float max_limit = 6.0f;
  float coefficient = 0.0f;
  float hardsigmoid_alpha = 0.2f;
  float hardsigmoid_beta = 0.5f;
};

// Reads the activation arguments of `context`'s op. PRELU is accepted only
// when `allow_prelu` (it needs a slope tensor, which only the Activation op
// takes as an input).
MaceStatus ParseActivation(const OpContext &context, bool allow_prelu,
                           Activation *activation);

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
             (1.0f + std::tanh(0.79788456080286536f *
                               (x + 0.044715f * x * x * x)));
    case ActivationType::kSwish:
      return x / (1.0f + std::exp(-act.coefficient * x));
  }
  return x;
}

// Applies the activation to n values in place (no-op for NOOP).
void ActivateInPlace(const Activation &act, float *data, int64_t n);

}  // namespace mace

#endif  // MACE_OPS_COMMON_ACTIVATION_UTIL_H_
