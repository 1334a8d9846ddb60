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
// Multiplier 1 with a 3x3 or 5x5 window, strides 1 or 2 and no dilation
// runs the direct vector kernels (mace/kernels/depthwise.h), a constant
// filter re-laid at load with the taps the kernels run fastest with;
// every other shape the reference loops over taps (conv_util.h), the
// specification.

#include "mace/core/aligned_buffer.h"
#include "mace/kernels/depthwise.h"
#include "mace/ops/common/conv_util.h"
#include "mace/ops/common/depthwise_util.h"
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
    MACE_RETURN_IF_ERROR(ReadDepthwiseConvDims(*context, &dims_));
    if (context->num_inputs() >= 3) {
      MACE_RETURN_IF_ERROR(CheckBias(*context, 2, dims_.out_c));
    }
    MACE_RETURN_IF_ERROR(CheckFusedPReluSlope(
        *context, activation_, kWeightedOpSlopeIndex, dims_.out_c));

    Window2D window;
    Pads2D pads;
    MACE_RETURN_IF_ERROR(PrepareForwardWindow(context, &dims_, &window, &pads));
    PrepareKernel(window, pads);
    // Only the reference path reads the taps.
    if (!use_kernel_) BuildForwardTaps(dims_, window, pads, &rows_, &cols_);
    return LayWeights(*context);
  }

  MaceStatus Run(OpContext *context) override {
    const float *bias =
        context->num_inputs() >= 3 ? context->input(2).data<float>() : nullptr;
    if (use_kernel_) {
      RunKernel(context, bias);
      return MaceStatus::MACE_SUCCESS;
    }
    DepthwiseConvByTaps(
        dims_, rows_, cols_, context->input(0).data<float>(),
        context->input(1).data<float>(), bias, activation_,
        context->output(0)->mutable_data<float>(), context->thread_pool(),
        FusedPReluSlope(*context, activation_, kWeightedOpSlopeIndex));
    return MaceStatus::MACE_SUCCESS;
  }

  int FilterInput() const override { return 1; }

  int64_t MacCount(const OpContext &context) const override {
    return dims_.batch * dims_.out_h * dims_.out_w * dims_.out_c *
           dims_.kernel_h * dims_.kernel_w;
  }

 private:
  // Whether the direct kernel takes this shape; fills shape_ when it does.
  void PrepareKernel(const Window2D &window, const Pads2D &pads) {
    use_kernel_ = false;
    if (dims_.out_c != dims_.in_c) return;
    shape_ = MakeDepthwiseShape(dims_, window, pads);
    use_kernel_ = kernels::DepthwiseKernelSupports(shape_);
  }

  MaceStatus LayWeights(const OpContext &context) {
    laid_weights_ = nullptr;
    owned_weights_ = AlignedArray<float>();
    if (!use_kernel_) return MaceStatus::MACE_SUCCESS;
    return LayDepthwiseFilter(context, context.input(1), &shape_,
                              &owned_weights_, &laid_weights_);
  }

  void RunKernel(OpContext *context, const float *bias) const {
    const PReluSlope slope =
        FusedPReluSlope(*context, activation_, kWeightedOpSlopeIndex);
    kernels::ActivationParams fused;
    const bool in_kernel = ToKernelActivation(activation_, slope, &fused);
    float *y = context->output(0)->mutable_data<float>();
    const float *weights = laid_weights_ != nullptr
                               ? laid_weights_
                               : context->input(1).data<float>();
    kernels::DepthwiseConv2d(shape_, context->input(0).data<float>(), weights,
                             bias, fused, y, context->thread_pool());
    if (!in_kernel) {
      ActivateRowsInPlace(activation_, slope, dims_.out_c, y,
                          dims_.batch * dims_.out_h * dims_.out_w,
                          context->thread_pool());
    }
  }

  Activation activation_;
  ConvDims dims_;
  bool use_kernel_ = false;
  kernels::DepthwiseShape shape_;
  const float *laid_weights_ = nullptr;  // null: the filter input as it is
  AlignedArray<float> owned_weights_;    // laid_weights_ without a store
  AxisTaps rows_;
  AxisTaps cols_;
};

}  // namespace

void RegisterDepthwiseConv2d(OpRegistry *registry) {
  registry->Register<DepthwiseConv2dOp>("DepthwiseConv2d");
}

}  // namespace mace
