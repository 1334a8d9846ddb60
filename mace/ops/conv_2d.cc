// Conv2D: grouped 2-D convolution of NHWC data with a fused bias and
// activation.
//   inputs:  input [N, H, W, Cin], filter [Cout, Kh, Kw, Cin / group]
//            (OHWI), optional bias [Cout]; filter and bias may be constants
//            or values fed at run time (ONNX models may give weights as
//            graph inputs): only their shapes are needed in Prepare;
//   args:    strides, dilations, padding, padding_values, round_mode (see
//            conv_pool_util.h), group (default 1), fused activation;
//   output:  [N, Ho, Wo, Cout], Ho / Wo from the window arguments.

#include "mace/ops/common/conv_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class Conv2dOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(CheckNhwc(*context));
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(2, 3));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(ParseActivation(*context, false, &activation_));
    MACE_RETURN_IF_ERROR(CheckFloat4D(*context, 0, "input"));
    MACE_RETURN_IF_ERROR(CheckFloat4D(*context, 1, "filter"));
    MACE_RETURN_IF_ERROR(ReadGroup(*context, &dims_.groups));
    MACE_RETURN_IF_ERROR(ReadDims(*context));
    if (context->num_inputs() == 3) {
      MACE_RETURN_IF_ERROR(CheckBias(*context, 2, dims_.out_c));
    }

    return PrepareForwardWindow(context, &dims_, &rows_, &cols_);
  }

  MaceStatus Run(OpContext *context) override {
    const float *bias =
        context->num_inputs() == 3 ? context->input(2).data<float>() : nullptr;
    GroupedConvByTaps(dims_, rows_, cols_, context->input(0).data<float>(),
                      context->input(1).data<float>(), bias, activation_,
                      context->output(0)->mutable_data<float>(),
                      context->thread_pool());
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

  Activation activation_;
  ConvDims dims_;
  AxisTaps rows_;
  AxisTaps cols_;
};

}  // namespace

void RegisterConv2D(OpRegistry *registry) {
  registry->Register<Conv2dOp>("Conv2D");
}

}  // namespace mace
