// Shape: a 1-D int32 tensor holding input 0's dims (rank values; an empty
// tensor for a scalar input). Only the input's shape is read, never its
// data.

#include <limits>

#include "mace/ops/common/elt_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class ShapeOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(ExpectNotNchw(*context));
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 1));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    const Tensor &input = context->input(0);
    for (int64_t d : input.shape()) {
      if (d > std::numeric_limits<int32_t>::max()) {
        return context->Unsupported("input '", input.name(), "' has shape ",
                                    ShapeToString(input.shape()),
                                    ", a dim beyond int32");
      }
    }
    Tensor *output = context->output(0);
    output->set_dtype(DT_INT32);
    output->set_shape({static_cast<int64_t>(input.rank())});
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const Shape &shape = context->input(0).shape();
    int32_t *y = context->output(0)->mutable_data<int32_t>();
    for (size_t i = 0; i < shape.size(); ++i) {
      y[i] = static_cast<int32_t>(shape[i]);
    }
    return MaceStatus::MACE_SUCCESS;
  }
};

}  // namespace

void RegisterShape(OpRegistry *registry) {
  registry->Register<ShapeOp>("Shape");
}

}  // namespace mace
