// Stack: joins N same-shape float32 or int32 tensors along a new axis.
// Unstack: the inverse, one output per index along an existing axis.
//
// Stack: argument `axis` (int, default 0) in [-(r+1), r] for inputs of rank
// r; the output has rank r+1 with dim N at `axis`.
// Unstack: argument `axis` (int, default 0) in [-r, r-1]; the op must have
// exactly as many outputs as the input's dim at `axis`; each output is the
// input's shape without that axis.

#include <limits>
#include <vector>

#include "mace/ops/common/elt_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class StackOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(ExpectNotNchw(*context));
    MACE_RETURN_IF_ERROR(
        context->ExpectInputCount(1, std::numeric_limits<int>::max()));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(ExpectFloatOrInt32(*context, 0));
    const Tensor &first = context->input(0);
    for (int i = 1; i < context->num_inputs(); ++i) {
      MACE_RETURN_IF_ERROR(context->ExpectDtype(i, first.dtype()));
      if (context->input(i).shape() != first.shape()) {
        return context->InvalidArgs(
            "input ", i, " '", context->input(i).name(), "' has shape ",
            ShapeToString(context->input(i).shape()), ", input 0 has ",
            ShapeToString(first.shape()), "; stacked inputs must match");
      }
    }
    int64_t axis_arg = 0;
    MACE_RETURN_IF_ERROR(context->args().GetInt("axis", int64_t{0}, &axis_arg));
    int axis = 0;
    MACE_RETURN_IF_ERROR(NormalizeAxis(*context, "argument 'axis'", axis_arg,
                                       first.rank() + 1, &axis));
    rows_ = DimProduct(first.shape(), 0, axis);
    row_bytes_.assign(context->num_inputs(),
                      DimProduct(first.shape(), axis, first.rank()) *
                          DataTypeSize(first.dtype()));
    Shape out_shape = first.shape();
    out_shape.insert(out_shape.begin() + axis, context->num_inputs());
    Tensor *output = context->output(0);
    output->set_dtype(first.dtype());
    output->set_shape(out_shape);
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    ConcatRows(context, rows_, row_bytes_);
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  int64_t rows_ = 0;
  std::vector<int64_t> row_bytes_;
};

class UnstackOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(ExpectNotNchw(*context));
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 1));
    MACE_RETURN_IF_ERROR(ExpectFloatOrInt32(*context, 0));
    const Tensor &input = context->input(0);
    int64_t axis_arg = 0;
    MACE_RETURN_IF_ERROR(context->args().GetInt("axis", int64_t{0}, &axis_arg));
    int axis = 0;
    MACE_RETURN_IF_ERROR(NormalizeAxis(*context, "argument 'axis'", axis_arg,
                                       input.rank(), &axis));
    if (context->num_outputs() != input.dim(axis)) {
      return context->InvalidArgs("has ", context->num_outputs(),
                                  " outputs; unstacking axis ", axis,
                                  " of shape ", ShapeToString(input.shape()),
                                  " gives ", input.dim(axis));
    }
    rows_ = DimProduct(input.shape(), 0, axis);
    row_bytes_.assign(context->num_outputs(),
                      DimProduct(input.shape(), axis + 1, input.rank()) *
                          DataTypeSize(input.dtype()));
    Shape out_shape = input.shape();
    out_shape.erase(out_shape.begin() + axis);
    for (int i = 0; i < context->num_outputs(); ++i) {
      context->output(i)->set_dtype(input.dtype());
      context->output(i)->set_shape(out_shape);
    }
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    SplitRows(context, rows_, row_bytes_);
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  int64_t rows_ = 0;
  std::vector<int64_t> row_bytes_;
};

}  // namespace

void RegisterStack(OpRegistry *registry) {
  registry->Register<StackOp>("Stack");
  registry->Register<UnstackOp>("Unstack");
}

}  // namespace mace
