#include "tests/common/small_cnn.h"

#include <algorithm>
#include <cmath>

#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

constexpr int64_t kConvOut = 8;
// conv 3x3 stride 2 SAME: 13x11 → 7x6; depthwise keeps 7x6; avg pool 2x2
// stride 2 SAME: 7x6 → 4x3.
constexpr int64_t kH1 = 7, kW1 = 6, kH2 = 4, kW2 = 3;
constexpr int64_t kFcIn = kH2 * kW2 * kConvOut;

using Image = std::vector<double>;  // NHWC, batch 1

double &At(Image &image, int64_t w_size, int64_t c_size, int64_t h,
           int64_t w, int64_t c) {
  return image[(h * w_size + w) * c_size + c];
}

}  // namespace

SmallCnn::SmallCnn()
    : conv_w(RandomFloats(kConvOut * 3 * 3 * kChannels, -0.5f, 0.5f, 101)),
      conv_b(RandomFloats(kConvOut, -0.1f, 0.1f, 102)),
      dw_w(RandomFloats(3 * 3 * kConvOut, -0.6f, 0.6f, 103)),
      dw_b(RandomFloats(kConvOut, -0.1f, 0.1f, 104)),
      fc_w(RandomFloats(kClasses * kFcIn, -0.5f, 0.5f, 105)),
      fc_b(RandomFloats(kClasses, -0.2f, 0.2f, 106)) {}

ModelBuilder SmallCnn::Build() const {
  ModelBuilder builder("small_cnn");
  builder.AddInput("input", InputShape(), DT_FLOAT, 1);
  builder.AddFloatTensor("conv_w", {kConvOut, 3, 3, kChannels}, conv_w);
  builder.AddFloatTensor("conv_b", {kConvOut}, conv_b);
  builder.AddFloatTensor("dw_w", {3, 3, kConvOut, 1}, dw_w);
  builder.AddFloatTensor("dw_b", {kConvOut}, dw_b);
  builder.AddFloatTensor("fc_w", {kClasses, kFcIn}, fc_w);
  builder.AddFloatTensor("fc_b", {kClasses}, fc_b);

  OperatorDef *conv = builder.AddOp("Conv2D", "conv",
                                    {"input", "conv_w", "conv_b"}, {"c1"});
  ModelBuilder::AddIntsArg(conv, "strides", {2, 2});
  ModelBuilder::AddIntArg(conv, "padding", 1);
  OperatorDef *relu = builder.AddOp("Activation", "relu", {"c1"}, {"r1"});
  ModelBuilder::AddStringArg(relu, "activation", "RELU");
  OperatorDef *dw = builder.AddOp("DepthwiseConv2d", "dw",
                                  {"r1", "dw_w", "dw_b"}, {"d1"});
  ModelBuilder::AddIntsArg(dw, "strides", {1, 1});
  ModelBuilder::AddIntArg(dw, "padding", 1);
  ModelBuilder::AddStringArg(dw, "activation", "RELUX");
  ModelBuilder::AddFloatArg(dw, "max_limit", 6.0f);
  OperatorDef *pool = builder.AddOp("Pooling", "pool", {"d1"}, {"p1"});
  ModelBuilder::AddIntArg(pool, "pooling_type", 1);
  ModelBuilder::AddIntsArg(pool, "kernels", {2, 2});
  ModelBuilder::AddIntsArg(pool, "strides", {2, 2});
  ModelBuilder::AddIntArg(pool, "padding", 1);
  builder.AddOp("FullyConnected", "fc", {"p1", "fc_w", "fc_b"}, {"logits"});
  builder.AddOp("Softmax", "softmax", {"logits"}, {"prob"});
  builder.AddOutput("prob", {1, kClasses}, DT_FLOAT, 0);
  return builder;
}

std::vector<double> SmallCnn::Reference(
    const std::vector<float> &input_f) const {
  Image input(input_f.begin(), input_f.end());
  // conv 3x3, stride 2, SAME: out 7x6, pads top/left = total/2.
  const int64_t pad_h = std::max<int64_t>((kH1 - 1) * 2 + 3 - kHeight, 0) / 2;
  const int64_t pad_w = std::max<int64_t>((kW1 - 1) * 2 + 3 - kWidth, 0) / 2;
  Image c1(kH1 * kW1 * kConvOut);
  for (int64_t oh = 0; oh < kH1; ++oh)
    for (int64_t ow = 0; ow < kW1; ++ow)
      for (int64_t oc = 0; oc < kConvOut; ++oc) {
        double sum = conv_b[oc];
        for (int64_t kh = 0; kh < 3; ++kh)
          for (int64_t kw = 0; kw < 3; ++kw) {
            const int64_t ih = oh * 2 - pad_h + kh, iw = ow * 2 - pad_w + kw;
            if (ih < 0 || ih >= kHeight || iw < 0 || iw >= kWidth) continue;
            for (int64_t ic = 0; ic < kChannels; ++ic) {
              sum += At(input, kWidth, kChannels, ih, iw, ic) *
                     conv_w[((oc * 3 + kh) * 3 + kw) * kChannels + ic];
            }
          }
        At(c1, kW1, kConvOut, oh, ow, oc) = std::max(sum, 0.0);  // relu
      }
  // depthwise 3x3, stride 1, SAME (pad 1 each side), relu6.
  Image d1(kH1 * kW1 * kConvOut);
  for (int64_t oh = 0; oh < kH1; ++oh)
    for (int64_t ow = 0; ow < kW1; ++ow)
      for (int64_t c = 0; c < kConvOut; ++c) {
        double sum = dw_b[c];
        for (int64_t kh = 0; kh < 3; ++kh)
          for (int64_t kw = 0; kw < 3; ++kw) {
            const int64_t ih = oh - 1 + kh, iw = ow - 1 + kw;
            if (ih < 0 || ih >= kH1 || iw < 0 || iw >= kW1) continue;
            sum += At(c1, kW1, kConvOut, ih, iw, c) *
                   dw_w[(kh * 3 + kw) * kConvOut + c];
          }
        At(d1, kW1, kConvOut, oh, ow, c) = std::min(std::max(sum, 0.0), 6.0);
      }
  // avg pool 2x2 stride 2 SAME: 7x6 → 4x3, pads at the end only, padded
  // cells not counted.
  Image p1(kFcIn);
  for (int64_t oh = 0; oh < kH2; ++oh)
    for (int64_t ow = 0; ow < kW2; ++ow)
      for (int64_t c = 0; c < kConvOut; ++c) {
        double sum = 0;
        int count = 0;
        for (int64_t kh = 0; kh < 2; ++kh)
          for (int64_t kw = 0; kw < 2; ++kw) {
            const int64_t ih = oh * 2 + kh, iw = ow * 2 + kw;
            if (ih >= kH1 || iw >= kW1) continue;
            sum += At(d1, kW1, kConvOut, ih, iw, c);
            ++count;
          }
        At(p1, kW2, kConvOut, oh, ow, c) = sum / count;
      }
  // fully connected over the NHWC-flattened pool output, then softmax.
  std::vector<double> logits(kClasses);
  for (int64_t o = 0; o < kClasses; ++o) {
    double sum = fc_b[o];
    for (int64_t k = 0; k < kFcIn; ++k) sum += p1[k] * fc_w[o * kFcIn + k];
    logits[o] = sum;
  }
  const double max_logit = *std::max_element(logits.begin(), logits.end());
  double total = 0;
  for (double &v : logits) total += (v = std::exp(v - max_logit));
  for (double &v : logits) v /= total;
  return logits;
}

}  // namespace test
}  // namespace mace
