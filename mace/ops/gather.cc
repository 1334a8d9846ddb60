// Gather: picks slices of `params` along an axis by int32 `indices`.
//
// Inputs: params (float32 or int32, rank >= 1), indices (int32, any rank;
// a constant or computed at run time). Argument `axis` (int, default 0;
// negative counts from the back). Output shape:
// params[:axis] + indices.shape + params[axis+1:]. A negative index counts
// once from the end of the axis (ONNX); an index still out of range is an
// error (at init for constant indices, else from Run).

#include <algorithm>
#include <cstring>

#include "mace/ops/common/elt_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class GatherOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(ExpectNotNchw(*context));
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(2, 2));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(ExpectFloatOrInt32(*context, 0));
    MACE_RETURN_IF_ERROR(context->ExpectDtype(1, DT_INT32));
    const Tensor &params = context->input(0);
    const Tensor &indices = context->input(1);
    int64_t axis_arg = 0;
    MACE_RETURN_IF_ERROR(context->args().GetInt("axis", int64_t{0}, &axis_arg));
    int axis = 0;
    MACE_RETURN_IF_ERROR(NormalizeAxis(*context, "argument 'axis'", axis_arg,
                                       params.rank(), &axis));
    axis_ = axis;
    outer_ = DimProduct(params.shape(), 0, axis);
    axis_size_ = params.dim(axis);
    slice_bytes_ = DimProduct(params.shape(), axis + 1, params.rank()) *
                   DataTypeSize(params.dtype());
    num_indices_ = indices.size();
    if (indices.has_data()) {
      MACE_RETURN_IF_ERROR(
          CheckIndices(*context, MaceStatus::MACE_INVALID_ARGS));
    }

    Shape out_shape(params.shape().begin(), params.shape().begin() + axis);
    out_shape.insert(out_shape.end(), indices.shape().begin(),
                     indices.shape().end());
    out_shape.insert(out_shape.end(), params.shape().begin() + axis + 1,
                     params.shape().end());
    if (ShapeElementCount(out_shape) < 0) {
      return context->InvalidArgs("output shape ", ShapeToString(out_shape),
                                  " is too large");
    }
    Tensor *output = context->output(0);
    output->set_dtype(params.dtype());
    output->set_shape(out_shape);
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    MACE_RETURN_IF_ERROR(
        CheckIndices(*context, MaceStatus::MACE_RUNTIME_ERROR));
    const uint8_t *params =
        static_cast<const uint8_t *>(context->input(0).raw_data());
    const int32_t *indices = context->input(1).data<int32_t>();
    uint8_t *out =
        static_cast<uint8_t *>(context->output(0)->raw_mutable_data());
    const int64_t n = num_indices_, axis_size = axis_size_;
    const int64_t slice = slice_bytes_;
    if (slice == 0) return MaceStatus::MACE_SUCCESS;
    const int64_t grain = std::max<int64_t>(1, 16384 / slice);
    context->thread_pool()->ParallelFor(
        0, outer_ * n, grain, [&](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p) {
            const int64_t o = p / n;
            int64_t index = indices[p % n];
            if (index < 0) index += axis_size;
            std::memcpy(out + p * slice,
                        params + (o * axis_size + index) * slice, slice);
          }
        });
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  // `code`: invalid args when the indices are constants checked at init, a
  // run-time error when they came with the run's data.
  MaceStatus CheckIndices(const OpContext &context,
                          MaceStatus::Code code) const {
    const int32_t *indices = context.input(1).data<int32_t>();
    for (int64_t k = 0; k < num_indices_; ++k) {
      if (indices[k] < -axis_size_ || indices[k] >= axis_size_) {
        const MaceStatus error = context.RuntimeError(
            "index ", indices[k], " at position ", k, " of indices '",
            context.input(1).name(), "' is out of range for axis ", axis_,
            " of size ", axis_size_);
        return MaceStatus(code, error.information());
      }
    }
    return MaceStatus::MACE_SUCCESS;
  }

  int axis_ = 0;
  int64_t outer_ = 0, axis_size_ = 0, slice_bytes_ = 0, num_indices_ = 0;
};

}  // namespace

void RegisterGather(OpRegistry *registry) {
  registry->Register<GatherOp>("Gather");
}

}  // namespace mace
