// Moves an Activation op into the op before it, whose kernel applies it in
// its epilogue: Activation(conv(x)) = conv(x) with the activation fused.
// PRELU fuses only into the ops that take its slope as an extra last input
// (DepthwiseConv2d, Deconv2D, DepthwiseDeconv2d after their bias, created
// as zeros when absent; BatchNorm after its parameters), and only when the
// slope is a float constant of 1 or C values (C the output channels).

#include <set>
#include <string>
#include <vector>

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

// Ops whose kernels take a fused PRELU's slope as their last input (a
// Conv2D's input scale and fused addend come after the slope: none may be
// there yet).
bool AcceptsPRelu(const OperatorDef &op) {
  static const std::set<std::string> kTypes = {
      "Conv2D", "DepthwiseConv2d", "Deconv2D", "DepthwiseDeconv2d",
      "FullyConnected", "BatchNorm"};
  return kTypes.count(op.type()) > 0 && !HasFusedAdd(op) && !HasInputScale(op);
}

bool IsFusibleActivation(const OperatorDef &op) {
  return op.type() == "Activation" && op.input_size() == 1 &&
         op.output_size() == 1 && !IsPRelu(op);
}

// An Activation PRELU of `producer`'s output whose slope is a float
// constant of 1 or `channels` values.
bool IsFusiblePRelu(const GraphBuilder &graph, const OperatorDef &op,
                    const OperatorDef &producer, int64_t channels) {
  if (op.type() != "Activation" || !IsPRelu(op) || op.input_size() != 2 ||
      op.output_size() != 1 || op.input(0) != producer.output(0)) {
    return false;
  }
  const Tensor *slope = graph.Find(op.input(1));
  return slope != nullptr && graph.IsConstant(op.input(1)) &&
         slope->dtype() == DT_FLOAT &&
         (slope->size() == channels || slope->size() == 1);
}

// Appends a PRELU's slope to `op`'s inputs, after its bias (a new zero
// constant when it has none) for the convolutions.
void AppendSlope(GraphBuilder *graph, OperatorDef *op, int64_t channels,
                 const std::string &slope) {
  if (op->type() != "BatchNorm" &&
      BiasIndex(*graph, *op) >= op->input_size()) {
    op->add_input(AddZeroBias(graph, *op, channels));
  }
  op->add_input(slope);
}

MaceStatus TryFuse(GraphBuilder *graph, size_t index,
                   const ConsumerMap &consumers, bool *fused) {
  *fused = false;
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  if (!AcceptsActivation(ops[index])) return MaceStatus::MACE_SUCCESS;
  const int act = SoleConsumer(*graph, consumers, ops[index].output(0));
  if (act < 0) return MaceStatus::MACE_SUCCESS;
  if (IsFusibleActivation(ops[act])) {
    CopyActivationArgs(ops[act], &ops[index]);
  } else {
    const Tensor *output = graph->Find(ops[index].output(0));
    if (!AcceptsPRelu(ops[index]) || output == nullptr ||
        output->rank() < 1) {
      return MaceStatus::MACE_SUCCESS;
    }
    const int64_t channels = output->dim(-1);
    if (!IsFusiblePRelu(*graph, ops[act], ops[index], channels)) {
      return MaceStatus::MACE_SUCCESS;
    }
    const std::string slope = ops[act].input(1);
    AppendSlope(graph, &ops[index], channels, slope);
    CopyActivationArgs(ops[act], &ops[index]);
  }
  const size_t producer = AbsorbConsumer(&ops, index, act);
  *fused = true;
  return graph->Reinfer(producer);
}

}  // namespace

MaceStatus FuseActivation(GraphBuilder *graph) {
  return FuseAtEveryOp(graph, TryFuse);
}

}  // namespace converter
}  // namespace mace
