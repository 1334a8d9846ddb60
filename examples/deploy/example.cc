// The deployment example of MACE's docs, runnable: create an engine from
// model files or from a model compiled into the app, feed raw float32
// inputs, run, write raw float32 outputs. Build it against the tree
// `mace convert --config` writes:
//
//   c++ -std=c++17 example.cc -I build/<lib>/include build/<lib>/lib/libmace.a \
//       -lprotobuf-lite -pthread                                 # model files
//   c++ -std=c++17 -DMACE_EXAMPLE_FROM_CODE example.cc -I build/<lib>/include \
//       build/<lib>/model/<lib>.a build/<lib>/lib/libmace.a \
//       -lprotobuf-lite -pthread                                 # model code
//
//   example --model_name M [--model_file M.pb] [--model_data_file M.data]
//           --input_node in1,in2 --input_shape 1,224,224,3:1,10
//           --output_node out --output_shape 1,1001
//           [--input_file PREFIX] --output_file PREFIX [--round N]
//           [--omp_num_threads T]
// Input i is read from PREFIX_<name> (raw float32), output i written to
// PREFIX_<name>, '/' and ':' in names becoming '_'; without --input_file
// the inputs are 0.5 everywhere.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "mace/public/mace.h"
#ifdef MACE_EXAMPLE_FROM_CODE
#include "mace/public/mace_engine_factory.h"
#endif

namespace {

struct Flags {
  std::string model_name, model_file, model_data_file;
  std::string input_node, input_shape, output_node, output_shape;
  std::string input_file, output_file;
  int round = 1;
  int threads = -1;
};

bool ParseFlags(int argc, char **argv, Flags *flags) {
  const std::map<std::string, std::string *> strings = {
      {"--model_name", &flags->model_name},
      {"--model_file", &flags->model_file},
      {"--model_data_file", &flags->model_data_file},
      {"--input_node", &flags->input_node},
      {"--input_shape", &flags->input_shape},
      {"--output_node", &flags->output_node},
      {"--output_shape", &flags->output_shape},
      {"--input_file", &flags->input_file},
      {"--output_file", &flags->output_file}};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i], value = argv[i + 1];
    auto found = strings.find(name);
    if (found != strings.end()) {
      *found->second = value;
    } else if (name == "--round") {
      flags->round = std::stoi(value);
    } else if (name == "--omp_num_threads") {
      flags->threads = std::stoi(value);
    } else {
      std::cerr << "example: unknown flag " << name << "\n";
      return false;
    }
  }
  if (argc % 2 == 0) {
    std::cerr << "example: flag " << argv[argc - 1] << " has no value\n";
    return false;
  }
  return !flags->input_node.empty() && !flags->output_node.empty() &&
         !flags->output_file.empty();
}

std::vector<std::string> Split(const std::string &text, char separator) {
  std::vector<std::string> pieces;
  std::stringstream stream(text);
  std::string piece;
  while (std::getline(stream, piece, separator)) pieces.push_back(piece);
  return pieces;
}

std::vector<std::vector<int64_t>> ParseShapes(const std::string &text) {
  std::vector<std::vector<int64_t>> shapes;
  for (const std::string &shape : Split(text, ':')) {
    std::vector<int64_t> dims;
    for (const std::string &dim : Split(shape, ',')) dims.push_back(std::stoll(dim));
    shapes.push_back(dims);
  }
  return shapes;
}

std::string FileFor(const std::string &prefix, std::string name) {
  for (char &c : name) {
    if (c == '/' || c == ':') c = '_';
  }
  return prefix + "_" + name;
}

bool ReadFile(const std::string &path, std::vector<unsigned char> *bytes) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return false;
  bytes->assign(std::istreambuf_iterator<char>(file),
                std::istreambuf_iterator<char>());
  return true;
}

int64_t Count(const std::vector<int64_t> &shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

}  // namespace

int main(int argc, char **argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) {
    std::cerr << "usage: example --model_name M [--model_file M.pb] "
                 "[--model_data_file M.data] --input_node A,B --input_shape "
                 "S1:S2 --output_node C --output_shape S3 [--input_file P] "
                 "--output_file P [--round N] [--omp_num_threads T]\n";
    return 2;
  }
  const std::vector<std::string> input_names = Split(flags.input_node, ',');
  const std::vector<std::string> output_names = Split(flags.output_node, ',');
  const auto input_shapes = ParseShapes(flags.input_shape);
  const auto output_shapes = ParseShapes(flags.output_shape);
  if (input_shapes.size() != input_names.size() ||
      output_shapes.size() != output_names.size()) {
    std::cerr << "example: one shape per input and per output\n";
    return 2;
  }

  // 1. Configuration.
  mace::MaceEngineConfig config(mace::DeviceType::CPU);
  config.SetCPUThreadPolicy(flags.threads, mace::CPUAffinityPolicy::AFFINITY_NONE);

  // 2.-3. The engine, from compiled code or from the model files.
  std::shared_ptr<mace::MaceEngine> engine;
  mace::MaceStatus status;
  std::vector<unsigned char> weights;  // outlives the engine
  if (!flags.model_data_file.empty() &&
      !ReadFile(flags.model_data_file, &weights)) {
    std::cerr << "example: cannot read " << flags.model_data_file << "\n";
    return 2;
  }
#ifdef MACE_EXAMPLE_FROM_CODE
  status = mace::CreateMaceEngineFromCode(
      flags.model_name, weights.empty() ? nullptr : weights.data(),
      weights.size(), input_names, output_names, config, &engine);
#else
  std::vector<unsigned char> graph;
  if (!ReadFile(flags.model_file, &graph)) {
    std::cerr << "example: cannot read " << flags.model_file << "\n";
    return 2;
  }
  status = mace::CreateMaceEngineFromProto(
      graph.data(), graph.size(), weights.data(), weights.size(), input_names,
      output_names, config, &engine);
#endif
  if (status != mace::MaceStatus::MACE_SUCCESS) {
    std::cerr << "example: cannot create the engine: " << status.information()
              << "\n";
    return 1;
  }

  // 4. Input and output buffers.
  std::map<std::string, mace::MaceTensor> inputs, outputs;
  for (size_t i = 0; i < input_names.size(); ++i) {
    const int64_t count = Count(input_shapes[i]);
    auto buffer = std::shared_ptr<float>(new float[count],
                                         std::default_delete<float[]>());
    std::fill(buffer.get(), buffer.get() + count, 0.5f);
    if (!flags.input_file.empty()) {
      std::ifstream file(FileFor(flags.input_file, input_names[i]),
                         std::ios::binary);
      file.read(reinterpret_cast<char *>(buffer.get()), count * sizeof(float));
      if (!file) {
        std::cerr << "example: cannot read " << count << " floats from "
                  << FileFor(flags.input_file, input_names[i]) << "\n";
        return 2;
      }
    }
    inputs[input_names[i]] = mace::MaceTensor(input_shapes[i], buffer);
  }
  for (size_t i = 0; i < output_names.size(); ++i) {
    const int64_t count = Count(output_shapes[i]);
    auto buffer = std::shared_ptr<float>(new float[count],
                                         std::default_delete<float[]>());
    outputs[output_names[i]] = mace::MaceTensor(output_shapes[i], buffer);
  }

  // 5. Run.
  double total_ms = 0.0, min_ms = 0.0;
  for (int r = 0; r < flags.round; ++r) {
    const auto start = std::chrono::steady_clock::now();
    status = engine->Run(inputs, &outputs);
    if (status != mace::MaceStatus::MACE_SUCCESS) {
      std::cerr << "example: run failed: " << status.information() << "\n";
      return 1;
    }
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    total_ms += ms;
    min_ms = r == 0 ? ms : std::min(min_ms, ms);
  }
  if (flags.round > 0) {
    std::printf("latency_ms avg=%.3f min=%.3f rounds=%d\n",
                total_ms / flags.round, min_ms, flags.round);
  }
  for (size_t i = 0; i < output_names.size(); ++i) {
    const std::string path = FileFor(flags.output_file, output_names[i]);
    std::ofstream file(path, std::ios::binary);
    file.write(reinterpret_cast<const char *>(
                   outputs[output_names[i]].data().get()),
               Count(output_shapes[i]) * sizeof(float));
    if (!file) {
      std::cerr << "example: cannot write " << path << "\n";
      return 2;
    }
    std::cout << "wrote " << path << "\n";
  }
  return 0;
}
