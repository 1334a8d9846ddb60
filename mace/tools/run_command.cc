// `mace run`: runs a converted model on inputs read from .npy files or
// filled with seeded random values, reports init / first-run / per-round
// latency, writes every output as <name>.npy, and validates outputs
// against reference .npy files (cosine, SQNR, pixel accuracy).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <set>
#include <sstream>

#include "mace/core/status.h"
#include "mace/core/thread_pool.h"
#include "mace/model/model_loader.h"
#include "mace/tools/benchmark_report.h"
#include "mace/tools/command.h"
#include "mace/tools/flags.h"
#include "mace/tools/metrics.h"
#include "mace/tools/npy.h"
#include "mace/tools/run_model.h"
#include "mace/tools/table.h"

namespace mace {
namespace tools {
namespace {

constexpr char kCommand[] = "run";

struct Timings {
  double init_ms = 0.0;
  double first_ms = 0.0;
  std::vector<double> rounds_ms;
};

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

void DeclareFlags(FlagSet *flags, RunOptions *o) {
  flags->String("model", "FILE", "model graph (.pb), required", &o->model);
  flags->Alias("model-file", "model");
  flags->String("data", "FILE", "model weights (.data)", &o->data);
  flags->Alias("model-data-file", "data");
  flags->Repeated("input", "NAME=FILE",
                  "feed input NAME from a .npy file (shape and layout as the "
                  "model declares); other inputs get random values",
                  &o->inputs);
  flags->String("input-range", "LO,HI",
                "range of random input values (default -1,1; int32 inputs "
                "get integers in it)",
                &o->input_range);
  flags->String("output-dir", "DIR",
                "write each output as DIR/<name>.npy ('/' and ':' in names "
                "become '_')",
                &o->output_dir);
  flags->Int("round", "N", "timed runs after the first run (default 1)",
             &o->rounds);
  flags->Alias("rounds", "round");
  flags->Int("num-threads", "T",
             "CPU threads (default -1: every core the policy allows)",
             &o->threads);
  flags->String("cpu-affinity-policy", "P",
                "none|big_only|little_only|high_performance|power_save or "
                "0-4 (default none)",
                &o->affinity);
  flags->Repeated("validate-outputs", "NAME=FILE",
                  "compare output NAME with a reference .npy", &o->validate);
  flags->Double("validate-threshold", "X",
                "pass iff cosine similarity > X (default 0.999)",
                &o->threshold);
  flags->Int("seed", "S", "seed of the random inputs (default 0)", &o->seed);
  flags->Switch("benchmark", "after the timed rounds, run --round more with "
                "per-op statistics and print MACE's model benchmark report "
                "(op times, MACs, GMACPS by op, op type and model)",
                &o->benchmark);
  flags->String("weight-cache-dir", "DIR",
                "keep the weights packed at load in DIR/<data file "
                "name>.packed: the first run writes it, later runs map it "
                "instead of packing (an existing directory)",
                &o->weight_cache_dir);
}

MaceStatus ParseRange(const std::string &text, double *lo, double *hi) {
  const size_t comma = text.find(',');
  char *end = nullptr;
  bool ok = comma != std::string::npos;
  if (ok) {
    const std::string a = text.substr(0, comma), b = text.substr(comma + 1);
    *lo = std::strtod(a.c_str(), &end);
    ok = !a.empty() && *end == '\0';
    *hi = std::strtod(b.c_str(), &end);
    ok = ok && !b.empty() && *end == '\0' && std::isfinite(*lo) &&
         std::isfinite(*hi);
  }
  if (!ok) {
    return InvalidArgs("--input-range expects LO,HI (e.g. -1,1), got '", text,
                       "'");
  }
  if (*lo > *hi) {
    return InvalidArgs("--input-range: low ", *lo, " is above high ", *hi);
  }
  return MaceStatus::MACE_SUCCESS;
}

// Parses NAME=FILE pairs; names must be among `known`.
MaceStatus ParseAssignments(const std::vector<std::string> &entries,
                            const std::string &flag, const std::string &kind,
                            const std::vector<std::string> &known,
                            std::map<std::string, std::string> *pairs,
                            std::vector<std::string> *order) {
  for (const std::string &entry : entries) {
    std::string name, path;
    if (!SplitAssignment(entry, &name, &path)) {
      return InvalidArgs(flag, " expects NAME=FILE, got '", entry, "'");
    }
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return InvalidArgs(UnknownNameMessage(
          flag + ": '" + name + "' is not an " + kind + " of the model", name,
          known));
    }
    if (!pairs->emplace(name, path).second) {
      return InvalidArgs(flag, ": ", kind, " '", name, "' given twice");
    }
    if (order != nullptr) order->push_back(name);
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace

MaceStatus PrepareRun(const RunOptions &o, RunPlan *plan) {
  if (o.model.empty()) return InvalidArgs("--model is required");
  if (o.rounds < 1) return InvalidArgs("--round must be at least 1");
  MACE_RETURN_IF_ERROR(
      ParseRange(o.input_range, &plan->range_lo, &plan->range_hi));
  MACE_RETURN_IF_ERROR(ParseAffinityPolicy(o.affinity, &plan->policy));
  std::error_code error;
  if (!o.weight_cache_dir.empty() &&
      !std::filesystem::is_directory(o.weight_cache_dir, error)) {
    return InvalidArgs("--weight-cache-dir: '", o.weight_cache_dir,
                       "' is not an existing directory");
  }
  MACE_RETURN_IF_ERROR(LoadModelGraph(o.model, &plan->net, nullptr));
  if (o.data.empty() && plan->net.tensors_size() > 0) {
    return InvalidArgs("--data is required: model '", o.model, "' has ",
                       plan->net.tensors_size(), " weight tensors");
  }
  if (plan->net.output_info_size() == 0) {
    return InvalidArgs("model file '", o.model, "' declares no outputs");
  }
  MACE_RETURN_IF_ERROR(ParseAssignments(o.inputs, "--input", "input",
                                        InputNames(plan->net),
                                        &plan->input_files, nullptr));
  std::map<std::string, std::string> reference_files;
  MACE_RETURN_IF_ERROR(ParseAssignments(
      o.validate, "--validate-outputs", "output", OutputNames(plan->net),
      &reference_files, &plan->reference_order));
  for (const auto &entry : reference_files) {
    MACE_RETURN_IF_ERROR(ReadNpy(entry.second, &plan->references[entry.first]));
  }
  return MaceStatus::MACE_SUCCESS;
}

namespace {

// Largest input mace run allocates, in elements.
constexpr int64_t kMaxInputElements = int64_t{1} << 31;

template <typename T>
std::shared_ptr<void> NewBuffer(int64_t count, T **data) {
  T *raw =
      new (std::nothrow) T[static_cast<size_t>(std::max<int64_t>(count, 1))];
  *data = raw;
  if (raw == nullptr) return nullptr;
  return std::shared_ptr<void>(raw, std::default_delete<T[]>());
}

// The bytes of one input from a .npy file, converted to the model's type.
MaceStatus InputFromNpy(const InputOutputInfo &info, const std::string &path,
                        const std::vector<int64_t> &shape, bool is_int,
                        std::shared_ptr<void> *buffer) {
  NpyArray array;
  MACE_RETURN_IF_ERROR(ReadNpy(path, &array));
  if (array.shape != shape) {
    return InvalidArgs("input '", info.name(), "': '", path, "' has shape ",
                       NpyShapeString(array.shape), ", the model expects ",
                       NpyShapeString(shape), " (",
                       DataFormatName(info.data_format()), ")");
  }
  const int64_t count = array.size();
  const bool npy_int = array.type == NpyArray::Type::kInt32;
  if (is_int) {
    int32_t *data = nullptr;
    *buffer = NewBuffer(count, &data);
    if (data == nullptr) return MaceStatus::MACE_SUCCESS;
    for (int64_t i = 0; i < count; ++i) {
      if (npy_int) {
        data[i] = array.ints[i];
        continue;
      }
      const float v = array.floats[i];
      if (!(std::nearbyint(v) == v && std::fabs(v) < 2147483648.0f)) {
        return InvalidArgs("input '", info.name(), "' is int32 but '", path,
                           "' (", array.source_dtype, ") holds ", v,
                           " at element ", i);
      }
      data[i] = static_cast<int32_t>(v);
    }
    return MaceStatus::MACE_SUCCESS;
  }
  float *data = nullptr;
  *buffer = NewBuffer(count, &data);
  if (data == nullptr) return MaceStatus::MACE_SUCCESS;
  for (int64_t i = 0; i < count; ++i) {
    data[i] = npy_int ? static_cast<float>(array.ints[i]) : array.floats[i];
  }
  return MaceStatus::MACE_SUCCESS;
}

// Uniform values in [lo, hi) from the generator's raw output, so a seed
// gives the same inputs with every standard library.
std::shared_ptr<void> RandomInput(int64_t count, bool is_int, double lo,
                                  double hi, std::mt19937 *gen,
                                  MaceStatus *status) {
  if (is_int) {
    const int64_t low = static_cast<int64_t>(std::ceil(lo));
    const int64_t high = static_cast<int64_t>(std::floor(hi));
    if (low > high) {
      *status = InvalidArgs("--input-range ", lo, ",", hi,
                            " holds no integer for an int32 input");
      return nullptr;
    }
    const uint64_t span = static_cast<uint64_t>(high - low) + 1;
    int32_t *data = nullptr;
    auto buffer = NewBuffer(count, &data);
    if (data == nullptr) return nullptr;
    for (int64_t i = 0; i < count; ++i) {
      const uint64_t high_bits = (*gen)();
      const uint64_t bits = (high_bits << 32) | (*gen)();
      data[i] = static_cast<int32_t>(low + static_cast<int64_t>(bits % span));
    }
    return buffer;
  }
  float *data = nullptr;
  auto buffer = NewBuffer(count, &data);
  if (data == nullptr) return nullptr;
  for (int64_t i = 0; i < count; ++i) {
    const double unit = static_cast<double>((*gen)() >> 8) / 16777216.0;
    data[i] = static_cast<float>(lo + (hi - lo) * unit);
  }
  return buffer;
}

}  // namespace

MaceStatus BuildInputs(const RunPlan &plan, int seed,
                       std::map<std::string, MaceTensor> *inputs) {
  std::mt19937 gen(static_cast<uint32_t>(seed));
  for (const InputOutputInfo &info : plan.net.input_info()) {
    const std::vector<int64_t> shape(info.dims().begin(), info.dims().end());
    int64_t count = 1;
    for (int64_t d : shape) {
      if (d < 0 || (d > 0 && count > kMaxInputElements / d)) {
        return InvalidArgs("input '", info.name(), "' has shape ",
                           DimsString(shape), ", which mace run cannot fill");
      }
      count *= d;
    }
    if (info.data_type() != DT_FLOAT && info.data_type() != DT_INT32) {
      return Unsupported("input '", info.name(), "' has type ",
                         ElementTypeName(info.data_type()),
                         "; mace run feeds float32 and int32 inputs");
    }
    const bool is_int = info.data_type() == DT_INT32;
    std::shared_ptr<void> buffer;
    auto file = plan.input_files.find(info.name());
    if (file != plan.input_files.end()) {
      MACE_RETURN_IF_ERROR(
          InputFromNpy(info, file->second, shape, is_int, &buffer));
    } else {
      MaceStatus status;
      auto range = plan.input_ranges.find(info.name());
      const auto [lo, hi] = range != plan.input_ranges.end()
                                ? range->second
                                : std::make_pair(plan.range_lo, plan.range_hi);
      buffer = RandomInput(count, is_int, lo, hi, &gen, &status);
      MACE_RETURN_IF_ERROR(status);
    }
    if (buffer == nullptr) {
      return OutOfResources("input '", info.name(), "': cannot allocate ",
                            count, " elements");
    }
    const DataFormat format = static_cast<DataFormat>(info.data_format());
    inputs->emplace(info.name(), MaceTensor(shape, buffer, format,
                                            is_int ? IDT_INT32 : IDT_FLOAT));
  }
  return MaceStatus::MACE_SUCCESS;
}

namespace {

MaceStatus CreateEngine(const RunOptions &o, const RunPlan &plan,
                        std::shared_ptr<MaceEngine> *engine, double *init_ms) {
  MaceEngineConfig config(DeviceType::CPU);
  MACE_RETURN_IF_ERROR(config.SetCPUThreadPolicy(o.threads, plan.policy));
  if (!o.weight_cache_dir.empty() && !o.data.empty()) {
    const std::filesystem::path name =
        std::filesystem::path(o.data).filename().string() + ".packed";
    config.SetPackedWeightCache(
        (std::filesystem::path(o.weight_cache_dir) / name).string());
  }
  const auto start = std::chrono::steady_clock::now();
  MaceStatus status;
  if (o.data.empty()) {
    // A model without weights: the graph alone.
    std::string graph;
    status = ReadFileToString(o.model, &graph);
    if (status == MaceStatus::MACE_SUCCESS) {
      status = CreateMaceEngineFromProto(
          reinterpret_cast<const unsigned char *>(graph.data()), graph.size(),
          nullptr, 0, InputNames(plan.net), OutputNames(plan.net), config,
          engine);
    }
  } else {
    status = CreateMaceEngineFromProto(o.model, o.data, InputNames(plan.net),
                                       OutputNames(plan.net), config, engine);
  }
  *init_ms = MillisSince(start);
  return status;
}

MaceStatus TimeRuns(MaceEngine *engine, int rounds,
                    const std::map<std::string, MaceTensor> &inputs,
                    std::map<std::string, MaceTensor> *outputs,
                    Timings *timings) {
  auto start = std::chrono::steady_clock::now();
  MACE_RETURN_IF_ERROR(WithContext(engine->Run(inputs, outputs), "run"));
  timings->first_ms = MillisSince(start);
  for (int r = 0; r < rounds; ++r) {
    start = std::chrono::steady_clock::now();
    MACE_RETURN_IF_ERROR(WithContext(engine->Run(inputs, outputs),
                                     StrCat("run (round ", r + 1, ")")));
    timings->rounds_ms.push_back(MillisSince(start));
  }
  return MaceStatus::MACE_SUCCESS;
}

// --benchmark: `rounds` more runs with per-op statistics after the timed
// ones, which stand for MACE's warm-up and runs without statistics.
MaceStatus ProfileRuns(MaceEngine *engine, int rounds,
                       const std::map<std::string, MaceTensor> &inputs,
                       std::map<std::string, MaceTensor> *outputs,
                       const Timings &timings, BenchmarkRecord *record) {
  record->warmup_ms = {timings.first_ms};
  record->plain_ms = timings.rounds_ms;
  record->profiled_ops.resize(rounds);
  for (int r = 0; r < rounds; ++r) {
    const auto start = std::chrono::steady_clock::now();
    MACE_RETURN_IF_ERROR(
        WithContext(engine->Run(inputs, outputs, &record->profiled_ops[r]),
                    StrCat("profiled run (round ", r + 1, ")")));
    record->profiled_ms.push_back(MillisSince(start));
  }
  return MaceStatus::MACE_SUCCESS;
}

void PrintLatency(const Timings &t, int threads) {
  std::vector<double> sorted = t.rounds_ms;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median =
      n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  double sum = 0.0;
  for (double v : sorted) sum += v;
  const double avg = sum / static_cast<double>(n);
  auto ms = [](double v) { return FormatFixed(v, 3); };
  std::cout << "init        " << ms(t.init_ms) << " ms (engine creation, "
            << "model load included)\n"
            << "first run   " << ms(t.first_ms) << " ms\n"
            << "rounds      " << n << ": min " << ms(sorted.front())
            << " ms, median " << ms(median) << " ms, avg " << ms(avg)
            << " ms, max " << ms(sorted.back()) << " ms\n";
  std::cout << "latency_ms init=" << ms(t.init_ms)
            << " first=" << ms(t.first_ms) << " min=" << ms(sorted.front())
            << " median=" << ms(median) << " avg=" << ms(avg)
            << " max=" << ms(sorted.back()) << " rounds=" << n
            << " threads=" << threads << std::endl;
}

int64_t ElementCount(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  return count;
}

}  // namespace

NpyArray ToNpy(const MaceTensor &tensor) {
  NpyArray array;
  array.shape = tensor.shape();
  const int64_t count = ElementCount(array.shape);
  if (tensor.data_type() == IDT_INT32) {
    array.type = NpyArray::Type::kInt32;
    const int32_t *data = static_cast<const int32_t *>(tensor.raw_data().get());
    array.ints.assign(data, data + count);
  } else {
    const float *data = static_cast<const float *>(tensor.raw_data().get());
    array.floats.assign(data, data + count);
  }
  return array;
}

namespace {

std::vector<double> ToDoubles(const NpyArray &array) {
  return array.type == NpyArray::Type::kInt32
             ? std::vector<double>(array.ints.begin(), array.ints.end())
             : std::vector<double>(array.floats.begin(), array.floats.end());
}

// One line per output: shape, range, mean, argmax and the first values,
// so a run shows what the model computed without opening the .npy files.
void PrintOutputSummary(const NetDef &net,
                        const std::map<std::string, MaceTensor> &outputs) {
  for (const std::string &name : OutputNames(net)) {
    const std::vector<double> values = ToDoubles(ToNpy(outputs.at(name)));
    std::cout << "output      " << name << " "
              << DimsString(outputs.at(name).shape());
    if (values.empty()) {
      std::cout << " (empty)\n";
      continue;
    }
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    double sum = 0;
    for (double v : values) sum += v;
    std::cout << " min " << FormatFixed(*low, 6) << " max "
              << FormatFixed(*high, 6) << " mean "
              << FormatFixed(sum / values.size(), 6) << " argmax "
              << (high - values.begin()) << " first [";
    for (size_t i = 0; i < std::min<size_t>(values.size(), 5); ++i) {
      std::cout << (i ? ", " : "") << FormatFixed(values[i], 6);
    }
    std::cout << (values.size() > 5 ? ", ...]" : "]") << "\n";
  }
}

MaceStatus WriteOutputs(const std::string &dir, const NetDef &net,
                        const std::map<std::string, MaceTensor> &outputs) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return InvalidArgs("cannot create output directory '", dir,
                       "': ", error.message());
  }
  for (const std::string &name : OutputNames(net)) {
    const MaceTensor &tensor = outputs.at(name);
    const std::string path =
        (std::filesystem::path(dir) / (SanitizeFileName(name) + ".npy"))
            .string();
    MACE_RETURN_IF_ERROR(WriteNpy(path, ToNpy(tensor)));
    std::cout << "wrote       " << path << "\n";
  }
  return MaceStatus::MACE_SUCCESS;
}

// The inputs fed, as <dir>/<name>.npy, for a reference run on the same
// values; `files` maps each input to its file.
MaceStatus DumpInputs(const std::string &dir,
                      const std::map<std::string, MaceTensor> &inputs,
                      std::map<std::string, std::string> *files) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return InvalidArgs("cannot create '", dir, "': ", error.message());
  }
  for (const auto &[name, tensor] : inputs) {
    const std::string path =
        (std::filesystem::path(dir) / (SanitizeFileName(name) + ".npy"))
            .string();
    MACE_RETURN_IF_ERROR(WriteNpy(path, ToNpy(tensor)));
    (*files)[name] = path;
  }
  return MaceStatus::MACE_SUCCESS;
}

int OutputFormat(const NetDef &net, const std::string &name) {
  for (const InputOutputInfo &info : net.output_info()) {
    if (info.name() == name) return info.data_format();
  }
  return 0;
}

}  // namespace

int Validate(const RunPlan &plan, double threshold,
             const std::map<std::string, MaceTensor> &outputs,
             MaceStatus *status) {
  Table table({"output", "shape", "cosine", "sqnr", "sqnr_db", "pixel_acc",
               "result"},
              {true, true, false, false, false, false, true});
  std::vector<std::string> failed;
  for (const std::string &name : plan.reference_order) {
    const NpyArray &reference = plan.references.at(name);
    const NpyArray actual = ToNpy(outputs.at(name));
    if (reference.size() != actual.size()) {
      *status = InvalidArgs("--validate-outputs: reference for '", name,
                            "' has shape ", NpyShapeString(reference.shape),
                            " (", reference.size(), " values), the output is ",
                            NpyShapeString(actual.shape), " (", actual.size(),
                            " values)");
      return kExitBadInput;
    }
    const Similarity s =
        CompareOutputs(ToDoubles(reference), ToDoubles(actual), actual.shape,
                       OutputFormat(plan.net, name) == 2);
    const bool pass = PassesThreshold(s, threshold);
    if (!pass) failed.push_back(name);
    table.AddRow({name, DimsString(actual.shape), FormatFixed(s.cosine, 6),
                  FormatFixed(s.sqnr, 3), FormatFixed(s.sqnr_db, 2),
                  FormatFixed(s.pixel_accuracy, 4), pass ? "PASS" : "FAIL"});
  }
  std::cout << "validation (pass iff cosine > " << threshold << ")\n";
  table.PrintPlain(std::cout);
  std::cout.flush();
  if (failed.empty()) return kExitOk;
  std::string names;
  for (const std::string &name : failed)
    names += (names.empty() ? "" : ", ") + name;
  std::cerr << "mace run: validation failed: cosine <= " << threshold << " for "
            << names << std::endl;
  return kExitCheckFailed;
}

int RunCommand(int argc, char **argv, int first) {
  RunOptions options;
  ConfigRunOptions config;
  FlagSet flags(
      "mace run --model M.pb --data M.data [--input NAME=FILE ...] "
      "[options]\n       mace run --config deploy.yml [--model-name M] "
      "[--validate] [options]",
      "Runs a converted model on the CPU: inputs from .npy files or random\n"
      "values, latency of init, the first run and --round timed runs, outputs\n"
      "as .npy, and validation against reference outputs. With --config, runs\n"
      "each model of a deployment file as `mace convert --config` wrote it.\n"
      "Exit status: 0 ok, 1 validation failed, 2 bad input.");
  DeclareFlags(&flags, &options);
  flags.String("config", "deploy.yml", "run the models of a MACE deployment "
               "file from <build-dir>/<library_name>/model/", &config.config_file);
  flags.String("model-name", "M", "with --config: only this model",
               &config.model_name);
  flags.String("build-dir", "DIR", "with --config: where `mace convert "
               "--config` wrote build/ (default: build)", &config.build_dir);
  flags.String("input-dir", "DIR", "with --config: feed input NAME from "
               "DIR/NAME.npy when it exists", &config.input_dir);
  flags.String("device-yml", "devices.yml", "with --config: build for each "
               "board's target_abis, copy the runner and models over ssh "
               "(scp), run there, bring the outputs back (ssh options from "
               "$MACE_SSH_OPTIONS)", &config.device_yml);
  flags.Switch("layers", "with --config: find, by bisection, the first "
               "tensor of the model whose value drifts from the source "
               "framework's", &config.layers);
  flags.Switch("validate", "with --config: compare the outputs with the "
               "source framework's on the same inputs (or the file's "
               "validation_outputs_data)", &config.validate);
  bool help = false;
  MaceStatus status = flags.Parse(argc, argv, first, &help);
  if (status != MaceStatus::MACE_SUCCESS) {
    return ReportError(kCommand, status.information());
  }
  if (help) {
    std::cout << flags.Help();
    return kExitOk;
  }
  if (!config.config_file.empty()) {
    for (const char *flag : {"model", "data", "input", "validate-outputs"}) {
      if (flags.WasSet(flag)) {
        return ReportError(kCommand, std::string("--") + flag +
                                         " cannot be combined with --config "
                                         "(the deployment file says it)");
      }
    }
    return RunFromConfig(options, config);
  }
  for (const char *flag : {"model-name", "build-dir", "input-dir",
                           "validate", "layers", "device-yml"}) {
    if (flags.WasSet(flag)) {
      return ReportError(kCommand, std::string("--") + flag +
                                       " needs --config");
    }
  }
  RunPlan plan;
  status = PrepareRun(options, &plan);
  if (status != MaceStatus::MACE_SUCCESS) {
    return ReportError(kCommand, status.information());
  }
  return RunModel(options, &plan);
}

int RunModel(const RunOptions &options, RunPlan *plan) {
  MaceStatus status;
  // The engine first: it checks the model (shapes included) before any
  // input is built for it.
  std::shared_ptr<MaceEngine> engine;
  Timings timings;
  std::map<std::string, MaceTensor> inputs, outputs;
  status = CreateEngine(options, *plan, &engine, &timings.init_ms);
  if (status == MaceStatus::MACE_SUCCESS) {
    status = BuildInputs(*plan, options.seed, &inputs);
  }
  std::map<std::string, std::string> dumped_inputs;
  if (status == MaceStatus::MACE_SUCCESS && !plan->inputs_dump_dir.empty()) {
    status = DumpInputs(plan->inputs_dump_dir, inputs, &dumped_inputs);
  }
  if (status == MaceStatus::MACE_SUCCESS) {
    status = TimeRuns(engine.get(), options.rounds, inputs, &outputs, &timings);
  }
  if (status != MaceStatus::MACE_SUCCESS) {
    return ReportError(kCommand, status.information());
  }
  const int threads = ThreadPool(options.threads, plan->policy).num_threads();
  std::cout << "model       " << options.model << " (" << plan->net.op_size()
            << " ops), threads " << threads << ", affinity "
            << AffinityPolicyName(plan->policy) << "\n";
  PrintLatency(timings, threads);
  if (options.benchmark) {
    BenchmarkRecord record;
    std::cerr << "benchmark: " << options.rounds
              << " rounds with per-op statistics..." << std::endl;
    status = ProfileRuns(engine.get(), options.rounds, inputs, &outputs,
                         timings, &record);
    if (status != MaceStatus::MACE_SUCCESS) {
      return ReportError(kCommand, status.information());
    }
    PrintBenchmarkReport(plan->net, record, std::cout);
  }
  PrintOutputSummary(plan->net, outputs);
  if (!options.output_dir.empty()) {
    status = WriteOutputs(options.output_dir, plan->net, outputs);
    if (status != MaceStatus::MACE_SUCCESS) {
      return ReportError(kCommand, status.information());
    }
  }
  if (plan->make_references) {
    status = plan->make_references(dumped_inputs, plan);
    if (status != MaceStatus::MACE_SUCCESS) {
      return ReportError(kCommand, status.information());
    }
  }
  if (plan->references.empty()) return kExitOk;
  const int result = Validate(*plan, options.threshold, outputs, &status);
  if (status != MaceStatus::MACE_SUCCESS) {
    return ReportError(kCommand, status.information());
  }
  return result;
}

}  // namespace tools
}  // namespace mace
