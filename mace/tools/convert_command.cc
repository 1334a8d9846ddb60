// `mace convert`: a source-framework model → <name>.pb + <name>.data.

#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include "mace/converter/common/frontend.h"
#include "mace/converter/common/model_rewrites.h"
#include "mace/converter/ir/graph_builder.h"
#include "mace/converter/onnx/onnx_frontend.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"
#include "mace/tools/command.h"
#include "mace/tools/convert_model.h"
#include "mace/tools/deploy_config.h"
#include "mace/tools/flags.h"
#include "mace/tools/model_code.h"
#include "mace/tools/npy.h"

namespace mace {
namespace tools {
namespace {

constexpr char kCommand[] = "convert";

// "name:1,3,224,224" → name, shape.
MaceStatus ParseInputShape(const std::string &text, std::string *name,
                           Shape *shape) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return InvalidArgs("--input-shape '", text,
                       "' should look like name:1,3,224,224");
  }
  *name = text.substr(0, colon);
  shape->clear();
  size_t start = colon + 1;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string piece = text.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    char *end = nullptr;
    const long long value = std::strtoll(piece.c_str(), &end, 10);
    if (piece.empty() || *end != '\0' || value < 0) {
      return InvalidArgs("--input-shape '", text, "': '", piece,
                         "' is not a non-negative integer");
    }
    shape->push_back(value);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ParseLayout(const std::string &flag, const std::string &value,
                       bool *nhwc) {
  if (value.empty() || value == "NCHW" || value == "nchw") {
    *nhwc = false;
  } else if (value == "NHWC" || value == "nhwc") {
    *nhwc = true;
  } else {
    return InvalidArgs(flag, " '", value, "' should be NCHW or NHWC");
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ParseStorage(const std::string &value, WeightStorage *storage) {
  if (value == "fp32_fp32") {
    *storage = WeightStorage::kFloat32;
  } else if (value == "fp16_fp32") {
    *storage = WeightStorage::kFloat16;
  } else if (value == "bf16_fp32") {
    *storage = WeightStorage::kBFloat16;
  } else {
    return InvalidArgs("--data-type '", value,
                       "' should be fp32_fp32, fp16_fp32 or bf16_fp32");
  }
  return MaceStatus::MACE_SUCCESS;
}

std::string BaseName(const std::string &path) {
  const size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = base.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

void PrintGaps(const std::vector<converter::ConversionGap> &gaps) {
  std::cout << "unsupported (" << gaps.size() << "):\n";
  for (const converter::ConversionGap &gap : gaps) {
    std::cout << "  " << gap.op_type << "  '" << gap.node << "'  "
              << gap.reason << "\n";
  }
}

// The one conversion both `mace convert` paths run: a source model → the
// optimized graph → <output_dir>/<name>.pb + .data. With `gaps` (--check)
// it stops after lowering and writes nothing. `finish`, when given, checks
// and rewrites the finished model before anything is written; its error
// stops the write.
MaceStatus ConvertOneModel(
    const converter::SourceModel &source, const std::string &name,
    const converter::ConvertOptions &options, WeightStorage storage,
    const std::string &output_dir,
    const std::function<MaceStatus(NetDef *)> &finish,
    std::vector<converter::ConversionGap> *gaps, std::string *summary) {
  converter::GraphBuilder graph;
  std::vector<converter::ConversionGap> own_gaps;
  MaceStatus status = converter::ConvertSourceModel(
      source, options, &graph, gaps != nullptr ? gaps : &own_gaps);
  if (gaps != nullptr) return status;
  if (status == MaceStatus::MACE_SUCCESS) {
    status = converter::RunDefaultPasses(&graph);
  }
  ModelBuilder model;
  if (status == MaceStatus::MACE_SUCCESS) status = graph.Finish(name, &model);
  if (status != MaceStatus::MACE_SUCCESS) {
    return MaceStatus(MaceStatus::MACE_INVALID_ARGS,
                      "'" + source.model_file + "': " + status.information());
  }
  if (finish) MACE_RETURN_IF_ERROR(finish(model.mutable_net()));
  mkdir(output_dir.c_str(), 0755);
  const std::string base = output_dir + "/" + name;
  MACE_RETURN_IF_ERROR(
      model.WriteFiles(base + ".pb", base + ".data", storage));
  *summary = "converted '" + source.model_file + "' → " + base + ".pb, " + base +
             ".data (" + std::to_string(model.net().op_size()) + " ops, " +
             std::to_string(model.net().tensors_size()) + " weights)";
  return MaceStatus::MACE_SUCCESS;
}

// ---- mace convert --config deploy.yml ------------------------------------

MaceStatus ConfigError(const DeployConfig &config, const std::string &what,
                       int line) {
  return MaceStatus(MaceStatus::MACE_INVALID_ARGS,
                    AtLine(what, config.path, line));
}

// The converter's options for a model of a deployment file: input shapes
// are given in the declared input format (NHWC by default, as MACE), the
// converter's in the source's NCHW.
MaceStatus DeployOptions(const DeployConfig &config, const DeployModel &model,
                         converter::ConvertOptions *options) {
  const DeploySubgraph &graph = model.subgraphs[0];
  auto layout = [&](const std::vector<std::string> &formats,
                    const std::string &key, bool *nhwc) -> MaceStatus {
    // MACE's default is NHWC; NONE is for tensors without a layout.
    std::set<std::string> seen;
    for (const std::string &format : formats) {
      if (format != "NONE") seen.insert(format);
    }
    if (seen.size() > 1) {
      return ConfigError(config, "'" + key + "' mixes NHWC and NCHW; one "
                         "layout for all tensors of a model is supported",
                         graph.line);
    }
    if (formats.empty()) {
      *nhwc = true;
    } else {
      *nhwc = !seen.empty() && *seen.begin() == "NHWC";
    }
    return MaceStatus::MACE_SUCCESS;
  };
  MACE_RETURN_IF_ERROR(layout(graph.input_data_formats, "input_data_formats",
                              &options->inputs_nhwc));
  MACE_RETURN_IF_ERROR(layout(graph.output_data_formats,
                              "output_data_formats", &options->outputs_nhwc));
  // TensorFlow is NHWC itself: its shapes need no permutation.
  const bool source_nchw = converter::SourceIsNchw(model.platform);
  for (size_t i = 0; i < graph.input_shapes.size(); ++i) {
    Shape shape(graph.input_shapes[i].begin(), graph.input_shapes[i].end());
    if (shape.size() == 4 && options->inputs_nhwc && source_nchw) {
      shape = {shape[0], shape[3], shape[1], shape[2]};  // NHWC → NCHW
    }
    options->input_shapes[graph.input_tensors[i]] = shape;
  }
  // TensorFlow graphs declare no outputs: the file names them. ONNX and
  // Caffe models declare theirs, which CheckDeclaredTensors compares.
  if (model.platform == "tensorflow") {
    options->output_names = graph.output_tensors;
  }
  return MaceStatus::MACE_SUCCESS;
}

// The declared tensors exist in the converted model and the declared output
// shapes and input types match it.
MaceStatus CheckDeclaredTensors(const DeployConfig &config,
                                const DeployModel &model, const NetDef &net) {
  const DeploySubgraph &graph = model.subgraphs[0];
  std::map<std::string, const InputOutputInfo *> inputs, outputs;
  for (const InputOutputInfo &info : net.input_info()) {
    inputs[info.name()] = &info;
  }
  for (const InputOutputInfo &info : net.output_info()) {
    outputs[info.name()] = &info;
  }
  for (size_t i = 0; i < graph.input_tensors.size(); ++i) {
    const std::string &tensor = graph.input_tensors[i];
    auto found = inputs.find(tensor);
    if (found == inputs.end()) {
      return ConfigError(
          config, UnknownNameMessage("model '" + model.name + "': input "
                                     "tensor '" + tensor + "' is not an "
                                     "input of the model", tensor,
                                     InputNames(net)),
          graph.input_tensor_lines[i]);
    }
    if (!graph.input_data_types.empty()) {
      const std::string &want = graph.input_data_types.size() == 1
                                    ? graph.input_data_types[0]
                                    : graph.input_data_types[i];
      const std::string got = ElementTypeName(found->second->data_type());
      if (got != want) {
        return ConfigError(config, "model '" + model.name + "': input "
                           "tensor '" + tensor + "' is " + got +
                           " in the model, input_data_types says " + want,
                           graph.input_tensor_lines[i]);
      }
    }
  }
  for (size_t i = 0; i < graph.output_tensors.size(); ++i) {
    const std::string &tensor = graph.output_tensors[i];
    auto found = outputs.find(tensor);
    if (found == outputs.end()) {
      return ConfigError(
          config, UnknownNameMessage("model '" + model.name + "': output "
                                     "tensor '" + tensor + "' is not an "
                                     "output of the model", tensor,
                                     OutputNames(net)),
          graph.output_tensor_lines[i]);
    }
    if (i < graph.output_shapes.size()) {
      const std::vector<int64_t> &want = graph.output_shapes[i];
      const std::vector<int64_t> got(found->second->dims().begin(),
                                     found->second->dims().end());
      if (!got.empty() && got != want) {
        return ConfigError(config, "model '" + model.name + "': output "
                           "tensor '" + tensor + "' has shape " +
                           DimsString(got) + ", output_shapes says " +
                           DimsString(want),
                           graph.output_shape_lines[i]);
      }
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus FileSystemError(const std::string &what,
                           const std::error_code &error) {
  return MaceStatus(MaceStatus::MACE_INVALID_ARGS,
                    what + ": " + error.message());
}

// libmace.a and libmace.so of this build, which a deployment links
// (MACE's build/<library_name>/lib/); skipped, with a note, when this mace
// runs away from its build tree.
MaceStatus CopyLibraries(const std::filesystem::path &lib) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::create_directories(lib, error);
  if (error) return FileSystemError("cannot create " + lib.string(), error);
  for (const char *name : {"libmace.a", "libmace.so"}) {
    const fs::path built = fs::path(MACE_LIBRARY_DIR) / name;
    if (!fs::exists(built)) {
      std::cerr << "mace " << kCommand << ": note: " << built.string()
                << " not found; lib/ lacks " << name << "\n";
      continue;
    }
    fs::copy_file(built, lib / name, error);
    if (error) return FileSystemError("cannot copy " + built.string(), error);
  }
  return MaceStatus::MACE_SUCCESS;
}

// Every model of the deployment file into a temporary folder next to the
// output, then moved into <root>/build/<library_name>/: nothing is written
// there when any model fails.
MaceStatus ConvertFromConfig(const std::string &config_path,
                             const std::string &output_root) {
  namespace fs = std::filesystem;
  DeployConfig config;
  MACE_RETURN_IF_ERROR(ParseDeployConfig(config_path, &config));
  const fs::path build = output_root.empty()
                             ? fs::path("build")
                             : fs::path(output_root) / "build";
  const fs::path library = build / config.library_name;
  std::error_code error;
  fs::create_directories(build, error);
  if (error) return FileSystemError("cannot create " + build.string(), error);
  std::string pattern = (build / ("." + config.library_name + ".XXXXXX"))
                            .string();
  if (mkdtemp(&pattern[0]) == nullptr) {
    return MaceStatus(MaceStatus::MACE_INVALID_ARGS,
                      "cannot create a temporary folder in " +
                          build.string());
  }
  const fs::path temp(pattern);
  struct Cleanup {
    fs::path path;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } cleanup{temp};

  fs::create_directories(temp / "model", error);
  fs::create_directories(temp / "include/mace/public", error);
  if (error) return FileSystemError("cannot create " + temp.string(), error);
  std::vector<std::string> summaries;
  for (const DeployModel &model : config.models) {
    for (const std::string &warning : model.warnings) {
      std::cerr << "mace " << kCommand << ": warning: " << warning << "\n";
    }
    converter::ConvertOptions options;
    MACE_RETURN_IF_ERROR(DeployOptions(config, model, &options));
    WeightStorage storage = WeightStorage::kFloat32;
    MACE_RETURN_IF_ERROR(ParseStorage(model.data_type, &storage));
    std::string summary;
    const converter::SourceModel source{model.platform, model.model_file_path,
                                        model.weight_file_path};
    MaceStatus status = ConvertOneModel(
        source, model.name, options, storage,
        (temp / "model").string(),
        [&](NetDef *net) {
          MACE_RETURN_IF_ERROR(CheckDeclaredTensors(config, model, *net));
          converter::SetWinograd(net, model.winograd);
          if (model.obfuscate) converter::ObfuscateNames(net);
          return MaceStatus(MaceStatus::MACE_SUCCESS);
        },
        nullptr, &summary);
    if (status != MaceStatus::MACE_SUCCESS) {
      const std::string what = status.information();
      // The converter names its flags when an input shape names no input;
      // say it in the deployment file's terms, at the tensor's line.
      const DeploySubgraph &graph = model.subgraphs[0];
      for (size_t i = 0; i < graph.input_tensors.size(); ++i) {
        if (what.find("names '" + graph.input_tensors[i] +
                      "', which is not an input") != std::string::npos) {
          return ConfigError(config, "model '" + model.name + "': input "
                             "tensor '" + graph.input_tensors[i] +
                             "' is not an input of the model",
                             graph.input_tensor_lines[i]);
        }
      }
      // Conversion errors get the model's place in the deployment file.
      if (what.find(", in " + config.path + ":") == std::string::npos) {
        return ConfigError(config, "model '" + model.name + "': " + what,
                           model.line);
      }
      return status;
    }
  }
  fs::copy_file(MACE_PUBLIC_HEADER, temp / "include/mace/public/mace.h",
                error);
  if (error) {
    return FileSystemError(std::string("cannot copy ") + MACE_PUBLIC_HEADER,
                           error);
  }

  if (config.model_graph_format == "code") {
    std::cerr << "mace " << kCommand << ": compiling the model code..."
              << std::endl;
    MACE_RETURN_IF_ERROR(WriteModelCode(config, temp));
  }
  MACE_RETURN_IF_ERROR(CopyLibraries(temp / "lib"));

  // Move into place, entry by entry: other files of the tree stay.
  for (const char *sub : {"model", "include/mace/public", "lib"}) {
    fs::create_directories(library / sub, error);
    if (error) {
      return FileSystemError("cannot create " + (library / sub).string(),
                             error);
    }
    for (const fs::directory_entry &entry :
         fs::directory_iterator(temp / sub)) {
      const fs::path target = library / sub / entry.path().filename();
      if (fs::is_directory(target)) fs::remove_all(target, error);
      fs::rename(entry.path(), target, error);
      if (error) {
        return FileSystemError("cannot move into " + target.string(), error);
      }
    }
  }
  // Model files of an earlier file-format conversion would shadow the code.
  const bool graph_in_code = config.model_graph_format == "code";
  const bool data_in_code = config.model_data_format == "code";
  for (const DeployModel &model : config.models) {
    const std::string base = (library / "model" / model.name).string();
    if (graph_in_code) fs::remove(base + ".pb", error);
    if (data_in_code) fs::remove(base + ".data", error);
    std::cout << "converted model '" << model.name << "' ("
              << model.model_file_path << ") → "
              << (graph_in_code ? "code" : base + ".pb") << ", "
              << (data_in_code ? "code" : base + ".data") << "\n";
  }
  if (graph_in_code) {
    std::cout << "wrote " << (library / "model").string() << "/"
              << config.library_name << ".a (CreateMaceEngineFromCode in "
              << "include/mace/public/mace_engine_factory.h)\n";
  }
  std::cout << "wrote " << library.string() << "/ (" << config.models.size()
            << " model" << (config.models.size() == 1 ? "" : "s")
            << ", include/mace/public/mace.h)\n";
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace

MaceStatus ConvertWithOutputs(const DeployModel &model,
                              const std::vector<std::string> &outputs,
                              const std::string &output_dir,
                              const std::string &name) {
  DeployConfig config;  // only names the file in errors
  converter::ConvertOptions options;
  MACE_RETURN_IF_ERROR(DeployOptions(config, model, &options));
  options.output_names = outputs;
  const converter::SourceModel source{model.platform, model.model_file_path,
                                      model.weight_file_path};
  WeightStorage storage = WeightStorage::kFloat32;
  MACE_RETURN_IF_ERROR(ParseStorage(model.data_type, &storage));
  std::string summary;
  return ConvertOneModel(source, name, options, storage, output_dir, nullptr,
                         nullptr, &summary);
}

int ConvertCommand(int argc, char **argv, int first) {
  std::string platform = "onnx", model_file, weight_file, output_dir, name;
  std::string data_type;
  std::string input_format, output_format;
  std::vector<std::string> input_shapes, constant_inputs;
  bool check = false;
  FlagSet flags(
      "mace convert --platform onnx --model-file net.onnx --output-dir D "
      "[flags]\n       mace convert --config deploy.yml [--output-dir D]",
      "Converts a model into mace's <name>.pb (graph) and <name>.data "
      "(weights). Inputs and outputs keep the source model's names; 4-D "
      "tensors keep its layout (NCHW for ONNX) unless "
      "--input-data-format/--output-data-format say NHWC.");
  flags.String("platform", "P", "source framework: onnx (default), "
               "tensorflow (frozen GraphDef .pb) or caffe (.prototxt with "
               "--weight-file .caffemodel)", &platform);
  flags.String("model-file", "FILE", "the source model", &model_file);
  flags.String("weight-file", "FILE", "the source weights, for caffe: the "
               ".caffemodel beside the --model-file .prototxt",
               &weight_file);
  flags.String("output-dir", "DIR", "where <name>.pb and <name>.data go",
               &output_dir);
  flags.String("name", "N", "model name (default: the model file's name)",
               &name);
  flags.Repeated("input-shape", "NAME:D0,D1,...",
                 "fixed shape of an input (needed for dynamic dims)",
                 &input_shapes);
  flags.Repeated("constant-input", "NAME=FILE.npy",
                 "freeze an input to the values of a .npy file (for "
                 "inputs needed at conversion time: shapes, axes, scales)",
                 &constant_inputs);
  flags.String("data-type", "T",
               "weight storage: fp32_fp32 (default), fp16_fp32, bf16_fp32",
               &data_type);
  flags.String("input-data-format", "F", "NCHW (source layout, default) or "
               "NHWC for 4-D inputs", &input_format);
  flags.String("output-data-format", "F", "NCHW (default) or NHWC for 4-D "
               "outputs", &output_format);
  flags.Switch("check", "only list every unsupported op, attribute and "
               "opset; exit 1 when there is any", &check);
  std::string config_file;
  flags.String("config", "deploy.yml", "convert every model of a MACE "
               "deployment file into build/<library_name>/ (under "
               "--output-dir when given, else the current folder)",
               &config_file);
  flags.Alias("model_file_path", "model-file");
  flags.Alias("weight_file_path", "weight-file");
  bool help = false;
  MaceStatus status = flags.Parse(argc, argv, first, &help);
  if (status != MaceStatus::MACE_SUCCESS) {
    return ReportError(kCommand, status.information());
  }
  if (help) {
    std::cout << flags.Help();
    return kExitOk;
  }
  if (!config_file.empty()) {
    for (const char *flag : {"model-file", "weight-file", "name", "input-shape",
                             "constant-input", "data-type",
                             "input-data-format", "output-data-format",
                             "check", "platform"}) {
      if (flags.WasSet(flag)) {
        return ReportError(kCommand, std::string("--") + flag +
                                         " cannot be combined with --config "
                                         "(the deployment file says it)");
      }
    }
    status = ConvertFromConfig(config_file, output_dir);
    if (status != MaceStatus::MACE_SUCCESS) {
      return ReportError(kCommand, status.information());
    }
    return kExitOk;
  }
  if (model_file.empty()) return ReportError(kCommand, "--model-file is required");
  if (output_dir.empty() && !check) {
    return ReportError(kCommand, "--output-dir is required");
  }
  converter::ConvertOptions options;
  for (const std::string &text : input_shapes) {
    std::string input;
    Shape shape;
    status = ParseInputShape(text, &input, &shape);
    if (status != MaceStatus::MACE_SUCCESS) {
      return ReportError(kCommand, status.information());
    }
    options.input_shapes[input] = shape;
  }
  for (const std::string &text : constant_inputs) {
    std::string input, path;
    if (!SplitAssignment(text, &input, &path)) {
      return ReportError(kCommand, "--constant-input '" + text +
                                       "' should look like name=file.npy");
    }
    NpyArray array;
    status = ReadNpy(path, &array);
    if (status != MaceStatus::MACE_SUCCESS) {
      return ReportError(kCommand, status.information());
    }
    auto &value = options.constant_inputs[input];
    value.shape = array.shape;
    value.is_int = array.type == NpyArray::Type::kInt32;
    value.floats = array.floats;
    value.ints = array.ints;
  }
  WeightStorage storage = WeightStorage::kFloat32;
  for (const MaceStatus &parsed :
       {ParseLayout("--input-data-format", input_format, &options.inputs_nhwc),
        ParseLayout("--output-data-format", output_format,
                    &options.outputs_nhwc),
        data_type.empty() ? MaceStatus(MaceStatus::MACE_SUCCESS)
                          : ParseStorage(data_type, &storage)}) {
    if (parsed != MaceStatus::MACE_SUCCESS) {
      return ReportError(kCommand, parsed.information());
    }
  }

  if (name.empty()) name = BaseName(model_file);
  std::string summary;
  std::vector<converter::ConversionGap> gaps;
  const converter::SourceModel source{platform, model_file, weight_file};
  status = ConvertOneModel(source, name, options, storage, output_dir,
                           nullptr, check ? &gaps : nullptr, &summary);
  if (check) {
    if (!gaps.empty()) {
      PrintGaps(gaps);
      return kExitCheckFailed;
    }
    if (status != MaceStatus::MACE_SUCCESS) {
      return ReportError(kCommand, status.information());
    }
    std::cout << "every op, attribute and opset of '" << model_file
              << "' is supported\n";
    return kExitOk;
  }
  if (status != MaceStatus::MACE_SUCCESS) {
    return ReportError(kCommand, status.information());
  }
  std::cout << summary << "\n";
  return kExitOk;
}

}  // namespace tools
}  // namespace mace
