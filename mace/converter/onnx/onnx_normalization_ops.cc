// Normalizations and softmax: BatchNormalization, InstanceNormalization,
// LRN (channel-last MACE ops between transposes), LayerNormalization,
// Softmax and LogSoftmax (axis ops, in ONNX layout).

#include <cmath>

#include "mace/ops/eltwise_type.h"
#include "mace/converter/onnx/onnx_lowering.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

// MACE Reduce and Eltwise codes.
enum ReduceType : int { kReduceMean = 0 };

MaceStatus ExpectFloatInputs(const OnnxNode &node, OnnxContext *context) {
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (node.HasInput(i) && context->Find(node.Input(i))->dtype() != DT_FLOAT) {
      return node.Unsupported("integer input ", i, " '", node.Input(i),
                              "' (only float types)");
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

// Refuses optional outputs from index `first` on that the model uses.
MaceStatus RefuseOutputsFrom(const OnnxNode &node, int first,
                             const char *what) {
  for (int i = first; i < node.num_outputs(); ++i) {
    if (!node.Output(i).empty()) {
      return node.Unsupported("output ", i, " (", what, ") is not supported");
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

// Runs channel-last op `type` on ONNX tensor x ([N, C, ...], rank >= 3)
// and writes node.Output(0) in ONNX layout. A [N, C] tensor already has its
// channel last.
MaceStatus EmitChannelLast(const OnnxNode &node, OnnxContext *context,
                           const std::string &type, const std::string &x,
                           const std::vector<std::string> &params,
                           const std::vector<OpArg> &args) {
  std::vector<std::string> inputs{x};
  inputs.insert(inputs.end(), params.begin(), params.end());
  if (context->RankOf(x) == 2) {
    return context->Emit(type, node.name(), inputs, {node.Output(0)}, args);
  }
  MACE_RETURN_IF_ERROR(context->ToChannelLast(node.name(), x, &inputs[0]));
  const std::string y = context->Temp(node.Output(0) + "__nhwc");
  MACE_RETURN_IF_ERROR(context->Emit(type, node.name(), inputs, {y}, args));
  return context->FromChannelLast(node.name(), y, node.Output(0));
}

// [N, C, spatial...] as the 4-D [N, C, S, 1] that NHWC-only ops need;
// 4-D tensors unchanged.
MaceStatus As4D(const OnnxNode &node, OnnxContext *context,
                const std::string &x, std::string *x4) {
  const Shape &s = context->ShapeOf(x);
  *x4 = x;
  if (s.size() == 4) return MaceStatus::MACE_SUCCESS;
  int64_t size = 1;
  for (size_t i = 2; i < s.size(); ++i) size *= s[i];
  *x4 = context->Temp(x + "__4d");
  return context->Emit("Reshape", context->Temp(node.name() + "__to_4d"), {x},
                       {*x4}, {OpArg::Ints("shape", {s[0], s[1], size, 1})});
}

// As EmitChannelLast for an op that needs 4-D input: other ranks (>= 3)
// go through the [N, C, S, 1] view and are reshaped back.
MaceStatus EmitChannelLast4D(const OnnxNode &node, OnnxContext *context,
                             const std::string &type,
                             const std::vector<std::string> &params,
                             const std::vector<OpArg> &args) {
  const std::string x = node.Input(0);
  const Shape shape = context->ShapeOf(x);
  if (shape.size() < 3) {
    return node.InvalidArgs("input rank ", shape.size(),
                            " must be at least 3 ([N, C, ...])");
  }
  std::string x4;
  MACE_RETURN_IF_ERROR(As4D(node, context, x, &x4));
  std::string x_nhwc;
  MACE_RETURN_IF_ERROR(context->ToChannelLast(node.name(), x4, &x_nhwc));
  std::vector<std::string> inputs{x_nhwc};
  inputs.insert(inputs.end(), params.begin(), params.end());
  const std::string y = context->Temp(node.Output(0) + "__nhwc");
  MACE_RETURN_IF_ERROR(context->Emit(type, node.name(), inputs, {y}, args));
  if (shape.size() == 4) {
    return context->FromChannelLast(node.name(), y, node.Output(0));
  }
  const std::string y4 = context->Temp(node.Output(0) + "__4d");
  MACE_RETURN_IF_ERROR(context->FromChannelLast(node.name(), y, y4));
  return context->Emit("Reshape", context->Temp(node.name() + "__from_4d"),
                       {y4}, {node.Output(0)}, {OpArg::Ints("shape", shape)});
}

// ---- BatchNormalization -----------------------------------------------------

MaceStatus LowerBatchNorm(const OnnxNode &node, OnnxContext *context) {
  float epsilon = 1e-5f;
  int64_t training = 0, spatial = 1;
  MACE_RETURN_IF_ERROR(node.Float("epsilon", 1e-5f, &epsilon));
  MACE_RETURN_IF_ERROR(node.Int("training_mode", 0, &training));
  MACE_RETURN_IF_ERROR(node.Int("spatial", 1, &spatial));
  if (training != 0) {
    return node.Unsupported("attribute 'training_mode' = 1 (training)");
  }
  if (spatial != 1) {
    return node.Unsupported("attribute 'spatial' = ", spatial,
                            " (per-activation statistics)");
  }
  MACE_RETURN_IF_ERROR(
      RefuseOutputsFrom(node, 1, "running / saved statistics of training"));
  MACE_RETURN_IF_ERROR(ExpectFloatInputs(node, context));
  const std::string x = node.Input(0);
  if (context->RankOf(x) < 2) {
    return node.InvalidArgs("input rank ", context->RankOf(x),
                            " must be at least 2 ([N, C, ...])");
  }
  const int64_t channels = context->ShapeOf(x)[1];
  bool all_constant = true;
  for (int i = 1; i < 5; ++i) {
    if (context->RankOf(node.Input(i)) != 1 ||
        context->ShapeOf(node.Input(i))[0] != channels) {
      return node.InvalidArgs("input ", i, " '", node.Input(i),
                              "' must have shape [", channels, "]");
    }
    all_constant = all_constant && context->graph()->IsConstant(node.Input(i));
  }
  if (!all_constant) {
    return EmitChannelLast(
        node, context, "BatchNorm", x,
        {node.Input(1), node.Input(2), node.Input(3), node.Input(4)},
        {OpArg::Float("epsilon", epsilon)});
  }
  // Folded now: y = x * s + o, s = scale / sqrt(var + eps),
  // o = bias - mean * s (in double, then rounded once).
  std::vector<float> scale, bias, mean, var;
  MACE_RETURN_IF_ERROR(context->ConstFloats(node, 1, &scale));
  MACE_RETURN_IF_ERROR(context->ConstFloats(node, 2, &bias));
  MACE_RETURN_IF_ERROR(context->ConstFloats(node, 3, &mean));
  MACE_RETURN_IF_ERROR(context->ConstFloats(node, 4, &var));
  std::vector<float> s(channels), o(channels);
  for (int64_t c = 0; c < channels; ++c) {
    const double factor =
        scale[c] / std::sqrt(static_cast<double>(var[c]) + epsilon);
    s[c] = static_cast<float>(factor);
    o[c] = static_cast<float>(bias[c] - mean[c] * factor);
  }
  const std::string s_name = context->Temp(node.name() + "__scale");
  const std::string o_name = context->Temp(node.name() + "__offset");
  context->graph()->AddConstant(s_name, {channels}, s);
  context->graph()->AddConstant(o_name, {channels}, o);
  return EmitChannelLast(node, context, "BatchNorm", x, {s_name, o_name}, {});
}

// ---- InstanceNormalization and LRN ------------------------------------------

MaceStatus LowerInstanceNorm(const OnnxNode &node, OnnxContext *context) {
  float epsilon = 1e-5f;
  MACE_RETURN_IF_ERROR(node.Float("epsilon", 1e-5f, &epsilon));
  MACE_RETURN_IF_ERROR(ExpectFloatInputs(node, context));
  return EmitChannelLast4D(
      node, context, "InstanceNorm", {node.Input(1), node.Input(2)},
      {OpArg::Float("epsilon", epsilon), OpArg::Int("affine", 1)});
}

// ONNX sums squares over channels [c - floor((size-1)/2),
// c + ceil((size-1)/2)] and divides alpha by size; MACE (TensorFlow) sums
// over [c - r, c + r] with alpha as given. An odd size maps exactly.
MaceStatus LowerLrn(const OnnxNode &node, OnnxContext *context) {
  float alpha = 1e-4f, beta = 0.75f, bias = 1.0f;
  int64_t size = 0;
  MACE_RETURN_IF_ERROR(node.Float("alpha", 1e-4f, &alpha));
  MACE_RETURN_IF_ERROR(node.Float("beta", 0.75f, &beta));
  MACE_RETURN_IF_ERROR(node.Float("bias", 1.0f, &bias));
  MACE_RETURN_IF_ERROR(node.Int("size", 0, &size));
  if (size < 1) {
    return node.InvalidArgs("attribute 'size' must be >= 1, is ", size);
  }
  if (size % 2 == 0) {
    return node.Unsupported("attribute 'size' = ", size,
                            " (an even size sums an asymmetric channel "
                            "window; only odd sizes are supported)");
  }
  MACE_RETURN_IF_ERROR(ExpectFloatInputs(node, context));
  return EmitChannelLast4D(
      node, context, "LocalResponseNorm", {},
      {OpArg::Int("depth_radius", (size - 1) / 2), OpArg::Float("bias", bias),
       OpArg::Float("alpha", alpha / static_cast<float>(size)),
       OpArg::Float("beta", beta)});
}

// ---- LayerNormalization -----------------------------------------------------

// Mean and InvStdDev outputs: Reduce MEAN over the normalized axes (kept as
// size 1), then 1 / sqrt(mean((x - mean)^2) + epsilon).
MaceStatus EmitLayerNormStats(const OnnxNode &node, OnnxContext *context,
                              int axis, float epsilon) {
  const std::string x = node.Input(0);
  std::vector<int64_t> axes;
  for (int i = axis; i < context->RankOf(x); ++i) axes.push_back(i);
  const std::vector<OpArg> mean_args{OpArg::Int("reduce_type", kReduceMean),
                                     OpArg::Ints("axis", axes),
                                     OpArg::Int("keepdims", 1)};
  const bool want_mean = node.num_outputs() > 1 && !node.Output(1).empty();
  const bool want_inv = node.num_outputs() > 2 && !node.Output(2).empty();
  const std::string mean =
      want_mean ? node.Output(1) : context->Temp(node.name() + "__mean");
  if (!want_mean && !want_inv) return MaceStatus::MACE_SUCCESS;
  MACE_RETURN_IF_ERROR(context->Emit(
      "Reduce", context->Temp(node.name() + "__mean"), {x}, {mean}, mean_args));
  if (!want_inv) return MaceStatus::MACE_SUCCESS;
  const std::string sq = context->Temp(node.name() + "__sq_dev");
  MACE_RETURN_IF_ERROR(
      context->Emit("Eltwise", context->Temp(node.name() + "__sq_dev"),
                    {x, mean}, {sq}, {OpArg::Int("type", kSqrDiff)}));
  const std::string var = context->Temp(node.name() + "__var");
  MACE_RETURN_IF_ERROR(context->Emit(
      "Reduce", context->Temp(node.name() + "__var"), {sq}, {var}, mean_args));
  const std::string var_eps = context->Temp(node.name() + "__var_eps");
  MACE_RETURN_IF_ERROR(context->Emit(
      "Eltwise", context->Temp(node.name() + "__add_eps"), {var}, {var_eps},
      {OpArg::Int("type", kSum), OpArg::Float("scalar_input", epsilon)}));
  return context->Emit("Eltwise", context->Temp(node.name() + "__rsqrt"),
                       {var_eps}, {node.Output(2)},
                       {OpArg::Int("type", kRsqrt)});
}

MaceStatus LowerLayerNorm(const OnnxNode &node, OnnxContext *context) {
  int64_t axis = -1, stash_type = 1;
  float epsilon = 1e-5f;
  MACE_RETURN_IF_ERROR(node.Int("axis", -1, &axis));
  MACE_RETURN_IF_ERROR(node.Float("epsilon", 1e-5f, &epsilon));
  MACE_RETURN_IF_ERROR(node.Int("stash_type", 1, &stash_type));
  if (stash_type != 1) {
    return node.Unsupported("attribute 'stash_type' = ", stash_type,
                            " (only 1, float32 statistics)");
  }
  MACE_RETURN_IF_ERROR(ExpectFloatInputs(node, context));
  const int rank = context->RankOf(node.Input(0));
  if (axis < -rank || axis >= rank) {
    return node.InvalidArgs("attribute 'axis' = ", axis,
                            " is out of range for rank ", rank);
  }
  if (axis < 0) axis += rank;
  std::vector<std::string> inputs{node.Input(0), node.Input(1)};
  if (node.HasInput(2)) inputs.push_back(node.Input(2));
  MACE_RETURN_IF_ERROR(context->Emit(
      "LayerNorm", node.name(), inputs, {node.Output(0)},
      {OpArg::Int("axis", axis), OpArg::Float("epsilon", epsilon)}));
  return EmitLayerNormStats(node, context, static_cast<int>(axis), epsilon);
}

// ---- Softmax and LogSoftmax -------------------------------------------------

// From opset 13 the op works along `axis` (default -1). Before, the input
// is coerced to 2-D [d0 * ... * d(axis-1), d(axis) * ... * d(n-1)] (axis
// default 1) and normalized along the second dim.
template <bool kLog>
MaceStatus LowerSoftmax(const OnnxNode &node, OnnxContext *context) {
  MACE_RETURN_IF_ERROR(ExpectFloatInputs(node, context));
  const bool coerce = node.opset() < 13;
  int64_t axis = 0;
  MACE_RETURN_IF_ERROR(node.Int("axis", coerce ? 1 : -1, &axis));
  const std::string x = node.Input(0);
  const Shape shape = context->ShapeOf(x);
  const int rank = static_cast<int>(shape.size());
  if (rank == 0) return node.InvalidArgs("input must have rank >= 1");
  if (axis < -rank || axis >= rank) {
    return node.InvalidArgs("attribute 'axis' = ", axis,
                            " is out of range for rank ", rank);
  }
  if (axis < 0) axis += rank;
  std::vector<OpArg> args{OpArg::Int("axis", coerce ? -1 : axis),
                          OpArg::Int("use_log", kLog ? 1 : 0)};
  // Coercing at the last axis changes nothing.
  if (!coerce || axis == rank - 1) {
    return context->Emit("Softmax", node.name(), {x}, {node.Output(0)}, args);
  }
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < rank; ++i) (i < axis ? outer : inner) *= shape[i];
  const std::string flat = context->Temp(x + "__2d");
  MACE_RETURN_IF_ERROR(
      context->Emit("Reshape", context->Temp(node.name() + "__to_2d"), {x},
                    {flat}, {OpArg::Ints("shape", {outer, inner})}));
  const std::string y = context->Temp(node.Output(0) + "__2d");
  MACE_RETURN_IF_ERROR(
      context->Emit("Softmax", node.name(), {flat}, {y}, args));
  return context->Emit("Reshape", context->Temp(node.name() + "__from_2d"), {y},
                       {node.Output(0)}, {OpArg::Ints("shape", shape)});
}

}  // namespace

void RegisterOnnxNormalizationOps(OnnxLoweringTable *table) {
  (*table)["BatchNormalization"] = LowerBatchNorm;
  (*table)["InstanceNormalization"] = LowerInstanceNorm;
  (*table)["LRN"] = LowerLrn;
  (*table)["LayerNormalization"] = LowerLayerNorm;
  (*table)["Softmax"] = LowerSoftmax<false>;
  (*table)["LogSoftmax"] = LowerSoftmax<true>;
}

}  // namespace converter
}  // namespace mace
