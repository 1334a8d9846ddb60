// ShuffleNet's channel shuffle as frameworks spell it, three data moves:
//   channel last:  x [..., C] → Reshape [..., g, C/g] → Transpose (swap the
//                  last two) → Reshape [..., C]
//   channel first: x [N, C, ...] → Reshape [N, g, C/g, ...] → Transpose
//                  (swap dims 1 and 2) → Reshape [N, C, ...]
// Either moves channel a·(C/g) + b to b·g + a, which is ChannelShuffle
// (group g) on the channel axis. The channel-first form becomes
// Transpose to channel last → ChannelShuffle → Transpose back, and the
// transpose passes then cancel those transposes against their neighbours.

#include <algorithm>
#include <numeric>

#include "mace/converter/passes/graph_utils.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

// The three ops of a candidate pattern ending at ops[last].
struct ShufflePattern {
  int split = -1;      // the first Reshape
  int transpose = -1;  // the Transpose
  int64_t group = 0;
  bool channel_first = false;
};

// The op producing `tensor` when it is of `type` and `tensor` feeds only
// `reader`; else -1.
int SoleProducer(const GraphBuilder &graph,
                 const std::map<std::string, std::vector<size_t>> &consumers,
                 const std::string &tensor, size_t reader,
                 const std::string &type) {
  auto it = consumers.find(tensor);
  if (graph.IsGraphOutput(tensor) || it == consumers.end() ||
      it->second != std::vector<size_t>{reader}) {
    return -1;
  }
  const int producer = ProducerOf(graph.ops(), tensor);
  return producer >= 0 && graph.ops()[producer].type() == type ? producer : -1;
}

std::vector<int64_t> IdentityPerm(size_t rank) {
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  return perm;
}

// x [..., C] split into [..., g, C/g] with those two dims swapped.
bool MatchChannelLast(const Shape &x, const Shape &split,
                      const std::vector<int64_t> &perm, int64_t *group) {
  const size_t r = x.size();
  if (r < 1 || split.size() != r + 1) return false;
  for (size_t d = 0; d + 1 < r; ++d) {
    if (split[d] != x[d]) return false;
  }
  std::vector<int64_t> expected = IdentityPerm(r + 1);
  std::swap(expected[r - 1], expected[r]);
  *group = split[r - 1];
  return split[r - 1] * split[r] == x[r - 1] && perm == expected;
}

// x [N, C, ...] split into [N, g, C/g, ...] with dims 1 and 2 swapped.
bool MatchChannelFirst(const Shape &x, const Shape &split,
                       const std::vector<int64_t> &perm, int64_t *group) {
  const size_t r = x.size();
  if (r < 3 || split.size() != r + 1 || split[0] != x[0]) return false;
  for (size_t d = 2; d < r; ++d) {
    if (split[d + 1] != x[d]) return false;
  }
  std::vector<int64_t> expected = IdentityPerm(r + 1);
  std::swap(expected[1], expected[2]);
  *group = split[1];
  return split[1] * split[2] == x[1] && perm == expected;
}

bool Match(const GraphBuilder &graph,
           const std::map<std::string, std::vector<size_t>> &consumers,
           size_t last, ShufflePattern *pattern) {
  const std::vector<OperatorDef> &ops = graph.ops();
  const OperatorDef &merge = ops[last];
  if (merge.type() != "Reshape" || merge.output_size() != 1) return false;
  pattern->transpose =
      SoleProducer(graph, consumers, merge.input(0), last, "Transpose");
  if (pattern->transpose < 0) return false;
  const OperatorDef &transpose = ops[pattern->transpose];
  pattern->split = SoleProducer(graph, consumers, transpose.input(0),
                                pattern->transpose, "Reshape");
  if (pattern->split < 0) return false;
  const Tensor *x = graph.Find(ops[pattern->split].input(0));
  const Shape &split = graph.Find(transpose.input(0))->shape();
  const std::vector<int64_t> perm = IntsArg(transpose, "dims");
  if (x == nullptr || graph.Find(merge.output(0))->shape() != x->shape()) {
    return false;
  }
  if (MatchChannelLast(x->shape(), split, perm, &pattern->group)) {
    pattern->channel_first = false;
    return true;
  }
  pattern->channel_first = true;
  return MatchChannelFirst(x->shape(), split, perm, &pattern->group);
}

OperatorDef MakeOp(const std::string &type, const std::string &name,
                   const std::string &input, const std::string &output) {
  OperatorDef op;
  op.set_type(type);
  op.set_name(name);
  op.add_input(input);
  op.add_output(output);
  return op;
}

// Channel first: ops[split] moves channels last, ops[transpose] shuffles
// them, ops[last] moves them back (each op feeds the next, so this order
// is a valid schedule).
MaceStatus RewriteChannelFirst(GraphBuilder *graph, const ShufflePattern &p,
                               size_t last) {
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  const std::string base = ops[last].name();
  const std::string x = ops[p.split].input(0);
  const std::string output = ops[last].output(0);
  const size_t rank = graph->Find(x)->shape().size();
  std::vector<int64_t> to_last = IdentityPerm(rank);
  to_last.erase(to_last.begin() + 1);
  to_last.push_back(1);
  std::vector<int64_t> to_first(rank);
  for (size_t d = 0; d < rank; ++d) to_first[to_last[d]] = d;

  const std::string channel_last = graph->UniqueName(base + "__channel_last");
  ops[p.split] =
      MakeOp("Transpose", base + "__to_channel_last", x, channel_last);
  SetIntsArg(&ops[p.split], "dims", to_last);
  MACE_RETURN_IF_ERROR(graph->Reinfer(p.split));
  const std::string shuffled = graph->UniqueName(base + "__shuffled");
  ops[p.transpose] = MakeOp("ChannelShuffle", base, channel_last, shuffled);
  *ops[p.transpose].add_arg() = OpArg::Int("group", p.group).proto;
  MACE_RETURN_IF_ERROR(graph->Reinfer(p.transpose));
  ops[last] =
      MakeOp("Transpose", base + "__to_channel_first", shuffled, output);
  SetIntsArg(&ops[last], "dims", to_first);
  return graph->Reinfer(last);
}

}  // namespace

MaceStatus FuseChannelShuffle(GraphBuilder *graph) {
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  const auto consumers = ConsumersOf(ops);
  std::vector<bool> erase(ops.size(), false);
  for (size_t i = 0; i < ops.size(); ++i) {
    ShufflePattern p;
    if (!Match(*graph, consumers, i, &p)) continue;
    if (p.channel_first) {
      MACE_RETURN_IF_ERROR(RewriteChannelFirst(graph, p, i));
      continue;
    }
    const std::string x = ops[p.split].input(0);
    ops[i] = MakeOp("ChannelShuffle", ops[i].name(), x, ops[i].output(0));
    *ops[i].add_arg() = OpArg::Int("group", p.group).proto;
    erase[p.split] = true;
    erase[p.transpose] = true;
    MACE_RETURN_IF_ERROR(graph->Reinfer(i));
  }
  EraseOps(&ops, erase);
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace converter
}  // namespace mace
