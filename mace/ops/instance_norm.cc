// InstanceNorm on NHWC data: for each batch n and channel c, normalizes
// over H and W:
//   y = act((x - mean[n,c]) / sqrt(var[n,c] + epsilon) * scale[c] + bias[c]).
// scale and bias (inputs 1 and 2) are used when `affine` is set; `affine`
// defaults to whether they are given (MACE writes it explicitly).

#include <algorithm>
#include <cmath>

#include "mace/ops/common/activation_util.h"
#include "mace/ops/common/dense_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

constexpr float kDefaultEpsilon = 1e-5f;

class InstanceNormOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 3));
    if (context->num_inputs() == 2) {
      return context->InvalidArgs(
          "expects 1 input (x) or 3 (x, scale, bias), got 2");
    }
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(RejectNchw(*context));
    MACE_RETURN_IF_ERROR(ParseActivation(*context, false, &activation_));
    MACE_RETURN_IF_ERROR(
        GetNonNegativeFloat(*context, "epsilon", kDefaultEpsilon, &epsilon_));
    MACE_RETURN_IF_ERROR(context->args().GetBool(
        "affine", context->num_inputs() == 3, &affine_));
    if (affine_ && context->num_inputs() != 3) {
      return context->InvalidArgs(
          "argument 'affine' is set but the scale and bias inputs are "
          "missing");
    }
    MACE_RETURN_IF_ERROR(ExpectFloatInputs(*context));
    MACE_RETURN_IF_ERROR(context->ExpectRank(0, 4));
    MACE_RETURN_IF_ERROR(ExpectCountableShape(*context, 0));
    const Tensor &input = context->input(0);
    batch_ = input.dim(0);
    pixels_ = input.dim(1) * input.dim(2);
    channels_ = input.dim(3);
    if (affine_) {
      MACE_RETURN_IF_ERROR(ExpectVector(*context, 1, "scale", channels_));
      MACE_RETURN_IF_ERROR(ExpectVector(*context, 2, "bias", channels_));
    }
    Tensor *output = context->output(0);
    output->set_dtype(DT_FLOAT);
    output->set_shape(input.shape());
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const float *x = context->input(0).data<float>();
    const float *scale = affine_ ? context->input(1).data<float>() : nullptr;
    const float *bias = affine_ ? context->input(2).data<float>() : nullptr;
    float *y = context->output(0)->mutable_data<float>();
    const int64_t channels = channels_;
    const int64_t grain = GrainFor(3 * pixels_);
    // One task per (n, c) plane; its values are `channels` apart.
    context->thread_pool()->ParallelFor(
        0, batch_ * channels, grain, [&](int64_t begin, int64_t end) {
          for (int64_t plane = begin; plane < end; ++plane) {
            const int64_t n = plane / channels;
            const int64_t c = plane % channels;
            const int64_t start = n * pixels_ * channels + c;
            NormalizePlane(x + start, y + start, scale ? scale[c] : 1.0f,
                           bias ? bias[c] : 0.0f);
          }
        });
    return MaceStatus::MACE_SUCCESS;
  }

  // Each plane is read fully (mean, var) before it is written, element by
  // element, so the output may share the input's buffer.
  OutputMemory output_memory() const override {
    return OutputMemory::kMayReuseInput0;
  }

 private:
  void NormalizePlane(const float *x, float *y, float scale, float bias) const {
    if (pixels_ == 0) return;
    const int64_t step = channels_;
    // Two passes in double: planes can be large.
    double sum = 0.0;
    for (int64_t p = 0; p < pixels_; ++p) sum += x[p * step];
    const double mean = sum / pixels_;
    double sq_sum = 0.0;
    for (int64_t p = 0; p < pixels_; ++p) {
      const double d = x[p * step] - mean;
      sq_sum += d * d;
    }
    const double factor = scale / std::sqrt(sq_sum / pixels_ + epsilon_);
    for (int64_t p = 0; p < pixels_; ++p) {
      // In double: a float mean would be rounded at the scale of x, which
      // can be much coarser than the spread around it.
      const float v = static_cast<float>((x[p * step] - mean) * factor);
      y[p * step] = Activate(activation_, v + bias);
    }
  }

  Activation activation_;
  float epsilon_ = kDefaultEpsilon;
  bool affine_ = false;
  int64_t batch_ = 0;
  int64_t pixels_ = 0;
  int64_t channels_ = 0;
};

}  // namespace

void RegisterInstanceNorm(OpRegistry *registry) {
  registry->Register<InstanceNormOp>("InstanceNorm");
}

}  // namespace mace
