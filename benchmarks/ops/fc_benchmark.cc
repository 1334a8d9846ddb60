// Benchmark of the batch-1 FullyConnected that ends MobileNet v2 and
// EfficientNet-B0 (1280 -> 1000), the matrix-vector kernel's case (the
// 1024 / 2048 inputs are MACE_BM_FULLY_CONNECTED_* in op_benchmark.cc).
// Named as MACE's: MACE_BM_FC_<N>_<K>_<OUT>_float_CPU. Every weight is read
// once per run, so GMACPS * 4 is the weight bandwidth in GB/s.
//
// Environment: MACE_VECTOR_ISA (read by dw_benchmark.cc) and
// MACE_BM_THREADS as bench_util.h says.

#include <string>

#include "benchmarks/ops/bench_util.h"

namespace mace {
namespace bench {
namespace {

void RegisterFc(int64_t n, int64_t k, int64_t out_c) {
  const std::string name = "MACE_BM_FC_" + std::to_string(n) + "_" +
                           std::to_string(k) + "_" + std::to_string(out_c) +
                           "_float_CPU";
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State &state) {
    ModelBuilder builder("bm");
    builder.AddInput("x", {n, k});
    builder.AddOp("FullyConnected", "fc", {"x", "w", "b"}, {"y"});
    builder.AddFloatTensor("w", {out_c, k}, RandomVector(out_c * k));
    builder.AddFloatTensor("b", {out_c}, RandomVector(out_c));
    builder.AddOutput("y", {n, out_c});
    RunModel(state, builder, {{"x", {n, k}}}, n * k * out_c);
  })->Unit(benchmark::kMicrosecond);
}

// Google Benchmark runs what is registered before main's
// RunSpecifiedBenchmarks; op_benchmark.cc's main knows nothing of this file.
const bool kRegistered = [] {
  RegisterFc(1, 1280, 1000);
  return true;
}();

}  // namespace
}  // namespace bench
}  // namespace mace
