// A MatMul of a [M, K] activation by a constant [K, N] matrix is a
// FullyConnected layer with weight [N, K] (B transposed, or B itself under
// transpose_b), whose kernels pack the weight once and fuse bias and
// activation (FoldBiasIntoConv, FuseActivation).

#include <algorithm>

#include "mace/converter/passes/graph_utils.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

bool IsFloat(const Tensor *tensor) {
  return tensor != nullptr && tensor->dtype() == DT_FLOAT;
}

// The constant [N, K] weight computing A x B: B when it is stored so,
// otherwise a transposed copy under a new name.
std::string FullyConnectedWeight(GraphBuilder *graph, const OperatorDef &op,
                                 bool transpose_b) {
  const std::string &b = op.input(1);
  if (transpose_b) return b;
  const Tensor *tensor = graph->Find(b);
  const int64_t k = tensor->dim(0);
  const int64_t n = tensor->dim(1);
  const std::vector<float> values = ConstantValues(*graph, b);
  std::vector<float> transposed(values.size());
  for (int64_t r = 0; r < k; ++r) {
    for (int64_t c = 0; c < n; ++c) transposed[c * k + r] = values[r * n + c];
  }
  const std::string name = graph->UniqueName(op.name() + "__fc_weight");
  graph->AddConstant(name, {n, k}, transposed);
  return name;
}

void RemoveArg(OperatorDef *op, const std::string &name) {
  auto *args = op->mutable_arg();
  args->erase(std::remove_if(
                  args->begin(), args->end(),
                  [&name](const Argument &arg) { return arg.name() == name; }),
              args->end());
}

}  // namespace

MaceStatus MatMulToFullyConnected(GraphBuilder *graph) {
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    OperatorDef &op = ops[i];
    if (op.type() != "MatMul" || op.input_size() != 2 ||
        op.output_size() != 1) {
      continue;
    }
    const Tensor *a = graph->Find(op.input(0));
    const Tensor *b = graph->Find(op.input(1));
    if (!IsFloat(a) || !IsFloat(b) || a->rank() != 2 || b->rank() != 2 ||
        !b->is_constant() || IntArg(op, "transpose_a", 0) != 0) {
      continue;
    }
    const bool transpose_b = IntArg(op, "transpose_b", 0) != 0;
    op.set_input(1, FullyConnectedWeight(graph, op, transpose_b));
    op.set_type("FullyConnected");
    RemoveArg(&op, "transpose_a");
    RemoveArg(&op, "transpose_b");
    MACE_RETURN_IF_ERROR(graph->Reinfer(i));
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace converter
}  // namespace mace
