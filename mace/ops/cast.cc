// Cast: converts float32 <-> int32 (or copies when the types match).
//
// The output type is the op's output_type(0) (the OperatorDef field MACE's
// converter fills) or, when that is absent, the int argument `T` (a
// DataType value: DT_FLOAT=1, DT_INT32=4). float -> int32 truncates toward
// zero as C++ and numpy's astype do; values beyond the int32 range saturate
// and NaN becomes 0 (C++ leaves both undefined). int32 -> float rounds to
// nearest.

#include <cmath>
#include <cstring>
#include <limits>

#include "mace/ops/op_registry.h"

namespace mace {
namespace {

int32_t FloatToInt32(float v) {
  if (std::isnan(v)) return 0;
  if (v <= -2147483648.0f) return std::numeric_limits<int32_t>::min();
  if (v >= 2147483648.0f) return std::numeric_limits<int32_t>::max();
  return static_cast<int32_t>(v);
}

bool IsCastable(DataType type) { return type == DT_FLOAT || type == DT_INT32; }

class CastOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 1));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    const Tensor &input = context->input(0);
    if (!IsCastable(input.dtype())) {
      return context->Unsupported("input 0 '", input.name(),
                                  "' must be DT_FLOAT or DT_INT32, is ",
                                  DataTypeName(input.dtype()));
    }
    MACE_RETURN_IF_ERROR(ParseOutputType(*context, &out_type_));
    Tensor *output = context->output(0);
    output->set_dtype(out_type_);
    output->set_shape(input.shape());
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const Tensor &input = context->input(0);
    Tensor *output = context->output(0);
    const int64_t n = input.size();
    ThreadPool *pool = context->thread_pool();
    if (input.dtype() == out_type_) {
      std::memcpy(output->raw_mutable_data(), input.raw_data(), input.bytes());
    } else if (out_type_ == DT_INT32) {
      const float *x = input.data<float>();
      int32_t *y = output->mutable_data<int32_t>();
      pool->ParallelFor(0, n, 4096, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) y[i] = FloatToInt32(x[i]);
      });
    } else {
      const int32_t *x = input.data<int32_t>();
      float *y = output->mutable_data<float>();
      pool->ParallelFor(0, n, 4096, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) y[i] = static_cast<float>(x[i]);
      });
    }
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  static MaceStatus ParseOutputType(const OpContext &context, DataType *type) {
    int64_t value = DT_INVALID;
    if (context.def().output_type_size() > 0) {
      value = context.def().output_type(0);
    } else if (context.args().Has("T")) {
      MACE_RETURN_IF_ERROR(
          context.args().GetInt("T", int64_t{DT_INVALID}, &value));
    } else {
      return context.InvalidArgs(
          "needs the output type: output_type(0) or argument 'T'");
    }
    if (value != static_cast<int>(value) ||
        !DataType_IsValid(static_cast<int>(value)) ||
        !IsCastable(static_cast<DataType>(value))) {
      return context.Unsupported("output type ", value,
                                 " is not DT_FLOAT (1) or DT_INT32 (4)");
    }
    *type = static_cast<DataType>(value);
    return MaceStatus::MACE_SUCCESS;
  }

  DataType out_type_ = DT_FLOAT;
};

}  // namespace

void RegisterCast(OpRegistry *registry) { registry->Register<CastOp>("Cast"); }

}  // namespace mace
