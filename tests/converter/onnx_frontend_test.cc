// Bad ONNX input gets a clear error, never a crash; --check lists every
// gap at once. Models are built with the converter's own ONNX schema.

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "mace/converter/ir/graph_builder.h"
#include "mace/converter/onnx/onnx.pb.h"
#include "mace/converter/onnx/onnx_arity.h"
#include "mace/converter/onnx/onnx_frontend.h"
#include "mace/converter/onnx/onnx_lowering.h"

namespace mace {
namespace converter {
namespace {

std::string TempDir() {
  const char *base = std::getenv("TMPDIR");
  std::string dir = std::string(base ? base : "/tmp") + "/mace_onnx_test_" +
                    std::to_string(::getpid());
  mkdir(dir.c_str(), 0755);
  return dir;
}

void SetShape(onnx::ValueInfoProto *info, const std::vector<int64_t> &dims,
              const std::string &dynamic_name = "") {
  info->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  auto *shape = info->mutable_type()->mutable_tensor_type()->mutable_shape();
  for (int64_t d : dims) {
    auto *dim = shape->add_dim();
    if (d < 0) {
      dim->set_dim_param(dynamic_name);
    } else {
      dim->set_dim_value(d);
    }
  }
}

// x [1,2,5,5] → Conv(W [3,2,3,3], pads 1) → y.
onnx::ModelProto ConvModel(int opset = 13) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto *import = model.add_opset_import();
  import->set_version(opset);
  auto *graph = model.mutable_graph();
  SetShape(graph->add_input(), {1, 2, 5, 5});
  graph->mutable_input(0)->set_name("x");
  auto *w = graph->add_initializer();
  w->set_name("W");
  for (int64_t d : {3, 2, 3, 3}) w->add_dims(d);
  w->set_data_type(onnx::TensorProto::FLOAT);
  for (int i = 0; i < 54; ++i) w->add_float_data(0.01f * i);
  auto *node = graph->add_node();
  node->set_op_type("Conv");
  node->set_name("conv");
  node->add_input("x");
  node->add_input("W");
  node->add_output("y");
  auto *pads = node->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  graph->add_output()->set_name("y");
  return model;
}

std::string Save(const onnx::ModelProto &model, const std::string &name) {
  const std::string path = TempDir() + "/" + name;
  std::ofstream file(path, std::ios::binary);
  model.SerializeToOstream(&file);
  return path;
}

MaceStatus Convert(const std::string &path,
                   std::vector<ConversionGap> *gaps = nullptr,
                   ConvertOptions options = {}) {
  GraphBuilder graph;
  std::vector<ConversionGap> local;
  return ConvertOnnxModel(path, options, &graph, gaps ? gaps : &local);
}

void ExpectMentions(const MaceStatus &status, const std::string &needle) {
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(needle), std::string::npos)
      << status.information();
}

TEST(OnnxFrontendTest, ValidConvModelConverts) {
  EXPECT_EQ(Convert(Save(ConvModel(), "ok.onnx")), MaceStatus::MACE_SUCCESS);
}

TEST(OnnxFrontendTest, TruncatedModelIsRejected) {
  std::string bytes;
  ConvModel().SerializeToString(&bytes);
  const std::string path = TempDir() + "/truncated.onnx";
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  ExpectMentions(Convert(path), "truncated.onnx");
}

TEST(OnnxFrontendTest, CorruptedBytesAreRejected) {
  const std::string path = TempDir() + "/garbage.onnx";
  std::ofstream(path, std::ios::binary) << "\x0a\xff\xff\xff\xff garbage";
  ExpectMentions(Convert(path), "not a valid ONNX model");
}

TEST(OnnxFrontendTest, MissingFileIsRejected) {
  ExpectMentions(Convert("/nonexistent/model.onnx"), "/nonexistent/model.onnx");
}

TEST(OnnxFrontendTest, MissingExternalDataNamesTheFile) {
  onnx::ModelProto model = ConvModel();
  auto *w = model.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto *location = w->add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  ExpectMentions(Convert(Save(model, "external.onnx")), "weights.bin");
}

TEST(OnnxFrontendTest, ExternalDataIsReadBesideTheModel) {
  onnx::ModelProto model = ConvModel();
  auto *w = model.mutable_graph()->mutable_initializer(0);
  std::vector<float> values(w->float_data().begin(), w->float_data().end());
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto *location = w->add_external_data();
  location->set_key("location");
  location->set_value("conv_weights.bin");
  std::ofstream(TempDir() + "/conv_weights.bin", std::ios::binary)
      .write(reinterpret_cast<const char *>(values.data()),
             static_cast<std::streamsize>(values.size() * sizeof(float)));
  EXPECT_EQ(Convert(Save(model, "external_ok.onnx")),
            MaceStatus::MACE_SUCCESS);
}

TEST(OnnxFrontendTest, ExternalDataOutsideTheModelFolderIsRejected) {
  onnx::ModelProto model = ConvModel();
  auto *w = model.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto *location = w->add_external_data();
  location->set_key("location");
  location->set_value("../../etc/passwd");
  ExpectMentions(Convert(Save(model, "escape.onnx")), "inside the model folder");
}

TEST(OnnxFrontendTest, MismatchedInitializerSizeNamesTheInitializer) {
  onnx::ModelProto model = ConvModel();
  model.mutable_graph()->mutable_initializer(0)->add_float_data(1.0f);
  ExpectMentions(Convert(Save(model, "mismatch.onnx")), "'W'");
}

TEST(OnnxFrontendTest, RawDataOfWrongLengthIsRejected) {
  onnx::ModelProto model = ConvModel();
  auto *w = model.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_raw_data(std::string(10, '\0'));
  ExpectMentions(Convert(Save(model, "raw.onnx")), "'W'");
}

TEST(OnnxFrontendTest, EveryUnknownOpIsListedAtOnce) {
  onnx::ModelProto model = ConvModel();
  auto *graph = model.mutable_graph();
  for (const char *type : {"FancyOpA", "FancyOpB"}) {
    auto *node = graph->add_node();
    node->set_op_type(type);
    node->set_name(std::string("node_") + type);
    node->add_input("y");
    node->add_output(std::string("out_") + type);
  }
  std::vector<ConversionGap> gaps;
  const MaceStatus status = Convert(Save(model, "unknown.onnx"), &gaps);
  EXPECT_EQ(status.code(), MaceStatus::MACE_UNSUPPORTED);
  ASSERT_EQ(gaps.size(), 2u);
  ExpectMentions(status, "FancyOpA");
  ExpectMentions(status, "FancyOpB");
  ExpectMentions(status, "node_FancyOpB");
}

TEST(OnnxFrontendTest, UnsupportedAttributeValueIsReported) {
  onnx::ModelProto model = ConvModel();
  auto *attr = model.mutable_graph()->mutable_node(0)->add_attribute();
  attr->set_name("auto_pad");
  attr->set_type(onnx::AttributeProto::STRING);
  attr->set_s("SOMETIMES");
  std::vector<ConversionGap> gaps;
  ExpectMentions(Convert(Save(model, "autopad.onnx"), &gaps), "SOMETIMES");
  EXPECT_EQ(gaps.size(), 1u);
}

TEST(OnnxFrontendTest, AttributeOfWrongKindIsReported) {
  onnx::ModelProto model = ConvModel();
  auto *pads = model.mutable_graph()->mutable_node(0)->mutable_attribute(0);
  pads->clear_ints();
  pads->set_type(onnx::AttributeProto::STRING);
  pads->set_s("1,1");
  ExpectMentions(Convert(Save(model, "wrongkind.onnx")), "'pads'");
}

TEST(OnnxFrontendTest, OpsetOutOfRangeIsReported) {
  std::vector<ConversionGap> gaps;
  ExpectMentions(Convert(Save(ConvModel(/*opset=*/5), "opset.onnx"), &gaps),
                 "opset 5");
}

TEST(OnnxFrontendTest, DynamicDimensionNeedsInputShape) {
  onnx::ModelProto model = ConvModel();
  auto *input = model.mutable_graph()->mutable_input(0);
  input->clear_type();
  SetShape(input, {-1, 2, 5, 5}, "batch");
  const std::string path = Save(model, "dynamic.onnx");
  const MaceStatus status = Convert(path);
  ExpectMentions(status, "'batch'");
  ExpectMentions(status, "--input-shape");
  ConvertOptions options;
  options.input_shapes["x"] = {2, 2, 5, 5};
  EXPECT_EQ(Convert(path, nullptr, options), MaceStatus::MACE_SUCCESS);
}

TEST(OnnxFrontendTest, InputShapeForUnknownInputIsRejected) {
  ConvertOptions options;
  options.input_shapes["nope"] = {1};
  ExpectMentions(Convert(Save(ConvModel(), "unknown_input.onnx"), nullptr,
                         options),
                 "'nope'");
}

TEST(OnnxFrontendTest, NodeReadingAnUndefinedValueIsReported) {
  onnx::ModelProto model = ConvModel();
  model.mutable_graph()->mutable_node(0)->set_input(0, "ghost");
  ExpectMentions(Convert(Save(model, "ghost.onnx")), "ghost");
}

TEST(OnnxFrontendTest, EveryLoweredOpHasAnInputCount) {
  for (const auto &entry : OnnxLowerings()) {
    EXPECT_NE(OnnxInputArity(entry.first), nullptr) << entry.first;
  }
}

// Found by tests/fuzz/onnx_fuzzer.cc: MatMul's lowering read the type of
// an input the node did not have.
TEST(OnnxFrontendTest, NodeWithTooFewInputsIsReported) {
  onnx::ModelProto model = ConvModel();
  auto *conv = model.mutable_graph()->mutable_node(0);
  conv->mutable_input()->RemoveLast();
  ExpectMentions(Convert(Save(model, "conv1.onnx")),
                 "node 'conv' (Conv): expects 2 to 3 inputs, has 1");
  conv->set_op_type("MatMul");
  conv->clear_attribute();
  conv->set_input(0, "");
  ExpectMentions(Convert(Save(model, "matmul1.onnx")),
                 "(MatMul): expects 2 inputs, has 1");
  conv->add_input("");
  ExpectMentions(Convert(Save(model, "matmul_absent.onnx")),
                 "(MatMul): input 0 is required");
}

// ONNX has no optional variadic inputs: an empty one is an error.
TEST(OnnxFrontendTest, VariadicNodeWithAnEmptyInputIsReported) {
  onnx::ModelProto model = ConvModel();
  auto *sum = model.mutable_graph()->add_node();
  sum->set_op_type("Sum");
  sum->set_name("sum");
  for (const char *input : {"y", "", "y"}) sum->add_input(input);
  sum->add_output("z");
  model.mutable_graph()->mutable_output(0)->set_name("z");
  ExpectMentions(Convert(Save(model, "sum_empty.onnx")),
                 "node 'sum' (Sum): input 1 is required");
}

TEST(OnnxFrontendTest, NodeWithTooManyInputsIsReported) {
  onnx::ModelProto model = ConvModel();
  auto *relu = model.mutable_graph()->add_node();
  relu->set_op_type("Relu");
  relu->set_name("relu");
  relu->add_input("y");
  relu->add_input("y");
  relu->add_output("z");
  model.mutable_graph()->mutable_output(0)->set_name("z");
  ExpectMentions(Convert(Save(model, "relu2.onnx")),
                 "node 'relu' (Relu): expects 1 input, has 2");
}

TEST(OnnxFrontendTest, NhwcInputsAndOutputsAreDeclaredSo) {
  ConvertOptions options;
  options.inputs_nhwc = true;
  options.outputs_nhwc = true;
  GraphBuilder graph;
  std::vector<ConversionGap> gaps;
  ASSERT_EQ(ConvertOnnxModel(Save(ConvModel(), "nhwc.onnx"), options, &graph,
                             &gaps),
            MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(graph.Find("x")->shape(), (Shape{1, 5, 5, 2}));
  EXPECT_EQ(graph.Find("y")->shape(), (Shape{1, 5, 5, 3}));
}

TEST(OnnxFrontendTest, OutputNamesSelectIntermediateValues) {
  // x → Conv → y → Relu → z; asking for y (the check_tensors case) keeps it
  // a graph output in ONNX's NCHW, beside z.
  onnx::ModelProto model = ConvModel();
  auto *relu = model.mutable_graph()->add_node();
  relu->set_op_type("Relu");
  relu->set_name("relu");
  relu->add_input("y");
  relu->add_output("z");
  model.mutable_graph()->mutable_output(0)->set_name("z");
  ConvertOptions options;
  options.output_names = {"y", "z"};
  GraphBuilder graph;
  std::vector<ConversionGap> gaps;
  ASSERT_EQ(ConvertOnnxModel(Save(model, "intermediate.onnx"), options,
                             &graph, &gaps),
            MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(graph.output_names(), (std::vector<std::string>{"y", "z"}));
  EXPECT_EQ(graph.Find("y")->shape(), (Shape{1, 3, 5, 5}));

  options.output_names = {"nope"};
  GraphBuilder other;
  ExpectMentions(ConvertOnnxModel(Save(model, "intermediate.onnx"), options,
                                  &other, &gaps),
                 "output 'nope' is not a tensor of the graph");
}

}  // namespace
}  // namespace converter
}  // namespace mace
