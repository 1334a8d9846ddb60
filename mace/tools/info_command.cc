// `mace info`: a quick look at a model — inputs and outputs with shapes,
// ops (name, type, inputs -> outputs), weight tensors, and, when the
// weights are given, the planned peak memory and MACs per op (from one run
// on zero inputs).

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <new>
#include <sstream>

#include "mace/core/status.h"
#include "mace/core/types.h"
#include "mace/tools/command.h"
#include "mace/tools/flags.h"

namespace mace {
namespace tools {
namespace {

constexpr char kCommand[] = "info";

// What loading the engine tells beyond the graph file.
struct EngineFacts {
  int64_t peak_bytes = 0;
  bool have_stats = false;
  std::map<std::string, OperatorStats> op_stats;  // by op name
  std::string run_problem;  // why there are no stats, when there are none
};

// A table printed with columns padded to their widest cell.
void PrintTable(const std::vector<std::vector<std::string>> &rows) {
  std::vector<size_t> widths;
  for (const auto &row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c) {
      widths[c] = std::max(widths[c], row[c].size());
    }
  }
  for (const auto &row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += "  " + row[c];
      if (c + 1 < row.size()) {
        line += std::string(widths[c] - row[c].size(), ' ');
      }
    }
    std::cout << line << "\n";
  }
}

std::string Join(const google::protobuf::RepeatedPtrField<std::string> &items) {
  std::string out;
  for (const std::string &item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string WithThousands(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

// Zeroed bytes, or null when they cannot be allocated.
std::shared_ptr<void> ZeroBuffer(int64_t bytes) {
  uint8_t *raw = new (std::nothrow)
      uint8_t[static_cast<size_t>(std::max<int64_t>(bytes, 4))]();
  if (raw == nullptr) return nullptr;
  return std::shared_ptr<void>(raw, std::default_delete<uint8_t[]>());
}

// Loads the engine, then runs it once on zeros for per-op MACs and shapes.
MaceStatus InspectEngine(const std::string &model, const std::string &data,
                         const NetDef &net, EngineFacts *facts) {
  MaceEngineConfig config(DeviceType::CPU);
  std::shared_ptr<MaceEngine> engine;
  MACE_RETURN_IF_ERROR(CreateMaceEngineFromProto(
      model, data, InputNames(net), OutputNames(net), config, &engine));
  facts->peak_bytes = engine->planned_peak_bytes();
  std::map<std::string, MaceTensor> inputs, outputs;
  for (const InputOutputInfo &info : net.input_info()) {
    std::vector<int64_t> shape(info.dims().begin(), info.dims().end());
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    if (info.data_type() != DT_FLOAT && info.data_type() != DT_INT32) {
      facts->run_problem =
          "input '" + info.name() + "' is " + ElementTypeName(info.data_type());
      return MaceStatus::MACE_SUCCESS;
    }
    std::shared_ptr<void> zeros = ZeroBuffer(count * 4);
    if (zeros == nullptr) {
      facts->run_problem = "cannot allocate input '" + info.name() + "'";
      return MaceStatus::MACE_SUCCESS;
    }
    inputs.emplace(
        info.name(),
        MaceTensor(shape, zeros, static_cast<DataFormat>(info.data_format()),
                   info.data_type() == DT_INT32 ? IDT_INT32 : IDT_FLOAT));
  }
  RunMetadata metadata;
  const MaceStatus run = engine->Run(inputs, &outputs, &metadata);
  if (run != MaceStatus::MACE_SUCCESS) {
    facts->run_problem = run.information();
    return MaceStatus::MACE_SUCCESS;
  }
  facts->have_stats = true;
  for (const OperatorStats &stats : metadata.op_stats) {
    facts->op_stats[stats.operator_name] = stats;
  }
  return MaceStatus::MACE_SUCCESS;
}

void PrintIo(const char *title,
             const google::protobuf::RepeatedPtrField<InputOutputInfo> &infos) {
  std::cout << "\n" << title << " (" << infos.size() << ")\n";
  std::vector<std::vector<std::string>> rows = {
      {"name", "type", "shape", "format"}};
  for (const InputOutputInfo &info : infos) {
    rows.push_back({info.name(), ElementTypeName(info.data_type()),
                    DimsString({info.dims().begin(), info.dims().end()}),
                    DataFormatName(info.data_format())});
  }
  PrintTable(rows);
}

void PrintOps(const NetDef &net, const EngineFacts &facts) {
  std::cout << "\nops (" << net.op_size() << ")\n";
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"#", "name", "type", "inputs -> outputs",
                                     "output shape"};
  if (facts.have_stats) header.push_back("MACs");
  rows.push_back(header);
  int64_t total_macs = 0;
  for (int i = 0; i < net.op_size(); ++i) {
    const OperatorDef &op = net.op(i);
    std::string shapes;
    auto stats = facts.op_stats.find(op.name());
    if (stats != facts.op_stats.end()) {
      for (const auto &shape : stats->second.output_shape) {
        shapes += (shapes.empty() ? "" : " ") + DimsString(shape);
      }
    } else {
      for (const OutputShape &shape : op.output_shape()) {
        shapes += (shapes.empty() ? "" : " ") +
                  DimsString({shape.dims().begin(), shape.dims().end()});
      }
    }
    std::vector<std::string> row = {
        std::to_string(i), op.name(), op.type(),
        Join(op.input()) + " -> " + Join(op.output()), shapes};
    if (facts.have_stats) {
      const int64_t macs =
          stats != facts.op_stats.end() ? stats->second.macs : 0;
      total_macs += macs;
      row.push_back(macs > 0 ? WithThousands(macs) : "-");
    }
    rows.push_back(row);
  }
  PrintTable(rows);
  if (facts.have_stats) {
    std::cout << "total MACs  " << WithThousands(total_macs) << "\n";
  }
}

void PrintTensors(const NetDef &net) {
  int64_t total = 0;
  std::vector<std::vector<std::string>> rows = {
      {"name", "type", "dims", "elements", "bytes", "offset"}};
  for (const ConstTensor &tensor : net.tensors()) {
    const int64_t bytes = tensor.data_size() * DataTypeSize(tensor.data_type());
    total += bytes;
    rows.push_back({tensor.name(), ElementTypeName(tensor.data_type()),
                    DimsString({tensor.dims().begin(), tensor.dims().end()}),
                    WithThousands(tensor.data_size()), WithThousands(bytes),
                    std::to_string(tensor.offset())});
  }
  std::cout << "\ntensors (" << net.tensors_size() << ", "
            << WithThousands(total) << " bytes)\n";
  PrintTable(rows);
}

}  // namespace

int InfoCommand(int argc, char **argv, int first) {
  std::string model, model_flag, data;
  FlagSet flags("mace info M.pb [--data M.data]",
                "Prints a model's inputs, outputs, ops and weight tensors. "
                "With --data it\nloads the engine and adds the planned peak "
                "memory and MACs per op.");
  flags.Positional("M.pb", "model graph (.pb)", &model);
  flags.String("model", "FILE", "model graph (.pb), instead of M.pb",
               &model_flag);
  flags.Alias("model-file", "model");
  flags.String("data", "FILE", "model weights (.data)", &data);
  flags.Alias("model-data-file", "data");
  bool help = false;
  MaceStatus status = flags.Parse(argc, argv, first, &help);
  if (status != MaceStatus::MACE_SUCCESS) {
    return ReportError(kCommand, status.information());
  }
  if (help) {
    std::cout << flags.Help();
    return kExitOk;
  }
  if (model.empty()) model = model_flag;
  if (model.empty()) return ReportError(kCommand, "no model file given");
  NetDef net;
  size_t file_bytes = 0;
  status = LoadModelGraph(model, &net, &file_bytes);
  if (status != MaceStatus::MACE_SUCCESS) {
    return ReportError(kCommand, status.information());
  }
  EngineFacts facts;
  if (!data.empty()) {
    status = InspectEngine(model, data, net, &facts);
    if (status != MaceStatus::MACE_SUCCESS) {
      return ReportError(kCommand, status.information());
    }
  }
  std::cout << "model       " << (net.name().empty() ? "(unnamed)" : net.name())
            << " (" << model << ", " << WithThousands(file_bytes) << " bytes)\n"
            << "weights     " << ElementTypeName(net.data_type()) << ", "
            << net.tensors_size() << " tensors\n";
  if (!data.empty()) {
    std::cout << "peak memory " << WithThousands(facts.peak_bytes)
              << " bytes planned for intermediate tensors\n";
    if (!facts.have_stats) {
      std::cout << "(no MACs: a run on zero inputs failed: "
                << facts.run_problem << ")\n";
    }
  }
  PrintIo("inputs", net.input_info());
  PrintIo("outputs", net.output_info());
  PrintOps(net, facts);
  PrintTensors(net);
  return kExitOk;
}

}  // namespace tools
}  // namespace mace
