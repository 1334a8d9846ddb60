#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

class ShapeTest : public ::testing::TestWithParam<int> {};

TEST_P(ShapeTest, OutputHoldsInputDims) {
  const std::vector<std::vector<int64_t>> shapes = {
      {2, 3, 17}, {7}, {1, 5, 5, 3}, {}};
  for (const auto &shape : shapes) {
    OpTester tester("Shape");
    tester.Input("x", shape, RandomFloats(Product(shape), -1, 1, 81))
        .OutputInt("y")
        .Threads(GetParam());
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
    EXPECT_EQ(tester.output(0).shape,
              std::vector<int64_t>{static_cast<int64_t>(shape.size())});
    EXPECT_EQ(tester.output(0).ints,
              std::vector<int32_t>(shape.begin(), shape.end()));
  }
}

TEST_P(ShapeTest, Int32InputAndConstantInput) {
  OpTester runtime("Shape");
  runtime.InputInt("x", {4, 1}, {1, 2, 3, 4})
      .OutputInt("y")
      .Threads(GetParam());
  ASSERT_EQ(runtime.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(runtime.output(0).ints, (std::vector<int32_t>{4, 1}));
  OpTester constant("Shape");
  constant.Constant("x", {3, 2, 1}, RandomFloats(6))
      .OutputInt("y")
      .Threads(GetParam());
  ASSERT_EQ(constant.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(constant.output(0).ints, (std::vector<int32_t>{3, 2, 1}));
}

INSTANTIATE_TEST_SUITE_P(Threads, ShapeTest, ::testing::Values(1, 2));

TEST(ShapeErrorTest, TwoInputsAreRejected) {
  OpTester tester("Shape", "shape1");
  tester.Input("a", {2}, {1, 2}).Input("b", {2}, {1, 2}).OutputInt("y");
  const MaceStatus status = tester.Run();
  EXPECT_EQ(status.code(), MaceStatus::MACE_INVALID_ARGS);
  EXPECT_NE(status.information().find("shape1"), std::string::npos);
}

TEST(ShapeErrorTest, NchwDataFormatIsUnsupported) {
  OpTester tester("Shape");
  tester.Input("a", {1, 2, 2, 1}, {1, 2, 3, 4})
      .OutputInt("y")
      .Arg("data_format", 2);
  const MaceStatus status = tester.Run();
  EXPECT_EQ(status.code(), MaceStatus::MACE_UNSUPPORTED);
  EXPECT_NE(status.information().find("data_format"), std::string::npos);
}

}  // namespace
}  // namespace test
}  // namespace mace
