// `mace run --config deploy.yml --device-yml devices.yml`: MACE's run on
// ARM Linux boards. For each board: build the deployment example
// (examples/deploy/example.cc) against libmace for the board's ABI with
// Debian's cross compiler, copy it with each model and its inputs over scp,
// run it there over ssh, copy the outputs back and report and validate them
// as a local run does. A board whose CPU is not the ABI's (an x86-64 host
// standing in for an arm64 board) runs the program under its qemu-user.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "mace/core/status.h"
#include "mace/tools/command.h"
#include "mace/tools/run_model.h"
#include "mace/tools/subprocess.h"
#include "mace/tools/temp_dir.h"

namespace mace {
namespace tools {
namespace {

namespace fs = std::filesystem;

constexpr char kCommand[] = "run";

// One ABI the runner can be built for here.
struct AbiBuild {
  std::string compiler;    // C++ compiler driver
  std::string uname;       // `uname -m` of a board that runs it natively
  std::string emulator;    // qemu-user program for other boards
  std::string build_dir;   // libmace.a for the ABI; empty: this build's
};

MaceStatus AbiBuildFor(const std::string &abi, AbiBuild *build) {
  if (abi == "host") {
    *build = {"c++", "", "", ""};
    return MaceStatus::MACE_SUCCESS;
  }
  if (abi == "arm64-v8a" || abi == "arm64") {
    const char *dir = std::getenv("MACE_AARCH64_BUILD_DIR");
    *build = {"aarch64-linux-gnu-g++", "aarch64", "qemu-aarch64",
              dir != nullptr ? dir : MACE_SOURCE_DIR "/build-aarch64"};
    return MaceStatus::MACE_SUCCESS;
  }
  return Unsupported("target abi '", abi, "': no cross build for it here "
                     "(host and arm64-v8a are supported)");
}

// libmace.a for the ABI: this build's, or the cross build (configured as
// scripts/test_aarch64.sh does, so both share it).
MaceStatus LibraryFor(const AbiBuild &build, std::string *library) {
  if (build.build_dir.empty()) {
    *library = MACE_LIBRARY_DIR "/libmace.a";
    return fs::exists(*library)
               ? MaceStatus(MaceStatus::MACE_SUCCESS)
               : InvalidArgs("'", *library, "' is missing: build mace first");
  }
  std::cerr << "device: building libmace for " << build.uname << " in "
            << build.build_dir << "..." << std::endl;
  MACE_RETURN_IF_ERROR(RunSubprocess(
      {"cmake", "-S", MACE_SOURCE_DIR, "-B", build.build_dir, "-G", "Ninja",
       "-DCMAKE_BUILD_TYPE=Release",
       "-DCMAKE_TOOLCHAIN_FILE=" MACE_SOURCE_DIR "/cmake/aarch64-linux-gnu.cmake",
       "-DMACE_BUILD_TESTS=ON", "-DMACE_BUILD_TOOLS=OFF",
       "-DMACE_BUILD_BENCHMARKS=OFF"},
      "configuring the cross build", nullptr));
  MACE_RETURN_IF_ERROR(RunSubprocess(
      {"cmake", "--build", build.build_dir, "-j2", "--target", "mace_static"},
      "the cross build of libmace"));
  *library = build.build_dir + "/libmace.a";
  return MaceStatus::MACE_SUCCESS;
}

// The deployment example, statically linked for the board.
MaceStatus BuildRunner(const AbiBuild &build, const std::string &library,
                       const std::string &output) {
  std::vector<std::string> args = {
      build.compiler, "-std=c++17", "-O2",
      MACE_SOURCE_DIR "/examples/deploy/example.cc",
      "-I", MACE_SOURCE_DIR "/include", library, "-lprotobuf-lite",
      "-pthread", "-o", output};
  if (!build.build_dir.empty()) args.insert(args.begin() + 3, "-static");
  return RunSubprocess(args, "building the device runner");
}

// The remote shell reads the command line: quote every word.
std::string Quote(const std::string &word) {
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

class Board {
 public:
  explicit Board(const DeployDevice &device) : device_(device) {
    std::istringstream words(
        std::getenv("MACE_SSH_OPTIONS") != nullptr
            ? std::getenv("MACE_SSH_OPTIONS") : "");
    for (std::string word; words >> word;) options_.push_back(word);
  }

  MaceStatus Shell(const std::string &command, std::string *output) const {
    std::vector<std::string> args = {"ssh", "-p",
                                     std::to_string(device_.port)};
    args.insert(args.end(), options_.begin(), options_.end());
    args.insert(args.end(), {Target(), command});
    return RunSubprocess(args, "ssh to device '" + device_.name + "'",
                         output);
  }

  // scp's source and destination, `remote` marking the board's side.
  MaceStatus Copy(const std::vector<std::string> &sources,
                  const std::string &destination) const {
    std::vector<std::string> args = {"scp", "-q", "-P",
                                     std::to_string(device_.port)};
    args.insert(args.end(), options_.begin(), options_.end());
    args.insert(args.end(), sources.begin(), sources.end());
    args.push_back(destination);
    return RunSubprocess(args, "scp with device '" + device_.name + "'");
  }

  std::string Remote(const std::string &path) const {
    return Target() + ":" + path;
  }

 private:
  std::string Target() const { return device_.username + "@" + device_.address; }

  const DeployDevice &device_;
  std::vector<std::string> options_;
};

std::string Join(const std::vector<std::string> &items, const char *sep) {
  std::string text;
  for (const std::string &item : items) text += (text.empty() ? "" : sep) + item;
  return text;
}

std::string DimsArg(const InputOutputInfo &info) {
  std::vector<std::string> dims;
  for (int64_t d : info.dims()) dims.push_back(std::to_string(d));
  return Join(dims, ",");
}

MaceStatus WriteRaw(const std::string &path, const NpyArray &array) {
  std::ofstream file(path, std::ios::binary);
  file.write(reinterpret_cast<const char *>(array.floats.data()),
             static_cast<std::streamsize>(array.floats.size() * sizeof(float)));
  return file ? MaceStatus(MaceStatus::MACE_SUCCESS)
              : InvalidArgs("cannot write '", path, "'");
}

MaceStatus ReadRaw(const std::string &path, const InputOutputInfo &info,
                   MaceTensor *tensor) {
  const std::vector<int64_t> shape(info.dims().begin(), info.dims().end());
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  auto buffer = std::shared_ptr<float>(new float[std::max<int64_t>(count, 1)],
                                       std::default_delete<float[]>());
  std::ifstream file(path, std::ios::binary);
  file.read(reinterpret_cast<char *>(buffer.get()), count * sizeof(float));
  if (!file) {
    return InvalidArgs("output '", info.name(), "' from the device: '", path,
                       "' does not hold ", count, " floats");
  }
  *tensor = MaceTensor(shape, buffer,
                       static_cast<DataFormat>(info.data_format()));
  return MaceStatus::MACE_SUCCESS;
}

// One model on one board; returns the exit status.
int RunModelOnBoard(const RunOptions &base, const ConfigRunOptions &c,
                    const DeployConfig &config, const DeployModel &model,
                    const Board &board, const std::string &runner,
                    const std::string &emulator) {
  RunOptions options;
  MaceStatus status = ConfigModelOptions(base, config, c, model, &options);
  TempDir work("mace-device");
  RunPlan plan;
  std::map<std::string, MaceTensor> inputs, outputs;
  if (status == MaceStatus::MACE_SUCCESS) status = PrepareRun(options, &plan);
  if (status == MaceStatus::MACE_SUCCESS) {
    status = PlanConfigModel(model, c, work.path(), &plan);
  }
  if (status == MaceStatus::MACE_SUCCESS) {
    status = BuildInputs(plan, options.seed, &inputs);
  }
  std::vector<std::string> local_files = {runner, options.model, options.data};
  std::map<std::string, std::string> input_npys;
  std::vector<std::string> input_names, input_shapes;
  for (const InputOutputInfo &info : plan.net.input_info()) {
    if (status != MaceStatus::MACE_SUCCESS) break;
    if (info.data_type() != DT_FLOAT) {
      status = Unsupported("input '", info.name(), "': device runs feed "
                           "float32 inputs");
      break;
    }
    const NpyArray array = ToNpy(inputs.at(info.name()));
    const std::string raw = work.path() + "/in_" + SanitizeFileName(info.name());
    input_npys[info.name()] =
        work.path() + "/" + SanitizeFileName(info.name()) + ".npy";
    status = WriteRaw(raw, array);
    if (status == MaceStatus::MACE_SUCCESS) {
      status = WriteNpy(input_npys[info.name()], array);
    }
    local_files.push_back(raw);
    input_names.push_back(info.name());
    input_shapes.push_back(DimsArg(info));
  }
  std::vector<std::string> output_names, output_shapes;
  for (const InputOutputInfo &info : plan.net.output_info()) {
    output_names.push_back(info.name());
    output_shapes.push_back(DimsArg(info));
  }
  const std::string dir = "/tmp/mace-device-" + std::to_string(getpid()) +
                          "-" + SanitizeFileName(model.name);
  std::string log;
  if (status == MaceStatus::MACE_SUCCESS) {
    status = board.Shell("mkdir -p " + Quote(dir), nullptr);
  }
  if (status == MaceStatus::MACE_SUCCESS) {
    status = board.Copy(local_files, board.Remote(dir + "/"));
  }
  if (status == MaceStatus::MACE_SUCCESS) {
    std::string command = "cd " + Quote(dir) + " && " +
                          (emulator.empty() ? "" : emulator + " ") +
                          "./" + fs::path(runner).filename().string();
    for (const std::string &arg :
         {std::string("--model_name"), model.name, std::string("--model_file"),
          fs::path(options.model).filename().string(),
          std::string("--model_data_file"),
          fs::path(options.data).filename().string(),
          std::string("--input_node"), Join(input_names, ","),
          std::string("--input_shape"), Join(input_shapes, ":"),
          std::string("--output_node"), Join(output_names, ","),
          std::string("--output_shape"), Join(output_shapes, ":"),
          std::string("--input_file"), std::string("in"),
          std::string("--output_file"), std::string("out"),
          std::string("--round"), std::to_string(options.rounds),
          std::string("--omp_num_threads"), std::to_string(options.threads)}) {
      command += " " + Quote(arg);
    }
    status = board.Shell(command, &log);
  }
  for (const InputOutputInfo &info : plan.net.output_info()) {
    if (status != MaceStatus::MACE_SUCCESS) break;
    const std::string local =
        work.path() + "/out_" + SanitizeFileName(info.name());
    status = board.Copy({board.Remote(dir + "/out_" +
                                      SanitizeFileName(info.name()))},
                        local);
    if (status == MaceStatus::MACE_SUCCESS) {
      status = ReadRaw(local, info, &outputs[info.name()]);
    }
  }
  board.Shell("rm -rf " + Quote(dir), nullptr);
  if (status != MaceStatus::MACE_SUCCESS) {
    return ReportError(kCommand, "model '" + model.name + "': " +
                                     status.information());
  }
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("latency_ms", 0) == 0) std::cout << line << "\n";
  }
  if (plan.make_references) {
    status = plan.make_references(input_npys, &plan);
    if (status != MaceStatus::MACE_SUCCESS) {
      return ReportError(kCommand, status.information());
    }
  }
  if (plan.references.empty()) return kExitOk;
  const int result = Validate(plan, options.threshold, outputs, &status);
  if (status != MaceStatus::MACE_SUCCESS) {
    return ReportError(kCommand, status.information());
  }
  return result;
}

}  // namespace

int RunOnDevices(const RunOptions &options, const ConfigRunOptions &c,
                 const DeployConfig &config,
                 const std::vector<const DeployModel *> &models) {
  DeviceConfig devices;
  MaceStatus status = ParseDeviceConfig(c.device_yml, &devices);
  if (status != MaceStatus::MACE_SUCCESS) {
    return ReportError(kCommand, status.information());
  }
  int worst = kExitOk;
  TempDir work("mace-runner");
  for (const DeployDevice &device : devices.devices) {
    const std::string abi = device.target_abis.front();
    AbiBuild build;
    std::string library, arch;
    const std::string runner = work.path() + "/mace_example_" + abi;
    const Board board(device);
    status = AbiBuildFor(abi, &build);
    if (status == MaceStatus::MACE_SUCCESS) status = LibraryFor(build, &library);
    if (status == MaceStatus::MACE_SUCCESS) {
      status = BuildRunner(build, library, runner);
    }
    if (status == MaceStatus::MACE_SUCCESS) {
      status = board.Shell("uname -m", &arch);
    }
    if (status != MaceStatus::MACE_SUCCESS) {
      return ReportError(kCommand, "device '" + device.name + "': " +
                                       status.information());
    }
    while (!arch.empty() && std::isspace(static_cast<unsigned char>(arch.back()))) {
      arch.pop_back();
    }
    std::string emulator;
    if (!build.uname.empty() && arch != build.uname) {
      emulator = build.emulator;
      std::cout << "device '" << device.name << "' reports " << arch
                << ": running the " << abi << " build under " << emulator
                << " there\n";
    }
    for (const DeployModel *model : models) {
      std::cout << "==== model '" << model->name << "' on device '"
                << device.name << "' (" << abi << ", " << device.username
                << "@" << device.address << ":" << device.port << ")\n";
      worst = std::max(worst, RunModelOnBoard(options, c, config, *model,
                                              board, runner, emulator));
      if (worst == kExitBadInput) return worst;
    }
  }
  return worst;
}

}  // namespace tools
}  // namespace mace
