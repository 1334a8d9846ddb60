// Moves a per-channel scale of a convolution's input into the convolution:
// Eltwise PROD(x, s), x [N, H, W, C] and s [N or 1, 1, 1, C] (the gate of
// a squeeze-and-excitation block: MobileNet-v3's, EfficientNet's), whose
// product only a 1x1 ungrouped Conv2D reads, becomes that Conv2D on x with
// `input_scale` and s as an input (after the bias and a PRELU's slope,
// before a fused addend). At each Run the Conv2D scales a copy of its
// packed filter's rows where that filter is small, instead of the
// product's pass over x (EfficientNet-B0's first gate: a 32 x 16 filter
// against 112 x 112 x 32 values), else makes the product itself, as the
// Eltwise op did (conv_2d.cc).

#include <algorithm>
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

// x [N, H, W, C] and s [N or 1, 1, 1, C], both float, H * W > 1.
bool IsChannelScale(const GraphBuilder &graph, const std::string &x,
                    const std::string &s) {
  const Tensor *tx = graph.Find(x);
  const Tensor *ts = graph.Find(s);
  if (tx == nullptr || ts == nullptr || tx->dtype() != DT_FLOAT ||
      ts->dtype() != DT_FLOAT || tx->rank() != 4 || ts->rank() != 4) {
    return false;
  }
  return tx->dim(1) * tx->dim(2) > 1 &&
         (ts->dim(0) == 1 || ts->dim(0) == tx->dim(0)) && ts->dim(1) == 1 &&
         ts->dim(2) == 1 && ts->dim(3) == tx->dim(3);
}

// A 1x1 ungrouped Conv2D with a constant float filter and no input scale
// yet.
bool TakesInputScale(const GraphBuilder &graph, const OperatorDef &op) {
  if (op.type() != "Conv2D" || op.output_size() != 1 || op.input_size() < 2 ||
      HasInputScale(op) || IntArg(op, "group", 1) != 1 ||
      !graph.IsConstant(op.input(1))) {
    return false;
  }
  const Tensor *filter = graph.Find(op.input(1));
  return filter != nullptr && filter->dtype() == DT_FLOAT &&
         filter->rank() == 4 && filter->dim(1) == 1 && filter->dim(2) == 1;
}

MaceStatus TryFuse(GraphBuilder *graph, size_t product,
                   const ConsumerMap &consumers, bool *fused) {
  *fused = false;
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  if (!IsPlainBinaryEltwise(ops[product], EltwiseType::kProd)) {
    return MaceStatus::MACE_SUCCESS;
  }
  const std::string &gated = ops[product].output(0);
  const int conv = SoleConsumer(*graph, consumers, gated);
  if (conv < 0 || static_cast<size_t>(conv) < product ||
      ops[conv].input(0) != gated ||
      std::count(ops[conv].input().begin(), ops[conv].input().end(), gated) !=
          1) {
    return MaceStatus::MACE_SUCCESS;
  }
  for (int side = 0; side < 2; ++side) {
    const std::string &x = ops[product].input(side);
    const std::string &scale = ops[product].input(1 - side);
    if (!IsChannelScale(*graph, x, scale)) continue;
    if (!TakesInputScale(*graph, ops[conv])) return MaceStatus::MACE_SUCCESS;
    OperatorDef &op = ops[conv];
    if (op.input_size() < 3) {
      op.add_input(AddZeroBias(graph, op, graph->Find(op.input(1))->dim(0)));
    }
    // After the bias and a PRELU's slope; a fused addend stays last.
    const int at = 3 + (IsPRelu(op) ? 1 : 0);
    op.add_input(scale);
    for (int i = op.input_size() - 1; i > at; --i) {
      op.mutable_input()->SwapElements(i, i - 1);
    }
    op.set_input(0, x);
    SetIntArg(&op, kInputScaleArg, 1);
    RecordFusion(ops[product], &op);
    ops.erase(ops.begin() + product);
    *fused = true;
    return graph->Reinfer(conv - 1);
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace

MaceStatus FuseInputScale(GraphBuilder *graph) {
  return FuseAtEveryOp(graph, TryFuse);
}

}  // namespace converter
}  // namespace mace
