#include "mace/ops/common/activation_util.h"

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
  const OpArgs &args = context.args();
  std::string name;
  MACE_RETURN_IF_ERROR(args.GetString("activation", "NOOP", &name));
  if (!ActivationFromName(name, &activation->type)) {
    return context.InvalidArgs("unknown activation '", name, "'");
  }
  if (activation->type == ActivationType::kPRelu && !allow_prelu) {
    return context.Unsupported("PRELU cannot be fused into this op");
  }
  const float default_coefficient =
      (activation->type == ActivationType::kElu ||
       activation->type == ActivationType::kSwish)
          ? 1.0f
          : 0.0f;
  MACE_RETURN_IF_ERROR(
      args.GetFloat("max_limit", 6.0f, &activation->max_limit));
  MACE_RETURN_IF_ERROR(args.GetFloat("activation_coefficient",
                                     default_coefficient,
                                     &activation->coefficient));
  MACE_RETURN_IF_ERROR(args.GetFloat("hardsigmoid_alpha", 0.2f,
                                     &activation->hardsigmoid_alpha));
  MACE_RETURN_IF_ERROR(args.GetFloat("hardsigmoid_beta", 0.5f,
                                     &activation->hardsigmoid_beta));
  return MaceStatus::MACE_SUCCESS;
}

void ActivateInPlace(const Activation &act, float *data, int64_t n) {
  if (act.type == ActivationType::kNoop) return;
  for (int64_t i = 0; i < n; ++i) data[i] = Activate(act, data[i]);
}

}  // namespace mace
