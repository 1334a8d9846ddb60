#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

using Dims = std::vector<int64_t>;

// Reshape-like ops keep every value in row-major order; only the shape
// changes, so the reference is the input itself and the expected shape.
void ExpectSameValues(const OpTester &tester, const std::vector<float> &x,
                      const Dims &expected_shape) {
  EXPECT_EQ(tester.output(0).shape, expected_shape);
  EXPECT_TRUE(AllClose(tester.output(0).floats, ToDouble(x), 0, 0));
}

void ExpectError(const MaceStatus &status, const std::string &piece) {
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(piece), std::string::npos)
      << status.information();
}

class ReshapeTest : public ::testing::TestWithParam<int> {};

TEST_P(ReshapeTest, ArgShapeWithZeroAndMinusOne) {
  const Dims shape = {2, 5, 7, 3};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 31);
  OpTester tester("Reshape");
  tester.Input("x", shape, x)
      .Output("y")
      .ArgInts("shape", {0, -1, 3})
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  ExpectSameValues(tester, x, {2, 35, 3});
}

TEST_P(ReshapeTest, ConstantShapeInputCopiesDimAndInfers) {
  const Dims shape = {2, 5, 7, 3};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 32);
  OpTester tester("Reshape");
  tester.Input("x", shape, x)
      .ConstantInt("shape", {3}, {7, 0, -1})
      .Output("y")
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  ExpectSameValues(tester, x, {7, 5, 6});
}

TEST_P(ReshapeTest, Int32DataIsKept) {
  std::vector<int32_t> x(30);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(i) - 9;
  OpTester tester("Reshape");
  tester.InputInt("x", {5, 6}, x)
      .OutputInt("y")
      .ArgInts("shape", {-1, 2, 5})
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).shape, (Dims{3, 2, 5}));
  EXPECT_EQ(tester.output(0).ints, x);
}

TEST_P(ReshapeTest, SqueezeWithoutAxesDropsEveryOne) {
  const Dims shape = {1, 5, 1, 3, 1};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 33);
  OpTester tester("Squeeze");
  tester.Input("x", shape, x).Output("y").Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  ExpectSameValues(tester, x, {5, 3});
}

TEST_P(ReshapeTest, SqueezeListedAxesOnly) {
  const Dims shape = {1, 5, 1, 3, 1};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 34);
  OpTester tester("Squeeze");
  tester.Input("x", shape, x)
      .Output("y")
      .ArgInts("axis", {2, -1})
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  ExpectSameValues(tester, x, {1, 5, 3});
}

TEST_P(ReshapeTest, ExpandDimsTfAxes) {
  const Dims shape = {2, 3, 5};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 35);
  const std::vector<std::pair<int64_t, Dims>> cases = {{0, {1, 2, 3, 5}},
                                                       {3, {2, 3, 5, 1}},
                                                       {-1, {2, 3, 5, 1}},
                                                       {-4, {1, 2, 3, 5}},
                                                       {1, {2, 1, 3, 5}}};
  for (const auto &c : cases) {
    OpTester tester("ExpandDims");
    tester.Input("x", shape, x)
        .Output("y")
        .Arg("axis", c.first)
        .Threads(GetParam());
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS) << c.first;
    ExpectSameValues(tester, x, c.second);
  }
}

TEST_P(ReshapeTest, UnsqueezeOnnxAxes) {
  std::vector<int32_t> x(6);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(i * i);
  const std::vector<std::pair<Dims, Dims>> cases = {
      {{0, -1}, {1, 2, 3, 1}}, {{1, 3}, {2, 1, 3, 1}}, {{-2}, {2, 1, 3}}};
  for (const auto &c : cases) {
    OpTester tester("Unsqueeze");
    tester.InputInt("x", {2, 3}, x)
        .OutputInt("y")
        .ArgInts("axis", c.first)
        .Threads(GetParam());
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
    EXPECT_EQ(tester.output(0).shape, c.second);
    EXPECT_EQ(tester.output(0).ints, x);
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, ReshapeTest, ::testing::Values(1, 2));

MaceStatus RunReshape(const std::string &name, const Dims &target,
                      bool allow_zero = false) {
  OpTester tester("Reshape", name);
  tester.Input("x", {2, 3, 4}, RandomFloats(24))
      .Output("y")
      .ArgInts("shape", target);
  if (allow_zero) tester.Arg("allowzero", 1);
  return tester.Run();
}

TEST(ReshapeErrorTest, CountMismatchIsRejected) {
  ExpectError(RunReshape("r0", {5, 5}), "elements");
}

TEST(ReshapeErrorTest, TwoMinusOnesAreRejected) {
  ExpectError(RunReshape("r1", {-1, 2, -1}), "more than one -1");
}

TEST(ReshapeErrorTest, ZeroPastInputRankIsRejected) {
  ExpectError(RunReshape("r2", {2, 3, 4, 0}), "copies an input dim");
}

TEST(ReshapeErrorTest, AllowZeroMakesZeroLiteral) {
  ExpectError(RunReshape("r3", {0, 24}, true), "elements");
  EXPECT_EQ(RunReshape("r4", {4, 6}, true), MaceStatus::MACE_SUCCESS);
}

TEST(ReshapeErrorTest, NonConstantShapeIsRejected) {
  OpTester tester("Reshape", "r5");
  tester.Input("x", {2, 3}, RandomFloats(6))
      .InputInt("shape", {1}, {6})
      .Output("y");
  ExpectError(tester.Run(), "'shape'");
}

TEST(ReshapeErrorTest, MissingShapeIsRejected) {
  OpTester tester("Reshape", "r6");
  tester.Input("x", {2, 3}, RandomFloats(6)).Output("y");
  ExpectError(tester.Run(), "'shape'");
}

TEST(ReshapeErrorTest, SqueezeOfDimNotOneIsRejected) {
  OpTester tester("Squeeze", "sq");
  tester.Input("x", {1, 3}, RandomFloats(3)).Output("y").ArgInts("axis", {1});
  ExpectError(tester.Run(), "'axis'");
}

TEST(ReshapeErrorTest, ExpandDimsAxisOutOfRangeIsRejected) {
  OpTester tester("ExpandDims", "ed");
  tester.Input("x", {2, 3}, RandomFloats(6)).Output("y").Arg("axis", 3);
  ExpectError(tester.Run(), "'axis'");
}

TEST(ReshapeErrorTest, UnsqueezeRepeatedAxisIsRejected) {
  OpTester tester("Unsqueeze", "us");
  tester.Input("x", {2, 3}, RandomFloats(6))
      .Output("y")
      .ArgInts("axis", {0, -4});
  ExpectError(tester.Run(), "repeats");
}

}  // namespace
}  // namespace test
}  // namespace mace
