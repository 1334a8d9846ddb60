// The public API: Run-time checks of inputs and outputs, layouts, storage
// types, tutors, releasing the arena, run metadata.

#include <cmath>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mace/core/aligned_buffer.h"
#include "mace/core/status.h"
#include "mace/model/model_builder.h"
#include "mace/public/mace.h"
#include "tests/common/reference.h"

namespace mace {
namespace {

using test::RandomFloats;

struct SerializedModel {
  std::string graph;
  std::string weights;
};

// y = prelu(relu6(x) - ..., slope) on an NHWC [1,2,3,4] input, with the
// input declared in `input_format` and the output in `output_format`.
SerializedModel PreluModel(int input_format = 1, int output_format = 1,
                           WeightStorage storage = WeightStorage::kFloat32) {
  ModelBuilder builder("api_test");
  builder.AddInput("x", {1, 2, 3, 4}, DT_FLOAT, input_format);
  OperatorDef *tanh = builder.AddOp("Activation", "tanh", {"x"}, {"h"});
  ModelBuilder::AddStringArg(tanh, "activation", "TANH");
  builder.AddFloatTensor("slope", {4}, {0.5f, -0.25f, 0.125f, 2.0f});
  OperatorDef *prelu =
      builder.AddOp("Activation", "prelu", {"h", "slope"}, {"y"});
  ModelBuilder::AddStringArg(prelu, "activation", "PRELU");
  builder.AddOutput("y", {1, 2, 3, 4}, DT_FLOAT, output_format);
  SerializedModel model;
  EXPECT_EQ(builder.Serialize(storage, &model.graph, &model.weights),
            MaceStatus::MACE_SUCCESS);
  return model;
}

float PreluReference(float x, int channel) {
  const float slopes[4] = {0.5f, -0.25f, 0.125f, 2.0f};
  const double h = std::tanh(static_cast<double>(x));
  return static_cast<float>(h >= 0 ? h : h * slopes[channel]);
}

std::shared_ptr<MaceEngine> CreateEngine(const SerializedModel &model,
                                         MaceEngine *tutor = nullptr,
                                         int threads = 1) {
  MaceEngineConfig config(DeviceType::CPU);
  EXPECT_EQ(config.SetCPUThreadPolicy(threads, AFFINITY_NONE),
            MaceStatus::MACE_SUCCESS);
  std::shared_ptr<MaceEngine> engine;
  // No model_data_unused: the engine keeps its own copy of the weights, so
  // `model` may be a temporary.
  const MaceStatus status = CreateMaceEngineFromProto(
      reinterpret_cast<const unsigned char *>(model.graph.data()),
      model.graph.size(),
      reinterpret_cast<const unsigned char *>(model.weights.data()),
      model.weights.size(), {"x"}, {"y"}, config, &engine, nullptr, tutor);
  EXPECT_EQ(status, MaceStatus::MACE_SUCCESS) << status.information();
  return engine;
}

// The status of creating an engine for `model` with inputs `inputs` and
// output y.
MaceStatus TryCreate(const SerializedModel &model,
                     const MaceEngineConfig &config,
                     const std::vector<std::string> &inputs = {"x"}) {
  std::shared_ptr<MaceEngine> engine;
  return CreateMaceEngineFromProto(
      reinterpret_cast<const unsigned char *>(model.graph.data()),
      model.graph.size(),
      reinterpret_cast<const unsigned char *>(model.weights.data()),
      model.weights.size(), inputs, {"y"}, config, &engine);
}

MaceTensor MakeTensor(const std::vector<int64_t> &shape,
                      const std::vector<float> &values,
                      DataFormat format = DataFormat::NHWC) {
  std::shared_ptr<float> data(new float[values.size()],
                              std::default_delete<float[]>());
  std::memcpy(data.get(), values.data(), values.size() * sizeof(float));
  return MaceTensor(shape, data, format);
}

std::vector<float> Values(const MaceTensor &tensor) {
  int64_t count = 1;
  for (int64_t d : tensor.shape()) count *= d;
  const float *data = tensor.data().get();
  return std::vector<float>(data, data + count);
}

// What the engine's Init and Run go through: an allocation that fails
// inside them is a status, not an exception out of the library.
TEST(EngineApiTest, AllocationFailureInsideTheEngineIsAStatus) {
  const MaceStatus status =
      OutOfMemoryAsStatus("loading the model", []() -> MaceStatus {
        throw std::bad_alloc();  // as operator new does when memory runs out
      });
  EXPECT_EQ(status.code(), MaceStatus::MACE_OUT_OF_RESOURCES);
  EXPECT_EQ(status.information(), "loading the model: out of memory");
  EXPECT_EQ(OutOfMemoryAsStatus("running", [] {
              return MaceStatus(MaceStatus::MACE_SUCCESS);
            }),
            MaceStatus::MACE_SUCCESS);
  // A container asked for more elements than it can hold, as an absurd
  // model size makes std::vector::resize throw.
  const MaceStatus too_long =
      OutOfMemoryAsStatus("loading the model", []() -> MaceStatus {
        std::vector<int64_t> values;
        values.resize(values.max_size() + 1);
        return MaceStatus(MaceStatus::MACE_SUCCESS);
      });
  EXPECT_EQ(too_long.code(), MaceStatus::MACE_OUT_OF_RESOURCES);
  EXPECT_NE(too_long.information().find("loading the model: "),
            std::string::npos);
}

TEST(EngineApiTest, RunMatchesReferenceWithUserOutputBuffer) {
  const SerializedModel model = PreluModel();
  auto engine = CreateEngine(model);
  ASSERT_NE(engine, nullptr);
  const std::vector<float> x = RandomFloats(24, -2, 2, 11);
  std::map<std::string, MaceTensor> inputs{{"x", MakeTensor({1, 2, 3, 4}, x)}};
  std::map<std::string, MaceTensor> outputs{
      {"y", MakeTensor({1, 2, 3, 4}, std::vector<float>(24, 0.0f))}};
  ASSERT_EQ(engine->Run(inputs, &outputs), MaceStatus::MACE_SUCCESS);
  const std::vector<float> y = Values(outputs["y"]);
  for (int i = 0; i < 24; ++i) {
    EXPECT_NEAR(y[i], PreluReference(x[i], i % 4), 1e-6) << i;
  }
}

TEST(EngineApiTest, WrongInputNameIsAnError) {
  auto engine = CreateEngine(PreluModel());
  std::map<std::string, MaceTensor> inputs{
      {"z", MakeTensor({1, 2, 3, 4}, RandomFloats(24))}};
  std::map<std::string, MaceTensor> outputs;
  const MaceStatus status = engine->Run(inputs, &outputs);
  EXPECT_EQ(status.code(), MaceStatus::MACE_INVALID_ARGS);
  EXPECT_NE(status.information().find("'z'"), std::string::npos);
}

TEST(EngineApiTest, MissingInputIsAnError) {
  auto engine = CreateEngine(PreluModel());
  std::map<std::string, MaceTensor> outputs;
  const MaceStatus status = engine->Run({}, &outputs);
  EXPECT_EQ(status.code(), MaceStatus::MACE_INVALID_ARGS);
  EXPECT_NE(status.information().find("'x'"), std::string::npos);
}

TEST(EngineApiTest, WrongInputShapeIsAnError) {
  auto engine = CreateEngine(PreluModel());
  std::map<std::string, MaceTensor> inputs{
      {"x", MakeTensor({1, 3, 2, 4}, RandomFloats(24))}};
  std::map<std::string, MaceTensor> outputs;
  const MaceStatus status = engine->Run(inputs, &outputs);
  EXPECT_EQ(status.code(), MaceStatus::MACE_INVALID_ARGS);
  EXPECT_NE(status.information().find("[1,2,3,4]"), std::string::npos);
}

TEST(EngineApiTest, WrongInputDataTypeIsAnError) {
  auto engine = CreateEngine(PreluModel());
  std::shared_ptr<int32_t> data(new int32_t[24](),
                                std::default_delete<int32_t[]>());
  std::map<std::string, MaceTensor> inputs{
      {"x", MaceTensor({1, 2, 3, 4}, data, DataFormat::NHWC, IDT_INT32)}};
  std::map<std::string, MaceTensor> outputs;
  EXPECT_EQ(engine->Run(inputs, &outputs).code(),
            MaceStatus::MACE_INVALID_ARGS);
}

TEST(EngineApiTest, NullInputDataIsAnError) {
  auto engine = CreateEngine(PreluModel());
  std::map<std::string, MaceTensor> inputs{
      {"x", MaceTensor({1, 2, 3, 4}, nullptr)}};
  std::map<std::string, MaceTensor> outputs;
  EXPECT_EQ(engine->Run(inputs, &outputs).code(),
            MaceStatus::MACE_INVALID_ARGS);
}

TEST(EngineApiTest, OutputBufferOfWrongSizeIsAnError) {
  auto engine = CreateEngine(PreluModel());
  std::map<std::string, MaceTensor> inputs{
      {"x", MakeTensor({1, 2, 3, 4}, RandomFloats(24))}};
  std::map<std::string, MaceTensor> outputs{
      {"y", MakeTensor({1, 2, 3}, std::vector<float>(6))}};
  const MaceStatus status = engine->Run(inputs, &outputs);
  EXPECT_EQ(status.code(), MaceStatus::MACE_INVALID_ARGS);
  EXPECT_NE(status.information().find("'y'"), std::string::npos);
}

TEST(EngineApiTest, UnknownOutputNameIsAnError) {
  auto engine = CreateEngine(PreluModel());
  std::map<std::string, MaceTensor> inputs{
      {"x", MakeTensor({1, 2, 3, 4}, RandomFloats(24))}};
  std::map<std::string, MaceTensor> outputs{
      {"nope", MakeTensor({1}, std::vector<float>(1))}};
  EXPECT_EQ(engine->Run(inputs, &outputs).code(),
            MaceStatus::MACE_INVALID_ARGS);
}

TEST(EngineApiTest, NchwInputIsTransposedForNhwcModel) {
  auto engine = CreateEngine(PreluModel(/*input_format=*/1));
  const std::vector<float> nhwc = RandomFloats(24, -2, 2, 5);
  std::vector<float> nchw(24);
  for (int h = 0; h < 2; ++h)
    for (int w = 0; w < 3; ++w)
      for (int c = 0; c < 4; ++c) nchw[(c * 2 + h) * 3 + w] = nhwc[(h * 3 + w) * 4 + c];
  std::map<std::string, MaceTensor> inputs{
      {"x", MakeTensor({1, 4, 2, 3}, nchw, DataFormat::NCHW)}};
  std::map<std::string, MaceTensor> outputs;
  ASSERT_EQ(engine->Run(inputs, &outputs), MaceStatus::MACE_SUCCESS);
  ASSERT_EQ(outputs["y"].shape(), (std::vector<int64_t>{1, 2, 3, 4}));
  const std::vector<float> y = Values(outputs["y"]);
  for (int i = 0; i < 24; ++i) {
    EXPECT_NEAR(y[i], PreluReference(nhwc[i], i % 4), 1e-6);
  }
}

TEST(EngineApiTest, NchwOutputBufferReceivesTransposedResult) {
  auto engine = CreateEngine(PreluModel());
  const std::vector<float> x = RandomFloats(24, -2, 2, 6);
  std::map<std::string, MaceTensor> inputs{{"x", MakeTensor({1, 2, 3, 4}, x)}};
  std::map<std::string, MaceTensor> outputs{
      {"y", MakeTensor({1, 4, 2, 3}, std::vector<float>(24),
                       DataFormat::NCHW)}};
  ASSERT_EQ(engine->Run(inputs, &outputs), MaceStatus::MACE_SUCCESS);
  const std::vector<float> y = Values(outputs["y"]);
  for (int h = 0; h < 2; ++h)
    for (int w = 0; w < 3; ++w)
      for (int c = 0; c < 4; ++c)
        EXPECT_NEAR(y[(c * 2 + h) * 3 + w],
                    PreluReference(x[(h * 3 + w) * 4 + c], c), 1e-6);
}

TEST(EngineApiTest, HalfAndBFloat16WeightsMatchFloatWeights) {
  const std::vector<float> x = RandomFloats(24, -2, 2, 8);
  for (WeightStorage storage :
       {WeightStorage::kFloat16, WeightStorage::kBFloat16}) {
    auto engine = CreateEngine(PreluModel(1, 1, storage));
    std::map<std::string, MaceTensor> inputs{
        {"x", MakeTensor({1, 2, 3, 4}, x)}};
    std::map<std::string, MaceTensor> outputs;
    ASSERT_EQ(engine->Run(inputs, &outputs), MaceStatus::MACE_SUCCESS);
    const std::vector<float> y = Values(outputs["y"]);
    // The slopes are exactly representable in both 16-bit formats.
    for (int i = 0; i < 24; ++i) {
      EXPECT_NEAR(y[i], PreluReference(x[i], i % 4), 1e-6);
    }
  }
}

TEST(EngineApiTest, TutoredEnginesShareArenaAndBothRun) {
  const SerializedModel model = PreluModel();
  auto tutor = CreateEngine(model);
  auto student = CreateEngine(model, tutor.get());
  const std::vector<float> x = RandomFloats(24, -2, 2, 9);
  for (int round = 0; round < 3; ++round) {
    for (auto *engine : {tutor.get(), student.get()}) {
      std::map<std::string, MaceTensor> inputs{
          {"x", MakeTensor({1, 2, 3, 4}, x)}};
      std::map<std::string, MaceTensor> outputs;
      ASSERT_EQ(engine->Run(inputs, &outputs), MaceStatus::MACE_SUCCESS);
      EXPECT_NEAR(Values(outputs["y"])[5], PreluReference(x[5], 1), 1e-6);
    }
  }
}

TEST(EngineApiTest, RunAfterReleaseIntermediateBufferStillWorks) {
  auto engine = CreateEngine(PreluModel());
  const std::vector<float> x = RandomFloats(24, -2, 2, 10);
  for (int round = 0; round < 2; ++round) {
    std::map<std::string, MaceTensor> inputs{
        {"x", MakeTensor({1, 2, 3, 4}, x)}};
    std::map<std::string, MaceTensor> outputs;
    ASSERT_EQ(engine->Run(inputs, &outputs), MaceStatus::MACE_SUCCESS);
    EXPECT_NEAR(Values(outputs["y"])[7], PreluReference(x[7], 3), 1e-6);
    EXPECT_EQ(engine->ReleaseIntermediateBuffer(), MaceStatus::MACE_SUCCESS);
  }
}

TEST(EngineApiTest, RunMetadataHasOneEntryPerOp) {
  auto engine = CreateEngine(PreluModel());
  std::map<std::string, MaceTensor> inputs{
      {"x", MakeTensor({1, 2, 3, 4}, RandomFloats(24))}};
  std::map<std::string, MaceTensor> outputs;
  RunMetadata metadata;
  ASSERT_EQ(engine->Run(inputs, &outputs, &metadata),
            MaceStatus::MACE_SUCCESS);
  ASSERT_EQ(metadata.op_stats.size(), 2u);
  EXPECT_EQ(metadata.op_stats[0].operator_name, "tanh");
  EXPECT_EQ(metadata.op_stats[1].type, "Activation");
  EXPECT_LE(metadata.op_stats[0].stats.start_micros,
            metadata.op_stats[0].stats.end_micros);
  EXPECT_EQ(metadata.op_stats[1].output_shape[0],
            (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(EngineApiTest, PlannedPeakCoversIntermediates) {
  auto engine = CreateEngine(PreluModel());
  // h and y are 96 bytes each; the planner may put y over h (PRELU is
  // elementwise) but needs at least one buffer.
  EXPECT_GE(engine->planned_peak_bytes(), 96);
  EXPECT_LE(engine->planned_peak_bytes(), 2 * 128);
}

// A Pad whose output outgrows the machine: a clear error at load, not a
// process killed while the arena is mapped (found by scripts/fuzz_ops.sh
// with a stride of 2^20).
TEST(EngineApiTest, ArenaLargerThanTheMachineIsAnError) {
  const double physical = static_cast<double>(PhysicalMemoryBytes());
  ASSERT_GT(physical, 0.0);
  // Twice the memory in floats, as a square plane.
  const int64_t side = static_cast<int64_t>(std::sqrt(physical / 2)) + 1;
  if (static_cast<double>(side) * side * 4 > 0.5 * (int64_t{1} << 38)) {
    GTEST_SKIP() << "the machine's memory is near the largest tensor";
  }
  ModelBuilder builder("huge");
  builder.AddInput("x", {1, 2, 2, 1});
  OperatorDef *pad = builder.AddOp("Pad", "pad", {"x"}, {"y"});
  const int64_t grow = (side - 2) / 2 + 1;
  ModelBuilder::AddIntsArg(pad, "paddings", {0, 0, grow, grow, grow, grow,
                                             0, 0});
  builder.AddOutput("y", {});
  SerializedModel model;
  ASSERT_EQ(builder.Serialize(WeightStorage::kFloat32, &model.graph,
                              &model.weights),
            MaceStatus::MACE_SUCCESS);
  const MaceStatus status =
      TryCreate(model, MaceEngineConfig(DeviceType::CPU));
  EXPECT_EQ(status.code(), MaceStatus::MACE_OUT_OF_RESOURCES);
  EXPECT_NE(status.information().find("intermediate arena"),
            std::string::npos)
      << status.information();
}

TEST(EngineApiTest, GpuRuntimeIsReportedUnavailable) {
  const MaceStatus status =
      TryCreate(PreluModel(), MaceEngineConfig(DeviceType::GPU));
  EXPECT_EQ(status.code(), MaceStatus::MACE_UNSUPPORTED);
  EXPECT_NE(status.information().find("not available"), std::string::npos);
}

TEST(EngineApiTest, UnknownInputNodeAtCreationIsAnError) {
  const MaceStatus status =
      TryCreate(PreluModel(), MaceEngineConfig(DeviceType::CPU), {"input0"});
  EXPECT_EQ(status.code(), MaceStatus::MACE_INVALID_ARGS);
  EXPECT_NE(status.information().find("input0"), std::string::npos);
}

TEST(EngineApiTest, WeightsBufferIsBorrowedOnlyWhenCallerIsTold) {
  const SerializedModel model = PreluModel();
  std::string weights = model.weights;
  std::shared_ptr<MaceEngine> engine;
  bool unused = true;
  ASSERT_EQ(CreateMaceEngineFromProto(
                reinterpret_cast<const unsigned char *>(model.graph.data()),
                model.graph.size(),
                reinterpret_cast<const unsigned char *>(weights.data()),
                weights.size(), {"x"}, {"y"},
                MaceEngineConfig(DeviceType::CPU), &engine, &unused),
            MaceStatus::MACE_SUCCESS);
  EXPECT_FALSE(unused);  // fp32 slopes are used in place
}

TEST(EngineApiTest, IntermediateOutputCanBeRequested) {
  const SerializedModel model = PreluModel();
  std::shared_ptr<MaceEngine> engine;
  ASSERT_EQ(CreateMaceEngineFromProto(
                reinterpret_cast<const unsigned char *>(model.graph.data()),
                model.graph.size(),
                reinterpret_cast<const unsigned char *>(model.weights.data()),
                model.weights.size(), {"x"}, {"h", "y"},
                MaceEngineConfig(DeviceType::CPU), &engine),
            MaceStatus::MACE_SUCCESS);
  const std::vector<float> x = RandomFloats(24, -2, 2, 12);
  std::map<std::string, MaceTensor> inputs{{"x", MakeTensor({1, 2, 3, 4}, x)}};
  std::map<std::string, MaceTensor> outputs;
  ASSERT_EQ(engine->Run(inputs, &outputs), MaceStatus::MACE_SUCCESS);
  EXPECT_NEAR(Values(outputs["h"])[3], std::tanh(x[3]), 1e-6);
  EXPECT_NEAR(Values(outputs["y"])[3], PreluReference(x[3], 3), 1e-6);
}

}  // namespace
}  // namespace mace
