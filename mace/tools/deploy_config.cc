#include "mace/tools/deploy_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "mace/tools/command.h"
#include "mace/tools/sha256.h"

namespace mace {
namespace tools {
namespace {

// Thrown inside the parser, turned into a MaceStatus at its edge.
struct ConfigError : std::runtime_error {
  explicit ConfigError(const std::string &what) : std::runtime_error(what) {}
};

const std::vector<std::string> kTopKeys = {
    "library_name", "target_abis", "target_socs", "model_graph_format",
    "model_data_format", "models"};
const std::vector<std::string> kModelKeys = {
    "platform", "model_file_path", "model_sha256_checksum",
    "weight_file_path", "weight_sha256_checksum", "subgraphs", "runtime",
    "data_type", "winograd", "obfuscate", "quantize",
    "quantize_large_weights", "quantize_range_file", "quantize_schema",
    "change_concat_ranges", "cl_mem_type", "limit_opencl_kernel_time",
    "opencl_queue_window_size", "validation_threshold", "backend",
    "accuracy_validation_script", "graph_optimize_options"};
const std::vector<std::string> kSubgraphKeys = {
    "input_tensors", "input_shapes", "input_data_types",
    "input_data_formats", "input_ranges", "output_tensors", "output_shapes",
    "output_data_formats", "check_tensors", "check_shapes",
    "validation_inputs_data", "validation_outputs_data"};

bool Contains(const std::vector<std::string> &list, const std::string &x) {
  for (const std::string &item : list) {
    if (item == x) return true;
  }
  return false;
}

size_t EditDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "unknown key 'x' <where>; did you mean 'y'?" with the key nearest by edit
// distance, when it is near enough (at most 60% of the longer name changes);
// else the list of valid keys.
std::string UnknownKeyMessage(const std::string &key, const std::string &where,
                              const std::vector<std::string> &known) {
  const std::string what = "unknown key '" + key + "' " + where;
  std::string nearest;
  size_t best = std::string::npos;
  for (const std::string &candidate : known) {
    const size_t distance = EditDistance(key, candidate);
    if (distance < best) {
      best = distance;
      nearest = candidate;
    }
  }
  if (!nearest.empty() &&
      best * 10 <= 6 * std::max(key.size(), nearest.size())) {
    return what + "; did you mean '" + nearest + "'?";
  }
  std::string list;
  for (const std::string &candidate : known) {
    list += (list.empty() ? "" : ", ") + candidate;
  }
  return what + " (valid keys: " + list + ")";
}

std::string JoinOr(const std::vector<std::string> &values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += i + 1 == values.size() ? " or " : ", ";
    text += values[i];
  }
  return text;
}

class Parser {
 public:
  Parser(std::string path, std::string dir) : path_(path), dir_(dir) {}

  [[noreturn]] void Fail(const std::string &what, const YAML::Node &node) {
    throw ConfigError(AtLine(what, path_, Line(node)));
  }
  static int Line(const YAML::Node &node) {
    return node.Mark().is_null() ? 0 : node.Mark().line + 1;
  }

  // Rejects keys outside `known`, suggesting the nearest.
  void CheckKeys(const YAML::Node &map, const std::vector<std::string> &known,
                 const std::string &where) {
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it->first.IsScalar()) Fail("a key " + where + " is not a name",
                                      it->first);
      const std::string key = it->first.as<std::string>();
      if (!Contains(known, key)) {
        Fail(UnknownKeyMessage(key, where, known), it->first);
      }
    }
  }

  YAML::Node RequireMap(const YAML::Node &node, const std::string &what) {
    if (!node.IsMap()) Fail(what + " should be a map of keys", node);
    return node;
  }

  std::string Scalar(const YAML::Node &node, const std::string &key) {
    if (!node.IsScalar()) {
      Fail("'" + key + "' should be a single value, not " +
               (node.IsSequence() ? "a list" : node.IsMap() ? "a map"
                                                            : "empty"),
           node);
    }
    return node.as<std::string>();
  }

  std::string OneOf(const YAML::Node &node, const std::string &key,
                    const std::vector<std::string> &allowed) {
    const std::string value = Scalar(node, key);
    if (!Contains(allowed, value)) {
      Fail("'" + key + "' is '" + value + "'; it should be " +
               JoinOr(allowed),
           node);
    }
    return value;
  }

  int Int(const YAML::Node &node, const std::string &key) {
    const std::string value = Scalar(node, key);
    char *end = nullptr;
    const long parsed = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0') {
      Fail("'" + key + "' is '" + value + "'; it should be an integer", node);
    }
    return static_cast<int>(parsed);
  }

  bool Bool(const YAML::Node &node, const std::string &key) {
    const std::string value = Scalar(node, key);
    if (value == "0" || value == "false" || value == "False") return false;
    if (value == "1" || value == "true" || value == "True") return true;
    Fail("'" + key + "' is '" + value + "'; it should be 0 or 1", node);
  }

  // A list of scalars; a single scalar is a one-item list (as MACE reads
  // it). `lines` gets each item's line.
  std::vector<std::string> List(const YAML::Node &node, const std::string &key,
                                std::vector<int> *lines = nullptr) {
    std::vector<std::string> values;
    if (lines != nullptr) lines->clear();
    if (node.IsScalar()) {
      values.push_back(node.as<std::string>());
      if (lines != nullptr) lines->push_back(Line(node));
      return values;
    }
    if (!node.IsSequence()) {
      Fail("'" + key + "' should be a list" +
               (node.IsMap() ? ", not a map" : ""),
           node);
    }
    for (const YAML::Node &item : node) {
      if (!item.IsScalar()) {
        Fail("an item of '" + key + "' should be a single value, not " +
                 (item.IsSequence() ? "a list" : "a map"),
             item);
      }
      values.push_back(item.as<std::string>());
      if (lines != nullptr) lines->push_back(Line(item));
    }
    return values;
  }

  std::vector<std::vector<int64_t>> Shapes(const YAML::Node &node,
                                           const std::string &key,
                                           std::vector<int> *lines) {
    std::vector<int> item_lines;
    std::vector<std::vector<int64_t>> shapes;
    const std::vector<std::string> texts = List(node, key, &item_lines);
    for (size_t i = 0; i < texts.size(); ++i) {
      std::vector<int64_t> shape;
      if (!ParseShapeString(texts[i], &shape)) {
        throw ConfigError(AtLine("'" + key + "' item '" + texts[i] +
                                     "' is not a shape like 1,224,224,3",
                                 path_, item_lines[i]));
      }
      shapes.push_back(shape);
    }
    if (lines != nullptr) *lines = item_lines;
    return shapes;
  }

  // A local path, resolved against the file's folder; must exist.
  std::string LocalFile(const YAML::Node &node, const std::string &key) {
    const std::string value = Scalar(node, key);
    if (value.rfind("http://", 0) == 0 || value.rfind("https://", 0) == 0) {
      Fail("'" + key + "' is the URL '" + value +
               "': downloading models is not supported offline; download "
               "it and give its local path",
           node);
    }
    const std::string path =
        value.empty() || value[0] == '/' || dir_.empty() ? value
                                                         : dir_ + "/" + value;
    std::ifstream probe(path, std::ios::binary);
    if (value.empty() || !probe) {
      Fail("'" + key + "': cannot open '" + path + "'", node);
    }
    return path;
  }

  void CheckSum(const std::string &file, const YAML::Node &node,
                const std::string &key) {
    std::string expected = Scalar(node, key);
    for (char &c : expected) c = static_cast<char>(std::tolower(c));
    std::string actual;
    if (Sha256File(file, &actual) != MaceStatus::MACE_SUCCESS) {
      Fail("cannot read '" + file + "'", node);
    }
    if (actual != expected) {
      Fail("'" + key + "' mismatch for '" + file + "': the file's sha256 is " +
               actual + ", the deployment file says " + expected,
           node);
    }
  }

  void Subgraph(const YAML::Node &node, DeploySubgraph *graph) {
    graph->line = Line(node);
    auto get = [&](const std::string &key) { return node[key]; };
    for (const char *required : {"input_tensors", "output_tensors"}) {
      if (!get(required)) {
        Fail(std::string("missing required key '") + required + "'", node);
      }
    }
    graph->input_tensors =
        List(get("input_tensors"), "input_tensors", &graph->input_tensor_lines);
    graph->output_tensors = List(get("output_tensors"), "output_tensors",
                                 &graph->output_tensor_lines);
    if (graph->input_tensors.empty()) {
      Fail("'input_tensors' is empty", get("input_tensors"));
    }
    if (graph->output_tensors.empty()) {
      Fail("'output_tensors' is empty", get("output_tensors"));
    }
    const size_t inputs = graph->input_tensors.size();
    const size_t outputs = graph->output_tensors.size();
    auto count = [&](const YAML::Node &at, const std::string &key, size_t got,
                     size_t want, bool one_ok) {
      if (got != want && !(one_ok && got == 1)) {
        Fail("'" + key + "' has " + std::to_string(got) +
                 " items for " + std::to_string(want) + " tensors",
             at);
      }
    };
    if (get("input_shapes")) {
      graph->input_shapes = Shapes(get("input_shapes"), "input_shapes",
                                   nullptr);
      count(get("input_shapes"), "input_shapes", graph->input_shapes.size(),
            inputs, false);
    }
    if (get("input_data_types")) {
      graph->input_data_types = List(get("input_data_types"),
                                     "input_data_types");
      count(get("input_data_types"), "input_data_types",
            graph->input_data_types.size(), inputs, true);
      for (const std::string &type : graph->input_data_types) {
        if (type != "float32" && type != "int32") {
          Fail("'input_data_types' item '" + type +
                   "' should be float32 or int32",
               get("input_data_types"));
        }
      }
    }
    auto formats = [&](const std::string &key, size_t want) {
      std::vector<std::string> values;
      if (!get(key)) return values;
      values = List(get(key), key);
      count(get(key), key, values.size(), want, true);
      for (const std::string &value : values) {
        if (value != "NHWC" && value != "NCHW" && value != "NONE") {
          Fail("'" + key + "' item '" + value +
                   "' should be NHWC, NCHW or NONE",
               get(key));
        }
      }
      return values;
    };
    graph->input_data_formats = formats("input_data_formats", inputs);
    graph->output_data_formats = formats("output_data_formats", outputs);
    if (get("input_ranges")) {
      std::vector<int> lines;
      const std::vector<std::string> ranges =
          List(get("input_ranges"), "input_ranges", &lines);
      count(get("input_ranges"), "input_ranges", ranges.size(), inputs, true);
      for (size_t i = 0; i < ranges.size(); ++i) {
        std::vector<double> bounds;
        std::stringstream stream(ranges[i]);
        std::string piece;
        bool ok = true;
        while (std::getline(stream, piece, ',')) {
          char *end = nullptr;
          bounds.push_back(std::strtod(piece.c_str(), &end));
          ok = ok && !piece.empty() && *end == '\0';
        }
        if (!ok || bounds.size() != 2 || !(bounds[0] < bounds[1])) {
          throw ConfigError(AtLine("'input_ranges' item '" + ranges[i] +
                                       "' should look like -1,1 (low < high)",
                                   path_, lines[i]));
        }
        graph->input_ranges.emplace_back(bounds[0], bounds[1]);
      }
    }
    if (get("output_shapes")) {
      graph->output_shapes = Shapes(get("output_shapes"), "output_shapes",
                                    &graph->output_shape_lines);
      count(get("output_shapes"), "output_shapes",
            graph->output_shapes.size(), outputs, false);
    }
    if (get("check_tensors")) {
      graph->check_tensors = List(get("check_tensors"), "check_tensors");
    }
    if (get("check_shapes")) {
      graph->check_shapes = Shapes(get("check_shapes"), "check_shapes",
                                   nullptr);
      count(get("check_shapes"), "check_shapes", graph->check_shapes.size(),
            graph->check_tensors.size(), false);
    }
    for (const char *key : {"validation_inputs_data",
                            "validation_outputs_data"}) {
      if (!get(key)) continue;
      std::vector<std::string> files = List(get(key), key);
      for (std::string &file : files) {
        const bool remote = file.rfind("http://", 0) == 0 ||
                            file.rfind("https://", 0) == 0;
        if (!remote && !file.empty() && file[0] != '/' && !dir_.empty()) {
          file = dir_ + "/" + file;
        }
      }
      (std::string(key) == "validation_inputs_data"
           ? graph->validation_inputs_data
           : graph->validation_outputs_data) = files;
    }
  }

  void Model(const std::string &name, const YAML::Node &key_node,
             const YAML::Node &node, DeployModel *model) {
    model->name = name;
    model->line = Line(key_node);
    if (!node.IsMap()) Fail("model '" + name + "' should be a map of keys",
                            node.IsNull() ? key_node : node);
    std::vector<std::string> known = kModelKeys;
    known.insert(known.end(), kSubgraphKeys.begin(), kSubgraphKeys.end());
    CheckKeys(node, known, "in model '" + name + "'");
    for (const char *required : {"platform", "model_file_path"}) {
      if (!node[required]) {
        Fail(std::string("missing required key '") + required +
                 "' in model '" + name + "'",
             key_node);
      }
    }
    model->platform = OneOf(node["platform"], "platform",
                            {"onnx", "tensorflow", "caffe"});
    if (model->platform == "caffe" && !node["weight_file_path"]) {
      Fail("platform caffe needs 'weight_file_path' (the .caffemodel beside "
           "the .prototxt of model_file_path)",
           node["platform"]);
    }
    model->model_file_path = LocalFile(node["model_file_path"],
                                       "model_file_path");
    if (node["model_sha256_checksum"]) {
      model->model_sha256_checksum =
          Scalar(node["model_sha256_checksum"], "model_sha256_checksum");
      CheckSum(model->model_file_path, node["model_sha256_checksum"],
               "model_sha256_checksum");
    }
    if (node["weight_file_path"]) {
      model->weight_file_path = LocalFile(node["weight_file_path"],
                                          "weight_file_path");
      if (node["weight_sha256_checksum"]) {
        model->weight_sha256_checksum =
            Scalar(node["weight_sha256_checksum"], "weight_sha256_checksum");
        CheckSum(model->weight_file_path, node["weight_sha256_checksum"],
                 "weight_sha256_checksum");
      }
    }
    if (node["runtime"]) {
      model->runtime = OneOf(node["runtime"], "runtime",
                             {"cpu", "gpu", "dsp", "hta", "apu", "cpu+gpu",
                              "cpu_gpu"});
      if (model->runtime == "cpu+gpu" || model->runtime == "cpu_gpu") {
        model->warnings.push_back(AtLine(
            "runtime '" + model->runtime + "': gpu is not available in this "
            "build; converting for cpu only", path_, Line(node["runtime"])));
        model->runtime = "cpu";
      } else if (model->runtime != "cpu") {
        Fail("runtime '" + model->runtime +
                 "' is not available in this build (cpu only)",
             node["runtime"]);
      }
    }
    if (node["data_type"]) {
      model->data_type = OneOf(node["data_type"], "data_type",
                               {"fp32_fp32", "fp16_fp32", "bf16_fp32",
                                "fp16_fp16"});
      if (model->data_type == "fp16_fp16") {
        Fail("data_type 'fp16_fp16' is not supported on cpu; use fp32_fp32, "
             "fp16_fp32 or bf16_fp32",
             node["data_type"]);
      }
    }
    if (node["winograd"]) {
      model->winograd = Int(node["winograd"], "winograd");
      if (model->winograd != 0 && model->winograd != 2 &&
          model->winograd != 4) {
        Fail("'winograd' should be 0, 2 or 4", node["winograd"]);
      }
    }
    if (node["obfuscate"]) model->obfuscate = Bool(node["obfuscate"],
                                                   "obfuscate");
    if (node["quantize"]) {
      model->quantize = Bool(node["quantize"], "quantize");
      if (model->quantize) {
        Fail("'quantize: 1' is not yet supported by mace convert --config",
             node["quantize"]);
      }
    }
    if (node["quantize_large_weights"]) {
      model->quantize_large_weights =
          Bool(node["quantize_large_weights"], "quantize_large_weights");
    }
    if (node["quantize_range_file"]) {
      model->quantize_range_file =
          LocalFile(node["quantize_range_file"], "quantize_range_file");
    }
    if (node["quantize_schema"]) {
      model->quantize_schema = OneOf(node["quantize_schema"],
                                     "quantize_schema", {"uint8", "int8"});
    }
    if (node["change_concat_ranges"]) {
      model->change_concat_ranges =
          Bool(node["change_concat_ranges"], "change_concat_ranges");
    }
    if (node["cl_mem_type"]) {
      model->cl_mem_type = OneOf(node["cl_mem_type"], "cl_mem_type",
                                 {"image", "buffer"});
    }
    if (node["limit_opencl_kernel_time"]) {
      model->limit_opencl_kernel_time =
          Int(node["limit_opencl_kernel_time"], "limit_opencl_kernel_time");
    }
    if (node["opencl_queue_window_size"]) {
      model->opencl_queue_window_size =
          Int(node["opencl_queue_window_size"], "opencl_queue_window_size");
    }
    if (node["validation_threshold"]) {
      const YAML::Node thresholds = node["validation_threshold"];
      if (!thresholds.IsMap()) {
        Fail("'validation_threshold' should be a map like {CPU: 0.999}",
             thresholds);
      }
      CheckKeys(thresholds, {"CPU", "GPU", "HEXAGON", "HTA", "APU",
                             "QUANTIZE"},
                "in validation_threshold");
      for (auto it = thresholds.begin(); it != thresholds.end(); ++it) {
        const std::string value = Scalar(it->second, it->first.as<std::string>());
        char *end = nullptr;
        const double parsed = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0' || parsed > 1.0) {
          Fail("validation threshold '" + value +
                   "' should be a number <= 1.0",
               it->second);
        }
        model->validation_threshold[it->first.as<std::string>()] = parsed;
      }
    }
    if (node["backend"]) model->backend = Scalar(node["backend"], "backend");
    if (node["accuracy_validation_script"]) {
      model->accuracy_validation_script =
          LocalFile(node["accuracy_validation_script"],
                    "accuracy_validation_script");
    }
    if (node["graph_optimize_options"]) {
      model->graph_optimize_options =
          List(node["graph_optimize_options"], "graph_optimize_options");
    }

    // Subgraphs: a list under `subgraphs`, or MACE's flat form with the
    // subgraph keys directly under the model.
    bool flat = false;
    for (const std::string &key : kSubgraphKeys) flat = flat || node[key];
    if (node["subgraphs"]) {
      const YAML::Node list = node["subgraphs"];
      if (!list.IsSequence() || list.size() == 0) {
        Fail("'subgraphs' should be a list of subgraphs (- input_tensors: "
             "...)",
             list);
      }
      for (const YAML::Node &item : list) {
        if (!item.IsMap()) Fail("a subgraph should be a map of keys", item);
        CheckKeys(item, kSubgraphKeys, "in a subgraph of '" + name + "'");
      }
      for (const std::string &key : kSubgraphKeys) {
        if (!node[key]) continue;
        // MACE's own examples put validation_inputs_data next to
        // subgraphs; such a key belongs to the (only) subgraph.
        if (list.size() != 1 || list[0][key]) {
          Fail("'" + key + "' is both under the model and in its subgraphs",
               node[key]);
        }
      }
      for (size_t i = 0; i < list.size(); ++i) {
        YAML::Node item = YAML::Clone(list[i]);
        if (i == 0 && flat) {
          for (const std::string &key : kSubgraphKeys) {
            if (node[key]) item[key] = node[key];
          }
        }
        DeploySubgraph graph;
        Subgraph(i == 0 && flat ? item : list[i], &graph);
        if (graph.line == 0) graph.line = Line(list[i]);
        model->subgraphs.push_back(graph);
      }
    } else {
      if (!node["input_tensors"]) {
        Fail("missing required key 'input_tensors' (or 'subgraphs') in "
             "model '" + name + "'",
             key_node);
      }
      DeploySubgraph graph;
      Subgraph(node, &graph);
      model->subgraphs.push_back(graph);
    }
    if (model->subgraphs.size() > 1) {
      Fail("model '" + name + "' has " +
               std::to_string(model->subgraphs.size()) +
               " subgraphs; only one is supported",
           node["subgraphs"][1]);
    }
  }

  // The device file of `--device-yml`: devices: {name: {target_abis,
  // target_socs, models, address, username, port}}; port (default 22) is
  // ours, for boards behind a forwarded port.
  void Devices(const YAML::Node &root, DeviceConfig *config) {
    if (!root.IsMap() || !root["devices"]) {
      throw ConfigError(AtLine("a device file should be a map with the key "
                               "'devices'",
                               path_, Line(root)));
    }
    CheckKeys(root, {"devices"}, "at the top level");
    const YAML::Node devices = root["devices"];
    if (!devices.IsMap() || devices.size() == 0) {
      Fail("'devices' should be a map of device name → device", devices);
    }
    for (auto it = devices.begin(); it != devices.end(); ++it) {
      DeployDevice device;
      device.name = Scalar(it->first, "device name");
      device.line = Line(it->first);
      const YAML::Node node =
          RequireMap(it->second, "device '" + device.name + "'");
      CheckKeys(node, {"target_abis", "target_socs", "models", "address",
                       "username", "port"},
                "in device '" + device.name + "'");
      for (const char *required : {"target_abis", "address", "username"}) {
        if (!node[required]) {
          Fail(std::string("missing required key '") + required +
                   "' in device '" + device.name + "'",
               it->first);
        }
      }
      device.target_abis = List(node["target_abis"], "target_abis");
      for (const std::string &abi : device.target_abis) {
        if (!Contains({"host", "armeabi-v7a", "arm64-v8a", "arm64", "armhf"},
                      abi)) {
          Fail("target abi '" + abi + "' should be host, armeabi-v7a, "
               "arm64-v8a, arm64 or armhf",
               node["target_abis"]);
        }
      }
      if (node["target_socs"]) {
        device.target_socs = Scalar(node["target_socs"], "target_socs");
      }
      if (node["models"]) device.models = Scalar(node["models"], "models");
      device.address = Scalar(node["address"], "address");
      device.username = Scalar(node["username"], "username");
      if (device.address.empty() || device.username.empty() ||
          device.address[0] == '-' || device.username[0] == '-') {
        Fail("device '" + device.name + "': address and username should be "
             "a host and a user name",
             it->second);
      }
      if (node["port"]) {
        device.port = Int(node["port"], "port");
        if (device.port < 1 || device.port > 65535) {
          Fail("'port' should be 1 to 65535", node["port"]);
        }
      }
      config->devices.push_back(device);
    }
  }

  void Top(const YAML::Node &root, DeployConfig *config) {
    if (!root.IsMap()) {
      throw ConfigError(AtLine("a deployment file should be a map of keys "
                               "(library_name, models, ...)",
                               path_, Line(root)));
    }
    CheckKeys(root, kTopKeys, "at the top level");
    for (const char *required : {"library_name", "models"}) {
      if (!root[required]) {
        throw ConfigError(AtLine(std::string("missing required key '") +
                                     required + "'",
                                 path_, 1));
      }
    }
    config->library_name = Scalar(root["library_name"], "library_name");
    if (config->library_name.empty() ||
        config->library_name.find('/') != std::string::npos ||
        config->library_name == "." || config->library_name == "..") {
      Fail("'library_name' '" + config->library_name +
               "' should be a plain name",
           root["library_name"]);
    }
    if (root["target_abis"]) {
      config->target_abis = List(root["target_abis"], "target_abis");
      for (const std::string &abi : config->target_abis) {
        if (!Contains({"host", "armeabi-v7a", "arm64-v8a", "arm64", "armhf"},
                      abi)) {
          Fail("target abi '" + abi + "' should be host, armeabi-v7a, "
               "arm64-v8a, arm64 or armhf",
               root["target_abis"]);
        }
      }
    }
    if (root["target_socs"]) {
      config->target_socs = List(root["target_socs"], "target_socs");
    }
    for (const char *key : {"model_graph_format", "model_data_format"}) {
      if (!root[key]) continue;
      const std::string value = OneOf(root[key], key, {"file", "code"});
      (std::string(key) == "model_graph_format" ? config->model_graph_format
                                                : config->model_data_format) =
          value;
    }
    if (config->model_data_format == "code" &&
        config->model_graph_format != "code") {
      // The weights compiled in are reached through the graph's code
      // (CreateMaceEngineFromCode), as in MACE.
      Fail("'model_data_format: code' needs 'model_graph_format: code'",
           root["model_data_format"]);
    }
    const YAML::Node models = root["models"];
    if (!models.IsMap() || models.size() == 0) {
      Fail("'models' should be a map of model name → model", models);
    }
    for (auto it = models.begin(); it != models.end(); ++it) {
      const std::string name = Scalar(it->first, "model name");
      if (name.empty() || name.find('/') != std::string::npos ||
          name[0] == '.') {
        Fail("model name '" + name + "' should be a plain name", it->first);
      }
      DeployModel model;
      Model(name, it->first, it->second, &model);
      config->models.push_back(model);
    }
  }

 private:
  std::string path_;
  std::string dir_;
};

}  // namespace

std::string AtLine(const std::string &what, const std::string &path,
                   int line) {
  return what + ", in " + path + (line > 0 ? ":" + std::to_string(line) : "");
}

bool ParseShapeString(const std::string &text, std::vector<int64_t> *shape) {
  shape->clear();
  if (text.empty()) return false;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string piece = text.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!piece.empty() && piece.front() == ' ') piece.erase(0, 1);
    while (!piece.empty() && piece.back() == ' ') piece.pop_back();
    char *end = nullptr;
    const long long value = std::strtoll(piece.c_str(), &end, 10);
    if (piece.empty() || *end != '\0' || value < 0) return false;
    shape->push_back(value);
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

MaceStatus ParseDeployConfigText(const std::string &text,
                                 const std::string &path,
                                 DeployConfig *config) {
  *config = DeployConfig();
  config->path = path;
  const size_t slash = path.find_last_of('/');
  config->dir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (config->dir.empty()) config->dir = "/";
  try {
    const YAML::Node root = YAML::Load(text);
    Parser(path, config->dir).Top(root, config);
  } catch (const ConfigError &error) {
    return MaceStatus(MaceStatus::MACE_INVALID_ARGS, error.what());
  } catch (const YAML::Exception &error) {
    return MaceStatus(MaceStatus::MACE_INVALID_ARGS,
                      AtLine("YAML syntax error: " + error.msg, path,
                             error.mark.is_null() ? 0 : error.mark.line + 1));
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ParseDeployConfig(const std::string &path, DeployConfig *config) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return MaceStatus(MaceStatus::MACE_INVALID_ARGS,
                      "cannot open the deployment file '" + path + "'");
  }
  std::stringstream text;
  text << file.rdbuf();
  return ParseDeployConfigText(text.str(), path, config);
}

MaceStatus ParseDeviceConfig(const std::string &path, DeviceConfig *config) {
  *config = DeviceConfig();
  config->path = path;
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return MaceStatus(MaceStatus::MACE_INVALID_ARGS,
                      "cannot open the device file '" + path + "'");
  }
  std::stringstream text;
  text << file.rdbuf();
  try {
    Parser(path, ".").Devices(YAML::Load(text.str()), config);
  } catch (const ConfigError &error) {
    return MaceStatus(MaceStatus::MACE_INVALID_ARGS, error.what());
  } catch (const YAML::Exception &error) {
    return MaceStatus(MaceStatus::MACE_INVALID_ARGS,
                      AtLine("YAML syntax error: " + error.msg, path,
                             error.mark.is_null() ? 0 : error.mark.line + 1));
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace tools
}  // namespace mace
