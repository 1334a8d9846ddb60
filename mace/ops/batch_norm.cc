// BatchNorm (inference): y = act(x * s + o) per channel (last axis), where
// with inputs (x, scale, offset) s, o are the folded scale and offset, and
// with (x, scale, offset, mean, var) s = scale / sqrt(var + epsilon) and
// o = offset - mean * s. With a fused PRELU its slope ([C] or [1]) is one
// more, last, input: (x, scale, offset, slope) or (x, scale, offset, mean,
// var, slope).

#include <algorithm>
#include <cmath>

#include "mace/ops/common/activation_util.h"
#include "mace/ops/common/dense_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

// MACE's default.
constexpr float kDefaultEpsilon = 1e-4f;

class BatchNormOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(ParseActivation(*context, true, &activation_));
    const bool prelu = activation_.type == ActivationType::kPRelu;
    // Inputs before a fused PRELU's slope.
    const int params = context->num_inputs() - (prelu ? 1 : 0);
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(3, prelu ? 6 : 5));
    if (params != 3 && params != 5) {
      return context->InvalidArgs(
          "expects 3 inputs (x, scale, offset) or 5 (x, scale, offset, mean, "
          "var)",
          prelu ? ", then the PRELU slope" : "", ", got ",
          context->num_inputs());
    }
    param_count_ = params;
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(RejectNchw(*context));
    MACE_RETURN_IF_ERROR(
        GetNonNegativeFloat(*context, "epsilon", kDefaultEpsilon, &epsilon_));
    MACE_RETURN_IF_ERROR(ExpectFloatInputs(*context));
    MACE_RETURN_IF_ERROR(ExpectMinRank(*context, 0, 1));
    const Tensor &input = context->input(0);
    channels_ = input.dim(-1);
    static const char *const kNames[] = {"x", "scale", "offset", "mean", "var"};
    for (int i = 1; i < param_count_; ++i) {
      MACE_RETURN_IF_ERROR(ExpectVector(*context, i, kNames[i], channels_));
    }
    MACE_RETURN_IF_ERROR(
        CheckFusedPReluSlope(*context, activation_, param_count_, channels_));
    // Folded scale and offset, computed at the start of each Run since the
    // parameters need not be constants.
    context->RequestScratch(2 * channels_ * sizeof(float));
    Tensor *output = context->output(0);
    output->set_dtype(DT_FLOAT);
    output->set_shape(input.shape());
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    float *scale = context->scratch<float>();
    float *offset = scale + channels_;
    FoldParameters(*context, scale, offset);
    const Tensor &input = context->input(0);
    const float *x = input.data<float>();
    float *y = context->output(0)->mutable_data<float>();
    const int64_t channels = channels_;
    const int64_t pixels = channels > 0 ? input.size() / channels : 0;
    const Activation act = activation_;
    const PReluSlope slope =
        act.type == ActivationType::kPRelu
            ? FusedPReluSlope(*context, activation_, param_count_)
            : PReluSlope();
    // The affine part as a plain loop the compiler vectorises, then the
    // activation kernel on the same rows while they are in cache (a
    // per-value Activate() call made DenseNet's BatchNorm+ReLU half of the
    // model's time).
    context->thread_pool()->ParallelFor(
        0, pixels, GrainFor(channels), [&](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p) {
            const float *xp = x + p * channels;
            float *yp = y + p * channels;
            for (int64_t c = 0; c < channels; ++c) {
              yp[c] = xp[c] * scale[c] + offset[c];
            }
          }
          ActivateBlock(act, slope, 0, y + begin * channels, end - begin,
                        channels, channels);
        });
    return MaceStatus::MACE_SUCCESS;
  }

  OutputMemory output_memory() const override {
    return OutputMemory::kMayReuseInput0;
  }

 private:
  void FoldParameters(const OpContext &context, float *scale,
                      float *offset) const {
    const float *in_scale = context.input(1).data<float>();
    const float *in_offset = context.input(2).data<float>();
    if (param_count_ == 3) {
      std::copy(in_scale, in_scale + channels_, scale);
      std::copy(in_offset, in_offset + channels_, offset);
      return;
    }
    const float *mean = context.input(3).data<float>();
    const float *var = context.input(4).data<float>();
    for (int64_t c = 0; c < channels_; ++c) {
      scale[c] = in_scale[c] / std::sqrt(var[c] + epsilon_);
      offset[c] = in_offset[c] - mean[c] * scale[c];
    }
  }

  Activation activation_;
  float epsilon_ = kDefaultEpsilon;
  int64_t channels_ = 0;
  int param_count_ = 3;  // inputs before a fused PRELU's slope: 3 or 5
};

}  // namespace

void RegisterBatchNorm(OpRegistry *registry) {
  registry->Register<BatchNormOp>("BatchNorm");
}

}  // namespace mace
