// FullyConnected: y[n, o] = act(sum_k x[n, k] * w[o, k] + bias[o]).
// The input [N, ...] is flattened per batch to K values in its stored
// (NHWC) order; the weight is [Cout, K]; the output is [N, Cout]. Weight
// and bias may be constants or values fed at run time (ONNX models may give
// them as graph inputs): only their shapes are needed in Prepare.
// A constant weight is packed at Prepare for the packed SGEMM
// (mace/kernels/sgemm.h), or, for one sample, read in place by the
// matrix-vector kernel (mace/kernels/gemv.h); a weight fed at run time
// takes the reference loop, which is also the specification both kernels
// are tested against.

#include <algorithm>

#include "mace/kernels/gemv.h"
#include "mace/kernels/sgemm.h"
#include "mace/ops/common/activation_util.h"
#include "mace/ops/common/dense_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class FullyConnectedOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(ParseActivation(*context, true, &activation_));
    MACE_RETURN_IF_ERROR(
        ExpectWeightedOpInputs(*context, activation_, "weight"));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(RejectNchw(*context));
    MACE_RETURN_IF_ERROR(ExpectFloatInputs(*context));
    MACE_RETURN_IF_ERROR(ExpectMinRank(*context, 0, 2));
    MACE_RETURN_IF_ERROR(context->ExpectRank(1, 2));
    MACE_RETURN_IF_ERROR(ExpectCountableShape(*context, 1));

    const Tensor &input = context->input(0);
    const Tensor &weight = context->input(1);
    batch_ = input.dim(0);
    depth_ = 1;
    for (int i = 1; i < input.rank(); ++i) depth_ *= input.dim(i);
    out_channels_ = weight.dim(0);
    if (weight.dim(1) != depth_) {
      return context->InvalidArgs(
          "weight '", weight.name(), "' has shape ",
          ShapeToString(weight.shape()), ", expected [Cout, ", depth_,
          "]: input '", input.name(), "' ", ShapeToString(input.shape()),
          " flattens to K = ", depth_, " values per batch");
    }
    if (context->num_inputs() >= 3) {
      MACE_RETURN_IF_ERROR(ExpectVector(*context, 2, "bias", out_channels_));
    }
    MACE_RETURN_IF_ERROR(CheckFusedPReluSlope(
        *context, activation_, kWeightedOpSlopeIndex, out_channels_));
    Tensor *output = context->output(0);
    output->set_dtype(DT_FLOAT);
    output->set_shape({batch_, out_channels_});
    packed_weight_ = kernels::PackedMatrixB();
    // One sample reads each weight once: the matrix-vector kernel, on the
    // weights in place (no packed copy).
    use_gemv_ = batch_ == 1 && weight.is_constant() && weight.has_data();
    if (!use_gemv_ && weight.is_constant() && weight.has_data() &&
        context->will_run()) {
      if (!kernels::PackB(weight.data<float>(), depth_, out_channels_, true,
                          kernels::SelectedSgemmIsa(),
                          context->packed_weights(), &packed_weight_,
                          context->thread_pool())) {
        return context->OutOfResources(
            "cannot allocate the packed copy of weight '", weight.name(), "'");
      }
    }
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const float *x = context->input(0).data<float>();
    const float *bias =
        context->num_inputs() >= 3 ? context->input(2).data<float>() : nullptr;
    const PReluSlope slope =
        FusedPReluSlope(*context, activation_, kWeightedOpSlopeIndex);
    float *y = context->output(0)->mutable_data<float>();
    if (use_gemv_) {
      kernels::Gemv(context->input(1).data<float>(), x, bias, out_channels_,
                    depth_, y, context->thread_pool());
      ActivateBlock(activation_, slope, 0, y, 1, out_channels_, out_channels_);
      return MaceStatus::MACE_SUCCESS;
    }
    if (!packed_weight_.empty()) {
      const Activation act = activation_;
      float clamp[2];
      if (ToClampBounds(act, clamp)) {
        kernels::SgemmClamped(batch_, out_channels_, depth_, x, depth_,
                              packed_weight_, bias, clamp, y, out_channels_,
                              context->thread_pool());
        return MaceStatus::MACE_SUCCESS;
      }
      kernels::Sgemm(batch_, out_channels_, depth_, x, depth_, packed_weight_,
                     bias, y, out_channels_, context->thread_pool(),
                     [&](float *c, int64_t rows, int64_t cols, int64_t ldc) {
                       ActivateBlock(act, slope, (c - y) % ldc, c, rows, cols,
                                     ldc);
                     });
      return MaceStatus::MACE_SUCCESS;
    }
    const float *w = context->input(1).data<float>();
    const int64_t depth = depth_;
    const int64_t out_channels = out_channels_;
    const Activation act = activation_;
    // One task per output value; each sums its K products in a fixed order,
    // so results do not depend on the thread count.
    const int64_t grain = GrainFor(depth);
    context->thread_pool()->ParallelFor(
        0, batch_ * out_channels, grain, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            const int64_t n = i / out_channels;
            const int64_t o = i % out_channels;
            const float *xr = x + n * depth;
            const float *wr = w + o * depth;
            float sum = 0.0f;
            for (int64_t k = 0; k < depth; ++k) sum += xr[k] * wr[k];
            if (bias != nullptr) sum += bias[o];
            float value = Activate(act, sum);
            if (slope.values != nullptr && value < 0.0f) {
              value *= slope.at(o);
            }
            y[i] = value;
          }
        });
    return MaceStatus::MACE_SUCCESS;
  }

  int64_t MacCount(const OpContext &context) const override {
    return batch_ * out_channels_ * depth_;
  }

 private:
  Activation activation_;
  int64_t batch_ = 0;
  int64_t depth_ = 0;
  int64_t out_channels_ = 0;
  bool use_gemv_ = false;
  kernels::PackedMatrixB packed_weight_;  // empty: GEMV or reference path
};

}  // namespace

void RegisterFullyConnected(OpRegistry *registry) {
  registry->Register<FullyConnectedOp>("FullyConnected");
}

}  // namespace mace
