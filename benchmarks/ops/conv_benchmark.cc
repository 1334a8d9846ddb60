// Conv2D benchmarks on the convolution shapes of ResNet-50, MobileNet v1
// and Inception v3, named as MACE names them
// (MACE_BM_CONV_2D_1_64_56_56_K3x3S1D1_SAME_64_float_CPU: batch, input
// channels, height, width, kernel, stride, dilation, padding, output
// channels). The plain name runs the kernel the engine chooses (for the
// 1 x r and r x 1 shapes, Winograd along one axis where its cost model
// takes it); suffixes force one: /im2col (winograd 0), /winograd2,
// /winograd4, /winograd6 (3x3 only: 5x5 has F(2,5) and F(4,5)), and
// /reference (filter and bias fed at run time: the reference tap loop,
// what every non-1x1 convolution ran before the im2col and Winograd
// kernels). /add runs the engine's choice with a residual addend fused
// (`fused_add`, fed as an input the size of the output), as ResNet's
// last 1x1 of a block runs. /swish fuses a SWISH (SiLU) activation, as
// EfficientNet's convolutions run. /gate takes a squeeze-and-excitation
// gate of the input's channels (`input_scale`, fed as a [1, 1, 1, Cin]
// input), as EfficientNet's and MobileNet-v3's projections run.
// Registered at start-up; op_benchmark.cc has the main.

#include <string>
#include <vector>

#include "benchmarks/ops/bench_util.h"

namespace mace {
namespace {

struct ConvShape {
  int64_t n, c, h, w, kh, kw, stride, dilation;
  bool same;  // SAME padding, else VALID
  int64_t out_c;
};

// Kernel variants: the `winograd` arg (-1 automatic) or the reference,
// and whether a residual addend is fused.
struct Variant {
  const char *suffix;
  int winograd;
  bool reference;
  bool fused_add = false;
  const char *activation = nullptr;  // fused, by its name in the `activation` arg
  bool input_scale = false;
};

int64_t OutSize(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                bool same) {
  if (same) return (in + stride - 1) / stride;
  return (in - (kernel - 1) * dilation - 1) / stride + 1;
}

void BenchConv(benchmark::State &state, const ConvShape &s, const Variant &v) {
  ModelBuilder builder("bm");
  builder.AddInput("x", {s.n, s.h, s.w, s.c});
  const std::vector<int64_t> w_shape = {s.out_c, s.kh, s.kw, s.c};
  bench::BenchInputs inputs = {{"x", {s.n, s.h, s.w, s.c}}};
  if (v.reference) {
    builder.AddInput("w", w_shape);
    builder.AddInput("b", {s.out_c});
    inputs.push_back({"w", w_shape});
    inputs.push_back({"b", {s.out_c}});
  } else {
    builder.AddFloatTensor("w", w_shape,
                           bench::RandomVector(bench::Count(w_shape)));
    builder.AddFloatTensor("b", {s.out_c}, bench::RandomVector(s.out_c));
  }
  const int64_t out_h = OutSize(s.h, s.kh, s.stride, s.dilation, s.same);
  const int64_t out_w = OutSize(s.w, s.kw, s.stride, s.dilation, s.same);
  std::vector<std::string> op_inputs = {"x", "w", "b"};
  if (v.input_scale) {
    const std::vector<int64_t> scale_shape = {1, 1, 1, s.c};
    builder.AddInput("s", scale_shape);
    inputs.push_back({"s", scale_shape});
    op_inputs.push_back("s");
  }
  if (v.fused_add) {
    const std::vector<int64_t> addend_shape = {s.n, out_h, out_w, s.out_c};
    builder.AddInput("a", addend_shape);
    inputs.push_back({"a", addend_shape});
    op_inputs.push_back("a");
  }
  OperatorDef *op = builder.AddOp("Conv2D", "conv", op_inputs, {"y"});
  ModelBuilder::AddIntsArg(op, "strides", {s.stride, s.stride});
  ModelBuilder::AddIntsArg(op, "dilations", {s.dilation, s.dilation});
  if (s.same) ModelBuilder::AddIntArg(op, "padding", 1);
  ModelBuilder::AddIntArg(op, "winograd", v.winograd);
  if (v.fused_add) ModelBuilder::AddIntArg(op, "fused_add", 1);
  if (v.input_scale) ModelBuilder::AddIntArg(op, "input_scale", 1);
  if (v.activation != nullptr) {
    ModelBuilder::AddStringArg(op, "activation", v.activation);
  }
  builder.AddOutput("y", {s.n, out_h, out_w, s.out_c});
  bench::RunModel(state, builder, inputs,
                  s.n * out_h * out_w * s.out_c * s.kh * s.kw * s.c);
}

std::string Name(const ConvShape &s) {
  auto str = [](int64_t v) { return std::to_string(v); };
  return "MACE_BM_CONV_2D_" + str(s.n) + "_" + str(s.c) + "_" + str(s.h) + "_" +
         str(s.w) + "_K" + str(s.kh) + "x" + str(s.kw) + "S" + str(s.stride) +
         "D" + str(s.dilation) + (s.same ? "_SAME_" : "_VALID_") +
         str(s.out_c) + "_float_CPU";
}

void Register(const ConvShape &s, const std::vector<Variant> &variants) {
  for (const Variant &v : variants) {
    const std::string name = Name(s) + v.suffix;
    benchmark::internal::Benchmark *b = benchmark::RegisterBenchmark(
        name.c_str(), [s, v](benchmark::State &st) { BenchConv(st, s, v); });
    b->Unit(benchmark::kMicrosecond);
    // The main thread's CPU time misses the pool's workers.
    if (bench::ThreadsFromEnvironment() > 1) b->UseRealTime();
  }
}

bool RegisterConvBenchmarks() {
  const Variant kAuto{"", -1, false};
  const Variant kIm2col{"/im2col", 0, false};
  const Variant kReference{"/reference", 0, true};
  const Variant kFusedAdd{"/add", -1, false, true};
  const std::vector<Variant> kWindow = {kAuto, kIm2col, kReference};
  const std::vector<Variant> kWinograd = {kAuto,
                                          kIm2col,
                                          {"/winograd2", 2, false},
                                          {"/winograd4", 4, false},
                                          {"/winograd6", 6, false},
                                          kReference};
  const std::vector<Variant> kWinograd5x5 = {kAuto,
                                             kIm2col,
                                             {"/winograd2", 2, false},
                                             {"/winograd4", 4, false},
                                             kReference};
  // ResNet-50: stem, 3x3 of each stage (stride 1 and the stride-2 first
  // block), 1x1 bottleneck projections.
  Register({1, 3, 224, 224, 7, 7, 2, 1, true, 64}, kWindow);
  Register({1, 64, 56, 56, 3, 3, 1, 1, true, 64}, kWinograd);
  Register({1, 128, 28, 28, 3, 3, 1, 1, true, 128}, kWinograd);
  Register({1, 256, 14, 14, 3, 3, 1, 1, true, 256}, kWinograd);
  Register({1, 512, 7, 7, 3, 3, 1, 1, true, 512}, kWinograd);
  Register({1, 128, 56, 56, 3, 3, 2, 1, true, 128}, kWindow);
  Register({1, 256, 28, 28, 3, 3, 2, 1, true, 256}, kWindow);
  Register({1, 512, 14, 14, 3, 3, 2, 1, true, 512}, kWindow);
  // The last 1x1 of each stage's blocks: plain and with the residual.
  Register({1, 64, 56, 56, 1, 1, 1, 1, false, 256}, {kAuto, kFusedAdd});
  Register({1, 128, 28, 28, 1, 1, 1, 1, false, 512}, {kFusedAdd});
  Register({1, 256, 14, 14, 1, 1, 1, 1, false, 1024}, {kFusedAdd});
  Register({1, 512, 7, 7, 1, 1, 1, 1, false, 2048}, {kFusedAdd});
  Register({1, 256, 56, 56, 1, 1, 2, 1, false, 512}, kWindow);
  Register({1, 1024, 14, 14, 1, 1, 1, 1, false, 256}, {kAuto});
  Register({1, 2048, 7, 7, 1, 1, 1, 1, false, 512}, {kAuto});
  // MobileNet v1: the stride-2 stem and pointwise layers.
  Register({1, 3, 224, 224, 3, 3, 2, 1, true, 32}, kWindow);
  Register({1, 32, 112, 112, 1, 1, 1, 1, false, 64}, {kAuto});
  Register({1, 512, 14, 14, 1, 1, 1, 1, false, 512}, {kAuto});
  // MobileNet v2: linear projections (few outputs, deep inputs).
  Register({1, 96, 56, 56, 1, 1, 1, 1, false, 24}, {kAuto});
  Register({1, 384, 14, 14, 1, 1, 1, 1, false, 96}, {kAuto});
  Register({1, 960, 7, 7, 1, 1, 1, 1, false, 160}, {kAuto});
  // SqueezeNet 1.1: the VALID stride-2 stem to 64 channels, and the fire
  // modules' 3x3 expand on 16, 32, 48 and 64 channels.
  Register({1, 3, 224, 224, 3, 3, 2, 1, false, 64}, kWindow);
  Register({1, 16, 55, 55, 3, 3, 1, 1, true, 64}, kWinograd);
  Register({1, 32, 27, 27, 3, 3, 1, 1, true, 128}, kWinograd);
  Register({1, 48, 13, 13, 3, 3, 1, 1, true, 192}, kWinograd);
  Register({1, 64, 13, 13, 3, 3, 1, 1, true, 256}, kWinograd);
  // Inception v3: VALID stem, 3x3 on 80 channels, 5x5, 1x7 / 7x1 on 17x17
  // (Mixed_6b and 6e), 1x3 / 3x1 on 8x8 (Mixed_7b).
  Register({1, 3, 299, 299, 3, 3, 2, 1, false, 32}, kWindow);
  Register({1, 32, 149, 149, 3, 3, 1, 1, false, 32}, kWinograd);
  Register({1, 80, 73, 73, 3, 3, 1, 1, false, 192}, kWinograd);
  Register({1, 48, 35, 35, 5, 5, 1, 1, true, 64}, kWinograd5x5);
  Register({1, 128, 17, 17, 1, 7, 1, 1, true, 128}, kWindow);
  Register({1, 128, 17, 17, 7, 1, 1, 1, true, 192}, kWindow);
  Register({1, 192, 17, 17, 1, 7, 1, 1, true, 192}, kWindow);
  Register({1, 384, 8, 8, 1, 3, 1, 1, true, 384}, kWindow);
  Register({1, 384, 8, 8, 3, 1, 1, 1, true, 384}, kWindow);
  Register({1, 288, 35, 35, 3, 3, 2, 1, false, 384}, kWindow);
  // EfficientNet-B0: the stem and the expansion 1x1 of its second stage,
  // 16 -> 96 channels on 112x112, both with SiLU fused.
  const Variant kSwish{"/swish", -1, false, false, "SWISH"};
  Register({1, 3, 224, 224, 3, 3, 2, 1, true, 32}, {kSwish});
  Register({1, 16, 112, 112, 1, 1, 1, 1, false, 96}, {kAuto, kSwish});
  Register({1, 24, 56, 56, 1, 1, 1, 1, false, 144}, {kAuto, kSwish});
  // Its gated projections: 32 -> 16 on 112x112 and 144 -> 24 on 56x56
  // (the filter's rows scaled at each run), 672 -> 112 on 14x14 (the
  // input scaled into scratch).
  const Variant kGate{"/gate", -1, false, false, nullptr, true};
  Register({1, 32, 112, 112, 1, 1, 1, 1, false, 16}, {kAuto, kGate});
  Register({1, 144, 56, 56, 1, 1, 1, 1, false, 24}, {kAuto, kGate});
  Register({1, 672, 14, 14, 1, 1, 1, 1, false, 112}, {kAuto, kGate});
  // GoogLeNet: the 5x5 of inception (3b), 32 -> 96 on 28x28.
  Register({1, 32, 28, 28, 5, 5, 1, 1, true, 96}, kWinograd5x5);
  // DeepLab-style dilated 3x3.
  Register({1, 256, 33, 33, 3, 3, 1, 2, true, 256}, kWindow);
  return true;
}

const bool kConvBenchmarksRegistered = RegisterConvBenchmarks();

}  // namespace
}  // namespace mace
