// Fill: a tensor of a given shape with every element set to one value.
//
// Inputs: `shape`, a constant int32 1-D tensor of non-negative dims; `value`,
// a one-element float32 or int32 tensor (may be computed at run time). The
// output has shape `shape` and the dtype of `value`.

#include <algorithm>

#include "mace/ops/op_registry.h"

namespace mace {
namespace {

template <typename T>
void FillWith(T *y, int64_t n, T value, ThreadPool *pool) {
  pool->ParallelFor(0, n, 16384, [&](int64_t begin, int64_t end) {
    std::fill(y + begin, y + end, value);
  });
}

class FillOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(2, 2));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(context->ExpectConstant(0));
    MACE_RETURN_IF_ERROR(context->ExpectDtype(0, DT_INT32));
    MACE_RETURN_IF_ERROR(context->ExpectRank(0, 1));
    const Tensor &shape_tensor = context->input(0);
    const Tensor &value = context->input(1);
    if (value.dtype() != DT_FLOAT && value.dtype() != DT_INT32) {
      return context->InvalidArgs("value input '", value.name(),
                                  "' must be DT_FLOAT or DT_INT32, is ",
                                  DataTypeName(value.dtype()));
    }
    if (value.size() != 1) {
      return context->InvalidArgs("value input '", value.name(),
                                  "' must hold one value, has shape ",
                                  ShapeToString(value.shape()));
    }
    const int32_t *dims = shape_tensor.data<int32_t>();
    Shape out_shape(dims, dims + shape_tensor.size());
    if (ShapeElementCount(out_shape) < 0) {
      return context->InvalidArgs("shape input '", shape_tensor.name(),
                                  "' holds ", ShapeToString(out_shape),
                                  ", not a valid shape (negative dim or "
                                  "too many elements)");
    }
    Tensor *output = context->output(0);
    output->set_dtype(value.dtype());
    output->set_shape(out_shape);
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const Tensor &value = context->input(1);
    Tensor *output = context->output(0);
    const int64_t n = output->size();
    if (value.dtype() == DT_INT32) {
      FillWith(output->mutable_data<int32_t>(), n, value.data<int32_t>()[0],
               context->thread_pool());
    } else {
      FillWith(output->mutable_data<float>(), n, value.data<float>()[0],
               context->thread_pool());
    }
    return MaceStatus::MACE_SUCCESS;
  }
};

}  // namespace

void RegisterFill(OpRegistry *registry) { registry->Register<FillOp>("Fill"); }

}  // namespace mace
