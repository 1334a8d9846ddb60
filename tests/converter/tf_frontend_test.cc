// The TensorFlow frontend on GraphDefs built here with the converter's own
// schema: lowering decisions (SAME padding, the atrous pattern, shape
// chains that fold, strided-slice masks, fake-quant ranges) checked against
// float64 references of TensorFlow's semantics written below, and bad input
// (missing / corrupted files, unknown ops, bad attributes, shape mismatches)
// that must give a clear error naming the culprit, never a crash.
//
// Value tests freeze the Placeholder with ConvertOptions::constant_inputs:
// every op then folds while the graph is built, and results are read from
// the graph's constants.

#include "mace/converter/tensorflow/tf_frontend.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mace/converter/ir/graph_builder.h"
#include "mace/converter/tensorflow/tf_graph.pb.h"
#include "mace/converter/tensorflow/tf_tensor.h"

namespace mace {
namespace converter {
namespace {

// ---- GraphDef construction
// ---------------------------------------------------

tf::NodeDef *AddNode(tf::GraphDef *graph, const std::string &name,
                     const std::string &op,
                     const std::vector<std::string> &inputs = {}) {
  tf::NodeDef *node = graph->add_node();
  node->set_name(name);
  node->set_op(op);
  for (const std::string &input : inputs) node->add_input(input);
  return node;
}

tf::AttrValue &Attr(tf::NodeDef *node, const std::string &name) {
  return (*node->mutable_attr())[name];
}

void SetInts(tf::NodeDef *node, const std::string &name,
             const std::vector<int64_t> &values) {
  auto *list = Attr(node, name).mutable_list();
  for (int64_t v : values) list->add_i(v);
}

void SetShape(tf::TensorShapeProto *shape, const std::vector<int64_t> &dims) {
  for (int64_t d : dims) shape->add_dim()->set_size(d);
}

tf::NodeDef *AddPlaceholder(tf::GraphDef *graph, const std::string &name,
                            const std::vector<int64_t> &dims,
                            tf::DataType type = tf::DT_FLOAT) {
  tf::NodeDef *node = AddNode(graph, name, "Placeholder");
  Attr(node, "dtype").set_type(type);
  SetShape(Attr(node, "shape").mutable_shape(), dims);
  return node;
}

tf::NodeDef *AddConstFloats(tf::GraphDef *graph, const std::string &name,
                            const std::vector<int64_t> &dims,
                            const std::vector<float> &values) {
  tf::NodeDef *node = AddNode(graph, name, "Const");
  Attr(node, "dtype").set_type(tf::DT_FLOAT);
  tf::TensorProto *tensor = Attr(node, "value").mutable_tensor();
  tensor->set_dtype(tf::DT_FLOAT);
  SetShape(tensor->mutable_tensor_shape(), dims);
  // Weights as TF writes them: raw little-endian bytes.
  tensor->set_tensor_content(std::string(
      reinterpret_cast<const char *>(values.data()), values.size() * 4));
  return node;
}

tf::NodeDef *AddConstInts(tf::GraphDef *graph, const std::string &name,
                          const std::vector<int64_t> &dims,
                          const std::vector<int32_t> &values) {
  tf::NodeDef *node = AddNode(graph, name, "Const");
  Attr(node, "dtype").set_type(tf::DT_INT32);
  tf::TensorProto *tensor = Attr(node, "value").mutable_tensor();
  tensor->set_dtype(tf::DT_INT32);
  SetShape(tensor->mutable_tensor_shape(), dims);
  for (int32_t v : values) tensor->add_int_val(v);
  return node;
}

std::vector<float> Ramp(size_t count, float scale, float offset = 0.0f) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    values[i] = scale * static_cast<float>((i * 7) % 11) + offset;
  }
  return values;
}

// ---- running the frontend
// ----------------------------------------------------

std::string TempPath(const std::string &name) {
  const char *base = std::getenv("TMPDIR");
  const std::string dir = std::string(base ? base : "/tmp") + "/mace_tf_test_" +
                          std::to_string(::getpid());
  mkdir(dir.c_str(), 0755);
  return dir + "/" + name;
}

std::string Save(const tf::GraphDef &graph, const std::string &name) {
  const std::string path = TempPath(name);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  graph.SerializeToOstream(&file);
  return path;
}

class TfFrontendTest : public ::testing::Test {
 protected:
  MaceStatus Convert(const tf::GraphDef &graph_def,
                     const ConvertOptions &options = {}) {
    return ConvertTensorflowModel(Save(graph_def, "model.pb"), options, &graph_,
                                  &gaps_);
  }
  // Converts with Placeholder `input` frozen to `values`.
  MaceStatus ConvertFrozen(const tf::GraphDef &graph_def,
                           const std::string &input, const Shape &shape,
                           const std::vector<float> &values) {
    ConvertOptions options;
    ConvertOptions::ConstantInput constant;
    constant.shape = shape;
    constant.floats = values;
    options.constant_inputs[input] = constant;
    return Convert(graph_def, options);
  }
  std::vector<float> Floats(const std::string &name) const {
    const Tensor *t = graph_.Find(name);
    EXPECT_TRUE(t != nullptr && t->is_constant()) << name;
    if (t == nullptr || !t->is_constant()) return {};
    if (t->dtype() == DT_INT32) {
      return std::vector<float>(t->data<int32_t>(),
                                t->data<int32_t>() + t->size());
    }
    return std::vector<float>(t->data<float>(), t->data<float>() + t->size());
  }
  Shape ShapeOf(const std::string &name) const {
    const Tensor *t = graph_.Find(name);
    return t == nullptr ? Shape{-1} : t->shape();
  }
  std::vector<std::string> OpTypes() const {
    std::vector<std::string> types;
    for (const OperatorDef &op : graph_.ops()) types.push_back(op.type());
    return types;
  }

  GraphBuilder graph_;
  std::vector<ConversionGap> gaps_;
};

void ExpectNear(const std::vector<float> &got, const std::vector<double> &want,
                double tolerance = 1e-4) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tolerance) << "element " << i;
  }
}

// ---- float64 references of TensorFlow's semantics ---------------------------

// NHWC conv with an HWIO filter (or depthwise [kh, kw, C, 1] when
// `depthwise`), TF SAME padding (odd pad at the end) or VALID.
std::vector<double> ReferenceConv(const std::vector<float> &x, const Shape &xs,
                                  const std::vector<float> &w, const Shape &ws,
                                  int stride, int dilation, bool same,
                                  bool depthwise, Shape *out_shape) {
  const int64_t n = xs[0], h = xs[1], wd = xs[2], c = xs[3];
  const int64_t kh = ws[0], kw = ws[1];
  const int64_t cout = depthwise ? c : ws[3];
  const int64_t eh = (kh - 1) * dilation + 1, ew = (kw - 1) * dilation + 1;
  const int64_t oh = same ? (h + stride - 1) / stride : (h - eh) / stride + 1;
  const int64_t ow = same ? (wd + stride - 1) / stride : (wd - ew) / stride + 1;
  const int64_t pt =
      same ? std::max<int64_t>((oh - 1) * stride + eh - h, 0) / 2 : 0;
  const int64_t pl =
      same ? std::max<int64_t>((ow - 1) * stride + ew - wd, 0) / 2 : 0;
  *out_shape = {n, oh, ow, cout};
  std::vector<double> y(n * oh * ow * cout, 0.0);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        for (int64_t o = 0; o < cout; ++o) {
          double sum = 0.0;
          for (int64_t a = 0; a < kh; ++a) {
            for (int64_t e = 0; e < kw; ++e) {
              const int64_t r = i * stride + a * dilation - pt;
              const int64_t s = j * stride + e * dilation - pl;
              if (r < 0 || r >= h || s < 0 || s >= wd) continue;
              const float *px = &x[((b * h + r) * wd + s) * c];
              if (depthwise) {
                sum += px[o] * w[(a * kw + e) * c + o];
              } else {
                for (int64_t ci = 0; ci < c; ++ci) {
                  sum += px[ci] * w[((a * kw + e) * c + ci) * cout + o];
                }
              }
            }
          }
          y[((b * oh + i) * ow + j) * cout + o] = sum;
        }
      }
    }
  }
  return y;
}

// ---- lowering
// ----------------------------------------------------------------

TEST_F(TfFrontendTest, ConvBiasReluGraphKeepsNhwcAndOutputsTheLastValue) {
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {1, 5, 5, 2});
  AddConstFloats(&g, "w", {3, 3, 2, 4}, Ramp(72, 0.1f, -0.5f));
  AddConstFloats(&g, "b", {4}, {0.1f, 0.2f, 0.3f, 0.4f});
  tf::NodeDef *conv = AddNode(&g, "conv", "Conv2D", {"x", "w"});
  SetInts(conv, "strides", {1, 2, 2, 1});
  Attr(conv, "padding").set_s("SAME");
  AddNode(&g, "bias", "BiasAdd", {"conv", "b"});
  AddNode(&g, "relu", "Relu", {"bias"});
  AddNode(&g, "noop", "NoOp", {"^relu"});
  AddNode(&g, "check", "Assert", {"x", "^noop"});  // dropped, not an output
  ASSERT_EQ(Convert(g), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(graph_.output_names(), std::vector<std::string>{"relu"});
  EXPECT_EQ(OpTypes(),
            (std::vector<std::string>{"Conv2D", "BiasAdd", "Activation"}));
  EXPECT_EQ(ShapeOf("relu"), (Shape{1, 3, 3, 4}));
  // The filter became OHWI.
  EXPECT_EQ(ShapeOf(graph_.ops()[0].input(1)), (Shape{4, 3, 3, 2}));
}

TEST_F(TfFrontendTest, Conv2DSamePaddingPutsTheOddPadAtTheEnd) {
  // 6 wide, kernel 2, stride 2 → no pad; 6 high, kernel 3, stride 2 → one
  // pad row, at the bottom (TF), not the top.
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {1, 6, 6, 3});
  const std::vector<float> w = Ramp(3 * 2 * 3 * 2, 0.1f, -0.4f);
  AddConstFloats(&g, "w", {3, 2, 3, 2}, w);
  tf::NodeDef *conv = AddNode(&g, "y", "Conv2D", {"x", "w"});
  SetInts(conv, "strides", {1, 2, 2, 1});
  Attr(conv, "padding").set_s("SAME");
  const std::vector<float> x = Ramp(108, 0.25f, -1.0f);
  ASSERT_EQ(ConvertFrozen(g, "x", {1, 6, 6, 3}, x), MaceStatus::MACE_SUCCESS);
  Shape out_shape;
  const std::vector<double> want = ReferenceConv(
      x, {1, 6, 6, 3}, w, {3, 2, 3, 2}, 2, 1, true, false, &out_shape);
  EXPECT_EQ(ShapeOf("y"), out_shape);
  ExpectNear(Floats("y"), want);
}

TEST_F(TfFrontendTest, ExplicitPaddingEqualsPadThenValidConv) {
  const std::vector<float> x = Ramp(4 * 5 * 2, 0.3f, -1.0f);
  const std::vector<float> w = Ramp(3 * 3 * 2 * 3, 0.1f, -0.5f);
  // Pads [top 1, bottom 2, left 2, right 0] as explicit_paddings (NHWC
  // pairs) ...
  tf::GraphDef explicit_graph;
  AddPlaceholder(&explicit_graph, "x", {1, 4, 5, 2});
  AddConstFloats(&explicit_graph, "w", {3, 3, 2, 3}, w);
  tf::NodeDef *conv = AddNode(&explicit_graph, "y", "Conv2D", {"x", "w"});
  Attr(conv, "padding").set_s("EXPLICIT");
  SetInts(conv, "explicit_paddings", {0, 0, 1, 2, 2, 0, 0, 0});
  ASSERT_EQ(ConvertFrozen(explicit_graph, "x", {1, 4, 5, 2}, x),
            MaceStatus::MACE_SUCCESS);
  // ... and as a Pad before a VALID conv.
  Shape out_shape;
  std::vector<float> padded(1 * 7 * 7 * 2, 0.0f);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 5; ++c) {
      for (int k = 0; k < 2; ++k) {
        padded[((r + 1) * 7 + c + 2) * 2 + k] = x[(r * 5 + c) * 2 + k];
      }
    }
  }
  const std::vector<double> want = ReferenceConv(
      padded, {1, 7, 7, 2}, w, {3, 3, 2, 3}, 1, 1, false, false, &out_shape);
  EXPECT_EQ(ShapeOf("y"), out_shape);
  ExpectNear(Floats("y"), want);
}

TEST_F(TfFrontendTest, GroupedConv2DSetsTheGroupFromTheFilter) {
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {1, 4, 4, 6});
  AddConstFloats(&g, "w", {1, 1, 2, 9}, Ramp(18, 0.1f));
  tf::NodeDef *conv = AddNode(&g, "y", "Conv2D", {"x", "w"});
  Attr(conv, "padding").set_s("VALID");
  ASSERT_EQ(Convert(g), MaceStatus::MACE_SUCCESS);
  ASSERT_EQ(OpTypes(), std::vector<std::string>{"Conv2D"});
  int64_t group = 0;
  for (const Argument &arg : graph_.ops()[0].arg()) {
    if (arg.name() == "group") group = arg.i();
  }
  EXPECT_EQ(group, 3);
  EXPECT_EQ(ShapeOf("y"), (Shape{1, 4, 4, 9}));
}

TEST_F(TfFrontendTest, DepthwiseConvUsesTheFilterAsIs) {
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {1, 5, 4, 3});
  const std::vector<float> w = Ramp(3 * 3 * 3, 0.2f, -0.6f);
  AddConstFloats(&g, "w", {3, 3, 3, 1}, w);
  tf::NodeDef *conv = AddNode(&g, "y", "DepthwiseConv2dNative", {"x", "w"});
  SetInts(conv, "strides", {1, 1, 1, 1});
  Attr(conv, "padding").set_s("VALID");
  const std::vector<float> x = Ramp(60, 0.3f, -1.2f);
  ASSERT_EQ(ConvertFrozen(g, "x", {1, 5, 4, 3}, x), MaceStatus::MACE_SUCCESS);
  Shape out_shape;
  const std::vector<double> want = ReferenceConv(
      x, {1, 5, 4, 3}, w, {3, 3, 3, 1}, 1, 1, false, true, &out_shape);
  EXPECT_EQ(ShapeOf("y"), out_shape);
  ExpectNear(Floats("y"), want);
}

// tf.nn.atrous_conv2d(x [1,5,5,2], w 3x3, rate 2, SAME) as TF writes it.
tf::GraphDef AtrousGraph() {
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {1, 5, 5, 2});
  AddConstFloats(&g, "w", {3, 3, 2, 3}, Ramp(54, 0.1f, -0.5f));
  AddConstInts(&g, "block", {2}, {2, 2});
  // SAME pads 2 on each side; one more at the end makes 9 divisible by 2,
  // and the crops take it back.
  AddConstInts(&g, "paddings", {2, 2}, {2, 3, 2, 3});
  AddConstInts(&g, "crops", {2, 2}, {0, 1, 0, 1});
  AddNode(&g, "stb", "SpaceToBatchND", {"x", "block", "paddings"});
  tf::NodeDef *conv = AddNode(&g, "conv", "Conv2D", {"stb", "w"});
  SetInts(conv, "strides", {1, 1, 1, 1});
  Attr(conv, "padding").set_s("VALID");
  AddNode(&g, "y", "BatchToSpaceND", {"conv", "block", "crops"});
  return g;
}

TEST_F(TfFrontendTest, AtrousPatternBecomesOneDilatedConv) {
  ASSERT_EQ(Convert(AtrousGraph()), MaceStatus::MACE_SUCCESS);
  // The output keeps its TF name through an Identity on the conv.
  EXPECT_EQ(OpTypes(), (std::vector<std::string>{"Conv2D", "Identity"}));
  EXPECT_EQ(ShapeOf("y"), (Shape{1, 5, 5, 3}));
  bool dilated = false;
  for (const Argument &arg : graph_.ops()[0].arg()) {
    if (arg.name() == "dilations") {
      dilated = arg.ints_size() == 2 && arg.ints(0) == 2 && arg.ints(1) == 2;
    }
  }
  EXPECT_TRUE(dilated);
}

TEST_F(TfFrontendTest, AtrousPatternMatchesADilatedSameConvReference) {
  const std::vector<float> x = Ramp(50, 0.2f, -1.0f);
  ASSERT_EQ(ConvertFrozen(AtrousGraph(), "x", {1, 5, 5, 2}, x),
            MaceStatus::MACE_SUCCESS);
  Shape out_shape;
  const std::vector<double> want =
      ReferenceConv(x, {1, 5, 5, 2}, Ramp(54, 0.1f, -0.5f), {3, 3, 2, 3}, 1, 2,
                    true, false, &out_shape);
  EXPECT_EQ(ShapeOf("y"), out_shape);
  ExpectNear(Floats("y"), want);
}

TEST_F(TfFrontendTest, AtrousPatternWithASecondReaderStaysThreeOps) {
  tf::GraphDef g = AtrousGraph();
  AddNode(&g, "other", "Relu", {"conv"});  // conv read twice: no fusion
  ASSERT_EQ(Convert(g), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(OpTypes(),
            (std::vector<std::string>{"SpaceToBatchND", "Conv2D",
                                      "BatchToSpaceND", "Activation"}));
  EXPECT_EQ(ShapeOf("y"), (Shape{1, 5, 5, 3}));
}

TEST_F(TfFrontendTest, KerasShapeChainFoldsIntoAConstantReshape) {
  // Flatten as Keras writes it: Reshape(x, Pack(StridedSlice(Shape(x)), -1)).
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {1, 4, 5, 3});
  AddNode(&g, "shape", "Shape", {"x"});
  AddConstInts(&g, "b", {1}, {0});
  AddConstInts(&g, "e", {1}, {1});
  AddConstInts(&g, "s", {1}, {1});
  tf::NodeDef *slice =
      AddNode(&g, "batch", "StridedSlice", {"shape", "b", "e", "s"});
  Attr(slice, "shrink_axis_mask").set_i(1);
  AddConstInts(&g, "minus_one", {}, {-1});
  AddNode(&g, "target", "Pack", {"batch", "minus_one"});
  AddNode(&g, "y", "Reshape", {"x", "target"});
  ASSERT_EQ(Convert(g), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(OpTypes(), std::vector<std::string>{"Reshape"});
  EXPECT_EQ(ShapeOf("y"), (Shape{1, 60}));
}

TEST_F(TfFrontendTest, StridedSliceHonoursEveryMask) {
  // x [2, 3, 4] = 0..23; y = x[1, ::-1, tf.newaxis, 1:]: shrink on spec
  // dim 0, begin and end masks on dim 1, a new axis at dim 2, an end mask
  // on dim 3.
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {2, 3, 4});
  AddConstInts(&g, "b", {4}, {1, 0, 0, 1});
  AddConstInts(&g, "e", {4}, {2, 0, 0, 0});
  AddConstInts(&g, "s", {4}, {1, -1, 1, 1});
  tf::NodeDef *slice = AddNode(&g, "y", "StridedSlice", {"x", "b", "e", "s"});
  Attr(slice, "begin_mask").set_i(2);
  Attr(slice, "end_mask").set_i(2 | 8);
  Attr(slice, "new_axis_mask").set_i(4);
  Attr(slice, "shrink_axis_mask").set_i(1);
  std::vector<float> x(24);
  for (int i = 0; i < 24; ++i) x[i] = static_cast<float>(i);
  ASSERT_EQ(ConvertFrozen(g, "x", {2, 3, 4}, x), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(ShapeOf("y"), (Shape{3, 1, 3}));
  std::vector<double> want;
  for (int r = 2; r >= 0; --r) {
    for (int c = 1; c < 4; ++c) want.push_back(12 + r * 4 + c);
  }
  ExpectNear(Floats("y"), want, 0.0);
}

TEST_F(TfFrontendTest, SplitVInfersTheMinusOneSizeAndOutputsAreIndexed) {
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {1, 6});
  AddConstInts(&g, "sizes", {3}, {1, -1, 2});
  AddConstInts(&g, "axis", {}, {1});
  tf::NodeDef *split = AddNode(&g, "split", "SplitV", {"x", "sizes", "axis"});
  Attr(split, "num_split").set_i(3);
  AddNode(&g, "mid", "Neg", {"split:1"});
  ConvertOptions options;
  options.output_names = {"mid", "split:2"};
  ConvertOptions::ConstantInput constant;
  constant.shape = {1, 6};
  constant.floats = {0, 1, 2, 3, 4, 5};
  options.constant_inputs["x"] = constant;
  ASSERT_EQ(Convert(g, options), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(graph_.output_names(),
            (std::vector<std::string>{"mid", "split:2"}));
  ExpectNear(Floats("mid"), {-1, -2, -3}, 0.0);
  ExpectNear(Floats("split:2"), {4, 5}, 0.0);
}

TEST_F(TfFrontendTest, ReductionOverNoAxesIsTheIdentity) {
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {2, 3});
  AddConstInts(&g, "axes", {0}, {});
  AddNode(&g, "sum", "Sum", {"x", "axes"});
  AddConstInts(&g, "axes2", {1}, {-1});
  tf::NodeDef *mean = AddNode(&g, "mean", "Mean", {"sum", "axes2"});
  Attr(mean, "keep_dims").set_b(true);
  ASSERT_EQ(ConvertFrozen(g, "x", {2, 3}, {1, 2, 3, 4, 5, 9}),
            MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(ShapeOf("mean"), (Shape{2, 1}));
  ExpectNear(Floats("mean"), {2, 6});
}

TEST_F(TfFrontendTest, CastToBoolIsNonZeroAndBackToFloatIsOneOrZero) {
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {4});
  tf::NodeDef *to_bool = AddNode(&g, "b", "Cast", {"x"});
  Attr(to_bool, "DstT").set_type(tf::DT_BOOL);
  tf::NodeDef *to_float = AddNode(&g, "y", "Cast", {"b"});
  Attr(to_float, "DstT").set_type(tf::DT_FLOAT);
  ASSERT_EQ(ConvertFrozen(g, "x", {4}, {0.0f, -2.5f, 0.25f, 0.0f}),
            MaceStatus::MACE_SUCCESS);
  ExpectNear(Floats("y"), {0, 1, 1, 0}, 0.0);
}

TEST_F(TfFrontendTest, FakeQuantPassesValuesAndRecordsItsRangeOnTheProducer) {
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {1, 4});
  AddNode(&g, "relu", "Relu", {"x"});
  AddConstFloats(&g, "lo", {}, {-1.0f});
  AddConstFloats(&g, "hi", {}, {2.5f});
  AddNode(&g, "fq", "FakeQuantWithMinMaxVars", {"relu", "lo", "hi"});
  ASSERT_EQ(Convert(g), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(graph_.output_names(), std::vector<std::string>{"fq"});
  ASSERT_FALSE(graph_.ops().empty());
  const OperatorDef &relu = graph_.ops()[0];
  EXPECT_EQ(relu.type(), "Activation");
  float lo = 0, hi = 0;
  int found = 0;
  for (const Argument &arg : relu.arg()) {
    if (arg.name() == "quantize_range_min") lo = arg.f(), ++found;
    if (arg.name() == "quantize_range_max") hi = arg.f(), ++found;
  }
  EXPECT_EQ(found, 2);
  EXPECT_EQ(lo, -1.0f);
  EXPECT_EQ(hi, 2.5f);
}

TEST_F(TfFrontendTest, FakeQuantOfAGraphInputKeepsItsRangeOnAnIdentity) {
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {1, 4});
  tf::NodeDef *fq = AddNode(&g, "fq", "FakeQuantWithMinMaxArgs", {"x"});
  Attr(fq, "min").set_f(-0.5f);
  Attr(fq, "max").set_f(0.75f);
  ASSERT_EQ(Convert(g), MaceStatus::MACE_SUCCESS);
  ASSERT_EQ(OpTypes(), std::vector<std::string>{"Identity"});
  int found = 0;
  for (const Argument &arg : graph_.ops()[0].arg()) {
    found += (arg.name() == "quantize_range_min" && arg.f() == -0.5f) ||
             (arg.name() == "quantize_range_max" && arg.f() == 0.75f);
  }
  EXPECT_EQ(found, 2);
}

TEST_F(TfFrontendTest, BroadcastToOfAConstantFolds) {
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {2, 3});
  AddConstFloats(&g, "row", {3}, {1, 2, 3});
  AddConstInts(&g, "shape", {2}, {2, 3});
  AddNode(&g, "wide", "BroadcastTo", {"row", "shape"});
  AddNode(&g, "y", "Mul", {"x", "wide"});
  ASSERT_EQ(Convert(g), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(OpTypes(), std::vector<std::string>{"Eltwise"});
  ExpectNear(Floats("wide"), {1, 2, 3, 1, 2, 3}, 0.0);
}

// A fuzzed model gave BroadcastTo a 226M-value constant as its shape; an
// argument that long is an error, before anything is sized from it.
TEST_F(TfFrontendTest, AnArgumentOfThousandsOfValuesIsAnError) {
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {2, 3});
  AddConstInts(&g, "shape", {5000}, std::vector<int32_t>(5000, 0));
  AddNode(&g, "wide", "BroadcastTo", {"x", "shape"});
  const MaceStatus status = Convert(g);
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("holds 5000 values"), std::string::npos)
      << status.information();
  EXPECT_NE(status.information().find("wide"), std::string::npos)
      << status.information();
}

TEST_F(TfFrontendTest, NodesMayComeInAnyOrder) {
  tf::GraphDef g;
  AddNode(&g, "y", "Relu", {"h"});
  AddNode(&g, "h", "Neg", {"x"});
  AddPlaceholder(&g, "x", {3});
  ASSERT_EQ(ConvertFrozen(g, "x", {3}, {1, -2, 3}), MaceStatus::MACE_SUCCESS);
  ExpectNear(Floats("y"), {0, 2, 0}, 0.0);
}

TEST_F(TfFrontendTest, DynamicBatchNeedsAnInputShape) {
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {-1, 4});
  AddNode(&g, "y", "Relu", {"x"});
  MaceStatus status = Convert(g);
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("--input-shape x:"), std::string::npos)
      << status.information();
  ConvertOptions options;
  options.input_shapes["x"] = {2, 4};
  GraphBuilder fresh;
  status = ConvertTensorflowModel(Save(g, "dyn.pb"), options, &fresh, &gaps_);
  ASSERT_EQ(status, MaceStatus::MACE_SUCCESS) << status.information();
  EXPECT_EQ(fresh.Find("y")->shape(), (Shape{2, 4}));
}

// ---- bad input
// -----------------------------------------------------------------

TEST_F(TfFrontendTest, MissingFileIsAnErrorNamingIt) {
  const MaceStatus status =
      ConvertTensorflowModel(TempPath("no_such_model.pb"), {}, &graph_, &gaps_);
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("no_such_model.pb"), std::string::npos)
      << status.information();
}

TEST_F(TfFrontendTest, CorruptedAndTruncatedFilesAreErrors) {
  // A length-delimited field claiming 2^31 bytes, then garbage.
  const std::string bad_bytes[] = {std::string("\x0a\xff\xff\xff\xff\x07zz", 8),
                                   std::string("\xff\xff\xff\xff", 4),
                                   std::string()};
  for (const std::string &bytes : bad_bytes) {
    const std::string path = TempPath("corrupt.pb");
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    GraphBuilder graph;
    const MaceStatus status = ConvertTensorflowModel(path, {}, &graph, &gaps_);
    EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
    EXPECT_NE(status.information().find("corrupt.pb"), std::string::npos)
        << status.information();
  }
  // A valid graph cut in the middle of its weights.
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {1, 4});
  AddConstFloats(&g, "w", {4, 64}, Ramp(256, 0.01f));
  AddNode(&g, "y", "MatMul", {"x", "w"});
  std::string bytes;
  g.SerializeToString(&bytes);
  const std::string path = TempPath("truncated.pb");
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      << bytes.substr(0, bytes.size() / 2);
  GraphBuilder graph;
  const MaceStatus status = ConvertTensorflowModel(path, {}, &graph, &gaps_);
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_FALSE(status.information().empty());
}

TEST_F(TfFrontendTest, EveryUnknownOpIsListedAtOnce) {
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {1, 4});
  AddNode(&g, "a", "TensorArrayV3", {"x"});
  AddNode(&g, "b", "Relu", {"a"});  // reads a gap: skipped, not reported
  AddNode(&g, "c", "MysteryOp", {"x"});
  AddNode(&g, "d", "Erfinv", {"c"});
  AddNode(&g, "e", "AnotherMystery", {"x"});
  const MaceStatus status = Convert(g);
  EXPECT_EQ(status.code(), MaceStatus::MACE_UNSUPPORTED);
  ASSERT_EQ(gaps_.size(), 4u) << status.information();
  const std::vector<std::string> nodes{"a", "c", "d", "e"};
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(gaps_[i].node, nodes[i]);
    EXPECT_NE(status.information().find("'" + nodes[i] + "'"),
              std::string::npos);
  }
  EXPECT_EQ(gaps_[0].op_type, "TensorArrayV3");
  EXPECT_NE(status.information().find("4 unsupported items"),
            std::string::npos);
}

TEST_F(TfFrontendTest, AttributeOfTheWrongKindNamesNodeAndAttribute) {
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {1, 5, 5, 2});
  AddConstFloats(&g, "w", {3, 3, 2, 4}, Ramp(72, 0.1f));
  tf::NodeDef *conv = AddNode(&g, "conv", "Conv2D", {"x", "w"});
  Attr(conv, "strides").set_s("2");
  Attr(conv, "padding").set_s("SAME");
  const MaceStatus status = Convert(g);
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  ASSERT_EQ(gaps_.size(), 1u);
  EXPECT_NE(gaps_[0].reason.find("'strides' should be an int list, is a "
                                 "string"),
            std::string::npos)
      << gaps_[0].reason;
  EXPECT_NE(status.information().find("conv"), std::string::npos);
}

TEST_F(TfFrontendTest, UnknownPaddingAndNchwAreReported) {
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {1, 5, 5, 2});
  AddConstFloats(&g, "w", {3, 3, 2, 4}, Ramp(72, 0.1f));
  tf::NodeDef *a = AddNode(&g, "a", "Conv2D", {"x", "w"});
  Attr(a, "padding").set_s("CAUSAL");
  tf::NodeDef *b = AddNode(&g, "b", "Conv2D", {"x", "w"});
  Attr(b, "padding").set_s("SAME");
  Attr(b, "data_format").set_s("NCHW");
  EXPECT_EQ(Convert(g).code(), MaceStatus::MACE_UNSUPPORTED);
  ASSERT_EQ(gaps_.size(), 2u);
  EXPECT_NE(gaps_[0].reason.find("padding 'CAUSAL'"), std::string::npos)
      << gaps_[0].reason;
  EXPECT_NE(gaps_[1].reason.find("data_format 'NCHW'"), std::string::npos)
      << gaps_[1].reason;
}

TEST_F(TfFrontendTest, FilterThatDoesNotMatchTheInputNamesBothShapes) {
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {1, 5, 5, 3});
  AddConstFloats(&g, "w", {3, 3, 2, 4}, Ramp(72, 0.1f));
  tf::NodeDef *conv = AddNode(&g, "conv", "Conv2D", {"x", "w"});
  Attr(conv, "padding").set_s("VALID");
  EXPECT_NE(Convert(g).code(), MaceStatus::MACE_SUCCESS);
  ASSERT_EQ(gaps_.size(), 1u);
  EXPECT_NE(gaps_[0].reason.find("[3,3,2,4]"), std::string::npos)
      << gaps_[0].reason;
  EXPECT_NE(gaps_[0].reason.find("[1,5,5,3]"), std::string::npos)
      << gaps_[0].reason;
}

TEST_F(TfFrontendTest, InputShapeThatContradictsTheGraphIsAnError) {
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {1, 4});
  AddNode(&g, "y", "Relu", {"x"});
  ConvertOptions options;
  options.input_shapes["x"] = {1, 5};
  MaceStatus status = Convert(g, options);
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("input 'x'"), std::string::npos)
      << status.information();
  GraphBuilder fresh;
  options.input_shapes = {{"nope", {1, 4}}};
  status = ConvertTensorflowModel(Save(g, "m2.pb"), options, &fresh, &gaps_);
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("'nope'"), std::string::npos);
}

// Found by tests/fuzz/tf_fuzzer.cc: an input of 2^63 - 1 elements passed
// the converter's shape check and overflowed Stack's byte arithmetic.
TEST_F(TfFrontendTest, InputLargerThanATensorMayBeIsAnError) {
  tf::GraphDef g;
  const int64_t huge = std::numeric_limits<int64_t>::max();
  AddPlaceholder(&g, "x", {-1, 1, huge, 1});
  AddNode(&g, "y", "Pack", {"x", "x"});
  ConvertOptions options;
  options.input_shapes["x"] = {1, 1, huge, 1};
  MaceStatus status = Convert(g, options);
  EXPECT_EQ(status.code(), MaceStatus::MACE_INVALID_ARGS);
  EXPECT_NE(status.information().find("input 'x'"), std::string::npos)
      << status.information();
  EXPECT_NE(status.information().find("256 GiB"), std::string::npos)
      << status.information();
}

TEST_F(TfFrontendTest, ConstWithTooFewBytesNamesTheNode) {
  tf::GraphDef g;
  AddPlaceholder(&g, "x", {1, 4});
  tf::NodeDef *w = AddConstFloats(&g, "w", {4, 4}, Ramp(16, 0.1f));
  Attr(w, "value").mutable_tensor()->mutable_tensor_content()->resize(60);
  AddNode(&g, "y", "MatMul", {"x", "w"});
  const MaceStatus status = Convert(g);
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  ASSERT_GE(gaps_.size(), 1u);
  EXPECT_EQ(gaps_[0].node, "w");
  EXPECT_NE(gaps_[0].reason.find("60 bytes"), std::string::npos)
      << gaps_[0].reason;
}

TEST_F(TfFrontendTest, HugeConstShapeIsRejectedWithoutAllocating) {
  tf::GraphDef g;
  tf::NodeDef *c = AddConstFloats(&g, "c", {1}, {1.0f});
  tf::TensorProto *t = Attr(c, "value").mutable_tensor();
  t->clear_tensor_content();
  t->add_float_val(0.0f);
  t->mutable_tensor_shape()->mutable_dim(0)->set_size(int64_t{1} << 40);
  AddNode(&g, "y", "Neg", {"c"});
  EXPECT_NE(Convert(g).code(), MaceStatus::MACE_SUCCESS);
  ASSERT_GE(gaps_.size(), 1u);
  EXPECT_EQ(gaps_[0].node, "c");
}

// TensorFlow's compact form: values past the last one given repeat it (no
// value at all means zeros). The repeat is converted once and filled.
TEST(TfTensorTest, MissingTrailingValuesRepeatTheLastOne) {
  auto decode = [](tf::DataType type, int64_t count,
                   const std::vector<double> &given) {
    tf::TensorProto proto;
    proto.set_dtype(type);
    proto.mutable_tensor_shape()->add_dim()->set_size(count);
    for (double v : given) {
      if (type == tf::DT_FLOAT) {
        proto.add_float_val(static_cast<float>(v));
      } else {
        proto.add_int64_val(static_cast<int64_t>(v));
      }
    }
    DecodedTfTensor tensor;
    EXPECT_EQ(DecodeTfTensor(proto, "c", &tensor), MaceStatus::MACE_SUCCESS);
    return tensor;
  };
  DecodedTfTensor floats = decode(tf::DT_FLOAT, 5, {1.5, -2.0, 3.25});
  EXPECT_EQ(floats.floats,
            (std::vector<float>{1.5f, -2.0f, 3.25f, 3.25f, 3.25f}));
  EXPECT_EQ(decode(tf::DT_FLOAT, 3, {}).floats,
            (std::vector<float>{0.0f, 0.0f, 0.0f}));
  EXPECT_EQ(decode(tf::DT_FLOAT, 2, {4.0, 5.0}).floats,
            (std::vector<float>{4.0f, 5.0f}));
  DecodedTfTensor ints = decode(tf::DT_INT64, 4, {7});
  EXPECT_TRUE(ints.is_int);
  EXPECT_EQ(ints.ints, (std::vector<int32_t>{7, 7, 7, 7}));
  // Saturated to int32 once, then repeated.
  EXPECT_EQ(decode(tf::DT_INT64, 3, {1, 1e12}).ints,
            (std::vector<int32_t>{1, std::numeric_limits<int32_t>::max(),
                                  std::numeric_limits<int32_t>::max()}));
  const int64_t large = int64_t{1} << 24;
  DecodedTfTensor filled = decode(tf::DT_FLOAT, large, {0.5, 2.0});
  ASSERT_EQ(static_cast<int64_t>(filled.floats.size()), large);
  EXPECT_EQ(filled.floats[0], 0.5f);
  EXPECT_EQ(filled.floats[1], 2.0f);
  EXPECT_EQ(filled.floats[large - 1], 2.0f);
}

TEST_F(TfFrontendTest, CyclesDuplicatesAndDanglingInputsAreReported) {
  tf::GraphDef loop;
  AddPlaceholder(&loop, "x", {2});
  AddNode(&loop, "merge", "Merge", {"x", "next"});
  AddNode(&loop, "next", "NextIteration", {"merge"});
  AddNode(&loop, "y", "Relu", {"x"});
  EXPECT_EQ(Convert(loop).code(), MaceStatus::MACE_UNSUPPORTED);
  ASSERT_EQ(gaps_.size(), 2u);
  EXPECT_NE(gaps_[0].reason.find("cycle"), std::string::npos);

  tf::GraphDef twice;
  AddPlaceholder(&twice, "x", {2});
  AddNode(&twice, "x", "Relu", {"x"});
  GraphBuilder g2;
  MaceStatus status =
      ConvertTensorflowModel(Save(twice, "twice.pb"), {}, &g2, &gaps_);
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("defined twice"), std::string::npos);

  tf::GraphDef colon;
  AddPlaceholder(&colon, "x", {2});
  AddNode(&colon, "y:1", "Relu", {"x"});
  GraphBuilder g4;
  status = ConvertTensorflowModel(Save(colon, "colon.pb"), {}, &g4, &gaps_);
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("'y:1'"), std::string::npos)
      << status.information();

  tf::GraphDef dangling;
  AddPlaceholder(&dangling, "x", {2});
  AddNode(&dangling, "y", "Add", {"x", "ghost:1"});
  GraphBuilder g3;
  status =
      ConvertTensorflowModel(Save(dangling, "dangling.pb"), {}, &g3, &gaps_);
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  ASSERT_EQ(gaps_.size(), 1u);
  EXPECT_NE(gaps_[0].reason.find("ghost:1"), std::string::npos);
}

TEST_F(TfFrontendTest, StringPlaceholderAndWrongInputCountAreErrors) {
  tf::GraphDef g;
  AddPlaceholder(&g, "s", {1}, tf::DT_STRING);
  MaceStatus status = Convert(g);
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("string"), std::string::npos)
      << status.information();

  tf::GraphDef unknown_rank;
  tf::NodeDef *x = AddNode(&unknown_rank, "x", "Placeholder");
  Attr(x, "dtype").set_type(tf::DT_FLOAT);
  Attr(x, "shape").mutable_shape()->set_unknown_rank(true);
  GraphBuilder g1;
  status =
      ConvertTensorflowModel(Save(unknown_rank, "rank.pb"), {}, &g1, &gaps_);
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("--input-shape x:"), std::string::npos)
      << status.information();

  tf::GraphDef g2;
  AddPlaceholder(&g2, "x", {2});
  AddNode(&g2, "y", "Relu", {"x", "x"});
  GraphBuilder fresh;
  status = ConvertTensorflowModel(Save(g2, "count.pb"), {}, &fresh, &gaps_);
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  ASSERT_EQ(gaps_.size(), 1u);
  EXPECT_NE(gaps_[0].reason.find("expects 1 inputs, has 2"), std::string::npos)
      << gaps_[0].reason;
}

}  // namespace
}  // namespace converter
}  // namespace mace
