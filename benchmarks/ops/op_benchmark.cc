// Op benchmarks through the whole engine: a one-op model built with
// mace::ModelBuilder, loaded by CreateMaceEngineFromProto, Run in the loop
// with the op's output kept inside the engine (bench_util.h RunModel).
// Names follow MACE's (MACE_BM_CONV_2D_1_64_56_56_K1x1S1D1_VALID_64_float_CPU);
// GMACPS is reported as a rate counter.
//
// Environment (read here only, mapped onto the library's settings):
//   MACE_SGEMM_ISA   generic | avx2 | avx512 | neon: force the SGEMM kernel
//   MACE_BM_THREADS  threads per engine (default 1)

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "benchmarks/ops/bench_util.h"
#include "mace/kernels/sgemm.h"

namespace mace {
namespace {

// Conv2D, VALID padding, with bias.
void BenchConv2d(benchmark::State &state, int64_t n, int64_t c, int64_t h,
                 int64_t w, int64_t kh, int64_t kw, int64_t stride,
                 int64_t dilation, int64_t out_c) {
  ModelBuilder builder("bm");
  builder.AddInput("x", {n, h, w, c});
  OperatorDef *op = builder.AddOp("Conv2D", "conv", {"x", "w", "b"}, {"y"});
  ModelBuilder::AddIntsArg(op, "strides", {stride, stride});
  ModelBuilder::AddIntsArg(op, "dilations", {dilation, dilation});
  builder.AddFloatTensor("w", {out_c, kh, kw, c},
                         bench::RandomVector(out_c * kh * kw * c));
  builder.AddFloatTensor("b", {out_c}, bench::RandomVector(out_c));
  const int64_t out_h = (h - (kh - 1) * dilation - 1) / stride + 1;
  const int64_t out_w = (w - (kw - 1) * dilation - 1) / stride + 1;
  builder.AddOutput("y", {n, out_h, out_w, out_c});
  bench::RunModel(state, builder, {{"x", {n, h, w, c}}},
                  n * out_h * out_w * out_c * kh * kw * c);
}

// FullyConnected of a [n, k] input to out_c outputs, with bias.
void BenchFullyConnected(benchmark::State &state, int64_t n, int64_t k,
                         int64_t out_c) {
  ModelBuilder builder("bm");
  builder.AddInput("x", {n, k});
  builder.AddOp("FullyConnected", "fc", {"x", "w", "b"}, {"y"});
  builder.AddFloatTensor("w", {out_c, k}, bench::RandomVector(out_c * k));
  builder.AddFloatTensor("b", {out_c}, bench::RandomVector(out_c));
  builder.AddOutput("y", {n, out_c});
  bench::RunModel(state, builder, {{"x", {n, k}}}, n * k * out_c);
}

// Deconv2D (transposed convolution), VALID: out = (in - 1) * stride + k,
// with bias. MACs count every input pixel's k x k taps.
// filter_fed: the filter is a graph input, fed with every run.
void BenchDeconv2d(benchmark::State &state, int64_t c, int64_t h, int64_t w,
                   int64_t k, int64_t stride, int64_t out_c, bool filter_fed) {
  ModelBuilder builder("bm");
  builder.AddInput("x", {1, h, w, c});
  bench::BenchInputs inputs = {{"x", {1, h, w, c}}};
  OperatorDef *op = builder.AddOp("Deconv2D", "deconv", {"x", "w", "b"}, {"y"});
  ModelBuilder::AddIntsArg(op, "strides", {stride, stride});
  if (filter_fed) {
    builder.AddInput("w", {out_c, k, k, c});
    inputs.push_back({"w", {out_c, k, k, c}});
  } else {
    builder.AddFloatTensor("w", {out_c, k, k, c},
                           bench::RandomVector(out_c * k * k * c));
  }
  builder.AddFloatTensor("b", {out_c}, bench::RandomVector(out_c));
  const int64_t out_h = (h - 1) * stride + k;
  const int64_t out_w = (w - 1) * stride + k;
  builder.AddOutput("y", {1, out_h, out_w, out_c});
  bench::RunModel(state, builder, inputs, h * w * k * k * c * out_c);
}

void RegisterConv2d(int64_t n, int64_t c, int64_t h, int64_t w, int64_t kh,
                    int64_t kw, int64_t stride, int64_t dilation,
                    int64_t out_c) {
  const std::string name = "MACE_BM_CONV_2D_" + std::to_string(n) + "_" +
                           std::to_string(c) + "_" + std::to_string(h) + "_" +
                           std::to_string(w) + "_K" + std::to_string(kh) + "x" +
                           std::to_string(kw) + "S" + std::to_string(stride) +
                           "D" + std::to_string(dilation) + "_VALID_" +
                           std::to_string(out_c) + "_float_CPU";
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State &state) {
    BenchConv2d(state, n, c, h, w, kh, kw, stride, dilation, out_c);
  })->Unit(benchmark::kMicrosecond);
}

void RegisterFullyConnected(int64_t n, int64_t k, int64_t out_c) {
  const std::string name = "MACE_BM_FULLY_CONNECTED_" + std::to_string(n) +
                           "_" + std::to_string(k) + "_" +
                           std::to_string(out_c) + "_float_CPU";
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State &state) {
    BenchFullyConnected(state, n, k, out_c);
  })->Unit(benchmark::kMicrosecond);
}

void RegisterDeconv2d(int64_t c, int64_t h, int64_t w, int64_t k,
                      int64_t stride, int64_t out_c, bool filter_fed = false) {
  const std::string name = "MACE_BM_DECONV_2D_1_" + std::to_string(c) + "_" +
                           std::to_string(h) + "_" + std::to_string(w) + "_K" +
                           std::to_string(k) + "x" + std::to_string(k) + "S" +
                           std::to_string(stride) + "_VALID_" +
                           std::to_string(out_c) +
                           (filter_fed ? "_FEDFILTER" : "") + "_float_CPU";
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State &state) {
    BenchDeconv2d(state, c, h, w, k, stride, out_c, filter_fed);
  })->Unit(benchmark::kMicrosecond);
}

void RegisterAll() {
  RegisterConv2d(1, 64, 56, 56, 1, 1, 1, 1, 64);
  RegisterConv2d(1, 128, 28, 28, 1, 1, 1, 1, 128);
  RegisterConv2d(1, 256, 14, 14, 1, 1, 1, 1, 256);
  RegisterConv2d(1, 512, 7, 7, 1, 1, 1, 1, 1024);
  // SqueezeNet 1.1's classifier: a quarter of that model's time.
  RegisterConv2d(1, 512, 13, 13, 1, 1, 1, 1, 1000);
  RegisterConv2d(1, 64, 56, 56, 3, 3, 1, 1, 64);
  // Up-convolutions: the zoo UNet's (128 -> 64 on 16x16), a segmentation
  // head's 2x upsampling to 21 classes (FCN), and one to a single map.
  RegisterDeconv2d(128, 16, 16, 3, 2, 64);
  RegisterDeconv2d(21, 64, 64, 4, 2, 21);
  RegisterDeconv2d(64, 128, 128, 4, 2, 1);
  // UNet's, the filter fed with each run (packed before it).
  RegisterDeconv2d(128, 16, 16, 3, 2, 64, true);
  RegisterFullyConnected(1, 1024, 1000);
  RegisterFullyConnected(1, 2048, 1000);
  // MobileNet v2's and EfficientNet-B0's classifier: the matrix-vector
  // kernel reads each weight once, so GMACPS * 4 is its bandwidth in GB/s.
  RegisterFullyConnected(1, 1280, 1000);
  RegisterFullyConnected(16, 1024, 1000);
}

// Maps MACE_SGEMM_ISA onto the kernels' override; false on a bad value.
bool ApplyIsaFromEnvironment() {
  const char *value = std::getenv("MACE_SGEMM_ISA");
  if (value == nullptr || *value == '\0') return true;
  for (kernels::SgemmIsa isa :
       {kernels::SgemmIsa::kGeneric, kernels::SgemmIsa::kAvx2,
        kernels::SgemmIsa::kAvx512, kernels::SgemmIsa::kNeon}) {
    if (std::strcmp(value, kernels::SgemmIsaName(isa)) == 0) {
      return kernels::SetSgemmIsaForTesting(isa);
    }
  }
  return false;
}

}  // namespace
}  // namespace mace

int main(int argc, char **argv) {
  if (!mace::ApplyIsaFromEnvironment()) {
    std::fprintf(stderr, "MACE_SGEMM_ISA=%s is unknown or not available\n",
                 std::getenv("MACE_SGEMM_ISA"));
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext(
      "sgemm_isa",
      mace::kernels::SgemmIsaName(mace::kernels::SelectedSgemmIsa()));
  benchmark::AddCustomContext(
      "threads", std::to_string(mace::bench::ThreadsFromEnvironment()));
  mace::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
