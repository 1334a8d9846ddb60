#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

class IdentityTest : public ::testing::TestWithParam<int> {};

TEST_P(IdentityTest, FloatOutputEqualsInput) {
  const std::vector<float> x = RandomFloats(2 * 5 * 3, -1, 1, 71);
  OpTester tester("Identity");
  tester.Input("x", {2, 5, 3}, x).Output("y").Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).shape, (std::vector<int64_t>{2, 5, 3}));
  EXPECT_EQ(tester.output(0).floats, x);
}

TEST_P(IdentityTest, Int32OutputEqualsInput) {
  const std::vector<int32_t> x = RandomInts(7, -100, 100, 72);
  OpTester tester("Identity");
  tester.InputInt("x", {7}, x).OutputInt("y").Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).ints, x);
}

TEST_P(IdentityTest, ConstantInputPassesThrough) {
  const std::vector<float> x = RandomFloats(6, -1, 1, 73);
  OpTester tester("Identity");
  tester.Constant("x", {3, 2}, x).Output("y").Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).floats, x);
}

INSTANTIATE_TEST_SUITE_P(Threads, IdentityTest, ::testing::Values(1, 2));

TEST(IdentityErrorTest, TwoInputsAreRejected) {
  OpTester tester("Identity", "id1");
  tester.Input("a", {2}, {1, 2}).Input("b", {2}, {1, 2}).Output("y");
  const MaceStatus status = tester.Run();
  EXPECT_EQ(status.code(), MaceStatus::MACE_INVALID_ARGS);
  EXPECT_NE(status.information().find("id1"), std::string::npos);
  EXPECT_NE(status.information().find("inputs"), std::string::npos);
}

}  // namespace
}  // namespace test
}  // namespace mace
