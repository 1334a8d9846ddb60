#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

using Shape = std::vector<int64_t>;

enum { kMean = 0, kMin = 1, kMax = 2, kProd = 3, kSum = 4 };

// Reference: scatter every input element into its output cell, in double.
// Returns the expected output shape through out_shape.
template <typename T>
std::vector<double> ReduceReference(const Shape &shape, const std::vector<T> &x,
                                    int type, std::vector<int64_t> axes,
                                    bool keepdims, Shape *out_shape) {
  const int rank = static_cast<int>(shape.size());
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes) reduced[a < 0 ? a + rank : a] = true;
  Shape full;  // output shape with reduced dims kept as 1
  out_shape->clear();
  for (int i = 0; i < rank; ++i) {
    full.push_back(reduced[i] ? 1 : shape[i]);
    if (!reduced[i]) out_shape->push_back(shape[i]);
    if (reduced[i] && keepdims) out_shape->push_back(1);
  }
  const int64_t outputs = Product(full);
  const int64_t per_output = Product(shape) / std::max<int64_t>(outputs, 1);
  std::vector<double> acc(outputs);
  for (double &v : acc) {
    v = type == kProd  ? 1.0
        : type == kMin ? std::numeric_limits<double>::infinity()
        : type == kMax ? -std::numeric_limits<double>::infinity()
                       : 0.0;
  }
  for (int64_t flat = 0; flat < Product(shape); ++flat) {
    int64_t rest = flat, out = 0, scale = 1;
    for (int i = rank - 1; i >= 0; --i) {
      const int64_t c = rest % shape[i];
      rest /= shape[i];
      if (!reduced[i]) out += c * scale;
      scale *= full[i];
    }
    const double v = static_cast<double>(x[flat]);
    switch (type) {
      case kMin:
        acc[out] = std::min(acc[out], v);
        break;
      case kMax:
        acc[out] = std::max(acc[out], v);
        break;
      case kProd:
        acc[out] *= v;
        break;
      default:
        acc[out] += v;
        break;
    }
  }
  if (type == kMean) {
    for (double &v : acc) v /= static_cast<double>(per_output);
  }
  return acc;
}

class ReduceTest : public ::testing::TestWithParam<int> {
 protected:
  // Reduces float x of `shape` (no axis argument when axes is empty) and
  // checks the output against the float64 reference.
  void ExpectMatchesReference(const Shape &shape, const std::vector<float> &x,
                              int type, const std::vector<int64_t> &axes,
                              bool keepdims) {
    OpTester tester("Reduce");
    tester.Input("x", shape, x)
        .Output("y")
        .Arg("reduce_type", type)
        .Arg("keepdims", keepdims)
        .Threads(GetParam());
    if (!axes.empty()) tester.ArgInts("axis", axes);
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
    Shape expected_shape;
    const std::vector<double> expected =
        ReduceReference(shape, x, type, axes, keepdims, &expected_shape);
    const std::string label = "shape " + ::testing::PrintToString(shape) +
                              " type " + std::to_string(type) + " axes " +
                              ::testing::PrintToString(axes) + " keepdims " +
                              std::to_string(keepdims);
    EXPECT_EQ(tester.output(0).shape, expected_shape) << label;
    EXPECT_TRUE(AllClose(tester.output(0).floats, expected)) << label;
  }
};

TEST_P(ReduceTest, EveryTypeOverSeveralAxisSetsMatchesReference) {
  const Shape shape = {2, 3, 4, 5};
  const std::vector<std::vector<int64_t>> axis_sets = {
      {1}, {0, 2}, {-1}, {1, 2, 3}, {3, 1}, {0}, {}, {0, 1, 2, 3}, {2, -4}};
  for (int type = kMean; type <= kSum; ++type) {
    // PROD over up to 120 values: keep them near 1.
    const std::vector<float> x =
        type == kProd ? RandomFloats(Product(shape), 0.8f, 1.25f, 41)
                      : RandomFloats(Product(shape), -2.0f, 2.0f, 42);
    for (const auto &axes : axis_sets) {
      for (bool keepdims : {false, true}) {
        ExpectMatchesReference(shape, x, type, axes, keepdims);
      }
    }
  }
}

TEST_P(ReduceTest, SizeOneDimsAndOddShapes) {
  const Shape shape = {1, 7, 1, 17};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 43);
  for (const std::vector<int64_t> &axes :
       std::vector<std::vector<int64_t>>{{0, 1}, {2}, {1, 3}, {0, 2}}) {
    ExpectMatchesReference(shape, x, kMean, axes, false);
  }
}

TEST_P(ReduceTest, LargeTensorSplitsOutputsAcrossThreads) {
  const Shape shape = {8, 33, 65};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 46);
  for (const std::vector<int64_t> &axes :
       std::vector<std::vector<int64_t>>{{1}, {2}, {0}}) {
    ExpectMatchesReference(shape, x, kSum, axes, false);
  }
}

// A channels-last global pool (the last dim kept, its neighbours' inputs
// contiguous): 100 channels, one block of 64 and a partial one; and a
// reduce of the middle dim only.
TEST_P(ReduceTest, ChannelsLastPoolingMatchesReference) {
  const Shape shape = {2, 7, 5, 100};
  for (int type = kMean; type <= kSum; ++type) {
    const std::vector<float> x =
        type == kProd ? RandomFloats(Product(shape), 0.9f, 1.1f, 47)
                      : RandomFloats(Product(shape), -2.0f, 2.0f, 48);
    for (const std::vector<int64_t> &axes :
         std::vector<std::vector<int64_t>>{{1, 2}, {2}, {0, 1, 2}}) {
      ExpectMatchesReference(shape, x, type, axes, false);
    }
  }
}

TEST_P(ReduceTest, DefaultTypeIsMeanOverAllAxes) {
  const std::vector<float> x = RandomFloats(12, -1, 1, 44);
  OpTester tester("Reduce");
  tester.Input("x", {3, 4}, x).Output("y").Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  double sum = 0;
  for (float v : x) sum += v;
  EXPECT_EQ(tester.output(0).shape, Shape{});
  EXPECT_TRUE(AllClose(tester.output(0).floats, {sum / 12}));
}

TEST_P(ReduceTest, Int32TypesMatchIntegerReference) {
  // {2, 3, 4, 9}: its last dim kept by {0, 2}, wide enough for the
  // channels-last loop.
  for (const Shape &shape : {Shape{2, 3, 4, 5}, Shape{2, 3, 4, 9}}) {
    const std::vector<int32_t> x = RandomInts(Product(shape), -5, 5, 45);
    for (int type = kMean; type <= kSum; ++type) {
      for (const std::vector<int64_t> &axes :
           std::vector<std::vector<int64_t>>{{0, 2}, {3}, {}}) {
        if (type == kProd && axes.empty()) continue;  // would overflow
        OpTester tester("Reduce");
        tester.InputInt("x", shape, x)
            .OutputInt("y")
            .Arg("reduce_type", type)
            .Arg("keepdims", 1)
            .Threads(GetParam());
        if (!axes.empty()) tester.ArgInts("axis", axes);
        ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
        Shape expected_shape;
        std::vector<double> expected =
            ReduceReference(shape, x, type, axes, true, &expected_shape);
        std::vector<int32_t> expected_ints;
        for (double v : expected) {
          expected_ints.push_back(static_cast<int32_t>(std::trunc(v)));
        }
        EXPECT_EQ(tester.output(0).shape, expected_shape);
        EXPECT_EQ(tester.output(0).ints, expected_ints)
            << "type " << type << " axes " << ::testing::PrintToString(axes);
      }
    }
  }
}

TEST(ReduceInt32Test, MeanTruncatesTowardZero) {
  OpTester tester("Reduce");
  tester.InputInt("x", {2, 2}, {-3, -4, 3, 4})
      .OutputInt("y")
      .Arg("reduce_type", kMean)
      .ArgInts("axis", {1});
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).ints, (std::vector<int32_t>{-3, 3}));
}

INSTANTIATE_TEST_SUITE_P(Threads, ReduceTest, ::testing::Values(1, 2));

MaceStatus RunExpectingError(OpTester *tester, const std::string &needle) {
  const MaceStatus status = tester->Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(needle), std::string::npos)
      << status.information();
  return status;
}

TEST(ReduceErrorTest, DuplicateAxisIsRejected) {
  OpTester tester("Reduce", "r1");
  tester.Input("x", {2, 3, 4}, RandomFloats(24))
      .Output("y")
      .ArgInts("axis", {1, -2});
  const MaceStatus status = RunExpectingError(&tester, "'axis'");
  EXPECT_NE(status.information().find("r1"), std::string::npos);
}

TEST(ReduceErrorTest, AxisOutOfRangeIsRejected) {
  for (int64_t axis : {3, -4}) {
    OpTester tester("Reduce");
    tester.Input("x", {2, 3, 4}, RandomFloats(24))
        .Output("y")
        .ArgInts("axis", {axis});
    RunExpectingError(&tester, "'axis'");
  }
}

TEST(ReduceErrorTest, UnknownReduceTypeIsRejected) {
  OpTester tester("Reduce");
  tester.Input("x", {2, 3}, RandomFloats(6)).Output("y").Arg("reduce_type", 5);
  RunExpectingError(&tester, "reduce_type");
}

TEST(ReduceErrorTest, AxisGivenAsStringIsRejected) {
  OpTester tester("Reduce");
  tester.Input("x", {2, 3}, RandomFloats(6)).Output("y").ArgString("axis", "1");
  RunExpectingError(&tester, "'axis'");
}

TEST(ReduceErrorTest, NchwDataFormatIsUnsupported) {
  OpTester tester("Reduce");
  tester.Input("x", {1, 2, 2, 3}, RandomFloats(12))
      .Output("y")
      .ArgInts("axis", {1})
      .Arg("data_format", 2);
  EXPECT_EQ(RunExpectingError(&tester, "data_format").code(),
            MaceStatus::MACE_UNSUPPORTED);
}

}  // namespace
}  // namespace test
}  // namespace mace
