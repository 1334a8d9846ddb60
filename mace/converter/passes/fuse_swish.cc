// Swish and hard swish as frameworks export them: x * sigmoid(x) (SiLU,
// EfficientNet) and x * hardsigmoid(x) with alpha 1/6, beta 1/2
// (torchvision's MobileNetV3 hardswish), an Activation and an Eltwise PROD
// of the same tensor. One Activation SWISH / HARDSWISH replaces both: one
// pass over the data instead of two, and a single-input op that the
// transpose passes move and FuseActivation fuses into a convolution.

#include <cmath>

#include "mace/converter/passes/fusion_utils.h"
#include "mace/converter/passes/graph_utils.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"
#include "mace/ops/eltwise_type.h"

namespace mace {
namespace converter {
namespace {

float FloatArg(const OperatorDef &op, const std::string &name,
               float default_value) {
  const Argument *arg = FindArg(op, name);
  return arg != nullptr && arg->has_f() ? arg->f() : default_value;
}

// The swish activation the Activation op `gate` makes of x * gate(x), or
// empty when it is not one.
std::string SwishOf(const OperatorDef &gate) {
  if (gate.type() != "Activation" || gate.input_size() != 1) return "";
  const std::string kind = StringArg(gate, "activation", "NOOP");
  if (kind == "SIGMOID") return "SWISH";
  // HARDSWISH is x * relu6(x + 3) / 6, the hard sigmoid of alpha 1/6 and
  // beta 1/2; other parameters have no fused form.
  if (kind == "HARDSIGMOID" &&
      std::fabs(FloatArg(gate, "hardsigmoid_alpha", 0.2f) - 1.0f / 6) < 1e-6f &&
      FloatArg(gate, "hardsigmoid_beta", 0.5f) == 0.5f) {
    return "HARDSWISH";
  }
  return "";
}

// A plain two-input product: no coefficients or other arguments.
bool IsPlainProduct(const OperatorDef &op) {
  if (op.type() != "Eltwise" || op.input_size() != 2 || op.output_size() != 1) {
    return false;
  }
  for (const Argument &arg : op.arg()) {
    if (arg.name() == "type") {
      if (arg.i() != static_cast<int64_t>(EltwiseType::kProd)) return false;
    } else if (arg.name() != "data_format" && arg.name() != "T") {
      return false;
    }
  }
  return true;
}

}  // namespace

MaceStatus FuseSwish(GraphBuilder *graph) {
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!IsPlainProduct(ops[i])) continue;
    const auto consumers = ConsumersOf(ops);
    for (int side = 0; side < 2; ++side) {
      const std::string &gated = ops[i].input(side);
      const std::string &x = ops[i].input(1 - side);
      const int gate = ProducerOf(ops, gated);
      if (gate < 0 || ops[gate].input(0) != x) continue;
      const std::string swish = SwishOf(ops[gate]);
      if (swish.empty() ||
          SoleConsumer(*graph, consumers, gated) != static_cast<int>(i)) {
        continue;
      }
      // The gate now feeds nothing; RemoveDeadOps drops it.
      ReplaceWithActivation(x, swish, ops[gate], &ops[i]);
      MACE_RETURN_IF_ERROR(graph->Reinfer(i));
      break;
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace converter
}  // namespace mace
