// Random corruptions of a valid Caffe net (prototxt byte flips, truncations
// and token swaps; caffemodel bit flips, truncations and blob shape
// changes) must give a conversion error or a valid model, never a crash;
// scripts/test.sh also runs the fuzz group under ASan + UBSan.

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "mace/converter/caffe/caffe.pb.h"
#include "mace/converter/caffe/caffe_frontend.h"
#include "mace/converter/ir/graph_builder.h"
#include "mace/converter/passes/passes.h"

namespace mace {
namespace converter {
namespace {

constexpr int kCorruptions = 400;

const char kPrototxt[] = R"(name: "fuzz"
layer { name: "data" type: "Input" top: "data"
        input_param { shape { dim: 1 dim: 3 dim: 9 dim: 7 } } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
        convolution_param { num_output: 4 kernel_size: 3 pad: 1 stride: 2 } }
layer { name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1" }
layer { name: "scale1" type: "Scale" bottom: "conv1" top: "conv1"
        scale_param { bias_term: true } }
layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
layer { name: "dw" type: "Convolution" bottom: "conv1" top: "dw"
        convolution_param { num_output: 4 group: 4 kernel_size: 3
                            bias_term: false } }
layer { name: "pool" type: "Pooling" bottom: "dw" top: "pool"
        pooling_param { pool: AVE kernel_size: 2 stride: 2 pad: 1 } }
layer { name: "sum" type: "Eltwise" bottom: "pool" bottom: "pool" top: "sum"
        eltwise_param { operation: SUM coeff: 0.5 coeff: 2 } }
layer { name: "ip" type: "InnerProduct" bottom: "sum" top: "ip"
        inner_product_param { num_output: 5 } }
layer { name: "prob" type: "Softmax" bottom: "ip" top: "prob" }
)";

void AddBlob(caffe::LayerParameter *layer, const std::vector<int64_t> &dims) {
  auto *blob = layer->add_blobs();
  int64_t count = 1;
  for (int64_t d : dims) {
    blob->mutable_shape()->add_dim(d);
    count *= d;
  }
  for (int64_t i = 0; i < count; ++i) {
    blob->add_data(0.05f * static_cast<float>(i % 13) - 0.2f);
  }
}

caffe::NetParameter Weights() {
  caffe::NetParameter net;
  auto layer = [&](const char *name) {
    auto *l = net.add_layer();
    l->set_name(name);
    return l;
  };
  auto *conv1 = layer("conv1");
  AddBlob(conv1, {4, 3, 3, 3});
  AddBlob(conv1, {4});
  auto *bn = layer("bn1");
  AddBlob(bn, {4});
  AddBlob(bn, {4});
  for (int c = 0; c < 4; ++c) {
    bn->mutable_blobs(1)->set_data(c, 1.0f + 0.1f * static_cast<float>(c));
  }
  AddBlob(bn, {1});
  bn->mutable_blobs(2)->set_data(0, 1.0f);
  auto *scale = layer("scale1");
  AddBlob(scale, {4});
  AddBlob(scale, {4});
  AddBlob(layer("dw"), {4, 1, 3, 3});
  auto *ip = layer("ip");
  AddBlob(ip, {5, 4 * 2 * 2});
  AddBlob(ip, {5});
  return net;
}

int64_t WildInt(std::mt19937 *rng) {
  static const int64_t kValues[] = {-1,      0,         1,         2,        5,
                                    1 << 20, INT64_MAX, INT64_MIN, 1LL << 40};
  return kValues[(*rng)() % (sizeof(kValues) / sizeof(kValues[0]))];
}

std::string CorruptText(std::string text, std::mt19937 *rng) {
  static const char *kTokens[] = {
      "{",     "}",          ":",  "-",  "'",
      "\"",    "#",          "0",  "-1", "99999999999999999999",
      "layer", "top: \"x\"", "\\", "<",  "[",
      "nan"};
  std::mt19937 &r = *rng;
  switch (r() % 3) {
    case 0:
      text[r() % text.size()] = static_cast<char>(r() % 256);
      break;
    case 1:
      text.resize(r() % text.size());
      break;
    default: {
      const size_t at = r() % text.size();
      text.insert(at, kTokens[r() % (sizeof(kTokens) / sizeof(kTokens[0]))]);
      break;
    }
  }
  return text;
}

std::string CorruptWeights(std::mt19937 *rng) {
  std::mt19937 &r = *rng;
  std::string bytes;
  caffe::NetParameter net = Weights();
  if (r() % 2) {
    auto *layer = net.mutable_layer(r() % net.layer_size());
    auto *blob = layer->mutable_blobs(r() % layer->blobs_size());
    blob->mutable_shape()->set_dim(r() % blob->shape().dim_size(),
                                   WildInt(rng));
    net.SerializeToString(&bytes);
    return bytes;
  }
  net.SerializeToString(&bytes);
  if (r() % 2) {
    for (int f = 0; f < 1 + static_cast<int>(r() % 6); ++f) {
      bytes[r() % bytes.size()] ^= static_cast<char>(1 << (r() % 8));
    }
  } else {
    bytes.resize(r() % bytes.size());
  }
  return bytes;
}

TEST(CaffeCorruptionTest, CorruptedNetsGiveErrorsOrValidGraphs) {
  const char *tmp = std::getenv("TMPDIR");
  const std::string base = std::string(tmp ? tmp : "/tmp") +
                           "/mace_caffe_fuzz_" + std::to_string(::getpid());
  const std::string prototxt = base + ".prototxt";
  const std::string caffemodel = base + ".caffemodel";
  std::string valid_weights;
  Weights().SerializeToString(&valid_weights);
  {
    std::ofstream(prototxt, std::ios::binary | std::ios::trunc) << kPrototxt;
    std::ofstream(caffemodel, std::ios::binary | std::ios::trunc)
        << valid_weights;
    GraphBuilder graph;
    std::vector<ConversionGap> gaps;
    const MaceStatus status =
        ConvertCaffeModel(prototxt, caffemodel, {}, &graph, &gaps);
    ASSERT_EQ(status.code(), MaceStatus::MACE_SUCCESS)
        << "the uncorrupted net must convert: " << status.information();
  }
  std::mt19937 rng(11);
  int errors = 0, converted = 0;
  for (int i = 0; i < kCorruptions; ++i) {
    std::string text = kPrototxt, weights = valid_weights;
    if (i % 2 == 0) {
      for (int c = 0; c < 1 + static_cast<int>(rng() % 3); ++c) {
        text = CorruptText(text, &rng);
        if (text.empty()) text = " ";
      }
    } else {
      weights = CorruptWeights(&rng);
    }
    std::ofstream(prototxt, std::ios::binary | std::ios::trunc) << text;
    std::ofstream(caffemodel, std::ios::binary | std::ios::trunc) << weights;
    SCOPED_TRACE("corruption #" + std::to_string(i));
    GraphBuilder graph;
    std::vector<ConversionGap> gaps;
    MaceStatus status =
        ConvertCaffeModel(prototxt, caffemodel, {}, &graph, &gaps);
    if (status == MaceStatus::MACE_SUCCESS) status = RunDefaultPasses(&graph);
    ModelBuilder model;
    if (status == MaceStatus::MACE_SUCCESS) status = graph.Finish("m", &model);
    if (status == MaceStatus::MACE_SUCCESS) {
      ++converted;
    } else {
      EXPECT_FALSE(status.information().empty());
      ++errors;
    }
  }
  std::remove(prototxt.c_str());
  std::remove(caffemodel.c_str());
  EXPECT_GT(errors, 100);
  EXPECT_GT(converted, 20);
  std::printf("caffe corruptions: %d errors, %d converted\n", errors,
              converted);
}

}  // namespace
}  // namespace converter
}  // namespace mace
