// Activations, elementwise arithmetic, casts, reductions and fake
// quantization. Element types: the graph holds float32 and int32 (bool is
// int32 1/0; comparisons of floats give float 1/0, which casts and later
// arithmetic read the same way).

#include <algorithm>

#include "mace/converter/tensorflow/tf_lowering.h"
#include "mace/converter/tensorflow/tf_tensor.h"
#include "mace/core/status.h"
#include "mace/ops/eltwise_type.h"

namespace mace {
namespace converter {
namespace {

// MACE Reduce codes.
enum ReduceType : int {
  kReduceMean = 0,
  kReduceMin = 1,
  kReduceMax = 2,
  kReduceProd = 3,
  kReduceSum = 4
};

MaceStatus EmitActivation(const TfNode &node, TfContext *context,
                          const std::string &type,
                          std::vector<OpArg> extra = {}) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(1, 1));
  if (context->IsInt(node.Input(0))) {
    return node.Unsupported("integer input (only float)");
  }
  extra.push_back(OpArg::String("activation", type));
  return context->Emit("Activation", node.name(), {node.Input(0)},
                       {node.Output(0)}, extra);
}

MaceStatus LowerRelu(const TfNode &node, TfContext *context) {
  return EmitActivation(node, context, "RELU");
}
MaceStatus LowerRelu6(const TfNode &node, TfContext *context) {
  return EmitActivation(node, context, "RELUX",
                        {OpArg::Float("max_limit", 6.0f)});
}
MaceStatus LowerElu(const TfNode &node, TfContext *context) {
  return EmitActivation(node, context, "ELU",
                        {OpArg::Float("activation_coefficient", 1.0f)});
}
MaceStatus LowerLeakyRelu(const TfNode &node, TfContext *context) {
  float alpha = 0.2f;
  MACE_RETURN_IF_ERROR(node.Float("alpha", 0.2f, &alpha));
  return EmitActivation(node, context, "LEAKYRELU",
                        {OpArg::Float("activation_coefficient", alpha)});
}
MaceStatus LowerSigmoid(const TfNode &node, TfContext *context) {
  return EmitActivation(node, context, "SIGMOID");
}
MaceStatus LowerTanh(const TfNode &node, TfContext *context) {
  return EmitActivation(node, context, "TANH");
}

MaceStatus LowerSoftmax(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(1, 1));
  return context->Emit(node.op(), node.name(), {node.Input(0)},
                       {node.Output(0)}, {OpArg::Int("axis", -1)});
}

template <int kType>
MaceStatus LowerBinary(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(2, 2));
  const std::string a = node.Input(0), b = node.Input(1);
  if (context->IsInt(a) != context->IsInt(b)) {
    return node.InvalidArgs("inputs '", node.RawInput(0), "' and '",
                            node.RawInput(1), "' have different types");
  }
  return context->Emit("Eltwise", node.name(), {a, b}, {node.Output(0)},
                       {OpArg::Int("type", kType)});
}

template <int kType>
MaceStatus LowerUnary(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(1, 1));
  return context->Emit("Eltwise", node.name(), {node.Input(0)},
                       {node.Output(0)}, {OpArg::Int("type", kType)});
}

MaceStatus LowerSquare(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(1, 1));
  return context->Emit("Eltwise", node.name(), {node.Input(0), node.Input(0)},
                       {node.Output(0)}, {OpArg::Int("type", kProd)});
}

// ClipByValue(x, lo, hi) with constant scalar bounds.
MaceStatus LowerClipByValue(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(3, 3));
  float lo = 0.0f, hi = 0.0f;
  MACE_RETURN_IF_ERROR(context->ConstScalar(node, 1, &lo));
  MACE_RETURN_IF_ERROR(context->ConstScalar(node, 2, &hi));
  return context->Emit(
      "Eltwise", node.name(), {node.Input(0)}, {node.Output(0)},
      {OpArg::Int("type", kClip), OpArg::Floats("coeff", {lo, hi})});
}

MaceStatus LowerCast(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(1, 1));
  tf::DataType dst = tf::DT_FLOAT;
  MACE_RETURN_IF_ERROR(node.Type("DstT", tf::DT_FLOAT, &dst));
  bool to_int = false;
  MACE_RETURN_IF_ERROR(TfTypeIsInt(dst, "DstT", &to_int));
  std::string x = node.Input(0);
  const std::string y = TfTensorName(node.name(), 0);
  if (dst == tf::DT_BOOL) {
    // bool(x) is x != 0, held as 1 / 0.
    const std::string nonzero =
        context->IsInt(x) ? y : context->Temp(node.name() + "__nonzero");
    MACE_RETURN_IF_ERROR(context->Emit(
        "Eltwise", context->Temp(node.name() + "__not_zero"), {x}, {nonzero},
        {OpArg::Int("type", kNotEqual), OpArg::Float("scalar_input", 0.0f)}));
    if (context->IsInt(x)) return MaceStatus::MACE_SUCCESS;
    x = nonzero;
  }
  if (to_int == context->IsInt(x)) {
    context->Rename(y, x);
    return MaceStatus::MACE_SUCCESS;
  }
  return context->Emit("Cast", node.name(), {x}, {y},
                       {OpArg::Int("T", to_int ? DT_INT32 : DT_FLOAT)});
}

// Fake quantization passes values through; its range is kept as arguments
// quantize_range_min / quantize_range_max on the op producing the value
// (or on an Identity when a graph input or constant feeds it) for the
// quantization tools.
MaceStatus LowerFakeQuant(const TfNode &node, TfContext *context) {
  const bool vars = node.op() != "FakeQuantWithMinMaxArgs";
  MACE_RETURN_IF_ERROR(node.ExpectInputs(vars ? 3 : 1, vars ? 3 : 1));
  float lo = -6.0f, hi = 6.0f;
  if (vars) {
    MACE_RETURN_IF_ERROR(context->ConstScalar(node, 1, &lo));
    MACE_RETURN_IF_ERROR(context->ConstScalar(node, 2, &hi));
  } else {
    MACE_RETURN_IF_ERROR(node.Float("min", -6.0f, &lo));
    MACE_RETURN_IF_ERROR(node.Float("max", 6.0f, &hi));
  }
  if (!(lo <= hi)) {
    return node.InvalidArgs("range [", lo, ", ", hi, "] is empty");
  }
  const std::vector<OpArg> range{OpArg::Float("quantize_range_min", lo),
                                 OpArg::Float("quantize_range_max", hi)};
  const std::string x = node.Input(0);
  std::vector<OperatorDef> *ops = context->graph()->mutable_ops();
  for (auto op = ops->rbegin(); op != ops->rend(); ++op) {
    if (std::find(op->output().begin(), op->output().end(), x) ==
        op->output().end()) {
      continue;
    }
    for (const OpArg &arg : range) *op->add_arg() = arg.proto;
    context->Rename(TfTensorName(node.name(), 0), x);
    return MaceStatus::MACE_SUCCESS;
  }
  return context->Emit("Identity", node.name(), {x}, {node.Output(0)}, range);
}

template <int kType>
MaceStatus LowerReduce(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(2, 2));
  std::vector<int64_t> axes;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &axes));
  bool keep_dims = false;
  MACE_RETURN_IF_ERROR(node.Bool("keep_dims", false, &keep_dims));
  const int rank = context->RankOf(node.Input(0));
  if (axes.empty()) {
    // TensorFlow reduces nothing over an empty axis list.
    context->Rename(TfTensorName(node.name(), 0), node.Input(0));
    return MaceStatus::MACE_SUCCESS;
  }
  for (int64_t &axis : axes) {
    if (axis < -rank || axis >= rank) {
      return node.InvalidArgs("axis ", axis, " is out of range for rank ",
                              rank);
    }
    if (axis < 0) axis += rank;
  }
  return context->Emit(
      "Reduce", node.name(), {node.Input(0)}, {node.Output(0)},
      {OpArg::Int("reduce_type", kType), OpArg::Ints("axis", axes),
       OpArg::Int("keepdims", keep_dims ? 1 : 0)});
}

MaceStatus LowerArgMax(const TfNode &node, TfContext *context) {
  MACE_RETURN_IF_ERROR(node.ExpectInputs(2, 2));
  std::vector<int64_t> axis;
  MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &axis));
  if (axis.size() != 1) {
    return node.InvalidArgs("dimension should be one value, has ", axis.size());
  }
  return context->Emit("ArgMax", node.name(), {node.Input(0)}, {node.Output(0)},
                       {OpArg::Int("axis", axis[0]),
                        OpArg::Int("argmin", node.op() == "ArgMin" ? 1 : 0)});
}

}  // namespace

void RegisterTfElementwiseOps(TfLoweringTable *table) {
  (*table)["Relu"] = LowerRelu;
  (*table)["Relu6"] = LowerRelu6;
  (*table)["Elu"] = LowerElu;
  (*table)["LeakyRelu"] = LowerLeakyRelu;
  (*table)["Sigmoid"] = LowerSigmoid;
  (*table)["Tanh"] = LowerTanh;
  (*table)["Softmax"] = LowerSoftmax;
  (*table)["LogSoftmax"] = LowerSoftmax;
  (*table)["Add"] = LowerBinary<kSum>;
  (*table)["AddV2"] = LowerBinary<kSum>;
  (*table)["Sub"] = LowerBinary<kSub>;
  (*table)["Mul"] = LowerBinary<kProd>;
  (*table)["RealDiv"] = LowerBinary<kDiv>;
  (*table)["FloorDiv"] = LowerBinary<kFloorDiv>;
  (*table)["Maximum"] = LowerBinary<kMax>;
  (*table)["Minimum"] = LowerBinary<kMin>;
  (*table)["SquaredDifference"] = LowerBinary<kSqrDiff>;
  (*table)["Pow"] = LowerBinary<kPow>;
  (*table)["Equal"] = LowerBinary<kEqual>;
  (*table)["NotEqual"] = LowerBinary<kNotEqual>;
  (*table)["Greater"] = LowerBinary<kGreater>;
  (*table)["Less"] = LowerBinary<kLess>;
  (*table)["Rsqrt"] = LowerUnary<kRsqrt>;
  (*table)["Sqrt"] = LowerUnary<kSqrt>;
  (*table)["Neg"] = LowerUnary<kNeg>;
  (*table)["Abs"] = LowerUnary<kAbs>;
  (*table)["Exp"] = LowerUnary<kExp>;
  (*table)["Log"] = LowerUnary<kLog>;
  (*table)["Reciprocal"] = LowerUnary<kReciprocal>;
  (*table)["Floor"] = LowerUnary<kFloor>;
  (*table)["Ceil"] = LowerUnary<kCeil>;
  (*table)["Round"] = LowerUnary<kRound>;
  (*table)["Sign"] = LowerUnary<kSign>;
  (*table)["Erf"] = LowerUnary<kErf>;
  (*table)["Square"] = LowerSquare;
  (*table)["ClipByValue"] = LowerClipByValue;
  (*table)["Cast"] = LowerCast;
  (*table)["FakeQuantWithMinMaxVars"] = LowerFakeQuant;
  (*table)["FakeQuantWithMinMaxArgs"] = LowerFakeQuant;
  (*table)["Mean"] = LowerReduce<kReduceMean>;
  (*table)["Sum"] = LowerReduce<kReduceSum>;
  (*table)["Max"] = LowerReduce<kReduceMax>;
  (*table)["Min"] = LowerReduce<kReduceMin>;
  (*table)["Prod"] = LowerReduce<kReduceProd>;
  (*table)["ArgMax"] = LowerArgMax;
  (*table)["ArgMin"] = LowerArgMax;
}

}  // namespace converter
}  // namespace mace
