// Moves an Activation op into the op before it, whose kernel applies it in
// its epilogue: Activation(conv(x)) = conv(x) with the activation fused.
// PRELU stays an op (only the Activation op takes its slope tensor).

#include <set>

#include "mace/converter/passes/fusion_utils.h"
#include "mace/converter/passes/graph_utils.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

// Ops with a fused activation (docs/ops.md), when they have none yet.
bool AcceptsActivation(const OperatorDef &op) {
  static const std::set<std::string> kTypes = {
      "Conv2D",         "DepthwiseConv2d", "Deconv2D", "DepthwiseDeconv2d",
      "FullyConnected", "BatchNorm",       "BiasAdd",  "InstanceNorm"};
  return kTypes.count(op.type()) > 0 && op.output_size() == 1 &&
         !HasFusedActivation(op);
}

bool IsFusibleActivation(const OperatorDef &op) {
  return op.type() == "Activation" && op.input_size() == 1 &&
         op.output_size() == 1 &&
         StringArg(op, "activation", "NOOP") != "PRELU";
}

MaceStatus TryFuse(GraphBuilder *graph, size_t index,
                   const ConsumerMap &consumers, bool *fused) {
  *fused = false;
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  if (!AcceptsActivation(ops[index])) return MaceStatus::MACE_SUCCESS;
  const int act = SoleConsumer(*graph, consumers, ops[index].output(0));
  if (act < 0 || !IsFusibleActivation(ops[act])) {
    return MaceStatus::MACE_SUCCESS;
  }
  CopyActivationArgs(ops[act], &ops[index]);
  const size_t producer = AbsorbConsumer(&ops, index, act);
  *fused = true;
  return graph->Reinfer(producer);
}

}  // namespace

MaceStatus FuseActivation(GraphBuilder *graph) {
  ConsumerMap consumers = ConsumersOf(graph->ops());
  for (size_t i = 0; i < graph->ops().size(); ++i) {
    bool fused = false;
    MACE_RETURN_IF_ERROR(TryFuse(graph, i, consumers, &fused));
    if (fused) consumers = ConsumersOf(graph->ops());
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace converter
}  // namespace mace
