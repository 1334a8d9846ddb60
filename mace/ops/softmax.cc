// Softmax along one axis (`axis`, default -1):
//   y = exp(x - max) / sum(exp(x - max)),
// or with `use_log` (and always for type LogSoftmax)
//   y = x - max - log(sum(exp(x - max))).
// Subtracting the max keeps exp from overflowing on large inputs.
// The arithmetic runs in the vector kernels (mace/kernels/softmax.h), which
// say how -inf, +inf and NaN inputs come out.

#include "mace/kernels/softmax.h"
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
    shape_.outer = 1;
    shape_.inner = 1;
    for (int i = 0; i < axis; ++i) shape_.outer *= input.dim(i);
    for (int i = axis + 1; i < input.rank(); ++i) {
      shape_.inner *= input.dim(i);
    }
    shape_.length = input.dim(axis);
    Tensor *output = context->output(0);
    output->set_dtype(DT_FLOAT);
    output->set_shape(input.shape());
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    kernels::Softmax(use_log_, shape_, context->input(0).data<float>(),
                     context->output(0)->mutable_data<float>(),
                     context->thread_pool());
    return MaceStatus::MACE_SUCCESS;
  }

  // The kernel reads each value before writing its output, so the output
  // may share the input's buffer.
  OutputMemory output_memory() const override {
    return OutputMemory::kMayReuseInput0;
  }

 protected:
  explicit SoftmaxOp(bool force_log) : force_log_(force_log) {}

 private:
  bool force_log_ = false;
  bool use_log_ = false;
  kernels::SoftmaxShape shape_;
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
