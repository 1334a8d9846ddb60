// Shape-only ops (Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Expand,
// Tile), ops whose value is known at conversion time (Shape, Size,
// Constant, ConstantOfShape, Range) and type casts (Cast, CastLike).
//
// Every tensor's shape is static here, so Shape and Size become constants
// at once; the ops consuming them (Gather, Unsqueeze, Concat, Cast...) fold
// in GraphBuilder::AddOp, and a Reshape fed by such a chain reads its
// target shape as a constant.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "mace/converter/common/frontend.h"
#include "mace/converter/onnx/onnx_lowering.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

// ONNX TensorProto.DataType codes that Cast's `to` may name.
enum OnnxType : int64_t {
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBfloat16 = 16,
};

constexpr int kEltwiseSum = 0;
constexpr int kEltwiseNotEqual = 25;

std::vector<int32_t> ToInt32(const std::vector<int64_t> &values) {
  std::vector<int32_t> out;
  for (int64_t v : values) out.push_back(ClampToInt32(v));
  return out;
}

// Input i, which must exist in the graph (a model may name an undefined
// tensor).
MaceStatus GetInput(const OnnxNode &node, OnnxContext *context, int i,
                    const Tensor **tensor) {
  *tensor = node.HasInput(i) ? context->Find(node.Input(i)) : nullptr;
  if (*tensor == nullptr) {
    return node.InvalidArgs("input ", i, " is missing or not defined");
  }
  return MaceStatus::MACE_SUCCESS;
}

// An int list that is attribute `attr` before `input_opset` and optional
// input `input` from then on. *given is false when neither is present.
MaceStatus AttrOrInputInts(const OnnxNode &node, OnnxContext *context,
                           const std::string &attr, int input, int input_opset,
                           bool *given, std::vector<int64_t> *values) {
  if (node.opset() < input_opset) {
    *given = node.HasAttr(attr);
    return node.Ints(attr, {}, values);
  }
  *given = node.HasInput(input);
  values->clear();
  return *given ? context->ConstInts(node, input, values)
                : MaceStatus::MACE_SUCCESS;
}

MaceStatus EmitIdentity(const OnnxNode &node, OnnxContext *context,
                        const std::string &input) {
  return context->Emit("Identity", node.name(), {input}, {node.Output(0)});
}

// x + zeros(zeros_shape): numpy broadcasting replicates x along the dims
// where zeros_shape is larger, which is how Expand and Tile copy data.
MaceStatus EmitBroadcast(const OnnxNode &node, OnnxContext *context,
                         const std::string &x, const Shape &zeros_shape,
                         const std::string &output) {
  const std::string zeros = context->Temp(node.name() + "__zeros");
  MACE_RETURN_IF_ERROR(EmitFilled(node, context, zeros, zeros_shape,
                                 context->Find(x)->dtype(), 0.0));
  return context->Emit("Eltwise", node.name(), {x, zeros}, {output},
                       {OpArg::Int("type", kEltwiseSum)});
}

MaceStatus LowerReshape(const OnnxNode &node, OnnxContext *context) {
  const Tensor *x = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &x));
  std::vector<int64_t> shape;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &shape));
  int64_t allowzero = 0;
  MACE_RETURN_IF_ERROR(node.Int("allowzero", 0, &allowzero));
  std::vector<OpArg> args{OpArg::Ints("shape", shape)};
  if (allowzero != 0) args.push_back(OpArg::Int("allowzero", 1));
  return context->Emit("Reshape", node.name(), {node.Input(0)},
                       {node.Output(0)}, args);
}

// [d0 * ... * d(axis-1), d(axis) * ... * d(rank-1)].
MaceStatus LowerFlatten(const OnnxNode &node, OnnxContext *context) {
  const Tensor *x = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &x));
  int64_t axis = 1;
  MACE_RETURN_IF_ERROR(node.Int("axis", 1, &axis));
  const int64_t rank = x->rank();
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) {
    return node.InvalidArgs("attribute 'axis' is out of range for rank ", rank);
  }
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) {
    (i < axis ? outer : inner) *= x->dim(static_cast<int>(i));
  }
  return context->Emit("Reshape", node.name(), {node.Input(0)},
                       {node.Output(0)},
                       {OpArg::Ints("shape", {outer, inner})});
}

// Squeeze / Unsqueeze: `axes` is an attribute before opset 13, an input
// from then on.
MaceStatus LowerSqueeze(const OnnxNode &node, OnnxContext *context) {
  const Tensor *x = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &x));
  bool given = false;
  std::vector<int64_t> axes;
  MACE_RETURN_IF_ERROR(
      AttrOrInputInts(node, context, "axes", 1, 13, &given, &axes));
  std::vector<OpArg> args;
  if (given && !axes.empty()) args.push_back(OpArg::Ints("axis", axes));
  return context->Emit("Squeeze", node.name(), {node.Input(0)},
                       {node.Output(0)}, args);
}

MaceStatus LowerUnsqueeze(const OnnxNode &node, OnnxContext *context) {
  const Tensor *x = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &x));
  bool given = false;
  std::vector<int64_t> axes;
  MACE_RETURN_IF_ERROR(
      AttrOrInputInts(node, context, "axes", 1, 13, &given, &axes));
  if (axes.empty()) return node.InvalidArgs("'axes' must list an axis");
  return context->Emit("Unsqueeze", node.name(), {node.Input(0)},
                       {node.Output(0)}, {OpArg::Ints("axis", axes)});
}

MaceStatus LowerTranspose(const OnnxNode &node, OnnxContext *context) {
  const Tensor *x = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &x));
  std::vector<int64_t> reversed;
  for (int i = x->rank() - 1; i >= 0; --i) reversed.push_back(i);
  std::vector<int64_t> perm;
  MACE_RETURN_IF_ERROR(node.Ints("perm", reversed, &perm));
  return context->Emit("Transpose", node.name(), {node.Input(0)},
                       {node.Output(0)}, {OpArg::Ints("dims", perm)});
}

// Output shape of numpy broadcasting between `a` and `b`.
MaceStatus BroadcastShape(const OnnxNode &node, const Shape &a, const Shape &b,
                          Shape *out) {
  const size_t rank = std::max(a.size(), b.size());
  out->assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return node.InvalidArgs("shapes ", ShapeToString(a), " and ",
                              ShapeToString(b), " do not broadcast");
    }
    (*out)[i] = da == 1 ? db : da;
  }
  return MaceStatus::MACE_SUCCESS;
}

// Expand: broadcast to the given shape (constant).
MaceStatus LowerExpand(const OnnxNode &node, OnnxContext *context) {
  const Tensor *x = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &x));
  std::vector<int64_t> shape;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &shape));
  Shape out;
  MACE_RETURN_IF_ERROR(BroadcastShape(node, x->shape(), shape, &out));
  if (out == x->shape()) return EmitIdentity(node, context, node.Input(0));
  // Zeros only span the dims that are replicated, to keep the constant
  // small.
  const size_t lead = out.size() - x->shape().size();
  Shape zeros(out.size(), 1);
  bool replicates = false;
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t d = i < lead ? 1 : x->shape()[i - lead];
    if (d != out[i]) {
      zeros[i] = out[i];
      replicates = true;
    }
  }
  if (!replicates) {
    return context->Emit("Reshape", node.name(), {node.Input(0)},
                         {node.Output(0)}, {OpArg::Ints("shape", out)});
  }
  return EmitBroadcast(node, context, node.Input(0), zeros, node.Output(0));
}

// Tile: [d0, d1, ...] → [1, d0, 1, d1, ...] (a 1 only before repeated
// dims) + zeros [r0, 1, r1, 1, ...] → [r0, d0, r1, d1, ...] → [r0*d0, ...].
MaceStatus LowerTile(const OnnxNode &node, OnnxContext *context) {
  const Tensor *x = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &x));
  std::vector<int64_t> repeats;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &repeats));
  if (static_cast<int>(repeats.size()) != x->rank()) {
    return node.InvalidArgs("'repeats' has ", repeats.size(),
                            " values for input rank ", x->rank());
  }
  Shape split, zeros, out;
  for (int i = 0; i < x->rank(); ++i) {
    if (repeats[i] < 0) return node.InvalidArgs("negative repeat");
    if (repeats[i] > 0 &&
        x->dim(i) > std::numeric_limits<int64_t>::max() / repeats[i]) {
      return node.InvalidArgs("repeat ", repeats[i], " of dim ", i, " (",
                              x->dim(i), ") overflows");
    }
    if (repeats[i] != 1) {
      split.push_back(1);
      zeros.push_back(repeats[i]);
    }
    split.push_back(x->dim(i));
    zeros.push_back(1);
    out.push_back(x->dim(i) * repeats[i]);
  }
  if (out == x->shape()) return EmitIdentity(node, context, node.Input(0));
  const std::string spread = context->Temp(node.Output(0) + "__spread");
  MACE_RETURN_IF_ERROR(
      context->Emit("Reshape", context->Temp(node.name() + "__spread"),
                    {node.Input(0)}, {spread}, {OpArg::Ints("shape", split)}));
  const std::string tiled = context->Temp(node.Output(0) + "__tiled");
  MACE_RETURN_IF_ERROR(EmitBroadcast(node, context, spread, zeros, tiled));
  return context->Emit("Reshape", context->Temp(node.name() + "__merge"),
                       {tiled}, {node.Output(0)}, {OpArg::Ints("shape", out)});
}

// Shape (and its start / end attributes, opset 15): a constant.
MaceStatus LowerShape(const OnnxNode &node, OnnxContext *context) {
  const Tensor *x = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &x));
  const int64_t rank = x->rank();
  int64_t start = 0, end = rank;
  MACE_RETURN_IF_ERROR(node.Int("start", 0, &start));
  MACE_RETURN_IF_ERROR(node.Int("end", rank, &end));
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return std::min(std::max<int64_t>(v, 0), rank);
  };
  start = clamp(start);
  end = std::max(clamp(end), start);
  const std::vector<int64_t> dims(x->shape().begin() + start,
                                  x->shape().begin() + end);
  context->graph()->AddConstantInt(node.Output(0), {end - start},
                                   ToInt32(dims));
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus LowerSize(const OnnxNode &node, OnnxContext *context) {
  const Tensor *x = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &x));
  context->graph()->AddConstantInt(node.Output(0), {},
                                   {ClampToInt32(x->size())});
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus LowerConstant(const OnnxNode &node, OnnxContext *context) {
  GraphBuilder *graph = context->graph();
  const std::string out = node.Output(0);
  if (node.HasAttr("value")) return node.TensorAttr("value", out);
  if (node.HasAttr("value_float")) {
    float value = 0.0f;
    MACE_RETURN_IF_ERROR(node.Float("value_float", 0.0f, &value));
    graph->AddConstant(out, {}, {value});
  } else if (node.HasAttr("value_floats")) {
    std::vector<float> values;
    MACE_RETURN_IF_ERROR(node.Floats("value_floats", {}, &values));
    graph->AddConstant(out, {static_cast<int64_t>(values.size())}, values);
  } else if (node.HasAttr("value_int")) {
    int64_t value = 0;
    MACE_RETURN_IF_ERROR(node.Int("value_int", 0, &value));
    graph->AddConstantInt(out, {}, {ClampToInt32(value)});
  } else if (node.HasAttr("value_ints")) {
    std::vector<int64_t> values;
    MACE_RETURN_IF_ERROR(node.Ints("value_ints", {}, &values));
    graph->AddConstantInt(out, {static_cast<int64_t>(values.size())},
                          ToInt32(values));
  } else {
    for (const char *name : {"sparse_value", "value_string", "value_strings"}) {
      if (node.HasAttr(name)) {
        return node.Unsupported("attribute '", name,
                                "' (sparse and string constants)");
      }
    }
    return node.InvalidArgs("no value attribute");
  }
  return MaceStatus::MACE_SUCCESS;
}

// ConstantOfShape: the shape must be known at conversion time.
MaceStatus LowerConstantOfShape(const OnnxNode &node, OnnxContext *context) {
  std::vector<int64_t> shape;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 0, &shape));
  if (ShapeElementCount(shape) < 0) {
    return node.InvalidArgs("invalid shape ", ShapeToString(shape));
  }
  DataType dtype = DT_FLOAT;
  double value = 0.0;
  if (node.HasAttr("value")) {
    const std::string fill = context->Temp(node.Output(0) + "__value");
    MACE_RETURN_IF_ERROR(node.TensorAttr("value", fill));
    const Tensor *t = context->Find(fill);
    if (t->size() != 1) {
      return node.InvalidArgs("attribute 'value' must hold one value");
    }
    dtype = t->dtype();
    // Each branch converts to double itself: int32 through float would
    // round large values.
    value = dtype == DT_INT32 ? static_cast<double>(t->data<int32_t>()[0])
                              : static_cast<double>(t->data<float>()[0]);
  }
  return EmitFilled(node, context, node.Output(0), shape, dtype, value);
}

// Range with constant start, limit and delta: a constant.
MaceStatus LowerRange(const OnnxNode &node, OnnxContext *context) {
  const Tensor *start_tensor = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &start_tensor));
  const bool is_int = start_tensor->dtype() == DT_INT32;
  double params[3];
  for (int i = 0; i < 3; ++i) {
    std::vector<float> floats;
    std::vector<int64_t> ints;
    MACE_RETURN_IF_ERROR(is_int ? context->ConstInts(node, i, &ints)
                                : context->ConstFloats(node, i, &floats));
    const size_t size = is_int ? ints.size() : floats.size();
    if (size != 1) return node.InvalidArgs("input ", i, " must be a scalar");
    params[i] = is_int ? static_cast<double>(ints[0]) : floats[0];
  }
  const double start = params[0], limit = params[1], delta = params[2];
  if (delta == 0.0) return node.InvalidArgs("delta is zero");
  const double count = std::max(std::ceil((limit - start) / delta), 0.0);
  // Written so that a NaN count (an infinite start or limit) fails too.
  if (!(count <= double{1 << 30})) {
    return node.InvalidArgs("range too long");
  }
  const int64_t n = static_cast<int64_t>(count);
  if (is_int) {
    std::vector<int32_t> values;
    for (int64_t i = 0; i < n; ++i) {
      values.push_back(ClampToInt32(static_cast<int64_t>(start + i * delta)));
    }
    context->graph()->AddConstantInt(node.Output(0), {n}, values);
  } else {
    std::vector<float> values;
    for (int64_t i = 0; i < n; ++i) {
      values.push_back(static_cast<float>(start + i * delta));
    }
    context->graph()->AddConstant(node.Output(0), {n}, values);
  }
  return MaceStatus::MACE_SUCCESS;
}

// x → DT_FLOAT / DT_INT32, or to bool (int32 0/1) as x != 0 (then cast
// to int32 when x is float).
MaceStatus EmitCast(const OnnxNode &node, OnnxContext *context, DataType target,
                    bool to_bool) {
  const Tensor *x = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &x));
  if (!to_bool) {
    if (x->dtype() == target) return EmitIdentity(node, context, node.Input(0));
    return context->Emit("Cast", node.name(), {node.Input(0)}, {node.Output(0)},
                         {OpArg::Int("T", target)});
  }
  const std::string zero = context->Temp(node.name() + "__zero");
  MACE_RETURN_IF_ERROR(EmitFilled(node, context, zero, {}, x->dtype(), 0.0));
  const std::vector<OpArg> not_equal{OpArg::Int("type", kEltwiseNotEqual)};
  if (x->dtype() == DT_INT32) {
    return context->Emit("Eltwise", node.name(), {node.Input(0), zero},
                         {node.Output(0)}, not_equal);
  }
  const std::string nonzero = context->Temp(node.Output(0) + "__nonzero");
  MACE_RETURN_IF_ERROR(
      context->Emit("Eltwise", context->Temp(node.name() + "__nonzero"),
                    {node.Input(0), zero}, {nonzero}, not_equal));
  return context->Emit("Cast", node.name(), {nonzero}, {node.Output(0)},
                       {OpArg::Int("T", DT_INT32)});
}

// Float types compute in float32 and integer types in int32, as
// everywhere in the converter: a cast to FLOAT16 keeps float32 precision
// instead of rounding (an error below 5e-4), and narrowing integer casts do
// not wrap. BFLOAT16 (whose rounding shows), DOUBLE (float64 results) and
// strings are refused.
MaceStatus CastTo(const OnnxNode &node, OnnxContext *context, int64_t to) {
  context->SetOnnxType(node.proto().output(0), static_cast<int>(to));
  switch (to) {
    case kFloat:
    case kFloat16:
      return EmitCast(node, context, DT_FLOAT, false);
    case kUint8:
    case kInt8:
    case kUint16:
    case kInt16:
    case kInt32:
    case kInt64:
    case kUint32:
    case kUint64:
      return EmitCast(node, context, DT_INT32, false);
    case kBool:
      return EmitCast(node, context, DT_INT32, true);
    case kBfloat16:
      return node.Unsupported(
          "attribute 'to' = BFLOAT16 (its rounding, "
          "visible at 3 significant digits, is not "
          "emulated)");
    case kDouble:
      return node.Unsupported(
          "attribute 'to' = DOUBLE (float64 results are "
          "not computed; the graph is float32)");
    case kString:
      return node.Unsupported("attribute 'to' = STRING");
    default:
      return node.Unsupported("attribute 'to' = ", to,
                              " (float8, int4 and complex types are not "
                              "supported)");
  }
}

MaceStatus LowerCast(const OnnxNode &node, OnnxContext *context) {
  int64_t to = 0;
  MACE_RETURN_IF_ERROR(node.Int("to", 0, &to));
  return CastTo(node, context, to);
}

// CastLike: the target is input 1's ONNX type where the model declares it
// (so bool, double and bfloat16 targets are handled as Cast handles them),
// else its graph type.
MaceStatus LowerCastLike(const OnnxNode &node, OnnxContext *context) {
  const Tensor *like = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 1, &like));
  const int declared = context->OnnxType(node.proto().input(1));
  if (declared != 0) return CastTo(node, context, declared);
  return CastTo(node, context, like->dtype() == DT_INT32 ? kInt32 : kFloat);
}

}  // namespace

void RegisterOnnxShapeOps(OnnxLoweringTable *table) {
  (*table)["Reshape"] = LowerReshape;
  (*table)["Flatten"] = LowerFlatten;
  (*table)["Squeeze"] = LowerSqueeze;
  (*table)["Unsqueeze"] = LowerUnsqueeze;
  (*table)["Transpose"] = LowerTranspose;
  (*table)["Expand"] = LowerExpand;
  (*table)["Tile"] = LowerTile;
  (*table)["Shape"] = LowerShape;
  (*table)["Size"] = LowerSize;
  (*table)["Constant"] = LowerConstant;
  (*table)["ConstantOfShape"] = LowerConstantOfShape;
  (*table)["Range"] = LowerRange;
  (*table)["Cast"] = LowerCast;
  (*table)["CastLike"] = LowerCastLike;
}

}  // namespace converter
}  // namespace mace
