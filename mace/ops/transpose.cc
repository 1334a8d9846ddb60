// Transpose: output dim i is input dim dims[i]. Arg `dims` (ints, MACE's
// name) is a permutation of 0..rank-1; missing or empty reverses the dims
// (as numpy and ONNX do). Any rank; float32 and int32.

#include <vector>

#include "mace/ops/common/move_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class TransposeOp : public StridedViewOp {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 1));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(CheckNhwc(*context));
    MACE_RETURN_IF_ERROR(ExpectFloatOrInt32(*context, 0, true));
    const Tensor &input = context->input(0);
    const int rank = input.rank();
    std::vector<int64_t> perm;
    MACE_RETURN_IF_ERROR(context->args().GetInts("dims", {}, &perm));
    if (perm.empty()) {
      for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
    }
    if (static_cast<int>(perm.size()) != rank) {
      return context->InvalidArgs("argument 'dims' ", ShapeToString(perm),
                                  " must have one value per input dim (", rank,
                                  ")");
    }
    const std::vector<int64_t> strides = RowMajorStrides(input.shape());
    std::vector<bool> used(rank, false);
    view().dims.clear();
    view().steps.clear();
    view().base = 0;
    for (int64_t p : perm) {
      if (p < 0 || p >= rank || used[p]) {
        return context->InvalidArgs("argument 'dims' ", ShapeToString(perm),
                                    " is not a permutation of 0..", rank - 1);
      }
      used[p] = true;
      view().dims.push_back(input.dim(static_cast<int>(p)));
      view().steps.push_back(strides[p]);
    }
    return SetOutput(context, input.dtype(), view().dims);
  }
};

}  // namespace

void RegisterTranspose(OpRegistry *registry) {
  registry->Register<TransposeOp>("Transpose");
}

}  // namespace mace
