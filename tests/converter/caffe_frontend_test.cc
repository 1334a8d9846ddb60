// The Caffe frontend: lowering edge cases checked against float64
// references of Caffe's layer semantics written here (nets frozen to a
// constant input fold completely, so results are read from the graph), and
// bad input (syntax errors with line and column, corrupted weights, blob
// shape mismatches, unknown layers, V0 nets, missing files).

#include "mace/converter/caffe/caffe_frontend.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mace/converter/caffe/caffe.pb.h"
#include "mace/converter/caffe/caffe_net.h"
#include "mace/converter/caffe/caffe_text_format.h"
#include "mace/converter/ir/graph_builder.h"

namespace mace {
namespace converter {
namespace {

std::string TempDir() {
  const char *base = std::getenv("TMPDIR");
  std::string dir = std::string(base ? base : "/tmp") + "/mace_caffe_test_" +
                    std::to_string(::getpid());
  mkdir(dir.c_str(), 0755);
  return dir;
}

std::string WriteFile(const std::string &name, const std::string &bytes) {
  const std::string path = TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path;
}

// Blobs by layer name, written as a V2 (or V1) .caffemodel.
using Blobs = std::map<std::string, std::vector<std::vector<float>>>;

std::string CaffeModelBytes(const Blobs &blobs, bool v1 = false) {
  caffe::NetParameter net;
  for (const auto &entry : blobs) {
    std::vector<caffe::BlobProto *> out;
    if (v1) {
      auto *layer = net.add_layers();
      layer->set_name(entry.first);
      for (size_t i = 0; i < entry.second.size(); ++i) {
        out.push_back(layer->add_blobs());
      }
    } else {
      auto *layer = net.add_layer();
      layer->set_name(entry.first);
      for (size_t i = 0; i < entry.second.size(); ++i) {
        out.push_back(layer->add_blobs());
      }
    }
    for (size_t i = 0; i < entry.second.size(); ++i) {
      out[i]->mutable_shape()->add_dim(
          static_cast<int64_t>(entry.second[i].size()));
      for (float v : entry.second[i]) out[i]->add_data(v);
    }
  }
  if (net.layer_size() == 0 && net.layers_size() == 0) {
    net.add_layer()->set_name("no_blobs");
  }
  std::string bytes;
  net.SerializeToString(&bytes);
  return bytes;
}

std::vector<float> Ramp(size_t n, float scale = 0.1f, float offset = -1.0f) {
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) {
    values[i] = offset + scale * static_cast<float>((i * 7) % 23);
  }
  return values;
}

::testing::AssertionResult Ok(const MaceStatus &status) {
  if (status.code() == MaceStatus::MACE_SUCCESS) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << status.information();
}

class CaffeFrontendTest : public ::testing::Test {
 protected:
  // Converts `prototxt` with `blobs`; with `input` given, the net's input
  // "data" is frozen to it so the whole net folds.
  MaceStatus Convert(const std::string &prototxt, const Blobs &blobs,
                     const std::vector<float> *input = nullptr,
                     const Shape &input_shape = {}, bool v1 = false) {
    const std::string net = WriteFile("net.prototxt", prototxt);
    const std::string model =
        WriteFile("net.caffemodel", CaffeModelBytes(blobs, v1));
    ConvertOptions options;
    if (input != nullptr) {
      ConvertOptions::ConstantInput value;
      value.shape = input_shape;
      value.floats = *input;
      options.constant_inputs["data"] = value;
    }
    return ConvertCaffeModel(net, model, options, &graph_, &gaps_);
  }
  std::vector<float> Values(const std::string &name) const {
    const Tensor *t = graph_.Find(name);
    EXPECT_TRUE(t != nullptr && t->is_constant()) << name;
    if (t == nullptr || !t->is_constant()) return {};
    return std::vector<float>(t->data<float>(), t->data<float>() + t->size());
  }
  Shape ShapeOf(const std::string &name) const {
    const Tensor *t = graph_.Find(name);
    return t == nullptr ? Shape{} : t->shape();
  }
  int CountOps(const std::string &type) const {
    int count = 0;
    for (const OperatorDef &op : graph_.ops()) count += op.type() == type;
    return count;
  }

  GraphBuilder graph_;
  std::vector<ConversionGap> gaps_;
};

void ExpectNear(const std::vector<float> &got, const std::vector<double> &want,
                double tolerance = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tolerance * (1 + std::fabs(want[i])))
        << "element " << i;
  }
}

std::string InputLayer(const Shape &shape) {
  std::string dims;
  for (int64_t d : shape) dims += " dim: " + std::to_string(d);
  return "layer { name: 'data' type: 'Input' top: 'data' "
         "input_param { shape {" +
         dims + " } } }\n";
}

// Caffe's pooling (pooling_layer.cpp) in float64 for one channel plane.
std::vector<double> CaffePool(const std::vector<float> &x, int h, int w, int k,
                              int s, int pad, bool average, int *out_h,
                              int *out_w) {
  auto out_size = [&](int in) {
    int out =
        static_cast<int>(std::ceil(static_cast<double>(in + 2 * pad - k) / s)) +
        1;
    if (pad > 0 && (out - 1) * s >= in + pad) --out;
    return out;
  };
  *out_h = out_size(h);
  *out_w = out_size(w);
  std::vector<double> y;
  for (int ph = 0; ph < *out_h; ++ph) {
    for (int pw = 0; pw < *out_w; ++pw) {
      int hs = ph * s - pad, ws = pw * s - pad;
      int he = std::min(hs + k, h + pad), we = std::min(ws + k, w + pad);
      const int pool_size = (he - hs) * (we - ws);
      hs = std::max(hs, 0);
      ws = std::max(ws, 0);
      he = std::min(he, h);
      we = std::min(we, w);
      double acc = average ? 0.0 : -1e300;
      for (int i = hs; i < he; ++i) {
        for (int j = ws; j < we; ++j) {
          acc = average ? acc + x[i * w + j]
                        : std::max(acc, double(x[i * w + j]));
        }
      }
      y.push_back(average ? acc / pool_size : acc);
    }
  }
  return y;
}

TEST_F(CaffeFrontendTest, AveragePoolingRoundsUpAndDividesByThePaddedWindow) {
  // 6x7 input, kernel 3, stride 2, pad 1: Caffe rounds the output up and
  // counts padding cells in the average (but not cells past the padding).
  const std::vector<float> x = Ramp(42);
  ASSERT_TRUE(
      Ok(Convert(InputLayer({1, 1, 6, 7}) +
                     "layer { name: 'pool' type: 'Pooling' bottom: 'data' "
                     "top: 'pool' pooling_param { pool: AVE kernel_size: 3 "
                     "stride: 2 pad: 1 } }",
                 {}, &x, {1, 1, 6, 7})))
      << (gaps_.empty() ? "" : gaps_[0].reason);
  int oh = 0, ow = 0;
  const std::vector<double> want = CaffePool(x, 6, 7, 3, 2, 1, true, &oh, &ow);
  EXPECT_EQ(ShapeOf("pool"), (Shape{1, 1, oh, ow}));
  ExpectNear(Values("pool"), want);
}

TEST_F(CaffeFrontendTest, MaxPoolingDropsAWindowThatStartsInThePadding) {
  // 5x5, kernel 2, stride 2, pad 1: ceil gives 4 windows, but the last
  // would start in the padding, so Caffe keeps 3.
  const std::vector<float> x = Ramp(25);
  ASSERT_TRUE(
      Ok(Convert(InputLayer({1, 1, 5, 5}) +
                     "layer { name: 'pool' type: 'Pooling' bottom: 'data' "
                     "top: 'pool' pooling_param { pool: MAX kernel_size: 2 "
                     "stride: 2 pad: 1 } }",
                 {}, &x, {1, 1, 5, 5})));
  int oh = 0, ow = 0;
  const std::vector<double> want = CaffePool(x, 5, 5, 2, 2, 1, false, &oh, &ow);
  EXPECT_EQ(oh, 3);
  EXPECT_EQ(ShapeOf("pool"), (Shape{1, 1, 3, 3}));
  ExpectNear(Values("pool"), want);
}

TEST_F(CaffeFrontendTest, GlobalPoolingAveragesTheWholePlane) {
  const std::vector<float> x = Ramp(2 * 3 * 4);
  ASSERT_TRUE(
      Ok(Convert(InputLayer({1, 2, 3, 4}) +
                     "layer { name: 'gp' type: 'Pooling' bottom: 'data' "
                     "top: 'gp' pooling_param { pool: AVE global_pooling: "
                     "true } }",
                 {}, &x, {1, 2, 3, 4})));
  std::vector<double> want(2, 0.0);
  for (int c = 0; c < 2; ++c) {
    for (int i = 0; i < 12; ++i) want[c] += x[c * 12 + i] / 12.0;
  }
  EXPECT_EQ(ShapeOf("gp"), (Shape{1, 2, 1, 1}));
  ExpectNear(Values("gp"), want);
}

TEST_F(CaffeFrontendTest, EltwiseSumAppliesOneCoefficientPerBottom) {
  const std::vector<float> x = Ramp(6);
  ASSERT_TRUE(
      Ok(Convert(InputLayer({1, 6}) +
                     "layer { name: 'sq' type: 'Eltwise' bottom: 'data' "
                     "bottom: 'data' top: 'sq' eltwise_param { operation: "
                     "PROD } }\n"
                     "layer { name: 'sum' type: 'Eltwise' bottom: 'data' "
                     "bottom: 'sq' bottom: 'data' top: 'sum' eltwise_param "
                     "{ operation: SUM coeff: 0.5 coeff: -2 coeff: 3 } }",
                 {}, &x, {1, 6})));
  std::vector<double> want;
  for (float v : x) want.push_back(0.5 * v - 2.0 * v * v + 3.0 * v);
  ExpectNear(Values("sum"), want);
}

TEST_F(CaffeFrontendTest, EltwiseCoefficientsNeedOnePerBottom) {
  ASSERT_NE(MaceStatus(MaceStatus::MACE_SUCCESS),
            Convert(InputLayer({1, 6}) +
                        "layer { name: 'sum' type: 'Eltwise' bottom: 'data' "
                        "bottom: 'data' top: 'sum' eltwise_param { coeff: 1 } "
                        "}",
                    {}));
  ASSERT_EQ(gaps_.size(), 1u);
  EXPECT_NE(gaps_[0].reason.find("coeff"), std::string::npos);
}

const char kBatchNormScale[] =
    "layer { name: 'bn' type: 'BatchNorm' bottom: 'data' top: 'bn' "
    "batch_norm_param { eps: 0.001 } }\n"
    "layer { name: 'sc' type: 'Scale' bottom: 'bn' top: 'bn' "
    "scale_param { bias_term: true } }\n";

Blobs BatchNormScaleBlobs() {
  // Running sums scaled by 4: Caffe divides by the third blob.
  return {{"bn", {{4.0f, -2.0f, 0.4f}, {8.0f, 2.0f, 0.4f}, {4.0f}}},
          {"sc", {{1.5f, -0.5f, 2.0f}, {0.1f, 0.2f, -0.3f}}}};
}

TEST_F(CaffeFrontendTest, BatchNormWithScaleFactorAndScaleFoldIntoOneOp) {
  ASSERT_TRUE(Ok(Convert(InputLayer({1, 3, 2, 2}) + kBatchNormScale,
                         BatchNormScaleBlobs())));
  EXPECT_EQ(CountOps("BatchNorm"), 1);
  EXPECT_EQ(CountOps("Eltwise"), 0);
}

TEST_F(CaffeFrontendTest, BatchNormAndScaleComputeCaffesNormalization) {
  const std::vector<float> x = Ramp(12);
  ASSERT_TRUE(Ok(Convert(InputLayer({1, 3, 2, 2}) + kBatchNormScale,
                         BatchNormScaleBlobs(), &x, {1, 3, 2, 2})));
  const double mean[] = {1.0, -0.5, 0.1}, var[] = {2.0, 0.5, 0.1};
  const double gamma[] = {1.5, -0.5, 2.0}, beta[] = {0.1, 0.2, -0.3};
  std::vector<double> want;
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 4; ++i) {
      want.push_back((x[c * 4 + i] - mean[c]) / std::sqrt(var[c] + 0.001) *
                         gamma[c] +
                     beta[c]);
    }
  }
  ExpectNear(Values("bn"), want);
}

TEST_F(CaffeFrontendTest, ScaleWithASecondBottomBroadcastsFromItsAxis) {
  const std::vector<float> x = Ramp(2 * 3 * 2);
  // y = x * s, s [2, 3] from a Slice of x itself over axis 0 (num_axes 2).
  ASSERT_TRUE(Ok(Convert(InputLayer({2, 3, 2}) +
                             "layer { name: 'sl' type: 'Slice' bottom: 'data' "
                             "top: 'a' top: 'b' slice_param { axis: 2 } }\n"
                             "layer { name: 'f' type: 'Flatten' bottom: 'a' "
                             "top: 'f' flatten_param { axis: 1 } }\n"
                             "layer { name: 's' type: 'Scale' bottom: 'data' "
                             "bottom: 'f' top: 's' scale_param { axis: 0 } }",
                         {}, &x, {2, 3, 2})));
  std::vector<double> want;
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 3; ++c) {
      for (int w = 0; w < 2; ++w) {
        want.push_back(double(x[(n * 3 + c) * 2 + w]) * x[(n * 3 + c) * 2]);
      }
    }
  }
  ExpectNear(Values("s"), want);
}

TEST_F(CaffeFrontendTest, V1LayersConvertWithTheirEnumTypes) {
  const std::vector<float> x = Ramp(2 * 3 * 3);
  const std::vector<float> w = Ramp(2 * 2 * 2 * 2, 0.05f, -0.5f);
  const std::vector<float> b = {0.25f, -0.75f};
  const std::vector<float> ip = Ramp(3 * 8, 0.02f, -0.2f);
  ASSERT_TRUE(
      Ok(Convert("name: 'v1' input: 'data' input_dim: 1 input_dim: 2 "
                 "input_dim: 3 input_dim: 3\n"
                 "layers { name: 'conv' type: CONVOLUTION bottom: 'data' "
                 "top: 'conv' convolution_param { num_output: 2 "
                 "kernel_size: 2 } }\n"
                 "layers { name: 'relu' type: RELU bottom: 'conv' "
                 "top: 'conv' }\n"
                 "layers { name: 'ip' type: INNER_PRODUCT bottom: 'conv' "
                 "top: 'ip' inner_product_param { num_output: 3 "
                 "bias_term: false } }\n",
                 {{"conv", {w, b}}, {"ip", {ip}}}, &x, {1, 2, 3, 3}, true)))
      << (gaps_.empty() ? "" : gaps_[0].reason);
  // conv: [2 out, 2 in, 2, 2] valid on 3x3 → 2x2, relu, then ip over the
  // flattened [2, 2, 2] (NCHW order).
  std::vector<double> conv(8);
  for (int o = 0; o < 2; ++o) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        double acc = b[o];
        for (int c = 0; c < 2; ++c) {
          for (int u = 0; u < 2; ++u) {
            for (int v = 0; v < 2; ++v) {
              acc += w[((o * 2 + c) * 2 + u) * 2 + v] *
                     x[(c * 3 + i + u) * 3 + j + v];
            }
          }
        }
        conv[(o * 2 + i) * 2 + j] = std::max(acc, 0.0);
      }
    }
  }
  std::vector<double> want(3, 0.0);
  for (int n = 0; n < 3; ++n) {
    for (int k = 0; k < 8; ++k) want[n] += ip[n * 8 + k] * conv[k];
  }
  ExpectNear(Values("ip"), want);
}

TEST_F(CaffeFrontendTest, GroupEqualToChannelsIsADepthwiseConvolution) {
  ASSERT_TRUE(
      Ok(Convert(InputLayer({1, 4, 5, 5}) +
                     "layer { name: 'dw' type: 'Convolution' bottom: 'data' "
                     "top: 'dw' convolution_param { num_output: 4 group: 4 "
                     "kernel_size: 3 pad: 1 bias_term: false } }",
                 {{"dw", {Ramp(4 * 9)}}})));
  EXPECT_EQ(CountOps("DepthwiseConv2d"), 1);
  EXPECT_EQ(CountOps("Conv2D"), 0);
  EXPECT_EQ(ShapeOf("dw"), (Shape{1, 4, 5, 5}));
}

TEST_F(CaffeFrontendTest, LrnUsesCaffesKAndAlphaOverTheWindowSize) {
  const std::vector<float> x = Ramp(5 * 2);
  ASSERT_TRUE(Ok(Convert(InputLayer({1, 5, 1, 2}) +
                             "layer { name: 'lrn' type: 'LRN' bottom: 'data' "
                             "top: 'lrn' lrn_param { local_size: 3 alpha: 0.6 "
                             "beta: 0.7 k: 2 } }",
                         {}, &x, {1, 5, 1, 2})));
  std::vector<double> want;
  for (int c = 0; c < 5; ++c) {
    for (int i = 0; i < 2; ++i) {
      double sum = 0;
      for (int d = std::max(c - 1, 0); d <= std::min(c + 1, 4); ++d) {
        sum += double(x[d * 2 + i]) * x[d * 2 + i];
      }
      want.push_back(x[c * 2 + i] / std::pow(2.0 + 0.6 / 3 * sum, 0.7));
    }
  }
  ExpectNear(Values("lrn"), want);
}

TEST_F(CaffeFrontendTest, InterpZoomsWithAlignedCorners) {
  const std::vector<float> x = {0, 1, 2, 3};  // 1x1x2x2
  ASSERT_TRUE(Ok(Convert(InputLayer({1, 1, 2, 2}) +
                             "layer { name: 'up' type: 'Interp' bottom: 'data' "
                             "top: 'up' interp_param { zoom_factor: 2 } }",
                         {}, &x, {1, 1, 2, 2})));
  // 2 → 2 + (2 - 1) * (2 - 1) = 3 per axis; corners aligned.
  EXPECT_EQ(ShapeOf("up"), (Shape{1, 1, 3, 3}));
  ExpectNear(Values("up"), {0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3});
}

TEST_F(CaffeFrontendTest, ShuffleChannelInterleavesGroups) {
  const std::vector<float> x = {0, 1, 2, 3, 4, 5};  // 6 channels of 1x1
  ASSERT_TRUE(
      Ok(Convert(InputLayer({1, 6, 1, 1}) +
                     "layer { name: 'sh' type: 'ShuffleChannel' bottom: "
                     "'data' top: 'sh' shuffle_channel_param { group: 2 } "
                     "}",
                 {}, &x, {1, 6, 1, 1})));
  ExpectNear(Values("sh"), {0, 3, 1, 4, 2, 5});
}

TEST_F(CaffeFrontendTest, ReshapeResolvesZeroAndMinusOneAndCropSlices) {
  const std::vector<float> x = Ramp(2 * 3 * 4);
  ASSERT_TRUE(
      Ok(Convert(InputLayer({1, 2, 3, 4}) +
                     "layer { name: 'r' type: 'Reshape' bottom: 'data' "
                     "top: 'r' reshape_param { shape { dim: 0 dim: -1 dim: "
                     "4 } } }\n"
                     "layer { name: 'ref' type: 'Pooling' bottom: 'data' "
                     "top: 'ref' pooling_param { kernel_size: 2 } }\n"
                     "layer { name: 'crop' type: 'Crop' bottom: 'data' "
                     "bottom: 'ref' top: 'crop' crop_param { axis: 2 "
                     "offset: 1 offset: 1 } }",
                 {}, &x, {1, 2, 3, 4})));
  EXPECT_EQ(ShapeOf("r"), (Shape{1, 6, 4}));
  // ref (2x2 pooling, stride 1) is [1, 2, 2, 3].
  ASSERT_EQ(ShapeOf("crop"), (Shape{1, 2, 2, 3}));
  std::vector<double> want;
  for (int c = 0; c < 2; ++c) {
    for (int h = 1; h < 3; ++h) {
      for (int w = 1; w < 4; ++w) want.push_back(x[(c * 3 + h) * 4 + w]);
    }
  }
  ExpectNear(Values("crop"), want);
}

TEST_F(CaffeFrontendTest, InPlaceLayersKeepTheBlobNameForTheLastWriter) {
  ASSERT_TRUE(
      Ok(Convert(InputLayer({1, 2, 3, 3}) +
                     "layer { name: 'c' type: 'Convolution' bottom: 'data' "
                     "top: 'c' convolution_param { num_output: 2 "
                     "kernel_size: 1 } }\n"
                     "layer { name: 'relu' type: 'ReLU' bottom: 'c' "
                     "top: 'c' }\n",
                 {{"c", {Ramp(4), Ramp(2)}}})));
  ASSERT_EQ(graph_.output_names().size(), 1u);
  EXPECT_EQ(graph_.output_names()[0], "c");
  bool relu_writes_c = false;
  for (const OperatorDef &op : graph_.ops()) {
    relu_writes_c |= op.type() == "Activation" && op.output(0) == "c";
  }
  EXPECT_TRUE(relu_writes_c);
}

TEST_F(CaffeFrontendTest, InPlaceLayerOnTheInputGivesTheOutputItsOwnName) {
  ASSERT_TRUE(Ok(Convert(InputLayer({1, 2}) +
                             "layer { name: 'relu' type: 'ReLU' bottom: 'data' "
                             "top: 'data' }",
                         {})));
  ASSERT_EQ(graph_.output_names().size(), 1u);
  EXPECT_NE(graph_.output_names()[0], "data");
  EXPECT_TRUE(graph_.IsGraphInput("data"));
}

TEST_F(CaffeFrontendTest, PriorBoxFoldsToAConstantOfCaffesShape) {
  ASSERT_TRUE(Ok(Convert(
      InputLayer({1, 3, 32, 32}) +
          "layer { name: 'f' type: 'Pooling' bottom: 'data' top: 'f' "
          "pooling_param { kernel_size: 8 stride: 8 } }\n"
          "layer { name: 'pb' type: 'PriorBox' bottom: 'f' bottom: 'data' "
          "top: 'pb' prior_box_param { min_size: 8 max_size: 16 "
          "aspect_ratio: 2 flip: true variance: 0.1 variance: 0.1 "
          "variance: 0.2 variance: 0.2 } }",
      {})));
  EXPECT_EQ(CountOps("PriorBox"), 0);
  // 4x4 cells, 4 boxes each (1, max, 2, 1/2).
  EXPECT_EQ(ShapeOf("pb"), (Shape{1, 2, 4 * 4 * 4 * 4}));
  const std::vector<float> priors = Values("pb");
  ASSERT_EQ(priors.size(), 2u * 256);
  // First cell, first box: centre (4, 4), side 8 in a 32x32 image.
  ExpectNear({priors[0], priors[1], priors[2], priors[3]}, {0, 0, 0.25, 0.25});
  ExpectNear({priors[256], priors[257], priors[258], priors[259]},
             {0.1, 0.1, 0.2, 0.2});
}

TEST_F(CaffeFrontendTest, BiasAddsABlobOverItsAxes) {
  const std::vector<float> x = Ramp(2 * 3 * 2);
  const std::vector<float> b = {0.5f, -1.0f, 2.0f};
  ASSERT_TRUE(Ok(Convert(InputLayer({2, 3, 2}) +
                             "layer { name: 'b' type: 'Bias' bottom: 'data' "
                             "top: 'b' }",
                         {{"b", {b}}}, &x, {2, 3, 2})));
  std::vector<double> want;
  for (int i = 0; i < 12; ++i) want.push_back(double(x[i]) + b[i / 2 % 3]);
  ExpectNear(Values("b"), want);
}

TEST_F(CaffeFrontendTest, NormalizeAcrossSpatialWithASharedScale) {
  const std::vector<float> x = Ramp(2 * 2 * 3);
  ASSERT_TRUE(Ok(Convert(InputLayer({1, 2, 2, 3}) +
                             "layer { name: 'n' type: 'Normalize' bottom: "
                             "'data' top: 'n' norm_param { eps: 0.01 } }",
                         {{"n", {{20.0f}}}}, &x, {1, 2, 2, 3})));
  double sum = 0.01;
  for (float v : x) sum += double(v) * v;
  std::vector<double> want;
  for (float v : x) want.push_back(v / std::sqrt(sum) * 20.0);
  ExpectNear(Values("n"), want);
}

TEST_F(CaffeFrontendTest, PowerScalesShiftsThenRaises) {
  const std::vector<float> x = Ramp(5, 0.1f, 0.0f);
  ASSERT_TRUE(Ok(Convert(InputLayer({1, 5}) +
                             "layer { name: 'p' type: 'Power' bottom: 'data' "
                             "top: 'p' power_param { power: 2.5 scale: 3 "
                             "shift: 0.5 } }",
                         {}, &x, {1, 5})));
  std::vector<double> want;
  for (float v : x) want.push_back(std::pow(0.5 + 3.0 * v, 2.5));
  ExpectNear(Values("p"), want);
}

TEST_F(CaffeFrontendTest, ProposalBecomesTheNhwcOpWithCaffesRoisShape) {
  ASSERT_TRUE(Ok(Convert(
      "input: 'data' input_shape { dim: 1 dim: 6 dim: 4 dim: 5 }\n"
      "input: 'deltas' input_shape { dim: 1 dim: 12 dim: 4 dim: 5 }\n"
      "input: 'im_info' input_shape { dim: 1 dim: 3 }\n"
      "layer { name: 'p' type: 'Proposal' bottom: 'data' bottom: 'deltas' "
      "bottom: 'im_info' top: 'rois' proposal_param { ratio: 1 scale: 4 "
      "scale: 8 scale: 16 post_nms_topn: 7 } }",
      {})));
  EXPECT_EQ(CountOps("Proposal"), 1);
  EXPECT_EQ(ShapeOf("rois"), (Shape{7, 5}));
  for (const OperatorDef &op : graph_.ops()) {
    if (op.type() != "Proposal") continue;
    EXPECT_EQ(ShapeOf(op.input(0)), (Shape{1, 4, 5, 6}));  // NHWC
  }
}

// ---- bad input ----------------------------------------------------------

// Found by tests/fuzz/caffe_fuzzer.cc: axis + num_axes overflowed int64
// (undefined behaviour) before it was compared with the input's rank.
TEST(CaffeFrontendAxesTest, AxesFarOutsideTheInputAreErrors) {
  const std::string huge = "9223372036854775807";
  const struct {
    std::string layer;
    std::string needle;
  } cases[] = {
      {"layer { name: 'b' type: 'Bias' bottom: 'data' top: 'b' "
       "bias_param { axis: " + huge + " } }",
       "bias axes do not fit"},
      {"layer { name: 'b' type: 'Bias' bottom: 'data' top: 'b' "
       "bias_param { num_axes: " + huge + " } }",
       "bias axes do not fit"},
      {"layer { name: 's' type: 'Scale' bottom: 'data' top: 's' "
       "scale_param { axis: " + huge + " } }",
       "scale axes do not fit"},
      {"layer { name: 'r' type: 'Reshape' bottom: 'data' top: 'r' "
       "reshape_param { shape { dim: 0 } axis: " + huge +
           " num_axes: 1 } }",
       "do not fit input"},
      {"layer { name: 'r' type: 'Reshape' bottom: 'data' top: 'r' "
       "reshape_param { shape { dim: 0 } axis: 1 num_axes: " + huge + " } }",
       "do not fit input"},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.layer);
    // A graph of its own for each case (the fixture's holds one net).
    GraphBuilder graph;
    std::vector<ConversionGap> gaps;
    const MaceStatus status = ConvertCaffeModel(
        WriteFile("axes.prototxt", InputLayer({1, 3, 2, 2}) + c.layer),
        WriteFile("axes.caffemodel",
                  CaffeModelBytes({{"b", {{1, 2, 3}}}, {"s", {{1, 2, 3}}}})),
        {}, &graph, &gaps);
    ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS);
    EXPECT_NE(status.information().find(c.needle), std::string::npos)
        << status.information();
  }
}

TEST_F(CaffeFrontendTest, SyntaxErrorNamesLineAndColumn) {
  const MaceStatus status = Convert(
      InputLayer({1, 1, 2, 2}) + "layer {\n  name: 'r'\n  type 'ReLU'\n}\n",
      {});
  ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS) << "expected an error";
  EXPECT_NE(status.information().find("line 4, column 8"), std::string::npos)
      << status.information();
  EXPECT_NE(status.information().find("net.prototxt"), std::string::npos);
}

TEST(CaffeTextFormatTest, UnterminatedStringAndBadEscapeHavePositions) {
  TextMessage root;
  MaceStatus status = ParseTextFormat("a: 1\nname: 'abc\n", "t", &root);
  ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS) << "expected an error";
  EXPECT_NE(status.information().find("line 2, column 7"), std::string::npos)
      << status.information();
  status = ParseTextFormat("name: \"a\\q\"", "t", &root);
  ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS) << "expected an error";
  EXPECT_NE(status.information().find("line 1, column 9"), std::string::npos)
      << status.information();
  status = ParseTextFormat("m { a: 1 ", "t", &root);
  ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS) << "expected an error";
  EXPECT_NE(status.information().find("expected '}'"), std::string::npos);
}

TEST(CaffeTextFormatTest, ReadsCommentsListsEscapesAndAngleMessages) {
  TextMessage root;
  ASSERT_TRUE(
      Ok(ParseTextFormat("# header\nname: 'a\\'b' \"c\\n\" # tail\n"
                         "dims: [1, -2, 3]; m < x: 1.5e1 f: -inf > "
                         "n: { e: SUM }",
                         "t", &root)));
  std::string name;
  ASSERT_TRUE(Ok(root.GetString("t", "name", "", &name)));
  EXPECT_EQ(name, "a'bc\n");
  std::vector<int64_t> dims;
  ASSERT_TRUE(Ok(root.GetInts("t", "dims", &dims)));
  EXPECT_EQ(dims, (std::vector<int64_t>{1, -2, 3}));
  const TextMessage *m = nullptr;
  ASSERT_TRUE(Ok(root.GetMessage("t", "m", &m)));
  float x = 0, f = 0;
  ASSERT_TRUE(Ok(m->GetFloat("t", "x", 0, &x)));
  ASSERT_TRUE(Ok(m->GetFloat("t", "f", 0, &f)));
  EXPECT_EQ(x, 15.0f);
  EXPECT_TRUE(std::isinf(f) && f < 0);
  std::string e;
  ASSERT_TRUE(Ok(root.GetMessage("t", "n", &m)));
  ASSERT_TRUE(Ok(m->GetString("t", "e", "", &e)));
  EXPECT_EQ(e, "SUM");
  int64_t wrong = 0;
  const MaceStatus status = root.GetInt("layer 'q'", "name", 0, &wrong);
  ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS) << "expected an error";
  EXPECT_NE(status.information().find("layer 'q': field 'name' (line 2"),
            std::string::npos)
      << status.information();
}

TEST_F(CaffeFrontendTest, WrongValueTypeNamesLayerFieldAndLine) {
  const MaceStatus status =
      Convert(InputLayer({1, 1, 4, 4}) +
                  "layer { name: 'p' type: 'Pooling' bottom: 'data' top: 'p'\n"
                  "  pooling_param { kernel_size: 'big' } }",
              {});
  ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS) << "expected an error";
  EXPECT_NE(status.information().find("kernel_size"), std::string::npos);
  EXPECT_NE(status.information().find("line 3"), std::string::npos)
      << status.information();
}

TEST_F(CaffeFrontendTest, TruncatedAndCorruptedCaffemodelsAreErrors) {
  const std::string net =
      WriteFile("net.prototxt", InputLayer({1, 1, 2, 2}) +
                                    "layer { name: 'c' type: 'Convolution' "
                                    "bottom: 'data' top: 'c' convolution_param "
                                    "{ num_output: 1 kernel_size: 1 } }");
  const std::string bytes = CaffeModelBytes({{"c", {{2.0f}, {1.0f}}}});
  for (const std::string &bad :
       {bytes.substr(0, bytes.size() - 3), std::string("\xff\xff\xff", 3),
        std::string()}) {
    const std::string model = WriteFile("bad.caffemodel", bad);
    GraphBuilder graph;
    std::vector<ConversionGap> gaps;
    const MaceStatus status = ConvertCaffeModel(net, model, {}, &graph, &gaps);
    ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS) << "expected an error";
    EXPECT_NE(status.information().find("bad.caffemodel"), std::string::npos)
        << status.information();
  }
}

TEST_F(CaffeFrontendTest, BlobDataNotFillingItsShapeIsAnError) {
  caffe::NetParameter net;
  auto *layer = net.add_layer();
  layer->set_name("c");
  auto *blob = layer->add_blobs();
  blob->mutable_shape()->add_dim(2);
  blob->mutable_shape()->add_dim(3);
  for (int i = 0; i < 5; ++i) blob->add_data(1.0f);
  std::string bytes;
  net.SerializeToString(&bytes);
  std::map<std::string, std::vector<CaffeBlob>> blobs;
  const MaceStatus status = ParseCaffeModelBlobs(bytes, "w.caffemodel", &blobs);
  ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS) << "expected an error";
  EXPECT_NE(status.information().find("layer 'c' blob 0"), std::string::npos)
      << status.information();
}

TEST_F(CaffeFrontendTest, BlobShapeMismatchWithTheLayerNamesLayerAndBlob) {
  const MaceStatus status = Convert(
      InputLayer({1, 3, 4, 4}) +
          "layer { name: 'conv' type: 'Convolution' bottom: 'data' top: "
          "'conv' convolution_param { num_output: 2 kernel_size: 3 } }",
      {{"conv", {Ramp(2 * 3 * 2 * 2), Ramp(2)}}});
  ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS) << "expected an error";
  ASSERT_EQ(gaps_.size(), 1u);
  EXPECT_EQ(gaps_[0].node, "conv");
  EXPECT_NE(gaps_[0].reason.find("blob 0"), std::string::npos)
      << gaps_[0].reason;
  EXPECT_NE(gaps_[0].reason.find("[2,3,3,3]"), std::string::npos)
      << gaps_[0].reason;
}

TEST_F(CaffeFrontendTest, MissingBlobsAreReported) {
  const MaceStatus status =
      Convert(InputLayer({1, 3, 4, 4}) +
                  "layer { name: 'ip' type: 'InnerProduct' bottom: 'data' "
                  "top: 'ip' inner_product_param { num_output: 2 } }",
              {});
  ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS) << "expected an error";
  EXPECT_NE(status.information().find("no blobs"), std::string::npos)
      << status.information();
}

TEST_F(CaffeFrontendTest, EveryUnknownLayerIsListedAtOnce) {
  const MaceStatus status = Convert(
      InputLayer({1, 2, 4, 4}) +
          "layer { name: 'a' type: 'FancyOp' bottom: 'data' top: 'a' }\n"
          "layer { name: 'b' type: 'ReLU' bottom: 'a' top: 'b' }\n"
          "layer { name: 'c' type: 'OtherOp' bottom: 'data' top: 'c' }\n"
          "layer { name: 'd' type: 'Pooling' bottom: 'data' top: 'd' "
          "pooling_param { pool: STOCHASTIC kernel_size: 2 } }\n",
      {});
  ASSERT_EQ(status.code(), MaceStatus::MACE_UNSUPPORTED);
  ASSERT_EQ(gaps_.size(), 3u);  // 'b' only consumes a gap: not listed
  EXPECT_EQ(gaps_[0].op_type, "FancyOp");
  EXPECT_EQ(gaps_[1].op_type, "OtherOp");
  EXPECT_EQ(gaps_[2].node, "d");
  for (const char *name : {"FancyOp", "OtherOp", "STOCHASTIC"}) {
    EXPECT_NE(status.information().find(name), std::string::npos) << name;
  }
}

TEST_F(CaffeFrontendTest, V0NetsPointAtCaffesUpgradeTools) {
  MaceStatus status = Convert(
      "name: 'old' input: 'data' input_dim: 1 input_dim: 1 input_dim: 2 "
      "input_dim: 2\n"
      "layers { layer { name: 'relu' type: 'relu' } bottom: 'data' top: 'r' }",
      {});
  ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS) << "expected an error";
  EXPECT_NE(status.information().find("upgrade_net_proto_text"),
            std::string::npos)
      << status.information();
  // And a V0 .caffemodel.
  caffe::NetParameter net;
  net.add_layers()->mutable_layer()->set_name("conv");
  std::string bytes;
  net.SerializeToString(&bytes);
  std::map<std::string, std::vector<CaffeBlob>> blobs;
  status = ParseCaffeModelBlobs(bytes, "old.caffemodel", &blobs);
  ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS) << "expected an error";
  EXPECT_NE(status.information().find("upgrade_net_proto_binary"),
            std::string::npos);
}

TEST_F(CaffeFrontendTest, MissingFilesAreNamed) {
  std::vector<ConversionGap> gaps;
  GraphBuilder graph;
  const std::string model = WriteFile("w.caffemodel", CaffeModelBytes({}));
  MaceStatus status = ConvertCaffeModel(TempDir() + "/absent.prototxt", model,
                                        {}, &graph, &gaps);
  ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS) << "expected an error";
  EXPECT_NE(status.information().find("absent.prototxt"), std::string::npos);
  const std::string net =
      WriteFile("n.prototxt", InputLayer({1, 1, 1, 1}) +
                                  "layer { name: 'r' type: 'ReLU' bottom: "
                                  "'data' top: 'r' }");
  status = ConvertCaffeModel(net, TempDir() + "/absent.caffemodel", {}, &graph,
                             &gaps);
  ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS) << "expected an error";
  EXPECT_NE(status.information().find("absent.caffemodel"), std::string::npos);
  status = ConvertCaffeModel(net, "", {}, &graph, &gaps);
  ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS) << "expected an error";
  EXPECT_NE(status.information().find("--weight-file"), std::string::npos);
}

TEST_F(CaffeFrontendTest, InputWithoutShapeAsksForInputShape) {
  const MaceStatus status = Convert(
      "layer { name: 'data' type: 'Input' top: 'data' }\n"
      "layer { name: 'r' type: 'ReLU' bottom: 'data' top: 'r' }",
      {});
  ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS) << "expected an error";
  EXPECT_NE(status.information().find("--input-shape"), std::string::npos);
}

TEST_F(CaffeFrontendTest, TrainPhaseLayersAreDropped) {
  ASSERT_TRUE(
      Ok(Convert(InputLayer({1, 2}) +
                     "layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: "
                     "'data' top: 'loss' include { phase: TRAIN } }\n"
                     "layer { name: 'prob' type: 'Softmax' bottom: 'data' "
                     "top: 'prob' }",
                 {})));
  EXPECT_EQ(graph_.output_names(), (std::vector<std::string>{"prob"}));
}

}  // namespace
}  // namespace converter
}  // namespace mace
