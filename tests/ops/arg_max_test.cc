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

// Index of the best value along `axis` for every other coordinate; first
// index on ties unless `last`.
template <typename T>
std::vector<int32_t> ArgReference(const Shape &shape, const std::vector<T> &x,
                                  int axis, bool argmin, bool last) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= shape[i];
  for (size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
  const int64_t n = shape[axis];
  std::vector<int32_t> result;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int32_t best = 0;
      for (int64_t k = 1; k < n; ++k) {
        const double v = x[(o * n + k) * inner + i];
        const double b = x[(o * n + best) * inner + i];
        const bool better =
            argmin ? (v < b || (last && v == b)) : (v > b || (last && v == b));
        if (better) best = static_cast<int32_t>(k);
      }
      result.push_back(best);
    }
  }
  return result;
}

Shape ReducedShape(Shape shape, int axis, bool keepdims) {
  if (keepdims) {
    shape[axis] = 1;
  } else {
    shape.erase(shape.begin() + axis);
  }
  return shape;
}

class ArgMaxTest : public ::testing::TestWithParam<int> {};

TEST_P(ArgMaxTest, EveryAxisWithAndWithoutKeepdimsMatchesReference) {
  const Shape shape = {2, 5, 7, 3};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 51);
  for (int axis = -1; axis < 4; ++axis) {
    const int normalized = axis < 0 ? axis + 4 : axis;
    for (bool keepdims : {false, true}) {
      for (bool argmin : {false, true}) {
        OpTester tester("ArgMax");
        tester.Input("x", shape, x)
            .OutputInt("y")
            .Arg("axis", axis)
            .Arg("keepdims", keepdims)
            .Arg("argmin", argmin)
            .Threads(GetParam());
        ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
        EXPECT_EQ(tester.output(0).shape,
                  ReducedShape(shape, normalized, keepdims));
        EXPECT_EQ(tester.output(0).ints,
                  ArgReference(shape, x, normalized, argmin, false))
            << "axis " << axis << " argmin " << argmin;
      }
    }
  }
}

TEST_P(ArgMaxTest, TiesGoToFirstIndexOrLastWhenAsked) {
  const Shape shape = {3, 17, 5};
  std::vector<float> x;
  for (int32_t v : RandomInts(Product(shape), 0, 2, 52)) x.push_back(v);
  for (bool argmin : {false, true}) {
    for (bool last : {false, true}) {
      OpTester tester("ArgMax");
      tester.Input("x", shape, x)
          .OutputInt("y")
          .Arg("axis", 1)
          .Arg("argmin", argmin)
          .Arg("select_last_index", last)
          .Threads(GetParam());
      ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
      EXPECT_EQ(tester.output(0).ints, ArgReference(shape, x, 1, argmin, last))
          << "argmin " << argmin << " last " << last;
    }
  }
  OpTester tie("ArgMax");
  tie.Input("x", {4}, {1.0f, 3.0f, 3.0f, -1.0f}).OutputInt("y");
  ASSERT_EQ(tie.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tie.output(0).ints, std::vector<int32_t>{1});
  EXPECT_EQ(tie.output(0).shape, Shape{});
}

TEST_P(ArgMaxTest, LargeTensorSplitsAcrossThreads) {
  const Shape shape = {16, 40, 33};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 54);
  OpTester tester("ArgMax");
  tester.Input("x", shape, x).OutputInt("y").Arg("axis", 1).Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).ints, ArgReference(shape, x, 1, false, false));
}

TEST_P(ArgMaxTest, AxisFromConstantInputAndInt32Data) {
  const Shape shape = {4, 6, 3};
  const std::vector<int32_t> x = RandomInts(Product(shape), -50, 50, 53);
  OpTester tester("ArgMax");
  tester.InputInt("x", shape, x)
      .ConstantInt("axis", {}, {-2})
      .OutputInt("y")
      .Arg("keepdims", 1)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).shape, (Shape{4, 1, 3}));
  EXPECT_EQ(tester.output(0).ints, ArgReference(shape, x, 1, false, false));
}

INSTANTIATE_TEST_SUITE_P(Threads, ArgMaxTest, ::testing::Values(1, 2));

MaceStatus RunExpectingError(OpTester *tester, const std::string &needle) {
  const MaceStatus status = tester->Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(needle), std::string::npos)
      << status.information();
  return status;
}

TEST(ArgMaxErrorTest, AxisOutOfRangeIsRejected) {
  OpTester tester("ArgMax", "am1");
  tester.Input("x", {2, 3}, RandomFloats(6)).OutputInt("y").Arg("axis", 2);
  const MaceStatus status = RunExpectingError(&tester, "'axis'");
  EXPECT_NE(status.information().find("am1"), std::string::npos);
  OpTester from_input("ArgMax");
  from_input.Input("x", {2, 3}, RandomFloats(6))
      .ConstantInt("axis", {1}, {-3})
      .OutputInt("y");
  RunExpectingError(&from_input, "axis input");
}

TEST(ArgMaxErrorTest, AxisInputMustBeOneConstantValue) {
  OpTester runtime("ArgMax");
  runtime.Input("x", {2, 3}, RandomFloats(6))
      .InputInt("axis", {1}, {0})
      .OutputInt("y");
  RunExpectingError(&runtime, "'axis'");
  OpTester two("ArgMax");
  two.Input("x", {2, 3}, RandomFloats(6))
      .ConstantInt("axis", {2}, {0, 1})
      .OutputInt("y");
  RunExpectingError(&two, "one value");
}

TEST(ArgMaxErrorTest, ScalarInputIsRejected) {
  OpTester tester("ArgMax");
  tester.Input("x", {}, {1.0f}).OutputInt("y");
  RunExpectingError(&tester, "axis");
}

}  // namespace
}  // namespace test
}  // namespace mace
