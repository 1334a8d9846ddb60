// Coverage-guided fuzzer (libFuzzer) of the TensorFlow converter, then of
// the engine on what it converts. Each input builds a frozen GraphDef:
// - one or two Placeholders of any element type, with a static, dynamic,
//   extreme, unknown-rank or missing shape attribute;
// - Const nodes of any element type, their values in the typed field or
//   in tensor_content (sometimes of the wrong length);
// - one to four nodes of the op types the converter lowers (now and then
//   an unknown one), their inputs drawn from the tensors so far, as "n",
//   "n:k" or a control input "^n", or undefined, with attributes drawn
//   from the names the lowerings read, of any attribute kind; now and
//   then a name taken twice or not a valid TensorFlow name;
// - the converter's options: a given input shape, a frozen input, the
//   outputs to keep.
// The converter runs as `mace convert` does, and what converts is loaded
// and run (converted_model.h says what counts as a bug there).
//
// Built by scripts/fuzz_ops.sh (clang, -DMACE_FUZZERS=ON, ASan + UBSan)
// with `tf` as its third argument; not part of CTest. Replaying an
// artifact with MACE_FUZZ_DUMP=FILE writes the GraphDef it builds to FILE,
// for `mace convert --platform tensorflow`.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "mace/converter/common/frontend.h"
#include "mace/converter/ir/graph_builder.h"
#include "mace/converter/tensorflow/tf_frontend.h"
#include "mace/converter/tensorflow/tf_graph.pb.h"
#include "mace/converter/tensorflow/tf_lowering.h"
#include "tests/fuzz/converted_model.h"
#include "tests/fuzz/fuzz_util.h"

namespace mace {
namespace fuzz {
namespace {

// Attribute names the lowerings read (mace/converter/tensorflow/*.cc).
const char *const kAttrNames[] = {
    "activation", "adj_x", "adj_y", "align_corners", "alpha", "axis",
    "batch_dims", "begin_mask", "block_shape", "block_size",
    "count_include_pad", "data_format", "dilations", "dims", "DstT", "dtype",
    "ellipsis_mask", "end_mask", "epsilon", "explicit_paddings",
    "half_pixel_centers", "is_training", "keep_dims", "keepdims", "ksize",
    "max", "min", "mode", "new_axis_mask", "num", "num_split", "padding",
    "shape", "shrink_axis_mask", "squeeze_dims", "strides", "T", "transpose_a",
    "transpose_b", "value",
};

const char *const kStrings[] = {"SAME", "VALID", "EXPLICIT", "NHWC", "NCHW",
                                "CONSTANT", "REFLECT", "SYMMETRIC", "",
                                "NDHWC"};

const tf::DataType kTypes[] = {
    tf::DT_FLOAT, tf::DT_FLOAT,  tf::DT_FLOAT,    tf::DT_INT32,
    tf::DT_INT32, tf::DT_INT64,  tf::DT_DOUBLE,   tf::DT_HALF,
    tf::DT_BFLOAT16, tf::DT_BOOL, tf::DT_UINT8,   tf::DT_INT8,
    tf::DT_INT16, tf::DT_UINT64, tf::DT_STRING,   tf::DT_COMPLEX64,
    tf::DT_INVALID, tf::DT_FLOAT_REF};

void FillShape(FuzzedDataProvider *data, const std::vector<int64_t> &dims,
               tf::TensorShapeProto *shape) {
  if (data->ConsumeIntegralInRange(0, 31) == 0) {
    shape->set_unknown_rank(true);
    return;
  }
  for (int64_t dim : dims) {
    shape->add_dim()->set_size(data->ConsumeIntegralInRange(0, 15) == 0 ? -1
                                                                        : dim);
  }
}

// Values in the typed field TensorFlow keeps for the type.
void FillTypedField(FuzzedDataProvider *data, tf::DataType type,
                    int64_t count, tf::TensorProto *tensor) {
  for (int64_t i = 0; i < count; ++i) {
    switch (type) {
      case tf::DT_FLOAT:
        tensor->add_float_val(AnyFloat(data));
        break;
      case tf::DT_DOUBLE:
        tensor->add_double_val(AnyFloat(data));
        break;
      case tf::DT_INT64:
        tensor->add_int64_val(AnyInt(data));
        break;
      case tf::DT_UINT64:
        tensor->add_uint64_val(static_cast<uint64_t>(AnyInt(data)));
        break;
      case tf::DT_BOOL:
        tensor->add_bool_val(data->ConsumeBool());
        break;
      case tf::DT_HALF:
      case tf::DT_BFLOAT16:
        tensor->add_half_val(data->ConsumeIntegral<uint16_t>());
        break;
      case tf::DT_STRING:
        tensor->add_string_val("s");
        break;
      default:
        tensor->add_int_val(static_cast<int32_t>(AnyInt(data)));
    }
  }
}

void FillAnyTensor(FuzzedDataProvider *data, tf::TensorProto *tensor) {
  const tf::DataType type = Pick(data, kTypes);
  tensor->set_dtype(type);
  const std::vector<int64_t> dims = AnyDims(data, 4);
  FillShape(data, dims, tensor->mutable_tensor_shape());
  int64_t count = std::max<int64_t>(ElementCount(dims), 0);
  // Now and then a count that disagrees with the dims: a single value is
  // how TensorFlow writes a filled constant.
  if (data->ConsumeIntegralInRange(0, 7) == 0) {
    count = data->ConsumeIntegralInRange<int64_t>(0, count + 2);
  }
  if (data->ConsumeIntegralInRange(0, 3) == 0) {
    tensor->set_tensor_content(
        data->ConsumeBytesAsString(static_cast<size_t>(count) * 4));
  } else {
    FillTypedField(data, type, count, tensor);
  }
}

void SetAnyAttr(FuzzedDataProvider *data, tf::AttrValue *attr) {
  switch (data->ConsumeIntegralInRange(0, 11)) {
    case 0:
      attr->set_i(AnyInt(data));
      break;
    case 1:
      attr->set_f(AnyFloat(data));
      break;
    case 2:
      attr->set_b(data->ConsumeBool());
      break;
    case 3:
      attr->set_s(Pick(data, kStrings));
      break;
    case 4:
      attr->set_type(Pick(data, kTypes));
      break;
    case 5:
      FillShape(data, AnyDims(data, 5), attr->mutable_shape());
      break;
    case 6:
      FillAnyTensor(data, attr->mutable_tensor());
      break;
    case 7: {
      auto *list = attr->mutable_list();
      const int n = data->ConsumeIntegralInRange(0, 8);
      for (int i = 0; i < n; ++i) list->add_f(AnyFloat(data));
      break;
    }
    case 8: {
      auto *list = attr->mutable_list();
      const int n = data->ConsumeIntegralInRange(0, 3);
      for (int i = 0; i < n; ++i) list->add_s(Pick(data, kStrings));
      break;
    }
    case 9:
      attr->set_placeholder("T");
      break;
    default: {
      auto *list = attr->mutable_list();
      const int n = data->ConsumeIntegralInRange(0, 8);
      for (int i = 0; i < n; ++i) list->add_i(AnyInt(data));
    }
  }
}

// An attribute of the kind the lowerings expect most of the time, so that
// the fuzzer reaches past the attribute checks.
void SetLikelyAttr(FuzzedDataProvider *data, const std::string &name,
                   tf::AttrValue *attr) {
  if (name == "T" || name == "dtype" || name == "DstT") {
    attr->set_type(Pick(data, kTypes));
  } else if (name == "padding" || name == "data_format" || name == "mode") {
    attr->set_s(Pick(data, kStrings));
  } else if (name == "strides" || name == "ksize" || name == "dilations" ||
             name == "explicit_paddings" || name == "squeeze_dims" ||
             name == "block_shape") {
    auto *list = attr->mutable_list();
    const int n = data->ConsumeBool() ? 4 : data->ConsumeIntegralInRange(0, 8);
    for (int i = 0; i < n; ++i) list->add_i(AnyInt(data));
  } else if (name == "shape") {
    FillShape(data, AnyDims(data, 5), attr->mutable_shape());
  } else if (name == "value") {
    FillAnyTensor(data, attr->mutable_tensor());
  } else {
    SetAnyAttr(data, attr);
  }
}

void AddAttrs(FuzzedDataProvider *data, tf::NodeDef *node) {
  const int attributes = data->ConsumeIntegralInRange(0, 6);
  for (int a = 0; a < attributes; ++a) {
    const std::string name = Pick(data, kAttrNames);
    tf::AttrValue *attr = &(*node->mutable_attr())[name];
    if (data->ConsumeIntegralInRange(0, 3) == 0) {
      SetAnyAttr(data, attr);
    } else {
      SetLikelyAttr(data, name, attr);
    }
  }
}

void AddPlaceholder(FuzzedDataProvider *data, const std::string &name,
                    tf::GraphDef *graph) {
  tf::NodeDef *node = graph->add_node();
  node->set_name(name);
  node->set_op("Placeholder");
  auto &attrs = *node->mutable_attr();
  attrs["dtype"].set_type(data->ConsumeIntegralInRange(0, 3) == 0
                              ? Pick(data, kTypes)
                              : tf::DT_FLOAT);
  if (data->ConsumeIntegralInRange(0, 15) == 0) return;  // no shape
  FillShape(data, AnyDims(data, 5), attrs["shape"].mutable_shape());
}

void AddConst(FuzzedDataProvider *data, const std::string &name,
              tf::GraphDef *graph) {
  tf::NodeDef *node = graph->add_node();
  node->set_name(name);
  node->set_op("Const");
  auto &attrs = *node->mutable_attr();
  if (data->ConsumeIntegralInRange(0, 15) == 0) {
    SetAnyAttr(data, &attrs["value"]);  // maybe not a tensor
  } else {
    FillAnyTensor(data, attrs["value"].mutable_tensor());
  }
  attrs["dtype"].set_type(attrs["value"].tensor().dtype());
}

// A reference to a tensor so far: "n", "n:k", "^n" or an undefined one.
std::string AnyInputRef(FuzzedDataProvider *data,
                        const std::vector<std::string> &names) {
  switch (data->ConsumeIntegralInRange(0, 15)) {
    case 0:
      return "undefined";
    case 1:
      return "^" + Pick(data, names);
    case 2:
    case 3:
      return Pick(data, names) + ":" +
             std::to_string(data->ConsumeIntegralInRange(0, 2));
    default:
      return Pick(data, names);
  }
}

void AddAnyNode(FuzzedDataProvider *data, int index,
                const std::vector<std::string> &op_types,
                std::vector<std::string> *names, tf::GraphDef *graph) {
  tf::NodeDef *node = graph->add_node();
  const int kind = data->ConsumeIntegralInRange(0, 31);
  node->set_op(kind == 0 ? "NoSuchOp" : Pick(data, op_types));
  std::string name = "n" + std::to_string(index);
  if (kind == 1) name = Pick(data, *names);  // defined twice
  if (kind == 2) name += ":1";               // not a valid name
  node->set_name(name);
  const int inputs = data->ConsumeIntegralInRange(0, 5);
  for (int i = 0; i < inputs; ++i) {
    node->add_input(AnyInputRef(data, *names));
  }
  AddAttrs(data, node);
  names->push_back(name);
}

tf::GraphDef AnyGraph(FuzzedDataProvider *data,
                      const std::vector<std::string> &op_types,
                      std::vector<std::string> *placeholders) {
  tf::GraphDef graph;
  std::vector<std::string> names;
  const int inputs = data->ConsumeIntegralInRange(1, 2);
  for (int i = 0; i < inputs; ++i) {
    names.push_back("x" + std::to_string(i));
    placeholders->push_back(names.back());
    AddPlaceholder(data, names.back(), &graph);
  }
  const int constants = data->ConsumeIntegralInRange(0, 4);
  for (int c = 0; c < constants; ++c) {
    names.push_back("c" + std::to_string(c));
    AddConst(data, names.back(), &graph);
  }
  const int nodes = data->ConsumeIntegralInRange(1, 4);
  for (int n = 0; n < nodes; ++n) {
    AddAnyNode(data, n, op_types, &names, &graph);
  }
  // Now and then a node out of topological order.
  if (graph.node_size() > 1 && data->ConsumeIntegralInRange(0, 15) == 0) {
    graph.mutable_node()->SwapElements(
        0, data->ConsumeIntegralInRange(1, graph.node_size() - 1));
  }
  return graph;
}

converter::ConvertOptions AnyOptions(
    FuzzedDataProvider *data, const tf::GraphDef &graph,
    const std::vector<std::string> &placeholders) {
  converter::ConvertOptions options;
  if (data->ConsumeIntegralInRange(0, 7) == 0) {
    const std::vector<int64_t> dims = AnyDims(data, 5);
    options.input_shapes[placeholders[0]] = Shape(dims.begin(), dims.end());
  }
  if (placeholders.size() > 1 && data->ConsumeIntegralInRange(0, 3) == 0) {
    options.constant_inputs[placeholders[1]] = AnyConstantInput(data);
  }
  if (data->ConsumeIntegralInRange(0, 15) == 0) {
    const tf::NodeDef &node =
        graph.node(data->ConsumeIntegralInRange(0, graph.node_size() - 1));
    options.output_names.push_back(
        node.name() + (data->ConsumeBool() ? ":1" : ""));
  }
  return options;
}

}  // namespace

// One fuzz input: a TensorFlow GraphDef converted, loaded and run.
int FuzzOneInput(const uint8_t *bytes, size_t size) {
  static const std::vector<std::string> kOpTypes = [] {
    std::vector<std::string> types = {"NoOp", "Assert", "Placeholder",
                                      "Const"};
    for (const auto &entry : converter::TfLowerings()) {
      types.push_back(entry.first);
    }
    return types;
  }();
  FuzzedDataProvider data(bytes, size);
  std::vector<std::string> placeholders;
  const tf::GraphDef graph_def = AnyGraph(&data, kOpTypes, &placeholders);
  const converter::ConvertOptions options =
      AnyOptions(&data, graph_def, placeholders);
  if (const char *dump = std::getenv("MACE_FUZZ_DUMP")) {
    std::ofstream(dump, std::ios::binary) << graph_def.SerializeAsString();
    PrintOptions(options);
  }
  converter::GraphBuilder graph;
  std::vector<converter::ConversionGap> gaps;
  const MaceStatus status = converter::ConvertTensorflowGraphDef(
      graph_def, "fuzz.pb", options, &graph, &gaps);
  ExpectExplained(status, "conversion");
  if (status == MaceStatus::MACE_SUCCESS) FinishLoadAndRun(&data, &graph);
  return 0;
}

}  // namespace fuzz
}  // namespace mace
