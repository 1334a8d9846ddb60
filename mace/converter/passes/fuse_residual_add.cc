// Moves the addition of a residual connection into the convolution whose
// output it adds to: Eltwise SUM(conv(x), r), r of conv's output shape,
// becomes conv(x) with `fused_add` and r as its last input, which adds r in
// the GEMM epilogue while each output block is still in cache (ResNet's and
// MobileNet-v2's blocks; a following ReLU then fuses as the activation,
// applied after the addition). The convolution takes the SUM's place in the
// op order, after r's producer.

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

// A Conv2D that can take an addend: no activation yet (act(conv) + r is
// not act(conv + r)) and no addend already.
bool AcceptsAddend(const OperatorDef &op) {
  return op.type() == "Conv2D" && op.output_size() == 1 &&
         !HasFusedActivation(op) && !HasFusedAdd(op);
}

bool SameFloatShape(const GraphBuilder &graph, const std::string &a,
                    const std::string &b) {
  const Tensor *ta = graph.Find(a);
  const Tensor *tb = graph.Find(b);
  return ta != nullptr && tb != nullptr && ta->dtype() == DT_FLOAT &&
         tb->dtype() == DT_FLOAT && ta->shape() == tb->shape();
}

MaceStatus TryFuse(GraphBuilder *graph, size_t sum,
                   const ConsumerMap &consumers, bool *fused) {
  *fused = false;
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  if (!IsPlainBinaryEltwise(ops[sum], EltwiseType::kSum)) {
    return MaceStatus::MACE_SUCCESS;
  }
  for (int side = 0; side < 2; ++side) {
    const std::string &operand = ops[sum].input(side);
    const std::string &addend = ops[sum].input(1 - side);
    const int conv = ProducerOf(ops, operand);
    // conv < sum in the sorted op list; the check keeps the moves below
    // in range should a frontend ever emit them out of order.
    if (conv < 0 || static_cast<size_t>(conv) > sum ||
        !AcceptsAddend(ops[conv]) ||
        SoleConsumer(*graph, consumers, operand) != static_cast<int>(sum) ||
        !SameFloatShape(*graph, operand, addend)) {
      continue;
    }
    OperatorDef fused_op = ops[conv];
    if (fused_op.input_size() < 3) {
      fused_op.add_input(
          AddZeroBias(graph, fused_op, graph->Find(operand)->dim(-1)));
    }
    fused_op.add_input(addend);
    SetIntArg(&fused_op, kFusedAddArg, 1);
    fused_op.set_output(0, ops[sum].output(0));
    RecordFusion(ops[sum], &fused_op);
    ops[sum] = std::move(fused_op);
    ops.erase(ops.begin() + conv);
    *fused = true;
    return graph->Reinfer(sum - 1);
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace

MaceStatus FuseResidualAdd(GraphBuilder *graph) {
  return FuseAtEveryOp(graph, TryFuse);
}

}  // namespace converter
}  // namespace mace
