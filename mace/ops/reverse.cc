// Reverse: flips the input along the given axes. The axes come as a
// constant int32 input 1 (rank 0 or 1) or as arg `axis` (ints); negative
// values count from the back, repeats are an error, none means a copy.
// Any rank; float32.

#include <vector>

#include "mace/ops/common/move_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class ReverseOp : public StridedViewOp {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 2));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(CheckNhwc(*context));
    MACE_RETURN_IF_ERROR(ExpectFloatOrInt32(*context, 0, false));
    std::vector<int64_t> axes;
    if (context->num_inputs() == 2) {
      MACE_RETURN_IF_ERROR(ReadConstantInts(*context, 1, "axis", &axes));
    } else {
      MACE_RETURN_IF_ERROR(context->args().GetInts("axis", {}, &axes));
    }
    const Tensor &input = context->input(0);
    const int rank = input.rank();
    view().dims = input.shape();
    view().steps = RowMajorStrides(input.shape());
    view().base = 0;
    std::vector<bool> flipped(rank, false);
    for (int64_t a : axes) {
      int axis = 0;
      MACE_RETURN_IF_ERROR(
          NormalizeAxis(*context, "reverse axis", a, rank, &axis));
      if (flipped[axis]) {
        return context->InvalidArgs("reverse axis ", axis, " is repeated");
      }
      flipped[axis] = true;
      // Start at the last index and walk backwards.
      if (view().dims[axis] > 0) {
        view().base += (view().dims[axis] - 1) * view().steps[axis];
      }
      view().steps[axis] = -view().steps[axis];
    }
    return SetOutput(context, input.dtype(), input.shape());
  }
};

}  // namespace

void RegisterReverse(OpRegistry *registry) {
  registry->Register<ReverseOp>("Reverse");
}

}  // namespace mace
