// Shapes, identities and index ops. Shape, Size and Rank become constants
// (every shape is static after conversion), and every op whose inputs are
// all constant folds as it is emitted, so Keras' Shape → StridedSlice →
// Pack → Reshape chains end as a constant target shape.

#include "mace/converter/tensorflow/tf_lowering.h"
#include "mace/converter/tensorflow/tf_tensor.h"
#include "mace/core/status.h"
#include "mace/ops/eltwise_type.h"

namespace mace {
namespace converter {
namespace {

// Constants made here (Fill, ZerosLike, BroadcastTo) are at most this
// large (elements): bigger ones come from corrupted shapes.
constexpr int64_t kMaxFilledElements = kMaxTfTensorElements;

// Identity, StopGradient, PlaceholderWithDefault, ...: the output is the
// input under another name.
MaceStatus LowerIdentity(const TfNode &node, TfContext *context) {
  if (node.num_inputs() < 1) return node.InvalidArgs("has no input");
  const int count = node.op() == "IdentityN" ? node.num_inputs() : 1;
  for (int i = 0; i < count; ++i) {
    context->Rename(TfTensorName(node.name(), i), node.Input(i));
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus NormalizeAxis(const TfNode &node, int64_t axis, int rank,
                         int64_t *normalized) {
  if (axis < -rank || axis >= rank) {
    return node.InvalidArgs("axis ", axis, " is out of range for rank ", rank);
  }
  *normalized = axis < 0 ? axis + rank : axis;
  return MaceStatus::MACE_SUCCESS;
}

std::vector<int32_t> ToInt32(const Shape &shape) {
  return std::vector<int32_t>(shape.begin(), shape.end());
}

MaceStatus LowerShape(const TfNode &node, TfContext *context) {
  if (node.op() == "ShapeN") {
    for (int i = 0; i < node.num_inputs(); ++i) {
      const Shape &s = context->ShapeOf(node.Input(i));
      context->graph()->AddConstantInt(TfTensorName(node.name(), i),
                                       {static_cast<int64_t>(s.size())},
                                       ToInt32(s));
    }
    return MaceStatus::MACE_SUCCESS;
  }
  MACE_RETURN_IF_ERROR(node.ExpectInputs(1, 1));
  const Shape &s = context->ShapeOf(node.Input(0));
  const std::string out = TfTensorName(node.name(), 0);
  if (node.op() == "Shape") {
    context->graph()->AddConstantInt(out, {static_cast<int64_t>(s.size())},
                                     ToInt32(s));
  } else if (node.op() == "Rank") {
    context->graph()->AddConstantInt(out, {}, {static_cast<int32_t>(s.size())});
  } else {  // Size
    const int64_t count = ShapeElementCount(s);
    if (count > INT32_MAX) return node.Unsupported("size above 2^31");
    context->graph()->AddConstantInt(out, {}, {static_cast<int32_t>(count)});
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus LowerReshape(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(2, 2));
  std::vector<int64_t> shape;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &shape));
  return context->Emit("Reshape", node.name(), {node.Input(0)},
                       {node.Output(0)}, {OpArg::Ints("shape", shape)});
}

MaceStatus LowerSqueeze(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(1, 1));
  std::vector<int64_t> axes;
  MACE_RETURN_IF_ERROR(node.Ints("squeeze_dims", {}, &axes));
  return context->Emit("Squeeze", node.name(), {node.Input(0)},
                       {node.Output(0)}, {OpArg::Ints("axis", axes)});
}

MaceStatus LowerExpandDims(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(2, 2));
  std::vector<int64_t> axis;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &axis));
  if (axis.size() != 1) {
    return node.InvalidArgs("dim should be one value, has ", axis.size());
  }
  return context->Emit("ExpandDims", node.name(), {node.Input(0)},
                       {node.Output(0)}, {OpArg::Int("axis", axis[0])});
}

MaceStatus LowerTranspose(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(2, 2));
  std::vector<int64_t> perm;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &perm));
  return context->Emit("Transpose", node.name(), {node.Input(0)},
                       {node.Output(0)}, {OpArg::Ints("dims", perm)});
}

MaceStatus LowerFill(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(2, 2));
  std::vector<int64_t> dims;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 0, &dims));
  const int64_t count = ShapeElementCount(dims);
  if (count < 0 || count > kMaxFilledElements) {
    return node.InvalidArgs("invalid dims ", ShapeToString(dims));
  }
  const std::string shape = context->Temp(node.name() + "__dims");
  context->graph()->AddConstantInt(shape, {static_cast<int64_t>(dims.size())},
                                   ToInt32(dims));
  return context->Emit("Fill", node.name(), {shape, node.Input(1)},
                       {node.Output(0)});
}

// ZerosLike / OnesLike: a constant of the input's shape and type.
MaceStatus LowerFilledLike(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(1, 1));
  const Shape &s = context->ShapeOf(node.Input(0));
  const int value = node.op() == "OnesLike" ? 1 : 0;
  const int64_t count = ShapeElementCount(s);
  if (count < 0 || count > kMaxFilledElements) {
    return node.Unsupported("a constant of shape ", ShapeToString(s));
  }
  const std::string out = TfTensorName(node.name(), 0);
  if (context->IsInt(node.Input(0))) {
    context->graph()->AddConstantInt(out, s,
                                     std::vector<int32_t>(count, value));
  } else {
    context->graph()->AddConstant(out, s, std::vector<float>(count, value));
  }
  return MaceStatus::MACE_SUCCESS;
}

// BroadcastTo(x, shape) as x + zeros(shape) (numpy broadcasting): folds
// away for constant x, the usual case (weights shared across a batch).
MaceStatus LowerBroadcastTo(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(2, 2));
  std::vector<int64_t> shape;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &shape));
  const int64_t count = ShapeElementCount(shape);
  if (count < 0 || count > kMaxFilledElements) {
    return node.InvalidArgs("invalid target shape ", ShapeToString(shape));
  }
  const std::string zeros = context->Temp(node.name() + "__zeros");
  if (context->IsInt(node.Input(0))) {
    context->graph()->AddConstantInt(zeros, shape,
                                     std::vector<int32_t>(count, 0));
  } else {
    context->graph()->AddConstant(zeros, shape, std::vector<float>(count, 0));
  }
  return context->Emit("Eltwise", node.name(), {node.Input(0), zeros},
                       {node.Output(0)}, {OpArg::Int("type", kSum)});
}

// ConcatV2(values..., axis) and Concat(axis, values...).
MaceStatus LowerConcat(const TfNode &node, TfContext *context) {
  if (node.num_inputs() < 2) {
    return node.InvalidArgs("expects values and an axis, has ",
                            node.num_inputs(), " inputs");
  }
  const bool axis_last = node.op() == "ConcatV2";
  const int axis_input = axis_last ? node.num_inputs() - 1 : 0;
  std::vector<int64_t> axis;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, axis_input, &axis));
  if (axis.size() != 1) {
    return node.InvalidArgs("axis should be one value, has ", axis.size());
  }
  std::vector<std::string> values;
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (i != axis_input) values.push_back(node.Input(i));
  }
  if (values.size() == 1) {
    context->Rename(TfTensorName(node.name(), 0), values[0]);
    return MaceStatus::MACE_SUCCESS;
  }
  return context->Emit("Concat", node.name(), values, {node.Output(0)},
                       {OpArg::Int("axis", axis[0])});
}

MaceStatus LowerPack(const TfNode &node, TfContext *context) {
  if (node.num_inputs() < 1) return node.InvalidArgs("has no input");
  int64_t axis = 0;
  MACE_RETURN_IF_ERROR(node.Int("axis", 0, &axis));
  std::vector<std::string> values;
  for (int i = 0; i < node.num_inputs(); ++i) values.push_back(node.Input(i));
  return context->Emit("Stack", node.name(), values, {node.Output(0)},
                       {OpArg::Int("axis", axis)});
}

std::vector<std::string> Outputs(const TfNode &node, int64_t count) {
  std::vector<std::string> outputs;
  for (int64_t i = 0; i < count; ++i) {
    outputs.push_back(node.Output(static_cast<int>(i)));
  }
  return outputs;
}

MaceStatus LowerUnpack(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(1, 1));
  int64_t axis = 0, num = 0;
  MACE_RETURN_IF_ERROR(node.Int("axis", 0, &axis));
  MACE_RETURN_IF_ERROR(node.Int("num", 0, &num));
  const Shape &s = context->ShapeOf(node.Input(0));
  int64_t a = 0;
  MACE_RETURN_IF_ERROR(
      NormalizeAxis(node, axis, static_cast<int>(s.size()), &a));
  if (num != s[a]) {
    return node.InvalidArgs("num ", num, " does not match dim ", a, " of ",
                            ShapeToString(s));
  }
  return context->Emit("Unstack", node.name(), {node.Input(0)},
                       Outputs(node, num), {OpArg::Int("axis", axis)});
}

// Split(axis, value) into num_split equal parts; SplitV(value, sizes,
// axis) with one size possibly -1.
MaceStatus LowerSplit(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(node.op() == "Split" ? 2 : 3,
                                         node.op() == "Split" ? 2 : 3));
  const bool v = node.op() == "SplitV";
  const int value_input = v ? 0 : 1, axis_input = v ? 2 : 0;
  std::vector<int64_t> axis;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, axis_input, &axis));
  if (axis.size() != 1) {
    return node.InvalidArgs("axis should be one value, has ", axis.size());
  }
  const Shape &s = context->ShapeOf(node.Input(value_input));
  int64_t a = 0;
  MACE_RETURN_IF_ERROR(
      NormalizeAxis(node, axis[0], static_cast<int>(s.size()), &a));
  std::vector<OpArg> args{OpArg::Int("axis", a)};
  int64_t count = 0;
  if (v) {
    std::vector<int64_t> sizes;
    MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &sizes));
    int64_t known = 0, unknown = -1;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] == -1 && unknown < 0) {
        unknown = static_cast<int64_t>(i);
      } else if (sizes[i] < 0) {
        return node.InvalidArgs("size_splits ", ShapeToString(sizes),
                                " has a negative size");
      } else {
        known += sizes[i];
      }
    }
    if (unknown >= 0) sizes[unknown] = s[a] - known;
    if ((unknown >= 0 && sizes[unknown] < 0) ||
        (unknown < 0 && known != s[a])) {
      return node.InvalidArgs("size_splits ", ShapeToString(sizes),
                              " do not add up to dim ", a, " of ",
                              ShapeToString(s));
    }
    args.push_back(OpArg::Ints("split", sizes));
    count = static_cast<int64_t>(sizes.size());
  } else {
    MACE_RETURN_IF_ERROR(node.Int("num_split", 1, &count));
    if (count < 1 || s[a] % count != 0) {
      return node.InvalidArgs("num_split ", count, " does not divide dim ", a,
                              " of ", ShapeToString(s));
    }
  }
  if (count == 1) {
    context->Rename(TfTensorName(node.name(), 0), node.Input(value_input));
    return MaceStatus::MACE_SUCCESS;
  }
  return context->Emit("Split", node.name(), {node.Input(value_input)},
                       Outputs(node, count), args);
}

// Slice(x, begin, size): size -1 runs to the end of its dim.
MaceStatus LowerSlice(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(3, 3));
  std::vector<int64_t> begin, size;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &begin));
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 2, &size));
  const Shape &s = context->ShapeOf(node.Input(0));
  if (begin.size() != s.size() || size.size() != s.size()) {
    return node.InvalidArgs("begin ", ShapeToString(begin), " and size ",
                            ShapeToString(size), " need one value per dim of ",
                            ShapeToString(s));
  }
  for (size_t i = 0; i < s.size(); ++i) {
    if (size[i] == -1) size[i] = s[i] - begin[i];
  }
  return context->Emit("StridedSlice", node.name(), {node.Input(0)},
                       {node.Output(0)},
                       {OpArg::Int("slice", 1), OpArg::Ints("begin", begin),
                        OpArg::Ints("end", size)});
}

MaceStatus LowerStridedSlice(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(4, 4));
  std::vector<int64_t> begin, end, strides;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &begin));
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 2, &end));
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 3, &strides));
  std::vector<OpArg> args{OpArg::Ints("begin", begin), OpArg::Ints("end", end),
                          OpArg::Ints("strides", strides)};
  for (const char *mask : {"begin_mask", "end_mask", "ellipsis_mask",
                           "new_axis_mask", "shrink_axis_mask"}) {
    int64_t value = 0;
    MACE_RETURN_IF_ERROR(node.Int(mask, 0, &value));
    args.push_back(OpArg::Int(mask, value));
  }
  return context->Emit("StridedSlice", node.name(), {node.Input(0)},
                       {node.Output(0)}, args);
}

// Gather(params, indices) and GatherV2(params, indices, axis).
MaceStatus LowerGather(const TfNode &node, TfContext *context) {
  const bool v2 = node.op() == "GatherV2";
  MACE_RETURN_IF_ERROR(node.ExpectInputs(v2 ? 3 : 2, v2 ? 3 : 2));
  int64_t batch_dims = 0;
  MACE_RETURN_IF_ERROR(node.Int("batch_dims", 0, &batch_dims));
  if (batch_dims != 0) {
    return node.Unsupported("batch_dims ", batch_dims, " (only 0)");
  }
  std::vector<int64_t> axis{0};
  if (v2) MACE_RETURN_IF_ERROR(context->ConstInts(node, 2, &axis));
  if (axis.size() != 1) {
    return node.InvalidArgs("axis should be one value, has ", axis.size());
  }
  if (!context->IsInt(node.Input(1))) {
    return node.InvalidArgs("indices '", node.RawInput(1),
                            "' should be integers");
  }
  return context->Emit("Gather", node.name(), {node.Input(0), node.Input(1)},
                       {node.Output(0)}, {OpArg::Int("axis", axis[0])});
}

MaceStatus LowerReverse(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(2, 2));
  std::vector<int64_t> axes;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &axes));
  if (axes.empty()) {
    context->Rename(TfTensorName(node.name(), 0), node.Input(0));
    return MaceStatus::MACE_SUCCESS;
  }
  return context->Emit("Reverse", node.name(), {node.Input(0)},
                       {node.Output(0)}, {OpArg::Ints("axis", axes)});
}

}  // namespace

void RegisterTfShapeOps(TfLoweringTable *table) {
  for (const char *op :
       {"Identity", "IdentityN", "StopGradient", "PlaceholderWithDefault",
        "Snapshot", "PreventGradient", "CheckNumerics", "EnsureShape"}) {
    (*table)[op] = LowerIdentity;
  }
  (*table)["Shape"] = LowerShape;
  (*table)["ShapeN"] = LowerShape;
  (*table)["Size"] = LowerShape;
  (*table)["Rank"] = LowerShape;
  (*table)["Reshape"] = LowerReshape;
  (*table)["Squeeze"] = LowerSqueeze;
  (*table)["ExpandDims"] = LowerExpandDims;
  (*table)["Transpose"] = LowerTranspose;
  (*table)["Fill"] = LowerFill;
  (*table)["ZerosLike"] = LowerFilledLike;
  (*table)["OnesLike"] = LowerFilledLike;
  (*table)["BroadcastTo"] = LowerBroadcastTo;
  (*table)["ConcatV2"] = LowerConcat;
  (*table)["Concat"] = LowerConcat;
  (*table)["Pack"] = LowerPack;
  (*table)["Unpack"] = LowerUnpack;
  (*table)["Split"] = LowerSplit;
  (*table)["SplitV"] = LowerSplit;
  (*table)["Slice"] = LowerSlice;
  (*table)["StridedSlice"] = LowerStridedSlice;
  (*table)["Gather"] = LowerGather;
  (*table)["GatherV2"] = LowerGather;
  (*table)["ReverseV2"] = LowerReverse;
}

}  // namespace converter
}  // namespace mace
