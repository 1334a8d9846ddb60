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

// Stacked output by coordinates: out[o][n][i] = inputs[n][o * inner + i],
// where axis splits the input shape into outer and inner parts.
template <typename T>
std::vector<T> StackReference(const Shape &shape,
                              const std::vector<std::vector<T>> &inputs,
                              int axis) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= shape[i];
  for (size_t i = axis; i < shape.size(); ++i) inner *= shape[i];
  std::vector<T> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (const std::vector<T> &input : inputs) {
      for (int64_t i = 0; i < inner; ++i) out.push_back(input[o * inner + i]);
    }
  }
  return out;
}

class StackTest : public ::testing::TestWithParam<int> {};

TEST_P(StackTest, EveryAxisIncludingNegativeLast) {
  const Shape shape = {2, 3, 5};
  std::vector<std::vector<float>> inputs;
  for (uint32_t i = 0; i < 3; ++i) {
    inputs.push_back(RandomFloats(Product(shape), -1, 1, 111 + i));
  }
  for (int axis : {-1, 0, 1, 2, 3, -4}) {
    const int normalized = axis < 0 ? axis + 4 : axis;
    OpTester tester("Stack");
    tester.Input("a", shape, inputs[0])
        .Input("b", shape, inputs[1])
        .Constant("c", shape, inputs[2])
        .Output("y")
        .Arg("axis", axis)
        .Threads(GetParam());
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
    Shape expected_shape = shape;
    expected_shape.insert(expected_shape.begin() + normalized, 3);
    EXPECT_EQ(tester.output(0).shape, expected_shape) << "axis " << axis;
    EXPECT_EQ(tester.output(0).floats,
              StackReference(shape, inputs, normalized))
        << "axis " << axis;
  }
}

TEST_P(StackTest, Int32ScalarsStackToVector) {
  OpTester tester("Stack");
  tester.InputInt("a", {}, {4})
      .ConstantInt("b", {}, {-2})
      .InputInt("c", {}, {9})
      .OutputInt("y")
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).shape, Shape{3});
  EXPECT_EQ(tester.output(0).ints, (std::vector<int32_t>{4, -2, 9}));
}

TEST_P(StackTest, UnstackSplitsAlongAxis) {
  const Shape shape = {2, 3, 5};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 115);
  OpTester tester("Unstack");
  tester.Input("x", shape, x)
      .Output("a")
      .Output("b")
      .Output("c")
      .Arg("axis", -2)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  for (int k = 0; k < 3; ++k) {
    std::vector<float> expected;
    for (int o = 0; o < 2; ++o) {
      for (int i = 0; i < 5; ++i) expected.push_back(x[(o * 3 + k) * 5 + i]);
    }
    EXPECT_EQ(tester.output(k).shape, (Shape{2, 5}));
    EXPECT_EQ(tester.output(k).floats, expected) << "output " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, StackTest, ::testing::Values(1, 2));

MaceStatus RunExpectingError(OpTester *tester, const std::string &needle) {
  const MaceStatus status = tester->Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(needle), std::string::npos)
      << status.information();
  return status;
}

TEST(StackErrorTest, DifferentShapesAreRejected) {
  OpTester tester("Stack", "stack1");
  tester.Input("a", {2, 3}, RandomFloats(6))
      .Input("b", {3, 2}, RandomFloats(6))
      .Output("y");
  const MaceStatus status = RunExpectingError(&tester, "input 1 'b'");
  EXPECT_NE(status.information().find("stack1"), std::string::npos);
}

TEST(StackErrorTest, AxisOutOfRangeIsRejected) {
  for (int axis : {3, -4}) {
    OpTester tester("Stack");
    tester.Input("a", {2, 3}, RandomFloats(6))
        .Input("b", {2, 3}, RandomFloats(6))
        .Output("y")
        .Arg("axis", axis);
    RunExpectingError(&tester, "'axis'");
  }
}

TEST(StackErrorTest, UnstackOutputCountMustMatchDim) {
  OpTester tester("Unstack", "unstack1");
  tester.Input("x", {2, 3}, RandomFloats(6))
      .Output("a")
      .Output("b")
      .Arg("axis", 1);
  const MaceStatus status = RunExpectingError(&tester, "outputs");
  EXPECT_NE(status.information().find("unstack1"), std::string::npos);
  OpTester axis("Unstack");
  axis.Input("x", {2, 3}, RandomFloats(6))
      .Output("a")
      .Output("b")
      .Arg("axis", 2);
  RunExpectingError(&axis, "'axis'");
}

}  // namespace
}  // namespace test
}  // namespace mace
