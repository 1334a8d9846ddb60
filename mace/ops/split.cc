// Split: cuts a float32 or int32 tensor along an axis into as many pieces
// as the op has outputs.
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
    const int64_t inner_bytes =
        DimProduct(input.shape(), axis + 1, input.rank()) *
        DataTypeSize(input.dtype());
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
    SplitRows(context, rows_, row_bytes_);
    return MaceStatus::MACE_SUCCESS;
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
  std::vector<int64_t> row_bytes_;
};

}  // namespace

void RegisterSplit(OpRegistry *registry) {
  registry->Register<SplitOp>("Split");
}

}  // namespace mace
