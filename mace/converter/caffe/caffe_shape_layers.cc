// Layers that move data without arithmetic (Concat, Slice, Split, Flatten,
// Reshape, Permute, Crop, ShuffleChannel) and Interp. Shapes are all known
// at conversion time, so Caffe's shape rules (0 = copy, -1 = infer, axis
// ranges) are resolved here and the ops get explicit shapes.

#include "mace/converter/caffe/caffe_lowering.h"

namespace mace {
namespace converter {
namespace {

MaceStatus NormalizeAxis(const CaffeLayer &layer, const std::string &field,
                         int64_t axis, int rank, int64_t *out) {
  if (axis < -rank || axis >= rank) {
    return layer.InvalidArgs("'", field, "' = ", axis,
                             " is out of range for rank ", rank);
  }
  *out = axis < 0 ? axis + rank : axis;
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus LowerConcat(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(1, 1 << 20));
  MACE_RETURN_IF_ERROR(layer.ExpectTops(1, 1));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("concat_param", &param));
  int64_t axis = 1;
  if (param->Has("axis")) {
    MACE_RETURN_IF_ERROR(param->GetInt(layer.What(), "axis", 1, &axis));
  } else {
    MACE_RETURN_IF_ERROR(param->GetInt(layer.What(), "concat_dim", 1, &axis));
  }
  const int rank = context->RankOf(layer.Bottom(0));
  MACE_RETURN_IF_ERROR(NormalizeAxis(layer, "axis", axis, rank, &axis));
  std::vector<std::string> inputs;
  for (int i = 0; i < layer.num_bottoms(); ++i)
    inputs.push_back(layer.Bottom(i));
  if (inputs.size() == 1) {
    return context->Emit("Identity", layer.name(), inputs, {layer.Top(0)});
  }
  return context->Emit("Concat", layer.name(), inputs, {layer.Top(0)},
                       {OpArg::Int("axis", axis)});
}

MaceStatus LowerSlice(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(1, 1));
  MACE_RETURN_IF_ERROR(layer.ExpectTops(1, 1 << 20));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("slice_param", &param));
  int64_t axis = 1;
  if (param->Has("axis")) {
    MACE_RETURN_IF_ERROR(param->GetInt(layer.What(), "axis", 1, &axis));
  } else {
    MACE_RETURN_IF_ERROR(param->GetInt(layer.What(), "slice_dim", 1, &axis));
  }
  const Shape &in = context->ShapeOf(layer.Bottom(0));
  MACE_RETURN_IF_ERROR(
      NormalizeAxis(layer, "axis", axis, static_cast<int>(in.size()), &axis));
  std::vector<int64_t> points;
  MACE_RETURN_IF_ERROR(param->GetInts(layer.What(), "slice_point", &points));
  const int64_t extent = in[axis];
  const int tops = layer.num_tops();
  std::vector<int64_t> sizes;
  if (points.empty()) {
    if (extent % tops != 0) {
      return layer.InvalidArgs("axis size ", extent,
                               " does not split evenly into ", tops, " tops");
    }
    sizes.assign(tops, extent / tops);
  } else {
    if (static_cast<int>(points.size()) != tops - 1) {
      return layer.InvalidArgs(points.size(), " slice points for ", tops,
                               " tops (expected ", tops - 1, ")");
    }
    int64_t previous = 0;
    points.push_back(extent);
    for (int64_t p : points) {
      if (p <= previous || p > extent) {
        return layer.InvalidArgs("slice points must increase within (0, ",
                                 extent, "), got ", p);
      }
      sizes.push_back(p - previous);
      previous = p;
    }
  }
  std::vector<std::string> outputs;
  for (int i = 0; i < tops; ++i) outputs.push_back(layer.Top(i));
  if (tops == 1) {
    return context->Emit("Identity", layer.name(), {layer.Bottom(0)}, outputs);
  }
  return context->Emit("Split", layer.name(), {layer.Bottom(0)}, outputs,
                       {OpArg::Int("axis", axis), OpArg::Ints("split", sizes)});
}

MaceStatus LowerSplit(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(1, 1));
  for (int i = 0; i < layer.num_tops(); ++i) {
    MACE_RETURN_IF_ERROR(context->Emit(
        "Identity", i == 0 ? layer.name() : context->Temp(layer.name()),
        {layer.Bottom(0)}, {layer.Top(i)}));
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus EmitReshape(const CaffeLayer &layer, CaffeContext *context,
                       const Shape &shape) {
  return context->Emit("Reshape", layer.name(), {layer.Bottom(0)},
                       {layer.Top(0)}, {OpArg::Ints("shape", shape)});
}

MaceStatus LowerFlatten(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(1, 1));
  MACE_RETURN_IF_ERROR(layer.ExpectTops(1, 1));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("flatten_param", &param));
  int64_t axis = 1, end_axis = -1;
  MACE_RETURN_IF_ERROR(param->GetInt(layer.What(), "axis", 1, &axis));
  MACE_RETURN_IF_ERROR(param->GetInt(layer.What(), "end_axis", -1, &end_axis));
  const Shape &in = context->ShapeOf(layer.Bottom(0));
  const int rank = static_cast<int>(in.size());
  MACE_RETURN_IF_ERROR(NormalizeAxis(layer, "axis", axis, rank, &axis));
  MACE_RETURN_IF_ERROR(
      NormalizeAxis(layer, "end_axis", end_axis, rank, &end_axis));
  if (end_axis < axis) {
    return layer.InvalidArgs("end_axis ", end_axis, " is before axis ", axis);
  }
  Shape shape(in.begin(), in.begin() + axis);
  int64_t merged = 1;
  for (int64_t i = axis; i <= end_axis; ++i) merged *= in[i];
  shape.push_back(merged);
  shape.insert(shape.end(), in.begin() + end_axis + 1, in.end());
  return EmitReshape(layer, context, shape);
}

MaceStatus LowerReshape(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(1, 1));
  MACE_RETURN_IF_ERROR(layer.ExpectTops(1, 1));
  const TextMessage *param = nullptr, *shape_param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("reshape_param", &param));
  MACE_RETURN_IF_ERROR(param->GetMessage(layer.What(), "shape", &shape_param));
  std::vector<int64_t> dims;
  MACE_RETURN_IF_ERROR(shape_param->GetInts(layer.What(), "dim", &dims));
  int64_t axis = 0, num_axes = -1;
  MACE_RETURN_IF_ERROR(param->GetInt(layer.What(), "axis", 0, &axis));
  MACE_RETURN_IF_ERROR(param->GetInt(layer.What(), "num_axes", -1, &num_axes));
  const Shape &in = context->ShapeOf(layer.Bottom(0));
  const int rank = static_cast<int>(in.size());
  // Caffe: a negative axis counts from one past the end.
  const int64_t start = axis < 0 ? axis + rank + 1 : axis;
  // Compared before start + num_axes is formed, which could overflow.
  if (start < 0 || start > rank || num_axes < -1 ||
      (num_axes != -1 && num_axes > rank - start)) {
    return layer.InvalidArgs("axis ", axis, " / num_axes ", num_axes,
                             " do not fit input ", ShapeToString(in));
  }
  const int64_t end = num_axes == -1 ? rank : start + num_axes;
  Shape shape(in.begin(), in.begin() + start);
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = dims[i];
    if (d == 0) {
      if (start + static_cast<int64_t>(i) >= rank) {
        return layer.InvalidArgs("dim ", i,
                                 " = 0 copies an input axis that "
                                 "does not exist");
      }
      d = in[start + i];
    } else if (d == -1) {
      if (infer_at >= 0) return layer.InvalidArgs("more than one dim is -1");
      infer_at = static_cast<int64_t>(shape.size());
    } else if (d < 0) {
      return layer.InvalidArgs("dim ", i, " = ", d, " is invalid");
    }
    shape.push_back(d);
    if (d != -1) known *= d;
  }
  shape.insert(shape.end(), in.begin() + end, in.end());
  int64_t total = 1, rest = 1;
  for (int64_t d : in) total *= d;
  for (int64_t i = end; i < rank; ++i) rest *= in[i];
  for (int64_t i = 0; i < start; ++i) rest *= in[i];
  known *= rest;
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0) {
      return layer.InvalidArgs("cannot infer the -1 dim of ",
                               ShapeToString(dims), " from input ",
                               ShapeToString(in));
    }
    shape[infer_at] = total / known;
  }
  return EmitReshape(layer, context, shape);
}

MaceStatus LowerPermute(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(1, 1));
  MACE_RETURN_IF_ERROR(layer.ExpectTops(1, 1));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("permute_param", &param));
  std::vector<int64_t> order;
  MACE_RETURN_IF_ERROR(param->GetInts(layer.What(), "order", &order));
  const int rank = context->RankOf(layer.Bottom(0));
  std::vector<bool> used(rank, false);
  for (int64_t axis : order) {
    if (axis < 0 || axis >= rank || used[axis]) {
      return layer.InvalidArgs("order ", ShapeToString(order),
                               " is not a permutation of ", rank, " axes");
    }
    used[axis] = true;
  }
  // Axes not named keep their relative order after the named ones.
  for (int axis = 0; axis < rank; ++axis) {
    if (!used[axis]) order.push_back(axis);
  }
  return context->Emit("Transpose", layer.name(), {layer.Bottom(0)},
                       {layer.Top(0)}, {OpArg::Ints("dims", order)});
}

MaceStatus LowerCrop(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(2, 2));
  MACE_RETURN_IF_ERROR(layer.ExpectTops(1, 1));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("crop_param", &param));
  int64_t axis = 2;
  std::vector<int64_t> offsets;
  MACE_RETURN_IF_ERROR(param->GetInt(layer.What(), "axis", 2, &axis));
  MACE_RETURN_IF_ERROR(param->GetInts(layer.What(), "offset", &offsets));
  const Shape &in = context->ShapeOf(layer.Bottom(0));
  const Shape &ref = context->ShapeOf(layer.Bottom(1));
  const int rank = static_cast<int>(in.size());
  if (static_cast<int>(ref.size()) != rank) {
    return layer.InvalidArgs("reference ", ShapeToString(ref), " and input ",
                             ShapeToString(in), " differ in rank");
  }
  MACE_RETURN_IF_ERROR(NormalizeAxis(layer, "axis", axis, rank, &axis));
  const int64_t cropped = rank - axis;
  if (offsets.size() > 1 && static_cast<int64_t>(offsets.size()) != cropped) {
    return layer.InvalidArgs(offsets.size(), " offsets for ", cropped,
                             " cropped axes");
  }
  std::vector<int64_t> starts, ends, axes;
  for (int64_t i = axis; i < rank; ++i) {
    const int64_t offset = offsets.empty()       ? 0
                           : offsets.size() == 1 ? offsets[0]
                                                 : offsets[i - axis];
    if (offset < 0 || offset + ref[i] > in[i]) {
      return layer.InvalidArgs("offset ", offset, " + size ", ref[i],
                               " exceeds input dim ", i, " (", in[i], ")");
    }
    starts.push_back(offset);
    ends.push_back(offset + ref[i]);
    axes.push_back(i);
  }
  return context->Emit("Slice", layer.name(), {layer.Bottom(0)}, {layer.Top(0)},
                       {OpArg::Ints("starts", starts),
                        OpArg::Ints("ends", ends), OpArg::Ints("axes", axes)});
}

MaceStatus LowerShuffleChannel(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(1, 1));
  MACE_RETURN_IF_ERROR(layer.ExpectTops(1, 1));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("shuffle_channel_param", &param));
  int64_t group = 1;
  MACE_RETURN_IF_ERROR(param->GetInt(layer.What(), "group", 1, &group));
  const Shape &in = context->ShapeOf(layer.Bottom(0));
  if (in.size() != 4 || group < 1 || in[1] % group != 0) {
    return layer.InvalidArgs("group ", group, " must divide the channels of ",
                             ShapeToString(in), " (4-D input)");
  }
  return context->EmitChannelLast(layer.name(), "ChannelShuffle",
                                  layer.Bottom(0), {},
                                  {OpArg::Int("group", group)}, layer.Top(0));
}

// PSPNet / DeepLab Interp: bilinear with aligned corners, output size from
// height/width, zoom_factor or shrink_factor.
MaceStatus LowerInterp(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(1, 2));
  MACE_RETURN_IF_ERROR(layer.ExpectTops(1, 1));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("interp_param", &param));
  const std::string what = layer.What();
  int64_t height = 0, width = 0, zoom = 1, shrink = 1, pad_beg = 0, pad_end = 0;
  MACE_RETURN_IF_ERROR(param->GetInt(what, "height", 0, &height));
  MACE_RETURN_IF_ERROR(param->GetInt(what, "width", 0, &width));
  MACE_RETURN_IF_ERROR(param->GetInt(what, "zoom_factor", 1, &zoom));
  MACE_RETURN_IF_ERROR(param->GetInt(what, "shrink_factor", 1, &shrink));
  MACE_RETURN_IF_ERROR(param->GetInt(what, "pad_beg", 0, &pad_beg));
  MACE_RETURN_IF_ERROR(param->GetInt(what, "pad_end", 0, &pad_end));
  if (pad_beg != 0 || pad_end != 0) {
    return layer.Unsupported("pad_beg / pad_end other than 0");
  }
  const Shape &in = context->ShapeOf(layer.Bottom(0));
  if (in.size() != 4) {
    return layer.Unsupported("input ", ShapeToString(in), " (only 4-D)");
  }
  int64_t out_h = in[2], out_w = in[3];
  if (layer.num_bottoms() == 2) {
    const Shape &ref = context->ShapeOf(layer.Bottom(1));
    if (ref.size() != 4) return layer.InvalidArgs("reference is not 4-D");
    out_h = ref[2];
    out_w = ref[3];
  } else if (param->Has("height") || param->Has("width")) {
    out_h = height;
    out_w = width;
  } else {
    if (shrink < 1 || zoom < 1) {
      return layer.InvalidArgs("shrink_factor and zoom_factor must be >= 1");
    }
    out_h = (out_h - 1) / shrink + 1;
    out_w = (out_w - 1) / shrink + 1;
    out_h = out_h + (out_h - 1) * (zoom - 1);
    out_w = out_w + (out_w - 1) * (zoom - 1);
  }
  if (out_h < 1 || out_w < 1) {
    return layer.InvalidArgs("output size ", out_h, "x", out_w,
                             " must be >= 1");
  }
  return context->EmitChannelLast(
      layer.name(), "ResizeBilinear", layer.Bottom(0), {},
      {OpArg::Ints("size", {out_h, out_w}), OpArg::Int("align_corners", 1)},
      layer.Top(0));
}

}  // namespace

void RegisterCaffeShapeLayers(CaffeLoweringTable *table) {
  (*table)["Concat"] = LowerConcat;
  (*table)["Slice"] = LowerSlice;
  (*table)["Split"] = LowerSplit;
  (*table)["Flatten"] = LowerFlatten;
  (*table)["Reshape"] = LowerReshape;
  (*table)["Permute"] = LowerPermute;
  (*table)["Crop"] = LowerCrop;
  (*table)["ShuffleChannel"] = LowerShuffleChannel;
  (*table)["Interp"] = LowerInterp;
}

}  // namespace converter
}  // namespace mace
