#include "mace/converter/passes/data_move_pattern.h"

#include <map>
#include <numeric>

#include "mace/converter/passes/graph_utils.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

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

void AddArgs(const std::vector<OpArg> &args, OperatorDef *op) {
  for (const OpArg &arg : args) *op->add_arg() = arg.proto;
}

// The data move ending at ops[last] (a Reshape), or false.
bool MatchDataMove(const GraphBuilder &graph,
                   const std::map<std::string, std::vector<size_t>> &consumers,
                   size_t last, DataMove *move) {
  const std::vector<OperatorDef> &ops = graph.ops();
  const OperatorDef &merge = ops[last];
  if (merge.type() != "Reshape" || merge.output_size() != 1) return false;
  move->merge = last;
  move->transpose =
      SoleProducer(graph, consumers, merge.input(0), last, "Transpose");
  if (move->transpose < 0) return false;
  const OperatorDef &transpose = ops[move->transpose];
  move->split = SoleProducer(graph, consumers, transpose.input(0),
                             move->transpose, "Reshape");
  if (move->split < 0) return false;
  const Tensor *x = graph.Find(ops[move->split].input(0));
  const Tensor *split = graph.Find(transpose.input(0));
  const Tensor *y = graph.Find(merge.output(0));
  if (x == nullptr || split == nullptr || y == nullptr) return false;
  move->input = x->shape();
  move->split_shape = split->shape();
  move->output = y->shape();
  move->perm = IntsArg(transpose, "dims");
  return true;
}

// A one-input, one-output op.
OperatorDef MakeOp(const std::string &type, const std::string &name,
                   const std::string &input, const std::string &output) {
  OperatorDef op;
  op.set_type(type);
  op.set_name(name);
  op.add_input(input);
  op.add_output(output);
  return op;
}

// The channel-first move replaced by Transpose → op → Transpose back, in
// the three ops' places (each feeds the next: a valid schedule).
MaceStatus RewriteChannelFirst(GraphBuilder *graph, const DataMove &move,
                               const std::string &type,
                               const std::vector<OpArg> &args) {
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  const std::string base = ops[move.merge].name();
  const std::string x = ops[move.split].input(0);
  const std::string output = ops[move.merge].output(0);
  const size_t rank = move.input.size();
  std::vector<int64_t> to_last = IdentityPerm(rank);
  to_last.erase(to_last.begin() + 1);
  to_last.push_back(1);
  std::vector<int64_t> to_first(rank);
  for (size_t d = 0; d < rank; ++d) to_first[to_last[d]] = d;

  const std::string channel_last = graph->UniqueName(base + "__channel_last");
  ops[move.split] =
      MakeOp("Transpose", base + "__to_channel_last", x, channel_last);
  SetIntsArg(&ops[move.split], "dims", to_last);
  MACE_RETURN_IF_ERROR(graph->Reinfer(move.split));
  const std::string moved = graph->UniqueName(base + "__moved");
  ops[move.transpose] = MakeOp(type, base, channel_last, moved);
  AddArgs(args, &ops[move.transpose]);
  MACE_RETURN_IF_ERROR(graph->Reinfer(move.transpose));
  ops[move.merge] =
      MakeOp("Transpose", base + "__to_channel_first", moved, output);
  SetIntsArg(&ops[move.merge], "dims", to_first);
  return graph->Reinfer(move.merge);
}

// The channel-last move replaced by the op in the last op's place, the
// other two marked in *erase.
MaceStatus RewriteChannelLast(GraphBuilder *graph, const DataMove &move,
                              const std::string &type,
                              const std::vector<OpArg> &args,
                              std::vector<bool> *erase) {
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  const std::string x = ops[move.split].input(0);
  ops[move.merge] =
      MakeOp(type, ops[move.merge].name(), x, ops[move.merge].output(0));
  AddArgs(args, &ops[move.merge]);
  (*erase)[move.split] = true;
  (*erase)[move.transpose] = true;
  return graph->Reinfer(move.merge);
}

}  // namespace

MaceStatus FuseDataMoves(GraphBuilder *graph, ClassifyMoveFn classify) {
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  const auto consumers = ConsumersOf(ops);
  std::vector<bool> erase(ops.size(), false);
  for (size_t i = 0; i < ops.size(); ++i) {
    DataMove move;
    MoveAsOp as;
    if (!MatchDataMove(*graph, consumers, i, &move) || !classify(move, &as)) {
      continue;
    }
    if (as.channel_first) {
      MACE_RETURN_IF_ERROR(RewriteChannelFirst(graph, move, as.type, as.args));
    } else {
      MACE_RETURN_IF_ERROR(
          RewriteChannelLast(graph, move, as.type, as.args, &erase));
    }
  }
  EraseOps(&ops, erase);
  return MaceStatus::MACE_SUCCESS;
}

std::vector<int64_t> IdentityPerm(size_t rank) {
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  return perm;
}

}  // namespace converter
}  // namespace mace
