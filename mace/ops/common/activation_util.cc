#include "mace/ops/common/activation_util.h"

#include <algorithm>
#include <map>

namespace mace {
namespace {

bool ActivationFromName(const std::string &name, ActivationType *type) {
  static const std::map<std::string, ActivationType> kByName = {
      {"NOOP", ActivationType::kNoop},
      {"", ActivationType::kNoop},
      {"RELU", ActivationType::kRelu},
      {"RELUX", ActivationType::kReluX},
      {"PRELU", ActivationType::kPRelu},
      {"TANH", ActivationType::kTanh},
      {"SIGMOID", ActivationType::kSigmoid},
      {"LEAKYRELU", ActivationType::kLeakyRelu},
      {"ELU", ActivationType::kElu},
      {"HARDSIGMOID", ActivationType::kHardSigmoid},
      {"HARDSWISH", ActivationType::kHardSwish},
      {"GELU", ActivationType::kGelu},
      {"GELU_TANH", ActivationType::kGeluTanh},
      {"SWISH", ActivationType::kSwish},
  };
  auto it = kByName.find(name);
  if (it == kByName.end()) return false;
  *type = it->second;
  return true;
}

}  // namespace

MaceStatus ParseActivation(const OpContext &context, bool allow_prelu,
                           Activation *activation) {
  return ParseActivation(context, allow_prelu, "", activation);
}

MaceStatus ParseActivation(const OpContext &context, bool allow_prelu,
                           const std::string &prefix, Activation *activation) {
  const OpArgs &args = context.args();
  std::string name;
  MACE_RETURN_IF_ERROR(args.GetString(prefix + "activation", "NOOP", &name));
  if (!ActivationFromName(name, &activation->type)) {
    return context.InvalidArgs("unknown ", prefix, "activation '", name, "'");
  }
  if (activation->type == ActivationType::kPRelu && !allow_prelu) {
    return context.Unsupported("PRELU cannot be fused into this op");
  }
  const float default_coefficient = (activation->type == ActivationType::kElu ||
                                     activation->type == ActivationType::kSwish)
                                        ? 1.0f
                                        : 0.0f;
  MACE_RETURN_IF_ERROR(
      args.GetFloat(prefix + "max_limit", 6.0f, &activation->max_limit));
  MACE_RETURN_IF_ERROR(args.GetFloat(prefix + "activation_coefficient",
                                     default_coefficient,
                                     &activation->coefficient));
  MACE_RETURN_IF_ERROR(args.GetFloat(prefix + "hardsigmoid_alpha", 0.2f,
                                     &activation->hardsigmoid_alpha));
  MACE_RETURN_IF_ERROR(args.GetFloat(prefix + "hardsigmoid_beta", 0.5f,
                                     &activation->hardsigmoid_beta));
  return MaceStatus::MACE_SUCCESS;
}

void ActivateInPlace(const Activation &act, float *data, int64_t n) {
  if (act.type == ActivationType::kNoop) return;
  for (int64_t i = 0; i < n; ++i) data[i] = Activate(act, data[i]);
}

MaceStatus CheckFusedPReluSlope(const OpContext &context, const Activation &act,
                                int slope_index, int64_t channels) {
  if (act.type != ActivationType::kPRelu) return MaceStatus::MACE_SUCCESS;
  if (slope_index < 0 || slope_index >= context.num_inputs()) {
    return context.InvalidArgs("fused PRELU needs its slope as input ",
                               slope_index, ", the op has ",
                               context.num_inputs(), " inputs");
  }
  MACE_RETURN_IF_ERROR(context.ExpectDtype(slope_index, DT_FLOAT));
  const Tensor &slope = context.input(slope_index);
  if (slope.size() != channels && slope.size() != 1) {
    return context.InvalidArgs("PRELU slope '", slope.name(), "' has ",
                               slope.size(), " values, expected 1 or ",
                               channels, " (the channel count)");
  }
  return MaceStatus::MACE_SUCCESS;
}

PReluSlope FusedPReluSlope(const OpContext &context, const Activation &act,
                           int slope_index) {
  PReluSlope slope;
  if (act.type != ActivationType::kPRelu) return slope;
  const Tensor &tensor = context.input(slope_index);
  slope.values = tensor.data<float>();
  slope.size = tensor.size();
  return slope;
}

void ActivateInPlaceWithSlope(const Activation &act, const PReluSlope &slope,
                              int64_t channels, float *data, int64_t n) {
  if (act.type != ActivationType::kPRelu) {
    ActivateInPlace(act, data, n);
    return;
  }
  if (slope.values == nullptr || channels <= 0) return;
  for (int64_t i = 0; i < n; i += channels) {
    float *px = data + i;
    const int64_t count = std::min(channels, n - i);
    for (int64_t c = 0; c < count; ++c) {
      if (px[c] < 0.0f) px[c] *= slope.at(c);
    }
  }
}

void ActivateBlock(const Activation &act, const PReluSlope &slope, int64_t col0,
                   float *block, int64_t rows, int64_t cols, int64_t ldc,
                   const float *addend) {
  if (act.type == ActivationType::kNoop && addend == nullptr) return;
  PReluSlope shifted = slope;
  if (shifted.values != nullptr && shifted.size != 1) shifted.values += col0;
  // The GEMM epilogues call this on every output block: the vector kernel
  // where it has the activation (the scalar loop costs several times the
  // GEMM of a 1x1 convolution).
  kernels::ActivationParams params;
  const bool vector = ToKernelActivation(act, shifted, &params);
  if (params.kind == kernels::ActivationKind::kPRelu &&
      params.slope_size != 1) {
    params.slope_size = cols;
  }
  if (vector) {
    params.addend = addend;
    kernels::ActivateRows(params, rows, cols, ldc, block, block);
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    float *row = block + r * ldc;
    params.addend = addend != nullptr ? addend + r * ldc : nullptr;
    if (params.addend != nullptr) {
      kernels::ActivationParams add;
      add.addend = params.addend;
      kernels::ActivateChannels(add, cols, row, row, cols, nullptr);
    }
    ActivateInPlaceWithSlope(act, shifted, cols, row, cols);
  }
}

MaceStatus ExpectWeightedOpInputs(const OpContext &context,
                                  const Activation &act,
                                  const char *weight_name, bool fused_addend,
                                  bool input_scale) {
  const bool prelu = act.type == ActivationType::kPRelu;
  if (fused_addend || input_scale) {
    const int expected = 3 + prelu + input_scale + fused_addend;
    if (context.num_inputs() != expected) {
      return context.InvalidArgs(
          fused_addend ? "a fused addition" : "an input scale", " needs ",
          expected, " inputs (input, ", weight_name, ", bias",
          prelu ? ", slope" : "", input_scale ? ", input scale" : "",
          fused_addend ? ", addend" : "", "), got ", context.num_inputs());
    }
    return MaceStatus::MACE_SUCCESS;
  }
  if (prelu && context.num_inputs() != 4) {
    return context.InvalidArgs("a fused PRELU needs 4 inputs (input, ",
                               weight_name, ", bias, slope), got ",
                               context.num_inputs());
  }
  return context.ExpectInputCount(2, prelu ? 4 : 3);
}

bool ToKernelActivation(const Activation &act, const PReluSlope &slope,
                        kernels::ActivationParams *params) {
  using kernels::ActivationKind;
  *params = kernels::ActivationParams();
  params->max_limit = act.max_limit;
  params->coefficient = act.coefficient;
  switch (act.type) {
    case ActivationType::kNoop:
      params->kind = ActivationKind::kNone;
      return true;
    case ActivationType::kRelu:
      params->kind = ActivationKind::kRelu;
      return true;
    case ActivationType::kReluX:
      params->kind = ActivationKind::kReluX;
      return true;
    case ActivationType::kLeakyRelu:
      params->kind = ActivationKind::kLeakyRelu;
      return true;
    case ActivationType::kSigmoid:
      params->kind = ActivationKind::kSigmoid;
      return true;
    case ActivationType::kTanh:
      params->kind = ActivationKind::kTanh;
      return true;
    case ActivationType::kHardSigmoid:
      params->kind = ActivationKind::kHardSigmoid;
      params->hardsigmoid_alpha = act.hardsigmoid_alpha;
      params->hardsigmoid_beta = act.hardsigmoid_beta;
      return true;
    case ActivationType::kHardSwish:
      params->kind = ActivationKind::kHardSwish;
      return true;
    case ActivationType::kSwish:
      params->kind = ActivationKind::kSwish;
      return true;
    case ActivationType::kGelu:
      params->kind = ActivationKind::kGelu;
      return true;
    case ActivationType::kPRelu:
      // Without a slope PRELU is the identity (ActivateInPlaceWithSlope).
      if (slope.values == nullptr) return true;
      params->kind = ActivationKind::kPRelu;
      params->slope = slope.values;
      params->slope_size = slope.size;
      return true;
    default:
      return false;
  }
}

bool ToClampBounds(const Activation &act, float bounds[2]) {
  kernels::ActivationParams params;
  return ToKernelActivation(act, PReluSlope(), &params) &&
         kernels::ClampBounds(params, bounds);
}

void ActivateRowsInPlace(const Activation &act, const PReluSlope &slope,
                         int64_t channels, float *data, int64_t rows,
                         ThreadPool *pool) {
  if (act.type == ActivationType::kNoop || channels <= 0) return;
  const int64_t grain = std::max<int64_t>(1, 4096 / channels);
  pool->ParallelFor(0, rows, grain, [&](int64_t begin, int64_t end) {
    ActivateInPlaceWithSlope(act, slope, channels, data + begin * channels,
                             (end - begin) * channels);
  });
}

}  // namespace mace
