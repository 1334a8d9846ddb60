// `model_graph_format: code` / `model_data_format: code`: a converted model
// compiled into a static library, so an app needs no model files (or only
// the weights). For each model of the deployment file:
//   include/mace/public/<model>.h         the model's graph (and weights)
//   include/mace/public/mace_engine_factory.h   CreateMaceEngineFromCode
//   model/code/<model>.cc, mace_engine_factory.cc   the generated sources
//   model/<library_name>.a                 the compiled library
// The graph and weight bytes enter the objects through the assembler's
// .incbin, not as C array literals: a 100 MB literal takes g++ minutes and
// gigabytes, .incbin takes milliseconds.

#ifndef MACE_TOOLS_MODEL_CODE_H_
#define MACE_TOOLS_MODEL_CODE_H_

#include <filesystem>

#include "mace/public/mace.h"
#include "mace/tools/deploy_config.h"

namespace mace {
namespace tools {

// `library` is the build/<library_name> folder being written, whose model/
// holds each model's .pb and .data. The compiler is $CXX (default c++) and
// the archiver $AR (default ar).
MaceStatus WriteModelCode(const DeployConfig &config,
                          const std::filesystem::path &library);

// "mobilenet-v1" → "mobilenet_v1": a C++ identifier for a model name.
std::string ModelIdentifier(const std::string &model_name);

}  // namespace tools
}  // namespace mace

#endif  // MACE_TOOLS_MODEL_CODE_H_
