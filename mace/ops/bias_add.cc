// BiasAdd: y = act(x + bias) with bias [C] added along the last (channel)
// axis of x, any rank >= 1.

#include <algorithm>

#include "mace/ops/common/activation_util.h"
#include "mace/ops/common/dense_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class BiasAddOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(2, 2));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(RejectNchw(*context));
    MACE_RETURN_IF_ERROR(ParseActivation(*context, false, &activation_));
    MACE_RETURN_IF_ERROR(ExpectFloatInputs(*context));
    MACE_RETURN_IF_ERROR(ExpectMinRank(*context, 0, 1));
    const Tensor &input = context->input(0);
    channels_ = input.dim(-1);
    MACE_RETURN_IF_ERROR(ExpectVector(*context, 1, "bias", channels_));
    Tensor *output = context->output(0);
    output->set_dtype(DT_FLOAT);
    output->set_shape(input.shape());
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const Tensor &input = context->input(0);
    const float *x = input.data<float>();
    const float *bias = context->input(1).data<float>();
    float *y = context->output(0)->mutable_data<float>();
    const int64_t channels = channels_;
    const int64_t pixels = channels > 0 ? input.size() / channels : 0;
    const Activation act = activation_;
    const int64_t grain = GrainFor(channels);
    context->thread_pool()->ParallelFor(
        0, pixels, grain, [&](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p) {
            const float *xp = x + p * channels;
            float *yp = y + p * channels;
            for (int64_t c = 0; c < channels; ++c) yp[c] = xp[c] + bias[c];
          }
          // The activation kernel on the chunk while it is in cache (a
          // per-value Activate() call does not vectorise).
          ActivateBlock(act, PReluSlope(), 0, y + begin * channels,
                        end - begin, channels, channels);
        });
    return MaceStatus::MACE_SUCCESS;
  }

  OutputMemory output_memory() const override {
    return OutputMemory::kMayReuseInput0;
  }

 private:
  Activation activation_;
  int64_t channels_ = 0;
};

}  // namespace

void RegisterBiasAdd(OpRegistry *registry) {
  registry->Register<BiasAddOp>("BiasAdd");
}

}  // namespace mace
