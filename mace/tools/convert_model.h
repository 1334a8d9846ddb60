// Conversions `mace run` needs of a deployment file's model: the same model
// with other outputs (intermediate tensors for `check_tensors` and the
// `--layers` bisection), written beside a run's other temporary files.

#ifndef MACE_TOOLS_CONVERT_MODEL_H_
#define MACE_TOOLS_CONVERT_MODEL_H_

#include <string>
#include <vector>

#include "mace/public/mace.h"
#include "mace/tools/deploy_config.h"

namespace mace {
namespace tools {

// Converts `model` as `mace convert --config` does (its data_type) but with
// `outputs` as its outputs, into <output_dir>/<name>.pb and .data.
MaceStatus ConvertWithOutputs(const DeployModel &model,
                              const std::vector<std::string> &outputs,
                              const std::string &output_dir,
                              const std::string &name);

}  // namespace tools
}  // namespace mace

#endif  // MACE_TOOLS_CONVERT_MODEL_H_
