// The NCHW flatten before a classifier, seen from NHWC data:
//   x [N,H,W,C] → Transpose(0,3,1,2) → Reshape [N, C·H·W] → FullyConnected
// FullyConnected flattens its input per batch in stored order, so it can
// read x itself once its weight columns are reordered from (c, h, w) to
// (h, w, c); the transpose (a real data move) and the reshape go away.
// A FullyConnected reading the transpose directly is handled alike.

#include "mace/converter/passes/graph_utils.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

const std::vector<int64_t> kNhwcToNchw = {0, 3, 1, 2};

bool OnlyReadBy(const GraphBuilder &graph,
                const std::map<std::string, std::vector<size_t>> &consumers,
                const std::string &tensor, size_t reader) {
  auto it = consumers.find(tensor);
  return !graph.IsGraphOutput(tensor) && it != consumers.end() &&
         it->second == std::vector<size_t>{reader};
}

// The ops between FullyConnected ops[index] and the NHWC tensor it could
// read: the transpose and (or -1) the reshape. False when the pattern does
// not hold.
bool MatchFlatten(const GraphBuilder &graph,
                  const std::map<std::string, std::vector<size_t>> &consumers,
                  size_t index, int *transpose, int *reshape) {
  const std::vector<OperatorDef> &ops = graph.ops();
  const OperatorDef &fc = ops[index];
  *reshape = -1;
  *transpose = ProducerOf(ops, fc.input(0));
  if (*transpose < 0 || !OnlyReadBy(graph, consumers, fc.input(0), index)) {
    return false;
  }
  if (ops[*transpose].type() == "Reshape") {
    const Tensor *flat = graph.Find(fc.input(0));
    *reshape = *transpose;
    const std::string &source = ops[*reshape].input(0);
    *transpose = ProducerOf(ops, source);
    if (flat->rank() != 2 || *transpose < 0 ||
        !OnlyReadBy(graph, consumers, source, *reshape)) {
      return false;
    }
  }
  const OperatorDef &t = ops[*transpose];
  if (t.type() != "Transpose" || t.input_size() != 1 ||
      IntsArg(t, "dims") != kNhwcToNchw) {
    return false;
  }
  const Tensor *x = graph.Find(t.input(0));
  return x->rank() == 4 &&
         (*reshape < 0 || graph.Find(fc.input(0))->dim(0) == x->dim(0));
}

// Weight [Cout, C·H·W] with columns in (c, h, w) order → (h, w, c) order.
std::vector<float> ReorderColumns(const std::vector<float> &weight,
                                  const Shape &x_shape) {
  const int64_t h = x_shape[1], w = x_shape[2], c = x_shape[3];
  const int64_t depth = h * w * c;
  std::vector<float> reordered(weight.size());
  const int64_t rows = static_cast<int64_t>(weight.size()) / depth;
  for (int64_t o = 0; o < rows; ++o) {
    const float *src = weight.data() + o * depth;
    float *dst = reordered.data() + o * depth;
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        for (int64_t ch = 0; ch < c; ++ch) {
          dst[(y * w + x) * c + ch] = src[(ch * h + y) * w + x];
        }
      }
    }
  }
  return reordered;
}

}  // namespace

MaceStatus FoldTransposeIntoFullyConnected(GraphBuilder *graph) {
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  const auto consumers = ConsumersOf(ops);
  std::vector<bool> erase(ops.size(), false);
  for (size_t i = 0; i < ops.size(); ++i) {
    OperatorDef &fc = ops[i];
    if (fc.type() != "FullyConnected" || fc.input_size() < 2 ||
        !graph->IsConstant(fc.input(1)) ||
        graph->Find(fc.input(1))->dtype() != DT_FLOAT) {
      continue;
    }
    int transpose = -1, reshape = -1;
    if (!MatchFlatten(*graph, consumers, i, &transpose, &reshape)) continue;
    const std::string &x = ops[transpose].input(0);
    const Tensor *weight = graph->Find(fc.input(1));
    const Shape weight_shape = weight->shape();
    const std::string name = graph->UniqueName(fc.name() + "__nhwc_weight");
    graph->AddConstant(name, weight_shape,
                       ReorderColumns(ConstantValues(*graph, fc.input(1)),
                                      graph->Find(x)->shape()));
    fc.set_input(0, x);
    fc.set_input(1, name);
    erase[transpose] = true;
    if (reshape >= 0) erase[reshape] = true;
    MACE_RETURN_IF_ERROR(graph->Reinfer(i));
  }
  EraseOps(&ops, erase);
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace converter
}  // namespace mace
