// The deployment-file parser: a valid file, and every error with its line.

#include "mace/tools/deploy_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "mace/tools/sha256.h"

namespace mace {
namespace tools {
namespace {

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // One million 'a's, fed in uneven pieces.
  Sha256 hash;
  const std::string piece(997, 'a');
  size_t left = 1000000;
  while (left > 0) {
    const size_t take = std::min(left, piece.size());
    hash.Update(piece.data(), take);
    left -= take;
  }
  EXPECT_EQ(hash.HexDigest(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // 55, 56 and 64 bytes: the padding edge cases.
  EXPECT_EQ(Sha256Hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(Sha256Hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(Sha256Hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(ShapeStringTest, Parses) {
  std::vector<int64_t> shape;
  ASSERT_TRUE(ParseShapeString("1,224,224,3", &shape));
  EXPECT_EQ(shape, (std::vector<int64_t>{1, 224, 224, 3}));
  ASSERT_TRUE(ParseShapeString("1, 10", &shape));
  EXPECT_EQ(shape, (std::vector<int64_t>{1, 10}));
  EXPECT_FALSE(ParseShapeString("", &shape));
  EXPECT_FALSE(ParseShapeString("1,,3", &shape));
  EXPECT_FALSE(ParseShapeString("1,x,3", &shape));
  EXPECT_FALSE(ParseShapeString("1,-2", &shape));
}

class DeployConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/deploy_config_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    Write("a.onnx", "model a");
    Write("b.onnx", "model b");
  }
  void TearDown() override {
    std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  void Write(const std::string &name, const std::string &text) {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << text;
  }
  MaceStatus Parse(const std::string &yaml) {
    Write("deploy.yml", yaml);
    return ParseDeployConfig(dir_ + "/deploy.yml", &config_);
  }
  // Expects an error whose message holds `text` and "deploy.yml:<line>".
  void ExpectError(const std::string &yaml, const std::string &text,
                   int line) {
    const MaceStatus status = Parse(yaml);
    ASSERT_NE(status, MaceStatus::MACE_SUCCESS) << yaml;
    const std::string message = status.information();
    EXPECT_NE(message.find(text), std::string::npos) << message;
    EXPECT_NE(message.find("deploy.yml:" + std::to_string(line)),
              std::string::npos)
        << message;
  }

  std::string dir_;
  DeployConfig config_;
};

// A one-model file whose line 6 onwards can be varied.
std::string OneModel(const std::string &extra) {
  return "library_name: lib\n"           // 1
         "target_abis: [host]\n"         // 2
         "models:\n"                     // 3
         "  m:\n"                        // 4
         "    platform: onnx\n"          // 5
         "    model_file_path: a.onnx\n"  // 6
         "    subgraphs:\n"              // 7
         "      - input_tensors: x\n"    // 8
         "        input_shapes: 1,8,8,3\n"  // 9
         "        output_tensors: y\n" +  // 10
         extra;
}

TEST_F(DeployConfigTest, TwoModelsOneWithTwoInputs) {
  const std::string yaml =
      "library_name: two\n"
      "target_abis: [host, arm64-v8a]\n"
      "model_graph_format: file\n"
      "model_data_format: file\n"
      "models:\n"
      "  first:\n"
      "    platform: onnx\n"
      "    model_file_path: a.onnx\n"
      "    model_sha256_checksum: " + Sha256Hex("model a") + "\n"
      "    runtime: cpu\n"
      "    data_type: fp16_fp32\n"
      "    winograd: 0\n"
      "    obfuscate: 1\n"
      "    validation_threshold:\n"
      "      CPU: 0.99\n"
      "    subgraphs:\n"
      "      - input_tensors:\n"
      "          - image\n"
      "          - mask\n"
      "        input_shapes:\n"
      "          - 1,224,224,3\n"
      "          - 1,224,224,1\n"
      "        input_data_types: [float32, float32]\n"
      "        input_data_formats: NHWC\n"
      "        input_ranges: ['-1,1', '0,1']\n"
      "        output_tensors:\n"
      "          - prob\n"
      "        output_shapes:\n"
      "          - 1,1001\n"
      "  second:\n"
      "    platform: onnx\n"
      "    model_file_path: b.onnx\n"
      "    input_tensors: data\n"
      "    input_shapes: 1,3,32,32\n"
      "    input_data_formats: NCHW\n"
      "    output_tensors: [out]\n"
      "    validation_inputs_data: [in.npy]\n";
  ASSERT_EQ(Parse(yaml), MaceStatus::MACE_SUCCESS)
      << Parse(yaml).information();
  EXPECT_EQ(config_.library_name, "two");
  EXPECT_EQ(config_.target_abis,
            (std::vector<std::string>{"host", "arm64-v8a"}));
  ASSERT_EQ(config_.models.size(), 2u);
  const DeployModel &first = config_.models[0];
  EXPECT_EQ(first.name, "first");
  EXPECT_EQ(first.line, 6);
  EXPECT_EQ(first.model_file_path, dir_ + "/a.onnx");
  EXPECT_EQ(first.data_type, "fp16_fp32");
  EXPECT_TRUE(first.obfuscate);
  EXPECT_DOUBLE_EQ(first.validation_threshold.at("CPU"), 0.99);
  ASSERT_EQ(first.subgraphs.size(), 1u);
  const DeploySubgraph &graph = first.subgraphs[0];
  EXPECT_EQ(graph.input_tensors, (std::vector<std::string>{"image", "mask"}));
  EXPECT_EQ(graph.input_tensor_lines, (std::vector<int>{18, 19}));
  ASSERT_EQ(graph.input_shapes.size(), 2u);
  EXPECT_EQ(graph.input_shapes[1], (std::vector<int64_t>{1, 224, 224, 1}));
  EXPECT_EQ(graph.input_data_formats, (std::vector<std::string>{"NHWC"}));
  ASSERT_EQ(graph.input_ranges.size(), 2u);
  EXPECT_DOUBLE_EQ(graph.input_ranges[0].first, -1.0);
  EXPECT_DOUBLE_EQ(graph.input_ranges[1].second, 1.0);
  EXPECT_EQ(graph.output_shapes[0], (std::vector<int64_t>{1, 1001}));
  EXPECT_EQ(graph.output_shape_lines, (std::vector<int>{29}));
  const DeployModel &second = config_.models[1];
  EXPECT_EQ(second.name, "second");
  EXPECT_EQ(second.runtime, "cpu");
  EXPECT_EQ(second.data_type, "fp32_fp32");
  ASSERT_EQ(second.subgraphs.size(), 1u);
  EXPECT_EQ(second.subgraphs[0].input_tensors,
            (std::vector<std::string>{"data"}));
  EXPECT_EQ(second.subgraphs[0].input_data_formats,
            (std::vector<std::string>{"NCHW"}));
  EXPECT_EQ(second.subgraphs[0].validation_inputs_data,
            (std::vector<std::string>{dir_ + "/in.npy"}));
}

TEST_F(DeployConfigTest, UnknownKeySuggestsTheNearest) {
  ExpectError(OneModel("    runtim: cpu\n"),
              "unknown key 'runtim' in model 'm'; did you mean 'runtime'?",
              11);
  ExpectError("library_nme: x\nmodels: {}\n", "did you mean 'library_name'",
              1);
  ExpectError(OneModel("        output_shape: 1,10\n"),
              "did you mean 'output_shapes'", 11);
  ExpectError(OneModel("    dtype: fp16_fp32\n"),
              "did you mean 'data_type'", 11);
  ExpectError(OneModel("    zzzzzz: 1\n"),
              "unknown key 'zzzzzz' in model 'm' (valid keys: platform,", 11);
}

TEST_F(DeployConfigTest, MissingRequiredKeys) {
  ExpectError("library_name: x\n", "missing required key 'models'", 1);
  ExpectError("library_name: x\nmodels:\n  m:\n    model_file_path: a.onnx\n"
              "    input_tensors: x\n    output_tensors: y\n",
              "missing required key 'platform'", 3);
  ExpectError("library_name: x\nmodels:\n  m:\n    platform: onnx\n"
              "    input_tensors: x\n    output_tensors: y\n",
              "missing required key 'model_file_path'", 3);
  ExpectError("library_name: x\nmodels:\n  m:\n    platform: onnx\n"
              "    model_file_path: a.onnx\n    output_tensors: y\n",
              "missing required key 'input_tensors'", 3);
  ExpectError("library_name: x\nmodels:\n  m:\n    platform: onnx\n"
              "    model_file_path: a.onnx\n    subgraphs:\n"
              "      - input_tensors: x\n",
              "missing required key 'output_tensors'", 7);
}

TEST_F(DeployConfigTest, WrongTypes) {
  ExpectError("library_name: [a, b]\nmodels: {}\n",
              "'library_name' should be a single value, not a list", 1);
  ExpectError(OneModel("    runtime: [cpu]\n"),
              "'runtime' should be a single value, not a list", 11);
  ExpectError(OneModel("        output_shapes: {a: 1}\n"),
              "'output_shapes' should be a list, not a map", 11);
  ExpectError(OneModel("    winograd: two\n"), "should be an integer", 11);
  ExpectError("library_name: x\nmodels: [a]\n", "'models' should be a map", 2);
}

TEST_F(DeployConfigTest, BadShapes) {
  ExpectError(OneModel("        output_shapes: 1,x\n"),
              "'output_shapes' item '1,x' is not a shape", 11);
  ExpectError(OneModel("        output_shapes:\n          - 1,10\n"
                       "          - 1,,3\n"),
              "'1,,3' is not a shape", 13);
  ExpectError(OneModel("        output_shapes: [1,10, 1,2]\n"),
              "'output_shapes' has 4 items for 1 tensors", 11);
}

TEST_F(DeployConfigTest, ModelFiles) {
  ExpectError("library_name: x\nmodels:\n  m:\n    platform: onnx\n"
              "    model_file_path: missing.onnx\n",
              "cannot open '" + dir_ + "/missing.onnx'", 5);
  ExpectError("library_name: x\nmodels:\n  m:\n    platform: onnx\n"
              "    model_file_path: https://example.com/m.onnx\n",
              "not supported offline", 5);
  const std::string wrong(64, '0');
  ExpectError(OneModel("    model_sha256_checksum: " + wrong + "\n"),
              "the file's sha256 is " + Sha256Hex("model a") +
                  ", the deployment file says " + wrong,
              11);
}

TEST_F(DeployConfigTest, UnsupportedValues) {
  ExpectError("library_name: x\nmodels:\n  m:\n    platform: caffe\n"
              "    model_file_path: a.onnx\n",
              "platform caffe needs 'weight_file_path'", 4);
  ExpectError("library_name: x\nmodels:\n  m:\n    platform: pytorch\n"
              "    model_file_path: a.onnx\n",
              "should be onnx, tensorflow or caffe", 4);
  for (const char *runtime : {"gpu", "dsp", "apu", "hta"}) {
    ExpectError(OneModel(std::string("    runtime: ") + runtime + "\n"),
                "is not available in this build", 11);
  }
  ExpectError(OneModel("    runtime: npu\n"), "'runtime' is 'npu'", 11);
  ExpectError(OneModel("    data_type: int8\n"),
              "'data_type' is 'int8'; it should be", 11);
  ExpectError(OneModel("    data_type: fp16_fp16\n"), "fp16_fp16", 11);
  ExpectError("model_data_format: code\n" + OneModel(""),
              "'model_data_format: code' needs 'model_graph_format: code'", 1);
  ExpectError("model_graph_format: source\n" + OneModel(""),
              "'model_graph_format' is 'source'", 1);
  ExpectError(OneModel("        input_data_formats: NHCW\n"),
              "should be NHWC, NCHW or NONE", 11);
  ExpectError(OneModel("        input_ranges: '1,-1'\n"),
              "'input_ranges' item '1,-1'", 11);
}

TEST_F(DeployConfigTest, ModelLevelKeyJoinsTheOnlySubgraph) {
  // As in MACE's own example: validation_inputs_data next to subgraphs.
  ASSERT_EQ(Parse(OneModel("    validation_inputs_data: [x.npy]\n")),
            MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(config_.models[0].subgraphs[0].validation_inputs_data,
            (std::vector<std::string>{dir_ + "/x.npy"}));
  ExpectError(OneModel("    output_tensors: z\n"),
              "'output_tensors' is both under the model and in its subgraphs",
              11);
  ExpectError(OneModel("      - input_tensors: z\n        output_tensors: w\n"),
              "has 2 subgraphs; only one is supported", 11);
}

TEST_F(DeployConfigTest, CountsMatchTheTensors) {
  ExpectError(OneModel("        output_shapes: ['1,10', '1,2']\n"),
              "'output_shapes' has 2 items for 1 tensors", 11);
  ExpectError(OneModel("        input_data_types: [float32, int32]\n"),
              "'input_data_types' has 2 items for 1 tensors", 11);
}

TEST_F(DeployConfigTest, EmptyTensorLists) {
  ExpectError("library_name: x\nmodels:\n  m:\n    platform: onnx\n"
              "    model_file_path: a.onnx\n    input_tensors: x\n"
              "    output_tensors: []\n",
              "'output_tensors' is empty", 7);
}

TEST_F(DeployConfigTest, CpuGpuRuntimeWarns) {
  ASSERT_EQ(Parse(OneModel("    runtime: cpu+gpu\n")),
            MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(config_.models[0].runtime, "cpu");
  ASSERT_EQ(config_.models[0].warnings.size(), 1u);
}

TEST_F(DeployConfigTest, YamlSyntaxErrorHasItsLine) {
  ExpectError("library_name: x\nmodels:\n  m: [unclosed\n", "YAML syntax", 4);
}

// The device file of `mace run --device-yml`.
class DeviceConfigTest : public DeployConfigTest {
 protected:
  MaceStatus ParseDevices(const std::string &yaml) {
    Write("devices.yml", yaml);
    return ParseDeviceConfig(dir_ + "/devices.yml", &devices_);
  }
  void ExpectDeviceError(const std::string &yaml, const std::string &text,
                         int line) {
    const MaceStatus status = ParseDevices(yaml);
    ASSERT_NE(status, MaceStatus::MACE_SUCCESS) << yaml;
    const std::string message = status.information();
    EXPECT_NE(message.find(text), std::string::npos) << message;
    EXPECT_NE(message.find("devices.yml:" + std::to_string(line)),
              std::string::npos)
        << message;
  }
  DeviceConfig devices_;
};

constexpr char kBoard[] =
    "devices:\n"                      // 1
    "  rk3399:\n"                     // 2
    "    target_abis: [arm64-v8a]\n"  // 3
    "    target_socs: rk3399\n"       // 4
    "    models: Firefly\n"           // 5
    "    address: 10.0.0.2\n"         // 6
    "    username: mace\n";           // 7

TEST_F(DeviceConfigTest, ReadsABoard) {
  ASSERT_EQ(ParseDevices(std::string(kBoard) + "    port: 2222\n"),
            MaceStatus::MACE_SUCCESS);
  ASSERT_EQ(devices_.devices.size(), 1u);
  const DeployDevice &board = devices_.devices[0];
  EXPECT_EQ(board.name, "rk3399");
  EXPECT_EQ(board.target_abis, std::vector<std::string>{"arm64-v8a"});
  EXPECT_EQ(board.address, "10.0.0.2");
  EXPECT_EQ(board.username, "mace");
  EXPECT_EQ(board.port, 2222);
  ASSERT_EQ(ParseDevices(kBoard), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(devices_.devices[0].port, 22);
}

TEST_F(DeviceConfigTest, BadFilesNameTheLine) {
  ExpectDeviceError(std::string(kBoard) + "    adress: x\n",
                    "unknown key 'adress' in device 'rk3399'; did you mean "
                    "'address'?",
                    8);
  ExpectDeviceError("devices:\n  b:\n    target_abis: [arm64-v8a]\n"
                    "    username: u\n",
                    "missing required key 'address' in device 'b'", 2);
  ExpectDeviceError(std::string(kBoard) + "    port: 70000\n",
                    "'port' should be 1 to 65535", 8);
  ExpectDeviceError("devices:\n  b:\n    target_abis: [mips]\n"
                    "    address: a\n    username: u\n",
                    "target abi 'mips' should be", 3);
  ExpectDeviceError("devices:\n  b:\n    target_abis: [host]\n"
                    "    address: -oProxyCommand=x\n    username: u\n",
                    "address and username should be", 3);
  ExpectDeviceError("boards: {}\n", "a device file should be a map with the "
                    "key 'devices'", 1);
  ExpectDeviceError("devices: [\n", "YAML syntax error", 2);
  EXPECT_NE(ParseDeviceConfig(dir_ + "/nope.yml", &devices_),
            MaceStatus::MACE_SUCCESS);
}

}  // namespace
}  // namespace tools
}  // namespace mace
