// Data movement: Concat, Split, Slice, Gather, GatherElements, Pad, and
// the NHWC-only Resize / Upsample, DepthToSpace, SpaceToDepth (wrapped in
// transposes to channel last and back).

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "mace/converter/onnx/onnx_lowering.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

constexpr int kEltwiseSum = 0;
constexpr int kEltwiseProd = 2;
constexpr int kEltwiseLess = 24;

MaceStatus GetInput(const OnnxNode &node, OnnxContext *context, int i,
                    const Tensor **tensor) {
  *tensor = node.HasInput(i) ? context->Find(node.Input(i)) : nullptr;
  if (*tensor == nullptr) {
    return node.InvalidArgs("input ", i, " is missing or not defined");
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus NormalizeAxis(const OnnxNode &node, const char *what, int64_t axis,
                         int64_t rank, int64_t *out) {
  if (axis < -rank || axis >= rank) {
    return node.InvalidArgs(what, " ", axis, " is out of range for rank ",
                            rank);
  }
  *out = axis < 0 ? axis + rank : axis;
  return MaceStatus::MACE_SUCCESS;
}

// An int32 constant named after the node.
std::string IntConstant(const OnnxNode &node, OnnxContext *context,
                        const std::string &what, const Shape &shape,
                        const std::vector<int32_t> &values) {
  const std::string name = context->Temp(node.name() + "__" + what);
  context->graph()->AddConstantInt(name, shape, values);
  return name;
}

// Emits Eltwise(type) of a and b into a fresh tensor, returned.
MaceStatus Binary(const OnnxNode &node, OnnxContext *context, int type,
                  const std::string &what, const std::string &a,
                  const std::string &b, std::string *out) {
  *out = context->Temp(node.Output(0) + "__" + what);
  return context->Emit("Eltwise", context->Temp(node.name() + "__" + what),
                       {a, b}, {*out}, {OpArg::Int("type", type)});
}

MaceStatus LowerConcat(const OnnxNode &node, OnnxContext *context) {
  if (!node.HasAttr("axis")) {
    return node.InvalidArgs("attribute 'axis' is required");
  }
  int64_t axis = 0;
  MACE_RETURN_IF_ERROR(node.Int("axis", 0, &axis));
  std::vector<std::string> inputs;
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Tensor *t = nullptr;
    MACE_RETURN_IF_ERROR(GetInput(node, context, i, &t));
    inputs.push_back(node.Input(i));
  }
  return context->Emit("Concat", node.name(), inputs, {node.Output(0)},
                       {OpArg::Int("axis", axis)});
}

// Split sizes: attribute 'split' before opset 13, input 1 from then on;
// without them, equal parts (opset 18's num_outputs leaves the last part
// smaller when the dim does not divide).
MaceStatus SplitSizes(const OnnxNode &node, OnnxContext *context, int64_t dim,
                      std::vector<int64_t> *sizes) {
  sizes->clear();
  if (node.opset() < 13) return node.Ints("split", {}, sizes);
  if (node.HasInput(1)) return context->ConstInts(node, 1, sizes);
  if (node.opset() >= 18 && node.HasAttr("num_outputs")) {
    int64_t n = 0;
    MACE_RETURN_IF_ERROR(node.Int("num_outputs", 0, &n));
    if (n != node.num_outputs() || n < 1) {
      return node.InvalidArgs("attribute 'num_outputs' = ", n, " but ",
                              node.num_outputs(), " outputs");
    }
    const int64_t chunk = (dim + n - 1) / n;
    for (int64_t i = 0; i < n; ++i) {
      sizes->push_back(std::max<int64_t>(std::min(chunk, dim - i * chunk), 0));
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus LowerSplit(const OnnxNode &node, OnnxContext *context) {
  const Tensor *x = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &x));
  int64_t axis = 0;
  MACE_RETURN_IF_ERROR(node.Int("axis", 0, &axis));
  MACE_RETURN_IF_ERROR(
      NormalizeAxis(node, "attribute 'axis'", axis, x->rank(), &axis));
  std::vector<int64_t> sizes;
  MACE_RETURN_IF_ERROR(
      SplitSizes(node, context, x->dim(static_cast<int>(axis)), &sizes));
  std::vector<std::string> outputs;
  for (int i = 0; i < node.num_outputs(); ++i) {
    outputs.push_back(node.Output(i).empty()
                          ? context->Temp(node.name() + "__unused")
                          : node.Output(i));
  }
  std::vector<OpArg> args{OpArg::Int("axis", axis)};
  if (!sizes.empty()) args.push_back(OpArg::Ints("split", sizes));
  return context->Emit("Split", node.name(), {node.Input(0)}, outputs, args);
}

// Slice: attributes before opset 10, constant inputs from then on.
MaceStatus LowerSlice(const OnnxNode &node, OnnxContext *context) {
  const Tensor *x = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &x));
  std::vector<int64_t> starts, ends, axes, steps;
  if (node.opset() < 10) {
    MACE_RETURN_IF_ERROR(node.Ints("starts", {}, &starts));
    MACE_RETURN_IF_ERROR(node.Ints("ends", {}, &ends));
    MACE_RETURN_IF_ERROR(node.Ints("axes", {}, &axes));
  } else {
    MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &starts));
    MACE_RETURN_IF_ERROR(context->ConstInts(node, 2, &ends));
    if (node.HasInput(3)) {
      MACE_RETURN_IF_ERROR(context->ConstInts(node, 3, &axes));
    }
    if (node.HasInput(4)) {
      MACE_RETURN_IF_ERROR(context->ConstInts(node, 4, &steps));
    }
  }
  std::vector<OpArg> args{OpArg::Ints("starts", starts),
                          OpArg::Ints("ends", ends)};
  if (!axes.empty()) args.push_back(OpArg::Ints("axes", axes));
  if (!steps.empty()) args.push_back(OpArg::Ints("steps", steps));
  return context->Emit("Slice", node.name(), {node.Input(0)}, {node.Output(0)},
                       args);
}

MaceStatus LowerGather(const OnnxNode &node, OnnxContext *context) {
  const Tensor *x = nullptr, *indices = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &x));
  MACE_RETURN_IF_ERROR(GetInput(node, context, 1, &indices));
  int64_t axis = 0;
  MACE_RETURN_IF_ERROR(node.Int("axis", 0, &axis));
  return context->Emit("Gather", node.name(), {node.Input(0), node.Input(1)},
                       {node.Output(0)}, {OpArg::Int("axis", axis)});
}

// GatherElements as a Gather from the flattened data: the flat index of
// output position p is base[p] + wrap(indices[p]) * stride[axis], where
// base holds the contribution of p's other coordinates. Constant indices
// fold to one constant. An index outside [-dim, dim) is not detected: it
// reads a neighbouring row (the flat Gather only checks the whole range).
MaceStatus LowerGatherElements(const OnnxNode &node, OnnxContext *context) {
  const Tensor *x = nullptr, *indices = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &x));
  MACE_RETURN_IF_ERROR(GetInput(node, context, 1, &indices));
  int64_t axis = 0;
  MACE_RETURN_IF_ERROR(node.Int("axis", 0, &axis));
  const int rank = x->rank();
  MACE_RETURN_IF_ERROR(
      NormalizeAxis(node, "attribute 'axis'", axis, rank, &axis));
  bool fits = indices->rank() == rank;
  for (int i = 0; fits && i < rank; ++i) {
    fits = i == axis || indices->dim(i) <= x->dim(i);
  }
  if (!fits) {
    return node.InvalidArgs("indices ", ShapeToString(indices->shape()),
                            " do not fit data ", ShapeToString(x->shape()),
                            " outside axis ", axis);
  }
  if (x->size() > INT32_MAX) return node.Unsupported("data too large");
  std::vector<int64_t> strides(rank, 1);
  for (int i = rank - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * x->dim(i + 1);
  }
  // An odometer over the indices' coordinates: a division per coordinate
  // of each of a fuzzed model's 16.7M positions took 10 s (under ASan).
  std::vector<int32_t> base(static_cast<size_t>(indices->size()));
  const Shape &counts = indices->shape();
  std::vector<int64_t> coord(static_cast<size_t>(rank), 0);
  int64_t offset = 0;  // coord . strides, the axis left out
  for (int32_t &value : base) {
    value = static_cast<int32_t>(offset);
    for (int i = rank - 1; i >= 0; --i) {
      const int64_t step = i == axis ? 0 : strides[i];
      if (++coord[i] < counts[i]) {
        offset += step;
        break;
      }
      offset -= step * (counts[i] - 1);
      coord[i] = 0;
    }
  }
  const int a = static_cast<int>(axis);
  const std::string zero = IntConstant(node, context, "zero", {}, {0});
  const std::string dim =
      IntConstant(node, context, "dim", {}, {static_cast<int32_t>(x->dim(a))});
  const std::string stride = IntConstant(node, context, "stride", {},
                                         {static_cast<int32_t>(strides[a])});
  const std::string offsets =
      IntConstant(node, context, "base", indices->shape(), base);
  std::string negative, shift, wrapped, scaled, flat_index;
  MACE_RETURN_IF_ERROR(Binary(node, context, kEltwiseLess, "negative",
                              node.Input(1), zero, &negative));
  MACE_RETURN_IF_ERROR(
      Binary(node, context, kEltwiseProd, "shift", negative, dim, &shift));
  MACE_RETURN_IF_ERROR(Binary(node, context, kEltwiseSum, "wrapped",
                              node.Input(1), shift, &wrapped));
  MACE_RETURN_IF_ERROR(
      Binary(node, context, kEltwiseProd, "scaled", wrapped, stride, &scaled));
  MACE_RETURN_IF_ERROR(Binary(node, context, kEltwiseSum, "flat_index", scaled,
                              offsets, &flat_index));
  const std::string flat = context->Temp(node.Output(0) + "__flat");
  MACE_RETURN_IF_ERROR(context->Emit(
      "Reshape", context->Temp(node.name() + "__flat"), {node.Input(0)}, {flat},
      {OpArg::Ints("shape", {x->size()})}));
  return context->Emit("Gather", node.name(), {flat, flat_index},
                       {node.Output(0)}, {OpArg::Int("axis", 0)});
}

// Pad: pads / value attributes before opset 11; pads, constant_value and
// (opset 18) axes inputs from then on. ONNX orders pads as all begins then
// all ends; MACE as (begin, end) per dim.
MaceStatus LowerPad(const OnnxNode &node, OnnxContext *context) {
  const Tensor *x = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &x));
  std::string mode;
  MACE_RETURN_IF_ERROR(node.String("mode", "constant", &mode));
  int pad_type = 0;
  if (mode == "reflect") {
    pad_type = 1;
  } else if (mode == "edge") {
    pad_type = 3;
  } else if (mode != "constant") {
    return node.Unsupported("attribute 'mode' = '", mode, "'");
  }
  if (x->dtype() != DT_FLOAT) {
    return node.Unsupported("integer data (MACE's Pad is float32 only)");
  }
  const int rank = x->rank();
  std::vector<int64_t> pads, axes;
  float value = 0.0f;
  if (node.opset() < 11) {
    MACE_RETURN_IF_ERROR(node.Ints("pads", {}, &pads));
    MACE_RETURN_IF_ERROR(node.Float("value", 0.0f, &value));
  } else {
    MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &pads));
    if (node.HasInput(2)) {
      std::vector<float> values;
      MACE_RETURN_IF_ERROR(context->ConstFloats(node, 2, &values));
      if (values.size() > 1) {
        return node.InvalidArgs("constant_value must be a scalar");
      }
      if (!values.empty()) value = values[0];
    }
    if (node.HasInput(3)) {
      MACE_RETURN_IF_ERROR(context->ConstInts(node, 3, &axes));
    }
  }
  if (axes.empty()) {
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size()) {
    return node.InvalidArgs("'pads' has ", pads.size(), " values for ",
                            axes.size(), " axes");
  }
  std::vector<int64_t> paddings(2 * rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = 0;
    MACE_RETURN_IF_ERROR(NormalizeAxis(node, "axis", axes[i], rank, &axis));
    paddings[2 * axis] = pads[i];
    paddings[2 * axis + 1] = pads[i + axes.size()];
  }
  return context->Emit(
      "Pad", node.name(), {node.Input(0)}, {node.Output(0)},
      {OpArg::Ints("paddings", paddings), OpArg::Int("pad_type", pad_type),
       OpArg::Float("constant_value", value)});
}

// What the MACE resize op needs: mode, coordinate rule and either the
// spatial scales or the output size.
struct ResizePlan {
  bool nearest = true;
  std::string coordinate_mode = "half_pixel";
  std::string nearest_mode = "round_prefer_floor";
  bool by_scales = true;
  float scale_h = 1.0f, scale_w = 1.0f;
  int64_t out_h = 0, out_w = 0;
};

// Channel last → ResizeNearestNeighbor / ResizeBilinear → channel second.
MaceStatus EmitResize(const OnnxNode &node, OnnxContext *context,
                      const ResizePlan &plan) {
  std::vector<OpArg> args{
      OpArg::String("coordinate_transformation_mode", plan.coordinate_mode)};
  if (plan.nearest) {
    args.push_back(OpArg::String("nearest_mode", plan.nearest_mode));
  }
  if (plan.by_scales) {
    args.push_back(OpArg::Float("height_scale", plan.scale_h));
    args.push_back(OpArg::Float("width_scale", plan.scale_w));
  } else {
    args.push_back(OpArg::Ints("size", {plan.out_h, plan.out_w}));
  }
  std::string nhwc;
  MACE_RETURN_IF_ERROR(
      context->ToChannelLast(node.name(), node.Input(0), &nhwc));
  const std::string y = context->Temp(node.Output(0) + "__nhwc");
  MACE_RETURN_IF_ERROR(
      context->Emit(plan.nearest ? "ResizeNearestNeighbor" : "ResizeBilinear",
                    node.name(), {nhwc}, {y}, args));
  return context->FromChannelLast(node.name(), y, node.Output(0));
}

MaceStatus CheckResizeInput(const OnnxNode &node, const Tensor &x) {
  if (x.rank() != 4) {
    return node.Unsupported("input rank ", x.rank(),
                            " (only 4-D NCHW input is resized)");
  }
  if (x.dtype() != DT_FLOAT) return node.Unsupported("integer input");
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ReadMode(const OnnxNode &node, ResizePlan *plan) {
  std::string mode;
  MACE_RETURN_IF_ERROR(node.String("mode", "nearest", &mode));
  if (mode != "nearest" && mode != "linear" && mode != "bilinear") {
    return node.Unsupported("attribute 'mode' = '", mode, "'");
  }
  plan->nearest = mode == "nearest";
  return MaceStatus::MACE_SUCCESS;
}

// Scales for all four dims → the plan; N and C must stay.
MaceStatus PlanFromScales(const OnnxNode &node,
                          const std::vector<float> &scales, ResizePlan *plan) {
  if (scales.size() != 4) {
    return node.InvalidArgs("scales has ", scales.size(),
                            " values for a 4-D input");
  }
  if (scales[0] != 1.0f || scales[1] != 1.0f) {
    return node.Unsupported("scales ", scales[0], ", ", scales[1],
                            " on N and C (only H and W are resized)");
  }
  plan->by_scales = true;
  plan->scale_h = scales[2];
  plan->scale_w = scales[3];
  return MaceStatus::MACE_SUCCESS;
}

// Before opset 11 (Upsample, Resize-10): asymmetric coordinates; nearest
// rounds down when enlarging and up when shrinking, as onnxruntime.
MaceStatus LowerLegacyResize(const OnnxNode &node, OnnxContext *context,
                             const std::vector<float> &scales) {
  const Tensor *x = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &x));
  MACE_RETURN_IF_ERROR(CheckResizeInput(node, *x));
  ResizePlan plan;
  MACE_RETURN_IF_ERROR(ReadMode(node, &plan));
  MACE_RETURN_IF_ERROR(PlanFromScales(node, scales, &plan));
  plan.coordinate_mode = "asymmetric";
  const bool up_h = plan.scale_h >= 1.0f, up_w = plan.scale_w >= 1.0f;
  if (plan.nearest && up_h != up_w) {
    return node.Unsupported(
        "nearest resize that enlarges one axis and "
        "shrinks the other (opset < 11 rounding)");
  }
  plan.nearest_mode = up_h ? "floor" : "ceil";
  return EmitResize(node, context, plan);
}

MaceStatus LowerUpsample(const OnnxNode &node, OnnxContext *context) {
  std::vector<float> scales;
  if (node.opset() < 9) {
    MACE_RETURN_IF_ERROR(node.Floats("scales", {}, &scales));
  } else {
    MACE_RETURN_IF_ERROR(context->ConstFloats(node, 1, &scales));
  }
  return LowerLegacyResize(node, context, scales);
}

// Attributes of Resize-11+ whose other values are out of scope.
MaceStatus CheckResizeAttrs(const OnnxNode &node, const ResizePlan &plan) {
  if (plan.coordinate_mode == "tf_crop_and_resize" ||
      plan.coordinate_mode == "half_pixel_symmetric") {
    return node.Unsupported("attribute 'coordinate_transformation_mode' = '",
                            plan.coordinate_mode, "'");
  }
  int64_t antialias = 0;
  MACE_RETURN_IF_ERROR(node.Int("antialias", 0, &antialias));
  if (antialias != 0) return node.Unsupported("attribute 'antialias' = 1");
  std::string policy;
  MACE_RETURN_IF_ERROR(
      node.String("keep_aspect_ratio_policy", "stretch", &policy));
  if (policy != "stretch") {
    return node.Unsupported("attribute 'keep_aspect_ratio_policy' = '", policy,
                            "'");
  }
  return MaceStatus::MACE_SUCCESS;
}

// align_corners and pytorch_half_pixel read the output length in * scale
// unrounded when scales are given; MACE (as onnxruntime) uses the rounded
// length, which only agrees when in * scale is a whole number.
MaceStatus CheckScaledLength(const OnnxNode &node, const Tensor &x,
                             const ResizePlan &plan) {
  if (plan.coordinate_mode != "align_corners" &&
      plan.coordinate_mode != "pytorch_half_pixel") {
    return MaceStatus::MACE_SUCCESS;
  }
  const float scales[2] = {plan.scale_h, plan.scale_w};
  for (int i = 0; i < 2; ++i) {
    // In float32, as ONNX's reference computes it.
    const float length = static_cast<float>(x.dim(2 + i)) * scales[i];
    if (length != std::floor(length)) {
      return node.Unsupported("coordinate_transformation_mode '",
                              plan.coordinate_mode, "' with scale ", scales[i],
                              " giving a fractional output length ", length,
                              " (give 'sizes' instead)");
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

// Values given for `axes` (opset 18) spread over all dims, the others
// keeping their `defaults`.
template <typename T>
MaceStatus SpreadOverAxes(const OnnxNode &node, const std::vector<T> &given,
                          const std::vector<int64_t> &axes,
                          const std::vector<T> &defaults, std::vector<T> *all) {
  if (axes.empty()) {
    *all = given;
    return MaceStatus::MACE_SUCCESS;
  }
  if (given.size() != axes.size()) {
    return node.InvalidArgs(given.size(), " scales or sizes for ", axes.size(),
                            " axes");
  }
  *all = defaults;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = 0;
    MACE_RETURN_IF_ERROR(NormalizeAxis(
        node, "axis", axes[i], static_cast<int64_t>(all->size()), &axis));
    (*all)[axis] = given[i];
  }
  return MaceStatus::MACE_SUCCESS;
}

// Resize-11+. cubic_coeff_a and exclude_outside only act in cubic mode,
// extrapolation_value only with tf_crop_and_resize, roi likewise: all
// refused before those attributes could matter.
MaceStatus LowerResize(const OnnxNode &node, OnnxContext *context) {
  if (node.opset() < 11) {
    std::vector<float> scales;
    MACE_RETURN_IF_ERROR(context->ConstFloats(node, 1, &scales));
    return LowerLegacyResize(node, context, scales);
  }
  const Tensor *x = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &x));
  MACE_RETURN_IF_ERROR(CheckResizeInput(node, *x));
  ResizePlan plan;
  MACE_RETURN_IF_ERROR(ReadMode(node, &plan));
  MACE_RETURN_IF_ERROR(node.String("coordinate_transformation_mode",
                                   "half_pixel", &plan.coordinate_mode));
  MACE_RETURN_IF_ERROR(
      node.String("nearest_mode", "round_prefer_floor", &plan.nearest_mode));
  MACE_RETURN_IF_ERROR(CheckResizeAttrs(node, plan));
  std::vector<int64_t> axes;
  MACE_RETURN_IF_ERROR(node.Ints("axes", {}, &axes));
  const Tensor *scales_tensor =
      node.HasInput(2) ? context->Find(node.Input(2)) : nullptr;
  if (scales_tensor != nullptr && scales_tensor->size() > 0) {
    std::vector<float> given, scales;
    MACE_RETURN_IF_ERROR(context->ConstFloats(node, 2, &given));
    MACE_RETURN_IF_ERROR(SpreadOverAxes(
        node, given, axes, std::vector<float>(x->rank(), 1.0f), &scales));
    MACE_RETURN_IF_ERROR(PlanFromScales(node, scales, &plan));
    MACE_RETURN_IF_ERROR(CheckScaledLength(node, *x, plan));
    return EmitResize(node, context, plan);
  }
  if (!node.HasInput(3)) {
    return node.InvalidArgs("needs input 'scales' or 'sizes'");
  }
  std::vector<int64_t> given, sizes;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 3, &given));
  MACE_RETURN_IF_ERROR(SpreadOverAxes(node, given, axes, x->shape(), &sizes));
  if (sizes.size() != 4) {
    return node.InvalidArgs("sizes has ", sizes.size(),
                            " values for a 4-D input");
  }
  if (sizes[0] != x->dim(0) || sizes[1] != x->dim(1)) {
    return node.Unsupported("sizes change N or C (only H and W are resized)");
  }
  plan.by_scales = false;
  plan.out_h = sizes[2];
  plan.out_w = sizes[3];
  return EmitResize(node, context, plan);
}

// DepthToSpace / SpaceToDepth: MACE's DCR matches ONNX's DCR; CRD is
// DepthToSpace only.
MaceStatus LowerBlockOp(const OnnxNode &node, OnnxContext *context,
                        const char *type, bool has_mode) {
  const Tensor *x = nullptr;
  MACE_RETURN_IF_ERROR(GetInput(node, context, 0, &x));
  if (x->rank() != 4) {
    return node.InvalidArgs("input rank ", x->rank(), " (must be 4-D)");
  }
  if (x->dtype() != DT_FLOAT) return node.Unsupported("integer input");
  if (!node.HasAttr("blocksize")) {
    return node.InvalidArgs("attribute 'blocksize' is required");
  }
  int64_t block = 0;
  MACE_RETURN_IF_ERROR(node.Int("blocksize", 0, &block));
  std::vector<OpArg> args{OpArg::Int("block_size", block)};
  if (has_mode) {
    std::string mode;
    MACE_RETURN_IF_ERROR(node.String("mode", "DCR", &mode));
    if (mode != "DCR" && mode != "CRD") {
      return node.Unsupported("attribute 'mode' = '", mode, "'");
    }
    args.push_back(OpArg::String("mode", mode));
  }
  std::string nhwc;
  MACE_RETURN_IF_ERROR(
      context->ToChannelLast(node.name(), node.Input(0), &nhwc));
  const std::string y = context->Temp(node.Output(0) + "__nhwc");
  MACE_RETURN_IF_ERROR(context->Emit(type, node.name(), {nhwc}, {y}, args));
  return context->FromChannelLast(node.name(), y, node.Output(0));
}

MaceStatus LowerDepthToSpace(const OnnxNode &node, OnnxContext *context) {
  return LowerBlockOp(node, context, "DepthToSpace", true);
}

MaceStatus LowerSpaceToDepth(const OnnxNode &node, OnnxContext *context) {
  return LowerBlockOp(node, context, "SpaceToDepth", false);
}

}  // namespace

void RegisterOnnxTensorOps(OnnxLoweringTable *table) {
  (*table)["Concat"] = LowerConcat;
  (*table)["Split"] = LowerSplit;
  (*table)["Slice"] = LowerSlice;
  (*table)["Gather"] = LowerGather;
  (*table)["GatherElements"] = LowerGatherElements;
  (*table)["Pad"] = LowerPad;
  (*table)["Resize"] = LowerResize;
  (*table)["Upsample"] = LowerUpsample;
  (*table)["DepthToSpace"] = LowerDepthToSpace;
  (*table)["SpaceToDepth"] = LowerSpaceToDepth;
}

}  // namespace converter
}  // namespace mace
