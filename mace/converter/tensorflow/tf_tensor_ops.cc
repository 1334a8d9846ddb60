// Data movement on NHWC tensors: padding, resizing and depth/space moves.
// MACE's ops follow TensorFlow's semantics for these, so each is a direct
// mapping with constant operands turned into arguments.

#include "mace/converter/tensorflow/tf_lowering.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

// MACE Pad codes.
enum PadType : int { kConstant = 0, kReflect = 1, kSymmetric = 2 };

// Pad(x, paddings), PadV2(x, paddings, constant_values) and MirrorPad(x,
// paddings) with mode REFLECT or SYMMETRIC.
MaceStatus LowerPad(const TfNode &node, TfContext *context) {
  const bool v2 = node.op() == "PadV2";
  MACE_RETURN_IF_ERROR(node.ExpectInputs(v2 ? 3 : 2, v2 ? 3 : 2));
  std::vector<int64_t> paddings;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &paddings));
  const int rank = context->RankOf(node.Input(0));
  if (paddings.size() != static_cast<size_t>(2 * rank)) {
    return node.InvalidArgs("paddings should be [", rank, ", 2], has ",
                            paddings.size(), " values");
  }
  std::vector<OpArg> args{OpArg::Ints("paddings", paddings)};
  if (node.op() == "MirrorPad") {
    std::string mode;
    MACE_RETURN_IF_ERROR(node.String("mode", "", &mode));
    if (mode != "REFLECT" && mode != "SYMMETRIC") {
      return node.Unsupported("mode '", mode, "' (REFLECT or SYMMETRIC)");
    }
    args.push_back(
        OpArg::Int("pad_type", mode == "REFLECT" ? kReflect : kSymmetric));
  } else {
    float value = 0.0f;
    if (v2) MACE_RETURN_IF_ERROR(context->ConstScalar(node, 2, &value));
    args.push_back(OpArg::Int("pad_type", kConstant));
    args.push_back(OpArg::Float("constant_value", value));
  }
  return context->Emit("Pad", node.name(), {node.Input(0)}, {node.Output(0)},
                       args);
}

// ResizeBilinear / ResizeNearestNeighbor(x, size [h, w]).
MaceStatus LowerResize(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(2, 2));
  std::vector<int64_t> size;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &size));
  if (size.size() != 2) {
    return node.InvalidArgs("size should be [height, width], has ", size.size(),
                            " values");
  }
  bool align_corners = false, half_pixel = false;
  MACE_RETURN_IF_ERROR(node.Bool("align_corners", false, &align_corners));
  MACE_RETURN_IF_ERROR(node.Bool("half_pixel_centers", false, &half_pixel));
  if (align_corners && half_pixel) {
    return node.InvalidArgs(
        "align_corners and half_pixel_centers cannot both be set");
  }
  return context->Emit(
      node.op(), node.name(), {node.Input(0)}, {node.Output(0)},
      {OpArg::Ints("size", size), OpArg::Int("align_corners", align_corners),
       OpArg::Int("half_pixel_centers", half_pixel)});
}

MaceStatus LowerDepthSpace(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(1, 1));
  std::string format;
  MACE_RETURN_IF_ERROR(node.String("data_format", "NHWC", &format));
  if (format != "NHWC") {
    return node.Unsupported("data_format '", format, "' (only NHWC)");
  }
  int64_t block = 0;
  MACE_RETURN_IF_ERROR(node.Int("block_size", 0, &block));
  if (block < 2) {
    return node.InvalidArgs("block_size ", block, " should be at least 2");
  }
  return context->Emit(node.op(), node.name(), {node.Input(0)},
                       {node.Output(0)}, {OpArg::Int("block_size", block)});
}

}  // namespace

void RegisterTfTensorOps(TfLoweringTable *table) {
  (*table)["Pad"] = LowerPad;
  (*table)["PadV2"] = LowerPad;
  (*table)["MirrorPad"] = LowerPad;
  (*table)["ResizeBilinear"] = LowerResize;
  (*table)["ResizeNearestNeighbor"] = LowerResize;
  (*table)["DepthToSpace"] = LowerDepthSpace;
  (*table)["SpaceToDepth"] = LowerDepthSpace;
}

}  // namespace converter
}  // namespace mace
