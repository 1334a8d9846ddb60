// Benchmarks of the channel-wise ops: DepthwiseConv2d (MobileNet v1/v2 and
// 5x5 shapes), PointwiseDepthwiseConv2d against the two ops it fuses, Pooling (ResNet / SqueezeNet / Inception windows, global
// average pooling), Eltwise (residual add, per-channel scale), Activation
// and Softmax. Names follow MACE's, e.g.
// MACE_BM_DEPTHWISE_CONV_2D_1_32_112_112_K3x3S1D1_SAME_1_float_CPU
// (N_C_H_W, kernel, stride, dilation, padding, multiplier).
//
// Environment: MACE_VECTOR_ISA = generic | avx2 | avx512 | neon forces the
// vector kernels' ISA (unknown or unavailable values are reported and
// ignored); MACE_BM_THREADS as bench_util.h says.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include "benchmarks/ops/bench_util.h"
#include "mace/kernels/activation.h"

namespace mace {
namespace bench {
namespace {

// DepthwiseConv2d with bias and ReLU6, as MobileNet's.
void RegisterDepthwise(int64_t c, int64_t h, int64_t w, int64_t k,
                       int64_t stride, int padding) {
  const std::string name =
      "MACE_BM_DEPTHWISE_CONV_2D_" + JoinDims({1, c, h, w}) + "_K" +
      std::to_string(k) + "x" + std::to_string(k) + "S" +
      std::to_string(stride) + "D1_" + PaddingName(padding) + "_1_float_CPU";
  RegisterMicros(name, [=](benchmark::State &state) {
    ModelBuilder builder("bm");
    builder.AddInput("x", {1, h, w, c});
    OperatorDef *op =
        builder.AddOp("DepthwiseConv2d", "dw", {"x", "w", "b"}, {"y"});
    ModelBuilder::AddIntsArg(op, "strides", {stride, stride});
    ModelBuilder::AddIntArg(op, "padding", padding);
    ModelBuilder::AddStringArg(op, "activation", "RELUX");
    ModelBuilder::AddFloatArg(op, "max_limit", 6.0f);
    builder.AddFloatTensor("w", {k, k, c, 1}, RandomVector(k * k * c));
    builder.AddFloatTensor("b", {c}, RandomVector(c));
    const int64_t out_h = WindowOutput(h, k, stride, padding);
    const int64_t out_w = WindowOutput(w, k, stride, padding);
    builder.AddOutput("y", {1, out_h, out_w, c});
    RunModel(state, builder, {{"x", {1, h, w, c}}}, out_h * out_w * c * k * k);
  });
}

// A 1x1 expansion (cin -> c channels) and a depthwise conv, each with bias
// and ReLU6, as MobileNet-v2's blocks: PointwiseDepthwiseConv2d, or
// (`fused` false, the "/unfused" twin) Conv2D then DepthwiseConv2d.
void RegisterPointwiseDepthwise(int64_t cin, int64_t c, int64_t h, int64_t w,
                                int64_t k, int64_t stride, bool fused) {
  const std::string name =
      "MACE_BM_POINTWISE_DEPTHWISE_CONV_2D_" + JoinDims({1, cin, h, w}) +
      "_E" + std::to_string(c) + "_K" + std::to_string(k) + "x" +
      std::to_string(k) + "S" + std::to_string(stride) + "D1_SAME_float_CPU" +
      (fused ? "" : "/unfused");
  RegisterMicros(name, [=](benchmark::State &state) {
    ModelBuilder builder("bm");
    builder.AddInput("x", {1, h, w, cin});
    builder.AddFloatTensor("pw", {c, 1, 1, cin}, RandomVector(c * cin));
    builder.AddFloatTensor("pw_b", {c}, RandomVector(c));
    builder.AddFloatTensor("dw", {k, k, c, 1}, RandomVector(k * k * c));
    builder.AddFloatTensor("dw_b", {c}, RandomVector(c));
    OperatorDef *dw = nullptr;
    if (fused) {
      dw = builder.AddOp("PointwiseDepthwiseConv2d", "fused",
                         {"x", "pw", "pw_b", "dw", "dw_b"}, {"y"});
      ModelBuilder::AddStringArg(dw, "pointwise_activation", "RELUX");
    } else {
      OperatorDef *pw =
          builder.AddOp("Conv2D", "pw", {"x", "pw", "pw_b"}, {"z"});
      ModelBuilder::AddStringArg(pw, "activation", "RELUX");
      dw = builder.AddOp("DepthwiseConv2d", "dw", {"z", "dw", "dw_b"}, {"y"});
    }
    ModelBuilder::AddIntsArg(dw, "strides", {stride, stride});
    ModelBuilder::AddIntArg(dw, "padding", 1);
    ModelBuilder::AddStringArg(dw, "activation", "RELUX");
    const int64_t out_h = WindowOutput(h, k, stride, 1);
    const int64_t out_w = WindowOutput(w, k, stride, 1);
    builder.AddOutput("y", {1, out_h, out_w, c});
    RunModel(state, builder, {{"x", {1, h, w, cin}}},
             h * w * c * cin + out_h * out_w * c * k * k);
  });
}

// Pooling; kernel 0 means global pooling. GMACPS counts window cells.
void RegisterPooling(int64_t c, int64_t h, int64_t w, int64_t k, int64_t stride,
                     int padding, bool max) {
  const bool global = k == 0;
  const std::string window =
      global ? std::string("GLOBAL")
             : "K" + std::to_string(k) + "x" + std::to_string(k) + "S" +
                   std::to_string(stride) + "_" + PaddingName(padding);
  const std::string name = "MACE_BM_POOLING_" + JoinDims({1, c, h, w}) + "_" +
                           window + (max ? "_MAX" : "_AVG") + "_float_CPU";
  RegisterMicros(name, [=](benchmark::State &state) {
    ModelBuilder builder("bm");
    builder.AddInput("x", {1, h, w, c});
    OperatorDef *op = builder.AddOp("Pooling", "pool", {"x"}, {"y"});
    ModelBuilder::AddIntArg(op, "pooling_type", max ? 2 : 1);
    int64_t out_h = 1, out_w = 1, kh = h, kw = w;
    if (global) {
      ModelBuilder::AddIntArg(op, "global_pooling", 1);
    } else {
      ModelBuilder::AddIntsArg(op, "kernels", {k, k});
      ModelBuilder::AddIntsArg(op, "strides", {stride, stride});
      ModelBuilder::AddIntArg(op, "padding", padding);
      out_h = WindowOutput(h, k, stride, padding);
      out_w = WindowOutput(w, k, stride, padding);
      kh = kw = k;
    }
    builder.AddOutput("y", {1, out_h, out_w, c});
    RunModel(state, builder, {{"x", {1, h, w, c}}},
             out_h * out_w * c * kh * kw);
  });
}

// Eltwise of x [1, h, w, c] and y, same shape or per channel [c].
// The second operand of a benchmarked Eltwise: the first's shape, one
// value per channel, or one per pixel (an [N, H, W, 1] map scaling every
// channel, rows of C values in the broadcast loop).
enum class EltwiseOperand { kSame, kChannel, kPixel };

void RegisterEltwise(const char *type_name, int type, int64_t c, int64_t h,
                     int64_t w, EltwiseOperand operand) {
  const char *suffix = operand == EltwiseOperand::kSame      ? "_SAME"
                       : operand == EltwiseOperand::kChannel ? "_CHANNEL"
                                                             : "_PIXEL";
  const std::string name = std::string("MACE_BM_ELTWISE_") + type_name + "_" +
                           JoinDims({1, c, h, w}) + suffix + "_float_CPU";
  RegisterMicros(name, [=](benchmark::State &state) {
    ModelBuilder builder("bm");
    builder.AddInput("x", {1, h, w, c});
    const std::vector<int64_t> b_shape = operand == EltwiseOperand::kSame
                                             ? std::vector<int64_t>{1, h, w, c}
                                         : operand == EltwiseOperand::kChannel
                                             ? std::vector<int64_t>{c}
                                             : std::vector<int64_t>{1, h, w, 1};
    builder.AddInput("b", b_shape);
    OperatorDef *op = builder.AddOp("Eltwise", "elt", {"x", "b"}, {"y"});
    ModelBuilder::AddIntArg(op, "type", type);
    builder.AddOutput("y", {1, h, w, c});
    RunModel(state, builder, {{"x", {1, h, w, c}}, {"b", b_shape}}, h * w * c);
  });
}

void RegisterActivation(const char *activation, int64_t c, int64_t h,
                        int64_t w) {
  const std::string name = std::string("MACE_BM_ACTIVATION_") + activation +
                           "_" + JoinDims({1, c, h, w}) + "_float_CPU";
  RegisterMicros(name, [=](benchmark::State &state) {
    ModelBuilder builder("bm");
    builder.AddInput("x", {1, h, w, c});
    OperatorDef *op = builder.AddOp("Activation", "act", {"x"}, {"y"});
    ModelBuilder::AddStringArg(op, "activation", activation);
    ModelBuilder::AddFloatArg(op, "max_limit", 6.0f);
    ModelBuilder::AddFloatArg(op, "activation_coefficient", 0.1f);
    builder.AddOutput("y", {1, h, w, c});
    RunModel(state, builder, {{"x", {1, h, w, c}}}, h * w * c);
  });
}

void RegisterSoftmax(int64_t n, int64_t classes) {
  const std::string name =
      "MACE_BM_SOFTMAX_" + JoinDims({n, classes}) + "_float_CPU";
  RegisterMicros(name, [=](benchmark::State &state) {
    ModelBuilder builder("bm");
    builder.AddInput("x", {n, classes});
    builder.AddOp("Softmax", "softmax", {"x"}, {"y"});
    builder.AddOutput("y", {n, classes});
    RunModel(state, builder, {{"x", {n, classes}}}, n * classes);
  });
}

// Maps MACE_VECTOR_ISA onto the kernels' override.
void ApplyIsaFromEnvironment() {
  const char *value = std::getenv("MACE_VECTOR_ISA");
  if (value == nullptr || *value == '\0') return;
  for (kernels::VectorIsa isa :
       {kernels::VectorIsa::kGeneric, kernels::VectorIsa::kAvx2,
        kernels::VectorIsa::kAvx512, kernels::VectorIsa::kNeon}) {
    if (std::strcmp(value, kernels::VectorIsaName(isa)) == 0 &&
        kernels::SetVectorIsaForTesting(isa)) {
      return;
    }
  }
  std::fprintf(stderr, "MACE_VECTOR_ISA=%s is unknown or not available\n",
               value);
}

// Google Benchmark runs what is registered before main's
// RunSpecifiedBenchmarks; op_benchmark.cc's main knows nothing of this file.
const bool kRegistered = [] {
  ApplyIsaFromEnvironment();
  // MobileNet v1.
  RegisterDepthwise(32, 112, 112, 3, 1, 1);
  RegisterDepthwise(64, 112, 112, 3, 2, 1);
  RegisterDepthwise(128, 56, 56, 3, 1, 1);
  RegisterDepthwise(128, 56, 56, 3, 2, 1);
  RegisterDepthwise(256, 28, 28, 3, 1, 1);
  RegisterDepthwise(256, 28, 28, 3, 2, 1);
  RegisterDepthwise(512, 14, 14, 3, 1, 1);
  RegisterDepthwise(512, 14, 14, 3, 2, 1);
  RegisterDepthwise(1024, 7, 7, 3, 1, 1);
  // MobileNet v2.
  RegisterDepthwise(96, 112, 112, 3, 2, 1);
  RegisterDepthwise(144, 56, 56, 3, 1, 1);
  RegisterDepthwise(960, 7, 7, 3, 1, 1);
  // 5x5 (MnasNet, EfficientNet).
  RegisterDepthwise(240, 28, 28, 5, 1, 1);
  RegisterDepthwise(672, 14, 14, 5, 2, 1);
  // EfficientNet-B0's last stage: 7x7 maps, where a 5x5 window's border
  // pixels are most of the output.
  RegisterDepthwise(1152, 7, 7, 5, 1, 1);
  // 1024 channels: a pixel every 4 KiB (aliasing; depthwise_impl.h).
  RegisterDepthwise(1024, 7, 7, 5, 1, 1);
  RegisterDepthwise(672, 14, 14, 5, 1, 1);
  // MobileNet-v2's expansions and depthwise layers, fused and not.
  for (bool fused : {true, false}) {
    RegisterPointwiseDepthwise(16, 96, 112, 112, 3, 2, fused);
    RegisterPointwiseDepthwise(24, 144, 56, 56, 3, 1, fused);
    RegisterPointwiseDepthwise(32, 192, 28, 28, 3, 1, fused);
  }
  // ResNet's and SqueezeNet's max pooling, Inception's average pooling,
  // the global average pooling the classifiers end with.
  RegisterPooling(64, 112, 112, 3, 2, 1, true);
  RegisterPooling(96, 111, 111, 3, 2, 0, true);
  RegisterPooling(192, 35, 35, 3, 1, 1, false);
  RegisterPooling(1024, 7, 7, 0, 1, 0, false);
  RegisterPooling(2048, 7, 7, 0, 1, 0, false);
  RegisterPooling(1000, 13, 13, 0, 1, 0, false);
  // Residual adds (ResNet), a per-channel scale.
  RegisterEltwise("SUM", 0, 256, 56, 56, EltwiseOperand::kSame);
  RegisterEltwise("SUM", 0, 512, 28, 28, EltwiseOperand::kSame);
  RegisterEltwise("PROD", 2, 64, 56, 56, EltwiseOperand::kChannel);
  RegisterEltwise("PROD", 2, 3, 224, 224, EltwiseOperand::kPixel);
  RegisterActivation("RELU", 64, 112, 112);
  RegisterActivation("RELUX", 64, 112, 112);
  RegisterActivation("LEAKYRELU", 64, 56, 56);
  RegisterActivation("SIGMOID", 64, 56, 56);
  RegisterActivation("TANH", 64, 56, 56);
  // EfficientNet's SiLU and MobileNet v3's hard swish.
  RegisterActivation("SWISH", 64, 56, 56);
  RegisterActivation("HARDSWISH", 64, 56, 56);
  RegisterSoftmax(1, 1000);
  RegisterSoftmax(64, 1000);
  return true;
}();

}  // namespace
}  // namespace bench
}  // namespace mace
