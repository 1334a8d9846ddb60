// Moves a Transpose below the elementwise op, concat, pad, slice, split,
// reduce, argmax, softmax or gather that consumes it:
//   T(x) → U → y   becomes   U(x) → T → y
// (a split gets one transpose per output; a reduce or argmax that drops
// its axes and leaves the kept ones in order needs none).
// The frontends wrap every NHWC op in transposes; sinking lets each
// trailing transpose meet the next op's leading one, where
// CancelTransposes removes both.

#include <algorithm>
#include <set>

#include "mace/converter/passes/fusion_utils.h"
#include "mace/converter/passes/graph_utils.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

bool IsElementwise(const OperatorDef &op) {
  if (op.type() == "Cast") return true;
  if (op.type() == "Activation") {
    return !IsPRelu(op) && op.input_size() == 1;
  }
  return op.type() == "Eltwise";
}

// The transpose op feeding `tensor` (an input of ops[consumer]) when the
// sunk copy can replace it without adding work: it feeds nothing else but
// transposes (which keep reading it and compose with it in
// CancelTransposes), or `shared_ok`: the op's own output feeds only
// transposes, so the sunk copy composes with those and the transpose may
// stay for its other consumers. The latter sinks DenseNet's concats, whose
// NCHW inputs each feed every later concat of the block.
int SoleTranspose(const std::vector<OperatorDef> &ops,
                  const std::map<std::string, std::vector<size_t>> &consumers,
                  const GraphBuilder &graph, const std::string &tensor,
                  size_t consumer, bool shared_ok) {
  const int producer = ProducerOf(ops, tensor);
  if (producer < 0 || ops[producer].type() != "Transpose") return -1;
  // A transpose of a transpose is CancelTransposes' job; sinking it would
  // separate the pair.
  const int source = ProducerOf(ops, ops[producer].input(0));
  if (source >= 0 && ops[source].type() == "Transpose") return -1;
  auto it = consumers.find(tensor);
  if (it == consumers.end()) return -1;
  for (size_t other : it->second) {
    if (other != consumer && ops[other].type() != "Transpose" && !shared_ok) {
      return -1;
    }
  }
  if (graph.IsGraphOutput(tensor)) return -1;
  return producer;
}

// A constant broadcast against a tensor transposed by `perm`: the same
// values laid out for the untransposed tensor (inverse permutation).
MaceStatus UntransposeConstant(GraphBuilder *graph, const std::string &name,
                               const std::vector<int64_t> &perm,
                               std::string *result) {
  const Tensor *constant = graph->Find(name);
  const size_t rank = perm.size();
  if (constant->rank() > static_cast<int>(rank)) {
    return Unsupported("constant '", name, "' has a higher rank than ",
                       "the tensor it is combined with");
  }
  if (constant->size() == 1) {
    *result = name;  // a scalar broadcasts the same way in any layout
    return MaceStatus::MACE_SUCCESS;
  }
  Shape full(rank - constant->rank(), 1);
  full.insert(full.end(), constant->shape().begin(), constant->shape().end());
  const std::string reshaped = graph->UniqueName(name + "__full");
  MACE_RETURN_IF_ERROR(graph->AddOp(
      "Reshape", reshaped, {name}, {reshaped},
      {OpArg::Ints("shape", std::vector<int64_t>(full.begin(), full.end()))}));
  std::vector<int64_t> inverse(rank);
  for (size_t d = 0; d < rank; ++d) inverse[perm[d]] = static_cast<int64_t>(d);
  *result = graph->UniqueName(name + "__untransposed");
  return graph->AddOp("Transpose", *result, {reshaped}, {*result},
                      {OpArg::Ints("dims", inverse)});
}

// Whether `reshape` moves data exactly as a Transpose by `perm` would: the
// reshape of [N, 1, 1, C] to [N, C, 1, 1] that TransposeToReshape makes of
// a transpose moving only unit dims (a squeeze-excitation scale). Such a
// reshape copies nothing, so the op may read its input whoever else reads
// its output.
bool IsTransposeByReshape(const GraphBuilder &graph, const OperatorDef &reshape,
                          const std::vector<int64_t> &perm) {
  if (reshape.input_size() < 1 || reshape.output_size() != 1) return false;
  const Tensor *in = graph.Find(reshape.input(0));
  const Tensor *out = graph.Find(reshape.output(0));
  if (in == nullptr || out == nullptr || graph.IsConstant(reshape.input(0)) ||
      in->rank() != static_cast<int>(perm.size()) ||
      out->rank() != static_cast<int>(perm.size())) {
    return false;
  }
  int64_t last_moved = -1;  // dims of size > 1 must keep their order
  for (size_t d = 0; d < perm.size(); ++d) {
    const int64_t size = in->dim(static_cast<int>(perm[d]));
    if (out->dim(static_cast<int>(d)) != size) return false;
    if (size != 1) {
      if (perm[d] < last_moved) return false;
      last_moved = perm[d];
    }
  }
  return true;
}

// The ops a transpose sinks below, each with the arguments that follow it.
enum class SinkKind {
  kNone,
  kElementwise,
  kConcat,  // `axis`
  // Pad (one input, its paddings an argument) moves like an elementwise op
  // with its paddings permuted: Inception's average pools are ONNX Pads.
  kPad,
  // So does an ONNX-style Slice (arguments only) with its axes mapped:
  // ShuffleNetV2 splits each shuffled tensor in two with Slices.
  kSlice,
  // And a Split (its sizes an argument) with its axis mapped, each output
  // transposed back: ShuffleNetV2 as torch.split or tf.split exports it.
  kSplit,
  // And ops of one axis or a set of axes: a Reduce (ShuffleNetV2 pools
  // with x.mean([2, 3]) on NCHW data), an ArgMax (axis an argument) and a
  // Softmax (a segmentation head's, over the channels of NCHW data).
  kReduce,
  kArgMax,
  kSoftmax,
  // And a Gather along one axis by constant 1-D indices (a reordering of
  // channels): its indices stay as they are (input 1).
  kGather,
};

SinkKind KindOf(const OperatorDef &op) {
  if (IsElementwise(op)) return SinkKind::kElementwise;
  if (op.type() == "Concat") return SinkKind::kConcat;
  if (op.type() == "Gather" && op.input_size() == 2) return SinkKind::kGather;
  if (op.input_size() != 1) return SinkKind::kNone;
  if (op.type() == "Pad") return SinkKind::kPad;
  if (op.type() == "Slice") return SinkKind::kSlice;
  if (op.type() == "Split") return SinkKind::kSplit;
  if (op.type() == "Reduce") return SinkKind::kReduce;
  if (op.type() == "ArgMax") return SinkKind::kArgMax;
  if (op.type() == "Softmax") return SinkKind::kSoftmax;
  return SinkKind::kNone;
}

// Dim `axis` of the transposed tensor (negative from the back) as a dim of
// the untransposed one; false when out of range.
bool MapAxis(const std::vector<int64_t> &perm, int64_t *axis) {
  const int64_t rank = static_cast<int64_t>(perm.size());
  if (*axis < -rank || *axis >= rank) return false;
  *axis = perm[*axis < 0 ? *axis + rank : *axis];
  return true;
}

// Sets int argument `name` (default `fallback` when absent) to its axis
// mapped by `perm`; false when out of range.
bool MapAxisArg(const std::vector<int64_t> &perm, const std::string &name,
                int64_t fallback, OperatorDef *op) {
  int64_t axis = IntArg(*op, name, fallback);
  if (!MapAxis(perm, &axis)) return false;
  SetIntArg(op, name, axis);
  return true;
}

// Whether an op that reduces the transposed dims `reduced` away (no
// keepdims) may read the untransposed tensor and give the same output with
// no transpose after it: the kept dims must come out in the same order.
bool KeptDimsStayInOrder(const std::vector<int64_t> &perm,
                         const std::vector<bool> &reduced) {
  int64_t last_kept = -1;
  for (size_t d = 0; d < perm.size(); ++d) {
    if (reduced[d]) continue;
    if (perm[d] < last_kept) return false;
    last_kept = perm[d];
  }
  return true;
}

// Rewrites the arguments of `moved` (of `kind`) for its input's
// untransposed layout, `perm` being the transpose it moves below. False
// when it cannot move. *transpose_after false: its output is already the
// transposed op's (an op that drops the axes it reduces and leaves the kept
// ones in order).
bool MoveArgs(SinkKind kind, const std::vector<int64_t> &perm,
              OperatorDef *moved, bool *transpose_after) {
  const int64_t rank = static_cast<int64_t>(perm.size());
  *transpose_after = true;
  switch (kind) {
    case SinkKind::kPad: {
      // Dim d of the transposed tensor is dim perm[d] of the untransposed
      // one.
      const std::vector<int64_t> pads = IntsArg(*moved, "paddings");
      if (pads.size() != 2 * perm.size()) return false;
      std::vector<int64_t> moved_pads(pads.size());
      for (size_t d = 0; d < perm.size(); ++d) {
        moved_pads[2 * perm[d]] = pads[2 * d];
        moved_pads[2 * perm[d] + 1] = pads[2 * d + 1];
      }
      SetIntsArg(moved, "paddings", moved_pads);
      return true;
    }
    case SinkKind::kSlice: {
      std::vector<int64_t> axes = IntsArg(*moved, "axes");
      if (axes.empty()) {  // ONNX's default: the first len(starts) dims
        const size_t count = IntsArg(*moved, "starts").size();
        for (size_t d = 0; d < count; ++d) axes.push_back(d);
      }
      for (int64_t &axis : axes) {
        if (!MapAxis(perm, &axis)) return false;
      }
      SetIntsArg(moved, "axes", axes);
      return true;
    }
    case SinkKind::kConcat:
    case SinkKind::kSplit:
    case SinkKind::kGather:
      return MapAxisArg(perm, "axis", 0, moved);
    case SinkKind::kSoftmax:
      return MapAxisArg(perm, "axis", -1, moved);
    case SinkKind::kReduce: {
      std::vector<int64_t> axes = IntsArg(*moved, "axis");
      std::vector<bool> reduced(rank, axes.empty());  // none listed: all
      for (int64_t &axis : axes) {
        if (axis < -rank || axis >= rank) return false;
        reduced[axis < 0 ? axis + rank : axis] = true;
        MapAxis(perm, &axis);
      }
      if (!axes.empty()) SetIntsArg(moved, "axis", axes);
      *transpose_after = IntArg(*moved, "keepdims", 0) != 0;
      return *transpose_after || KeptDimsStayInOrder(perm, reduced);
    }
    case SinkKind::kArgMax: {
      const int64_t axis = IntArg(*moved, "axis", 0);
      if (axis < -rank || axis >= rank) return false;
      std::vector<bool> reduced(rank, false);
      reduced[axis < 0 ? axis + rank : axis] = true;
      if (!MapAxisArg(perm, "axis", 0, moved)) return false;
      *transpose_after = IntArg(*moved, "keepdims", 0) != 0;
      return *transpose_after || KeptDimsStayInOrder(perm, reduced);
    }
    default:
      return true;
  }
}

// Whether every op that reads `tensor` (a transpose's output, `perm` its
// permutation), and every op joined to those through the tensors between
// them, can sink its transposes: a region of ops of SinkKind whose inputs
// are constants, the region's own outputs, or outputs of transposes by
// `perm` (whose every other reader is in the region or a transpose), none
// of it a graph output, its outputs read only by transposes or by the
// region. Then the region's ops may sink the shared transposes one after
// the other: once all have, nothing reads them, and each transpose sunk out
// of the region meets a transpose. That is how x and f(x) joined again lose
// their transposes (a CReLU's concat(x, -x), a concat of slices of x), and
// two branches merged by elementwise gates (sum, tanh, sigmoid, product).
bool RegionSinksWhole(const std::vector<OperatorDef> &ops,
                      const std::map<std::string, std::vector<size_t>> &readers,
                      const GraphBuilder &graph, const std::string &tensor,
                      const std::vector<int64_t> &perm) {
  constexpr size_t kMaxRegion = 32;  // a local rewrite, not a graph search
  std::set<size_t> region;
  std::set<std::string> seen = {tensor};
  std::vector<std::string> frontier = {tensor};
  std::vector<int> makers_needed;  // of inputs made inside the region
  while (!frontier.empty()) {
    const std::string value = frontier.back();
    frontier.pop_back();
    if (graph.IsGraphOutput(value)) return false;
    auto users = readers.find(value);
    if (users == readers.end()) continue;
    for (size_t user : users->second) {
      if (ops[user].type() == "Transpose" || region.count(user) > 0) continue;
      if (KindOf(ops[user]) == SinkKind::kNone || region.size() == kMaxRegion) {
        return false;
      }
      region.insert(user);
      for (const std::string &output : ops[user].output()) {
        if (seen.insert(output).second) frontier.push_back(output);
      }
      for (const std::string &input : ops[user].input()) {
        if (graph.IsConstant(input)) continue;
        const int maker = ProducerOf(ops, input);
        if (maker >= 0 && ops[maker].type() == "Transpose" &&
            IntsArg(ops[maker], "dims") == perm) {
          if (seen.insert(input).second) frontier.push_back(input);
        } else {
          makers_needed.push_back(maker);
        }
      }
    }
  }
  for (int maker : makers_needed) {
    if (maker < 0 || region.count(static_cast<size_t>(maker)) == 0) {
      return false;
    }
  }
  return true;
}

// Tries to sink the transposes feeding ops[index]; *placed is the count
// of transposes placed after it (0: nothing moved).
MaceStatus TrySink(GraphBuilder *graph, size_t index, int *placed) {
  *placed = 0;
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  const OperatorDef &op = ops[index];
  const SinkKind kind = KindOf(op);
  if (kind == SinkKind::kNone || op.output_size() < 1 ||
      (op.output_size() != 1 && kind != SinkKind::kSplit)) {
    return MaceStatus::MACE_SUCCESS;
  }
  const auto consumers = ConsumersOf(ops);
  bool output_feeds_transposes = true;
  for (const std::string &output : op.output()) {
    auto users = consumers.find(output);
    output_feeds_transposes = output_feeds_transposes &&
                              !graph->IsGraphOutput(output) &&
                              users != consumers.end();
    if (!output_feeds_transposes) break;
    for (size_t user : users->second) {
      output_feeds_transposes =
          output_feeds_transposes && ops[user].type() == "Transpose";
    }
  }
  std::vector<int64_t> perm;
  std::vector<int> transposes(op.input_size(), -1);
  std::vector<int> reshapes(op.input_size(), -1);
  if (kind == SinkKind::kGather) {
    // Indices other than a constant list would change the output's rank.
    const Tensor *indices = graph->Find(op.input(1));
    if (!graph->IsConstant(op.input(1)) || indices == nullptr ||
        indices->rank() != 1) {
      return MaceStatus::MACE_SUCCESS;
    }
  }
  // Inputs that are not the transposed data: constants broadcast against
  // it (laid out again below), a Gather's indices (kept).
  auto data_input = [&](int i) {
    return kind == SinkKind::kGather
               ? i == 0
               : !graph->IsConstant(op.input(i)) || kind == SinkKind::kConcat;
  };
  for (int i = 0; i < op.input_size(); ++i) {
    if (!data_input(i)) continue;
    transposes[i] = SoleTranspose(ops, consumers, *graph, op.input(i), index,
                                  output_feeds_transposes);
    if (transposes[i] < 0 && !output_feeds_transposes) {
      // Shared with other readers: the region search, only once the cheap
      // rules have failed (it walks the ops around; asked for every input,
      // DenseNet-121 took 1.6x as long to convert).
      const int maker = ProducerOf(ops, op.input(i));
      if (maker >= 0 && ops[maker].type() == "Transpose" &&
          RegionSinksWhole(ops, consumers, *graph, op.input(i),
                           IntsArg(ops[maker], "dims"))) {
        transposes[i] = SoleTranspose(ops, consumers, *graph, op.input(i),
                                      index, /*shared_ok=*/true);
      }
    }
    if (transposes[i] < 0) {
      reshapes[i] = ProducerOf(ops, op.input(i));
      if (reshapes[i] < 0 || ops[reshapes[i]].type() != "Reshape") {
        return MaceStatus::MACE_SUCCESS;
      }
      continue;
    }
    const std::vector<int64_t> this_perm = IntsArg(ops[transposes[i]], "dims");
    if (!perm.empty() && this_perm != perm) return MaceStatus::MACE_SUCCESS;
    perm = this_perm;
  }
  if (perm.empty()) return MaceStatus::MACE_SUCCESS;
  for (int i = 0; i < op.input_size(); ++i) {
    if (reshapes[i] >= 0 &&
        !IsTransposeByReshape(*graph, ops[reshapes[i]], perm)) {
      return MaceStatus::MACE_SUCCESS;
    }
  }
  // Rewire op to the untransposed inputs.
  std::vector<std::string> new_inputs;
  for (int i = 0; i < op.input_size(); ++i) {
    if (!data_input(i) && kind == SinkKind::kGather) {
      new_inputs.push_back(op.input(i));
    } else if (transposes[i] >= 0) {
      new_inputs.push_back(ops[transposes[i]].input(0));
    } else if (reshapes[i] >= 0) {
      new_inputs.push_back(ops[reshapes[i]].input(0));
    } else {
      std::string untransposed;
      MACE_RETURN_IF_ERROR(
          UntransposeConstant(graph, op.input(i), perm, &untransposed));
      new_inputs.push_back(untransposed);
    }
  }
  OperatorDef moved = ops[index];
  for (int i = 0; i < moved.input_size(); ++i)
    moved.set_input(i, new_inputs[i]);
  bool transpose_after = true;
  if (!MoveArgs(kind, perm, &moved, &transpose_after)) {
    return MaceStatus::MACE_SUCCESS;
  }
  if (!transpose_after) {
    ops[index] = moved;
    return graph->Reinfer(index);
  }
  const int model = *std::max_element(transposes.begin(), transposes.end());
  std::vector<OperatorDef> placed_transposes;
  for (int o = 0; o < moved.output_size(); ++o) {
    const std::string final_output = moved.output(o);
    const std::string staged =
        graph->UniqueName(final_output + "__untransposed");
    moved.set_output(o, staged);
    OperatorDef transpose = ops[model];  // any of the input transposes
    transpose.clear_input();
    transpose.add_input(staged);
    transpose.set_output(0, final_output);
    transpose.set_name(graph->UniqueName(moved.name() + "__sunk_transpose"));
    placed_transposes.push_back(std::move(transpose));
  }
  // Old transposes are now unused (Finish drops them); place the moved op
  // and its transposes where the op was.
  ops[index] = moved;
  ops.insert(ops.begin() + index + 1, placed_transposes.begin(),
             placed_transposes.end());
  for (size_t i = index; i <= index + placed_transposes.size(); ++i) {
    MACE_RETURN_IF_ERROR(graph->Reinfer(i));
  }
  *placed = static_cast<int>(placed_transposes.size());
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace

MaceStatus SinkTransposes(GraphBuilder *graph) {
  for (size_t i = 0; i < graph->ops().size(); ++i) {
    int placed = 0;
    MACE_RETURN_IF_ERROR(TrySink(graph, i, &placed));
    i += placed;  // skip the transposes just placed after it
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace converter
}  // namespace mace
