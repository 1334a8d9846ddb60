// Activations: MACE's Activation op where it has the function (float
// only), Eltwise math otherwise (Selu, Softplus, Softsign, int inputs,
// Clip with bounds known only at run time, PRelu slopes that are not
// per channel).

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "mace/ops/eltwise_type.h"
#include "mace/converter/onnx/onnx_lowering.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

// Emits the ops one ONNX node lowers to: intermediates get fresh names
// derived from the node's output (their ops take the same name), the op
// writing the node's output is named after the node.
class Emitter {
 public:
  Emitter(const OnnxNode &node, OnnxContext *context)
      : node_(node), context_(context) {}

  OnnxContext *context() const { return context_; }
  std::string Temp(const std::string &suffix) const {
    return context_->Temp(node_.Output(0) + "__" + suffix);
  }

  MaceStatus Op(const std::string &type, const std::vector<std::string> &inputs,
                const std::string &output,
                const std::vector<OpArg> &args = {}) const {
    const std::string name = output == node_.Output(0) ? node_.name() : output;
    return context_->Emit(type, name, inputs, {output}, args);
  }
  // Activation `type` with its extra arguments.
  MaceStatus Activation(const std::string &type,
                        const std::vector<std::string> &inputs,
                        const std::string &output,
                        std::vector<OpArg> args = {}) const {
    args.insert(args.begin(), OpArg::String("activation", type));
    return Op("Activation", inputs, output, args);
  }
  MaceStatus Eltwise(int type, const std::vector<std::string> &inputs,
                     const std::string &output,
                     std::vector<OpArg> args = {}) const {
    args.insert(args.begin(), OpArg::Int("type", type));
    return Op("Eltwise", inputs, output, args);
  }
  // x op s.
  MaceStatus EltwiseScalar(int type, const std::string &x, float scalar,
                           const std::string &output) const {
    return Eltwise(type, {x}, output, {OpArg::Float("scalar_input", scalar)});
  }

 private:
  const OnnxNode &node_;
  OnnxContext *context_;
};

MaceStatus ExpectOneInput(const OnnxNode &node) {
  if (node.num_inputs() != 1 || !node.HasInput(0)) {
    return node.InvalidArgs("takes 1 input, got ", node.num_inputs());
  }
  return MaceStatus::MACE_SUCCESS;
}

bool IsFloat(const OnnxContext &context, const std::string &name) {
  return context.Find(name)->dtype() == DT_FLOAT;
}

MaceStatus ExpectFloat(const OnnxNode &node, const OnnxContext &context) {
  if (!IsFloat(context, node.Input(0))) {
    return node.Unsupported("integer input (MACE's Activation is float32)");
  }
  return MaceStatus::MACE_SUCCESS;
}

// Activations without attributes: Tanh, Sigmoid, HardSwish.
template <const char *kActivation>
MaceStatus LowerPlain(const OnnxNode &node, OnnxContext *context) {
  MACE_RETURN_IF_ERROR(ExpectOneInput(node));
  MACE_RETURN_IF_ERROR(ExpectFloat(node, *context));
  return Emitter(node, context)
      .Activation(kActivation, {node.Input(0)}, node.Output(0));
}
constexpr char kTanh[] = "TANH";
constexpr char kSigmoid[] = "SIGMOID";
constexpr char kHardSwish[] = "HARDSWISH";

MaceStatus LowerRelu(const OnnxNode &node, OnnxContext *context) {
  MACE_RETURN_IF_ERROR(ExpectOneInput(node));
  Emitter e(node, context);
  if (!IsFloat(*context, node.Input(0))) {
    return e.EltwiseScalar(kMax, node.Input(0), 0.0f, node.Output(0));
  }
  return e.Activation("RELU", {node.Input(0)}, node.Output(0));
}

MaceStatus LowerLeakyRelu(const OnnxNode &node, OnnxContext *context) {
  MACE_RETURN_IF_ERROR(ExpectOneInput(node));
  MACE_RETURN_IF_ERROR(ExpectFloat(node, *context));
  float alpha = 0.0f;
  MACE_RETURN_IF_ERROR(node.Float("alpha", 0.01f, &alpha));
  return Emitter(node, context)
      .Activation("LEAKYRELU", {node.Input(0)}, node.Output(0),
                  {OpArg::Float("activation_coefficient", alpha)});
}

MaceStatus LowerElu(const OnnxNode &node, OnnxContext *context) {
  MACE_RETURN_IF_ERROR(ExpectOneInput(node));
  MACE_RETURN_IF_ERROR(ExpectFloat(node, *context));
  float alpha = 0.0f;
  MACE_RETURN_IF_ERROR(node.Float("alpha", 1.0f, &alpha));
  return Emitter(node, context)
      .Activation("ELU", {node.Input(0)}, node.Output(0),
                  {OpArg::Float("activation_coefficient", alpha)});
}

// Selu = gamma * Elu(alpha).
MaceStatus LowerSelu(const OnnxNode &node, OnnxContext *context) {
  MACE_RETURN_IF_ERROR(ExpectOneInput(node));
  MACE_RETURN_IF_ERROR(ExpectFloat(node, *context));
  float alpha = 0.0f, gamma = 0.0f;
  MACE_RETURN_IF_ERROR(node.Float("alpha", 1.67326319217681884765625f, &alpha));
  MACE_RETURN_IF_ERROR(node.Float("gamma", 1.05070102214813232421875f, &gamma));
  Emitter e(node, context);
  const std::string elu = e.Temp("elu");
  MACE_RETURN_IF_ERROR(
      e.Activation("ELU", {node.Input(0)}, elu,
                   {OpArg::Float("activation_coefficient", alpha)}));
  return e.EltwiseScalar(kProd, elu, gamma, node.Output(0));
}

MaceStatus LowerHardSigmoid(const OnnxNode &node, OnnxContext *context) {
  MACE_RETURN_IF_ERROR(ExpectOneInput(node));
  MACE_RETURN_IF_ERROR(ExpectFloat(node, *context));
  float alpha = 0.0f, beta = 0.0f;
  MACE_RETURN_IF_ERROR(node.Float("alpha", 0.2f, &alpha));
  MACE_RETURN_IF_ERROR(node.Float("beta", 0.5f, &beta));
  return Emitter(node, context)
      .Activation("HARDSIGMOID", {node.Input(0)}, node.Output(0),
                  {OpArg::Float("hardsigmoid_alpha", alpha),
                   OpArg::Float("hardsigmoid_beta", beta)});
}

MaceStatus LowerGelu(const OnnxNode &node, OnnxContext *context) {
  MACE_RETURN_IF_ERROR(ExpectOneInput(node));
  MACE_RETURN_IF_ERROR(ExpectFloat(node, *context));
  std::string approximate;
  MACE_RETURN_IF_ERROR(node.String("approximate", "none", &approximate));
  if (approximate != "none" && approximate != "tanh") {
    return node.Unsupported("attribute 'approximate' = '", approximate,
                            "' (none or tanh)");
  }
  return Emitter(node, context)
      .Activation(approximate == "tanh" ? "GELU_TANH" : "GELU", {node.Input(0)},
                  node.Output(0));
}

// Softplus = max(x, 0) + log(1 + exp(-|x|)): log(1 + exp(x)) without the
// overflow to inf for x > 88.
MaceStatus LowerSoftplus(const OnnxNode &node, OnnxContext *context) {
  MACE_RETURN_IF_ERROR(ExpectOneInput(node));
  MACE_RETURN_IF_ERROR(ExpectFloat(node, *context));
  Emitter e(node, context);
  const std::string x = node.Input(0);
  const std::string abs = e.Temp("abs"), neg = e.Temp("neg_abs");
  const std::string exp = e.Temp("exp"), plus_one = e.Temp("plus_one");
  const std::string log = e.Temp("log"), relu = e.Temp("relu");
  MACE_RETURN_IF_ERROR(e.Eltwise(kAbs, {x}, abs));
  MACE_RETURN_IF_ERROR(e.Eltwise(kNeg, {abs}, neg));
  MACE_RETURN_IF_ERROR(e.Eltwise(kExp, {neg}, exp));
  MACE_RETURN_IF_ERROR(e.EltwiseScalar(kSum, exp, 1.0f, plus_one));
  MACE_RETURN_IF_ERROR(e.Eltwise(kLog, {plus_one}, log));
  MACE_RETURN_IF_ERROR(e.EltwiseScalar(kMax, x, 0.0f, relu));
  return e.Eltwise(kSum, {relu, log}, node.Output(0));
}

// Softsign = x / (1 + |x|).
MaceStatus LowerSoftsign(const OnnxNode &node, OnnxContext *context) {
  MACE_RETURN_IF_ERROR(ExpectOneInput(node));
  MACE_RETURN_IF_ERROR(ExpectFloat(node, *context));
  Emitter e(node, context);
  const std::string x = node.Input(0);
  const std::string abs = e.Temp("abs"), denominator = e.Temp("plus_one");
  MACE_RETURN_IF_ERROR(e.Eltwise(kAbs, {x}, abs));
  MACE_RETURN_IF_ERROR(e.EltwiseScalar(kSum, abs, 1.0f, denominator));
  return e.Eltwise(kDiv, {x, denominator}, node.Output(0));
}

// Where a PRelu slope varies once broadcast to x's shape.
enum class SlopeKind { kScalar, kLastAxis, kChannel, kOther };

SlopeKind ClassifySlope(const Shape &x, const Shape &slope) {
  const size_t rank = x.size();
  std::vector<size_t> varying;
  for (size_t i = 0; i < slope.size(); ++i) {
    if (slope[i] != 1) varying.push_back(rank - slope.size() + i);
  }
  if (varying.empty()) return SlopeKind::kScalar;
  if (varying.size() != 1) return SlopeKind::kOther;
  const size_t axis = varying[0];
  if (axis == rank - 1) return SlopeKind::kLastAxis;
  if (axis == 1 && rank >= 3) return SlopeKind::kChannel;
  return SlopeKind::kOther;
}

// PRelu(x, slope), slope broadcast to x (numpy). A slope constant along all
// axes but the last one, or all but axis 1 (NCHW channels), is MACE's
// PRELU, which takes the slope along the last axis (channel axis 1 moves
// there between transposes). Other slopes, and int inputs:
// max(x, 0) + slope * min(x, 0).
MaceStatus LowerPRelu(const OnnxNode &node, OnnxContext *context) {
  if (node.num_inputs() != 2 || !node.HasInput(0) || !node.HasInput(1)) {
    return node.InvalidArgs("takes 2 inputs (x, slope)");
  }
  Emitter e(node, context);
  const std::string x = node.Input(0), slope = node.Input(1);
  const Shape &x_shape = context->ShapeOf(x);
  const Shape &slope_shape = context->ShapeOf(slope);
  if (slope_shape.size() > x_shape.size()) {
    return node.InvalidArgs("slope ", ShapeToString(slope_shape),
                            " has a higher rank than x ",
                            ShapeToString(x_shape));
  }
  const SlopeKind kind = ClassifySlope(x_shape, slope_shape);
  const bool floats = IsFloat(*context, x) && IsFloat(*context, slope);
  if (floats && kind != SlopeKind::kOther) {
    // MACE's PRELU takes a 1-D slope.
    std::string slope_1d = slope;
    if (slope_shape.size() != 1) {
      slope_1d = e.Temp("slope");
      MACE_RETURN_IF_ERROR(
          e.Op("Reshape", {slope}, slope_1d,
               {OpArg::Ints("shape", {ShapeElementCount(slope_shape)})}));
    }
    if (kind != SlopeKind::kChannel) {
      return e.Activation("PRELU", {x, slope_1d}, node.Output(0));
    }
    std::string x_last;
    MACE_RETURN_IF_ERROR(context->ToChannelLast(node.name(), x, &x_last));
    const std::string y_last = context->Temp(node.Output(0) + "__nhwc");
    MACE_RETURN_IF_ERROR(context->Emit("Activation", node.name(),
                                       {x_last, slope_1d}, {y_last},
                                       {OpArg::String("activation", "PRELU")}));
    return context->FromChannelLast(node.name(), y_last, node.Output(0));
  }
  const std::string positive = e.Temp("positive");
  const std::string negative = e.Temp("negative");
  const std::string scaled = e.Temp("scaled");
  MACE_RETURN_IF_ERROR(e.EltwiseScalar(kMax, x, 0.0f, positive));
  MACE_RETURN_IF_ERROR(e.EltwiseScalar(kMin, x, 0.0f, negative));
  MACE_RETURN_IF_ERROR(e.Eltwise(kProd, {negative, slope}, scaled));
  return e.Eltwise(kSum, {positive, scaled}, node.Output(0));
}

// Clip bounds known at conversion time; absent bounds are infinite.
struct ClipBounds {
  float min = -std::numeric_limits<float>::infinity();
  float max = std::numeric_limits<float>::infinity();
};

// One bound from optional input `index`: a constant with one value.
MaceStatus ConstBound(const OnnxNode &node, OnnxContext *context, int index,
                      float *value) {
  std::vector<float> values;
  MACE_RETURN_IF_ERROR(context->ConstFloats(node, index, &values));
  if (values.size() != 1) {
    return node.InvalidArgs("input ", index, " has ", values.size(),
                            " values, expected a scalar");
  }
  *value = values[0];
  return MaceStatus::MACE_SUCCESS;
}

// Float Clip with constant bounds: RELU for [0, inf), RELUX for [0, k],
// CLIP for other ordered bounds, else MAX then MIN (min > max gives max
// everywhere, as ONNX says).
MaceStatus EmitConstClip(const Emitter &e, const std::string &x,
                         const ClipBounds &b, const std::string &output) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  if (b.min == 0.0f && b.max == kInf) {
    return e.Activation("RELU", {x}, output);
  }
  if (b.min == 0.0f && b.max > 0.0f) {
    return e.Activation("RELUX", {x}, output,
                        {OpArg::Float("max_limit", b.max)});
  }
  if (b.min <= b.max) {
    return e.Eltwise(kClip, {x}, output,
                     {OpArg::Floats("coeff", {b.min, b.max})});
  }
  const std::string lower = e.Temp("lower");
  MACE_RETURN_IF_ERROR(e.EltwiseScalar(kMax, x, b.min, lower));
  return e.EltwiseScalar(kMin, lower, b.max, output);
}

// Clip: bounds from attributes before opset 11, else optional inputs.
// Float input with constant bounds → EmitConstClip; otherwise
// min(max(x, lo), hi) on the bound tensors, which also covers int inputs
// and bounds computed at run time.
MaceStatus LowerClip(const OnnxNode &node, OnnxContext *context) {
  if (node.num_inputs() < 1 || !node.HasInput(0)) {
    return node.InvalidArgs("input 0 is empty");
  }
  Emitter e(node, context);
  const std::string x = node.Input(0);
  ClipBounds bounds;
  if (node.opset() < 11) {
    MACE_RETURN_IF_ERROR(
        node.Float("min", std::numeric_limits<float>::lowest(), &bounds.min));
    MACE_RETURN_IF_ERROR(
        node.Float("max", std::numeric_limits<float>::max(), &bounds.max));
    if (!IsFloat(*context, x)) {
      return node.Unsupported("integer input before opset 11");
    }
    return EmitConstClip(e, x, bounds, node.Output(0));
  }
  const bool has_min = node.HasInput(1), has_max = node.HasInput(2);
  const bool constant =
      (!has_min || context->graph()->IsConstant(node.Input(1))) &&
      (!has_max || context->graph()->IsConstant(node.Input(2)));
  if (IsFloat(*context, x) && constant) {
    if (has_min) {
      MACE_RETURN_IF_ERROR(ConstBound(node, context, 1, &bounds.min));
    }
    if (has_max) {
      MACE_RETURN_IF_ERROR(ConstBound(node, context, 2, &bounds.max));
    }
    return EmitConstClip(e, x, bounds, node.Output(0));
  }
  if (!has_min && !has_max) return e.Op("Identity", {x}, node.Output(0));
  std::string lower = x;
  if (has_min) {
    lower = has_max ? e.Temp("lower") : node.Output(0);
    MACE_RETURN_IF_ERROR(e.Eltwise(kMax, {x, node.Input(1)}, lower));
  }
  if (has_max) {
    MACE_RETURN_IF_ERROR(
        e.Eltwise(kMin, {lower, node.Input(2)}, node.Output(0)));
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace

void RegisterOnnxActivationOps(OnnxLoweringTable *table) {
  OnnxLoweringTable &t = *table;
  t["Relu"] = LowerRelu;
  t["LeakyRelu"] = LowerLeakyRelu;
  t["PRelu"] = LowerPRelu;
  t["Tanh"] = LowerPlain<kTanh>;
  t["Sigmoid"] = LowerPlain<kSigmoid>;
  t["Elu"] = LowerElu;
  t["Selu"] = LowerSelu;
  t["HardSigmoid"] = LowerHardSigmoid;
  t["HardSwish"] = LowerPlain<kHardSwish>;
  t["Gelu"] = LowerGelu;
  t["Softplus"] = LowerSoftplus;
  t["Softsign"] = LowerSoftsign;
  t["Clip"] = LowerClip;
}

}  // namespace converter
}  // namespace mace
