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

// out[o][k][i] = params[o][wrap(indices[k])][i].
template <typename T>
std::vector<T> GatherReference(const Shape &shape, const std::vector<T> &params,
                               const std::vector<int32_t> &indices, int axis) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= shape[i];
  for (size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
  std::vector<T> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (int32_t index : indices) {
      const int64_t k = index < 0 ? index + shape[axis] : index;
      for (int64_t i = 0; i < inner; ++i) {
        out.push_back(params[(o * shape[axis] + k) * inner + i]);
      }
    }
  }
  return out;
}

class GatherTest : public ::testing::TestWithParam<int> {};

TEST_P(GatherTest, Rank2IndicesOnAxis1) {
  const Shape shape = {3, 5, 4};
  const std::vector<float> params = RandomFloats(Product(shape), -1, 1, 121);
  const std::vector<int32_t> indices = {4, 0, -1, 2, 2, -5};
  for (bool constant : {false, true}) {
    OpTester tester("Gather");
    tester.Input("params", shape, params);
    if (constant) {
      tester.ConstantInt("indices", {2, 3}, indices);
    } else {
      tester.InputInt("indices", {2, 3}, indices);
    }
    tester.Output("y").Arg("axis", 1).Threads(GetParam());
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
    EXPECT_EQ(tester.output(0).shape, (Shape{3, 2, 3, 4}));
    EXPECT_EQ(tester.output(0).floats,
              GatherReference(shape, params, indices, 1));
  }
}

TEST_P(GatherTest, DefaultAxisZeroInt32ParamsAndScalarIndex) {
  const Shape shape = {7, 3};
  const std::vector<int32_t> params = RandomInts(21, -99, 99, 122);
  OpTester tester("Gather");
  tester.InputInt("params", shape, params)
      .InputInt("indices", {}, {5})
      .OutputInt("y")
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).shape, Shape{3});
  EXPECT_EQ(tester.output(0).ints, GatherReference(shape, params, {5}, 0));
}

TEST_P(GatherTest, LastAxisWithNegativeAxisArgument) {
  const Shape shape = {2, 3, 17};
  const std::vector<float> params = RandomFloats(Product(shape), -1, 1, 123);
  const std::vector<int32_t> indices = {16, 0, 8, -17, 3};
  OpTester tester("Gather");
  tester.Input("params", shape, params)
      .InputInt("indices", {5}, indices)
      .Output("y")
      .Arg("axis", -1)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).shape, (Shape{2, 3, 5}));
  EXPECT_EQ(tester.output(0).floats,
            GatherReference(shape, params, indices, 2));
}

TEST_P(GatherTest, ManySlicesSplitAcrossThreads) {
  const Shape shape = {64, 300};
  const std::vector<float> params = RandomFloats(Product(shape), -1, 1, 124);
  const std::vector<int32_t> indices = RandomInts(40, -64, 63, 125);
  OpTester tester("Gather");
  tester.Input("params", shape, params)
      .InputInt("indices", {40}, indices)
      .Output("y")
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).floats,
            GatherReference(shape, params, indices, 0));
}

INSTANTIATE_TEST_SUITE_P(Threads, GatherTest, ::testing::Values(1, 2));

MaceStatus RunExpectingError(OpTester *tester, const std::string &needle) {
  const MaceStatus status = tester->Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(needle), std::string::npos)
      << status.information();
  return status;
}

TEST(GatherErrorTest, RuntimeIndexOutOfRangeFailsInRun) {
  for (int32_t bad : {5, -6}) {
    OpTester tester("Gather", "gather1");
    tester.Input("params", {3, 5}, RandomFloats(15))
        .InputInt("indices", {3}, {0, bad, 1})
        .Output("y")
        .Arg("axis", 1);
    const MaceStatus status = RunExpectingError(&tester, "out of range");
    EXPECT_EQ(status.code(), MaceStatus::MACE_RUNTIME_ERROR);
    EXPECT_NE(status.information().find("gather1"), std::string::npos);
    EXPECT_NE(status.information().find(std::to_string(bad)),
              std::string::npos);
  }
}

TEST(GatherErrorTest, ConstantIndexOutOfRangeFailsAtInit) {
  OpTester tester("Gather");
  tester.Input("params", {3, 5}, RandomFloats(15))
      .ConstantInt("indices", {2}, {0, 3})
      .Output("y");
  const MaceStatus status = RunExpectingError(&tester, "out of range");
  EXPECT_EQ(status.code(), MaceStatus::MACE_INVALID_ARGS);
}

TEST(GatherErrorTest, AxisOutOfRangeIsRejected) {
  OpTester tester("Gather");
  tester.Input("params", {3, 5}, RandomFloats(15))
      .InputInt("indices", {1}, {0})
      .Output("y")
      .Arg("axis", 2);
  RunExpectingError(&tester, "'axis'");
}

TEST(GatherErrorTest, FloatIndicesAreRejected) {
  OpTester tester("Gather");
  tester.Input("params", {3, 5}, RandomFloats(15))
      .Input("indices", {1}, {0.0f})
      .Output("y");
  RunExpectingError(&tester, "input 1");
}

}  // namespace
}  // namespace test
}  // namespace mace
