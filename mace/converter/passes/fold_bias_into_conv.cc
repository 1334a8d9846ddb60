// Folds a per-channel constant added to or multiplied with a convolution's
// or fully connected layer's output into its weights:
//   conv(x; W, b) + k = conv(x; W, b + k)
//   conv(x; W, b) * k = conv(x; W * k, b * k)   (k per output channel)
// The add is an Eltwise SUM or a BiasAdd (whose activation moves onto the
// convolution), the product an Eltwise PROD. A MatMul whose B has rank >= 2
// takes the add too, as a bias input (a transformer's x @ W + b, which
// stays MatMul on [batch, seq, d] activations).

#include "mace/converter/passes/fusion_utils.h"
#include "mace/converter/passes/graph_utils.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

constexpr int64_t kEltwiseSum = 0;
constexpr int64_t kEltwiseProd = 2;

enum class ChannelOp { kNone, kAdd, kMultiply };

// The values of constant `name` per channel when it broadcasts against a
// tensor of rank `rank` and `channels` channels (last axis) along that axis
// only, without raising the rank: [C], [1, C], [1, 1, 1, C] or one value.
bool ChannelValues(const GraphBuilder &graph, const std::string &name, int rank,
                   int64_t channels, std::vector<float> *values) {
  const Tensor *tensor = graph.Find(name);
  if (tensor == nullptr || !tensor->is_constant() ||
      tensor->dtype() != DT_FLOAT || tensor->rank() > rank) {
    return false;
  }
  for (int d = 0; d + 1 < tensor->rank(); ++d) {
    if (tensor->dim(d) != 1) return false;
  }
  const int64_t last = tensor->rank() == 0 ? 1 : tensor->dim(-1);
  if (last != channels && last != 1) return false;
  const std::vector<float> stored = ConstantValues(graph, name);
  *values = last == channels ? stored : std::vector<float>(channels, stored[0]);
  return true;
}

// What `consumer` does to `tensor` channel by channel, with the constant's
// values.
ChannelOp ClassifyConsumer(const GraphBuilder &graph,
                           const OperatorDef &consumer,
                           const std::string &tensor, int rank,
                           int64_t channels, std::vector<float> *values) {
  if (consumer.input_size() != 2 || consumer.output_size() != 1) {
    return ChannelOp::kNone;
  }
  if (consumer.type() == "BiasAdd") {
    return consumer.input(0) == tensor &&
                   ChannelValues(graph, consumer.input(1), rank, channels,
                                 values)
               ? ChannelOp::kAdd
               : ChannelOp::kNone;
  }
  if (consumer.type() != "Eltwise") return ChannelOp::kNone;
  const Argument *coeff = FindArg(consumer, "coeff");
  if (coeff != nullptr && coeff->floats_size() > 0) return ChannelOp::kNone;
  const int64_t type = IntArg(consumer, "type", -1);
  if (type != kEltwiseSum && type != kEltwiseProd) return ChannelOp::kNone;
  const std::string &other =
      consumer.input(0) == tensor ? consumer.input(1) : consumer.input(0);
  if (!ChannelValues(graph, other, rank, channels, values)) {
    return ChannelOp::kNone;
  }
  return type == kEltwiseSum ? ChannelOp::kAdd : ChannelOp::kMultiply;
}

// A MatMul whose output's last axis is B's columns (B of rank >= 2), with
// no bias yet or a constant one: C + k folds into that bias.
bool TakesMatMulBias(const GraphBuilder &graph, const OperatorDef &op) {
  if (op.type() != "MatMul" || op.output_size() != 1 || op.input_size() < 2 ||
      op.input_size() > 3) {
    return false;
  }
  const Tensor *b = graph.Find(op.input(1));
  return b != nullptr && b->rank() >= 2 &&
         (op.input_size() == 2 || graph.IsConstant(op.input(2)));
}

MaceStatus TryFold(GraphBuilder *graph, size_t index,
                   const ConsumerMap &consumers, bool *folded) {
  *folded = false;
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  const OperatorDef &op = ops[index];
  const bool matmul = TakesMatMulBias(*graph, op);
  if (!matmul && (!IsWeightedOp(op, true) || HasFusedActivation(op) ||
                  !HasConstantWeights(*graph, op))) {
    return MaceStatus::MACE_SUCCESS;
  }
  const int consumer = SoleConsumer(*graph, consumers, op.output(0));
  if (consumer < 0) return MaceStatus::MACE_SUCCESS;
  const Tensor *output = graph->Find(op.output(0));
  std::vector<float> values;
  const ChannelOp kind =
      ClassifyConsumer(*graph, ops[consumer], op.output(0), output->rank(),
                       output->dim(-1), &values);
  // MatMul's B may come at run time: no filter to scale.
  if (kind == ChannelOp::kNone || (matmul && kind != ChannelOp::kAdd)) {
    return MaceStatus::MACE_SUCCESS;
  }
  if (kind == ChannelOp::kAdd) {
    MACE_RETURN_IF_ERROR(FoldChannelAffine(graph, index, {}, values));
  } else {
    MACE_RETURN_IF_ERROR(FoldChannelAffine(graph, index, values, {}));
  }
  // A BiasAdd's activation applies after the add; Eltwise has none.
  CopyActivationArgs(ops[consumer], &ops[index]);
  const size_t fused = AbsorbConsumer(&ops, index, consumer);
  *folded = true;
  return graph->Reinfer(fused);
}

}  // namespace

MaceStatus FoldBiasIntoConv(GraphBuilder *graph) {
  // Staying on a folded op folds the next add or product too.
  return FuseAtEveryOp(graph, TryFold);
}

}  // namespace converter
}  // namespace mace
