// Softmax along one axis (`axis`, default -1):
//   y = exp(x - max) / sum(exp(x - max)),
// or with `use_log` (and always for type LogSoftmax)
//   y = x - max - log(sum(exp(x - max))).
// Subtracting the max keeps exp from overflowing on large inputs.

#include <algorithm>
#include <cmath>

#include "mace/ops/common/dense_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class SoftmaxOp : public Operation {
 public:
  SoftmaxOp() = default;

  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 1));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(RejectNchw(*context));
    MACE_RETURN_IF_ERROR(ExpectFloatInputs(*context));
    MACE_RETURN_IF_ERROR(ExpectMinRank(*context, 0, 1));
    bool use_log = false;
    MACE_RETURN_IF_ERROR(context->args().GetBool("use_log", false, &use_log));
    use_log_ = force_log_ || use_log;
    int64_t axis_arg = -1;
    MACE_RETURN_IF_ERROR(
        context->args().GetInt("axis", int64_t{-1}, &axis_arg));
    const Tensor &input = context->input(0);
    int axis = 0;
    MACE_RETURN_IF_ERROR(
        NormalizeAxis(*context, "axis", axis_arg, input.rank(), &axis));
    outer_ = 1;
    inner_ = 1;
    for (int i = 0; i < axis; ++i) outer_ *= input.dim(i);
    for (int i = axis + 1; i < input.rank(); ++i) inner_ *= input.dim(i);
    length_ = input.dim(axis);
    Tensor *output = context->output(0);
    output->set_dtype(DT_FLOAT);
    output->set_shape(input.shape());
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const float *x = context->input(0).data<float>();
    float *y = context->output(0)->mutable_data<float>();
    const int64_t inner = inner_;
    const int64_t length = length_;
    const bool use_log = use_log_;
    const int64_t grain = GrainFor(4 * length);
    // One task per line along the axis (elements `inner` apart).
    context->thread_pool()->ParallelFor(
        0, outer_ * inner, grain, [&](int64_t begin, int64_t end) {
          for (int64_t line = begin; line < end; ++line) {
            const int64_t start =
                (line / inner) * length * inner + line % inner;
            if (use_log) {
              LogSoftmaxLine(x + start, y + start, length, inner);
            } else {
              SoftmaxLine(x + start, y + start, length, inner);
            }
          }
        });
    return MaceStatus::MACE_SUCCESS;
  }

  // Each line reads x[j] before writing y[j] and later reads only y, so
  // the output may share the input's buffer.
  OutputMemory output_memory() const override {
    return OutputMemory::kMayReuseInput0;
  }

 protected:
  explicit SoftmaxOp(bool force_log) : force_log_(force_log) {}

 private:
  static float LineMax(const float *x, int64_t length, int64_t stride) {
    float max_value = x[0];
    for (int64_t j = 1; j < length; ++j) {
      max_value = std::max(max_value, x[j * stride]);
    }
    return max_value;
  }

  static void SoftmaxLine(const float *x, float *y, int64_t length,
                          int64_t stride) {
    if (length == 0) return;
    const float max_value = LineMax(x, length, stride);
    float sum = 0.0f;
    for (int64_t j = 0; j < length; ++j) {
      const float e = std::exp(x[j * stride] - max_value);
      y[j * stride] = e;
      sum += e;
    }
    const float inv_sum = 1.0f / sum;
    for (int64_t j = 0; j < length; ++j) y[j * stride] *= inv_sum;
  }

  static void LogSoftmaxLine(const float *x, float *y, int64_t length,
                             int64_t stride) {
    if (length == 0) return;
    const float max_value = LineMax(x, length, stride);
    float sum = 0.0f;
    for (int64_t j = 0; j < length; ++j) {
      sum += std::exp(x[j * stride] - max_value);
    }
    const float log_sum = std::log(sum);
    for (int64_t j = 0; j < length; ++j) {
      y[j * stride] = (x[j * stride] - max_value) - log_sum;
    }
  }

  bool force_log_ = false;
  bool use_log_ = false;
  int64_t outer_ = 0;
  int64_t inner_ = 0;
  int64_t length_ = 0;
};

// The ONNX / TF op name; same op with use_log forced on.
class LogSoftmaxOp : public SoftmaxOp {
 public:
  LogSoftmaxOp() : SoftmaxOp(true) {}
};

}  // namespace

void RegisterSoftmax(OpRegistry *registry) {
  registry->Register<SoftmaxOp>("Softmax");
  registry->Register<LogSoftmaxOp>("LogSoftmax");
}

}  // namespace mace
