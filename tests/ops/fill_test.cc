#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

class FillTest : public ::testing::TestWithParam<int> {};

TEST_P(FillTest, RuntimeFloatValueFillsConstantShape) {
  OpTester tester("Fill");
  tester.ConstantInt("shape", {3}, {2, 3, 17})
      .Input("value", {1}, {1.5f})
      .Output("y")
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).shape, (std::vector<int64_t>{2, 3, 17}));
  EXPECT_EQ(tester.output(0).floats, std::vector<float>(102, 1.5f));
}

TEST_P(FillTest, LargeOutputSplitsAcrossThreads) {
  OpTester tester("Fill");
  tester.ConstantInt("shape", {2}, {301, 170})
      .Input("value", {1}, {-0.25f})
      .Output("y")
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).floats, std::vector<float>(301 * 170, -0.25f));
}

TEST_P(FillTest, Int32ValueGivesInt32Output) {
  OpTester tester("Fill");
  tester.ConstantInt("shape", {2}, {5, 1})
      .InputInt("value", {}, {-7})
      .OutputInt("y")
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).shape, (std::vector<int64_t>{5, 1}));
  EXPECT_EQ(tester.output(0).ints, std::vector<int32_t>(5, -7));
}

TEST_P(FillTest, AllConstantInputsAndEmptyShapeGiveScalar) {
  OpTester tester("Fill");
  tester.ConstantInt("shape", {0}, {})
      .Constant("value", {1}, {2.25f})
      .Output("y")
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).shape, std::vector<int64_t>{});
  EXPECT_EQ(tester.output(0).floats, std::vector<float>{2.25f});
}

INSTANTIATE_TEST_SUITE_P(Threads, FillTest, ::testing::Values(1, 2));

MaceStatus RunExpectingError(OpTester *tester, const std::string &needle) {
  const MaceStatus status = tester->Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(needle), std::string::npos)
      << status.information();
  return status;
}

TEST(FillErrorTest, RuntimeShapeIsUnsupported) {
  OpTester tester("Fill", "fill1");
  tester.InputInt("shape", {2}, {2, 2}).Input("value", {1}, {1.0f}).Output("y");
  const MaceStatus status = RunExpectingError(&tester, "shape");
  EXPECT_NE(status.information().find("fill1"), std::string::npos);
}

TEST(FillErrorTest, NegativeDimIsRejected) {
  OpTester tester("Fill");
  tester.ConstantInt("shape", {2}, {2, -1})
      .Input("value", {1}, {1.0f})
      .Output("y");
  RunExpectingError(&tester, "shape");
}

TEST(FillErrorTest, ValueMustHoldOneElement) {
  OpTester tester("Fill");
  tester.ConstantInt("shape", {1}, {3})
      .Input("value", {2}, {1.0f, 2.0f})
      .Output("y");
  RunExpectingError(&tester, "value");
}

TEST(FillErrorTest, ShapeMustBeInt32Rank1) {
  OpTester tester("Fill");
  tester.Constant("shape", {1}, {3.0f}).Input("value", {1}, {1.0f}).Output("y");
  RunExpectingError(&tester, "input 0");
  OpTester rank2("Fill");
  rank2.ConstantInt("shape", {1, 1}, {3})
      .Input("value", {1}, {1.0f})
      .Output("y");
  RunExpectingError(&rank2, "rank");
}

}  // namespace
}  // namespace test
}  // namespace mace
