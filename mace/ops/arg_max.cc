// ArgMax: int32 index of the largest (or, with `argmin`, smallest) value
// along one axis of a float32 or int32 input.
//
// The axis is the int argument `axis` (default 0; negative counts from the
// back) or, when given, a second input: a constant int32 tensor with one
// value. Arguments: `keepdims` (bool, default false as TF; the ONNX
// converter sets true): keep the axis with size 1 instead of dropping it;
// `argmin` (bool, default false); `select_last_index` (bool, default false):
// ties go to the last index instead of the first. NaN values are skipped
// unless the first value along the axis is NaN.

#include <algorithm>
#include <cstdint>
#include <limits>

#include "mace/ops/common/elt_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

// For each (outer, inner) position, the index along the axis whose value
// wins `better(candidate, best)`.
template <typename T, typename Better>
void ArgLoop(const T *x, int32_t *y, int64_t outer, int64_t axis_size,
             int64_t inner, ThreadPool *pool, Better better) {
  const int64_t grain =
      std::max<int64_t>(1, 4096 / std::max<int64_t>(axis_size, 1));
  pool->ParallelFor(0, outer * inner, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t o = p / inner, i = p % inner;
      const T *column = x + o * axis_size * inner + i;
      T best = column[0];
      int32_t best_index = 0;
      for (int64_t k = 1; k < axis_size; ++k) {
        if (better(column[k * inner], best)) {
          best = column[k * inner];
          best_index = static_cast<int32_t>(k);
        }
      }
      y[p] = best_index;
    }
  });
}

template <typename T>
void ArgMaxTyped(const T *x, int32_t *y, int64_t outer, int64_t axis_size,
                 int64_t inner, bool argmin, bool last, ThreadPool *pool) {
  if (argmin) {
    if (last) {
      ArgLoop(x, y, outer, axis_size, inner, pool,
              [](T v, T best) { return v <= best; });
    } else {
      ArgLoop(x, y, outer, axis_size, inner, pool,
              [](T v, T best) { return v < best; });
    }
  } else if (last) {
    ArgLoop(x, y, outer, axis_size, inner, pool,
            [](T v, T best) { return v >= best; });
  } else {
    ArgLoop(x, y, outer, axis_size, inner, pool,
            [](T v, T best) { return v > best; });
  }
}

class ArgMaxOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(ExpectNotNchw(*context));
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 2));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(ExpectFloatOrInt32(*context, 0));
    const Tensor &input = context->input(0);
    const OpArgs &args = context->args();
    bool keepdims = false;
    MACE_RETURN_IF_ERROR(args.GetBool("keepdims", false, &keepdims));
    MACE_RETURN_IF_ERROR(args.GetBool("argmin", false, &argmin_));
    MACE_RETURN_IF_ERROR(
        args.GetBool("select_last_index", false, &select_last_));
    int axis = 0;
    MACE_RETURN_IF_ERROR(ParseAxis(*context, &axis));

    const Shape &shape = input.shape();
    axis_size_ = shape[axis];
    if (axis_size_ == 0 || axis_size_ > std::numeric_limits<int32_t>::max()) {
      return context->InvalidArgs("axis ", axis, " of input '", input.name(),
                                  "' has size ", axis_size_,
                                  ", expected 1 to 2^31-1");
    }
    outer_ = DimProduct(shape, 0, axis);
    inner_ = DimProduct(shape, axis + 1, input.rank());
    Shape out_shape = shape;
    if (keepdims) {
      out_shape[axis] = 1;
    } else {
      out_shape.erase(out_shape.begin() + axis);
    }
    Tensor *output = context->output(0);
    output->set_dtype(DT_INT32);
    output->set_shape(out_shape);
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const Tensor &input = context->input(0);
    int32_t *y = context->output(0)->mutable_data<int32_t>();
    if (input.dtype() == DT_INT32) {
      ArgMaxTyped(input.data<int32_t>(), y, outer_, axis_size_, inner_, argmin_,
                  select_last_, context->thread_pool());
    } else {
      ArgMaxTyped(input.data<float>(), y, outer_, axis_size_, inner_, argmin_,
                  select_last_, context->thread_pool());
    }
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  static MaceStatus ParseAxis(const OpContext &context, int *axis) {
    const int rank = context.input(0).rank();
    int64_t value = 0;
    const char *what = "argument 'axis'";
    if (context.num_inputs() == 2) {
      MACE_RETURN_IF_ERROR(context.ExpectConstant(1));
      MACE_RETURN_IF_ERROR(context.ExpectDtype(1, DT_INT32));
      const Tensor &axis_tensor = context.input(1);
      if (axis_tensor.size() != 1) {
        return context.InvalidArgs("axis input '", axis_tensor.name(),
                                   "' must hold one value, has shape ",
                                   ShapeToString(axis_tensor.shape()));
      }
      value = axis_tensor.data<int32_t>()[0];
      what = "axis input";
    } else {
      MACE_RETURN_IF_ERROR(context.args().GetInt("axis", int64_t{0}, &value));
    }
    return NormalizeAxis(context, what, value, rank, axis);
  }

  bool argmin_ = false;
  bool select_last_ = false;
  int64_t outer_ = 0, axis_size_ = 0, inner_ = 0;
};

}  // namespace

void RegisterArgMax(OpRegistry *registry) {
  registry->Register<ArgMaxOp>("ArgMax");
}

}  // namespace mace
