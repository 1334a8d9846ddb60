// Conv, ConvTranspose and the pools, lowered to MACE's NHWC kernels between
// transposes; and Gemm / MatMul, lowered to FullyConnected when the weight
// is a constant matrix and to MatMul (+ Eltwise) otherwise.
//
// MACE's window ops are 2-D. A 1-D op on [N, C, L] runs as a 2-D op on the
// view [N, C, 1, L] (a leading window axis of size 1), and its output is
// reshaped back; 3-D windows are not supported.

#include <algorithm>
#include <cmath>

#include "mace/ops/eltwise_type.h"
#include "mace/converter/onnx/onnx_lowering.h"
#include "mace/core/int_math.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

// MACE Pooling and Eltwise codes.
enum PoolingType : int { kAvgPool = 1, kMaxPool = 2 };

// The spatial rank (input rank - 2) of a window op; 1 and 2 are supported.
MaceStatus SpatialRank(const OnnxNode &node, OnnxContext *context,
                       const std::string &x, int *spatial) {
  const int rank = context->RankOf(x);
  *spatial = rank - 2;
  if (*spatial == 1 || *spatial == 2) return MaceStatus::MACE_SUCCESS;
  if (*spatial == 3) {
    return node.Unsupported(
        "3-D windows (input rank 5) are not supported; "
        "only 1-D and 2-D");
  }
  return node.Unsupported("input rank ", rank,
                          " (only 1-D and 2-D windows: rank 3 or 4)");
}

// Window attributes, always as 2-D: a 1-D op gets the identity window on a
// leading axis of size 1.
struct Window {
  std::vector<int64_t> kernel;  // [kh, kw]; empty when not given
  std::vector<int64_t> strides, dilations;
  std::vector<int64_t> pads;  // [top, left, bottom, right]
  std::string auto_pad;
};

// Reads an int-list attribute of `count` values (default `fill` each).
MaceStatus SpatialInts(const OnnxNode &node, const std::string &name,
                       size_t count, int64_t fill, bool optional,
                       std::vector<int64_t> *values) {
  MACE_RETURN_IF_ERROR(node.Ints(
      name,
      optional ? std::vector<int64_t>{} : std::vector<int64_t>(count, fill),
      values));
  if (optional && values->empty()) return MaceStatus::MACE_SUCCESS;
  if (values->size() != count) {
    return node.InvalidArgs("attribute '", name, "' has ", values->size(),
                            " values, expected ", count);
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ReadWindow(const OnnxNode &node, int spatial, Window *w) {
  MACE_RETURN_IF_ERROR(
      SpatialInts(node, "kernel_shape", spatial, 1, true, &w->kernel));
  MACE_RETURN_IF_ERROR(
      SpatialInts(node, "strides", spatial, 1, false, &w->strides));
  MACE_RETURN_IF_ERROR(
      SpatialInts(node, "dilations", spatial, 1, false, &w->dilations));
  MACE_RETURN_IF_ERROR(
      SpatialInts(node, "pads", 2 * spatial, 0, false, &w->pads));
  MACE_RETURN_IF_ERROR(node.String("auto_pad", "NOTSET", &w->auto_pad));
  if (w->auto_pad != "NOTSET" && w->auto_pad != "VALID" &&
      w->auto_pad != "SAME_UPPER" && w->auto_pad != "SAME_LOWER") {
    return node.Unsupported("attribute 'auto_pad' = '", w->auto_pad, "'");
  }
  for (size_t i = 0; i < w->strides.size(); ++i) {
    if (w->strides[i] < 1 || w->dilations[i] < 1) {
      return node.InvalidArgs("strides and dilations must be >= 1");
    }
  }
  if (spatial == 1) {
    if (!w->kernel.empty()) w->kernel.insert(w->kernel.begin(), 1);
    w->strides.insert(w->strides.begin(), 1);
    w->dilations.insert(w->dilations.begin(), 1);
    w->pads = {0, w->pads[0], 0, w->pads[1]};
  }
  return MaceStatus::MACE_SUCCESS;
}

// A 1-D op's [N, C, L] tensor as [N, C, 1, L]; 4-D tensors unchanged.
MaceStatus As4D(OnnxContext *context, const std::string &name,
                const std::string &x, std::string *x4) {
  const Shape &s = context->ShapeOf(x);
  if (s.size() == 4) {
    *x4 = x;
    return MaceStatus::MACE_SUCCESS;
  }
  *x4 = context->Temp(x + "__4d");
  return context->Emit("Reshape", context->Temp(name + "__to_4d"), {x}, {*x4},
                       {OpArg::Ints("shape", {s[0], s[1], 1, s[2]})});
}

// Runs NHWC op `type` on the 4-D ONNX-layout tensor x4 (plus `weights`) and
// writes `output` in ONNX layout with rank `out_rank`: a 4-D result
// [N, C, a, b] is reshaped to [N, C, a * b, 1, ...] for other ranks (a 1-D
// op has a = 1; a global pool has a = b = 1).
MaceStatus EmitChannelLast(const OnnxNode &node, OnnxContext *context,
                           const std::string &type, const std::string &x4,
                           const std::vector<std::string> &weights,
                           const std::vector<OpArg> &args, int out_rank,
                           const std::string &output) {
  std::string x_nhwc;
  MACE_RETURN_IF_ERROR(context->ToChannelLast(node.name(), x4, &x_nhwc));
  std::vector<std::string> inputs{x_nhwc};
  inputs.insert(inputs.end(), weights.begin(), weights.end());
  const std::string y_nhwc = context->Temp(output + "__nhwc");
  MACE_RETURN_IF_ERROR(
      context->Emit(type, node.name(), inputs, {y_nhwc}, args));
  if (out_rank == 4) {
    return context->FromChannelLast(node.name(), y_nhwc, output);
  }
  const std::string y4 = context->Temp(output + "__4d");
  MACE_RETURN_IF_ERROR(context->FromChannelLast(node.name(), y_nhwc, y4));
  const Shape &s = context->ShapeOf(y4);
  std::vector<int64_t> shape{s[0], s[1], s[2] * s[3]};
  shape.resize(out_rank, 1);
  return context->Emit("Reshape", context->Temp(node.name() + "__from_4d"),
                       {y4}, {output}, {OpArg::Ints("shape", shape)});
}

// MACE window arguments equivalent to the ONNX padding attributes of a
// forward window (conv or pool) over an input of in_h x in_w.
MaceStatus WindowArgs(const Window &w, int64_t in_h, int64_t in_w,
                      int64_t kernel_h, int64_t kernel_w,
                      std::vector<OpArg> *args) {
  args->push_back(OpArg::Ints("strides", w.strides));
  args->push_back(OpArg::Ints("dilations", w.dilations));
  if (w.auto_pad == "NOTSET") {
    args->push_back(OpArg::Ints("padding_values", w.pads));
  } else if (w.auto_pad == "VALID") {
    args->push_back(OpArg::Int("padding", 0));
  } else {  // SAME_UPPER / SAME_LOWER: output ceil(in / stride)
    const bool lower = w.auto_pad == "SAME_LOWER";
    auto split = [lower](int64_t in, int64_t extent, int64_t stride,
                         int64_t *begin, int64_t *end) {
      const int64_t out = (in + stride - 1) / stride;
      const int64_t total =
          std::max<int64_t>((out - 1) * stride + extent - in, 0);
      *begin = lower ? total - total / 2 : total / 2;
      *end = total - *begin;
    };
    int64_t t, b, l, r;
    split(in_h, (kernel_h - 1) * w.dilations[0] + 1, w.strides[0], &t, &b);
    split(in_w, (kernel_w - 1) * w.dilations[1] + 1, w.strides[1], &l, &r);
    args->push_back(OpArg::Ints("padding_values", {t, l, b, r}));
  }
  return MaceStatus::MACE_SUCCESS;
}

// kernel_shape, when given, must agree with the weights.
MaceStatus CheckKernel(const OnnxNode &node, const Window &w, const Shape &ws) {
  if (!w.kernel.empty() && (w.kernel[0] != ws[2] || w.kernel[1] != ws[3])) {
    return node.InvalidArgs("attribute 'kernel_shape' ",
                            ShapeToString(w.kernel),
                            " does not match the weights ", ShapeToString(ws));
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ExpectFloat(const OnnxNode &node, OnnxContext *context, int input) {
  if (context->Find(node.Input(input))->dtype() != DT_FLOAT) {
    return node.Unsupported("integer input ", input, " '", node.Input(input),
                            "' (only float types)");
  }
  return MaceStatus::MACE_SUCCESS;
}

// ---- Conv -----------------------------------------------------------------

// What Conv and ConvTranspose read alike: the window, the group, and the
// input and weights viewed as 4-D (1-D convolutions get a height of 1).
struct ConvOperands {
  std::string x;  // the ONNX input
  int spatial = 0;
  Window w;
  int64_t group = 1;
  std::string x4, w4;
};

MaceStatus ReadConvOperands(const OnnxNode &node, OnnxContext *context,
                            ConvOperands *ops) {
  ops->x = node.Input(0);
  MACE_RETURN_IF_ERROR(SpatialRank(node, context, ops->x, &ops->spatial));
  MACE_RETURN_IF_ERROR(ExpectFloat(node, context, 0));
  MACE_RETURN_IF_ERROR(ReadWindow(node, ops->spatial, &ops->w));
  MACE_RETURN_IF_ERROR(node.Int("group", 1, &ops->group));
  if (context->RankOf(node.Input(1)) != ops->spatial + 2) {
    return node.InvalidArgs("weights ",
                            ShapeToString(context->ShapeOf(node.Input(1))),
                            " do not have the input's rank");
  }
  MACE_RETURN_IF_ERROR(As4D(context, node.name(), ops->x, &ops->x4));
  return As4D(context, node.name(), node.Input(1), &ops->w4);
}


MaceStatus LowerConv(const OnnxNode &node, OnnxContext *context) {
  ConvOperands operands;
  MACE_RETURN_IF_ERROR(ReadConvOperands(node, context, &operands));
  const int spatial = operands.spatial;
  const Window &w = operands.w;
  const int64_t group = operands.group;
  const std::string &x4 = operands.x4, &w4 = operands.w4;
  const Shape &in = context->ShapeOf(x4);
  const Shape &ws = context->ShapeOf(w4);  // [M, C/group, kh, kw]
  if (group < 1 || in[1] % group != 0 || ws[1] * group != in[1] ||
      ws[0] % group != 0) {
    return node.InvalidArgs("weights ", ShapeToString(ws),
                            " do not match input ", ShapeToString(in),
                            " with group ", group);
  }
  MACE_RETURN_IF_ERROR(CheckKernel(node, w, ws));
  std::vector<OpArg> args;
  MACE_RETURN_IF_ERROR(WindowArgs(w, in[2], in[3], ws[2], ws[3], &args));
  // Weights fed at run time become Reshape / Transpose ops in the graph;
  // constant ones fold now.
  const bool depthwise = group == in[1] && ws[1] == 1 && group > 1;
  std::string filter, type;
  if (depthwise) {
    // [C*m, 1, kh, kw] → [C, m, kh, kw] → [kh, kw, C, m].
    const std::string grouped = context->Temp(w4 + "__grouped");
    MACE_RETURN_IF_ERROR(context->Emit(
        "Reshape", context->Temp(node.name() + "__group_filter"), {w4},
        {grouped},
        {OpArg::Ints("shape", {in[1], ws[0] / in[1], ws[2], ws[3]})}));
    MACE_RETURN_IF_ERROR(
        context->Transpose(node.name(), grouped, {2, 3, 0, 1}, &filter));
    type = "DepthwiseConv2d";
  } else {
    MACE_RETURN_IF_ERROR(
        context->Transpose(node.name(), w4, {0, 2, 3, 1}, &filter));
    type = "Conv2D";
    args.push_back(OpArg::Int("group", group));
  }
  std::vector<std::string> weights{filter};
  if (node.HasInput(2)) weights.push_back(node.Input(2));
  return EmitChannelLast(node, context, type, x4, weights, args, spatial + 2,
                         node.Output(0));
}

// ---- ConvTranspose ----------------------------------------------------------

// Pads of one axis of a transposed conv whose output size is given
// (output_shape, or in * stride for SAME), as the ONNX spec computes them.
void TransposedPads(int64_t in, int64_t stride, int64_t extent,
                    int64_t output_padding, int64_t out, bool same_upper,
                    int64_t *begin, int64_t *end) {
  const int64_t total = stride * (in - 1) + output_padding + extent - out;
  if (same_upper) {
    *begin = FloorDiv(total, 2);
    *end = total - *begin;
  } else {
    *end = FloorDiv(total, 2);
    *begin = total - *end;
  }
}

MaceStatus ConvTransposeArgs(const OnnxNode &node, const Window &w, int spatial,
                             const Shape &in, const Shape &ws,
                             std::vector<OpArg> *args) {
  std::vector<int64_t> output_padding, output_shape;
  MACE_RETURN_IF_ERROR(
      SpatialInts(node, "output_padding", spatial, 0, false, &output_padding));
  MACE_RETURN_IF_ERROR(node.Ints("output_shape", {}, &output_shape));
  if (output_shape.size() == static_cast<size_t>(spatial + 2)) {
    output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  }
  if (!output_shape.empty() &&
      output_shape.size() != static_cast<size_t>(spatial)) {
    return node.InvalidArgs("attribute 'output_shape' has ",
                            output_shape.size(), " values, expected ", spatial);
  }
  if (spatial == 1) {
    output_padding.insert(output_padding.begin(), 0);
    if (!output_shape.empty()) output_shape.insert(output_shape.begin(), 1);
  }
  std::vector<int64_t> pads = w.pads;  // t, l, b, r
  const bool same = w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER";
  if (w.auto_pad == "VALID") pads = {0, 0, 0, 0};
  if (!output_shape.empty() || same) {
    for (int a = 0; a < 2; ++a) {
      const int64_t extent = (ws[2 + a] - 1) * w.dilations[a] + 1;
      const int64_t out =
          !output_shape.empty() ? output_shape[a] : in[2 + a] * w.strides[a];
      TransposedPads(in[2 + a], w.strides[a], extent, output_padding[a], out,
                     w.auto_pad == "SAME_UPPER", &pads[a], &pads[a + 2]);
    }
  }
  for (int a = 0; a < 2; ++a) {
    if (pads[a] < 0) {
      return node.Unsupported("a negative leading pad (", pads[a],
                              ") from output_shape / auto_pad");
    }
    // A negative trailing pad extends the output: output_padding does that.
    if (pads[a + 2] < 0) {
      output_padding[a] -= pads[a + 2];
      pads[a + 2] = 0;
      if (output_padding[a] >= std::max(w.strides[a], w.dilations[a])) {
        return node.Unsupported(
            "output_shape larger than the full output "
            "by a stride or more");
      }
    }
  }
  args->push_back(OpArg::Ints("strides", w.strides));
  args->push_back(OpArg::Ints("dilations", w.dilations));
  args->push_back(OpArg::Ints("padding_values", pads));
  args->push_back(OpArg::Ints("output_padding", output_padding));
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus LowerConvTranspose(const OnnxNode &node, OnnxContext *context) {
  ConvOperands operands;
  MACE_RETURN_IF_ERROR(ReadConvOperands(node, context, &operands));
  const int spatial = operands.spatial;
  const Window &w = operands.w;
  const int64_t group = operands.group;
  const std::string &x4 = operands.x4, &w4 = operands.w4;
  const Shape &in = context->ShapeOf(x4);
  const Shape &ws = context->ShapeOf(w4);  // [Cin, Cout/group, kh, kw]
  if (group < 1 || in[1] % group != 0 || ws[0] != in[1]) {
    return node.InvalidArgs("weights ", ShapeToString(ws),
                            " do not match input ", ShapeToString(in),
                            " with group ", group);
  }
  MACE_RETURN_IF_ERROR(CheckKernel(node, w, ws));
  std::vector<OpArg> args;
  MACE_RETURN_IF_ERROR(ConvTransposeArgs(node, w, spatial, in, ws, &args));
  const int64_t cin = in[1], cout_g = ws[1], kh = ws[2], kw = ws[3];
  std::string filter, type;
  if (group == cin && group > 1) {
    // [C, m, kh, kw] → [kh, kw, C, m].
    MACE_RETURN_IF_ERROR(
        context->Transpose(node.name(), w4, {2, 3, 0, 1}, &filter));
    type = "DepthwiseDeconv2d";
  } else if (group == 1) {
    // [Cin, Cout, kh, kw] → [Cout, kh, kw, Cin].
    MACE_RETURN_IF_ERROR(
        context->Transpose(node.name(), w4, {1, 2, 3, 0}, &filter));
    type = "Deconv2D";
  } else {
    // [g * Cin/g, Cout/g, kh, kw] → [g, Cout/g, kh, kw, Cin/g]
    // → [Cout, kh, kw, Cin/g].
    const std::string split = context->Temp(w4 + "__groups");
    MACE_RETURN_IF_ERROR(context->Emit(
        "Reshape", context->Temp(node.name() + "__split_groups"), {w4}, {split},
        {OpArg::Ints("shape", {group, cin / group, cout_g, kh, kw})}));
    std::string moved;
    MACE_RETURN_IF_ERROR(
        context->Transpose(node.name(), split, {0, 2, 3, 4, 1}, &moved));
    filter = context->Temp(w4 + "__ohwi");
    MACE_RETURN_IF_ERROR(context->Emit(
        "Reshape", context->Temp(node.name() + "__merge_groups"), {moved},
        {filter},
        {OpArg::Ints("shape", {group * cout_g, kh, kw, cin / group})}));
    type = "Deconv2D";
    args.push_back(OpArg::Int("group", group));
  }
  std::vector<std::string> weights{filter};
  if (node.HasInput(2)) weights.push_back(node.Input(2));
  return EmitChannelLast(node, context, type, x4, weights, args, spatial + 2,
                         node.Output(0));
}

// ---- Pooling ----------------------------------------------------------------

// Pools an int32 tensor (MaxPool on int8 / uint8) in float: exact for
// values of up to 24 bits.
MaceStatus EmitPooling(const OnnxNode &node, OnnxContext *context,
                       const std::string &x4, const std::vector<OpArg> &args,
                       int out_rank) {
  if (context->Find(x4)->dtype() == DT_FLOAT) {
    return EmitChannelLast(node, context, "Pooling", x4, {}, args, out_rank,
                           node.Output(0));
  }
  const std::string xf = context->Temp(x4 + "__float");
  MACE_RETURN_IF_ERROR(context->Emit("Cast",
                                     context->Temp(node.name() + "__to_float"),
                                     {x4}, {xf}, {OpArg::Int("T", DT_FLOAT)}));
  const std::string yf = context->Temp(node.Output(0) + "__float");
  MACE_RETURN_IF_ERROR(
      EmitChannelLast(node, context, "Pooling", xf, {}, args, out_rank, yf));
  return context->Emit("Cast", context->Temp(node.name() + "__to_int"), {yf},
                       {node.Output(0)}, {OpArg::Int("T", DT_INT32)});
}

template <int kType>
MaceStatus LowerPool(const OnnxNode &node, OnnxContext *context) {
  const std::string x = node.Input(0);
  int spatial = 0;
  MACE_RETURN_IF_ERROR(SpatialRank(node, context, x, &spatial));
  if (kType == kAvgPool) MACE_RETURN_IF_ERROR(ExpectFloat(node, context, 0));
  if (node.num_outputs() > 1 && !node.Output(1).empty()) {
    return node.Unsupported("output 'Indices' is not supported");
  }
  Window w;
  MACE_RETURN_IF_ERROR(ReadWindow(node, spatial, &w));
  if (w.kernel.empty()) {
    return node.InvalidArgs("attribute 'kernel_shape' is required");
  }
  int64_t ceil_mode = 0, count_include_pad = 0;
  MACE_RETURN_IF_ERROR(node.Int("ceil_mode", 0, &ceil_mode));
  if (kType == kAvgPool) {
    MACE_RETURN_IF_ERROR(node.Int("count_include_pad", 0, &count_include_pad));
  }
  // storage_order only affects the Indices output, which is refused above.
  std::string x4;
  MACE_RETURN_IF_ERROR(As4D(context, node.name(), x, &x4));
  const Shape &in = context->ShapeOf(x4);
  std::vector<OpArg> args{
      OpArg::Int("pooling_type", kType), OpArg::Ints("kernels", w.kernel),
      OpArg::Int("count_include_pad", count_include_pad != 0 ? 1 : 0)};
  MACE_RETURN_IF_ERROR(
      WindowArgs(w, in[2], in[3], w.kernel[0], w.kernel[1], &args));
  // With auto_pad the output size does not depend on ceil_mode.
  if (w.auto_pad == "NOTSET" && ceil_mode != 0) {
    args.push_back(OpArg::Int("round_mode", 1));
  }
  return EmitPooling(node, context, x4, args, spatial + 2);
}

// Global pools of any spatial rank: [N, C, spatial...] viewed as
// [N, C, S, 1] (4-D input unchanged), pooled to [N, C, 1, 1].
template <int kType>
MaceStatus LowerGlobalPool(const OnnxNode &node, OnnxContext *context) {
  const std::string x = node.Input(0);
  const Shape &s = context->ShapeOf(x);
  if (s.size() < 3) {
    return node.InvalidArgs("input rank ", s.size(), " must be at least 3");
  }
  if (kType == kAvgPool) MACE_RETURN_IF_ERROR(ExpectFloat(node, context, 0));
  std::string x4 = x;
  if (s.size() != 4) {
    int64_t size = 1;
    for (size_t i = 2; i < s.size(); ++i) size *= s[i];
    x4 = context->Temp(x + "__4d");
    MACE_RETURN_IF_ERROR(
        context->Emit("Reshape", context->Temp(node.name() + "__to_4d"), {x},
                      {x4}, {OpArg::Ints("shape", {s[0], s[1], size, 1})}));
  }
  return EmitPooling(
      node, context, x4,
      {OpArg::Int("pooling_type", kType), OpArg::Int("global_pooling", 1)},
      static_cast<int>(s.size()));
}

// ---- Gemm and MatMul --------------------------------------------------------

// The constant [K, N] matrix b (or [N, K] when b_transposed) as
// FullyConnected's weight [N, K], times `scale`.
MaceStatus AddFcWeight(const OnnxNode &node, OnnxContext *context, int input,
                       bool b_transposed, float scale, std::string *weight) {
  std::vector<float> b;
  MACE_RETURN_IF_ERROR(context->ConstFloats(node, input, &b));
  const Shape &s = context->ShapeOf(node.Input(input));
  const int64_t n = b_transposed ? s[0] : s[1];
  const int64_t k = b_transposed ? s[1] : s[0];
  std::vector<float> values(b.size());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      values[i * k + j] = scale * (b_transposed ? b[i * k + j] : b[j * n + i]);
    }
  }
  *weight = context->Temp(node.Input(input) + "__fc_weight");
  context->graph()->AddConstant(*weight, {n, k}, values);
  return MaceStatus::MACE_SUCCESS;
}

// Gemm's C as a FullyConnected bias [N] (beta folded in) when it is a
// constant that broadcasts along rows; false otherwise.
bool AddFcBias(const OnnxNode &node, OnnxContext *context, int64_t n,
               float beta, std::string *bias) {
  const std::string c = node.Input(2);
  const Tensor *t = context->Find(c);
  if (!t->is_constant() || t->dtype() != DT_FLOAT) return false;
  const Shape &s = t->shape();
  const int64_t count = t->size();
  const bool row = (s.size() == 1 || (s.size() == 2 && s[0] == 1)) &&
                   (count == n || count == 1);
  if (!(s.empty() && count == 1) && !row) return false;
  const float *data = t->data<float>();
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = beta * data[count == 1 ? 0 : i];
  *bias = context->Temp(c + "__fc_bias");
  context->graph()->AddConstant(*bias, {n}, values);
  return true;
}

// Y = alpha * op(A) * op(B) + beta * C.
MaceStatus LowerGemm(const OnnxNode &node, OnnxContext *context) {
  float alpha = 1.0f, beta = 1.0f;
  int64_t trans_a = 0, trans_b = 0;
  MACE_RETURN_IF_ERROR(node.Float("alpha", 1.0f, &alpha));
  MACE_RETURN_IF_ERROR(node.Float("beta", 1.0f, &beta));
  MACE_RETURN_IF_ERROR(node.Int("transA", 0, &trans_a));
  MACE_RETURN_IF_ERROR(node.Int("transB", 0, &trans_b));
  const std::string a = node.Input(0), b = node.Input(1);
  if (context->RankOf(a) != 2 || context->RankOf(b) != 2) {
    return node.InvalidArgs("A and B must be 2-D, are ",
                            ShapeToString(context->ShapeOf(a)), " and ",
                            ShapeToString(context->ShapeOf(b)));
  }
  MACE_RETURN_IF_ERROR(ExpectFloat(node, context, 0));
  MACE_RETURN_IF_ERROR(ExpectFloat(node, context, 1));
  const bool has_c = node.HasInput(2);
  if (has_c) MACE_RETURN_IF_ERROR(ExpectFloat(node, context, 2));
  const std::string y = node.Output(0);
  if (context->graph()->IsConstant(b)) {
    std::string a2 = a, weight, bias;
    if (trans_a != 0) {
      MACE_RETURN_IF_ERROR(context->Transpose(node.name(), a, {1, 0}, &a2));
    }
    MACE_RETURN_IF_ERROR(
        AddFcWeight(node, context, 1, trans_b != 0, alpha, &weight));
    const int64_t n = context->ShapeOf(weight)[0];
    std::vector<std::string> inputs{a2, weight};
    const bool c_as_bias = has_c && AddFcBias(node, context, n, beta, &bias);
    if (c_as_bias) inputs.push_back(bias);
    if (!has_c || c_as_bias) {
      return context->Emit("FullyConnected", node.name(), inputs, {y});
    }
    const std::string fc = context->Temp(y + "__fc");
    MACE_RETURN_IF_ERROR(
        context->Emit("FullyConnected", node.name(), inputs, {fc}));
    return context->Emit(
        "Eltwise", context->Temp(node.name() + "__add_c"), {fc, node.Input(2)},
        {y},
        {OpArg::Int("type", kSum), OpArg::Floats("coeff", {1.0f, beta})});
  }
  const std::vector<OpArg> mm_args{OpArg::Int("transpose_a", trans_a != 0),
                                   OpArg::Int("transpose_b", trans_b != 0)};
  if (!has_c && alpha == 1.0f) {
    return context->Emit("MatMul", node.name(), {a, b}, {y}, mm_args);
  }
  const std::string ab = context->Temp(y + "__ab");
  MACE_RETURN_IF_ERROR(
      context->Emit("MatMul", node.name(), {a, b}, {ab}, mm_args));
  if (!has_c) {
    return context->Emit(
        "Eltwise", context->Temp(node.name() + "__alpha"), {ab}, {y},
        {OpArg::Int("type", kProd), OpArg::Float("scalar_input", alpha)});
  }
  return context->Emit(
      "Eltwise", context->Temp(node.name() + "__add_c"), {ab, node.Input(2)},
      {y},
      {OpArg::Int("type", kSum), OpArg::Floats("coeff", {alpha, beta})});
}

// numpy matmul; a constant 2-D B under a 2-D A is a FullyConnected layer.
MaceStatus LowerMatMul(const OnnxNode &node, OnnxContext *context) {
  const std::string a = node.Input(0), b = node.Input(1);
  MACE_RETURN_IF_ERROR(ExpectFloat(node, context, 0));
  MACE_RETURN_IF_ERROR(ExpectFloat(node, context, 1));
  if (context->graph()->IsConstant(b) && !context->graph()->IsConstant(a) &&
      context->RankOf(a) == 2 && context->RankOf(b) == 2) {
    std::string weight;
    MACE_RETURN_IF_ERROR(AddFcWeight(node, context, 1, false, 1.0f, &weight));
    return context->Emit("FullyConnected", node.name(), {a, weight},
                         {node.Output(0)});
  }
  return context->Emit("MatMul", node.name(), {a, b}, {node.Output(0)});
}

}  // namespace

void RegisterOnnxConvOps(OnnxLoweringTable *table) {
  (*table)["Conv"] = LowerConv;
  (*table)["ConvTranspose"] = LowerConvTranspose;
  (*table)["MaxPool"] = LowerPool<kMaxPool>;
  (*table)["AveragePool"] = LowerPool<kAvgPool>;
  (*table)["GlobalMaxPool"] = LowerGlobalPool<kMaxPool>;
  (*table)["GlobalAveragePool"] = LowerGlobalPool<kAvgPool>;
  (*table)["Gemm"] = LowerGemm;
  (*table)["MatMul"] = LowerMatMul;
}

}  // namespace converter
}  // namespace mace
