// The deployment file (MACE's YAML "deploy.yml"): parsed and checked into a
// struct. Every error names the file and line ("..., in deploy.yml:12").
// Paths in the file are relative to the file's folder.

#ifndef MACE_TOOLS_DEPLOY_CONFIG_H_
#define MACE_TOOLS_DEPLOY_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mace/public/mace.h"

namespace mace {
namespace tools {

struct DeploySubgraph {
  int line = 0;
  std::vector<std::string> input_tensors;
  std::vector<int> input_tensor_lines;
  std::vector<std::vector<int64_t>> input_shapes;  // empty: the model's own
  std::vector<std::string> input_data_types;       // float32 | int32
  std::vector<std::string> input_data_formats;     // NHWC | NCHW | NONE
  std::vector<std::pair<double, double>> input_ranges;
  std::vector<std::string> output_tensors;
  std::vector<int> output_tensor_lines;
  std::vector<std::vector<int64_t>> output_shapes;
  std::vector<int> output_shape_lines;
  std::vector<std::string> output_data_formats;
  std::vector<std::string> check_tensors;
  std::vector<std::vector<int64_t>> check_shapes;
  std::vector<std::string> validation_inputs_data;
  std::vector<std::string> validation_outputs_data;
};

struct DeployModel {
  std::string name;
  int line = 0;
  std::string platform;              // onnx (tensorflow, caffe: rejected)
  std::string model_file_path;       // resolved against the file's folder
  std::string model_sha256_checksum;
  std::string weight_file_path;
  std::string weight_sha256_checksum;
  std::string runtime = "cpu";
  std::string data_type = "fp32_fp32";
  int winograd = -1;  // absent: the runtime chooses; 0 never; 2, 4 the tile
  bool obfuscate = false;
  bool quantize = false;
  bool quantize_large_weights = false;
  std::string quantize_range_file;
  std::string quantize_schema = "uint8";
  bool change_concat_ranges = false;
  std::string cl_mem_type = "image";
  int limit_opencl_kernel_time = 0;
  int opencl_queue_window_size = 0;
  std::map<std::string, double> validation_threshold;
  std::string backend;
  std::string accuracy_validation_script;
  std::vector<std::string> graph_optimize_options;
  std::vector<DeploySubgraph> subgraphs;
  std::vector<std::string> warnings;  // e.g. the gpu half of cpu+gpu
};

struct DeployConfig {
  std::string path;  // as given, for messages
  std::string dir;   // the file's folder
  std::string library_name;
  std::vector<std::string> target_abis;
  std::vector<std::string> target_socs;
  std::string model_graph_format = "file";
  std::string model_data_format = "file";
  std::vector<DeployModel> models;  // in file order
};

// A board of the device file (`mace run --device-yml`), reached over ssh.
struct DeployDevice {
  std::string name;
  int line = 0;
  std::vector<std::string> target_abis;
  std::string target_socs;
  std::string models;
  std::string address;
  std::string username;
  int port = 22;
};

struct DeviceConfig {
  std::string path;
  std::vector<DeployDevice> devices;
};

// Reads and checks `path`: keys, types, values, model files and checksums.
MaceStatus ParseDeployConfig(const std::string &path, DeployConfig *config);

// The same for YAML text; `path` names it in messages and its folder
// anchors relative paths.
MaceStatus ParseDeployConfigText(const std::string &text,
                                 const std::string &path,
                                 DeployConfig *config);

// Reads and checks a device file.
MaceStatus ParseDeviceConfig(const std::string &path, DeviceConfig *config);

// "1,224,224,3" → {1, 224, 224, 3}; false on anything else.
bool ParseShapeString(const std::string &text, std::vector<int64_t> *shape);

// "<what>, in <path>:<line>".
std::string AtLine(const std::string &what, const std::string &path,
                   int line);

}  // namespace tools
}  // namespace mace

#endif  // MACE_TOOLS_DEPLOY_CONFIG_H_
