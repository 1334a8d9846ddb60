// Convolution, Deconvolution, Pooling and InnerProduct: lowered to MACE's
// NHWC window kernels between transposes, and to FullyConnected.

#include <cmath>

#include "mace/converter/caffe/caffe_lowering.h"

namespace mace {
namespace converter {
namespace {

enum PoolingType : int { kAvgPool = 1, kMaxPool = 2 };

// A 2-D size given as `<name>` (repeated: 1 value for both axes or 2 for
// h, w) or as `<name>_h` + `<name>_w` (which win, as in Caffe).
MaceStatus ReadHW(const CaffeLayer &layer, const TextMessage &param,
                  const std::string &name, const std::string &name_h,
                  const std::string &name_w, int64_t fallback, int64_t *h,
                  int64_t *w) {
  const std::string what = layer.What();
  if (param.Has(name_h) || param.Has(name_w)) {
    if (!param.Has(name_h) || !param.Has(name_w)) {
      return layer.InvalidArgs("'", name_h, "' and '", name_w,
                               "' must be given together");
    }
    MACE_RETURN_IF_ERROR(param.GetInt(what, name_h, fallback, h));
    return param.GetInt(what, name_w, fallback, w);
  }
  std::vector<int64_t> values;
  MACE_RETURN_IF_ERROR(param.GetInts(what, name, &values));
  if (values.empty()) {
    *h = *w = fallback;
  } else if (values.size() == 1) {
    *h = *w = values[0];
  } else if (values.size() == 2) {
    *h = values[0];
    *w = values[1];
  } else {
    return layer.Unsupported("'", name, "' has ", values.size(),
                             " values (only 2-D windows are supported)");
  }
  return MaceStatus::MACE_SUCCESS;
}

struct ConvWindow {
  int64_t kernel_h = 0, kernel_w = 0;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;
};

MaceStatus ReadConvWindow(const CaffeLayer &layer, const TextMessage &param,
                          ConvWindow *w) {
  MACE_RETURN_IF_ERROR(ReadHW(layer, param, "kernel_size", "kernel_h",
                              "kernel_w", 0, &w->kernel_h, &w->kernel_w));
  MACE_RETURN_IF_ERROR(ReadHW(layer, param, "stride", "stride_h", "stride_w", 1,
                              &w->stride_h, &w->stride_w));
  MACE_RETURN_IF_ERROR(
      ReadHW(layer, param, "pad", "pad_h", "pad_w", 0, &w->pad_h, &w->pad_w));
  MACE_RETURN_IF_ERROR(ReadHW(layer, param, "dilation", "dilation_h",
                              "dilation_w", 1, &w->dilation_h, &w->dilation_w));
  if (w->kernel_h < 1 || w->kernel_w < 1) {
    return layer.InvalidArgs("kernel size ", w->kernel_h, "x", w->kernel_w,
                             " must be >= 1 (kernel_size or kernel_h/_w)");
  }
  if (w->stride_h < 1 || w->stride_w < 1 || w->dilation_h < 1 ||
      w->dilation_w < 1 || w->pad_h < 0 || w->pad_w < 0) {
    return layer.InvalidArgs("stride and dilation must be >= 1, pad >= 0");
  }
  int64_t axis = 1;
  MACE_RETURN_IF_ERROR(param.GetInt(layer.What(), "axis", 1, &axis));
  if (axis != 1) return layer.Unsupported("'axis' = ", axis, " (only 1)");
  return MaceStatus::MACE_SUCCESS;
}

std::vector<OpArg> WindowArgs(const ConvWindow &w) {
  return {OpArg::Ints("strides", {w.stride_h, w.stride_w}),
          OpArg::Ints("dilations", {w.dilation_h, w.dilation_w}),
          OpArg::Ints("padding_values", {w.pad_h, w.pad_w, w.pad_h, w.pad_w})};
}

MaceStatus Expect4D(const CaffeLayer &layer, CaffeContext *context) {
  if (context->RankOf(layer.Bottom(0)) != 4) {
    return layer.Unsupported("input '", layer.Bottom(0), "' has shape ",
                             ShapeToString(context->ShapeOf(layer.Bottom(0))),
                             " (only 4-D N,C,H,W)");
  }
  return MaceStatus::MACE_SUCCESS;
}

// The convolution family's common reading: window, num_output, group, the
// weight blob (checked against `weight_shape`) and the optional bias.
struct ConvSetup {
  ConvWindow window;
  int64_t num_output = 0, group = 1;
  bool bias_term = true;
  std::string weights;  // constant, Caffe layout
  std::string bias;     // constant [num_output] or empty
};

MaceStatus ReadConvSetup(const CaffeLayer &layer, CaffeContext *context,
                         bool transposed, ConvSetup *setup) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(1, 1));
  MACE_RETURN_IF_ERROR(layer.ExpectTops(1, 1));
  MACE_RETURN_IF_ERROR(Expect4D(layer, context));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("convolution_param", &param));
  MACE_RETURN_IF_ERROR(ReadConvWindow(layer, *param, &setup->window));
  const std::string what = layer.What();
  MACE_RETURN_IF_ERROR(
      param->GetInt(what, "num_output", 0, &setup->num_output));
  MACE_RETURN_IF_ERROR(param->GetInt(what, "group", 1, &setup->group));
  MACE_RETURN_IF_ERROR(
      param->GetBool(what, "bias_term", true, &setup->bias_term));
  const int64_t cin = context->ShapeOf(layer.Bottom(0))[1];
  const int64_t cout = setup->num_output, group = setup->group;
  if (cout < 1 || group < 1 || cin % group != 0 || cout % group != 0) {
    return layer.InvalidArgs("num_output ", cout, " and group ", group,
                             " must be >= 1 and divide the channels (input "
                             "has ",
                             cin, ", output ", cout, ")");
  }
  MACE_RETURN_IF_ERROR(
      layer.ExpectBlobs(setup->bias_term ? 2 : 1, setup->bias_term ? 2 : 1));
  const Shape shape = transposed
                          ? Shape{cin, cout / group, setup->window.kernel_h,
                                  setup->window.kernel_w}
                          : Shape{cout, cin / group, setup->window.kernel_h,
                                  setup->window.kernel_w};
  MACE_RETURN_IF_ERROR(
      layer.ExpectBlobCount(0, shape[0] * shape[1] * shape[2] * shape[3],
                            "weights " + ShapeToString(shape)));
  setup->weights = context->Constant(layer.name() + "__weights", shape,
                                     layer.blob(0).values);
  if (setup->bias_term) {
    MACE_RETURN_IF_ERROR(layer.ExpectBlobCount(1, cout, "bias"));
    setup->bias = context->Constant(layer.name() + "__bias", {cout},
                                    layer.blob(1).values);
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus LowerConvolution(const CaffeLayer &layer, CaffeContext *context) {
  ConvSetup setup;
  MACE_RETURN_IF_ERROR(ReadConvSetup(layer, context, false, &setup));
  const int64_t cin = context->ShapeOf(layer.Bottom(0))[1];
  const int64_t cout = setup.num_output, group = setup.group;
  const ConvWindow &w = setup.window;
  std::vector<OpArg> args = WindowArgs(w);
  std::string filter, type;
  if (group == cin && group > 1) {
    // [C*m, 1, kh, kw] → [C, m, kh, kw] → [kh, kw, C, m].
    const std::string grouped = context->Temp(setup.weights + "__grouped");
    MACE_RETURN_IF_ERROR(context->Emit(
        "Reshape", context->Temp(layer.name() + "__group_filter"),
        {setup.weights}, {grouped},
        {OpArg::Ints("shape", {cin, cout / cin, w.kernel_h, w.kernel_w})}));
    MACE_RETURN_IF_ERROR(
        context->Transpose(layer.name(), grouped, {2, 3, 0, 1}, &filter));
    type = "DepthwiseConv2d";
  } else {
    MACE_RETURN_IF_ERROR(
        context->Transpose(layer.name(), setup.weights, {0, 2, 3, 1}, &filter));
    type = "Conv2D";
    args.push_back(OpArg::Int("group", group));
  }
  std::vector<std::string> weights{filter};
  if (!setup.bias.empty()) weights.push_back(setup.bias);
  return context->EmitChannelLast(layer.name(), type, layer.Bottom(0), weights,
                                  args, layer.Top(0));
}

MaceStatus LowerDeconvolution(const CaffeLayer &layer, CaffeContext *context) {
  ConvSetup setup;
  MACE_RETURN_IF_ERROR(ReadConvSetup(layer, context, true, &setup));
  const int64_t cin = context->ShapeOf(layer.Bottom(0))[1];
  const int64_t cout_g = setup.num_output / setup.group, group = setup.group;
  const ConvWindow &w = setup.window;
  const int64_t kh = w.kernel_h, kw = w.kernel_w;
  std::vector<OpArg> args = WindowArgs(w);
  args.push_back(OpArg::Ints("output_padding", {0, 0}));
  std::string filter, type;
  if (group == cin && group > 1) {
    // [C, m, kh, kw] → [kh, kw, C, m].
    MACE_RETURN_IF_ERROR(
        context->Transpose(layer.name(), setup.weights, {2, 3, 0, 1}, &filter));
    type = "DepthwiseDeconv2d";
  } else {
    // [g * Cin/g, Cout/g, kh, kw] → [g, Cout/g, kh, kw, Cin/g]
    // → [Cout, kh, kw, Cin/g].
    const std::string split = context->Temp(setup.weights + "__groups");
    MACE_RETURN_IF_ERROR(context->Emit(
        "Reshape", context->Temp(layer.name() + "__split_groups"),
        {setup.weights}, {split},
        {OpArg::Ints("shape", {group, cin / group, cout_g, kh, kw})}));
    std::string moved;
    MACE_RETURN_IF_ERROR(
        context->Transpose(layer.name(), split, {0, 2, 3, 4, 1}, &moved));
    filter = context->Temp(setup.weights + "__ohwi");
    MACE_RETURN_IF_ERROR(context->Emit(
        "Reshape", context->Temp(layer.name() + "__merge_groups"), {moved},
        {filter},
        {OpArg::Ints("shape", {group * cout_g, kh, kw, cin / group})}));
    type = "Deconv2D";
    args.push_back(OpArg::Int("group", group));
  }
  std::vector<std::string> weights{filter};
  if (!setup.bias.empty()) weights.push_back(setup.bias);
  return context->EmitChannelLast(layer.name(), type, layer.Bottom(0), weights,
                                  args, layer.Top(0));
}

MaceStatus LowerPooling(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(1, 1));
  MACE_RETURN_IF_ERROR(layer.ExpectTops(1, 1));
  MACE_RETURN_IF_ERROR(Expect4D(layer, context));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("pooling_param", &param));
  const std::string what = layer.What();
  std::string method;
  MACE_RETURN_IF_ERROR(param->GetString(what, "pool", "MAX", &method));
  int pooling_type = 0;
  if (method == "MAX" || method == "0") {
    pooling_type = kMaxPool;
  } else if (method == "AVE" || method == "1") {
    pooling_type = kAvgPool;
  } else {
    return layer.Unsupported("pool method '", method,
                             "' (only MAX and AVE; STOCHASTIC is a training "
                             "method)");
  }
  bool global = false;
  MACE_RETURN_IF_ERROR(param->GetBool(what, "global_pooling", false, &global));
  std::vector<OpArg> args{OpArg::Int("pooling_type", pooling_type)};
  if (global) {
    args.push_back(OpArg::Int("global_pooling", 1));
    const Shape &in = context->ShapeOf(layer.Bottom(0));
    args.push_back(OpArg::Ints("kernels", {in[2], in[3]}));
  } else {
    ConvWindow w;
    MACE_RETURN_IF_ERROR(ReadHW(layer, *param, "kernel_size", "kernel_h",
                                "kernel_w", 0, &w.kernel_h, &w.kernel_w));
    MACE_RETURN_IF_ERROR(ReadHW(layer, *param, "stride", "stride_h", "stride_w",
                                1, &w.stride_h, &w.stride_w));
    MACE_RETURN_IF_ERROR(
        ReadHW(layer, *param, "pad", "pad_h", "pad_w", 0, &w.pad_h, &w.pad_w));
    if (w.kernel_h < 1 || w.kernel_w < 1 || w.stride_h < 1 || w.stride_w < 1 ||
        w.pad_h < 0 || w.pad_w < 0) {
      return layer.InvalidArgs("kernel ", w.kernel_h, "x", w.kernel_w,
                               ", stride ", w.stride_h, "x", w.stride_w,
                               ", pad ", w.pad_h, "x", w.pad_w,
                               ": kernel and stride must be >= 1");
    }
    if (w.pad_h >= w.kernel_h || w.pad_w >= w.kernel_w) {
      return layer.InvalidArgs("pad must be smaller than the kernel");
    }
    args.push_back(OpArg::Ints("kernels", {w.kernel_h, w.kernel_w}));
    const std::vector<OpArg> window = WindowArgs(w);
    args.insert(args.end(), window.begin(), window.end());
    // Caffe's output size rounds up (and drops a last window that would
    // start in the padding); its averages divide by the window clipped to
    // the padded input.
    args.push_back(OpArg::Int("round_mode", 1));
    args.push_back(OpArg::Int("count_include_pad", 1));
  }
  return context->EmitChannelLast(layer.name(), "Pooling", layer.Bottom(0), {},
                                  args, layer.Top(0));
}

MaceStatus LowerInnerProduct(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(1, 1));
  MACE_RETURN_IF_ERROR(layer.ExpectTops(1, 1));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("inner_product_param", &param));
  const std::string what = layer.What();
  int64_t num_output = 0, axis = 1;
  bool bias_term = true, transpose = false;
  MACE_RETURN_IF_ERROR(param->GetInt(what, "num_output", 0, &num_output));
  MACE_RETURN_IF_ERROR(param->GetInt(what, "axis", 1, &axis));
  MACE_RETURN_IF_ERROR(param->GetBool(what, "bias_term", true, &bias_term));
  MACE_RETURN_IF_ERROR(param->GetBool(what, "transpose", false, &transpose));
  const Shape in = context->ShapeOf(layer.Bottom(0));
  const int rank = static_cast<int>(in.size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank || num_output < 1) {
    return layer.InvalidArgs("axis ", axis, " for input ", ShapeToString(in),
                             " or num_output ", num_output, " is invalid");
  }
  int64_t outer = 1, k = 1;
  for (int i = 0; i < rank; ++i) (i < axis ? outer : k) *= in[i];
  MACE_RETURN_IF_ERROR(layer.ExpectBlobs(bias_term ? 2 : 1, bias_term ? 2 : 1));
  MACE_RETURN_IF_ERROR(layer.ExpectBlobCount(
      0, num_output * k, StrCat("weights [", num_output, ", ", k, "]")));
  std::vector<float> weights = layer.blob(0).values;
  if (transpose) {  // stored [K, N]
    std::vector<float> nk(weights.size());
    for (int64_t r = 0; r < k; ++r) {
      for (int64_t c = 0; c < num_output; ++c) {
        nk[c * k + r] = weights[r * num_output + c];
      }
    }
    weights.swap(nk);
  }
  std::vector<std::string> inputs;
  const std::string flat = context->Temp(layer.Bottom(0) + "__flat");
  MACE_RETURN_IF_ERROR(context->Emit(
      "Reshape", context->Temp(layer.name() + "__flatten"), {layer.Bottom(0)},
      {flat}, {OpArg::Ints("shape", {outer, k})}));
  inputs.push_back(flat);
  inputs.push_back(
      context->Constant(layer.name() + "__weights", {num_output, k}, weights));
  if (bias_term) {
    MACE_RETURN_IF_ERROR(layer.ExpectBlobCount(1, num_output, "bias"));
    inputs.push_back(context->Constant(layer.name() + "__bias", {num_output},
                                       layer.blob(1).values));
  }
  if (axis == 1) {
    return context->Emit("FullyConnected", layer.name(), inputs,
                         {layer.Top(0)});
  }
  const std::string y = context->Temp(layer.Top(0) + "__2d");
  MACE_RETURN_IF_ERROR(
      context->Emit("FullyConnected", layer.name(), inputs, {y}));
  std::vector<int64_t> shape(in.begin(), in.begin() + axis);
  shape.push_back(num_output);
  return context->Emit("Reshape", context->Temp(layer.name() + "__unflatten"),
                       {y}, {layer.Top(0)}, {OpArg::Ints("shape", shape)});
}

}  // namespace

void RegisterCaffeConvLayers(CaffeLoweringTable *table) {
  (*table)["Convolution"] = LowerConvolution;
  (*table)["Deconvolution"] = LowerDeconvolution;
  (*table)["Pooling"] = LowerPooling;
  (*table)["InnerProduct"] = LowerInnerProduct;
}

}  // namespace converter
}  // namespace mace
