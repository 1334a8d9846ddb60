// One model run by `mace run`: the flags' values, what they resolve to, and
// the run itself (engine, inputs, timed rounds, --benchmark, outputs,
// validation). `mace run --model` runs one; `mace run --config` one per
// model of a deployment file (run_config.cc).

#ifndef MACE_TOOLS_RUN_MODEL_H_
#define MACE_TOOLS_RUN_MODEL_H_

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mace/model/mace.pb.h"
#include "mace/public/mace.h"
#include "mace/tools/deploy_config.h"
#include "mace/tools/npy.h"

namespace mace {
namespace tools {

struct RunOptions {
  std::string model;
  std::string data;
  std::vector<std::string> inputs;
  std::string input_range = "-1,1";
  std::string output_dir;
  int rounds = 1;
  int threads = -1;
  std::string affinity = "none";
  std::vector<std::string> validate;
  double threshold = 0.999;
  int seed = 0;
  bool benchmark = false;
  // Where the engine keeps packed weights (<data file name>.packed), or
  // empty: none.
  std::string weight_cache_dir;
};

// What a run works on once the flags are checked.
struct RunPlan {
  NetDef net;
  double range_lo = -1.0;
  double range_hi = 1.0;
  // Per-input ranges of random values (the deployment file's input_ranges)
  // over range_lo/range_hi.
  std::map<std::string, std::pair<double, double>> input_ranges;
  CPUAffinityPolicy policy = AFFINITY_NONE;
  std::map<std::string, std::string> input_files;  // input → .npy
  std::map<std::string, NpyArray> references;      // output → reference
  std::vector<std::string> reference_order;
  // When set, every input fed is written there as <name>.npy and
  // make_references is called with those files after the run, to fill
  // `references` (outputs of the source framework on the same inputs).
  std::string inputs_dump_dir;
  std::function<MaceStatus(const std::map<std::string, std::string> &,
                           RunPlan *)>
      make_references;
};

// Loads the model and checks the flags against it.
MaceStatus PrepareRun(const RunOptions &options, RunPlan *plan);

// The plan's inputs (from files or seeded random values), as the engine
// takes them.
MaceStatus BuildInputs(const RunPlan &plan, int seed,
                       std::map<std::string, MaceTensor> *inputs);

NpyArray ToNpy(const MaceTensor &tensor);

// Prints the metrics table of `outputs` against plan.references; returns
// kExitOk, kExitCheckFailed when an output fails, or kExitBadInput with
// *status set.
int Validate(const RunPlan &plan, double threshold,
             const std::map<std::string, MaceTensor> &outputs,
             MaceStatus *status);

// Runs the plan and prints its report; returns the exit status (errors are
// reported by name of `command`).
int RunModel(const RunOptions &options, RunPlan *plan);

// `mace run --config deploy.yml`: every model of the file (or the one
// named), from build/<library_name>/model/.
struct ConfigRunOptions {
  std::string config_file;
  std::string model_name;
  std::string build_dir = "build";
  std::string input_dir;
  bool validate = false;
  bool layers = false;     // bisect for the first drifting tensor
  std::string device_yml;  // run on these boards over ssh instead
};
int RunFromConfig(const RunOptions &options, const ConfigRunOptions &config);

// `base` for one model of the deployment file: its graph and weights
// where `mace convert --config` put them, --output-dir/<model>, and its
// validation_threshold.CPU. An error when the model is not converted yet.
MaceStatus ConfigModelOptions(const RunOptions &base,
                              const DeployConfig &config,
                              const ConfigRunOptions &c,
                              const DeployModel &model, RunOptions *options);

// A model's inputs (input_ranges, validation_inputs_data, --input-dir) and,
// with --validate, its references (validation_outputs_data, or the source
// framework run on the inputs mace is fed, in `work_dir`).
MaceStatus PlanConfigModel(const DeployModel &model,
                           const ConfigRunOptions &c,
                           const std::string &work_dir, RunPlan *plan);

// `mace run --config --device-yml`: each model on each board of the device
// file, over ssh (device_run.cc).
int RunOnDevices(const RunOptions &options, const ConfigRunOptions &c,
                 const DeployConfig &config,
                 const std::vector<const DeployModel *> &models);

}  // namespace tools
}  // namespace mace

#endif  // MACE_TOOLS_RUN_MODEL_H_
