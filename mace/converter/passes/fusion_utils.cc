#include "mace/converter/passes/fusion_utils.h"

#include <algorithm>

#include "mace/converter/passes/graph_utils.h"
#include "mace/model/op_provenance.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

// Every argument ParseActivation reads.
const char *const kActivationArgs[] = {"activation", "max_limit",
                                       "activation_coefficient",
                                       "hardsigmoid_alpha", "hardsigmoid_beta"};

bool IsActivationArg(const std::string &name) {
  return std::find(std::begin(kActivationArgs), std::end(kActivationArgs),
                   name) != std::end(kActivationArgs);
}

bool IsDepthwise(const OperatorDef &op) {
  return op.type() == "DepthwiseConv2d" || op.type() == "DepthwiseDeconv2d";
}

bool IsFloatConstant(const GraphBuilder &graph, const std::string &name) {
  return graph.IsConstant(name) && graph.Find(name)->dtype() == DT_FLOAT;
}

// Multiplies each filter value by its output channel's scale. OHWI and
// [Cout, K] filters lead with the output channel; depthwise filters
// [Kh, Kw, C, M] end with it (channel c * M + m).
void ScaleFilter(GraphBuilder *graph, OperatorDef *op, int64_t channels,
                 const std::vector<float> &scale) {
  const Tensor *filter = graph->Find(op->input(1));
  const Shape shape = filter->shape();
  std::vector<float> values = ConstantValues(*graph, op->input(1));
  const int64_t per_channel = static_cast<int64_t>(values.size()) / channels;
  const bool depthwise = IsDepthwise(*op);
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t index = static_cast<int64_t>(i);
    values[i] *= scale[depthwise ? index % channels : index / per_channel];
  }
  const std::string name = graph->UniqueName(op->name() + "__folded_filter");
  graph->AddConstant(name, shape, values);
  op->set_input(1, name);
}

}  // namespace

int BiasIndex(const GraphBuilder &graph, const OperatorDef &op) {
  const bool deconv =
      op.type() == "Deconv2D" || op.type() == "DepthwiseDeconv2d";
  if (deconv && op.input_size() >= 3) {
    const Tensor *third = graph.Find(op.input(2));
    if (third != nullptr && third->dtype() == DT_INT32) return 3;
  }
  return 2;
}

int SoleConsumer(const GraphBuilder &graph, const ConsumerMap &consumers,
                 const std::string &tensor) {
  if (graph.IsGraphOutput(tensor)) return -1;
  auto it = consumers.find(tensor);
  if (it == consumers.end() || it->second.size() != 1) return -1;
  return static_cast<int>(it->second[0]);
}

MaceStatus FuseAtEveryOp(GraphBuilder *graph, TryFusionFn try_fusion) {
  ConsumerMap consumers = ConsumersOf(graph->ops());
  size_t i = 0;
  while (i < graph->ops().size()) {
    bool fused = false;
    MACE_RETURN_IF_ERROR(try_fusion(graph, i, consumers, &fused));
    if (fused) {
      consumers = ConsumersOf(graph->ops());
    } else {
      ++i;
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

size_t AbsorbConsumer(std::vector<OperatorDef> *ops, size_t producer,
                      size_t consumer) {
  (*ops)[producer].set_output(0, (*ops)[consumer].output(0));
  RecordFusion((*ops)[consumer], &(*ops)[producer]);
  ops->erase(ops->begin() + consumer);
  return consumer < producer ? producer - 1 : producer;
}

bool HasFusedActivation(const OperatorDef &op) {
  const std::string activation = StringArg(op, "activation", "NOOP");
  return !activation.empty() && activation != "NOOP";
}

bool IsPRelu(const OperatorDef &op) {
  return StringArg(op, "activation", "NOOP") == "PRELU";
}

void CopyActivationArgs(const OperatorDef &from, OperatorDef *to) {
  auto *args = to->mutable_arg();
  args->erase(std::remove_if(args->begin(), args->end(),
                             [](const Argument &arg) {
                               return IsActivationArg(arg.name());
                             }),
              args->end());
  for (const Argument &arg : from.arg()) {
    if (IsActivationArg(arg.name())) *to->add_arg() = arg;
  }
}

void CopyActivationArgsAs(const OperatorDef &from, const std::string &prefix,
                          OperatorDef *to) {
  for (const Argument &arg : from.arg()) {
    if (!IsActivationArg(arg.name())) continue;
    Argument *copy = to->add_arg();
    *copy = arg;
    copy->set_name(prefix + arg.name());
  }
}

bool IsPlainEltwise(const OperatorDef &op, EltwiseType type, int inputs) {
  if (op.type() != "Eltwise" || op.input_size() != inputs ||
      op.output_size() != 1 ||
      IntArg(op, "type", -1) != static_cast<int64_t>(type)) {
    return false;
  }
  const Argument *coeff = FindArg(op, "coeff");
  return (coeff == nullptr || coeff->floats_size() == 0) &&
         !HasFusedActivation(op);
}

bool IsPlainBinaryEltwise(const OperatorDef &op, EltwiseType type) {
  return IsPlainEltwise(op, type, 2) && FindArg(op, "scalar_input") == nullptr;
}

void ReplaceWithActivation(const std::string &input,
                           const std::string &activation,
                           const OperatorDef &absorbed, OperatorDef *op) {
  OperatorDef replacement;
  replacement.set_type("Activation");
  replacement.set_name(op->name());
  replacement.add_input(input);
  replacement.add_output(op->output(0));
  Argument *kind = replacement.add_arg();
  kind->set_name("activation");
  kind->set_s(activation);
  RecordFusion(absorbed, &replacement);
  *op = std::move(replacement);
}

bool HasFusedAdd(const OperatorDef &op) {
  return IntArg(op, kFusedAddArg, 0) != 0;
}

std::string AddZeroBias(GraphBuilder *graph, const OperatorDef &op,
                        int64_t channels) {
  const std::string bias = graph->UniqueName(op.name() + "__zero_bias");
  graph->AddConstant(bias, {channels},
                     std::vector<float>(static_cast<size_t>(channels), 0.0f));
  return bias;
}

bool HasInputScale(const OperatorDef &op) {
  return IntArg(op, kInputScaleArg, 0) != 0;
}

bool IsWeightedOp(const OperatorDef &op, bool with_fully_connected) {
  const std::string &type = op.type();
  return ((type == "Conv2D" && !HasFusedAdd(op)) || type == "DepthwiseConv2d" ||
          type == "Deconv2D" || type == "DepthwiseDeconv2d" ||
          (with_fully_connected && type == "FullyConnected"));
}

bool HasConstantWeights(const GraphBuilder &graph, const OperatorDef &op) {
  if (op.input_size() < 2 || op.output_size() != 1 ||
      !IsFloatConstant(graph, op.input(1))) {
    return false;
  }
  const int bias = BiasIndex(graph, op);
  return bias >= op.input_size() || IsFloatConstant(graph, op.input(bias));
}

MaceStatus FoldChannelAffine(GraphBuilder *graph, size_t index,
                             const std::vector<float> &scale,
                             const std::vector<float> &shift) {
  OperatorDef &op = (*graph->mutable_ops())[index];
  const int64_t channels = graph->Find(op.output(0))->dim(-1);
  const size_t count = static_cast<size_t>(channels);
  if ((!scale.empty() && scale.size() != count) ||
      (!shift.empty() && shift.size() != count)) {
    return InvalidArgs("op '", op.name(), "': folding ", scale.size(),
                       " scales and ", shift.size(), " shifts into ", channels,
                       " output channels");
  }
  if (!scale.empty()) ScaleFilter(graph, &op, channels, scale);
  const int bias_index = BiasIndex(*graph, op);
  const bool has_bias = bias_index < op.input_size();
  if (!has_bias && shift.empty()) return graph->Reinfer(index);
  std::vector<float> bias = has_bias
                                ? ConstantValues(*graph, op.input(bias_index))
                                : std::vector<float>(count, 0.0f);
  for (size_t c = 0; c < count; ++c) {
    if (!scale.empty()) bias[c] *= scale[c];
    if (!shift.empty()) bias[c] += shift[c];
  }
  const std::string name = graph->UniqueName(op.name() + "__folded_bias");
  graph->AddConstant(name, {channels}, bias);
  if (has_bias) {
    op.set_input(bias_index, name);
  } else {
    op.add_input(name);
  }
  return graph->Reinfer(index);
}

}  // namespace converter
}  // namespace mace
