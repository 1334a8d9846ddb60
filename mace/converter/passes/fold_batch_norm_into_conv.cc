// Folds a BatchNorm into the convolution or fully connected layer before it:
//   BatchNorm(conv(x; W, b)) = conv(x; W * s, b * s + o)
// per output channel, with s, o the BatchNorm's folded scale and offset.
// The BatchNorm's own activation moves onto the convolution.

#include <cmath>

#include "mace/converter/passes/fusion_utils.h"
#include "mace/converter/passes/graph_utils.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

constexpr float kDefaultEpsilon = 1e-4f;  // MACE's, as the BatchNorm op

// The BatchNorm's scale and offset as it applies them (computed the same
// way, in float); false unless its parameters are float constants of
// `channels` values.
bool FoldedParameters(const GraphBuilder &graph, const OperatorDef &bn,
                      int64_t channels, std::vector<float> *scale,
                      std::vector<float> *offset) {
  if (bn.input_size() != 3 && bn.input_size() != 5) return false;
  std::vector<std::vector<float>> params;
  for (int i = 1; i < bn.input_size(); ++i) {
    const Tensor *tensor = graph.Find(bn.input(i));
    if (tensor == nullptr || !tensor->is_constant() ||
        tensor->dtype() != DT_FLOAT || tensor->size() != channels) {
      return false;
    }
    params.push_back(ConstantValues(graph, bn.input(i)));
  }
  *scale = params[0];
  *offset = params[1];
  if (params.size() == 2) return true;
  const Argument *epsilon_arg = FindArg(bn, "epsilon");
  const float epsilon = epsilon_arg != nullptr && epsilon_arg->has_f()
                            ? epsilon_arg->f()
                            : kDefaultEpsilon;
  const std::vector<float> &mean = params[2];
  const std::vector<float> &var = params[3];
  for (int64_t c = 0; c < channels; ++c) {
    (*scale)[c] = (*scale)[c] / std::sqrt(var[c] + epsilon);
    (*offset)[c] = (*offset)[c] - mean[c] * (*scale)[c];
  }
  return true;
}

MaceStatus TryFold(GraphBuilder *graph, size_t index,
                   const ConsumerMap &consumers, bool *folded) {
  *folded = false;
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  const OperatorDef &op = ops[index];
  if (!IsWeightedOp(op, true) || HasFusedActivation(op) ||
      !HasConstantWeights(*graph, op)) {
    return MaceStatus::MACE_SUCCESS;
  }
  const int bn = SoleConsumer(*graph, consumers, op.output(0));
  if (bn < 0 || ops[bn].type() != "BatchNorm" ||
      ops[bn].input(0) != op.output(0)) {
    return MaceStatus::MACE_SUCCESS;
  }
  const int64_t channels = graph->Find(op.output(0))->dim(-1);
  std::vector<float> scale, offset;
  if (!FoldedParameters(*graph, ops[bn], channels, &scale, &offset)) {
    return MaceStatus::MACE_SUCCESS;
  }
  MACE_RETURN_IF_ERROR(FoldChannelAffine(graph, index, scale, offset));
  CopyActivationArgs(ops[bn], &ops[index]);
  const size_t fused = AbsorbConsumer(&ops, index, bn);
  *folded = true;
  return graph->Reinfer(fused);
}

}  // namespace

MaceStatus FoldBatchNormIntoConv(GraphBuilder *graph) {
  // Staying on a folded op folds a following BatchNorm too.
  return FuseAtEveryOp(graph, TryFold);
}

}  // namespace converter
}  // namespace mace
