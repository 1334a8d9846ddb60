#include "mace/converter/passes/graph_utils.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {

MaceStatus TransposeToReshape(GraphBuilder *graph) {
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    OperatorDef &op = ops[i];
    if (op.type() != "Transpose" || op.input_size() != 1) continue;
    const Tensor *in = graph->Find(op.input(0));
    const std::vector<int64_t> perm = IntsArg(op, "dims");
    if (in == nullptr || perm.size() != in->shape().size()) continue;
    // Memory order is unchanged iff the dims larger than 1 keep their
    // relative order.
    int64_t last = -1;
    bool moves_data = false;
    for (int64_t axis : perm) {
      if (in->shape()[axis] == 1) continue;
      moves_data = moves_data || axis < last;
      last = axis;
    }
    if (moves_data) continue;
    const Shape target = graph->Find(op.output(0))->shape();
    op.set_type("Reshape");
    op.clear_arg();
    SetIntsArg(&op, "shape", std::vector<int64_t>(target.begin(),
                                                   target.end()));
    MACE_RETURN_IF_ERROR(graph->Reinfer(i));
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace converter
}  // namespace mace
