// DepthwiseConv2d: each input channel convolved with its own `multiplier`
// filters, with a fused bias and activation.
//   inputs:  input [N, H, W, C], filter [Kh, Kw, C, multiplier], optional
//            bias [C * multiplier], then, with a fused PRELU (bias then
//            required), its slope [C * multiplier] or [1]; filter, bias and
//            slope may be constants or values fed at run time (only their
//            shapes are needed in Prepare);
//   args:    strides, dilations, padding, padding_values, round_mode (see
//            conv_pool_util.h), group (optional, must equal C), fused
//            activation;
//   output:  [N, Ho, Wo, C * multiplier], channel c * multiplier + m from
//            input channel c and filter [:, :, c, m].

#include "mace/ops/common/conv_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class DepthwiseConv2dOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(CheckNhwc(*context));
    MACE_RETURN_IF_ERROR(ParseActivation(*context, true, &activation_));
    MACE_RETURN_IF_ERROR(
        ExpectWeightedOpInputs(*context, activation_, "filter"));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(CheckFloat4D(*context, 0, "input"));
    MACE_RETURN_IF_ERROR(CheckFloat4D(*context, 1, "filter"));
    MACE_RETURN_IF_ERROR(ReadDims(*context));
    if (context->num_inputs() >= 3) {
      MACE_RETURN_IF_ERROR(CheckBias(*context, 2, dims_.out_c));
    }
    MACE_RETURN_IF_ERROR(CheckFusedPReluSlope(
        *context, activation_, kWeightedOpSlopeIndex, dims_.out_c));

    return PrepareForwardWindow(context, &dims_, &rows_, &cols_);
  }

  MaceStatus Run(OpContext *context) override {
    const float *bias =
        context->num_inputs() >= 3 ? context->input(2).data<float>() : nullptr;
    DepthwiseConvByTaps(
        dims_, rows_, cols_, context->input(0).data<float>(),
        context->input(1).data<float>(), bias, activation_,
        context->output(0)->mutable_data<float>(), context->thread_pool(),
        FusedPReluSlope(*context, activation_, kWeightedOpSlopeIndex));
    return MaceStatus::MACE_SUCCESS;
  }

  int64_t MacCount(const OpContext &context) const override {
    return dims_.batch * dims_.out_h * dims_.out_w * dims_.out_c *
           dims_.kernel_h * dims_.kernel_w;
  }

 private:
  MaceStatus ReadDims(const OpContext &context) {
    const Tensor &input = context.input(0);
    const Tensor &filter = context.input(1);
    dims_.batch = input.dim(0);
    dims_.in_h = input.dim(1);
    dims_.in_w = input.dim(2);
    dims_.in_c = input.dim(3);
    dims_.kernel_h = filter.dim(0);
    dims_.kernel_w = filter.dim(1);
    if (filter.dim(2) != dims_.in_c) {
      return context.InvalidArgs(
          "filter '", filter.name(), "' has shape ",
          ShapeToString(filter.shape()),
          " ([Kh, Kw, C, multiplier]), its third dim must be the input ",
          "channels ", dims_.in_c);
    }
    dims_.out_c = dims_.in_c * filter.dim(3);
    if (context.args().Has("group")) {
      int64_t group = 0;
      MACE_RETURN_IF_ERROR(ReadGroup(context, &group));
      if (group != dims_.in_c) {
        return context.InvalidArgs("argument 'group' = ", group,
                                   " must equal the input channels ",
                                   dims_.in_c);
      }
    }
    return MaceStatus::MACE_SUCCESS;
  }

  Activation activation_;
  ConvDims dims_;
  AxisTaps rows_;
  AxisTaps cols_;
};

}  // namespace

void RegisterDepthwiseConv2d(OpRegistry *registry) {
  registry->Register<DepthwiseConv2dOp>("DepthwiseConv2d");
}

}  // namespace mace
