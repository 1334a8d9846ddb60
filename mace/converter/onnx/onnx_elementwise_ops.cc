// Elementwise math, comparisons, logic, Where, Identity and Dropout:
// lowered to MACE Eltwise (numpy broadcasting, like ONNX) plus Cast where
// ONNX's result type differs from the input's.
//
// Booleans are int32 0/1 in the graph, so logic is arithmetic on 0/1 and
// comparisons end in a Cast to int32 when MACE would give float 1.0/0.0.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "mace/ops/eltwise_type.h"
#include "mace/converter/onnx/onnx_lowering.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

// Integers a float `scalar_input` carries exactly.
constexpr double kMaxExactInt = 16777216.0;  // 2^24

// Emits the ops one ONNX node lowers to. Intermediate tensors get fresh
// names derived from the node's first output (their ops take the same
// name); the op writing the node's output is named after the node.
class Emitter {
 public:
  Emitter(const OnnxNode &node, OnnxContext *context)
      : node_(node), context_(context) {}

  OnnxContext *context() const { return context_; }
  std::string Temp(const std::string &suffix) const {
    return context_->Temp(node_.Output(0) + "__" + suffix);
  }
  DataType DtypeOf(const std::string &name) const {
    return context_->Find(name)->dtype();
  }

  MaceStatus Op(const std::string &type, const std::vector<std::string> &inputs,
                const std::string &output,
                const std::vector<OpArg> &args = {}) const {
    return context_->Emit(type, OpName(output), inputs, {output}, args);
  }
  MaceStatus Eltwise(int type, const std::vector<std::string> &inputs,
                     const std::string &output,
                     std::vector<OpArg> args = {}) const {
    args.insert(args.begin(), OpArg::Int("type", type));
    return Op("Eltwise", inputs, output, args);
  }
  // x op s (scalar_index 1) or s op x (scalar_index 0), s a float that is
  // exact for the input's dtype.
  MaceStatus EltwiseScalar(int type, const std::string &x, float scalar,
                           int scalar_index, const std::string &output) const {
    return Eltwise(type, {x}, output,
                   {OpArg::Float("scalar_input", scalar),
                    OpArg::Int("scalar_input_index", scalar_index)});
  }
  MaceStatus Cast(const std::string &x, DataType to,
                  const std::string &output) const {
    return Op("Cast", {x}, output, {OpArg::Int("T", to)});
  }

 private:
  std::string OpName(const std::string &output) const {
    return output == node_.Output(0) ? node_.name() : output;
  }

  const OnnxNode &node_;
  OnnxContext *context_;
};

// The value of a one-element constant that a float `scalar_input` holds
// exactly for `dtype`; false when `name` is not such a constant.
bool ExactScalarConstant(const OnnxContext &context, const std::string &name,
                         DataType dtype, float *value) {
  const Tensor *t = context.Find(name);
  if (t == nullptr || !t->is_constant() || t->size() != 1 ||
      t->dtype() != dtype) {
    return false;
  }
  if (dtype == DT_INT32) {
    const int32_t v = t->data<int32_t>()[0];
    if (std::fabs(static_cast<double>(v)) > kMaxExactInt) return false;
    *value = static_cast<float>(v);
  } else {
    *value = t->data<float>()[0];
  }
  return true;
}

// a op b with numpy broadcasting. A one-element constant operand that does
// not widen the result becomes the op's `scalar_input`.
MaceStatus EmitBinary(const Emitter &e, int type, const std::string &a,
                      const std::string &b, const std::string &output) {
  const OnnxContext &context = *e.context();
  const DataType dtype = e.DtypeOf(a);
  float scalar = 0.0f;
  if (!context.Find(a)->is_constant() &&
      context.RankOf(b) <= context.RankOf(a) &&
      ExactScalarConstant(context, b, dtype, &scalar)) {
    return e.EltwiseScalar(type, a, scalar, 1, output);
  }
  if (!context.Find(b)->is_constant() &&
      context.RankOf(a) <= context.RankOf(b) &&
      ExactScalarConstant(context, a, dtype, &scalar)) {
    return e.EltwiseScalar(type, b, scalar, 0, output);
  }
  return e.Eltwise(type, {a, b}, output);
}

template <int kType>
MaceStatus LowerBinary(const OnnxNode &node, OnnxContext *context) {
  Emitter e(node, context);
  return EmitBinary(e, kType, node.Input(0), node.Input(1), node.Output(0));
}

template <int kType>
MaceStatus LowerUnary(const OnnxNode &node, OnnxContext *context) {
  return Emitter(node, context).Eltwise(kType, {node.Input(0)}, node.Output(0));
}

// Pow(T base, T1 exponent) → T. MACE's POW is float-only: int operands go
// through float, and an int result is rounded before the cast back so that
// exact powers stay exact (up to 2^24).
MaceStatus LowerPow(const OnnxNode &node, OnnxContext *context) {
  Emitter e(node, context);
  std::string base = node.Input(0), exponent = node.Input(1);
  const bool int_base = e.DtypeOf(base) == DT_INT32;
  if (int_base) {
    const std::string cast = e.Temp("base_float");
    MACE_RETURN_IF_ERROR(e.Cast(base, DT_FLOAT, cast));
    base = cast;
  }
  if (e.DtypeOf(exponent) == DT_INT32) {
    const std::string cast = e.Temp("exponent_float");
    MACE_RETURN_IF_ERROR(e.Cast(exponent, DT_FLOAT, cast));
    exponent = cast;
  }
  if (!int_base) return EmitBinary(e, kPow, base, exponent, node.Output(0));
  const std::string power = e.Temp("pow");
  MACE_RETURN_IF_ERROR(EmitBinary(e, kPow, base, exponent, power));
  const std::string rounded = e.Temp("round");
  MACE_RETURN_IF_ERROR(e.Eltwise(kRound, {power}, rounded));
  return e.Cast(rounded, DT_INT32, node.Output(0));
}

// Max, Min, Sum: a left fold of binary ops; one input is a copy.
template <int kType>
MaceStatus LowerVariadic(const OnnxNode &node, OnnxContext *context) {
  Emitter e(node, context);
  const int n = node.num_inputs();
  if (n == 1) return e.Op("Identity", {node.Input(0)}, node.Output(0));
  std::string acc = node.Input(0);
  for (int i = 1; i < n; ++i) {
    const std::string out = i + 1 == n ? node.Output(0) : e.Temp("partial");
    MACE_RETURN_IF_ERROR(EmitBinary(e, kType, acc, node.Input(i), out));
    acc = out;
  }
  return MaceStatus::MACE_SUCCESS;
}

// Mean: the sum divided by the input count (as ONNX's reference computes).
MaceStatus LowerMean(const OnnxNode &node, OnnxContext *context) {
  Emitter e(node, context);
  const int n = node.num_inputs();
  if (n == 1) return e.Op("Identity", {node.Input(0)}, node.Output(0));
  if (e.DtypeOf(node.Input(0)) != DT_FLOAT) {
    return node.Unsupported("integer inputs (ONNX Mean takes floats)");
  }
  std::string acc = node.Input(0);
  for (int i = 1; i < n; ++i) {
    const std::string sum = e.Temp("sum");
    MACE_RETURN_IF_ERROR(EmitBinary(e, kSum, acc, node.Input(i), sum));
    acc = sum;
  }
  return e.EltwiseScalar(kDiv, acc, static_cast<float>(n), 1, node.Output(0));
}

// ONNX comparisons give bool (int32 0/1 here); MACE's give the input type,
// so float comparisons end in a Cast.
template <int kType>
MaceStatus LowerComparison(const OnnxNode &node, OnnxContext *context) {
  Emitter e(node, context);
  if (e.DtypeOf(node.Input(0)) == DT_INT32) {
    return EmitBinary(e, kType, node.Input(0), node.Input(1), node.Output(0));
  }
  const std::string result = e.Temp("compare");
  MACE_RETURN_IF_ERROR(
      EmitBinary(e, kType, node.Input(0), node.Input(1), result));
  return e.Cast(result, DT_INT32, node.Output(0));
}

// a >= b as (a > b) or (a == b): false for NaN, as ONNX (1 - (a < b) is
// not).
template <int kStrictType>
MaceStatus LowerOrEqual(const OnnxNode &node, OnnxContext *context) {
  Emitter e(node, context);
  const std::string a = node.Input(0), b = node.Input(1);
  const std::string strict = e.Temp("strict");
  const std::string equal = e.Temp("equal");
  MACE_RETURN_IF_ERROR(EmitBinary(e, kStrictType, a, b, strict));
  MACE_RETURN_IF_ERROR(EmitBinary(e, kEqual, a, b, equal));
  if (e.DtypeOf(a) == DT_INT32) {
    return e.Eltwise(kMax, {strict, equal}, node.Output(0));
  }
  const std::string either = e.Temp("either");
  MACE_RETURN_IF_ERROR(e.Eltwise(kMax, {strict, equal}, either));
  return e.Cast(either, DT_INT32, node.Output(0));
}

MaceStatus ExpectBool(const OnnxNode &node, const Emitter &e, int input) {
  if (e.DtypeOf(node.Input(input)) != DT_INT32) {
    return node.InvalidArgs("input ", input, " '", node.Input(input),
                            "' should be bool (int32 0/1), is float");
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus LowerNot(const OnnxNode &node, OnnxContext *context) {
  Emitter e(node, context);
  MACE_RETURN_IF_ERROR(ExpectBool(node, e, 0));
  return e.EltwiseScalar(kSub, node.Input(0), 1.0f, 0, node.Output(0));
}

// And = min, Or = max, Xor = not-equal on 0/1 values.
template <int kType>
MaceStatus LowerLogic(const OnnxNode &node, OnnxContext *context) {
  Emitter e(node, context);
  MACE_RETURN_IF_ERROR(ExpectBool(node, e, 0));
  MACE_RETURN_IF_ERROR(ExpectBool(node, e, 1));
  return EmitBinary(e, kType, node.Input(0), node.Input(1), node.Output(0));
}

// Numpy broadcast of shapes; false when they do not broadcast.
bool Broadcast(const Shape &a, const Shape &b, Shape *out) {
  const size_t rank = std::max(a.size(), b.size());
  out->assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = da == 1 ? db : da;
  }
  return true;
}

// `x` broadcast to `shape` (which x broadcasts to), flattened to 1-D: x
// times ones (exact for every value, NaN and infinities included), ones
// only as large as the dims x lacks.
MaceStatus BroadcastFlat(const Emitter &e, const std::string &x,
                         const Shape &shape, std::string *flat) {
  std::string full = x;
  const Shape &xs = e.context()->ShapeOf(x);
  if (xs != shape) {
    Shape ones_shape(shape.size(), 1);
    const size_t offset = shape.size() - xs.size();
    for (size_t i = 0; i < shape.size(); ++i) {
      const int64_t d = i < offset ? 1 : xs[i - offset];
      if (d != shape[i]) ones_shape[i] = shape[i];
    }
    const std::string ones = e.Temp("ones");
    const int64_t count = ShapeElementCount(ones_shape);
    if (e.DtypeOf(x) == DT_INT32) {
      e.context()->graph()->AddConstantInt(ones, ones_shape,
                                           std::vector<int32_t>(count, 1));
    } else {
      e.context()->graph()->AddConstant(ones, ones_shape,
                                        std::vector<float>(count, 1.0f));
    }
    full = e.Temp("broadcast");
    MACE_RETURN_IF_ERROR(e.Eltwise(kProd, {x, ones}, full));
  }
  *flat = e.Temp("flat");
  return e.Op("Reshape", {full}, *flat,
              {OpArg::Ints("shape", {ShapeElementCount(shape)})});
}

// Where on int32: y + c * (x - y), exact in wrap-around int32 arithmetic.
MaceStatus LowerWhereInt(const Emitter &e, const std::string &c,
                         const std::string &x, const std::string &y,
                         const std::string &output) {
  const std::string diff = e.Temp("diff");
  const std::string picked = e.Temp("picked");
  MACE_RETURN_IF_ERROR(e.Eltwise(kSub, {x, y}, diff));
  MACE_RETURN_IF_ERROR(e.Eltwise(kProd, {c, diff}, picked));
  return e.Eltwise(kSum, {y, picked}, output);
}

// Where on floats: arithmetic selection would turn an unselected inf or
// NaN into NaN, so the result is gathered from concat(x, y) (both
// broadcast and flattened, N values each) at index i for c = 1 and N + i
// for c = 0: (i + N) - c * N, with i + N a constant of the output shape.
MaceStatus LowerWhereFloat(const Emitter &e, const std::string &c,
                           const std::string &x, const std::string &y,
                           const Shape &shape, const std::string &output) {
  const int64_t n = ShapeElementCount(shape);
  std::string x_flat, y_flat;
  MACE_RETURN_IF_ERROR(BroadcastFlat(e, x, shape, &x_flat));
  MACE_RETURN_IF_ERROR(BroadcastFlat(e, y, shape, &y_flat));
  const std::string both = e.Temp("both");
  MACE_RETURN_IF_ERROR(
      e.Op("Concat", {x_flat, y_flat}, both, {OpArg::Int("axis", 0)}));
  const std::string count = e.Temp("count");
  e.context()->graph()->AddConstantInt(count, {}, {static_cast<int32_t>(n)});
  std::vector<int32_t> shifted(n);
  for (int64_t i = 0; i < n; ++i) shifted[i] = static_cast<int32_t>(i + n);
  const std::string base = e.Temp("index_base");
  e.context()->graph()->AddConstantInt(base, shape, shifted);
  const std::string offset = e.Temp("offset");
  const std::string index = e.Temp("index");
  MACE_RETURN_IF_ERROR(e.Eltwise(kProd, {c, count}, offset));
  MACE_RETURN_IF_ERROR(e.Eltwise(kSub, {base, offset}, index));
  return e.Op("Gather", {both, index}, output, {OpArg::Int("axis", 0)});
}

MaceStatus LowerWhere(const OnnxNode &node, OnnxContext *context) {
  Emitter e(node, context);
  MACE_RETURN_IF_ERROR(ExpectBool(node, e, 0));
  const std::string c = node.Input(0), x = node.Input(1), y = node.Input(2);
  if (e.DtypeOf(x) != e.DtypeOf(y)) {
    return node.InvalidArgs("inputs 1 and 2 have different types");
  }
  Shape xy, shape;
  if (!Broadcast(context->ShapeOf(x), context->ShapeOf(y), &xy) ||
      !Broadcast(context->ShapeOf(c), xy, &shape)) {
    return node.InvalidArgs("input shapes do not broadcast (numpy rules)");
  }
  if (e.DtypeOf(x) == DT_INT32) {
    return LowerWhereInt(e, c, x, y, node.Output(0));
  }
  const int64_t n = ShapeElementCount(shape);
  if (n == 0) {
    return node.Unsupported("an empty result on float inputs");
  }
  if (2 * n > INT32_MAX) {
    return node.Unsupported("more than 2^30 elements on float inputs");
  }
  return LowerWhereFloat(e, c, x, y, shape, node.Output(0));
}

MaceStatus LowerIdentity(const OnnxNode &node, OnnxContext *context) {
  return Emitter(node, context).Op("Identity", {node.Input(0)}, node.Output(0));
}

// Whether Dropout is in inference mode (or drops nothing): ratio from the
// attribute (opset < 12) or input 1, training_mode from input 2.
MaceStatus DropoutIsIdentity(const OnnxNode &node, OnnxContext *context) {
  if (node.opset() < 12 || !node.HasInput(2)) {
    return MaceStatus::MACE_SUCCESS;
  }
  std::vector<int64_t> training;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 2, &training));
  if (training.size() != 1 || training[0] == 0) {
    return MaceStatus::MACE_SUCCESS;
  }
  std::vector<float> ratio{0.5f};
  if (node.HasInput(1)) {
    MACE_RETURN_IF_ERROR(context->ConstFloats(node, 1, &ratio));
  }
  if (ratio.size() != 1 || ratio[0] != 0.0f) {
    return node.Unsupported("training_mode = true with a nonzero ratio ",
                            "(random dropout) is not supported");
  }
  return MaceStatus::MACE_SUCCESS;
}

// Dropout at inference is the identity; its mask is all true (ones of
// the input's type before opset 10).
MaceStatus LowerDropout(const OnnxNode &node, OnnxContext *context) {
  MACE_RETURN_IF_ERROR(DropoutIsIdentity(node, context));
  Emitter e(node, context);
  const std::string x = node.Input(0);
  MACE_RETURN_IF_ERROR(e.Op("Identity", {x}, node.Output(0)));
  if (node.num_outputs() < 2 || node.Output(1).empty()) {
    return MaceStatus::MACE_SUCCESS;
  }
  // The mask: all ones (float before opset 10, bool after).
  const Shape shape = context->ShapeOf(x);
  const DataType mask_type =
      node.opset() < 10 && e.DtypeOf(x) == DT_FLOAT ? DT_FLOAT : DT_INT32;
  return EmitFilled(node, context, node.Output(1), shape, mask_type, 1.0);
}

// Mod on int32: a - q * b, q the quotient rounded down (fmod = 0: the
// result takes the divisor's sign, as Python) or toward zero (fmod = 1, as
// C's fmod). Exact in wrap-around int32 arithmetic.
MaceStatus LowerMod(const OnnxNode &node, OnnxContext *context) {
  int64_t fmod = 0;
  MACE_RETURN_IF_ERROR(node.Int("fmod", 0, &fmod));
  Emitter e(node, context);
  const std::string a = node.Input(0), b = node.Input(1);
  if (e.DtypeOf(a) != DT_INT32) {
    return node.Unsupported("float inputs (MACE Eltwise has no exact float ",
                            "remainder)");
  }
  const std::string quotient = e.Temp("quotient");
  const std::string product = e.Temp("product");
  MACE_RETURN_IF_ERROR(
      EmitBinary(e, fmod != 0 ? kDiv : kFloorDiv, a, b, quotient));
  MACE_RETURN_IF_ERROR(EmitBinary(e, kProd, quotient, b, product));
  return e.Eltwise(kSub, {a, product}, node.Output(0));
}

MaceStatus LowerBitShift(const OnnxNode &node, OnnxContext *) {
  return node.Unsupported("MACE Eltwise has no bit shift");
}

}  // namespace

void RegisterOnnxElementwiseOps(OnnxLoweringTable *table) {
  OnnxLoweringTable &t = *table;
  t["Add"] = LowerBinary<kSum>;
  t["Sub"] = LowerBinary<kSub>;
  t["Mul"] = LowerBinary<kProd>;
  t["Div"] = LowerBinary<kDiv>;
  t["Pow"] = LowerPow;
  t["Max"] = LowerVariadic<kMax>;
  t["Min"] = LowerVariadic<kMin>;
  t["Sum"] = LowerVariadic<kSum>;
  t["Mean"] = LowerMean;
  t["Sqrt"] = LowerUnary<kSqrt>;
  t["Reciprocal"] = LowerUnary<kReciprocal>;
  t["Exp"] = LowerUnary<kExp>;
  t["Log"] = LowerUnary<kLog>;
  t["Neg"] = LowerUnary<kNeg>;
  t["Abs"] = LowerUnary<kAbs>;
  t["Floor"] = LowerUnary<kFloor>;
  t["Ceil"] = LowerUnary<kCeil>;
  t["Round"] = LowerUnary<kRound>;
  t["Sign"] = LowerUnary<kSign>;
  t["Sin"] = LowerUnary<kSin>;
  t["Cos"] = LowerUnary<kCos>;
  t["Erf"] = LowerUnary<kErf>;
  t["Equal"] = LowerComparison<kEqual>;
  t["Greater"] = LowerComparison<kGreater>;
  t["Less"] = LowerComparison<kLess>;
  t["GreaterOrEqual"] = LowerOrEqual<kGreater>;
  t["LessOrEqual"] = LowerOrEqual<kLess>;
  t["Not"] = LowerNot;
  t["And"] = LowerLogic<kMin>;
  t["Or"] = LowerLogic<kMax>;
  t["Xor"] = LowerLogic<kNotEqual>;
  t["Where"] = LowerWhere;
  t["Identity"] = LowerIdentity;
  t["Dropout"] = LowerDropout;
  t["Mod"] = LowerMod;
  t["BitShift"] = LowerBitShift;
}

}  // namespace converter
}  // namespace mace
