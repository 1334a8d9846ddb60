// Crop (Caffe semantics, on NHWC data): inputs (x, reference). Dims before
// `axis` keep x's size; dims from `axis` on take reference's size, starting
// at `offset` in x. Only reference's shape is read.
//
// Args: `axis` (int, default 2, negative counts from the back) counts NHWC
// dims: with the default, H is not cropped but W and C are, so a converter
// from Caffe's NCHW remaps axis and offsets. `offset` (ints): none (all 0),
// one value for every cropped axis, or one per cropped axis. Float32.

#include <vector>

#include "mace/ops/common/move_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class CropOp : public StridedViewOp {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(2, 2));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(CheckNhwc(*context));
    MACE_RETURN_IF_ERROR(ExpectFloatOrInt32(*context, 0, false));
    const Tensor &input = context->input(0);
    const Tensor &reference = context->input(1);
    const int rank = input.rank();
    if (reference.rank() != rank) {
      return context->InvalidArgs("reference input '", reference.name(),
                                  "' has shape ",
                                  ShapeToString(reference.shape()),
                                  ", expected rank ", rank, " like input 0");
    }
    int64_t axis_arg = 2;
    MACE_RETURN_IF_ERROR(context->args().GetInt("axis", int64_t{2}, &axis_arg));
    int axis = 0;
    MACE_RETURN_IF_ERROR(
        NormalizeAxis(*context, "argument 'axis'", axis_arg, rank, &axis));
    std::vector<int64_t> offsets;
    MACE_RETURN_IF_ERROR(context->args().GetInts("offset", {}, &offsets));
    const size_t cropped = static_cast<size_t>(rank - axis);
    if (offsets.size() > 1 && offsets.size() != cropped) {
      return context->InvalidArgs("argument 'offset' has ", offsets.size(),
                                  " values, expected 0, 1 or ", cropped,
                                  " (one per dim from axis ", axis, " on)");
    }
    const std::vector<int64_t> strides = RowMajorStrides(input.shape());
    view().dims = input.shape();
    view().steps = strides;
    view().base = 0;
    for (int i = axis; i < rank; ++i) {
      const int64_t offset =
          offsets.empty() ? 0 : offsets[offsets.size() == 1 ? 0 : i - axis];
      const int64_t size = reference.dim(i);
      if (offset < 0 || offset > input.dim(i) - size) {
        return context->InvalidArgs(
            "crop of dim ", i, " with offset ", offset, " and size ", size,
            " (from reference) is out of range of input shape ",
            ShapeToString(input.shape()));
      }
      view().dims[i] = size;
      view().base += offset * strides[i];
    }
    return SetOutput(context, input.dtype(), view().dims);
  }
};

}  // namespace

void RegisterCrop(OpRegistry *registry) { registry->Register<CropOp>("Crop"); }

}  // namespace mace
