// Eltwise: elementwise unary and binary math, binary ops with numpy
// broadcasting of two inputs of any rank.
//
// Argument `type` (int), MACE's codes 0..13 and this project's 15..28:
//   SUM=0 (with `coeff` [c0, c1]: c0*a + c1*b), SUB=1, PROD=2, DIV=3,
//   MIN=4, MAX=5, NEG=6, ABS=7, SQR_DIFF=8 ((a-b)^2), POW=9, EQUAL=10,
//   FLOOR_DIV=11, CLIP=12 (`coeff` [min, max]), SIGN=13, SQRT=15, RSQRT=16,
//   EXP=17, LOG=18, ERF=19, RECIPROCAL=20, FLOOR=21, CEIL=22, GREATER=23,
//   LESS=24, NOT_EQUAL=25, ROUND=26 (half to even), SIN=27, COS=28.
// A binary op given one input takes its other operand from `scalar_input`
// (float, default 1 as MACE) at position `scalar_input_index` (1, the
// default: x op s; 0: s op x). Comparisons give 1/0 in the input dtype, as
// MACE. int32 arithmetic wraps around (two's complement) instead of
// overflowing; int32 DIV truncates toward zero as C, FLOOR_DIV rounds down,
// and a zero divisor is a run-time error.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "mace/kernels/activation.h"
#include "mace/kernels/binary_channels.h"
#include "mace/ops/common/broadcast_util.h"
#include "mace/ops/common/elt_util.h"
#include "mace/ops/eltwise_type.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

// What each type code is: its name for messages, whether it takes one
// operand, whether it has an int32 kernel. Code 14 (MACE's NONE) is unused.
struct TypeInfo {
  const char *name;
  bool unary;
  bool int32;
};

constexpr TypeInfo kTypeInfo[] = {
    {"SUM", false, true},        {"SUB", false, true},
    {"PROD", false, true},       {"DIV", false, true},
    {"MIN", false, true},        {"MAX", false, true},
    {"NEG", true, true},         {"ABS", true, true},
    {"SQR_DIFF", false, false},  {"POW", false, false},
    {"EQUAL", false, true},      {"FLOOR_DIV", false, true},
    {"CLIP", true, false},       {"SIGN", true, true},
    {nullptr, false, false},     {"SQRT", true, false},
    {"RSQRT", true, false},      {"EXP", true, false},
    {"LOG", true, false},        {"ERF", true, false},
    {"RECIPROCAL", true, false}, {"FLOOR", true, false},
    {"CEIL", true, false},       {"GREATER", false, true},
    {"LESS", false, true},       {"NOT_EQUAL", false, true},
    {"ROUND", true, false},      {"SIN", true, false},
    {"COS", true, false},
};
constexpr int kNumTypes = sizeof(kTypeInfo) / sizeof(kTypeInfo[0]);

bool IsKnownType(int64_t type) {
  return type >= 0 && type < kNumTypes && kTypeInfo[type].name != nullptr;
}

const char *TypeName(int type) { return kTypeInfo[type].name; }

// Two's complement wrap-around of an exact int64 result.
int32_t Wrap(int64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(v));
}

// Rounds halves to even whatever the FPU rounding mode is (std::rint and
// std::nearbyint follow the mode the host application set). In double so
// that x - floor(x) is exact.
float RoundHalfEven(float value) {
  if (!std::isfinite(value)) return value;
  const double x = value;
  const double f = std::floor(x);
  const double diff = x - f;
  if (diff < 0.5) return static_cast<float>(f);
  if (diff > 0.5) return static_cast<float>(f + 1.0);
  return static_cast<float>(std::fmod(f, 2.0) == 0.0 ? f : f + 1.0);
}

template <typename T>
T Sign(T x) {
  return static_cast<T>((T(0) < x) - (x < T(0)));
}

template <typename T, typename F>
void UnaryLoop(const T *x, T *y, int64_t n, ThreadPool *pool, F f) {
  pool->ParallelFor(0, n, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = f(x[i]);
  });
}

// y[j0, j1) = f(a, b) along one output row whose operands start at a and b
// and step by sa and sb. The common stride patterns get their own loops,
// which the compiler vectorises: same-shape operands (1, 1) and a
// broadcast scalar or per-row value on either side (1, 0) / (0, 1).
template <typename T, typename F>
inline void BinaryRowPiece(const T *a, int64_t sa, const T *b, int64_t sb,
                           T *out, int64_t j0, int64_t j1, F f) {
  if (sa == 1 && sb == 1) {
    for (int64_t j = j0; j < j1; ++j) out[j] = f(a[j], b[j]);
  } else if (sa == 1 && sb == 0) {
    const T q = b[0];
    for (int64_t j = j0; j < j1; ++j) out[j] = f(a[j], q);
  } else if (sa == 0 && sb == 1) {
    const T p = a[0];
    for (int64_t j = j0; j < j1; ++j) out[j] = f(p, b[j]);
  } else {
    for (int64_t j = j0; j < j1; ++j) out[j] = f(a[j * sa], b[j * sb]);
  }
}

// y = f(a, b) over the broadcast output, row by row. Rows are cut into
// pieces of at most kPiece values, so that one long row (same-shape
// operands merge into a single row) is still shared among the threads.
template <typename T, typename F>
void BinaryLoop(const BroadcastPlan &plan, const T *a, const T *b, T *y,
                ThreadPool *pool, F f) {
  constexpr int64_t kPiece = 4096;
  const int64_t inner = plan.inner();
  const int64_t sa = plan.a_strides.back();
  const int64_t sb = plan.b_strides.back();
  const int64_t pieces_per_row =
      std::max<int64_t>(1, (inner + kPiece - 1) / kPiece);
  const int64_t grain =
      std::max<int64_t>(1, kPiece / std::max<int64_t>(inner, 1));
  if (pieces_per_row == 1) {
    pool->ParallelFor(0, plan.rows(), grain, [&](int64_t begin, int64_t end) {
      BroadcastRowCursor cursor(plan, begin);
      for (int64_t row = begin; row < end; ++row, cursor.Next()) {
        BinaryRowPiece(a + cursor.a_offset(), sa, b + cursor.b_offset(), sb,
                       y + row * inner, 0, inner, f);
      }
    });
    return;
  }
  pool->ParallelFor(
      0, plan.rows() * pieces_per_row, 1, [&](int64_t begin, int64_t end) {
        for (int64_t piece = begin; piece < end; ++piece) {
          const int64_t row = piece / pieces_per_row;
          const int64_t j0 = (piece % pieces_per_row) * kPiece;
          const int64_t j1 = std::min(inner, j0 + kPiece);
          const BroadcastRowCursor cursor(plan, row);
          BinaryRowPiece(a + cursor.a_offset(), sa, b + cursor.b_offset(), sb,
                         y + row * inner, j0, j1, f);
        }
      });
}

void RunFloatUnary(int type, float clip_min, float clip_max, const float *x,
                   float *y, int64_t n, ThreadPool *pool) {
  switch (type) {
    case kNeg:
      UnaryLoop(x, y, n, pool, [](float v) { return -v; });
      break;
    case kAbs:
      UnaryLoop(x, y, n, pool, [](float v) { return std::fabs(v); });
      break;
    case kSign:
      UnaryLoop(x, y, n, pool, [](float v) { return Sign(v); });
      break;
    case kClip:
      UnaryLoop(x, y, n, pool, [clip_min, clip_max](float v) {
        return std::fmin(std::fmax(v, clip_min), clip_max);
      });
      break;
    case kSqrt:
      UnaryLoop(x, y, n, pool, [](float v) { return std::sqrt(v); });
      break;
    case kRsqrt:
      UnaryLoop(x, y, n, pool, [](float v) { return 1.0f / std::sqrt(v); });
      break;
    case kExp:
      UnaryLoop(x, y, n, pool, [](float v) { return std::exp(v); });
      break;
    case kLog:
      UnaryLoop(x, y, n, pool, [](float v) { return std::log(v); });
      break;
    case kErf: {
      // The vector kernels' erf (|error| < 5e-7), as a GELU decomposed by
      // the exporter runs it.
      kernels::ActivationParams erf;
      erf.kind = kernels::ActivationKind::kErf;
      kernels::ActivateChannels(erf, 1, x, y, n, pool);
      break;
    }
    case kReciprocal:
      UnaryLoop(x, y, n, pool, [](float v) { return 1.0f / v; });
      break;
    case kFloor:
      UnaryLoop(x, y, n, pool, [](float v) { return std::floor(v); });
      break;
    case kCeil:
      UnaryLoop(x, y, n, pool, [](float v) { return std::ceil(v); });
      break;
    case kRound:
      UnaryLoop(x, y, n, pool, RoundHalfEven);
      break;
    case kSin:
      UnaryLoop(x, y, n, pool, [](float v) { return std::sin(v); });
      break;
    case kCos:
      UnaryLoop(x, y, n, pool, [](float v) { return std::cos(v); });
      break;
    default:
      break;
  }
}

void RunIntUnary(int type, const int32_t *x, int32_t *y, int64_t n,
                 ThreadPool *pool) {
  switch (type) {
    case kNeg:
      UnaryLoop(x, y, n, pool, [](int32_t v) { return Wrap(-int64_t{v}); });
      break;
    case kAbs:
      UnaryLoop(x, y, n, pool, [](int32_t v) {
        return Wrap(v < 0 ? -int64_t{v} : int64_t{v});
      });
      break;
    case kSign:
      UnaryLoop(x, y, n, pool, [](int32_t v) { return Sign(v); });
      break;
    default:
      break;
  }
}

// Comparisons and MIN/MAX, the same for both dtypes.
template <typename T>
bool RunCommonBinary(int type, const BroadcastPlan &plan, const T *a,
                     const T *b, T *y, ThreadPool *pool) {
  switch (type) {
    case kMin:
      BinaryLoop(plan, a, b, y, pool, [](T p, T q) { return q < p ? q : p; });
      return true;
    case kMax:
      BinaryLoop(plan, a, b, y, pool, [](T p, T q) { return p < q ? q : p; });
      return true;
    case kEqual:
      BinaryLoop(plan, a, b, y, pool, [](T p, T q) { return T(p == q); });
      return true;
    case kNotEqual:
      BinaryLoop(plan, a, b, y, pool, [](T p, T q) { return T(p != q); });
      return true;
    case kGreater:
      BinaryLoop(plan, a, b, y, pool, [](T p, T q) { return T(p > q); });
      return true;
    case kLess:
      BinaryLoop(plan, a, b, y, pool, [](T p, T q) { return T(p < q); });
      return true;
    default:
      return false;
  }
}

// The vector kernel's kind for a type, when it has one.
bool ToBinaryKind(int type, kernels::BinaryKind *kind) {
  switch (type) {
    case kSum: *kind = kernels::BinaryKind::kSum; return true;
    case kSub: *kind = kernels::BinaryKind::kSub; return true;
    case kProd: *kind = kernels::BinaryKind::kProd; return true;
    case kDiv: *kind = kernels::BinaryKind::kDiv; return true;
    default: return false;
  }
}

// SUM / SUB / PROD / DIV of operands of one shape, or with one operand
// repeated for every row of the other (a per-channel gate or scale), on the
// vector kernel; false for any other type or pattern.
bool RunVectorBinary(int type, const std::vector<float> &coeff,
                     const BroadcastPlan &plan, const float *a, const float *b,
                     float *y, ThreadPool *pool) {
  kernels::BinaryKind kind;
  if (!coeff.empty() || !ToBinaryKind(type, &kind)) return false;
  const std::vector<int64_t> &sa = plan.a_strides;
  const std::vector<int64_t> &sb = plan.b_strides;
  if (plan.dims.size() == 1 && sa[0] == 1 && sb[0] == 1) {
    const int64_t n = plan.dims[0];
    kernels::BinaryChannels(kind, a, b, n, false, y, n, pool);
    return true;
  }
  if (plan.dims.size() != 2 || sa[1] != 1 || sb[1] != 1) return false;
  const int64_t inner = plan.dims[1];
  const int64_t n = plan.dims[0] * inner;
  if (sa[0] == inner && sb[0] == 0) {
    kernels::BinaryChannels(kind, a, b, inner, false, y, n, pool);
    return true;
  }
  if (sa[0] == 0 && sb[0] == inner) {
    kernels::BinaryChannels(kind, b, a, inner, true, y, n, pool);
    return true;
  }
  return false;
}

void RunFloatBinary(int type, const std::vector<float> &coeff,
                    const BroadcastPlan &plan, const float *a, const float *b,
                    float *y, ThreadPool *pool) {
  if (RunVectorBinary(type, coeff, plan, a, b, y, pool)) return;
  if (RunCommonBinary(type, plan, a, b, y, pool)) return;
  switch (type) {
    case kSum:
      if (coeff.empty()) {
        BinaryLoop(plan, a, b, y, pool, [](float p, float q) { return p + q; });
      } else {
        const float c0 = coeff[0], c1 = coeff[1];
        BinaryLoop(plan, a, b, y, pool,
                   [c0, c1](float p, float q) { return c0 * p + c1 * q; });
      }
      break;
    case kSub:
      BinaryLoop(plan, a, b, y, pool, [](float p, float q) { return p - q; });
      break;
    case kProd:
      BinaryLoop(plan, a, b, y, pool, [](float p, float q) { return p * q; });
      break;
    case kDiv:
      BinaryLoop(plan, a, b, y, pool, [](float p, float q) { return p / q; });
      break;
    case kFloorDiv:
      BinaryLoop(plan, a, b, y, pool,
                 [](float p, float q) { return std::floor(p / q); });
      break;
    case kSqrDiff:
      BinaryLoop(plan, a, b, y, pool,
                 [](float p, float q) { return (p - q) * (p - q); });
      break;
    case kPow:
      BinaryLoop(plan, a, b, y, pool,
                 [](float p, float q) { return std::pow(p, q); });
      break;
    default:
      break;
  }
}

void RunIntBinary(int type, const BroadcastPlan &plan, const int32_t *a,
                  const int32_t *b, int32_t *y, ThreadPool *pool) {
  if (RunCommonBinary(type, plan, a, b, y, pool)) return;
  switch (type) {
    case kSum:
      BinaryLoop(plan, a, b, y, pool,
                 [](int32_t p, int32_t q) { return Wrap(int64_t{p} + q); });
      break;
    case kSub:
      BinaryLoop(plan, a, b, y, pool,
                 [](int32_t p, int32_t q) { return Wrap(int64_t{p} - q); });
      break;
    case kProd:
      BinaryLoop(plan, a, b, y, pool,
                 [](int32_t p, int32_t q) { return Wrap(int64_t{p} * q); });
      break;
    case kDiv:  // divisors were checked non-zero; INT_MIN / -1 wraps
      BinaryLoop(plan, a, b, y, pool,
                 [](int32_t p, int32_t q) { return Wrap(int64_t{p} / q); });
      break;
    case kFloorDiv:
      BinaryLoop(plan, a, b, y, pool, [](int32_t p, int32_t q) {
        int64_t quotient = int64_t{p} / q;
        if (int64_t{p} % q != 0 && ((p < 0) != (q < 0))) --quotient;
        return Wrap(quotient);
      });
      break;
    default:
      break;
  }
}

class EltwiseOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(ExpectNotNchw(*context));
    MACE_RETURN_IF_ERROR(ParseType(*context));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(CheckInputs(*context));
    MACE_RETURN_IF_ERROR(ParseCoeff(*context));
    const Tensor &x = context->input(0);
    Shape out_shape = x.shape();
    if (!unary_) {
      MACE_RETURN_IF_ERROR(ParseScalar(*context));
      Shape a_shape = x.shape();
      Shape b_shape =
          context->num_inputs() == 2 ? context->input(1).shape() : Shape();
      if (context->num_inputs() == 1 && scalar_index_ == 0) {
        std::swap(a_shape, b_shape);
      }
      if (!BroadcastShape(a_shape, b_shape, &out_shape)) {
        return context->InvalidArgs("operand shapes ", ShapeToString(a_shape),
                                    " and ", ShapeToString(b_shape),
                                    " do not broadcast (numpy rules)");
      }
      plan_ = MakeBroadcastPlan(a_shape, b_shape);
      b_count_ = ShapeElementCount(b_shape);
    }
    reuse_input_ = out_shape == x.shape();
    Tensor *output = context->output(0);
    output->set_dtype(x.dtype());
    output->set_shape(out_shape);
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    if (context->input(0).dtype() == DT_INT32) return RunInt(context);
    const float *x = context->input(0).data<float>();
    float *y = context->output(0)->mutable_data<float>();
    ThreadPool *pool = context->thread_pool();
    if (unary_) {
      RunFloatUnary(type_, clip_min_, clip_max_, x, y, context->input(0).size(),
                    pool);
      return MaceStatus::MACE_SUCCESS;
    }
    const float *a = x;
    const float *b = context->num_inputs() == 2
                         ? context->input(1).data<float>()
                         : &scalar_float_;
    if (context->num_inputs() == 1 && scalar_index_ == 0) std::swap(a, b);
    RunFloatBinary(type_, coeff_, plan_, a, b, y, pool);
    return MaceStatus::MACE_SUCCESS;
  }

  OutputMemory output_memory() const override {
    return reuse_input_ ? OutputMemory::kMayReuseInput0 : OutputMemory::kOwn;
  }

 private:
  MaceStatus ParseType(const OpContext &context) {
    if (!context.args().Has("type")) {
      return context.InvalidArgs("needs argument 'type' (the Eltwise code)");
    }
    int64_t type = -1;
    MACE_RETURN_IF_ERROR(context.args().GetInt("type", int64_t{-1}, &type));
    if (!IsKnownType(type)) {
      return context.InvalidArgs(
          "argument 'type' = ", type,
          " is not a supported Eltwise type code (0-13, 15-28)");
    }
    type_ = static_cast<int>(type);
    unary_ = kTypeInfo[type_].unary;
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus CheckInputs(const OpContext &context) const {
    if (unary_ && context.num_inputs() != 1) {
      return context.InvalidArgs("type ", TypeName(type_),
                                 " is unary and takes 1 input, got ",
                                 context.num_inputs());
    }
    MACE_RETURN_IF_ERROR(context.ExpectInputCount(1, 2));
    MACE_RETURN_IF_ERROR(ExpectFloatOrInt32(context, 0));
    const DataType dtype = context.input(0).dtype();
    if (context.num_inputs() == 2) {
      MACE_RETURN_IF_ERROR(context.ExpectDtype(1, dtype));
    }
    if (dtype == DT_INT32 && !kTypeInfo[type_].int32) {
      return context.Unsupported("type ", TypeName(type_),
                                 " is not supported on DT_INT32 inputs");
    }
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus ParseCoeff(const OpContext &context) {
    MACE_RETURN_IF_ERROR(context.args().GetFloats("coeff", {}, &coeff_));
    if (type_ == kClip) {
      if (coeff_.size() != 2) {
        return context.InvalidArgs(
            "CLIP needs argument 'coeff' = [min, max], got ", coeff_.size(),
            " values");
      }
      if (!(coeff_[0] <= coeff_[1])) {
        return context.InvalidArgs("CLIP argument 'coeff' = [", coeff_[0], ", ",
                                   coeff_[1], "] has min > max");
      }
      clip_min_ = coeff_[0];
      clip_max_ = coeff_[1];
    }
    if (type_ == kSum && !coeff_.empty()) {
      if (coeff_.size() != 2) {
        return context.InvalidArgs("SUM argument 'coeff' must have 2 values ",
                                   "[c0, c1], got ", coeff_.size());
      }
      if (context.input(0).dtype() == DT_INT32) {
        return context.Unsupported(
            "SUM with argument 'coeff' is not supported on DT_INT32 inputs");
      }
    }
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus ParseScalar(const OpContext &context) {
    if (context.num_inputs() == 2) return MaceStatus::MACE_SUCCESS;
    const OpArgs &args = context.args();
    MACE_RETURN_IF_ERROR(args.GetFloat("scalar_input", 1.0f, &scalar_float_));
    MACE_RETURN_IF_ERROR(args.GetInt("scalar_input_index", 1, &scalar_index_));
    if (scalar_index_ != 0 && scalar_index_ != 1) {
      return context.InvalidArgs("argument 'scalar_input_index' must be 0 ",
                                 "or 1, got ", scalar_index_);
    }
    if (context.input(0).dtype() == DT_INT32) {
      const double s = scalar_float_;
      if (s != std::trunc(s) || s < std::numeric_limits<int32_t>::min() ||
          s > std::numeric_limits<int32_t>::max()) {
        return context.InvalidArgs("argument 'scalar_input' = ", s,
                                   " is not an int32 value (input is int32)");
      }
      scalar_int_ = static_cast<int32_t>(s);
    }
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus RunInt(OpContext *context) const {
    const int32_t *x = context->input(0).data<int32_t>();
    int32_t *y = context->output(0)->mutable_data<int32_t>();
    ThreadPool *pool = context->thread_pool();
    if (unary_) {
      RunIntUnary(type_, x, y, context->input(0).size(), pool);
      return MaceStatus::MACE_SUCCESS;
    }
    const int32_t *a = x;
    const int32_t *b = context->num_inputs() == 2
                           ? context->input(1).data<int32_t>()
                           : &scalar_int_;
    if (context->num_inputs() == 1 && scalar_index_ == 0) std::swap(a, b);
    if ((type_ == kDiv || type_ == kFloorDiv) &&
        std::find(b, b + b_count_, 0) != b + b_count_) {
      return context->RuntimeError("int32 ", TypeName(type_),
                                   " by zero: the divisor has a 0 element");
    }
    RunIntBinary(type_, plan_, a, b, y, pool);
    return MaceStatus::MACE_SUCCESS;
  }

  int type_ = -1;
  bool unary_ = false;
  std::vector<float> coeff_;
  float clip_min_ = 0.0f, clip_max_ = 0.0f;
  float scalar_float_ = 1.0f;
  int32_t scalar_int_ = 1;
  int scalar_index_ = 1;
  BroadcastPlan plan_;
  int64_t b_count_ = 0;
  bool reuse_input_ = false;
};

}  // namespace

void RegisterEltwise(OpRegistry *registry) {
  registry->Register<EltwiseOp>("Eltwise");
}

}  // namespace mace
