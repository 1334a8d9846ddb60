// Quantize and Dequantize: float32 <-> asymmetric uint8, as MACE's
// quantized models use them at their borders:
//   real = scale * (q - zero_point).
//
// Quantize: x float32 -> q uint8 of the same shape,
//   q = clamp(round_half_away(zero_point + x * (1 / scale)), 0, 255)
// (NaN -> 0). The parameters come from, in order:
//   1. arguments `scale` (float, > 0) and `zero_point` (int, 0..255, default
//      0);
//   2. the op's quantize_info[0] (what MACE's converter writes), when its
//      scale is > 0;
//   3. otherwise the data itself, at every run (MACE's
//      `find_range_every_time`, which also forces this mode): the range
//      [min(0, min x), max(0, max x)] over the finite values becomes
//      scale = range / 255 and zero_point = round(-min / scale); with
//      `non_zero` (int, 0) the minimum is lowered by one step first and a
//      fractional zero point rounds up, so no value maps to 0 (MACE's
//      AdjustRange).
// The output tensor carries its scale and zero point for consumers.
//
// Dequantize: q uint8 (or int32, MACE's quantized accumulators) -> float32
// of the same shape, y = scale * (q - zero_point). The parameters come from
// arguments `scale` / `zero_point`, else from the input tensor: a weight's
// ConstTensor.scale / zero_point, or what the producing Quantize set.
//
// Both are layout-independent elementwise ops, so a `data_format` argument
// (MACE's converter writes one) is accepted whatever its value.

#include <algorithm>
#include <cmath>
#include <limits>

#include "mace/ops/op_registry.h"

namespace mace {
namespace {

constexpr int64_t kGrain = 4096;

struct QuantParams {
  float scale = 0.0f;
  int32_t zero_point = 0;
};

bool ValidScale(float scale) { return std::isfinite(scale) && scale > 0.0f; }

// Reads `scale` / `zero_point` arguments; *found is false when `scale` is
// absent (then the parameters come from elsewhere).
MaceStatus ParamsFromArgs(const OpContext &context, bool uint8_zero_point,
                          bool *found, QuantParams *params) {
  *found = context.args().Has("scale");
  if (!*found) return MaceStatus::MACE_SUCCESS;
  MACE_RETURN_IF_ERROR(context.args().GetFloat("scale", 0.0f, &params->scale));
  MACE_RETURN_IF_ERROR(
      context.args().GetInt("zero_point", 0, &params->zero_point));
  if (!ValidScale(params->scale)) {
    return context.InvalidArgs("argument 'scale' = ", params->scale,
                               " must be a finite number > 0");
  }
  if (uint8_zero_point &&
      (params->zero_point < 0 || params->zero_point > 255)) {
    return context.InvalidArgs("argument 'zero_point' = ", params->zero_point,
                               " must be in [0, 255] for uint8");
  }
  return MaceStatus::MACE_SUCCESS;
}

uint8_t QuantizeOne(float x, float recip_scale, int32_t zero_point) {
  const float q = std::round(static_cast<float>(zero_point) + x * recip_scale);
  if (!(q > 0.0f)) return 0;  // also NaN
  if (q >= 255.0f) return 255;
  return static_cast<uint8_t>(q);
}

// MACE's AdjustRange for uint8: widen [lo, hi] to include 0 and pick the
// zero point that represents 0 exactly.
QuantParams ParamsFromRange(float lo, float hi, bool non_zero) {
  const float out_max = std::max(0.0f, hi);
  float out_min = std::min(0.0f, lo);
  if (non_zero) out_min = std::min(out_min, lo - (out_max - lo) / 254.0f);
  QuantParams params;
  params.scale = (out_max - out_min) / 255.0f;
  if (!ValidScale(params.scale)) return QuantParams{1.0f, 0};  // all zeros
  const float kEps = 1e-6f;
  if (out_min < -kEps && out_max > kEps) {
    const float zero = -out_min / params.scale;
    params.zero_point = static_cast<int32_t>(std::round(zero));
    if (non_zero && std::fabs(zero - params.zero_point) > kEps) {
      params.zero_point = static_cast<int32_t>(std::ceil(zero));
    }
    params.zero_point = std::min(255, std::max(0, params.zero_point));
  } else if (out_min > -kEps) {
    params.zero_point = 0;
  } else {
    params.zero_point = 255;
  }
  return params;
}

class QuantizeOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 1));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(context->ExpectDtype(0, DT_FLOAT));
    MACE_RETURN_IF_ERROR(CheckTypeArg(*context));
    bool from_args = false;
    MACE_RETURN_IF_ERROR(ParamsFromArgs(*context, true, &from_args, &params_));
    bool every_run = false;
    MACE_RETURN_IF_ERROR(
        context->args().GetBool("find_range_every_time", false, &every_run));
    MACE_RETURN_IF_ERROR(
        context->args().GetBool("non_zero", false, &non_zero_));
    if (!from_args) MACE_RETURN_IF_ERROR(ParamsFromQuantizeInfo(*context));
    dynamic_ = every_run || !ValidScale(params_.scale);
    if (dynamic_) params_ = QuantParams{};
    Tensor *output = context->output(0);
    output->set_dtype(DT_UINT8);
    output->set_shape(context->input(0).shape());
    output->set_scale(params_.scale);
    output->set_zero_point(params_.zero_point);
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const Tensor &input = context->input(0);
    const float *x = input.data<float>();
    const int64_t n = input.size();
    Tensor *output = context->output(0);
    QuantParams params = params_;
    if (dynamic_) {
      params = RangeOf(x, n);
      output->set_scale(params.scale);
      output->set_zero_point(params.zero_point);
    }
    uint8_t *q = output->mutable_data<uint8_t>();
    const float recip_scale = 1.0f / params.scale;
    const int32_t zero_point = params.zero_point;
    context->thread_pool()->ParallelFor(
        0, n, kGrain, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            q[i] = QuantizeOne(x[i], recip_scale, zero_point);
          }
        });
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  // MACE marks the quantized type with `T`; only uint8 is implemented.
  static MaceStatus CheckTypeArg(const OpContext &context) {
    int64_t type = DT_UINT8;
    MACE_RETURN_IF_ERROR(context.args().GetInt("T", int64_t{DT_UINT8}, &type));
    if (type != DT_UINT8) {
      return context.Unsupported("argument 'T' = ", type,
                                 ": only uint8 quantization (DT_UINT8 = ",
                                 static_cast<int>(DT_UINT8), ") is supported");
    }
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus ParamsFromQuantizeInfo(const OpContext &context) {
    if (context.def().quantize_info_size() == 0)
      return MaceStatus::MACE_SUCCESS;
    const QuantizeActivationInfo &info = context.def().quantize_info(0);
    // scale 0 (unset) means "find the range at run time", as in MACE.
    if (info.scale() == 0.0f) return MaceStatus::MACE_SUCCESS;
    if (!ValidScale(info.scale()) || info.zero_point() < 0 ||
        info.zero_point() > 255) {
      return context.InvalidArgs("quantize_info[0] has scale ", info.scale(),
                                 " and zero_point ", info.zero_point(),
                                 " (expected scale > 0, zero_point 0..255)");
    }
    params_.scale = info.scale();
    params_.zero_point = info.zero_point();
    return MaceStatus::MACE_SUCCESS;
  }

  // Range over the finite values only, so that an infinity saturates
  // instead of making the scale infinite.
  QuantParams RangeOf(const float *x, int64_t n) const {
    float lo = std::numeric_limits<float>::infinity();
    float hi = -lo;
    for (int64_t i = 0; i < n; ++i) {
      if (!std::isfinite(x[i])) continue;
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
    if (lo > hi) lo = hi = 0.0f;  // no finite value
    return ParamsFromRange(lo, hi, non_zero_);
  }

  QuantParams params_;
  bool dynamic_ = false;
  bool non_zero_ = false;
};

class DequantizeOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 1));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    const Tensor &input = context->input(0);
    if (input.dtype() != DT_UINT8 && input.dtype() != DT_INT32) {
      return context->InvalidArgs("input 0 '", input.name(),
                                  "' must be DT_UINT8 or DT_INT32, is ",
                                  DataTypeName(input.dtype()));
    }
    MACE_RETURN_IF_ERROR(
        ParamsFromArgs(*context, false, &from_args_, &params_));
    // A weight's parameters are known now; only a Quantize output's may be
    // found at run time (dynamic range, uint8), so Run checks again.
    const bool known_now = input.is_constant() || input.dtype() == DT_INT32;
    if (!from_args_ && known_now && !ValidScale(input.scale())) {
      return context->InvalidArgs(
          "input '", input.name(), "' has quantization scale ", input.scale(),
          " (expected > 0; give the tensor a scale or the op a 'scale' "
          "argument)");
    }
    Tensor *output = context->output(0);
    output->set_dtype(DT_FLOAT);
    output->set_shape(input.shape());
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const Tensor &input = context->input(0);
    QuantParams params = params_;
    if (!from_args_) {
      params.scale = input.scale();
      params.zero_point = input.zero_point();
      if (!ValidScale(params.scale)) {
        return context->RuntimeError("input '", input.name(),
                                     "' has no valid quantization scale (",
                                     params.scale, ")");
      }
    }
    if (input.dtype() == DT_UINT8) {
      Dequantize(context, input.data<uint8_t>(), params);
    } else {
      Dequantize(context, input.data<int32_t>(), params);
    }
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  template <typename T>
  static void Dequantize(OpContext *context, const T *q,
                         const QuantParams &params) {
    float *y = context->output(0)->mutable_data<float>();
    const float scale = params.scale;
    const int64_t zero_point = params.zero_point;
    context->thread_pool()->ParallelFor(
        0, context->input(0).size(), kGrain, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            // int64: an int32 accumulator minus its zero point may overflow.
            y[i] = scale * static_cast<float>(int64_t{q[i]} - zero_point);
          }
        });
  }

  QuantParams params_;
  bool from_args_ = false;
};

}  // namespace

void RegisterQuantize(OpRegistry *registry) {
  registry->Register<QuantizeOp>("Quantize");
  registry->Register<DequantizeOp>("Dequantize");
}

}  // namespace mace
