// LocalResponseNorm (TensorFlow semantics) across channels of NHWC data:
//   sqr_sum[c] = sum of x[c']^2 for c' in [c - depth_radius, c + depth_radius]
//                (clipped to the channel range),
//   y[c] = x[c] / (bias + alpha * sqr_sum[c])^beta.

#include <algorithm>
#include <cmath>

#include "mace/ops/common/dense_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class LocalResponseNormOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 1));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(RejectNchw(*context));
    const OpArgs &args = context->args();
    MACE_RETURN_IF_ERROR(args.GetInt("depth_radius", int64_t{5}, &radius_));
    if (radius_ < 0) {
      return context->InvalidArgs("argument 'depth_radius' = ", radius_,
                                  " must be >= 0");
    }
    MACE_RETURN_IF_ERROR(args.GetFloat("bias", 1.0f, &bias_));
    MACE_RETURN_IF_ERROR(args.GetFloat("alpha", 1.0f, &alpha_));
    MACE_RETURN_IF_ERROR(args.GetFloat("beta", 0.5f, &beta_));
    MACE_RETURN_IF_ERROR(ExpectFloatInputs(*context));
    MACE_RETURN_IF_ERROR(context->ExpectRank(0, 4));
    MACE_RETURN_IF_ERROR(ExpectCountableShape(*context, 0));
    const Tensor &input = context->input(0);
    channels_ = input.dim(3);
    Tensor *output = context->output(0);
    output->set_dtype(DT_FLOAT);
    output->set_shape(input.shape());
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const Tensor &input = context->input(0);
    const float *x = input.data<float>();
    float *y = context->output(0)->mutable_data<float>();
    const int64_t channels = channels_;
    const int64_t pixels = channels > 0 ? input.size() / channels : 0;
    const int64_t grain =
        GrainFor(channels * (2 * std::min<int64_t>(radius_, channels) + 1));
    context->thread_pool()->ParallelFor(
        0, pixels, grain, [&](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p) {
            NormalizePixel(x + p * channels, y + p * channels);
          }
        });
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  void NormalizePixel(const float *x, float *y) const {
    for (int64_t c = 0; c < channels_; ++c) {
      // The radius may exceed the channel count; clip without overflow.
      const int64_t first = c - std::min(radius_, c);
      const int64_t last = c + std::min(radius_, channels_ - 1 - c);
      float sqr_sum = 0.0f;
      for (int64_t k = first; k <= last; ++k) sqr_sum += x[k] * x[k];
      y[c] = x[c] / std::pow(bias_ + alpha_ * sqr_sum, beta_);
    }
  }

  int64_t radius_ = 5;
  float bias_ = 1.0f;
  float alpha_ = 1.0f;
  float beta_ = 0.5f;
  int64_t channels_ = 0;
};

}  // namespace

void RegisterLocalResponseNorm(OpRegistry *registry) {
  registry->Register<LocalResponseNormOp>("LocalResponseNorm");
}

}  // namespace mace
