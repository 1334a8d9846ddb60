// Helpers shared by the op benchmark files (benchmarks/ops/*.cc): random
// data, and running a one-op model through the whole engine in the
// benchmark loop with GMACPS reported as a rate counter.
//
// Environment: MACE_BM_THREADS, threads per engine (default 1).

#ifndef BENCHMARKS_OPS_BENCH_UTIL_H_
#define BENCHMARKS_OPS_BENCH_UTIL_H_

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mace/model/model_builder.h"
#include "mace/public/mace.h"

namespace mace {
namespace bench {

inline std::vector<float> RandomVector(int64_t count, uint32_t seed = 1234) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float &x : v) x = dist(rng);
  return v;
}

inline int64_t Count(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  return count;
}

inline int ThreadsFromEnvironment() {
  const char *threads = std::getenv("MACE_BM_THREADS");
  return threads != nullptr && *threads != '\0' ? std::atoi(threads) : 1;
}

// Dims joined by '_' for benchmark names: {1, 64, 56} -> "1_64_56".
inline std::string JoinDims(const std::vector<int64_t> &dims) {
  std::string joined;
  for (int64_t d : dims) {
    if (!joined.empty()) joined += "_";
    joined += std::to_string(d);
  }
  return joined;
}

// Registers `fn` as benchmark `name`, reported in microseconds.
inline void RegisterMicros(const std::string &name,
                           std::function<void(benchmark::State &)> fn) {
  benchmark::RegisterBenchmark(name.c_str(), std::move(fn))
      ->Unit(benchmark::kMicrosecond);
}

// The graph inputs a benchmark feeds: name and NHWC shape.
using BenchInputs = std::vector<std::pair<std::string, std::vector<int64_t>>>;

// The name of the one output the engine hands back: the first element of
// the benchmarked op's output "y" (see KeepOutputInside).
constexpr char kProbeOutput[] = "y_first";

// Keeps "y" inside the engine, as an op's output is inside a model: the
// graph's output becomes a one-element Slice of it, so a timed run does
// not also copy all of "y" out to the caller. That single-threaded copy
// was 31% of a 56x56 64->256 1x1 convolution's time at 1 thread and 38% at
// 2, 40% / 59% of a 112x112x32 depthwise 3x3's, and hid how ops scale.
// The Slice costs ~1 us a run. False when "y" is not an output of the
// graph.
inline bool KeepOutputInside(ModelBuilder *builder) {
  auto *outputs = builder->mutable_net()->mutable_output_info();
  for (int i = 0; i < outputs->size(); ++i) {
    const InputOutputInfo y = outputs->Get(i);
    if (y.name() != "y") continue;
    outputs->DeleteSubrange(i, 1);
    const std::vector<int64_t> zeros(y.dims_size(), 0);
    const std::vector<int64_t> ones(y.dims_size(), 1);
    OperatorDef *slice =
        builder->AddOp("Slice", kProbeOutput, {"y"}, {kProbeOutput});
    ModelBuilder::AddIntsArg(slice, "starts", zeros);
    ModelBuilder::AddIntsArg(slice, "ends", ones);
    builder->AddOutput(kProbeOutput, ones, y.data_type(), y.data_format());
    return true;
  }
  return false;
}

// Loads `builder`'s model (inputs `inputs`, one output "y", kept inside by
// KeepOutputInside), feeds random data and runs it in the benchmark loop;
// `macs` per run gives GMACPS.
inline void RunModel(benchmark::State &state, ModelBuilder builder,
                     const BenchInputs &inputs, int64_t macs) {
  if (!KeepOutputInside(&builder)) {
    state.SkipWithError("the model has no output \"y\"");
    return;
  }
  std::string graph, weights;
  std::shared_ptr<MaceEngine> engine;
  MaceEngineConfig config(DeviceType::CPU);
  config.SetCPUThreadPolicy(ThreadsFromEnvironment(), AFFINITY_NONE);
  std::vector<std::string> input_names;
  for (const auto &input : inputs) input_names.push_back(input.first);
  if (builder.Serialize(WeightStorage::kFloat32, &graph, &weights) !=
          MaceStatus::MACE_SUCCESS ||
      CreateMaceEngineFromProto(
          reinterpret_cast<const unsigned char *>(graph.data()), graph.size(),
          reinterpret_cast<const unsigned char *>(weights.data()),
          weights.size(), input_names, {kProbeOutput}, config,
          &engine) != MaceStatus::MACE_SUCCESS) {
    state.SkipWithError("could not build or load the model");
    return;
  }
  std::map<std::string, MaceTensor> feeds;
  uint32_t seed = 1234;
  for (const auto &input : inputs) {
    const std::vector<float> data = RandomVector(Count(input.second), seed++);
    std::shared_ptr<void> buffer(new float[data.size()],
                                 std::default_delete<float[]>());
    std::memcpy(buffer.get(), data.data(), data.size() * sizeof(float));
    feeds[input.first] = MaceTensor(input.second, buffer, DataFormat::NHWC);
  }
  std::map<std::string, MaceTensor> outputs;
  if (engine->Run(feeds, &outputs) != MaceStatus::MACE_SUCCESS) {
    state.SkipWithError("Run failed");
    return;
  }
  for (auto _ : state) {
    engine->Run(feeds, &outputs);
  }
  state.counters["GMACPS"] =
      benchmark::Counter(static_cast<double>(macs) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate);
}

// Registers benchmark `name`: one op of `type` from input "x" (NHWC
// `in_shape`, random) to output "y" (`out_shape`), its arguments set by
// `set_args`, `macs` per run.
inline void RegisterOneOp(const std::string &name, const std::string &type,
                          const std::vector<int64_t> &in_shape,
                          const std::vector<int64_t> &out_shape,
                          std::function<void(OperatorDef *)> set_args,
                          int64_t macs) {
  RegisterMicros(name, [=](benchmark::State &state) {
    ModelBuilder builder("bm");
    builder.AddInput("x", in_shape);
    set_args(builder.AddOp(type, "op", {"x"}, {"y"}));
    builder.AddOutput("y", out_shape);
    RunModel(state, builder, {{"x", in_shape}}, macs);
  });
}

// Output size of one axis under MACE's VALID (0) or SAME (1) padding.
inline int64_t WindowOutput(int64_t in, int64_t kernel, int64_t stride,
                            int padding) {
  return padding == 1 ? (in + stride - 1) / stride : (in - kernel) / stride + 1;
}

inline const char *PaddingName(int padding) {
  return padding == 1 ? "SAME" : "VALID";
}

}  // namespace bench
}  // namespace mace

#endif  // BENCHMARKS_OPS_BENCH_UTIL_H_
