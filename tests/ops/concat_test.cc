#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

using Shape = std::vector<int64_t>;

// Reference concatenation by coordinates: output element (o, k, i) comes
// from the input whose axis range holds k.
template <typename T>
std::vector<T> ConcatReference(const std::vector<Shape> &shapes,
                               const std::vector<std::vector<T>> &inputs,
                               int axis) {
  int64_t outer = 1, inner = 1, total = 0;
  for (int i = 0; i < axis; ++i) outer *= shapes[0][i];
  for (size_t i = axis + 1; i < shapes[0].size(); ++i) inner *= shapes[0][i];
  for (const Shape &s : shapes) total += s[axis];
  std::vector<T> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < total; ++k) {
      int64_t which = 0, local = k;
      while (local >= shapes[which][axis]) local -= shapes[which++][axis];
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t n = shapes[which][axis];
        out.push_back(inputs[which][(o * n + local) * inner + i]);
      }
    }
  }
  return out;
}

class ConcatTest : public ::testing::TestWithParam<int> {};

TEST_P(ConcatTest, ThreeFloatInputsOnMiddleAxis) {
  const std::vector<Shape> shapes = {{2, 3, 4, 5}, {2, 7, 4, 5}, {2, 1, 4, 5}};
  std::vector<std::vector<float>> inputs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    inputs.push_back(RandomFloats(Product(shapes[i]), -1, 1, 90 + i));
  }
  for (int axis : {1, -3}) {
    OpTester tester("Concat");
    tester.Input("a", shapes[0], inputs[0])
        .Constant("b", shapes[1], inputs[1])
        .Input("c", shapes[2], inputs[2])
        .Output("y")
        .Arg("axis", axis)
        .Threads(GetParam());
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
    EXPECT_EQ(tester.output(0).shape, (Shape{2, 11, 4, 5}));
    EXPECT_EQ(tester.output(0).floats, ConcatReference(shapes, inputs, 1));
  }
}

TEST_P(ConcatTest, Int32InputsOnLastAxis) {
  const std::vector<Shape> shapes = {{3, 2}, {3, 5}, {3, 0}};
  const std::vector<std::vector<int32_t>> inputs = {
      RandomInts(6, -9, 9, 94), RandomInts(15, -9, 9, 95), {}};
  OpTester tester("Concat");
  tester.InputInt("a", shapes[0], inputs[0])
      .InputInt("b", shapes[1], inputs[1])
      .ConstantInt("c", shapes[2], inputs[2])
      .OutputInt("y")
      .Arg("axis", -1)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).shape, (Shape{3, 7}));
  EXPECT_EQ(tester.output(0).ints, ConcatReference(shapes, inputs, 1));
}

TEST_P(ConcatTest, DefaultAxisIsZeroAndOneInputCopies) {
  const std::vector<float> a = RandomFloats(6, -1, 1, 96);
  const std::vector<float> b = RandomFloats(3, -1, 1, 97);
  OpTester tester("Concat");
  tester.Input("a", {2, 3}, a)
      .Input("b", {1, 3}, b)
      .Output("y")
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  std::vector<float> expected = a;
  expected.insert(expected.end(), b.begin(), b.end());
  EXPECT_EQ(tester.output(0).shape, (Shape{3, 3}));
  EXPECT_EQ(tester.output(0).floats, expected);
  OpTester single("Concat");
  single.Input("a", {2, 3}, a).Output("y").Arg("axis", 1).Threads(GetParam());
  ASSERT_EQ(single.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(single.output(0).floats, a);
}

TEST_P(ConcatTest, ManyRowsSplitAcrossThreads) {
  const std::vector<Shape> shapes = {{600, 7}, {600, 9}};
  const std::vector<std::vector<float>> inputs = {
      RandomFloats(4200, -1, 1, 98), RandomFloats(5400, -1, 1, 99)};
  OpTester tester("Concat");
  tester.Input("a", shapes[0], inputs[0])
      .Input("b", shapes[1], inputs[1])
      .Output("y")
      .Arg("axis", 1)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).floats, ConcatReference(shapes, inputs, 1));
}

INSTANTIATE_TEST_SUITE_P(Threads, ConcatTest, ::testing::Values(1, 2));

MaceStatus RunExpectingError(OpTester *tester, const std::string &needle) {
  const MaceStatus status = tester->Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(needle), std::string::npos)
      << status.information();
  return status;
}

TEST(ConcatErrorTest, MismatchedDimOutsideAxisIsRejected) {
  OpTester tester("Concat", "cat1");
  tester.Input("a", {2, 3, 4}, RandomFloats(24))
      .Input("b", {2, 5, 3}, RandomFloats(30))
      .Output("y")
      .Arg("axis", 1);
  const MaceStatus status = RunExpectingError(&tester, "input 1 'b'");
  EXPECT_NE(status.information().find("cat1"), std::string::npos);
}

TEST(ConcatErrorTest, RankMismatchIsRejected) {
  OpTester tester("Concat");
  tester.Input("a", {2, 3}, RandomFloats(6))
      .Input("b", {2, 3, 1}, RandomFloats(6))
      .Output("y")
      .Arg("axis", 1);
  RunExpectingError(&tester, "input 1");
}

TEST(ConcatErrorTest, AxisOutOfRangeIsRejected) {
  OpTester tester("Concat");
  tester.Input("a", {2, 3}, RandomFloats(6))
      .Input("b", {2, 3}, RandomFloats(6))
      .Output("y")
      .Arg("axis", 2);
  RunExpectingError(&tester, "'axis'");
}

TEST(ConcatErrorTest, MixedDtypesAreRejected) {
  OpTester tester("Concat");
  tester.Input("a", {2}, {1, 2}).InputInt("b", {2}, {1, 2}).Output("y");
  RunExpectingError(&tester, "input 1");
}

TEST(ConcatErrorTest, ScalarInputsAreRejected) {
  OpTester tester("Concat");
  tester.Input("a", {}, {1}).Input("b", {}, {2}).Output("y");
  RunExpectingError(&tester, "'axis'");
}

}  // namespace
}  // namespace test
}  // namespace mace
