// DepthToSpace and SpaceToDepth on NHWC float32 data, TensorFlow semantics.
// Arg `block_size` (int, required, >= 1) = b.
//
// DepthToSpace: [N, H, W, C] -> [N, H*b, W*b, C/(b*b)] (C divisible by b*b).
// Output (n, h*b + i, w*b + j, c) reads input channel
//   (i*b + j) * C/(b*b) + c   with arg `mode` = "DCR" (default, TensorFlow),
//   c*b*b + i*b + j           with mode "CRD" (ONNX's column-row-depth).
// SpaceToDepth: [N, H, W, C] -> [N, H/b, W/b, C*b*b] (H and W divisible by
// b); output channel (i*b + j) * C + c reads input (n, h*b + i, w*b + j, c).
// Mode "DCR" only (ONNX has no other).
//
// Both are strided views: the output seen as 6-D [N, H, b, W, b, C'] (or
// [N, H', W', b, b, C]) with one input step per dim.

#include <string>

#include "mace/ops/common/move_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

// Reads block_size and mode and checks the 4-D float input.
MaceStatus ParseBlock(const OpContext &context, int64_t *block, bool *crd) {
  MACE_RETURN_IF_ERROR(context.ExpectInputCount(1, 1));
  MACE_RETURN_IF_ERROR(context.ExpectOutputCount(1));
  MACE_RETURN_IF_ERROR(CheckNhwc(context));
  MACE_RETURN_IF_ERROR(ExpectFloatOrInt32(context, 0, false));
  MACE_RETURN_IF_ERROR(context.ExpectRank(0, 4));
  if (!context.args().Has("block_size")) {
    return context.InvalidArgs("argument 'block_size' is required");
  }
  MACE_RETURN_IF_ERROR(context.args().GetInt("block_size", int64_t{0}, block));
  if (*block < 1 || *block > (int64_t{1} << 16)) {
    return context.InvalidArgs("argument 'block_size' = ", *block,
                               " must be 1 to 65536");
  }
  std::string mode;
  MACE_RETURN_IF_ERROR(context.args().GetString("mode", "DCR", &mode));
  if (mode != "DCR" && mode != "CRD") {
    return context.InvalidArgs("argument 'mode' = '", mode,
                               "' must be DCR or CRD");
  }
  *crd = mode == "CRD";
  return MaceStatus::MACE_SUCCESS;
}

class DepthToSpaceOp : public StridedViewOp {
 public:
  MaceStatus Prepare(OpContext *context) override {
    int64_t b = 0;
    bool crd = false;
    MACE_RETURN_IF_ERROR(ParseBlock(*context, &b, &crd));
    const Tensor &input = context->input(0);
    const int64_t n = input.dim(0), h = input.dim(1), w = input.dim(2);
    const int64_t c = input.dim(3);
    if (c % (b * b) != 0) {
      return context->InvalidArgs(
          "input channels ", c, " are not divisible by block_size^2 = ", b * b);
    }
    const int64_t depth = c / (b * b);
    view().dims = {n, h, b, w, b, depth};
    view().steps = {h * w * c, w * c,           crd ? b : b * depth,
                    c,         crd ? 1 : depth, crd ? b * b : 1};
    view().base = 0;
    return SetOutput(context, input.dtype(), {n, h * b, w * b, depth});
  }
};

class SpaceToDepthOp : public StridedViewOp {
 public:
  MaceStatus Prepare(OpContext *context) override {
    int64_t b = 0;
    bool crd = false;
    MACE_RETURN_IF_ERROR(ParseBlock(*context, &b, &crd));
    if (crd) {
      return context->InvalidArgs(
          "argument 'mode' = 'CRD' is only for "
          "DepthToSpace");
    }
    const Tensor &input = context->input(0);
    const int64_t n = input.dim(0), h = input.dim(1), w = input.dim(2);
    const int64_t c = input.dim(3);
    if (h % b != 0 || w % b != 0) {
      return context->InvalidArgs("input height ", h, " and width ", w,
                                  " must be divisible by block_size ", b);
    }
    view().dims = {n, h / b, w / b, b, b, c};
    view().steps = {h * w * c, b * w * c, b * c, w * c, c, 1};
    view().base = 0;
    return SetOutput(context, input.dtype(), {n, h / b, w / b, c * b * b});
  }
};

}  // namespace

void RegisterDepthToSpace(OpRegistry *registry) {
  registry->Register<DepthToSpaceOp>("DepthToSpace");
  registry->Register<SpaceToDepthOp>("SpaceToDepth");
}

}  // namespace mace
