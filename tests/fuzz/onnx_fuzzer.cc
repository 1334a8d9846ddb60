// Coverage-guided fuzzer (libFuzzer) of the ONNX converter, then of the
// engine on what it converts. Each input builds an ONNX model:
// - an opset (mostly a real one), one or two graph inputs of any element
//   type with static, dynamic, extreme or missing dims;
// - initializers of any element type, stored in the typed fields or in
//   raw_data (sometimes of the wrong length), now and then "external";
// - one to four nodes of the op types the converter lowers (and now and
//   then an unknown type or domain), their inputs drawn from the values
//   so far, "" or undefined names, with attributes drawn from the names
//   the lowerings read, of any attribute type;
// - the converter's options: NHWC inputs / outputs, a given input shape, a
//   frozen input, the outputs to keep.
// The converter runs as `mace convert` does, and what converts is loaded
// and run (converted_model.h says what counts as a bug there).
//
// Built by scripts/fuzz_ops.sh (clang, -DMACE_FUZZERS=ON, ASan + UBSan)
// with `onnx` as its third argument; not part of CTest. Replaying an
// artifact with MACE_FUZZ_DUMP=FILE writes the ONNX model it builds to
// FILE, for `mace convert` or onnx's printer:
// `MACE_FUZZ_DUMP=/tmp/m.onnx build-fuzz/onnx_fuzzer ARTIFACT`.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "mace/converter/common/frontend.h"
#include "mace/converter/ir/graph_builder.h"
#include "mace/converter/onnx/onnx.pb.h"
#include "mace/converter/onnx/onnx_frontend.h"
#include "mace/converter/onnx/onnx_lowering.h"
#include "mace/converter/onnx/onnx_tensor.h"
#include "mace/model/model_builder.h"
#include "mace/public/mace.h"
#include "tests/fuzz/converted_model.h"
#include "tests/fuzz/fuzz_util.h"

namespace mace {
namespace fuzz {
namespace {

using onnx::AttributeProto;
using onnx::TensorProto;

// Attribute names the lowerings read (mace/converter/onnx/*.cc).
const char *const kAttrNames[] = {
    "activation", "alpha", "allowzero", "antialias", "approximate",
    "auto_pad", "axes", "axis", "beta", "bias", "blocksize", "ceil_mode",
    "coordinate_transformation_mode", "count_include_pad", "cubic_coeff_a",
    "dilations", "epsilon", "exclude_outside", "extrapolation_value", "fmod",
    "gamma", "group", "keep_aspect_ratio_policy", "keepdims", "kernel_shape",
    "lambd", "max", "min", "mode", "momentum", "nearest_mode",
    "noop_with_empty_axes", "num_outputs", "output_padding", "output_shape",
    "pads", "perm", "select_last_index", "size", "spatial", "split",
    "stash_type", "start", "storage_order", "strides", "to",
    "training_mode", "transA", "transB", "value", "value_float",
    "value_floats", "value_int", "value_ints", "sparse_value",
    "detect_negative", "detect_positive", "largest", "sorted", "reverse",
    "exclusive", "end", "seed"};

const char *const kStringValues[] = {
    "",           "NOTSET",       "SAME_UPPER",        "SAME_LOWER",
    "VALID",      "constant",     "reflect",           "edge",
    "wrap",       "nearest",      "linear",            "cubic",
    "DCR",        "CRD",          "half_pixel",        "asymmetric",
    "align_corners", "pytorch_half_pixel", "tf_crop_and_resize",
    "half_pixel_symmetric", "round_prefer_floor", "round_prefer_ceil",
    "floor",      "ceil",         "none",              "tanh",
    "stretch",    "not_larger",   "not_smaller"};

const int kElemTypes[] = {
    TensorProto::FLOAT,  TensorProto::FLOAT,   TensorProto::FLOAT,
    TensorProto::INT64,  TensorProto::INT64,   TensorProto::INT32,
    TensorProto::DOUBLE, TensorProto::FLOAT16, TensorProto::BFLOAT16,
    TensorProto::BOOL,   TensorProto::UINT8,   TensorProto::INT8,
    TensorProto::UINT64, TensorProto::STRING,  TensorProto::UNDEFINED};

const int kOpsets[] = {7, 9, 10, 11, 12, 13, 14, 17, 18, 19, 21, 26};

// Values in the typed field ONNX keeps for the type.
void FillTypedField(FuzzedDataProvider *data, int elem_type, int64_t count,
                    TensorProto *tensor) {
  for (int64_t i = 0; i < count; ++i) {
    switch (elem_type) {
      case TensorProto::FLOAT:
        tensor->add_float_data(AnyFloat(data));
        break;
      case TensorProto::DOUBLE:
        tensor->add_double_data(AnyFloat(data));
        break;
      case TensorProto::INT64:
        tensor->add_int64_data(AnyInt(data));
        break;
      case TensorProto::UINT64:
        tensor->add_uint64_data(static_cast<uint64_t>(AnyInt(data)));
        break;
      case TensorProto::STRING:
        tensor->add_string_data("s");
        break;
      default:  // the int32 field also holds the narrow types' bits
        tensor->add_int32_data(static_cast<int32_t>(AnyInt(data)));
    }
  }
}

void FillAnyTensor(FuzzedDataProvider *data, const std::string &name,
                   TensorProto *tensor) {
  tensor->set_name(name);
  const int elem_type = Pick(data, kElemTypes);
  tensor->set_data_type(elem_type);
  const std::vector<int64_t> dims = AnyDims(data, 4);
  for (int64_t dim : dims) tensor->add_dims(dim);
  int64_t count = std::max<int64_t>(ElementCount(dims), 0);
  // Now and then a count that disagrees with the dims.
  if (data->ConsumeIntegralInRange(0, 15) == 0) {
    count = data->ConsumeIntegralInRange<int64_t>(0, count + 2);
  }
  switch (data->ConsumeIntegralInRange(0, 7)) {
    case 0: {
      tensor->set_data_location(TensorProto::EXTERNAL);
      static const char *const kLocations[] = {"weights.bin", "../x", "/x",
                                               ""};
      auto *location = tensor->add_external_data();
      location->set_key("location");
      location->set_value(Pick(data, kLocations));
      if (data->ConsumeBool()) {
        auto *length = tensor->add_external_data();
        length->set_key(data->ConsumeBool() ? "length" : "offset");
        length->set_value(std::to_string(AnyInt(data)));
      }
      break;
    }
    case 1: case 2: case 3:
      // Types without a fixed size get a byte an element.
      tensor->set_raw_data(data->ConsumeBytesAsString(
          static_cast<size_t>(count) *
          std::max(1, converter::OnnxElemSize(elem_type))));
      break;
    default:
      FillTypedField(data, elem_type, count, tensor);
  }
}

void AddAnyAttribute(FuzzedDataProvider *data, onnx::NodeProto *node) {
  AttributeProto *attr = node->add_attribute();
  attr->set_name(Pick(data, kAttrNames));
  switch (data->ConsumeIntegralInRange(0, 6)) {
    case 0:
      attr->set_type(AttributeProto::INT);
      attr->set_i(AnyInt(data));
      break;
    case 1:
      attr->set_type(AttributeProto::FLOAT);
      attr->set_f(AnyFloat(data));
      break;
    case 2:
      attr->set_type(AttributeProto::STRING);
      attr->set_s(Pick(data, kStringValues));
      break;
    case 3: {
      attr->set_type(AttributeProto::INTS);
      const int n = data->ConsumeIntegralInRange(0, 8);
      for (int i = 0; i < n; ++i) attr->add_ints(AnyInt(data));
      break;
    }
    case 4: {
      attr->set_type(AttributeProto::FLOATS);
      const int n = data->ConsumeIntegralInRange(0, 8);
      for (int i = 0; i < n; ++i) attr->add_floats(AnyFloat(data));
      break;
    }
    case 5:
      attr->set_type(AttributeProto::TENSOR);
      FillAnyTensor(data, "", attr->mutable_t());
      break;
    default:  // a declared type that its value does not have
      attr->set_type(static_cast<AttributeProto::AttributeType>(
          data->ConsumeIntegralInRange(0, 14)));
      if (data->ConsumeBool()) attr->set_i(AnyInt(data));
  }
}

void AddAnyInput(FuzzedDataProvider *data, const std::string &name,
                 onnx::GraphProto *graph) {
  onnx::ValueInfoProto *input = graph->add_input();
  input->set_name(name);
  if (data->ConsumeIntegralInRange(0, 15) == 0) return;  // no type at all
  auto *type = input->mutable_type()->mutable_tensor_type();
  type->set_elem_type(data->ConsumeIntegralInRange(0, 3) == 0
                          ? Pick(data, kElemTypes)
                          : TensorProto::FLOAT);
  if (data->ConsumeIntegralInRange(0, 15) == 0) return;  // no shape
  auto *shape = type->mutable_shape();
  for (int64_t dim : AnyDims(data, 5)) {
    if (data->ConsumeIntegralInRange(0, 15) == 0) {
      shape->add_dim()->set_dim_param("N");
    } else {
      shape->add_dim()->set_dim_value(dim);
    }
  }
}

void AddAnyNode(FuzzedDataProvider *data, int index,
                const std::vector<std::string> &op_types,
                std::vector<std::string> *names, onnx::GraphProto *graph) {
  onnx::NodeProto *node = graph->add_node();
  const int kind = data->ConsumeIntegralInRange(0, 31);
  node->set_op_type(kind == 0 ? "NoSuchOp" : Pick(data, op_types));
  if (kind == 1) node->set_domain("com.microsoft");
  if (data->ConsumeBool()) node->set_name("node" + std::to_string(index));
  const int inputs = data->ConsumeIntegralInRange(0, 5);
  for (int i = 0; i < inputs; ++i) {
    const int choice = data->ConsumeIntegralInRange(0, 15);
    node->add_input(choice == 0 ? "" : choice == 1 ? "undefined"
                                                   : Pick(data, *names));
  }
  const int outputs = data->ConsumeIntegralInRange(1, 3);
  for (int o = 0; o < outputs; ++o) {
    std::string output = "n" + std::to_string(index) + "_" + std::to_string(o);
    // An optional output left unnamed, or a name produced twice.
    if (o > 0 && data->ConsumeIntegralInRange(0, 7) == 0) output = "";
    if (data->ConsumeIntegralInRange(0, 31) == 0) output = Pick(data, *names);
    node->add_output(output);
    if (!output.empty()) names->push_back(output);
  }
  const int attributes = data->ConsumeIntegralInRange(0, 6);
  for (int a = 0; a < attributes; ++a) AddAnyAttribute(data, node);
}

onnx::ModelProto AnyModel(FuzzedDataProvider *data,
                          const std::vector<std::string> &op_types) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(
      data->ConsumeIntegralInRange(0, 15) == 0 ? AnyInt(data)
                                               : Pick(data, kOpsets));
  onnx::GraphProto *graph = model.mutable_graph();
  std::vector<std::string> names;
  const int inputs = data->ConsumeIntegralInRange(1, 2);
  for (int i = 0; i < inputs; ++i) {
    names.push_back("x" + std::to_string(i));
    AddAnyInput(data, names.back(), graph);
  }
  const int initializers = data->ConsumeIntegralInRange(0, 4);
  for (int c = 0; c < initializers; ++c) {
    // Sometimes an initializer gives a graph input its default value, or
    // two share a name.
    const int choice = data->ConsumeIntegralInRange(0, 15);
    std::string name =
        choice == 0 ? Pick(data, names) : "c" + std::to_string(c);
    if (choice != 0) names.push_back(name);
    FillAnyTensor(data, name, graph->add_initializer());
  }
  const int nodes = data->ConsumeIntegralInRange(1, 4);
  for (int n = 0; n < nodes; ++n) {
    AddAnyNode(data, n, op_types, &names, graph);
  }
  const int outputs = data->ConsumeIntegralInRange(0, 7) == 0 ? 2 : 1;
  for (int o = 0; o < outputs; ++o) {
    const onnx::NodeProto &last = graph->node(graph->node_size() - 1);
    graph->add_output()->set_name(o == 0 && !last.output(0).empty()
                                      ? last.output(0)
                                      : Pick(data, names));
  }
  return model;
}

converter::ConvertOptions AnyOptions(FuzzedDataProvider *data,
                                     const onnx::ModelProto &model) {
  converter::ConvertOptions options;
  options.inputs_nhwc = data->ConsumeIntegralInRange(0, 3) == 0;
  options.outputs_nhwc = data->ConsumeIntegralInRange(0, 3) == 0;
  const onnx::GraphProto &graph = model.graph();
  if (data->ConsumeIntegralInRange(0, 7) == 0) {
    const std::vector<int64_t> dims = AnyDims(data, 5);
    options.input_shapes[graph.input(0).name()] = Shape(dims.begin(),
                                                        dims.end());
  }
  if (graph.input_size() > 1 && data->ConsumeIntegralInRange(0, 3) == 0) {
    options.constant_inputs[graph.input(1).name()] = AnyConstantInput(data);
  }
  if (data->ConsumeIntegralInRange(0, 15) == 0) {
    options.output_names.push_back(graph.node(0).output(0));
  }
  return options;
}

}  // namespace

// One fuzz input: an ONNX model converted, loaded and run.
int FuzzOneInput(const uint8_t *bytes, size_t size) {
  static const std::vector<std::string> kOpTypes = [] {
    std::vector<std::string> types;
    for (const auto &entry : converter::OnnxLowerings()) {
      types.push_back(entry.first);
    }
    return types;
  }();
  FuzzedDataProvider data(bytes, size);
  const onnx::ModelProto model = AnyModel(&data, kOpTypes);
  const converter::ConvertOptions options = AnyOptions(&data, model);
  if (const char *dump = std::getenv("MACE_FUZZ_DUMP")) {
    std::ofstream(dump, std::ios::binary) << model.SerializeAsString();
    PrintOptions(options);
  }
  converter::GraphBuilder graph;
  std::vector<converter::ConversionGap> gaps;
  // External data is looked for in a folder that does not exist.
  MaceStatus status = converter::ConvertOnnxModelProto(
      model, "fuzz.onnx", "/nonexistent-mace-fuzz", options, &graph, &gaps);
  ExpectExplained(status, "conversion");
  if (status == MaceStatus::MACE_SUCCESS) FinishLoadAndRun(&data, &graph);
  return 0;
}

}  // namespace fuzz
}  // namespace mace
