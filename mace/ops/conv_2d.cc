// Conv2D: grouped 2-D convolution of NHWC data with a fused bias and
// activation.
//   inputs:  input [N, H, W, Cin], filter [Cout, Kh, Kw, Cin / group]
//            (OHWI), optional bias [Cout], then, with a fused PRELU (bias
//            then required), its slope [Cout] or [1]; filter and bias may
//            be constants
//            or values fed at run time (ONNX models may give weights as
//            graph inputs): only their shapes are needed in Prepare;
//   args:    strides, dilations, padding, padding_values, round_mode (see
//            conv_pool_util.h), group (default 1), fused activation;
//   output:  [N, Ho, Wo, Cout], Ho / Wo from the window arguments.
// A 1x1, stride-1, unpadded, ungrouped convolution with a constant filter
// is one GEMM [N*H*W, Cin] x [Cin, Cout] in NHWC: its filter is packed at
// Prepare for the packed SGEMM (mace/kernels/sgemm.h). Every other case
// runs the reference tap loop, which is also the SGEMM's specification.

#include "mace/kernels/sgemm.h"
#include "mace/ops/common/conv_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class Conv2dOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(CheckNhwc(*context));
    MACE_RETURN_IF_ERROR(ParseActivation(*context, true, &activation_));
    MACE_RETURN_IF_ERROR(
        ExpectWeightedOpInputs(*context, activation_, "filter"));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(CheckFloat4D(*context, 0, "input"));
    MACE_RETURN_IF_ERROR(CheckFloat4D(*context, 1, "filter"));
    MACE_RETURN_IF_ERROR(ReadGroup(*context, &dims_.groups));
    MACE_RETURN_IF_ERROR(ReadDims(*context));
    if (context->num_inputs() >= 3) {
      MACE_RETURN_IF_ERROR(CheckBias(*context, 2, dims_.out_c));
    }
    MACE_RETURN_IF_ERROR(CheckFusedPReluSlope(
        *context, activation_, kWeightedOpSlopeIndex, dims_.out_c));

    MACE_RETURN_IF_ERROR(PrepareForwardWindow(context, &dims_, &rows_, &cols_));
    packed_filter_ = kernels::PackedMatrixB();
    const Tensor &filter = context->input(1);
    if (IsPointwise() && filter.is_constant() && filter.has_data()) {
      kernels::PackB(filter.data<float>(), dims_.in_c, dims_.out_c, true,
                     &packed_filter_);
    }
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const float *bias =
        context->num_inputs() >= 3 ? context->input(2).data<float>() : nullptr;
    const PReluSlope slope =
        FusedPReluSlope(*context, activation_, kWeightedOpSlopeIndex);
    float *output = context->output(0)->mutable_data<float>();
    if (!packed_filter_.empty()) {
      const Activation act = activation_;
      kernels::Sgemm(
          dims_.batch * dims_.in_h * dims_.in_w, dims_.out_c, dims_.in_c,
          context->input(0).data<float>(), dims_.in_c, packed_filter_, bias,
          output, dims_.out_c, context->thread_pool(),
          [&](float *c, int64_t rows, int64_t cols, int64_t ldc) {
            ActivateBlock(act, slope, (c - output) % ldc, c, rows, cols, ldc);
          });
      return MaceStatus::MACE_SUCCESS;
    }
    GroupedConvByTaps(dims_, rows_, cols_, context->input(0).data<float>(),
                      context->input(1).data<float>(), bias, activation_,
                      output, context->thread_pool(), slope);
    return MaceStatus::MACE_SUCCESS;
  }

  int64_t MacCount(const OpContext &context) const override {
    return dims_.batch * dims_.out_h * dims_.out_w * dims_.out_c *
           dims_.kernel_h * dims_.kernel_w * (dims_.in_c / dims_.groups);
  }

 private:
  // Input and filter sizes, checked against each other and the group.
  MaceStatus ReadDims(const OpContext &context) {
    const Tensor &input = context.input(0);
    const Tensor &filter = context.input(1);
    dims_.batch = input.dim(0);
    dims_.in_h = input.dim(1);
    dims_.in_w = input.dim(2);
    dims_.in_c = input.dim(3);
    dims_.out_c = filter.dim(0);
    dims_.kernel_h = filter.dim(1);
    dims_.kernel_w = filter.dim(2);
    const int64_t group = dims_.groups;
    if (dims_.in_c % group != 0 || dims_.out_c % group != 0) {
      return context.InvalidArgs(
          "argument 'group' = ", group, " must divide the input channels (",
          dims_.in_c, ") and output channels (", dims_.out_c, ")");
    }
    if (filter.dim(3) != dims_.in_c / group) {
      return context.InvalidArgs(
          "filter '", filter.name(), "' has shape ",
          ShapeToString(filter.shape()), " (OHWI), its last dim must be ",
          "input channels / group = ", dims_.in_c / group);
    }
    return MaceStatus::MACE_SUCCESS;
  }

  // 1x1 kernel, one group, and output pixel (h, w) reading input pixel
  // (h, w) only: stride 1 and no padding.
  bool IsPointwise() const {
    return dims_.kernel_h == 1 && dims_.kernel_w == 1 && dims_.groups == 1 &&
           IsIdentity(rows_, dims_.in_h, dims_.out_h) &&
           IsIdentity(cols_, dims_.in_w, dims_.out_w);
  }

  static bool IsIdentity(const AxisTaps &taps, int64_t in, int64_t out) {
    if (in != out || static_cast<int64_t>(taps.begin.size()) != out + 1 ||
        static_cast<int64_t>(taps.input.size()) != out) {
      return false;
    }
    for (int64_t o = 0; o < out; ++o) {
      if (taps.begin[o] != o || taps.input[o] != o) return false;
    }
    return true;
  }

  Activation activation_;
  ConvDims dims_;
  AxisTaps rows_;
  AxisTaps cols_;
  kernels::PackedMatrixB packed_filter_;  // empty: reference path
};

}  // namespace

void RegisterConv2D(OpRegistry *registry) {
  registry->Register<Conv2dOp>("Conv2D");
}

}  // namespace mace
