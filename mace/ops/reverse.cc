// Reverse: flips the input along the given axes. The axes come as a
// constant int32 input 1 (rank 0 or 1) or as arg `axis` (ints); negative
// values count from the back, repeats are an error, none means a copy.
// Any rank; float32.

#include <vector>

#include "mace/ops/common/move_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class ReverseOp : public Operation {
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
    view_.dims = input.shape();
    view_.steps = RowMajorStrides(input.shape());
    view_.base = 0;
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
      if (view_.dims[axis] > 0) {
        view_.base += (view_.dims[axis] - 1) * view_.steps[axis];
      }
      view_.steps[axis] = -view_.steps[axis];
    }
    return SetOutput(context, input.dtype(), input.shape());
  }

  MaceStatus Run(OpContext *context) override {
    StridedCopyOp(view_, context);
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  StridedView view_;
};

}  // namespace

void RegisterReverse(OpRegistry *registry) {
  registry->Register<ReverseOp>("Reverse");
}

}  // namespace mace
