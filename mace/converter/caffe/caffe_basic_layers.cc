// Activations, normalizations (BatchNorm + Scale folded into one per-channel
// affine op, LRN, Softmax, SSD's Normalize) and arithmetic (Eltwise, Power,
// AbsVal, Bias).

#include <cmath>

#include "mace/converter/caffe/caffe_lowering.h"
#include "mace/ops/eltwise_type.h"

namespace mace {
namespace converter {
namespace {

// Whether `count` axes from `axis` lie inside a rank-`rank` shape; written
// so that no sum of the layer's (unchecked) values can overflow.
bool AxesFit(int64_t axis, int64_t count, int rank) {
  return axis >= 0 && axis <= rank && count >= 0 && count <= rank - axis;
}

MaceStatus OneInOneOut(const CaffeLayer &layer) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(1, 1));
  return layer.ExpectTops(1, 1);
}

MaceStatus EmitActivation(const CaffeLayer &layer, CaffeContext *context,
                          std::vector<OpArg> args) {
  MACE_RETURN_IF_ERROR(OneInOneOut(layer));
  return context->Emit("Activation", layer.name(), {layer.Bottom(0)},
                       {layer.Top(0)}, args);
}

MaceStatus LowerReLU(const CaffeLayer &layer, CaffeContext *context) {
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("relu_param", &param));
  float slope = 0;
  MACE_RETURN_IF_ERROR(
      param->GetFloat(layer.What(), "negative_slope", 0.0f, &slope));
  if (slope == 0) {
    return EmitActivation(layer, context,
                          {OpArg::String("activation", "RELU")});
  }
  return EmitActivation(layer, context,
                        {OpArg::String("activation", "LEAKYRELU"),
                         OpArg::Float("activation_coefficient", slope)});
}

MaceStatus LowerReLU6(const CaffeLayer &layer, CaffeContext *context) {
  return EmitActivation(
      layer, context,
      {OpArg::String("activation", "RELUX"), OpArg::Float("max_limit", 6.0f)});
}

MaceStatus LowerClip(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(OneInOneOut(layer));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("clip_param", &param));
  if (!param->Has("min") || !param->Has("max")) {
    return layer.InvalidArgs("clip_param needs 'min' and 'max'");
  }
  float lo = 0, hi = 0;
  MACE_RETURN_IF_ERROR(param->GetFloat(layer.What(), "min", 0.0f, &lo));
  MACE_RETURN_IF_ERROR(param->GetFloat(layer.What(), "max", 0.0f, &hi));
  if (!(lo <= hi)) {
    return layer.InvalidArgs("clip min ", lo, " is greater than max ", hi);
  }
  return context->Emit(
      "Eltwise", layer.name(), {layer.Bottom(0)}, {layer.Top(0)},
      {OpArg::Int("type", kClip), OpArg::Floats("coeff", {lo, hi})});
}

template <const char *kActivation>
MaceStatus LowerSimpleActivation(const CaffeLayer &layer,
                                 CaffeContext *context) {
  return EmitActivation(layer, context,
                        {OpArg::String("activation", kActivation)});
}
constexpr char kSigmoid[] = "SIGMOID";
constexpr char kTanh[] = "TANH";

MaceStatus LowerELU(const CaffeLayer &layer, CaffeContext *context) {
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("elu_param", &param));
  float alpha = 1;
  MACE_RETURN_IF_ERROR(param->GetFloat(layer.What(), "alpha", 1.0f, &alpha));
  return EmitActivation(layer, context,
                        {OpArg::String("activation", "ELU"),
                         OpArg::Float("activation_coefficient", alpha)});
}

MaceStatus LowerPReLU(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(OneInOneOut(layer));
  MACE_RETURN_IF_ERROR(layer.ExpectBlobs(1, 1));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("prelu_param", &param));
  bool shared = false;
  MACE_RETURN_IF_ERROR(
      param->GetBool(layer.What(), "channel_shared", false, &shared));
  const Shape &in = context->ShapeOf(layer.Bottom(0));
  const int64_t channels = in.size() >= 2 ? in[1] : 1;
  const int64_t count = shared ? 1 : channels;
  MACE_RETURN_IF_ERROR(layer.ExpectBlobCount(0, count, "slope"));
  const std::string slope = context->Constant(layer.name() + "__slope", {count},
                                              layer.blob(0).values);
  return context->EmitChannelLast(
      layer.name(), "Activation", layer.Bottom(0), {slope},
      {OpArg::String("activation", "PRELU")}, layer.Top(0));
}

MaceStatus LowerDropout(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(OneInOneOut(layer));
  // Caffe scales at training time, so inference is the identity.
  return context->Emit("Identity", layer.name(), {layer.Bottom(0)},
                       {layer.Top(0)});
}

// ---- BatchNorm / Scale ------------------------------------------------------

struct Affine {
  std::vector<double> scale, offset;
};

MaceStatus BatchNormAffine(const CaffeLayer &layer, int64_t channels,
                           Affine *affine) {
  MACE_RETURN_IF_ERROR(layer.ExpectBlobs(3, 3));
  MACE_RETURN_IF_ERROR(layer.ExpectBlobCount(0, channels, "mean"));
  MACE_RETURN_IF_ERROR(layer.ExpectBlobCount(1, channels, "variance"));
  MACE_RETURN_IF_ERROR(layer.ExpectBlobCount(2, 1, "scale factor"));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("batch_norm_param", &param));
  float eps = 1e-5f;
  MACE_RETURN_IF_ERROR(param->GetFloat(layer.What(), "eps", 1e-5f, &eps));
  bool global_stats = true;
  MACE_RETURN_IF_ERROR(
      param->GetBool(layer.What(), "use_global_stats", true, &global_stats));
  if (!global_stats) {
    return layer.Unsupported(
        "use_global_stats: false (batch statistics are "
        "a training mode)");
  }
  // Caffe stores running sums; the third blob is their common divisor.
  const double factor = layer.blob(2).values[0];
  const double inv = factor == 0 ? 0.0 : 1.0 / factor;
  affine->scale.resize(channels);
  affine->offset.resize(channels);
  for (int64_t c = 0; c < channels; ++c) {
    const double mean = layer.blob(0).values[c] * inv;
    const double var = layer.blob(1).values[c] * inv;
    if (var + eps <= 0) {
      return layer.InvalidArgs("variance + eps of channel ", c, " is ",
                               var + eps, " (must be > 0)");
    }
    const double s = 1.0 / std::sqrt(var + eps);
    affine->scale[c] = s;
    affine->offset[c] = -mean * s;
  }
  return MaceStatus::MACE_SUCCESS;
}

// A Scale with its scale (and optional bias) as blobs over axis 1 only.
MaceStatus ScaleAffine(const CaffeLayer &layer, int64_t channels,
                       Affine *affine) {
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("scale_param", &param));
  bool bias_term = false;
  MACE_RETURN_IF_ERROR(
      param->GetBool(layer.What(), "bias_term", false, &bias_term));
  MACE_RETURN_IF_ERROR(layer.ExpectBlobs(bias_term ? 2 : 1, bias_term ? 2 : 1));
  MACE_RETURN_IF_ERROR(layer.ExpectBlobCount(0, channels, "scale"));
  if (bias_term)
    MACE_RETURN_IF_ERROR(layer.ExpectBlobCount(1, channels, "bias"));
  affine->scale.resize(channels);
  affine->offset.assign(channels, 0.0);
  for (int64_t c = 0; c < channels; ++c) {
    affine->scale[c] = layer.blob(0).values[c];
    if (bias_term) affine->offset[c] = layer.blob(1).values[c];
  }
  return MaceStatus::MACE_SUCCESS;
}

// Whether a one-bottom Scale is per channel (axis 1, one axis): the case
// lowered to BatchNorm; others become broadcast Eltwise ops.
MaceStatus IsPerChannelScale(const CaffeLayer &layer, int rank,
                             bool *per_channel) {
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("scale_param", &param));
  int64_t axis = 1, num_axes = 1;
  MACE_RETURN_IF_ERROR(param->GetInt(layer.What(), "axis", 1, &axis));
  MACE_RETURN_IF_ERROR(param->GetInt(layer.What(), "num_axes", 1, &num_axes));
  if (axis < 0) axis += rank;
  *per_channel =
      layer.num_bottoms() == 1 && axis == 1 && num_axes == 1 && rank >= 2;
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus EmitAffine(const CaffeLayer &layer, const Affine &affine,
                      const std::string &output, CaffeContext *context) {
  const int64_t channels = static_cast<int64_t>(affine.scale.size());
  std::vector<float> scale(affine.scale.begin(), affine.scale.end());
  std::vector<float> offset(affine.offset.begin(), affine.offset.end());
  const std::string s =
      context->Constant(layer.name() + "__scale", {channels}, scale);
  const std::string o =
      context->Constant(layer.name() + "__offset", {channels}, offset);
  return context->EmitChannelLast(layer.name(), "BatchNorm", layer.Bottom(0),
                                  {s, o}, {}, output);
}

MaceStatus ExpectChannels(const CaffeLayer &layer, CaffeContext *context,
                          int64_t *channels) {
  const Shape &in = context->ShapeOf(layer.Bottom(0));
  if (in.size() < 2) {
    return layer.Unsupported("input ", ShapeToString(in),
                             " has no channel axis (rank < 2)");
  }
  *channels = in[1];
  return MaceStatus::MACE_SUCCESS;
}

// Scale (Caffe semantics, any axis / num_axes, scale from a blob or from a
// second bottom): x * s (+ b), s broadcast over the dims after
// axis + s.rank.
MaceStatus LowerGeneralScale(const CaffeLayer &layer, CaffeContext *context) {
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("scale_param", &param));
  int64_t axis = 1, num_axes = 1;
  bool bias_term = false;
  MACE_RETURN_IF_ERROR(param->GetInt(layer.What(), "axis", 1, &axis));
  MACE_RETURN_IF_ERROR(param->GetInt(layer.What(), "num_axes", 1, &num_axes));
  MACE_RETURN_IF_ERROR(
      param->GetBool(layer.What(), "bias_term", false, &bias_term));
  const Shape in = context->ShapeOf(layer.Bottom(0));
  const int rank = static_cast<int>(in.size());
  if (axis < 0) axis += rank;
  std::string scale;
  int64_t scale_rank = 0;
  int bias_blob = 0;
  if (layer.num_bottoms() == 2) {
    scale = layer.Bottom(1);
    scale_rank = context->RankOf(scale);
  } else {
    scale_rank = num_axes < 0 ? rank - axis : num_axes;
    bias_blob = 1;
  }
  if (!AxesFit(axis, scale_rank, rank)) {
    return layer.InvalidArgs("axis ", axis, " and ", scale_rank,
                             " scale axes do not fit input ",
                             ShapeToString(in));
  }
  Shape covered(in.begin() + axis, in.begin() + axis + scale_rank);
  Shape broadcast = covered;
  broadcast.resize(rank - axis, 1);
  int64_t count = 1;
  for (int64_t d : covered) count *= d;
  if (layer.num_bottoms() == 1) {
    MACE_RETURN_IF_ERROR(
        layer.ExpectBlobs(bias_term ? 2 : 1, bias_term ? 2 : 1));
    MACE_RETURN_IF_ERROR(layer.ExpectBlobCount(0, count, "scale"));
    scale = context->Constant(layer.name() + "__scale", broadcast,
                              layer.blob(0).values);
  } else {
    if (context->ShapeOf(scale) != covered) {
      return layer.InvalidArgs("scale bottom ",
                               ShapeToString(context->ShapeOf(scale)),
                               " does not match input dims ",
                               ShapeToString(covered), " at axis ", axis);
    }
    const std::string reshaped = context->Temp(scale + "__bcast");
    MACE_RETURN_IF_ERROR(
        context->Emit("Reshape", context->Temp(layer.name() + "__scale_shape"),
                      {scale}, {reshaped}, {OpArg::Ints("shape", broadcast)}));
    scale = reshaped;
    MACE_RETURN_IF_ERROR(layer.ExpectBlobs(0 + bias_term, 0 + bias_term));
  }
  const int prod = kProd;
  const int sum = kSum;
  if (!bias_term) {
    return context->Emit("Eltwise", layer.name(), {layer.Bottom(0), scale},
                         {layer.Top(0)}, {OpArg::Int("type", prod)});
  }
  MACE_RETURN_IF_ERROR(layer.ExpectBlobCount(bias_blob, count, "bias"));
  const std::string bias = context->Constant(layer.name() + "__bias", broadcast,
                                             layer.blob(bias_blob).values);
  const std::string scaled = context->Temp(layer.Top(0) + "__scaled");
  MACE_RETURN_IF_ERROR(context->Emit("Eltwise", layer.name(),
                                     {layer.Bottom(0), scale}, {scaled},
                                     {OpArg::Int("type", prod)}));
  return context->Emit("Eltwise", context->Temp(layer.name() + "__bias_add"),
                       {scaled, bias}, {layer.Top(0)},
                       {OpArg::Int("type", sum)});
}

MaceStatus LowerScale(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(1, 2));
  MACE_RETURN_IF_ERROR(layer.ExpectTops(1, 1));
  bool per_channel = false;
  MACE_RETURN_IF_ERROR(
      IsPerChannelScale(layer, context->RankOf(layer.Bottom(0)), &per_channel));
  if (!per_channel) return LowerGeneralScale(layer, context);
  int64_t channels = 0;
  MACE_RETURN_IF_ERROR(ExpectChannels(layer, context, &channels));
  Affine affine;
  MACE_RETURN_IF_ERROR(ScaleAffine(layer, channels, &affine));
  return EmitAffine(layer, affine, layer.Top(0), context);
}

MaceStatus LowerLRN(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(OneInOneOut(layer));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("lrn_param", &param));
  const std::string what = layer.What();
  int64_t size = 5;
  float alpha = 1, beta = 0.75f, k = 1;
  std::string region;
  MACE_RETURN_IF_ERROR(param->GetInt(what, "local_size", 5, &size));
  MACE_RETURN_IF_ERROR(param->GetFloat(what, "alpha", 1.0f, &alpha));
  MACE_RETURN_IF_ERROR(param->GetFloat(what, "beta", 0.75f, &beta));
  MACE_RETURN_IF_ERROR(param->GetFloat(what, "k", 1.0f, &k));
  MACE_RETURN_IF_ERROR(
      param->GetString(what, "norm_region", "ACROSS_CHANNELS", &region));
  if (region != "ACROSS_CHANNELS" && region != "0") {
    return layer.Unsupported("norm_region '", region,
                             "' (only ACROSS_CHANNELS)");
  }
  if (size < 1 || size % 2 == 0) {
    return layer.InvalidArgs("local_size ", size, " must be odd and >= 1");
  }
  if (context->RankOf(layer.Bottom(0)) != 4) {
    return layer.Unsupported("input of rank ", context->RankOf(layer.Bottom(0)),
                             " (only 4-D)");
  }
  // Caffe divides alpha by the window size; TF's form does not.
  return context->EmitChannelLast(
      layer.name(), "LocalResponseNorm", layer.Bottom(0), {},
      {OpArg::Int("depth_radius", (size - 1) / 2), OpArg::Float("bias", k),
       OpArg::Float("alpha", alpha / static_cast<float>(size)),
       OpArg::Float("beta", beta)},
      layer.Top(0));
}

MaceStatus LowerSoftmax(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(OneInOneOut(layer));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("softmax_param", &param));
  int64_t axis = 1;
  MACE_RETURN_IF_ERROR(param->GetInt(layer.What(), "axis", 1, &axis));
  const int rank = context->RankOf(layer.Bottom(0));
  if (axis < -rank || axis >= rank) {
    return layer.InvalidArgs("axis ", axis, " is out of range for rank ", rank);
  }
  return context->Emit("Softmax", layer.name(), {layer.Bottom(0)},
                       {layer.Top(0)}, {OpArg::Int("axis", axis)});
}

MaceStatus LowerEltwise(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(2, 1 << 20));
  MACE_RETURN_IF_ERROR(layer.ExpectTops(1, 1));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("eltwise_param", &param));
  std::string operation;
  MACE_RETURN_IF_ERROR(
      param->GetString(layer.What(), "operation", "SUM", &operation));
  std::vector<float> coeff;
  MACE_RETURN_IF_ERROR(param->GetFloats(layer.What(), "coeff", &coeff));
  EltwiseType type;
  if (operation == "SUM" || operation == "1") {
    type = kSum;
  } else if (operation == "PROD" || operation == "0") {
    type = kProd;
  } else if (operation == "MAX" || operation == "2") {
    type = kMax;
  } else {
    return layer.Unsupported("operation '", operation, "'");
  }
  const int n = layer.num_bottoms();
  if (!coeff.empty() && (type != kSum || static_cast<int>(coeff.size()) != n)) {
    return layer.InvalidArgs(
        "'coeff' needs operation SUM and one value per "
        "bottom (",
        n, "), got ", coeff.size());
  }
  const Shape &shape = context->ShapeOf(layer.Bottom(0));
  for (int i = 1; i < n; ++i) {
    if (context->ShapeOf(layer.Bottom(i)) != shape) {
      return layer.InvalidArgs("bottom ", i, " ",
                               ShapeToString(context->ShapeOf(layer.Bottom(i))),
                               " differs from bottom 0 ", ShapeToString(shape));
    }
  }
  // Folded left to right: acc = c0*x0 + c1*x1, then acc = 1*acc + ci*xi.
  std::string acc = layer.Bottom(0);
  for (int i = 1; i < n; ++i) {
    const std::string out =
        i == n - 1 ? layer.Top(0) : context->Temp(layer.Top(0) + "__acc");
    std::vector<OpArg> args{OpArg::Int("type", static_cast<int>(type))};
    if (!coeff.empty()) {
      args.push_back(
          OpArg::Floats("coeff", {i == 1 ? coeff[0] : 1.0f, coeff[i]}));
    }
    MACE_RETURN_IF_ERROR(context->Emit(
        "Eltwise", i == n - 1 ? layer.name() : context->Temp(layer.name()),
        {acc, layer.Bottom(i)}, {out}, args));
    acc = out;
  }
  return MaceStatus::MACE_SUCCESS;
}

// ---- Power, AbsVal, Bias, Normalize
// ------------------------------------------

// x op scalar, written to `output`.
MaceStatus EmitScalar(CaffeContext *context, const std::string &name,
                      const std::string &x, int type, float scalar,
                      const std::string &output) {
  return context->Emit(
      "Eltwise", name, {x}, {output},
      {OpArg::Int("type", type), OpArg::Float("scalar_input", scalar)});
}

// y = (shift + scale * x) ^ power, steps that are identities left out.
MaceStatus LowerPower(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(OneInOneOut(layer));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("power_param", &param));
  float power = 1, scale = 1, shift = 0;
  MACE_RETURN_IF_ERROR(param->GetFloat(layer.What(), "power", 1.0f, &power));
  MACE_RETURN_IF_ERROR(param->GetFloat(layer.What(), "scale", 1.0f, &scale));
  MACE_RETURN_IF_ERROR(param->GetFloat(layer.What(), "shift", 0.0f, &shift));
  struct Step {
    int type;
    float scalar;
  };
  std::vector<Step> steps;
  if (scale != 1) steps.push_back({kProd, scale});
  if (shift != 0) steps.push_back({kSum, shift});
  if (power != 1) steps.push_back({kPow, power});
  if (steps.empty()) {
    return context->Emit("Identity", layer.name(), {layer.Bottom(0)},
                         {layer.Top(0)});
  }
  std::string x = layer.Bottom(0);
  for (size_t i = 0; i < steps.size(); ++i) {
    const bool last = i + 1 == steps.size();
    const std::string y =
        last ? layer.Top(0) : context->Temp(layer.Top(0) + "__power");
    MACE_RETURN_IF_ERROR(
        EmitScalar(context, last ? layer.name() : context->Temp(layer.name()),
                   x, steps[i].type, steps[i].scalar, y));
    x = y;
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus LowerAbsVal(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(OneInOneOut(layer));
  return context->Emit("Eltwise", layer.name(), {layer.Bottom(0)},
                       {layer.Top(0)}, {OpArg::Int("type", kAbs)});
}

// Bias: x + b, b (a blob or a second bottom) covering the dims from `axis`
// and broadcast over the rest (Caffe's bias_layer.cpp).
MaceStatus LowerBias(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(1, 2));
  MACE_RETURN_IF_ERROR(layer.ExpectTops(1, 1));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("bias_param", &param));
  int64_t axis = 1, num_axes = 1;
  MACE_RETURN_IF_ERROR(param->GetInt(layer.What(), "axis", 1, &axis));
  MACE_RETURN_IF_ERROR(param->GetInt(layer.What(), "num_axes", 1, &num_axes));
  const Shape in = context->ShapeOf(layer.Bottom(0));
  const int rank = static_cast<int>(in.size());
  if (axis < 0) axis += rank;
  const int64_t bias_rank = layer.num_bottoms() == 2
                                ? context->RankOf(layer.Bottom(1))
                                : (num_axes < 0 ? rank - axis : num_axes);
  if (!AxesFit(axis, bias_rank, rank)) {
    return layer.InvalidArgs("axis ", axis, " and ", bias_rank,
                             " bias axes do not fit input ", ShapeToString(in));
  }
  const Shape covered(in.begin() + axis, in.begin() + axis + bias_rank);
  Shape broadcast = covered;
  broadcast.resize(rank - axis, 1);
  std::string bias;
  if (layer.num_bottoms() == 2) {
    if (context->ShapeOf(layer.Bottom(1)) != covered) {
      return layer.InvalidArgs("bias bottom ",
                               ShapeToString(context->ShapeOf(layer.Bottom(1))),
                               " does not match input dims ",
                               ShapeToString(covered), " at axis ", axis);
    }
    bias = context->Temp(layer.Bottom(1) + "__bcast");
    MACE_RETURN_IF_ERROR(context->Emit(
        "Reshape", context->Temp(layer.name() + "__bias_shape"),
        {layer.Bottom(1)}, {bias}, {OpArg::Ints("shape", broadcast)}));
  } else {
    MACE_RETURN_IF_ERROR(layer.ExpectBlobs(1, 1));
    int64_t count = 1;
    for (int64_t d : covered) count *= d;
    MACE_RETURN_IF_ERROR(layer.ExpectBlobCount(0, count, "bias"));
    bias = context->Constant(layer.name() + "__bias", broadcast,
                             layer.blob(0).values);
  }
  return context->Emit("Eltwise", layer.name(), {layer.Bottom(0), bias},
                       {layer.Top(0)}, {OpArg::Int("type", kSum)});
}

// SSD's Normalize: x / sqrt(sum(x^2) + eps) * scale, the sum over C, H, W
// (across_spatial) or over C per position; scale one value
// (channel_shared) or one per channel.
MaceStatus LowerNormalize(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(OneInOneOut(layer));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("norm_param", &param));
  bool across_spatial = true, channel_shared = true;
  float eps = 1e-10f;
  MACE_RETURN_IF_ERROR(
      param->GetBool(layer.What(), "across_spatial", true, &across_spatial));
  MACE_RETURN_IF_ERROR(
      param->GetBool(layer.What(), "channel_shared", true, &channel_shared));
  MACE_RETURN_IF_ERROR(param->GetFloat(layer.What(), "eps", 1e-10f, &eps));
  const Shape &in = context->ShapeOf(layer.Bottom(0));
  if (in.size() != 4) {
    return layer.Unsupported("input ", ShapeToString(in), " (only 4-D)");
  }
  const int64_t channels = in[1];
  MACE_RETURN_IF_ERROR(layer.ExpectBlobs(1, 1));
  MACE_RETURN_IF_ERROR(
      layer.ExpectBlobCount(0, channel_shared ? 1 : channels, "scale"));
  const std::string x = layer.Bottom(0), base = layer.Top(0);
  const std::string sq = context->Temp(base + "__sq");
  MACE_RETURN_IF_ERROR(context->Emit("Eltwise", context->Temp(layer.name()),
                                     {x, x}, {sq},
                                     {OpArg::Int("type", kProd)}));
  const std::string sum = context->Temp(base + "__sum");
  MACE_RETURN_IF_ERROR(context->Emit(
      "Reduce", context->Temp(layer.name()), {sq}, {sum},
      {OpArg::Int("reduce_type", 4),
       OpArg::Ints("axis", across_spatial ? std::vector<int64_t>{1, 2, 3}
                                          : std::vector<int64_t>{1}),
       OpArg::Int("keepdims", 1)}));
  const std::string with_eps = context->Temp(base + "__eps");
  MACE_RETURN_IF_ERROR(EmitScalar(context, context->Temp(layer.name()), sum,
                                  kSum, eps, with_eps));
  const std::string norm = context->Temp(base + "__norm");
  MACE_RETURN_IF_ERROR(context->Emit("Eltwise", context->Temp(layer.name()),
                                     {with_eps}, {norm},
                                     {OpArg::Int("type", kSqrt)}));
  const std::string unit = context->Temp(base + "__unit");
  MACE_RETURN_IF_ERROR(context->Emit("Eltwise", context->Temp(layer.name()),
                                     {x, norm}, {unit},
                                     {OpArg::Int("type", kDiv)}));
  const Shape scale_shape =
      channel_shared ? Shape{1} : Shape{1, channels, 1, 1};
  const std::string scale = context->Constant(
      layer.name() + "__scale", scale_shape, layer.blob(0).values);
  return context->Emit("Eltwise", layer.name(), {unit, scale}, {layer.Top(0)},
                       {OpArg::Int("type", kProd)});
}

}  // namespace

MaceStatus LowerCaffeBatchNormScale(const CaffeLayer &batch_norm,
                                    const CaffeLayer *scale,
                                    CaffeContext *context) {
  MACE_RETURN_IF_ERROR(OneInOneOut(batch_norm));
  int64_t channels = 0;
  MACE_RETURN_IF_ERROR(ExpectChannels(batch_norm, context, &channels));
  Affine affine;
  MACE_RETURN_IF_ERROR(BatchNormAffine(batch_norm, channels, &affine));
  bool per_channel = false;
  if (scale != nullptr) {
    // The Scale reads the BatchNorm's result, which has its input's rank.
    MACE_RETURN_IF_ERROR(IsPerChannelScale(
        *scale, context->RankOf(batch_norm.Bottom(0)), &per_channel));
  }
  if (scale != nullptr && per_channel) {
    Affine second;
    MACE_RETURN_IF_ERROR(ScaleAffine(*scale, channels, &second));
    for (int64_t c = 0; c < channels; ++c) {
      affine.offset[c] = affine.offset[c] * second.scale[c] + second.offset[c];
      affine.scale[c] *= second.scale[c];
    }
    return EmitAffine(batch_norm, affine, batch_norm.Top(0), context);
  }
  if (scale == nullptr) {
    return EmitAffine(batch_norm, affine, batch_norm.Top(0), context);
  }
  // The frontend pairs only per-channel Scales.
  return scale->Unsupported(
      "a Scale over other axes than the channel axis "
      "directly after BatchNorm");
}

void RegisterCaffeBasicLayers(CaffeLoweringTable *table) {
  (*table)["ReLU"] = LowerReLU;
  (*table)["ReLU6"] = LowerReLU6;
  (*table)["Clip"] = LowerClip;
  (*table)["Sigmoid"] = LowerSimpleActivation<kSigmoid>;
  (*table)["TanH"] = LowerSimpleActivation<kTanh>;
  (*table)["ELU"] = LowerELU;
  (*table)["PReLU"] = LowerPReLU;
  (*table)["Dropout"] = LowerDropout;
  (*table)["Scale"] = LowerScale;
  (*table)["LRN"] = LowerLRN;
  (*table)["Softmax"] = LowerSoftmax;
  (*table)["Eltwise"] = LowerEltwise;
  (*table)["Power"] = LowerPower;
  (*table)["AbsVal"] = LowerAbsVal;
  (*table)["Bias"] = LowerBias;
  (*table)["Normalize"] = LowerNormalize;
}

}  // namespace converter
}  // namespace mace
