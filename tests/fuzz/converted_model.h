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

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

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
