// Fuses a 1x1 Conv2D into the DepthwiseConv2d that alone reads its output:
// one PointwiseDepthwiseConv2d (mace/ops/pointwise_depthwise_conv_2d.cc),
// which computes the pointwise rows a strip at a time in cache instead of
// writing them all out and reading them back. Only where that output is
// large (at least kMinPointwiseBytes an image): a smaller one stays in
// the cache between the two ops anyway, and strips then only add calls.
// Runs after fuse_activation, so that both ops carry their activations.

#include <string>
#include <vector>

#include "mace/converter/passes/fusion_utils.h"
#include "mace/converter/passes/graph_utils.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"
#include "mace/model/op_provenance.h"

namespace mace {
namespace converter {
namespace {

// MobileNet-v2's 28x28x192 expansion (602 KB) ran 0.91 of the two ops'
// time fused, its 56x56x144 ones 0.72-0.75 (1 thread, cold caches).
constexpr int64_t kMinPointwiseBytes = int64_t{512} << 10;

bool AllOnes(const std::vector<int64_t> &values) {
  for (int64_t v : values) {
    if (v != 1) return false;
  }
  return true;
}

// A 1x1, stride 1, ungrouped Conv2D with constant float weights, without a
// fused addend or PRELU, whose output has its input's height and width.
bool IsPointwise(const GraphBuilder &graph, const OperatorDef &op) {
  if (op.type() != "Conv2D" || op.output_size() != 1 ||
      op.input_size() < 2 || op.input_size() > 3 || HasFusedAdd(op) ||
      IsPRelu(op) || IntArg(op, "group", 1) != 1 ||
      !AllOnes(IntsArg(op, "strides")) || !AllOnes(IntsArg(op, "dilations")) ||
      !HasConstantWeights(graph, op)) {
    return false;
  }
  const Tensor *input = graph.Find(op.input(0));
  const Tensor *filter = graph.Find(op.input(1));
  const Tensor *output = graph.Find(op.output(0));
  return input != nullptr && filter != nullptr && output != nullptr &&
         input->rank() == 4 && filter->rank() == 4 && output->rank() == 4 &&
         filter->dim(1) == 1 && filter->dim(2) == 1 &&
         output->dim(1) == input->dim(1) && output->dim(2) == input->dim(2);
}

// A DepthwiseConv2d of multiplier 1 with constant float weights and no
// PRELU: the window the fused op checks when it is reinferred.
bool IsFusableDepthwise(const GraphBuilder &graph, const OperatorDef &op) {
  if (op.type() != "DepthwiseConv2d" || op.output_size() != 1 ||
      op.input_size() < 2 || op.input_size() > 3 || IsPRelu(op) ||
      !HasConstantWeights(graph, op)) {
    return false;
  }
  const Tensor *filter = graph.Find(op.input(1));
  return filter != nullptr && filter->rank() == 4 && filter->dim(3) == 1;
}

bool LargeEnough(const GraphBuilder &graph, const std::string &tensor) {
  const Tensor *t = graph.Find(tensor);
  return t != nullptr && t->rank() == 4 &&
         t->dim(1) * t->dim(2) * t->dim(3) * 4 >= kMinPointwiseBytes;
}

// The op's bias, or a new zero constant of `channels` values.
std::string BiasOf(GraphBuilder *graph, const OperatorDef &op,
                   int64_t channels) {
  return op.input_size() >= 3 ? op.input(2) : AddZeroBias(graph, op, channels);
}

MaceStatus TryFuse(GraphBuilder *graph, size_t index,
                   const ConsumerMap &consumers, bool *fused) {
  *fused = false;
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  if (!IsPointwise(*graph, ops[index])) return MaceStatus::MACE_SUCCESS;
  const std::string &middle = ops[index].output(0);
  const int depthwise = SoleConsumer(*graph, consumers, middle);
  if (depthwise <= static_cast<int>(index) ||
      !IsFusableDepthwise(*graph, ops[depthwise]) ||
      ops[depthwise].input(0) != middle || !LargeEnough(*graph, middle)) {
    return MaceStatus::MACE_SUCCESS;
  }
  const OperatorDef pointwise = ops[index];
  const OperatorDef &dw = ops[depthwise];
  const int64_t channels = graph->Find(middle)->dim(3);
  OperatorDef op;
  op.set_type("PointwiseDepthwiseConv2d");
  op.set_name(dw.name());
  op.add_input(pointwise.input(0));
  op.add_input(pointwise.input(1));
  op.add_input(BiasOf(graph, pointwise, channels));
  op.add_input(dw.input(1));
  op.add_input(BiasOf(graph, dw, channels));
  op.add_output(dw.output(0));
  for (const Argument &arg : dw.arg()) {
    if (arg.name() != "group") *op.add_arg() = arg;
  }
  CopyActivationArgsAs(pointwise, "pointwise_", &op);
  RecordFusion(pointwise, &op);
  // A window the fused op does not take (5x5 with a pad of 5, say) leaves
  // the two ops as they were.
  const OperatorDef depthwise_before = dw;
  ops[depthwise] = op;
  if (graph->Reinfer(depthwise) != MaceStatus::MACE_SUCCESS) {
    ops[depthwise] = depthwise_before;
    return graph->Reinfer(depthwise);
  }
  ops.erase(ops.begin() + index);
  *fused = true;
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace

MaceStatus FusePointwiseDepthwise(GraphBuilder *graph) {
  return FuseAtEveryOp(graph, TryFuse);
}

}  // namespace converter
}  // namespace mace
