#include "mace/converter/onnx/onnx_frontend.h"

#include <set>

#include "mace/converter/onnx/onnx.pb.h"
#include "mace/converter/onnx/onnx_arity.h"
#include "mace/converter/onnx/onnx_lowering.h"
#include "mace/converter/onnx/onnx_tensor.h"
#include "mace/core/status.h"
#include "mace/model/model_loader.h"

namespace mace {
namespace converter {
namespace {

std::string DirectoryOf(const std::string &path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".")
                                    : path.substr(0, slash);
}

MaceStatus ReadModel(const std::string &path, onnx::ModelProto *model) {
  std::string bytes;
  MACE_RETURN_IF_ERROR(ReadFileToString(path, &bytes));
  if (!model->ParseFromString(bytes)) {
    return InvalidArgs("'", path,
                       "' is not a valid ONNX model (truncated or corrupted "
                       "protobuf)");
  }
  return MaceStatus::MACE_SUCCESS;
}

int DefaultOpset(const onnx::ModelProto &model) {
  for (const auto &opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") {
      return static_cast<int>(opset.version());
    }
  }
  return -1;
}

MaceStatus AddInitializers(const onnx::GraphProto &graph,
                           const std::string &dir, GraphBuilder *builder) {
  for (const onnx::TensorProto &proto : graph.initializer()) {
    DecodedTensor tensor;
    MACE_RETURN_IF_ERROR(DecodeOnnxTensor(proto, dir, &tensor));
    if (builder->Has(proto.name())) {
      return InvalidArgs("initializer '", proto.name(), "' is defined twice");
    }
    if (tensor.is_int) {
      builder->AddConstantInt(proto.name(), tensor.shape, tensor.ints);
    } else {
      builder->AddConstant(proto.name(), tensor.shape, tensor.floats);
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus InputShape(const onnx::ValueInfoProto &input,
                      const ConvertOptions &options, Shape *shape) {
  auto given = options.input_shapes.find(input.name());
  if (given != options.input_shapes.end()) {
    *shape = given->second;
    return MaceStatus::MACE_SUCCESS;
  }
  shape->clear();
  const auto &dims = input.type().tensor_type().shape().dim();
  for (int i = 0; i < dims.size(); ++i) {
    if (!dims[i].has_dim_value() || dims[i].dim_value() < 0) {
      const std::string param = dims[i].dim_param();
      return InvalidArgs("input '", input.name(), "' has a dynamic dimension ",
                         param.empty() ? "" : "'" + param + "' ", "(dim ", i,
                         "); give its shape with --input-shape ",
                         input.name(), ":d0,d1,...");
    }
    shape->push_back(dims[i].dim_value());
  }
  return MaceStatus::MACE_SUCCESS;
}

// An input given a value at conversion time becomes a constant; its
// declared static dims (if any) must agree with the value's shape.
MaceStatus FreezeInput(const onnx::ValueInfoProto &input,
                       const ConvertOptions::ConstantInput &value,
                       GraphBuilder *builder) {
  const auto &dims = input.type().tensor_type().shape().dim();
  bool dims_match = dims.size() == static_cast<int>(value.shape.size());
  for (int i = 0; dims_match && i < dims.size(); ++i) {
    dims_match = !dims[i].has_dim_value() ||
                 dims[i].dim_value() == value.shape[i];
  }
  if (input.type().tensor_type().has_shape() && !dims_match) {
    return InvalidArgs("constant input '", input.name(), "' has shape ",
                       ShapeToString(value.shape),
                       ", which does not match the model's declaration");
  }
  bool is_int = false;
  MACE_RETURN_IF_ERROR(OnnxElemTypeIsInt(
      input.type().tensor_type().elem_type(), "input '" + input.name() + "'",
      &is_int));
  return AddConstantInput(input.name(), value, is_int, builder);
}

MaceStatus AddInputs(const onnx::GraphProto &graph,
                     const ConvertOptions &options,
                     OnnxContext *context) {
  GraphBuilder *builder = context->graph();
  std::set<std::string> known;
  for (const auto &entry : options.input_shapes) known.insert(entry.first);
  for (const auto &entry : options.constant_inputs) known.insert(entry.first);
  for (const onnx::ValueInfoProto &input : graph.input()) {
    known.erase(input.name());
    if (builder->Has(input.name())) continue;  // an initializer
    auto frozen = options.constant_inputs.find(input.name());
    if (frozen != options.constant_inputs.end()) {
      MACE_RETURN_IF_ERROR(FreezeInput(input, frozen->second, builder));
      continue;
    }
    Shape shape;
    MACE_RETURN_IF_ERROR(InputShape(input, options, &shape));
    bool is_int = false;
    MACE_RETURN_IF_ERROR(OnnxElemTypeIsInt(
        input.type().tensor_type().elem_type(), "input '" + input.name() + "'",
        &is_int));
    const DataType dtype = is_int ? DT_INT32 : DT_FLOAT;
    if (shape.size() == 4 && options.inputs_nhwc) {
      const Shape nhwc{shape[0], shape[2], shape[3], shape[1]};
      MACE_RETURN_IF_ERROR(builder->AddInput(input.name(), dtype, nhwc, 1));
      const std::string nchw = context->Temp(input.name() + "__nchw");
      MACE_RETURN_IF_ERROR(context->Emit("Transpose", nchw, {input.name()},
                                         {nchw},
                                         {OpArg::Ints("dims", {0, 3, 1, 2})}));
      context->Rename(input.name(), nchw);
    } else {
      MACE_RETURN_IF_ERROR(builder->AddInput(input.name(), dtype, shape,
                                             shape.size() == 4 ? 2 : 0));
    }
  }
  if (!known.empty()) {
    return InvalidArgs("--input-shape / --constant-input names '",
                       *known.begin(), "', which is not an input of the "
                       "model");
  }
  return MaceStatus::MACE_SUCCESS;
}

// An output of `node` that an earlier node, an initializer, a graph input
// or another output of the node defines already; "" when none does.
std::string RedefinedOutput(const OnnxNode &node, const OnnxContext &context) {
  std::set<std::string> seen;
  for (int i = 0; i < node.num_outputs(); ++i) {
    const std::string &output = node.proto().output(i);
    if (output.empty()) continue;
    if (context.Find(node.Output(i)) != nullptr ||
        !seen.insert(output).second) {
      return output;
    }
  }
  return "";
}

// Lowers every node, poisoning the outputs of nodes that fail so their
// consumers are skipped rather than reported twice.
void LowerNodes(const onnx::GraphProto &graph, OnnxContext *context,
                std::vector<ConversionGap> *gaps) {
  const OnnxLoweringTable &table = OnnxLowerings();
  std::set<std::string> poisoned;
  for (const onnx::NodeProto &proto : graph.node()) {
    OnnxNode node(proto, context);
    bool skip = false;
    for (const std::string &input : proto.input()) {
      skip = skip || poisoned.count(input) > 0;
    }
    auto poison = [&]() {
      poisoned.insert(proto.output().begin(), proto.output().end());
    };
    if (!proto.domain().empty() && proto.domain() != "ai.onnx") {
      gaps->push_back({proto.op_type(), node.name(),
                       "domain '" + proto.domain() + "' is not supported"});
      poison();
      continue;
    }
    auto lowering = table.find(proto.op_type());
    if (lowering == table.end()) {
      gaps->push_back({proto.op_type(), node.name(), "op is not supported"});
      poison();
      continue;
    }
    if (skip) {
      poison();
      continue;
    }
    const OnnxArity *arity = OnnxInputArity(proto.op_type());
    const MaceStatus arity_status =
        arity == nullptr
            ? node.Unsupported("the converter knows no input count for it")
            : node.ExpectInputs(arity->min_inputs, arity->max_inputs);
    if (arity_status != MaceStatus::MACE_SUCCESS) {
      gaps->push_back({proto.op_type(), node.name(),
                       arity_status.information()});
      poison();
      continue;
    }
    std::string undefined;
    for (int i = 0; i < proto.input_size(); ++i) {
      if (node.HasInput(i) && !context->graph()->Has(node.Input(i))) {
        undefined = proto.input(i);
      }
    }
    if (!undefined.empty()) {
      gaps->push_back({proto.op_type(), node.name(),
                       "input '" + undefined +
                           "' is not produced by any node, initializer or "
                           "graph input"});
      poison();
      continue;
    }
    const std::string redefined = RedefinedOutput(node, *context);
    if (!redefined.empty()) {
      gaps->push_back({proto.op_type(), node.name(),
                       "output '" + redefined +
                           "' is already defined (an ONNX value is "
                           "assigned once)"});
      continue;
    }
    const MaceStatus status = lowering->second(node, context);
    if (status != MaceStatus::MACE_SUCCESS) {
      gaps->push_back({proto.op_type(), node.name(), status.information()});
      poison();
      continue;
    }
    for (int i = 0; i < proto.output_size(); ++i) {
      if (!proto.output(i).empty() && !context->graph()->Has(node.Output(i))) {
        poisoned.insert(proto.output(i));
      }
    }
  }
}

// The model's outputs, or the values options.output_names asks for
// (intermediate ones included: `check_tensors` validation reads them).
std::vector<std::string> OutputNames(const onnx::GraphProto &graph,
                                     const ConvertOptions &options) {
  if (!options.output_names.empty()) return options.output_names;
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    names.push_back(output.name());
  }
  return names;
}

MaceStatus AddOutputs(const std::vector<std::string> &names,
                      const ConvertOptions &options,
                      OnnxContext *context) {
  for (const std::string &name : names) {
    const std::string internal = context->Resolve(name);
    if (!context->graph()->Has(internal)) {
      return InvalidArgs("output '", name,
                         "' is not a tensor of the graph (no node makes it, "
                         "or its producer does not produce that optional "
                         "output)");
    }
    const int rank = context->RankOf(internal);
    if (internal == name) {
      MACE_RETURN_IF_ERROR(
          context->graph()->AddOutput(name, rank == 4 ? 2 : 0));
      continue;
    }
    // The producer wrote a renamed tensor: give the value its ONNX name,
    // in NHWC when asked for 4-D outputs.
    if (rank == 4 && options.outputs_nhwc) {
      MACE_RETURN_IF_ERROR(
          context->Emit("Transpose", name, {internal},
                        {name}, {OpArg::Ints("dims", {0, 2, 3, 1})}));
      MACE_RETURN_IF_ERROR(context->graph()->AddOutput(name, 1));
    } else {
      MACE_RETURN_IF_ERROR(context->Emit("Identity", name, {internal},
                                         {name}));
      MACE_RETURN_IF_ERROR(
          context->graph()->AddOutput(name, rank == 4 ? 2 : 0));
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace

MaceStatus ConvertOnnxModel(const std::string &model_path,
                            const ConvertOptions &options,
                            GraphBuilder *graph,
                            std::vector<ConversionGap> *gaps) {
  gaps->clear();
  onnx::ModelProto model;
  MACE_RETURN_IF_ERROR(ReadModel(model_path, &model));
  return ConvertOnnxModelProto(model, model_path, DirectoryOf(model_path),
                               options, graph, gaps);
}

MaceStatus ConvertOnnxModelProto(const onnx::ModelProto &model,
                                 const std::string &label,
                                 const std::string &model_dir,
                                 const ConvertOptions &options,
                                 GraphBuilder *graph,
                                 std::vector<ConversionGap> *gaps) {
  gaps->clear();
  if (!model.has_graph() || model.graph().node_size() == 0) {
    return InvalidArgs("'", label, "' has no graph or an empty graph");
  }
  const int opset = DefaultOpset(model);
  if (opset < kMinOnnxOpset || opset > kMaxOnnxOpset) {
    gaps->push_back({"opset", label,
                     StrCat("opset ", opset, " is outside the supported ",
                            kMinOnnxOpset, " to ", kMaxOnnxOpset)});
  }
  const onnx::GraphProto &onnx_graph = model.graph();
  OnnxContext context(graph, opset, model_dir);
  MACE_RETURN_IF_ERROR(WithContext(
      AddInitializers(onnx_graph, context.model_dir(), graph),
      "'" + label + "'"));
  for (const onnx::TensorProto &init : onnx_graph.initializer()) {
    context.SetOnnxType(init.name(), init.data_type());
  }
  for (const auto *infos : {&onnx_graph.input(), &onnx_graph.value_info(),
                            &onnx_graph.output()}) {
    for (const onnx::ValueInfoProto &info : *infos) {
      const int type = info.type().tensor_type().elem_type();
      if (type != 0) context.SetOnnxType(info.name(), type);
    }
  }
  MACE_RETURN_IF_ERROR(AddInputs(onnx_graph, options, &context));
  const std::vector<std::string> outputs = OutputNames(onnx_graph, options);
  if (options.outputs_nhwc) {
    for (const std::string &output : outputs) {
      context.Rename(output, context.Temp(output + "__nchw"));
    }
  }
  LowerNodes(onnx_graph, &context, gaps);
  if (!gaps->empty()) return Unsupported(GapReport(*gaps));
  return AddOutputs(outputs, options, &context);
}

}  // namespace converter
}  // namespace mace
