#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mace/model/model_builder.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

constexpr int kFloat = 1;  // DataType DT_FLOAT
constexpr int kInt32 = 4;  // DataType DT_INT32

class CastTest : public ::testing::TestWithParam<int> {};

TEST_P(CastTest, FloatToInt32TruncatesTowardZero) {
  const std::vector<float> x = {2.7f, -2.7f, 0.5f,        -0.5f,
                                3.0f, -3.0f, 0.0f,        -0.0f,
                                1e9f, -1e9f, 0.99999994f, -1.9999999f};
  OpTester tester("Cast");
  tester.Input("x", {2, 6}, x)
      .OutputInt("y")
      .Arg("T", kInt32)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).shape, (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(tester.output(0).ints,
            (std::vector<int32_t>{2, -2, 0, 0, 3, -3, 0, 0, 1000000000,
                                  -1000000000, 0, -1}));
}

TEST_P(CastTest, RandomFloatsMatchTruncation) {
  const std::vector<float> x = RandomFloats(3 * 17 * 5, -100, 100, 61);
  OpTester tester("Cast");
  tester.Input("x", {3, 17, 5}, x)
      .OutputInt("y")
      .Arg("T", kInt32)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  std::vector<int32_t> expected;
  for (float v : x) expected.push_back(static_cast<int32_t>(std::trunc(v)));
  EXPECT_EQ(tester.output(0).ints, expected);
}

TEST_P(CastTest, LargeInt32TensorSplitsAcrossThreads) {
  const std::vector<int32_t> x = RandomInts(20000, -100000, 100000, 63);
  OpTester tester("Cast");
  tester.InputInt("x", {20000}, x)
      .Output("y")
      .Arg("T", kFloat)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).floats, std::vector<float>(x.begin(), x.end()));
}

TEST_P(CastTest, OutOfRangeSaturatesAndNanBecomesZero) {
  const float inf = std::numeric_limits<float>::infinity();
  OpTester tester("Cast");
  tester.Input("x", {5}, {3e9f, -3e9f, inf, -inf, std::nanf("")})
      .OutputInt("y")
      .Arg("T", kInt32)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  const int32_t max = std::numeric_limits<int32_t>::max();
  const int32_t min = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(tester.output(0).ints,
            (std::vector<int32_t>{max, min, max, min, 0}));
}

TEST_P(CastTest, Int32ToFloatRoundsToNearest) {
  OpTester tester("Cast");
  tester.InputInt("x", {5}, {0, -7, 16777217, 2147483647, -2147483647 - 1})
      .Output("y")
      .Arg("T", kFloat)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).floats,
            (std::vector<float>{0.0f, -7.0f, 16777216.0f, 2147483648.0f,
                                -2147483648.0f}));
}

TEST_P(CastTest, SameTypeCopies) {
  const std::vector<float> x = RandomFloats(10, -1, 1, 62);
  OpTester tester("Cast");
  tester.Input("x", {2, 5}, x).Output("y").Arg("T", kFloat).Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).floats, x);
}

// OpTester cannot set OperatorDef.output_type, so this builds the model
// itself. output_type(0) wins over argument T.
TEST(CastOutputTypeTest, OutputTypeFieldChoosesTheType) {
  ModelBuilder builder("cast_model");
  OperatorDef *op = builder.AddOp("Cast", "cast", {"x"}, {"y"});
  op->add_output_type(DT_INT32);
  ModelBuilder::AddIntArg(op, "T", kFloat);
  builder.AddInput("x", {3}, DT_FLOAT, 0);
  builder.AddOutput("y", {3}, DT_INT32, 0);
  std::string graph, weights;
  ASSERT_EQ(builder.Serialize(WeightStorage::kFloat32, &graph, &weights),
            MaceStatus::MACE_SUCCESS);
  std::shared_ptr<MaceEngine> engine;
  ASSERT_EQ(
      CreateMaceEngineFromProto(
          reinterpret_cast<const unsigned char *>(graph.data()), graph.size(),
          reinterpret_cast<const unsigned char *>(weights.data()),
          weights.size(), {"x"}, {"y"}, MaceEngineConfig(DeviceType::CPU),
          &engine),
      MaceStatus::MACE_SUCCESS);
  std::shared_ptr<void> x(new float[3]{2.7f, -2.7f, 9.9f},
                          std::default_delete<float[]>());
  std::map<std::string, MaceTensor> inputs = {
      {"x", MaceTensor({3}, x, DataFormat::NONE, IDT_FLOAT)}};
  std::map<std::string, MaceTensor> outputs;
  ASSERT_EQ(engine->Run(inputs, &outputs), MaceStatus::MACE_SUCCESS);
  const MaceTensor &y = outputs.at("y");
  ASSERT_EQ(y.data_type(), IDT_INT32);
  const int32_t *values = y.data<int32_t>().get();
  EXPECT_EQ(std::vector<int32_t>(values, values + 3),
            (std::vector<int32_t>{2, -2, 9}));
}

INSTANTIATE_TEST_SUITE_P(Threads, CastTest, ::testing::Values(1, 2));

MaceStatus RunExpectingError(OpTester *tester, const std::string &needle) {
  const MaceStatus status = tester->Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(needle), std::string::npos)
      << status.information();
  return status;
}

TEST(CastErrorTest, MissingOutputTypeIsRejected) {
  OpTester tester("Cast", "cast1");
  tester.Input("x", {2}, {1, 2}).Output("y");
  const MaceStatus status = RunExpectingError(&tester, "'T'");
  EXPECT_NE(status.information().find("cast1"), std::string::npos);
}

TEST(CastErrorTest, UnsupportedOutputTypeIsRejected) {
  for (int64_t type : std::vector<int64_t>{3, 0, 99, int64_t{1} << 33}) {
    OpTester tester("Cast");
    tester.Input("x", {2}, {1, 2}).Output("y").Arg("T", type);
    EXPECT_EQ(RunExpectingError(&tester, "output type").code(),
              MaceStatus::MACE_UNSUPPORTED);
  }
}

TEST(CastErrorTest, TypeGivenAsStringIsRejected) {
  OpTester tester("Cast");
  tester.Input("x", {2}, {1, 2}).Output("y").ArgString("T", "int32");
  RunExpectingError(&tester, "'T'");
}

}  // namespace
}  // namespace test
}  // namespace mace
