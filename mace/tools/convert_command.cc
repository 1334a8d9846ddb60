// `mace convert`: a source-framework model → <name>.pb + <name>.data.

#include <sys/stat.h>

#include <iostream>
#include <map>

#include "mace/converter/ir/graph_builder.h"
#include "mace/converter/onnx/onnx_frontend.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"
#include "mace/tools/command.h"
#include "mace/tools/flags.h"
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

}  // namespace

int ConvertCommand(int argc, char **argv, int first) {
  std::string platform = "onnx", model_file, output_dir, name, data_type;
  std::string input_format, output_format;
  std::vector<std::string> input_shapes, constant_inputs;
  bool check = false;
  FlagSet flags(
      "mace convert --platform onnx --model-file net.onnx --output-dir D "
      "[flags]",
      "Converts a model into mace's <name>.pb (graph) and <name>.data "
      "(weights). Inputs and outputs keep the source model's names; 4-D "
      "tensors keep its layout (NCHW for ONNX) unless "
      "--input-data-format/--output-data-format say NHWC.");
  flags.String("platform", "P", "source framework: onnx (tensorflow and "
               "caffe are not yet supported)", &platform);
  flags.String("model-file", "FILE", "the source model", &model_file);
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
  flags.Alias("model_file_path", "model-file");
  bool help = false;
  MaceStatus status = flags.Parse(argc, argv, first, &help);
  if (status != MaceStatus::MACE_SUCCESS) {
    return ReportError(kCommand, status.information());
  }
  if (help) {
    std::cout << flags.Help();
    return kExitOk;
  }
  if (platform == "tensorflow" || platform == "caffe") {
    return ReportError(kCommand, "platform '" + platform +
                                     "' is not yet supported in this build");
  }
  if (platform != "onnx") {
    return ReportError(kCommand, "--platform '" + platform +
                                     "' should be onnx, tensorflow or caffe");
  }
  if (model_file.empty()) return ReportError(kCommand, "--model-file is required");
  if (output_dir.empty() && !check) {
    return ReportError(kCommand, "--output-dir is required");
  }
  converter::OnnxConvertOptions options;
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

  converter::GraphBuilder graph;
  std::vector<converter::ConversionGap> gaps;
  status = converter::ConvertOnnxModel(model_file, options, &graph, &gaps);
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
  if (status == MaceStatus::MACE_SUCCESS) {
    status = converter::RunDefaultPasses(&graph);
  }
  if (name.empty()) name = BaseName(model_file);
  ModelBuilder model;
  if (status == MaceStatus::MACE_SUCCESS) status = graph.Finish(name, &model);
  if (status != MaceStatus::MACE_SUCCESS) {
    return ReportError(kCommand, "'" + model_file + "': " +
                                     status.information());
  }
  mkdir(output_dir.c_str(), 0755);
  const std::string base = output_dir + "/" + name;
  status = model.WriteFiles(base + ".pb", base + ".data", storage);
  if (status != MaceStatus::MACE_SUCCESS) {
    return ReportError(kCommand, status.information());
  }
  std::cout << "converted '" << model_file << "' → " << base << ".pb, "
            << base << ".data (" << model.net().op_size() << " ops, "
            << model.net().tensors_size() << " weights)\n";
  return kExitOk;
}

}  // namespace tools
}  // namespace mace
