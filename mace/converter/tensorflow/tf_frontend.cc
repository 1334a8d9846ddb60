#include "mace/converter/tensorflow/tf_frontend.h"

#include <set>

#include "mace/converter/tensorflow/tf_graph.pb.h"
#include "mace/converter/tensorflow/tf_lowering.h"
#include "mace/converter/tensorflow/tf_tensor.h"
#include "mace/core/status.h"
#include "mace/model/model_loader.h"

namespace mace {
namespace converter {
namespace {

// Ops handled by the frontend itself rather than the lowering table.
bool IsPlaceholder(const tf::NodeDef &node) {
  return node.op() == "Placeholder";
}
// Nodes without a value at inference: NoOp, and Assert (a run-time check
// of the training graph, read through control inputs only).
bool HasNoValue(const tf::NodeDef &node) {
  return node.op() == "NoOp" || node.op() == "Assert";
}
bool IsInert(const tf::NodeDef &node) {
  return HasNoValue(node) || node.op() == "Const" || IsPlaceholder(node);
}

MaceStatus ReadGraph(const std::string &path, tf::GraphDef *graph) {
  std::string bytes;
  MACE_RETURN_IF_ERROR(ReadFileToString(path, &bytes));
  if (!graph->ParseFromString(bytes)) {
    return InvalidArgs("'", path,
                       "' is not a valid TensorFlow GraphDef (truncated or "
                       "corrupted protobuf)");
  }
  if (graph->node_size() == 0) {
    return InvalidArgs("'", path,
                       "' has no nodes (is it a frozen GraphDef "
                       ".pb? SavedModels must be frozen first)");
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus IndexGraph(const tf::GraphDef &graph, TfGraphIndex *index) {
  for (const tf::NodeDef &node : graph.node()) {
    if (node.name().empty()) {
      return InvalidArgs("a node of op '", node.op(), "' has no name");
    }
    if (node.name().find_first_of(":^") != std::string::npos) {
      return InvalidArgs("node name '", node.name(),
                         "' is not a valid TensorFlow name (':' and '^' "
                         "mark output indices and control inputs)");
    }
    if (!index->nodes.emplace(node.name(), &node).second) {
      return InvalidArgs("node '", node.name(), "' is defined twice");
    }
  }
  for (const tf::NodeDef &node : graph.node()) {
    for (const std::string &input : node.input()) {
      const TfTensorRef ref = ParseTfInput(input);
      if (ref.index >= 0) ++index->consumers[ref.node];
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

// Nodes in an order where every node follows its (data and control)
// inputs, original order kept where free. Nodes on a cycle (TF 1.x while
// loops) are left out and reported as gaps.
std::vector<const tf::NodeDef *> TopologicalOrder(
    const tf::GraphDef &graph, std::vector<ConversionGap> *gaps) {
  const int count = graph.node_size();
  std::map<std::string, int> position;
  for (int i = 0; i < count; ++i) position[graph.node(i).name()] = i;
  std::vector<int> pending(count, 0);
  std::vector<std::vector<int>> readers(count);
  for (int i = 0; i < count; ++i) {
    std::set<int> deps;
    for (const std::string &input : graph.node(i).input()) {
      auto dep = position.find(ParseTfInput(input).node);
      if (dep != position.end()) deps.insert(dep->second);
    }
    pending[i] = static_cast<int>(deps.size());
    for (int dep : deps) readers[dep].push_back(i);
  }
  // The earliest ready node first: the file's order where it is valid.
  std::set<int> ready;
  for (int i = 0; i < count; ++i) {
    if (pending[i] == 0) ready.insert(i);
  }
  std::vector<const tf::NodeDef *> order;
  while (!ready.empty()) {
    const int next = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(&graph.node(next));
    for (int reader : readers[next]) {
      if (--pending[reader] == 0) ready.insert(reader);
    }
  }
  for (int i = 0; i < count; ++i) {
    if (pending[i] > 0) {
      gaps->push_back({graph.node(i).op(), graph.node(i).name(),
                       "is on or after a cycle of the graph (control-flow "
                       "loops are not supported)"});
    }
  }
  return order;
}

MaceStatus AddConst(const tf::NodeDef &node, GraphBuilder *graph) {
  auto it = node.attr().find("value");
  if (it == node.attr().end() ||
      it->second.value_case() != tf::AttrValue::kTensor) {
    return InvalidArgs("node '", node.name(),
                       "' (Const): attribute 'value' should be a tensor");
  }
  DecodedTfTensor tensor;
  MACE_RETURN_IF_ERROR(DecodeTfTensor(
      it->second.tensor(), "node '" + node.name() + "' (Const)", &tensor));
  if (tensor.is_int) {
    graph->AddConstantInt(node.name(), tensor.shape, tensor.ints);
  } else {
    graph->AddConstant(node.name(), tensor.shape, tensor.floats);
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus CheckGivenShape(const std::string &name, const Shape &given,
                           const std::vector<int64_t> &declared, bool known) {
  if (!known) return MaceStatus::MACE_SUCCESS;
  bool match = given.size() == declared.size();
  for (size_t i = 0; match && i < given.size(); ++i) {
    match = declared[i] < 0 || declared[i] == given[i];
  }
  if (!match) {
    return InvalidArgs("the shape ", ShapeToString(given), " given for input '",
                       name, "' does not match the graph's ",
                       ShapeToString(declared));
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus AddPlaceholder(const tf::NodeDef &proto,
                          const ConvertOptions &options, TfContext *context) {
  TfNode node(proto, context);
  tf::DataType type = tf::DT_FLOAT;
  MACE_RETURN_IF_ERROR(node.Type("dtype", tf::DT_FLOAT, &type));
  bool is_int = false;
  MACE_RETURN_IF_ERROR(
      TfTypeIsInt(type, "input '" + proto.name() + "'", &is_int));
  std::vector<int64_t> declared;
  bool known = false;
  MACE_RETURN_IF_ERROR(node.ShapeAttr("shape", &declared, &known));
  GraphBuilder *graph = context->graph();
  auto frozen = options.constant_inputs.find(proto.name());
  if (frozen != options.constant_inputs.end()) {
    const ConvertOptions::ConstantInput &value = frozen->second;
    MACE_RETURN_IF_ERROR(
        CheckGivenShape(proto.name(), value.shape, declared, known));
    return AddConstantInput(proto.name(), value, is_int, graph);
  }
  Shape shape;
  auto given = options.input_shapes.find(proto.name());
  if (given != options.input_shapes.end()) {
    shape = given->second;
    MACE_RETURN_IF_ERROR(CheckGivenShape(proto.name(), shape, declared, known));
  } else {
    if (!known) {
      return InvalidArgs("input '", proto.name(),
                         "' has an unknown shape; give it with --input-shape ",
                         proto.name(), ":d0,d1,...");
    }
    for (size_t i = 0; i < declared.size(); ++i) {
      if (declared[i] < 0) {
        return InvalidArgs("input '", proto.name(),
                           "' has a dynamic dimension"
                           " (dim ",
                           i, " of ", ShapeToString(declared),
                           "); give its shape with --input-shape ",
                           proto.name(), ":d0,d1,...");
      }
    }
    shape = declared;
  }
  // TensorFlow is NHWC already: 4-D inputs are declared NHWC.
  return graph->AddInput(proto.name(), is_int ? DT_INT32 : DT_FLOAT, shape,
                         shape.size() == 4 ? 1 : 0);
}

MaceStatus AddInputs(const tf::GraphDef &graph, const ConvertOptions &options,
                     TfContext *context) {
  std::set<std::string> known;
  for (const auto &entry : options.input_shapes) known.insert(entry.first);
  for (const auto &entry : options.constant_inputs) known.insert(entry.first);
  for (const tf::NodeDef &node : graph.node()) {
    if (!IsPlaceholder(node)) continue;
    known.erase(node.name());
    MACE_RETURN_IF_ERROR(AddPlaceholder(node, options, context));
  }
  if (!known.empty()) {
    return InvalidArgs("--input-shape / --constant-input names '",
                       *known.begin(),
                       "', which is not a Placeholder of the graph");
  }
  return MaceStatus::MACE_SUCCESS;
}

// Lowers every node, poisoning the outputs of nodes that fail so their
// consumers are skipped rather than reported twice.
void LowerNodes(const std::vector<const tf::NodeDef *> &order,
                TfContext *context, std::vector<ConversionGap> *gaps) {
  const TfLoweringTable &table = TfLowerings();
  std::set<std::string> poisoned;  // node names
  for (const tf::NodeDef *proto : order) {
    if (IsPlaceholder(*proto) || HasNoValue(*proto)) continue;
    auto poison = [&]() { poisoned.insert(proto->name()); };
    if (context->graph()->Has(proto->name())) {
      gaps->push_back({proto->op(), proto->name(),
                       "the name is taken by a tensor the converter made "
                       "for an earlier node; rename the node"});
      poison();
      continue;
    }
    if (proto->op() == "Const") {
      const MaceStatus status = AddConst(*proto, context->graph());
      if (status != MaceStatus::MACE_SUCCESS) {
        gaps->push_back({"Const", proto->name(), status.information()});
        poison();
      }
      continue;
    }
    TfNode node(*proto, context);
    auto lowering = table.find(proto->op());
    if (lowering == table.end()) {
      gaps->push_back({proto->op(), proto->name(), "op is not supported"});
      poison();
      continue;
    }
    bool skip = false;
    std::string undefined;
    for (const std::string &input : proto->input()) {
      const TfTensorRef ref = ParseTfInput(input);
      if (ref.index < 0) continue;
      if (poisoned.count(ref.node)) skip = true;
      if (!context->graph()->Has(
              context->Resolve(TfTensorName(ref.node, ref.index)))) {
        undefined = input;
      }
    }
    if (skip) {
      poison();
      continue;
    }
    if (!undefined.empty()) {
      gaps->push_back({proto->op(), proto->name(),
                       "input '" + undefined +
                           "' is not produced by any node of the graph"});
      poison();
      continue;
    }
    const MaceStatus status = lowering->second(node, context);
    if (status != MaceStatus::MACE_SUCCESS) {
      gaps->push_back({proto->op(), proto->name(), status.information()});
      poison();
    }
  }
}

// The tensors to output: those named in the options, or every output of
// the nodes nothing reads.
MaceStatus OutputTensors(const tf::GraphDef &graph,
                         const ConvertOptions &options,
                         const TfGraphIndex &index, TfContext *context,
                         std::vector<std::string> *outputs) {
  if (!options.output_names.empty()) {
    for (const std::string &name : options.output_names) {
      const TfTensorRef ref = ParseTfInput(name);
      const std::string tensor = TfTensorName(ref.node, ref.index);
      if (ref.index < 0 || !index.nodes.count(ref.node) ||
          !context->graph()->Has(context->Resolve(tensor))) {
        return InvalidArgs("output '", name, "' is not a tensor of the graph");
      }
      outputs->push_back(tensor);
    }
    return MaceStatus::MACE_SUCCESS;
  }
  for (const tf::NodeDef &node : graph.node()) {
    if (IsInert(node) || index.consumers.count(node.name())) continue;
    for (int k = 0;; ++k) {
      const std::string tensor = TfTensorName(node.name(), k);
      if (!context->graph()->Has(context->Resolve(tensor))) break;
      outputs->push_back(tensor);
    }
  }
  if (outputs->empty()) {
    return InvalidArgs(
        "the graph has no output: every node's result is "
        "read by another node or is a constant");
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus AddOutputs(const std::vector<std::string> &outputs,
                      TfContext *context) {
  GraphBuilder *graph = context->graph();
  for (const std::string &output : outputs) {
    const std::string internal = context->Resolve(output);
    if (internal != output) {
      if (graph->Has(output)) {
        return InvalidArgs("output '", output, "' is ambiguous");
      }
      // Renamed (an Identity, an atrous pattern's end): give the value its
      // TensorFlow name.
      MACE_RETURN_IF_ERROR(graph->AddOp("Identity", graph->UniqueName(output),
                                        {internal}, {output}));
    }
    if (graph->IsGraphOutput(output)) continue;
    const int rank = context->RankOf(output);
    MACE_RETURN_IF_ERROR(graph->AddOutput(output, rank == 4 ? 1 : 0));
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace

MaceStatus ConvertTensorflowModel(const std::string &model_path,
                                  const ConvertOptions &options,
                                  GraphBuilder *graph,
                                  std::vector<ConversionGap> *gaps) {
  gaps->clear();
  tf::GraphDef graph_def;
  MACE_RETURN_IF_ERROR(ReadGraph(model_path, &graph_def));
  return ConvertTensorflowGraphDef(graph_def, model_path, options, graph,
                                   gaps);
}

MaceStatus ConvertTensorflowGraphDef(const tf::GraphDef &graph_def,
                                     const std::string &label,
                                     const ConvertOptions &options,
                                     GraphBuilder *graph,
                                     std::vector<ConversionGap> *gaps) {
  gaps->clear();
  TfGraphIndex index;
  MACE_RETURN_IF_ERROR(
      WithContext(IndexGraph(graph_def, &index), "'" + label + "'"));
  TfContext context(graph, &index);
  MACE_RETURN_IF_ERROR(WithContext(AddInputs(graph_def, options, &context),
                                   "'" + label + "'"));
  const std::vector<const tf::NodeDef *> order =
      TopologicalOrder(graph_def, gaps);
  FindAtrousConvs(graph_def, &context);
  LowerNodes(order, &context, gaps);
  if (!gaps->empty()) return Unsupported(GapReport(*gaps));
  std::vector<std::string> outputs;
  MACE_RETURN_IF_ERROR(
      OutputTensors(graph_def, options, index, &context, &outputs));
  return AddOutputs(outputs, &context);
}

}  // namespace converter
}  // namespace mace
