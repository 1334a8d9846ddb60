// Conv and friends: lowered to MACE's NHWC kernels between transposes.

#include <algorithm>

#include "mace/converter/onnx/onnx_lowering.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

struct ConvAttrs {
  std::vector<int64_t> strides, dilations, pads;  // pads: t, l, b, r
  int64_t group = 1;
  std::string auto_pad;
};

MaceStatus ReadConvAttrs(const OnnxNode &node, ConvAttrs *attrs) {
  MACE_RETURN_IF_ERROR(node.Ints("strides", {1, 1}, &attrs->strides));
  MACE_RETURN_IF_ERROR(node.Ints("dilations", {1, 1}, &attrs->dilations));
  MACE_RETURN_IF_ERROR(node.Ints("pads", {0, 0, 0, 0}, &attrs->pads));
  MACE_RETURN_IF_ERROR(node.Int("group", 1, &attrs->group));
  MACE_RETURN_IF_ERROR(node.String("auto_pad", "NOTSET", &attrs->auto_pad));
  if (attrs->strides.size() != 2 || attrs->dilations.size() != 2 ||
      attrs->pads.size() != 4) {
    return node.Unsupported("only 2-D windows are supported (strides ",
                            attrs->strides.size(), ", dilations ",
                            attrs->dilations.size(), ", pads ",
                            attrs->pads.size(), " values)");
  }
  return MaceStatus::MACE_SUCCESS;
}

// MACE window arguments equivalent to the ONNX padding attributes for an
// input of in_h x in_w and a (dilated) kernel of extent_h x extent_w.
MaceStatus WindowArgs(const OnnxNode &node, const ConvAttrs &attrs,
                      int64_t in_h, int64_t in_w, int64_t extent_h,
                      int64_t extent_w, std::vector<OpArg> *args) {
  args->push_back(OpArg::Ints("strides", attrs.strides));
  args->push_back(OpArg::Ints("dilations", attrs.dilations));
  if (attrs.auto_pad == "NOTSET") {
    const std::vector<int64_t> &p = attrs.pads;  // x1b, x2b, x1e, x2e
    args->push_back(OpArg::Ints("padding_values", {p[0], p[1], p[2], p[3]}));
  } else if (attrs.auto_pad == "VALID") {
    args->push_back(OpArg::Int("padding", 0));
  } else if (attrs.auto_pad == "SAME_UPPER" ||
             attrs.auto_pad == "SAME_LOWER") {
    const bool lower = attrs.auto_pad == "SAME_LOWER";
    auto split = [lower](int64_t in, int64_t extent, int64_t stride,
                         int64_t *begin, int64_t *end) {
      const int64_t out = (in + stride - 1) / stride;
      const int64_t total =
          std::max<int64_t>((out - 1) * stride + extent - in, 0);
      *begin = lower ? total - total / 2 : total / 2;
      *end = total - *begin;
    };
    int64_t t, b, l, r;
    split(in_h, extent_h, attrs.strides[0], &t, &b);
    split(in_w, extent_w, attrs.strides[1], &l, &r);
    args->push_back(OpArg::Ints("padding_values", {t, l, b, r}));
  } else {
    return node.Unsupported("auto_pad '", attrs.auto_pad, "'");
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus LowerConv(const OnnxNode &node, OnnxContext *context) {
  ConvAttrs attrs;
  MACE_RETURN_IF_ERROR(ReadConvAttrs(node, &attrs));
  const std::string x = node.Input(0), w = node.Input(1);
  if (context->RankOf(x) != 4) {
    return node.Unsupported("input rank ", context->RankOf(x),
                            " (only 2-D convolution on 4-D input)");
  }
  if (!context->graph()->IsConstant(w)) {
    return node.Unsupported("weights '", w, "' must be constant");
  }
  const Shape &in = context->ShapeOf(x);
  const Shape &ws = context->ShapeOf(w);  // [M, C/group, kh, kw]
  if (ws.size() != 4 || attrs.group < 1 || in[1] % attrs.group != 0 ||
      ws[1] * attrs.group != in[1]) {
    return node.InvalidArgs("weights ", ShapeToString(ws),
                            " do not match input ", ShapeToString(in),
                            " with group ", attrs.group);
  }
  std::vector<OpArg> args;
  MACE_RETURN_IF_ERROR(WindowArgs(
      node, attrs, in[2], in[3], (ws[2] - 1) * attrs.dilations[0] + 1,
      (ws[3] - 1) * attrs.dilations[1] + 1, &args));
  const bool depthwise = attrs.group == in[1] && ws[1] == 1 && attrs.group > 1;
  std::string filter;
  std::string type;
  if (depthwise) {
    // [C*m, 1, kh, kw] → [C, m, kh, kw] → [kh, kw, C, m].
    const std::string grouped = context->Temp(w + "__grouped");
    MACE_RETURN_IF_ERROR(context->Emit(
        "Reshape", grouped, {w}, {grouped},
        {OpArg::Ints("shape", {in[1], ws[0] / in[1], ws[2], ws[3]})}));
    MACE_RETURN_IF_ERROR(
        context->Transpose(node.name(), grouped, {2, 3, 0, 1}, &filter));
    type = "DepthwiseConv2d";
  } else {
    MACE_RETURN_IF_ERROR(
        context->Transpose(node.name(), w, {0, 2, 3, 1}, &filter));
    type = "Conv2D";
    args.push_back(OpArg::Int("group", attrs.group));
  }
  std::vector<std::string> inputs;
  std::string x_nhwc;
  MACE_RETURN_IF_ERROR(context->ToChannelLast(node.name(), x, &x_nhwc));
  inputs = {x_nhwc, filter};
  if (node.HasInput(2)) inputs.push_back(node.Input(2));
  const std::string y_nhwc = context->Temp(node.Output(0) + "__nhwc");
  MACE_RETURN_IF_ERROR(
      context->Emit(type, node.name(), inputs, {y_nhwc}, args));
  return context->FromChannelLast(node.name(), y_nhwc, node.Output(0));
}

}  // namespace

void RegisterOnnxConvOps(OnnxLoweringTable *table) {
  (*table)["Conv"] = LowerConv;
}

}  // namespace converter
}  // namespace mace
