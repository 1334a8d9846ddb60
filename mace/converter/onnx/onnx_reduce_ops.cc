// Reductions and ArgMax / ArgMin. ReduceMean/Sum/Max/Min/Prod map to MACE's
// Reduce; ReduceL1/L2/SumSquare/LogSum/LogSumExp add Eltwise steps around a
// Reduce SUM. Reducing an empty set gives the reduction's identity (0 for
// sums, 1 for products, -inf for max and log-sums, +inf for min, NaN for
// mean), emitted as a constant since it does not depend on the data.

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "mace/converter/onnx/onnx_lowering.h"
#include "mace/core/status.h"
#include "mace/ops/eltwise_type.h"

namespace mace {
namespace converter {
namespace {

// MACE Reduce codes (their names shadow Eltwise's, which are written
// EltwiseType::k... here).
enum ReduceType : int { kMean = 0, kMin = 1, kMax = 2, kProd = 3, kSum = 4 };
// The ONNX reductions: which MACE reduction, which Eltwise steps before
// and after it.
enum class Kind { kPlain, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

struct ReduceAttrs {
  std::vector<int64_t> axes;  // normalized; empty = every axis
  bool keepdims = true;
  bool noop = false;  // empty axes with noop_with_empty_axes: no reduction
};

// Axes come from attribute 'axes' before `input_opset` (13 for ReduceSum,
// 18 for the others) and from optional input 1 after.
MaceStatus ReadReduceAttrs(const OnnxNode &node, OnnxContext *context,
                           int input_opset, const Tensor &x,
                           ReduceAttrs *attrs) {
  int64_t keepdims = 1, noop = 0;
  MACE_RETURN_IF_ERROR(node.Int("keepdims", 1, &keepdims));
  attrs->keepdims = keepdims != 0;
  std::vector<int64_t> axes;
  if (node.opset() < input_opset) {
    MACE_RETURN_IF_ERROR(node.Ints("axes", {}, &axes));
  } else {
    MACE_RETURN_IF_ERROR(node.Int("noop_with_empty_axes", 0, &noop));
    if (node.HasInput(1)) {
      MACE_RETURN_IF_ERROR(context->ConstInts(node, 1, &axes));
    }
  }
  attrs->noop = axes.empty() && noop != 0;
  std::set<int64_t> seen;
  for (int64_t axis : axes) {
    const int64_t rank = x.rank();
    if (axis < -rank || axis >= rank) {
      return node.InvalidArgs("axis ", axis, " is out of range for rank ",
                              rank);
    }
    seen.insert(axis < 0 ? axis + rank : axis);
  }
  attrs->axes.assign(seen.begin(), seen.end());
  return MaceStatus::MACE_SUCCESS;
}

Shape ReducedShape(const Shape &in, const ReduceAttrs &attrs) {
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool reduced = attrs.axes.empty() ||
                         std::find(attrs.axes.begin(), attrs.axes.end(),
                                   static_cast<int64_t>(i)) != attrs.axes.end();
    if (!reduced) {
      out.push_back(in[i]);
    } else if (attrs.keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

double EmptyValue(Kind kind, int type) {
  const double inf = std::numeric_limits<double>::infinity();
  if (kind == Kind::kLogSum || kind == Kind::kLogSumExp) return -inf;
  if (kind != Kind::kPlain) return 0.0;
  switch (type) {
    case kMean:
      return std::numeric_limits<double>::quiet_NaN();
    case kMin:
      return inf;
    case kMax:
      return -inf;
    case kProd:
      return 1.0;
    default:
      return 0.0;
  }
}

// The identity value of the reduction, of the reduced shape.
void AddEmptyResult(const OnnxNode &node, OnnxContext *context, const Tensor &x,
                    const ReduceAttrs &attrs, Kind kind, int type) {
  const Shape shape = ReducedShape(x.shape(), attrs);
  const size_t count = static_cast<size_t>(ShapeElementCount(shape));
  const double value = EmptyValue(kind, type);
  if (x.dtype() == DT_INT32) {
    const double lo = std::numeric_limits<int32_t>::min();
    const double hi = std::numeric_limits<int32_t>::max();
    const int32_t v =
        std::isnan(value)
            ? 0
            : static_cast<int32_t>(std::min(std::max(value, lo), hi));
    context->graph()->AddConstantInt(node.Output(0), shape,
                                     std::vector<int32_t>(count, v));
  } else {
    context->graph()->AddConstant(
        node.Output(0), shape,
        std::vector<float>(count, static_cast<float>(value)));
  }
}

// Emits one op step of a chain; the last step writes the node's output.
class Chain {
 public:
  Chain(const OnnxNode &node, OnnxContext *context)
      : node_(node), context_(context), current_(node.Input(0)) {}

  MaceStatus Eltwise(int type, const std::vector<std::string> &extra,
                     bool last) {
    std::vector<std::string> inputs{current_};
    inputs.insert(inputs.end(), extra.begin(), extra.end());
    return Step("Eltwise", inputs, {OpArg::Int("type", type)}, last);
  }
  MaceStatus Reduce(int type, const ReduceAttrs &attrs, bool keepdims,
                    bool last) {
    return Step(
        "Reduce", {current_},
        {OpArg::Int("reduce_type", type), OpArg::Ints("axis", attrs.axes),
         OpArg::Int("keepdims", keepdims ? 1 : 0)},
        last);
  }
  MaceStatus Reshape(const Shape &shape) {
    return Step("Reshape", {current_}, {OpArg::Ints("shape", shape)}, true);
  }
  const std::string &current() const { return current_; }
  void set_current(const std::string &name) { current_ = name; }

 private:
  MaceStatus Step(const std::string &type,
                  const std::vector<std::string> &inputs,
                  const std::vector<OpArg> &args, bool last) {
    const std::string output =
        last ? node_.Output(0) : context_->Temp(node_.Output(0) + "__" + type);
    const std::string name =
        last ? node_.name() : context_->Temp(node_.name() + "__" + type);
    MACE_RETURN_IF_ERROR(context_->Emit(type, name, inputs, {output}, args));
    current_ = output;
    return MaceStatus::MACE_SUCCESS;
  }

  const OnnxNode &node_;
  OnnxContext *context_;
  std::string current_;
};

// log(sum(exp(x))) computed as m + log(sum(exp(x - m))), m = max(x), so
// that large inputs do not overflow.
MaceStatus EmitLogSumExp(const OnnxNode &node, OnnxContext *context,
                         const Tensor &x, const ReduceAttrs &attrs) {
  Chain max(node, context);
  MACE_RETURN_IF_ERROR(max.Reduce(kMax, attrs, true, false));
  Chain chain(node, context);
  MACE_RETURN_IF_ERROR(
      chain.Eltwise(EltwiseType::kSub, {max.current()}, false));
  MACE_RETURN_IF_ERROR(chain.Eltwise(EltwiseType::kExp, {}, false));
  MACE_RETURN_IF_ERROR(chain.Reduce(kSum, attrs, true, false));
  MACE_RETURN_IF_ERROR(chain.Eltwise(EltwiseType::kLog, {}, false));
  MACE_RETURN_IF_ERROR(
      chain.Eltwise(EltwiseType::kSum, {max.current()}, attrs.keepdims));
  if (attrs.keepdims) return MaceStatus::MACE_SUCCESS;
  return chain.Reshape(ReducedShape(x.shape(), attrs));
}

MaceStatus EmitReduction(const OnnxNode &node, OnnxContext *context,
                         const Tensor &x, const ReduceAttrs &attrs, Kind kind,
                         int type) {
  Chain chain(node, context);
  switch (kind) {
    case Kind::kPlain:
      return chain.Reduce(type, attrs, attrs.keepdims, true);
    case Kind::kL1:
      MACE_RETURN_IF_ERROR(chain.Eltwise(EltwiseType::kAbs, {}, false));
      return chain.Reduce(kSum, attrs, attrs.keepdims, true);
    case Kind::kSumSquare:
      MACE_RETURN_IF_ERROR(
          chain.Eltwise(EltwiseType::kProd, {node.Input(0)}, false));
      return chain.Reduce(kSum, attrs, attrs.keepdims, true);
    case Kind::kL2:
      MACE_RETURN_IF_ERROR(
          chain.Eltwise(EltwiseType::kProd, {node.Input(0)}, false));
      MACE_RETURN_IF_ERROR(chain.Reduce(kSum, attrs, attrs.keepdims, false));
      return chain.Eltwise(EltwiseType::kSqrt, {}, true);
    case Kind::kLogSum:
      MACE_RETURN_IF_ERROR(chain.Reduce(kSum, attrs, attrs.keepdims, false));
      return chain.Eltwise(EltwiseType::kLog, {}, true);
    case Kind::kLogSumExp:
      return EmitLogSumExp(node, context, x, attrs);
  }
  return MaceStatus::MACE_SUCCESS;
}

// With noop_with_empty_axes the elementwise part still applies (numpy's
// sum over no axes): |x| for L1 and L2, x*x for SumSquare, log(x) for
// LogSum; LogSumExp and the plain reductions give x.
MaceStatus EmitNoop(const OnnxNode &node, OnnxContext *context, Kind kind) {
  Chain chain(node, context);
  switch (kind) {
    case Kind::kL1:
    case Kind::kL2:
      return chain.Eltwise(EltwiseType::kAbs, {}, true);
    case Kind::kSumSquare:
      return chain.Eltwise(EltwiseType::kProd, {node.Input(0)}, true);
    case Kind::kLogSum:
      return chain.Eltwise(EltwiseType::kLog, {}, true);
    default:
      return context->Emit("Identity", node.name(), {node.Input(0)},
                           {node.Output(0)});
  }
}

template <Kind kind, int type, int input_opset>
MaceStatus LowerReduce(const OnnxNode &node, OnnxContext *context) {
  const Tensor *x = node.HasInput(0) ? context->Find(node.Input(0)) : nullptr;
  if (x == nullptr) return node.InvalidArgs("input 0 is not defined");
  ReduceAttrs attrs;
  MACE_RETURN_IF_ERROR(ReadReduceAttrs(node, context, input_opset, *x, &attrs));
  const bool float_only =
      kind == Kind::kL2 || kind == Kind::kLogSum || kind == Kind::kLogSumExp;
  if (float_only && x->dtype() != DT_FLOAT) {
    return node.Unsupported("integer input (computed in float32 only)");
  }
  if (attrs.noop) return EmitNoop(node, context, kind);
  if (x->size() == 0) {
    AddEmptyResult(node, context, *x, attrs, kind, type);
    return MaceStatus::MACE_SUCCESS;
  }
  return EmitReduction(node, context, *x, attrs, kind, type);
}

template <bool argmin>
MaceStatus LowerArgMax(const OnnxNode &node, OnnxContext *context) {
  const Tensor *x = node.HasInput(0) ? context->Find(node.Input(0)) : nullptr;
  if (x == nullptr) return node.InvalidArgs("input 0 is not defined");
  int64_t axis = 0, keepdims = 1, last = 0;
  MACE_RETURN_IF_ERROR(node.Int("axis", 0, &axis));
  MACE_RETURN_IF_ERROR(node.Int("keepdims", 1, &keepdims));
  MACE_RETURN_IF_ERROR(node.Int("select_last_index", 0, &last));
  return context->Emit(
      "ArgMax", node.name(), {node.Input(0)}, {node.Output(0)},
      {OpArg::Int("axis", axis), OpArg::Int("keepdims", keepdims != 0 ? 1 : 0),
       OpArg::Int("argmin", argmin ? 1 : 0),
       OpArg::Int("select_last_index", last != 0 ? 1 : 0)});
}

}  // namespace

void RegisterOnnxReduceOps(OnnxLoweringTable *table) {
  (*table)["ReduceMean"] = LowerReduce<Kind::kPlain, kMean, 18>;
  (*table)["ReduceMin"] = LowerReduce<Kind::kPlain, kMin, 18>;
  (*table)["ReduceMax"] = LowerReduce<Kind::kPlain, kMax, 18>;
  (*table)["ReduceProd"] = LowerReduce<Kind::kPlain, kProd, 18>;
  (*table)["ReduceSum"] = LowerReduce<Kind::kPlain, kSum, 13>;
  (*table)["ReduceL1"] = LowerReduce<Kind::kL1, kSum, 18>;
  (*table)["ReduceL2"] = LowerReduce<Kind::kL2, kSum, 18>;
  (*table)["ReduceSumSquare"] = LowerReduce<Kind::kSumSquare, kSum, 18>;
  (*table)["ReduceLogSum"] = LowerReduce<Kind::kLogSum, kSum, 18>;
  (*table)["ReduceLogSumExp"] = LowerReduce<Kind::kLogSumExp, kSum, 18>;
  (*table)["ArgMax"] = LowerArgMax<false>;
  (*table)["ArgMin"] = LowerArgMax<true>;
}

}  // namespace converter
}  // namespace mace
