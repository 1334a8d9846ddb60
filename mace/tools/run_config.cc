// `mace run --config deploy.yml`: runs each model of a deployment file from
// build/<library_name>/model/ (where `mace convert --config` wrote it), with
// the file's input ranges and validation data, and with --validate checks
// its outputs against the source framework's on the same inputs.

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "mace/converter/common/frontend.h"
#include "mace/core/status.h"
#include "mace/model/op_provenance.h"
#include "mace/tools/command.h"
#include "mace/tools/convert_model.h"
#include "mace/tools/deploy_config.h"
#include "mace/tools/run_model.h"
#include "mace/tools/subprocess.h"
#include "mace/tools/temp_dir.h"

namespace mace {
namespace tools {
namespace {

namespace fs = std::filesystem;

constexpr char kCommand[] = "run";

// The project's reference runner (scripts/reference_outputs.py), which runs
// the source model with its own framework; MACE_REFERENCE_SCRIPT overrides
// where it is, MACE_PYTHON the interpreter.
std::string ReferenceScript() {
  const char *path = std::getenv("MACE_REFERENCE_SCRIPT");
  return path != nullptr ? path : MACE_SOURCE_DIR "/scripts/reference_outputs.py";
}

std::string Python() {
  const char *python = std::getenv("MACE_PYTHON");
  return python != nullptr ? python : "python3";
}

// "<name>=<file>" plus ":NHWC" when mace's tensor is NHWC while the source
// framework's is NCHW, so the runner transposes.
std::string TensorArg(const std::string &name, const std::string &file,
                      const DeployModel &model, const InputOutputInfo *info) {
  const bool transposed = converter::SourceIsNchw(model.platform) &&
                          info != nullptr && info->data_format() == 1 &&
                          info->dims_size() == 4;
  return name + "=" + file + (transposed ? ":NHWC" : "");
}

const InputOutputInfo *FindInfo(
    const google::protobuf::RepeatedPtrField<InputOutputInfo> &infos,
    const std::string &name) {
  for (const InputOutputInfo &info : infos) {
    if (info.name() == name) return &info;
  }
  return nullptr;
}

// The source framework's outputs on the inputs mace was fed.
MaceStatus SourceReferences(const DeployModel &model, const std::string &dir,
                            const std::map<std::string, std::string> &inputs,
                            RunPlan *plan) {
  std::vector<std::string> args = {Python(), ReferenceScript(), "--platform",
                                   model.platform, "--model",
                                   model.model_file_path};
  if (!model.weight_file_path.empty()) {
    args.insert(args.end(), {"--weights", model.weight_file_path});
  }
  for (const auto &[name, file] : inputs) {
    args.insert(args.end(),
                {"--input", TensorArg(name, file, model,
                                      FindInfo(plan->net.input_info(), name))});
  }
  std::map<std::string, std::string> files;
  for (const InputOutputInfo &info : plan->net.output_info()) {
    const std::string file =
        (fs::path(dir) / (SanitizeFileName(info.name()) + ".npy")).string();
    files[info.name()] = file;
    args.insert(args.end(),
                {"--output", TensorArg(info.name(), file, model, &info)});
  }
  std::cerr << "validate: running '" << model.name << "' with "
            << model.platform << " for reference outputs..." << std::endl;
  MACE_RETURN_IF_ERROR(RunSubprocess(args, "the reference run"));
  for (const auto &[name, file] : files) {
    MACE_RETURN_IF_ERROR(ReadNpy(file, &plan->references[name]));
    plan->reference_order.push_back(name);
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace

MaceStatus PlanConfigModel(const DeployModel &model,
                           const ConfigRunOptions &c,
                           const std::string &work_dir, RunPlan *plan) {
  const DeploySubgraph &graph = model.subgraphs[0];
  for (size_t i = 0; i < graph.input_tensors.size(); ++i) {
    const std::string &name = graph.input_tensors[i];
    if (!graph.input_ranges.empty()) {
      plan->input_ranges[name] = graph.input_ranges.size() == 1
                                     ? graph.input_ranges[0]
                                     : graph.input_ranges[i];
    }
    std::string file;
    if (!c.input_dir.empty()) {
      const fs::path candidate =
          fs::path(c.input_dir) / (SanitizeFileName(name) + ".npy");
      if (fs::exists(candidate)) file = candidate.string();
    }
    if (file.empty() && i < graph.validation_inputs_data.size()) {
      file = graph.validation_inputs_data[i];
    }
    if (!file.empty()) plan->input_files[name] = file;
  }
  if (!c.validate) return MaceStatus::MACE_SUCCESS;
  if (!graph.validation_outputs_data.empty()) {
    for (size_t i = 0; i < graph.output_tensors.size() &&
                       i < graph.validation_outputs_data.size();
         ++i) {
      const std::string &name = graph.output_tensors[i];
      MACE_RETURN_IF_ERROR(
          ReadNpy(graph.validation_outputs_data[i], &plan->references[name]));
      plan->reference_order.push_back(name);
    }
    return MaceStatus::MACE_SUCCESS;
  }
  plan->inputs_dump_dir = work_dir + "/inputs";
  const std::string reference_dir = work_dir + "/reference";
  fs::create_directories(reference_dir);
  plan->make_references =
      [model, reference_dir](const std::map<std::string, std::string> &inputs,
                             RunPlan *plan) {
        return SourceReferences(model, reference_dir, inputs, plan);
      };
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ConfigModelOptions(const RunOptions &base,
                              const DeployConfig &config,
                              const ConfigRunOptions &c,
                              const DeployModel &model, RunOptions *options) {
  // With model_graph_format: code, the bytes compiled into the library
  // stay beside its sources in model/code/.
  const fs::path model_dir =
      fs::path(c.build_dir) / config.library_name / "model";
  const fs::path code_dir = model_dir / "code";
  *options = base;
  options->model =
      ((config.model_graph_format == "code" ? code_dir : model_dir) /
       (model.name + ".pb"))
          .string();
  options->data =
      ((config.model_data_format == "code" ? code_dir : model_dir) /
       (model.name + ".data"))
          .string();
  if (!base.output_dir.empty()) {
    options->output_dir = (fs::path(base.output_dir) / model.name).string();
  }
  auto threshold = model.validation_threshold.find("CPU");
  if (threshold != model.validation_threshold.end()) {
    options->threshold = threshold->second;
  }
  if (!fs::exists(options->model)) {
    return InvalidArgs("'", options->model, "' does not exist: convert "
                       "first with `mace convert --config ", c.config_file,
                       "`");
  }
  return MaceStatus::MACE_SUCCESS;
}

namespace {

// The model as the source framework is the reference for, whatever
// validation_outputs_data says (those are the final outputs' values).
DeployModel AgainstSource(const DeployModel &model) {
  DeployModel copy = model;
  copy.subgraphs[0].validation_outputs_data.clear();
  return copy;
}

// Runs `model` converted with `outputs` on the same inputs as the full
// model, compared with the source framework's values of those tensors.
// With `quiet`, prints nothing (the --layers probes).
int RunWithOutputs(const RunOptions &base, const ConfigRunOptions &c,
                   const DeployModel &model,
                   const std::vector<std::string> &outputs,
                   const std::string &dir, bool quiet, RunPlan *plan) {
  RunOptions options = base;
  options.model = dir + "/probe.pb";
  options.data = dir + "/probe.data";
  options.output_dir.clear();
  options.benchmark = false;
  options.rounds = 1;
  ConfigRunOptions validate = c;
  validate.validate = true;
  MaceStatus status = ConvertWithOutputs(model, outputs, dir, "probe");
  if (status == MaceStatus::MACE_SUCCESS) status = PrepareRun(options, plan);
  if (status == MaceStatus::MACE_SUCCESS) {
    status = PlanConfigModel(AgainstSource(model), validate, dir, plan);
  }
  if (status != MaceStatus::MACE_SUCCESS) {
    if (!quiet) return ReportError(kCommand, status.information());
    return kExitBadInput;
  }
  std::ostringstream sink;
  std::streambuf *out = std::cout.rdbuf(), *err = std::cerr.rdbuf();
  if (quiet) {
    std::cout.rdbuf(sink.rdbuf());
    std::cerr.rdbuf(sink.rdbuf());
  }
  const int result = RunModel(options, plan);
  std::cout.rdbuf(out);
  std::cerr.rdbuf(err);
  return result;
}

// check_tensors / check_shapes: intermediate tensors against the source.
int CheckTensors(const RunOptions &base, const ConfigRunOptions &c,
                 const DeployModel &model, const std::string &work) {
  const DeploySubgraph &graph = model.subgraphs[0];
  std::cout << "---- check_tensors of '" << model.name << "'\n";
  RunPlan plan;
  const int result = RunWithOutputs(base, c, model, graph.check_tensors,
                                    work + "/check", false, &plan);
  for (size_t i = 0; i < graph.check_shapes.size(); ++i) {
    for (const InputOutputInfo &info : plan.net.output_info()) {
      if (info.name() != graph.check_tensors[i]) continue;
      const std::vector<int64_t> got(info.dims().begin(), info.dims().end());
      if (got != graph.check_shapes[i]) {
        return ReportError(kCommand, "model '" + model.name + "': check "
                           "tensor '" + info.name() + "' has shape " +
                           DimsString(got) + ", check_shapes says " +
                           DimsString(graph.check_shapes[i]));
      }
    }
  }
  return result;
}

// --layers: the first tensor, in run order, whose value drifts from the
// source framework's, by bisection over the model's tensors the source
// also names (each probe converts the model with that one output).
int BisectLayers(const RunOptions &base, const ConfigRunOptions &c,
                 const DeployModel &model, const NetDef &net,
                 const std::string &work) {
  std::string listing;
  MaceStatus status = RunSubprocess(
      {Python(), ReferenceScript(), "--platform", model.platform, "--model",
       model.model_file_path, "--list-tensors"},
      "listing the source model's tensors", &listing);
  if (status != MaceStatus::MACE_SUCCESS) {
    return ReportError(kCommand, status.information());
  }
  // The source's tensors in its own (topological) order, with the node
  // making each; the converted op that holds that node names the culprit.
  std::vector<std::string> candidates, nodes, node_types;
  std::istringstream lines(listing);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string value, node, type;
    if (!std::getline(fields, value, '\t') || value.empty()) continue;
    std::getline(fields, node, '\t');
    std::getline(fields, type, '\t');
    candidates.push_back(value);
    nodes.push_back(node);
    node_types.push_back(type);
  }
  std::map<std::string, const OperatorDef *> holder;  // source node → op
  for (const OperatorDef &op : net.op()) {
    holder[op.name()] = &op;
    for (const std::string &fused : FusedSourceNodes(op)) holder[fused] = &op;
  }
  std::cout << "---- layers of '" << model.name << "': bisecting "
            << candidates.size() << " tensors the source model names\n";
  if (candidates.empty()) return kExitOk;
  // A probe's verdict: kExitOk matches, kExitCheckFailed drifts, anything
  // else (the tensor folded away, say) cannot be probed.
  int probes = 0;
  auto probe = [&](size_t index) {
    RunPlan plan;
    const std::string dir = work + "/layer" + std::to_string(index);
    const int result = RunWithOutputs(base, c, model, {candidates[index]},
                                      dir, true, &plan);
    ++probes;
    std::cout << "  probe " << probes << ": tensor " << index + 1 << "/"
              << candidates.size() << " '" << candidates[index] << "' "
              << (result == kExitOk            ? "matches"
                  : result == kExitCheckFailed ? "drifts"
                                               : "cannot be probed")
              << std::endl;
    return result;
  };
  size_t high = candidates.size();  // the first known drifting index
  for (size_t last = candidates.size(); last-- > 0;) {
    const int result = probe(last);
    if (result == kExitOk) break;
    if (result == kExitCheckFailed) {
      high = last;
      break;
    }
  }
  if (high == candidates.size()) {
    std::cout << "layers: no drift found up to the last tensor\n";
    return kExitOk;
  }
  size_t low = 0;
  while (low < high) {
    size_t mid = low + (high - low) / 2;
    int result = probe(mid);
    // Tensors that cannot be probed: try the next ones up to `high`.
    while (result != kExitOk && result != kExitCheckFailed && mid + 1 < high) {
      result = probe(++mid);
    }
    if (result == kExitCheckFailed) {
      high = mid;
    } else {
      low = mid + 1;
    }
  }
  std::cout << "layers: first drifting tensor '" << candidates[high]
            << "' (" << node_types[high] << " node '" << nodes[high] << "'";
  auto op = holder.find(nodes[high]);
  if (op != holder.end()) {
    std::cout << ", in mace op " << op->second->type() << " '"
              << DescribeSourceNodes(*op->second) << "'";
  }
  std::cout << ")\n";
  return kExitCheckFailed;
}

MaceStatus SelectModels(const DeployConfig &config, const std::string &name,
                        std::vector<const DeployModel *> *models) {
  std::vector<std::string> names;
  for (const DeployModel &model : config.models) {
    names.push_back(model.name);
    if (name.empty() || model.name == name) models->push_back(&model);
  }
  if (models->empty()) {
    return InvalidArgs(UnknownNameMessage(
        "--model-name '" + name + "' is not a model of " + config.path, name,
        names));
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace

int RunFromConfig(const RunOptions &base, const ConfigRunOptions &c) {
  DeployConfig config;
  MaceStatus status = ParseDeployConfig(c.config_file, &config);
  std::vector<const DeployModel *> models;
  if (status == MaceStatus::MACE_SUCCESS) {
    status = SelectModels(config, c.model_name, &models);
  }
  if (status != MaceStatus::MACE_SUCCESS) {
    return ReportError(kCommand, status.information());
  }
  if (!c.device_yml.empty()) return RunOnDevices(base, c, config, models);
  int worst = kExitOk;
  for (const DeployModel *model : models) {
    std::cout << "==== model '" << model->name << "'\n";
    RunOptions options;
    status = ConfigModelOptions(base, config, c, *model, &options);
    if (status != MaceStatus::MACE_SUCCESS) {
      return ReportError(kCommand, status.information());
    }
    TempDir work("mace-run");
    RunPlan plan;
    status = PrepareRun(options, &plan);
    if (status == MaceStatus::MACE_SUCCESS && work.path().empty()) {
      status = InvalidArgs("cannot create a temporary folder");
    }
    if (status == MaceStatus::MACE_SUCCESS) {
      status = PlanConfigModel(*model, c, work.path(), &plan);
    }
    if (status != MaceStatus::MACE_SUCCESS) {
      return ReportError(kCommand, "model '" + model->name +
                                       "': " + status.information());
    }
    worst = std::max(worst, RunModel(options, &plan));
    if (worst == kExitBadInput) return worst;
    if (c.validate && !model->subgraphs[0].check_tensors.empty()) {
      worst = std::max(worst, CheckTensors(options, c, *model, work.path()));
    }
    if (c.layers) {
      worst = std::max(worst,
                       BisectLayers(options, c, *model, plan.net, work.path()));
    }
    if (worst == kExitBadInput) return worst;
  }
  return worst;
}

}  // namespace tools
}  // namespace mace
