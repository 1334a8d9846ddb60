// Activation: y = f(x) elementwise. PRELU takes its per-channel slopes as a
// second input, broadcast along the last (channel) axis of NHWC data.
// RELU, RELUX, LEAKYRELU, PRELU, SIGMOID and TANH run in the vector kernels
// (mace/kernels/activation.h); the others in the loop below over
// Activate (activation_util.h), which defines them all.

#include "mace/ops/common/activation_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class ActivationOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(ParseActivation(*context, true, &activation_));
    const bool prelu = activation_.type == ActivationType::kPRelu;
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(prelu ? 2 : 1, 2));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(context->ExpectDtype(0, DT_FLOAT));
    const Tensor &input = context->input(0);
    if (prelu) {
      MACE_RETURN_IF_ERROR(context->ExpectDtype(1, DT_FLOAT));
      const Tensor &alpha = context->input(1);
      const int64_t channels = input.rank() > 0 ? input.dim(-1) : 1;
      if (alpha.size() != channels && alpha.size() != 1) {
        return context->InvalidArgs("PRELU slope '", alpha.name(), "' has ",
                                    alpha.size(), " values, expected 1 or ",
                                    channels, " (the channel count)");
      }
    }
    Tensor *output = context->output(0);
    output->set_dtype(DT_FLOAT);
    output->set_shape(input.shape());
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const Tensor &input = context->input(0);
    const float *x = input.data<float>();
    float *y = context->output(0)->mutable_data<float>();
    const int64_t n = input.size();
    PReluSlope slope;
    if (activation_.type == ActivationType::kPRelu) {
      slope.values = context->input(1).data<float>();
      slope.size = context->input(1).size();
    }
    kernels::ActivationParams params;
    if (ToKernelActivation(activation_, slope, &params)) {
      const int64_t channels = slope.size > 1 ? slope.size : 1;
      kernels::ActivateChannels(params, channels, x, y, n,
                                context->thread_pool());
      return MaceStatus::MACE_SUCCESS;
    }
    const Activation act = activation_;
    context->thread_pool()->ParallelFor(
        0, n, 4096, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) y[i] = Activate(act, x[i]);
        });
    return MaceStatus::MACE_SUCCESS;
  }

  OutputMemory output_memory() const override {
    return OutputMemory::kMayReuseInput0;
  }

 private:
  Activation activation_;
};

}  // namespace

void RegisterActivation(OpRegistry *registry) {
  registry->Register<ActivationOp>("Activation");
}

}  // namespace mace
