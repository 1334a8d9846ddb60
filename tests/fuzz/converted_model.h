// What the converter fuzzers do once a frontend has lowered a model: run
// the default passes and Finish as `mace convert` does, then load the
// finished model and run it once. Each failure must carry a message, and
// the engine must load what the converter finished: the converter infers
// every shape with the runtime ops' own checks, so a load that refuses a
// converted model (other than for lack of memory) is a converter bug.
// Runs may fail with a message (ops check input values, such as gather
// indices, at run time).

#ifndef TESTS_FUZZ_CONVERTED_MODEL_H_
#define TESTS_FUZZ_CONVERTED_MODEL_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "mace/converter/common/frontend.h"
#include "mace/converter/ir/graph_builder.h"
#include "mace/converter/passes/passes.h"
#include "mace/model/model_builder.h"
#include "mace/public/mace.h"
#include "tests/fuzz/fuzz_util.h"

namespace mace {
namespace fuzz {

// The inputs the converted model declares.
inline std::vector<FuzzInput> ModelInputs(const NetDef &net) {
  std::vector<FuzzInput> inputs;
  for (const InputOutputInfo &info : net.input_info()) {
    FuzzInput input;
    input.name = info.name();
    input.dims.assign(info.dims().begin(), info.dims().end());
    input.is_int32 = info.data_type() == DT_INT32;
    input.format = static_cast<DataFormat>(info.data_format());
    inputs.push_back(input);
  }
  return inputs;
}

inline void LoadAndRun(FuzzedDataProvider *data, const ModelBuilder &model) {
  std::vector<std::string> input_names, output_names;
  for (const InputOutputInfo &info : model.net().input_info()) {
    input_names.push_back(info.name());
  }
  for (const InputOutputInfo &info : model.net().output_info()) {
    output_names.push_back(info.name());
  }
  std::shared_ptr<MaceEngine> engine;
  const MaceStatus loaded =
      LoadModel(data, model, input_names, output_names, &engine);
  if (loaded == MaceStatus::MACE_OUT_OF_RESOURCES) return;
  if (loaded != MaceStatus::MACE_SUCCESS) {
    std::fprintf(stderr, "the engine refused a converted model: %s\n",
                 loaded.information().c_str());
    std::abort();
  }
  // Valid models with huge intermediates are loaded, not run.
  if (engine->planned_peak_bytes() > (64 << 20)) return;
  RunOnce(data, engine.get(), ModelInputs(model.net()));
}

// A frozen input (`--constant-input`): a small shape, int32 or float
// values drawn to fill it.
inline converter::ConvertOptions::ConstantInput AnyConstantInput(
    FuzzedDataProvider *data) {
  converter::ConvertOptions::ConstantInput frozen;
  const std::vector<int64_t> dims = AnyDims(data, 3);
  frozen.shape.assign(dims.begin(), dims.end());
  frozen.is_int = data->ConsumeBool();
  const int64_t count = std::max<int64_t>(ElementCount(dims), 0);
  for (int64_t i = 0; i < count; ++i) {
    if (frozen.is_int) {
      frozen.ints.push_back(static_cast<int32_t>(AnyInt(data)));
    } else {
      frozen.floats.push_back(AnyFloat(data));
    }
  }
  return frozen;
}

// The options, as `mace convert` flags would give them.
inline void PrintOptions(const converter::ConvertOptions &options) {
  std::fprintf(stderr, "inputs_nhwc %d outputs_nhwc %d\n",
               options.inputs_nhwc, options.outputs_nhwc);
  for (const auto &entry : options.input_shapes) {
    std::fprintf(stderr, "--input-shape %s:%s\n", entry.first.c_str(),
                 ShapeToString(entry.second).c_str());
  }
  for (const auto &entry : options.constant_inputs) {
    const converter::ConvertOptions::ConstantInput &value = entry.second;
    std::fprintf(stderr, "--constant-input %s %s shape %s, %zu values:",
                 entry.first.c_str(), value.is_int ? "int32" : "float",
                 ShapeToString(value.shape).c_str(),
                 value.is_int ? value.ints.size() : value.floats.size());
    for (size_t i = 0; i < value.ints.size(); ++i) {
      std::fprintf(stderr, " %d", value.ints[i]);
    }
    for (size_t i = 0; i < value.floats.size(); ++i) {
      std::fprintf(stderr, " %g", value.floats[i]);
    }
    std::fprintf(stderr, "\n");
  }
  for (const std::string &name : options.output_names) {
    std::fprintf(stderr, "output %s\n", name.c_str());
  }
}

inline void FinishLoadAndRun(FuzzedDataProvider *data,
                             converter::GraphBuilder *graph) {
  MaceStatus status = converter::RunDefaultPasses(graph);
  ExpectExplained(status, "passes");
  if (status != MaceStatus::MACE_SUCCESS) return;
  ModelBuilder converted("fuzz");
  status = graph->Finish("fuzz", &converted);
  ExpectExplained(status, "finish");
  if (status == MaceStatus::MACE_SUCCESS) LoadAndRun(data, converted);
}

}  // namespace fuzz
}  // namespace mace

#endif  // TESTS_FUZZ_CONVERTED_MODEL_H_
