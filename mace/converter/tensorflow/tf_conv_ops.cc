// Convolutions, pooling, dense layers and normalization. TensorFlow's
// NHWC activations are MACE's own, so only filters are re-laid out: Conv2D's
// HWIO [Kh, Kw, Cin/group, Cout] becomes OHWI [Cout, Kh, Kw, Cin/group];
// DepthwiseConv2dNative's [Kh, Kw, C, M] is MACE's layout already. Constant
// filters fold at conversion time.

#include "mace/converter/tensorflow/tf_lowering.h"
#include "mace/converter/tensorflow/tf_tensor.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

enum PoolingType : int { kAvgPool = 1, kMaxPool = 2 };
enum PaddingCode : int { kValid = 0, kSame = 1 };

MaceStatus ExpectNhwc(const TfNode &node) {
  std::string format;
  MACE_RETURN_IF_ERROR(node.String("data_format", "NHWC", &format));
  if (format != "NHWC") {
    return node.Unsupported("data_format '", format,
                            "' (only NHWC, as TensorFlow's CPU kernels)");
  }
  return MaceStatus::MACE_SUCCESS;
}

// A [1, h, w, 1] attribute as [h, w].
MaceStatus SpatialPair(const TfNode &node, const std::string &name,
                       std::vector<int64_t> *pair) {
  std::vector<int64_t> values;
  MACE_RETURN_IF_ERROR(node.Ints(name, {1, 1, 1, 1}, &values));
  if (values.size() != 4 || values[0] != 1 || values[3] != 1 || values[1] < 1 ||
      values[2] < 1) {
    return node.InvalidArgs("attribute '", name,
                            "' should be [1, h, w, 1] with h, w >= 1, is ",
                            ShapeToString(values));
  }
  *pair = {values[1], values[2]};
  return MaceStatus::MACE_SUCCESS;
}

// strides, dilations and padding of a window op, as MACE arguments.
MaceStatus WindowArgs(const TfNode &node, bool with_dilations,
                      std::vector<OpArg> *args) {
  MACE_RETURN_IF_ERROR(ExpectNhwc(node));
  std::vector<int64_t> strides, dilations{1, 1};
  MACE_RETURN_IF_ERROR(SpatialPair(node, "strides", &strides));
  if (with_dilations) {
    MACE_RETURN_IF_ERROR(SpatialPair(node, "dilations", &dilations));
  }
  std::string padding;
  MACE_RETURN_IF_ERROR(node.String("padding", "", &padding));
  args->push_back(OpArg::Ints("strides", strides));
  args->push_back(OpArg::Ints("dilations", dilations));
  if (padding == "SAME") {
    // TensorFlow's SAME puts the odd pad at the end, as MACE's SAME does.
    args->push_back(OpArg::Int("padding", kSame));
  } else if (padding == "VALID") {
    args->push_back(OpArg::Int("padding", kValid));
  } else if (padding == "EXPLICIT") {
    std::vector<int64_t> p;
    MACE_RETURN_IF_ERROR(node.Ints("explicit_paddings", {}, &p));
    if (p.size() != 8 || p[0] != 0 || p[1] != 0 || p[6] != 0 || p[7] != 0) {
      return node.InvalidArgs(
          "attribute 'explicit_paddings' should be 8 values with zero batch "
          "and channel pads, is ",
          ShapeToString(p));
    }
    for (int64_t v : p) {
      if (v < 0) return node.InvalidArgs("negative explicit padding");
    }
    args->push_back(OpArg::Ints("padding_values", {p[2], p[4], p[3], p[5]}));
  } else {
    return node.Unsupported("padding '", padding,
                            "' (SAME, VALID or EXPLICIT)");
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ExpectFloat4D(const TfNode &node, TfContext *context, int input,
                         const char *what) {
  const std::string name = node.Input(input);
  if (context->RankOf(name) != 4 || context->IsInt(name)) {
    return node.InvalidArgs(what, " '", node.RawInput(input),
                            "' should be a 4-D float tensor, is ",
                            context->IsInt(name) ? "int " : "",
                            ShapeToString(context->ShapeOf(name)));
  }
  return MaceStatus::MACE_SUCCESS;
}

// Replaces strides / dilations / padding by the atrous pattern's.
void ApplyAtrous(const AtrousConv &atrous, std::vector<OpArg> *args) {
  args->clear();
  args->push_back(OpArg::Ints("strides", {1, 1}));
  args->push_back(OpArg::Ints("dilations", atrous.dilations));
  args->push_back(OpArg::Ints("padding_values", atrous.pads));
}

MaceStatus ConvArgs(const TfNode &node, TfContext *context,
                    std::vector<OpArg> *args) {
  MACE_RETURN_IF_ERROR(WindowArgs(node, true, args));
  auto atrous = context->atrous_convs()->find(node.name());
  if (atrous != context->atrous_convs()->end()) {
    ApplyAtrous(atrous->second, args);
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus LowerConv2D(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(2, 2));
  MACE_RETURN_IF_ERROR(ExpectFloat4D(node, context, 0, "input"));
  MACE_RETURN_IF_ERROR(ExpectFloat4D(node, context, 1, "filter"));
  const Shape &in = context->ShapeOf(node.Input(0));
  const Shape &fs = context->ShapeOf(node.Input(1));  // [kh, kw, cin/g, cout]
  const int64_t group = fs[2] < 1 ? 0 : in[3] / fs[2];
  if (group < 1 || in[3] % fs[2] != 0 || fs[3] % group != 0) {
    return node.InvalidArgs("filter ", ShapeToString(fs),
                            " ([Kh, Kw, Cin/group, Cout]) does not match "
                            "input ",
                            ShapeToString(in));
  }
  std::vector<OpArg> args;
  MACE_RETURN_IF_ERROR(ConvArgs(node, context, &args));
  args.push_back(OpArg::Int("group", group));
  const std::string filter = context->Temp(node.Input(1) + "__ohwi");
  MACE_RETURN_IF_ERROR(context->Emit(
      "Transpose", context->Temp(node.name() + "__filter"), {node.Input(1)},
      {filter}, {OpArg::Ints("dims", {3, 0, 1, 2})}));
  return context->Emit("Conv2D", node.name(), {node.Input(0), filter},
                       {node.Output(0)}, args);
}

MaceStatus LowerDepthwiseConv2d(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(2, 2));
  MACE_RETURN_IF_ERROR(ExpectFloat4D(node, context, 0, "input"));
  MACE_RETURN_IF_ERROR(ExpectFloat4D(node, context, 1, "filter"));
  const Shape &in = context->ShapeOf(node.Input(0));
  const Shape &fs = context->ShapeOf(node.Input(1));  // [kh, kw, C, M]
  if (fs[2] != in[3]) {
    return node.InvalidArgs("filter ", ShapeToString(fs),
                            " ([Kh, Kw, C, multiplier]) does not match input ",
                            ShapeToString(in));
  }
  std::vector<OpArg> args;
  MACE_RETURN_IF_ERROR(ConvArgs(node, context, &args));
  return context->Emit("DepthwiseConv2d", node.name(),
                       {node.Input(0), node.Input(1)}, {node.Output(0)}, args);
}

// Conv2DBackpropInput(input_sizes, filter [Kh, Kw, Cout, Cin], x): a
// transposed convolution whose output size is input_sizes.
MaceStatus LowerConv2DBackpropInput(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(3, 3));
  MACE_RETURN_IF_ERROR(ExpectFloat4D(node, context, 2, "input"));
  MACE_RETURN_IF_ERROR(ExpectFloat4D(node, context, 1, "filter"));
  std::vector<int64_t> sizes;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 0, &sizes));
  if (sizes.size() != 4) {
    return node.InvalidArgs("input_sizes should have 4 values, has ",
                            sizes.size());
  }
  std::vector<OpArg> args;
  MACE_RETURN_IF_ERROR(WindowArgs(node, true, &args));
  for (const OpArg &arg : args) {
    if (arg.proto.name() == "padding_values") {
      return node.Unsupported("EXPLICIT padding of a transposed convolution");
    }
  }
  const std::string output_shape =
      context->Temp(node.name() + "__output_shape");
  context->graph()->AddConstantInt(
      output_shape, {4},
      {static_cast<int32_t>(sizes[0]), static_cast<int32_t>(sizes[1]),
       static_cast<int32_t>(sizes[2]), static_cast<int32_t>(sizes[3])});
  const std::string filter = context->Temp(node.Input(1) + "__ohwi");
  MACE_RETURN_IF_ERROR(context->Emit(
      "Transpose", context->Temp(node.name() + "__filter"), {node.Input(1)},
      {filter}, {OpArg::Ints("dims", {2, 0, 1, 3})}));
  return context->Emit("Deconv2D", node.name(),
                       {node.Input(2), filter, output_shape}, {node.Output(0)},
                       args);
}

template <int kType>
MaceStatus LowerPool(const TfNode &node, TfContext *context) {
  const bool v2 = node.op() == "MaxPoolV2";
  MACE_RETURN_IF_ERROR(node.ExpectInputs(v2 ? 3 : 1, v2 ? 3 : 1));
  MACE_RETURN_IF_ERROR(ExpectFloat4D(node, context, 0, "input"));
  std::vector<int64_t> ksize;
  std::vector<OpArg> args;
  if (v2) {
    // ksize and strides as constant inputs.
    std::vector<int64_t> strides;
    MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &ksize));
    MACE_RETURN_IF_ERROR(context->ConstInts(node, 2, &strides));
    if (ksize.size() != 4 || strides.size() != 4) {
      return node.InvalidArgs("ksize and strides should have 4 values");
    }
    std::string padding;
    MACE_RETURN_IF_ERROR(node.String("padding", "", &padding));
    if (padding != "SAME" && padding != "VALID") {
      return node.Unsupported("padding '", padding, "' (SAME or VALID)");
    }
    MACE_RETURN_IF_ERROR(ExpectNhwc(node));
    args = {OpArg::Ints("strides", {strides[1], strides[2]}),
            OpArg::Int("padding", padding == "SAME" ? kSame : kValid)};
  } else {
    MACE_RETURN_IF_ERROR(node.Ints("ksize", {}, &ksize));
    MACE_RETURN_IF_ERROR(WindowArgs(node, false, &args));
  }
  if (ksize.size() != 4 || ksize[0] != 1 || ksize[3] != 1 || ksize[1] < 1 ||
      ksize[2] < 1) {
    return node.InvalidArgs("ksize should be [1, kh, kw, 1], is ",
                            ShapeToString(ksize));
  }
  args.push_back(OpArg::Int("pooling_type", kType));
  args.push_back(OpArg::Ints("kernels", {ksize[1], ksize[2]}));
  // TensorFlow's average ignores padded cells.
  args.push_back(OpArg::Int("count_include_pad", 0));
  return context->Emit("Pooling", node.name(), {node.Input(0)},
                       {node.Output(0)}, args);
}

// MatMul(a, b): a constant [K, N] b under a 2-D a is a FullyConnected layer
// with weight [N, K].
MaceStatus LowerMatMul(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(2, 2));
  bool trans_a = false, trans_b = false;
  MACE_RETURN_IF_ERROR(node.Bool("transpose_a", false, &trans_a));
  MACE_RETURN_IF_ERROR(node.Bool("transpose_b", false, &trans_b));
  const std::string a = node.Input(0), b = node.Input(1);
  if (context->RankOf(a) != 2 || context->RankOf(b) != 2) {
    return node.InvalidArgs("a and b should be 2-D, are ",
                            ShapeToString(context->ShapeOf(a)), " and ",
                            ShapeToString(context->ShapeOf(b)));
  }
  if (context->IsInt(a) || context->IsInt(b)) {
    return node.Unsupported("integer matrices (only float)");
  }
  if (!context->graph()->IsConstant(b) || context->graph()->IsConstant(a)) {
    return context->Emit("MatMul", node.name(), {a, b}, {node.Output(0)},
                         {OpArg::Int("transpose_a", trans_a),
                          OpArg::Int("transpose_b", trans_b)});
  }
  std::vector<float> values;
  MACE_RETURN_IF_ERROR(context->ConstFloats(node, 1, &values));
  const Shape &s = context->ShapeOf(b);
  const int64_t n = trans_b ? s[0] : s[1], k = trans_b ? s[1] : s[0];
  std::vector<float> weight(values.size());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      weight[i * k + j] = trans_b ? values[i * k + j] : values[j * n + i];
    }
  }
  const std::string weight_name = context->Temp(b + "__fc_weight");
  context->graph()->AddConstant(weight_name, {n, k}, weight);
  std::string x = a;
  if (trans_a) {
    x = context->Temp(a + "__t");
    MACE_RETURN_IF_ERROR(
        context->Emit("Transpose", context->Temp(node.name() + "__transpose_a"),
                      {a}, {x}, {OpArg::Ints("dims", {1, 0})}));
  }
  return context->Emit("FullyConnected", node.name(), {x, weight_name},
                       {node.Output(0)});
}

MaceStatus LowerBatchMatMul(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(2, 2));
  bool adj_x = false, adj_y = false;
  MACE_RETURN_IF_ERROR(node.Bool("adj_x", false, &adj_x));
  MACE_RETURN_IF_ERROR(node.Bool("adj_y", false, &adj_y));
  if (context->IsInt(node.Input(0)) || context->IsInt(node.Input(1))) {
    return node.Unsupported("integer matrices (only float)");
  }
  return context->Emit(
      "MatMul", node.name(), {node.Input(0), node.Input(1)}, {node.Output(0)},
      {OpArg::Int("transpose_a", adj_x), OpArg::Int("transpose_b", adj_y)});
}

MaceStatus LowerBiasAdd(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(2, 2));
  MACE_RETURN_IF_ERROR(ExpectNhwc(node));
  return context->Emit("BiasAdd", node.name(), {node.Input(0), node.Input(1)},
                       {node.Output(0)});
}

// FusedBatchNorm(x, scale, offset, mean, variance) in inference mode.
MaceStatus LowerFusedBatchNorm(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(5, 5));
  MACE_RETURN_IF_ERROR(ExpectNhwc(node));
  bool is_training = true;
  MACE_RETURN_IF_ERROR(node.Bool("is_training", true, &is_training));
  if (is_training) {
    return node.Unsupported(
        "is_training = true (batch statistics); export the graph for "
        "inference (training=False)");
  }
  float epsilon = 1e-4f;
  MACE_RETURN_IF_ERROR(node.Float("epsilon", 1e-4f, &epsilon));
  return context->Emit("BatchNorm", node.name(),
                       {node.Input(0), node.Input(1), node.Input(2),
                        node.Input(3), node.Input(4)},
                       {node.Output(0)}, {OpArg::Float("epsilon", epsilon)});
}

MaceStatus BlockArgs(const TfNode &node, TfContext *context,
                     const char *pads_name, std::vector<OpArg> *args) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(3, 3));
  std::vector<int64_t> block, pads;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &block));
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 2, &pads));
  if (block.size() != 2 || pads.size() != 4) {
    return node.Unsupported("block_shape ", ShapeToString(block), " and ",
                            pads_name, " ", ShapeToString(pads),
                            " (only 2 spatial dims of a 4-D NHWC tensor)");
  }
  *args = {OpArg::Ints("block_shape", block), OpArg::Ints(pads_name, pads)};
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus LowerSpaceToBatch(const TfNode &node, TfContext *context) {
  if (context->atrous_ends()->count(node.name())) {
    // The conv of the pattern reads this op's input, dilated.
    context->Rename(TfTensorName(node.name(), 0), node.Input(0));
    return MaceStatus::MACE_SUCCESS;
  }
  std::vector<OpArg> args;
  MACE_RETURN_IF_ERROR(BlockArgs(node, context, "paddings", &args));
  return context->Emit("SpaceToBatchND", node.name(), {node.Input(0)},
                       {node.Output(0)}, args);
}

MaceStatus LowerBatchToSpace(const TfNode &node, TfContext *context) {
  if (context->atrous_ends()->count(node.name())) {
    context->Rename(TfTensorName(node.name(), 0), node.Input(0));
    return MaceStatus::MACE_SUCCESS;
  }
  std::vector<OpArg> args;
  MACE_RETURN_IF_ERROR(BlockArgs(node, context, "crops", &args));
  return context->Emit("BatchToSpaceND", node.name(), {node.Input(0)},
                       {node.Output(0)}, args);
}

// The int values of a Const node feeding `input`; false when it is not one.
bool ConstNodeInts(const TfGraphIndex &index, const std::string &input,
                   std::vector<int64_t> *values) {
  const TfTensorRef ref = ParseTfInput(input);
  auto it = index.nodes.find(ref.node);
  if (ref.index != 0 || it == index.nodes.end() ||
      it->second->op() != "Const") {
    return false;
  }
  auto value = it->second->attr().find("value");
  if (value == it->second->attr().end()) return false;
  DecodedTfTensor tensor;
  if (DecodeTfTensor(value->second.tensor(), ref.node, &tensor) !=
          MaceStatus::MACE_SUCCESS ||
      !tensor.is_int) {
    return false;
  }
  values->assign(tensor.ints.begin(), tensor.ints.end());
  return true;
}

// The only reader of `input`'s node, as the node `input` names; nullptr
// when that node is read elsewhere too or is not an output-0 reference.
const tf::NodeDef *SoleProducer(const TfGraphIndex &index,
                                const std::string &input) {
  const TfTensorRef ref = ParseTfInput(input);
  auto it = index.nodes.find(ref.node);
  auto readers = index.consumers.find(ref.node);
  if (ref.index != 0 || it == index.nodes.end() ||
      readers == index.consumers.end() || readers->second != 1) {
    return nullptr;
  }
  return it->second;
}

// Whether a conv of the pattern is plain: stride 1, no dilation, VALID.
bool IsPlainValidConv(const tf::NodeDef &conv, TfContext *context) {
  TfNode node(conv, context);
  std::vector<int64_t> strides, dilations;
  std::string padding, format;
  if (node.Ints("strides", {1, 1, 1, 1}, &strides) !=
          MaceStatus::MACE_SUCCESS ||
      node.Ints("dilations", {1, 1, 1, 1}, &dilations) !=
          MaceStatus::MACE_SUCCESS ||
      node.String("padding", "", &padding) != MaceStatus::MACE_SUCCESS ||
      node.String("data_format", "NHWC", &format) != MaceStatus::MACE_SUCCESS) {
    return false;
  }
  const std::vector<int64_t> ones{1, 1, 1, 1};
  return strides == ones && dilations == ones && padding == "VALID" &&
         format == "NHWC";
}

}  // namespace

void FindAtrousConvs(const tf::GraphDef &graph, TfContext *context) {
  const TfGraphIndex &index = context->index();
  for (const tf::NodeDef &bts : graph.node()) {
    if (bts.op() != "BatchToSpaceND" || bts.input_size() < 3) continue;
    const tf::NodeDef *conv = SoleProducer(index, bts.input(0));
    if (conv == nullptr ||
        (conv->op() != "Conv2D" && conv->op() != "DepthwiseConv2dNative") ||
        conv->input_size() < 2 || !IsPlainValidConv(*conv, context)) {
      continue;
    }
    const tf::NodeDef *stb = SoleProducer(index, conv->input(0));
    if (stb == nullptr || stb->op() != "SpaceToBatchND" ||
        stb->input_size() < 3) {
      continue;
    }
    std::vector<int64_t> block, paddings, block2, crops;
    if (!ConstNodeInts(index, stb->input(1), &block) ||
        !ConstNodeInts(index, stb->input(2), &paddings) ||
        !ConstNodeInts(index, bts.input(1), &block2) ||
        !ConstNodeInts(index, bts.input(2), &crops) || block.size() != 2 ||
        block != block2 || paddings.size() != 4 || crops.size() != 4 ||
        block[0] < 1 || block[1] < 1) {
      continue;
    }
    // paddings / crops: [[top, bottom], [left, right]].
    const std::vector<int64_t> pads{
        paddings[0] - crops[0], paddings[2] - crops[2], paddings[1] - crops[1],
        paddings[3] - crops[3]};
    bool fits = true;
    for (int64_t p : pads) fits = fits && p >= 0;
    if (!fits) continue;
    (*context->atrous_convs())[conv->name()] = AtrousConv{block, pads};
    (*context->atrous_ends())[stb->name()] = conv->name();
    (*context->atrous_ends())[bts.name()] = conv->name();
  }
}

void RegisterTfConvOps(TfLoweringTable *table) {
  (*table)["Conv2D"] = LowerConv2D;
  (*table)["DepthwiseConv2dNative"] = LowerDepthwiseConv2d;
  (*table)["Conv2DBackpropInput"] = LowerConv2DBackpropInput;
  (*table)["MaxPool"] = LowerPool<kMaxPool>;
  (*table)["MaxPoolV2"] = LowerPool<kMaxPool>;
  (*table)["AvgPool"] = LowerPool<kAvgPool>;
  (*table)["MatMul"] = LowerMatMul;
  (*table)["BatchMatMul"] = LowerBatchMatMul;
  (*table)["BatchMatMulV2"] = LowerBatchMatMul;
  (*table)["BatchMatMulV3"] = LowerBatchMatMul;
  (*table)["BiasAdd"] = LowerBiasAdd;
  (*table)["BiasAddV1"] = LowerBiasAdd;
  (*table)["FusedBatchNorm"] = LowerFusedBatchNorm;
  (*table)["FusedBatchNormV2"] = LowerFusedBatchNorm;
  (*table)["FusedBatchNormV3"] = LowerFusedBatchNorm;
  (*table)["SpaceToBatchND"] = LowerSpaceToBatch;
  (*table)["BatchToSpaceND"] = LowerBatchToSpace;
}

}  // namespace converter
}  // namespace mace
