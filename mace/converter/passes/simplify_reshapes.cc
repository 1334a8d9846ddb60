#include "mace/converter/passes/graph_utils.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

bool IsReshapeLike(const std::string &type) {
  return type == "Reshape" || type == "Squeeze" || type == "ExpandDims" ||
         type == "Unsqueeze";
}

}  // namespace

MaceStatus SimplifyReshapes(GraphBuilder *graph) {
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  std::vector<bool> erase(ops.size(), false);
  for (size_t i = 0; i < ops.size(); ++i) {
    OperatorDef &op = ops[i];
    if (op.input_size() < 1 || op.output_size() != 1) continue;
    const std::string output = op.output(0);
    const Tensor *in = graph->Find(op.input(0));
    const Tensor *out = graph->Find(output);
    const bool same_shape = in != nullptr && out != nullptr &&
                            in->shape() == out->shape() &&
                            in->dtype() == out->dtype();
    const bool removable =
        (op.type() == "Identity" || (IsReshapeLike(op.type()) && same_shape)) &&
        !graph->IsGraphOutput(output);
    if (removable) {
      ReplaceUses(&ops, output, op.input(0));
      erase[i] = true;
      continue;
    }
    if (!IsReshapeLike(op.type())) continue;
    // A reshape of a reshape reads the first one's input instead; the
    // result only depends on the final shape, so it becomes a Reshape to it.
    const int producer = ProducerOf(ops, op.input(0));
    if (producer < 0 || erase[producer] ||
        !IsReshapeLike(ops[producer].type())) {
      continue;
    }
    const Shape target = out->shape();
    const std::string source = ops[producer].input(0);
    op.set_type("Reshape");
    op.clear_arg();
    op.clear_input();
    op.add_input(source);
    SetIntsArg(&op, "shape", std::vector<int64_t>(target.begin(),
                                                   target.end()));
    MACE_RETURN_IF_ERROR(graph->Reinfer(i));
  }
  EraseOps(&ops, erase);
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace converter
}  // namespace mace
