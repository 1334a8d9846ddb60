// GELU as exporters write it without a Gelu op (PyTorch's nn.GELU before
// ONNX opset 20, BERT-style code): 0.5 * x * (1 + erf(x / sqrt(2))), five
// Eltwise ops (x / sqrt(2) or x * (1 / sqrt(2)), ERF, + 1, then * x and
// * 0.5 in either order). One Activation GELU replaces them: one pass over
// the data instead of five. The ops it replaces are left without readers;
// RemoveDeadOps drops them.

#include <cmath>
#include <string>
#include <vector>

#include "mace/converter/passes/fusion_utils.h"
#include "mace/converter/passes/graph_utils.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"
#include "mace/ops/eltwise_type.h"

namespace mace {
namespace converter {
namespace {

// The value of a one-input Eltwise `type` op's scalar operand, when it has
// one on the side `scalar_index` (-1: either side, as for commutative ops).
bool ScalarOperand(const OperatorDef &op, EltwiseType type, int scalar_index,
                   float *value) {
  const Argument *scalar = FindArg(op, "scalar_input");
  if (!IsPlainEltwise(op, type, 1) || scalar == nullptr || !scalar->has_f()) {
    return false;
  }
  if (scalar_index >= 0 &&
      IntArg(op, "scalar_input_index", 1) != scalar_index) {
    return false;
  }
  *value = scalar->f();
  return true;
}

bool Near(float value, double target) {
  return std::fabs(value - target) <= 1e-6 * std::fabs(target);
}

// Whether ops[index] is x / sqrt(2) or x * (1 / sqrt(2)); *x is its input.
bool IsScaledBySqrtHalf(const OperatorDef &op, std::string *x) {
  float s = 0.0f;
  const bool scaled = (ScalarOperand(op, EltwiseType::kDiv, 1, &s) &&
                       Near(s, std::sqrt(2.0))) ||
                      (ScalarOperand(op, EltwiseType::kProd, -1, &s) &&
                       Near(s, std::sqrt(0.5)));
  if (scaled) *x = op.input(0);
  return scaled;
}

bool IsScalarOp(const OperatorDef &op, EltwiseType type, float value) {
  float s = 0.0f;
  return ScalarOperand(op, type, -1, &s) && s == value;
}

// From the ERF at `erf`, the op whose output is the GELU of x, or -1.
int GeluEnd(const GraphBuilder &graph, const ConsumerMap &consumers,
            const std::vector<OperatorDef> &ops, size_t erf, std::string *x) {
  if (!IsPlainEltwise(ops[erf], EltwiseType::kErf, 1)) return -1;
  const int scale = ProducerOf(ops, ops[erf].input(0));
  if (scale < 0 || !IsScaledBySqrtHalf(ops[scale], x) ||
      SoleConsumer(graph, consumers, ops[scale].output(0)) !=
          static_cast<int>(erf)) {
    return -1;
  }
  const int plus_one = SoleConsumer(graph, consumers, ops[erf].output(0));
  if (plus_one < 0 || !IsScalarOp(ops[plus_one], EltwiseType::kSum, 1.0f)) {
    return -1;
  }
  const std::string &gate = ops[plus_one].output(0);
  const int product = SoleConsumer(graph, consumers, gate);
  if (product < 0 || !IsPlainEltwise(ops[product], EltwiseType::kProd, 2)) {
    return -1;
  }
  const OperatorDef &mul = ops[product];
  const std::string &other = mul.input(0) == gate ? mul.input(1) : mul.input(0);
  if (other == *x) {
    // (x * gate) * 0.5
    const int half = SoleConsumer(graph, consumers, mul.output(0));
    return half >= 0 && IsScalarOp(ops[half], EltwiseType::kProd, 0.5f) ? half
                                                                        : -1;
  }
  // (0.5 * x) * gate
  const int half = ProducerOf(ops, other);
  if (half < 0 || !IsScalarOp(ops[half], EltwiseType::kProd, 0.5f) ||
      ops[half].input(0) != *x ||
      SoleConsumer(graph, consumers, other) != product) {
    return -1;
  }
  return product;
}

}  // namespace

MaceStatus FuseGelu(GraphBuilder *graph) {
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  ConsumerMap consumers = ConsumersOf(ops);
  for (size_t i = 0; i < ops.size(); ++i) {
    std::string x;
    const int end = GeluEnd(*graph, consumers, ops, i, &x);
    if (end < 0) continue;
    ReplaceWithActivation(x, "GELU", ops[i], &ops[end]);
    MACE_RETURN_IF_ERROR(graph->Reinfer(end));
    consumers = ConsumersOf(ops);
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace converter
}  // namespace mace
