// Concat: joins one or more float32 or int32 tensors along an axis.
//
// Argument `axis` (int, default 0; negative counts from the back; MACE's
// own default was 3 for NHWC, its converters always write the argument).
// Inputs must share dtype and rank (>= 1) and agree in every dim but the
// axis; the output's axis dim is the sum of theirs.

#include <limits>
#include <vector>

#include "mace/ops/common/elt_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class ConcatOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(ExpectNotNchw(*context));
    MACE_RETURN_IF_ERROR(
        context->ExpectInputCount(1, std::numeric_limits<int>::max()));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(ExpectFloatOrInt32(*context, 0));
    const Tensor &first = context->input(0);
    int64_t axis_arg = 0;
    MACE_RETURN_IF_ERROR(context->args().GetInt("axis", int64_t{0}, &axis_arg));
    int axis = 0;
    MACE_RETURN_IF_ERROR(NormalizeAxis(*context, "argument 'axis'", axis_arg,
                                       first.rank(), &axis));
    Shape out_shape = first.shape();
    out_shape[axis] = 0;
    for (int i = 0; i < context->num_inputs(); ++i) {
      MACE_RETURN_IF_ERROR(context->ExpectDtype(i, first.dtype()));
      MACE_RETURN_IF_ERROR(CheckShape(*context, i, axis));
      out_shape[axis] += context->input(i).dim(axis);
    }
    rows_ = DimProduct(first.shape(), 0, axis);
    row_bytes_.clear();
    for (int i = 0; i < context->num_inputs(); ++i) {
      const Tensor &t = context->input(i);
      row_bytes_.push_back(DimProduct(t.shape(), axis, t.rank()) *
                           DataTypeSize(t.dtype()));
    }
    Tensor *output = context->output(0);
    output->set_dtype(first.dtype());
    output->set_shape(out_shape);
    joins_last_axis_ = axis == first.rank() - 1;
    return MaceStatus::MACE_SUCCESS;
  }

  bool JoinsInputsAlongLastAxis() const override { return joins_last_axis_; }

  MaceStatus Run(OpContext *context) override {
    ConcatRows(context, rows_, row_bytes_);
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  // Input i must match input 0 in rank and every dim but `axis`.
  static MaceStatus CheckShape(const OpContext &context, int i, int axis) {
    const Shape &expected = context.input(0).shape();
    const Shape &shape = context.input(i).shape();
    bool ok = shape.size() == expected.size();
    for (size_t d = 0; ok && d < shape.size(); ++d) {
      ok = static_cast<int>(d) == axis || shape[d] == expected[d];
    }
    if (!ok) {
      return context.InvalidArgs(
          "input ", i, " '", context.input(i).name(), "' has shape ",
          ShapeToString(shape), ", which does not match input 0's ",
          ShapeToString(expected), " outside axis ", axis);
    }
    return MaceStatus::MACE_SUCCESS;
  }

  int64_t rows_ = 0;
  std::vector<int64_t> row_bytes_;
  bool joins_last_axis_ = false;
};

}  // namespace

void RegisterConcat(OpRegistry *registry) {
  registry->Register<ConcatOp>("Concat");
}

}  // namespace mace
