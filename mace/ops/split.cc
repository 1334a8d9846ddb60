// Split: cuts a float32 or int32 tensor along an axis into as many pieces
// as the op has outputs. Along the last axis (channels in NHWC) each
// output is a range of it: a ChannelShuffle before may write the pieces
// itself (Operation::TakesLastAxisRange), and output 0 may be written
// straight into a channel Concat (WritesStridedOutput), as ShuffleNet's
// x1, x2 = split(shuffled); concat(x1, branch(x2)) has it.
//
// Arguments: `axis` (int, default 0; negative counts from the back);
// `split` (ints, optional): the size of each piece along the axis, one per
// output, each >= 0, summing to the axis dim. Without `split` the axis dim
// must divide evenly by the output count.

#include <vector>

#include "mace/ops/common/elt_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class SplitOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(ExpectNotNchw(*context));
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 1));
    MACE_RETURN_IF_ERROR(ExpectFloatOrInt32(*context, 0));
    if (context->num_outputs() < 1) {
      return context->InvalidArgs("expects at least 1 output");
    }
    const Tensor &input = context->input(0);
    int64_t axis_arg = 0;
    MACE_RETURN_IF_ERROR(context->args().GetInt("axis", int64_t{0}, &axis_arg));
    int axis = 0;
    MACE_RETURN_IF_ERROR(NormalizeAxis(*context, "argument 'axis'", axis_arg,
                                       input.rank(), &axis));
    std::vector<int64_t> sizes;
    MACE_RETURN_IF_ERROR(PieceSizes(*context, input.dim(axis), &sizes));

    rows_ = DimProduct(input.shape(), 0, axis);
    element_bytes_ = DataTypeSize(input.dtype());
    const int64_t inner_bytes =
        DimProduct(input.shape(), axis + 1, input.rank()) * element_bytes_;
    last_axis_ = axis == input.rank() - 1;
    row_bytes_.clear();
    for (int i = 0; i < context->num_outputs(); ++i) {
      Shape shape = input.shape();
      shape[axis] = sizes[i];
      Tensor *output = context->output(i);
      output->set_dtype(input.dtype());
      output->set_shape(shape);
      row_bytes_.push_back(sizes[i] * inner_bytes);
    }
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    SplitRows(context, rows_, row_bytes_,
              context->output_row_stride() * element_bytes_);
    return MaceStatus::MACE_SUCCESS;
  }

  // A row of output 0 is a run of its last axis only when the split is
  // along that axis.
  bool WritesStridedOutput() const override { return last_axis_; }

  bool TakesLastAxisRange(int output, int64_t *begin,
                          int64_t *end) const override {
    if (!last_axis_ || output < 0 ||
        output >= static_cast<int>(row_bytes_.size())) {
      return false;
    }
    // Along the last axis a piece's row is its values alone.
    *begin = 0;
    for (int i = 0; i < output; ++i) *begin += row_bytes_[i] / element_bytes_;
    *end = *begin + row_bytes_[output] / element_bytes_;
    return true;
  }

 private:
  static MaceStatus PieceSizes(const OpContext &context, int64_t dim,
                               std::vector<int64_t> *sizes) {
    const int pieces = context.num_outputs();
    MACE_RETURN_IF_ERROR(context.args().GetInts("split", {}, sizes));
    if (sizes->empty()) {
      if (dim % pieces != 0) {
        return context.InvalidArgs("axis dim ", dim, " does not divide into ",
                                   pieces,
                                   " equal pieces; give argument 'split'");
      }
      sizes->assign(pieces, dim / pieces);
      return MaceStatus::MACE_SUCCESS;
    }
    int64_t total = 0;
    bool in_range = true;
    for (int64_t s : *sizes) {
      in_range = in_range && s >= 0 && s <= dim;
      total += in_range ? s : 0;
    }
    if (static_cast<int>(sizes->size()) != pieces || !in_range ||
        total != dim) {
      return context.InvalidArgs("argument 'split' must hold ", pieces,
                                 " sizes >= 0 summing to the axis dim ", dim,
                                 ", got ", ShapeToString(*sizes));
    }
    return MaceStatus::MACE_SUCCESS;
  }

  int64_t rows_ = 0;
  int64_t element_bytes_ = 4;
  bool last_axis_ = false;
  std::vector<int64_t> row_bytes_;
};

}  // namespace

void RegisterSplit(OpRegistry *registry) {
  registry->Register<SplitOp>("Split");
}

}  // namespace mace
