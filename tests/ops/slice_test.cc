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

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Indices an ONNX slice visits along one axis, straight from the spec.
std::vector<int64_t> OnnxIndices(int64_t start, int64_t end, int64_t step,
                                 int64_t dim) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  std::vector<int64_t> out;
  if (step > 0) {
    start = std::max<int64_t>(0, std::min(start, dim));
    end = std::max<int64_t>(0, std::min(end, dim));
    for (int64_t i = start; i < end; i += step) out.push_back(i);
  } else {
    start = std::max<int64_t>(0, std::min(start, dim - 1));
    end = std::max<int64_t>(-1, std::min(end, dim - 1));
    for (int64_t i = start; i > end; i += step) out.push_back(i);
  }
  return out;
}

// x (row-major, `shape`) at every combination of the per-axis indices.
template <typename T>
std::vector<double> GatherGrid(const std::vector<T> &x,
                               const std::vector<int64_t> &shape,
                               const std::vector<std::vector<int64_t>> &idx,
                               std::vector<int64_t> *out_shape) {
  const size_t rank = shape.size();
  out_shape->clear();
  int64_t total = 1;
  for (const auto &v : idx) {
    out_shape->push_back(static_cast<int64_t>(v.size()));
    total *= static_cast<int64_t>(v.size());
  }
  std::vector<double> out;
  std::vector<int64_t> pos(rank, 0);
  for (int64_t n = 0; n < total; ++n) {
    int64_t offset = 0;
    for (size_t k = 0; k < rank; ++k)
      offset = offset * shape[k] + idx[k][pos[k]];
    out.push_back(static_cast<double>(x[offset]));
    for (int k = static_cast<int>(rank) - 1; k >= 0; --k) {
      if (++pos[k] < static_cast<int64_t>(idx[k].size())) break;
      pos[k] = 0;
    }
  }
  return out;
}

std::vector<double> Widen(const std::vector<int32_t> &v) {
  return std::vector<double>(v.begin(), v.end());
}

struct SliceCase {
  std::vector<int64_t> starts, ends, axes, steps;  // axes/steps may be empty
};

class SliceTest : public ::testing::TestWithParam<int> {};

TEST_P(SliceTest, OnnxCasesMatchSpecIndices) {
  const std::vector<int64_t> shape = {2, 5, 7, 3};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 11);
  const std::vector<SliceCase> cases = {
      {{1, 2}, {5, 7}, {1, 2}, {}},               // plain, axes given
      {{0, 1}, {2, 4}, {}, {}},                   // default axes 0, 1
      {{-1}, {kMin}, {2}, {-1}},                  // full reverse
      {{kMax, 4}, {kMin, 0}, {-3, 3}, {-2, -3}},  // clamped starts
      {{-100, 1}, {kMax, -1}, {3, 1}, {2, 2}},    // clamp below / -1 end
      {{3}, {1}, {1}, {1}},                       // empty range forward
      {{2, 0, 6}, {kMax, 2, -8}, {3, 0, 2}, {1, 1, -4}},
      {{0, -1}, {kMax, kMin}, {1, 2}, {kMax, kMin}},  // huge steps
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    const SliceCase &sc = cases[c];
    OpTester tester("Slice");
    tester.Input("x", shape, x)
        .Output("y")
        .ArgInts("starts", sc.starts)
        .ArgInts("ends", sc.ends)
        .Threads(GetParam());
    if (!sc.axes.empty()) tester.ArgInts("axes", sc.axes);
    if (!sc.steps.empty()) tester.ArgInts("steps", sc.steps);
    const MaceStatus status = tester.Run();
    ASSERT_EQ(status, MaceStatus::MACE_SUCCESS)
        << "case " << c << ": " << status.information();
    std::vector<std::vector<int64_t>> idx;
    for (int64_t d : shape) idx.push_back(OnnxIndices(0, d, 1, d));
    for (size_t i = 0; i < sc.starts.size(); ++i) {
      int64_t axis = sc.axes.empty() ? static_cast<int64_t>(i) : sc.axes[i];
      if (axis < 0) axis += 4;
      const int64_t step = sc.steps.empty() ? 1 : sc.steps[i];
      idx[axis] = OnnxIndices(sc.starts[i], sc.ends[i], step, shape[axis]);
    }
    std::vector<int64_t> expected_shape;
    const std::vector<double> expected =
        GatherGrid(x, shape, idx, &expected_shape);
    EXPECT_EQ(tester.output(0).shape, expected_shape) << "case " << c;
    EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 0, 0))
        << "case " << c;
  }
}

TEST_P(SliceTest, Int32NegativeStepMatchesExplicitIndices) {
  const std::vector<int64_t> shape = {3, 4, 5};
  std::vector<int32_t> x(Product(shape));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(i * 7 - 50);
  OpTester tester("Slice");
  tester.InputInt("x", shape, x)
      .OutputInt("y")
      .ArgInts("starts", {-1, 4})
      .ArgInts("ends", {0, kMin})
      .ArgInts("axes", {-2, 2})
      .ArgInts("steps", {-2, -3})
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  // Axis 1: 3, 1. Axis 2: 4, 1.
  std::vector<double> expected;
  for (int a = 0; a < 3; ++a) {
    for (int b : {3, 1}) {
      for (int c : {4, 1}) expected.push_back(x[(a * 4 + b) * 5 + c]);
    }
  }
  EXPECT_EQ(tester.output(0).shape, (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(Widen(tester.output(0).ints), expected);
}

// --- StridedSlice -------------------------------------------------------

struct StridedCase {
  std::vector<int32_t> begin, end, strides;
  int begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0,
      shrink_mask = 0;
};

OpTester &AddStrided(OpTester &tester, const StridedCase &c) {
  const int64_t n = static_cast<int64_t>(c.begin.size());
  tester.ConstantInt("begin", {n}, c.begin)
      .ConstantInt("end", {n}, c.end)
      .ConstantInt("strides", {n}, c.strides)
      .Arg("begin_mask", c.begin_mask)
      .Arg("end_mask", c.end_mask)
      .Arg("ellipsis_mask", c.ellipsis_mask)
      .Arg("new_axis_mask", c.new_axis_mask)
      .Arg("shrink_axis_mask", c.shrink_mask);
  return tester;
}

TEST_P(SliceTest, StridedNegativeStrideMatchesExplicitIndices) {
  // numpy: x[:, 1:4:2, -1:0:-2, :]
  const std::vector<int64_t> shape = {2, 5, 7, 3};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 21);
  StridedCase c{{0, 1, -1, 0}, {2, 4, 0, 3}, {1, 2, -2, 1}};
  OpTester tester("StridedSlice");
  tester.Input("x", shape, x);
  AddStrided(tester, c).Output("y").Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  std::vector<double> expected;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int k = 0; k < 3; ++k)
        for (int d = 0; d < 3; ++d)
          expected.push_back(x[((a * 5 + 1 + 2 * b) * 7 + 6 - 2 * k) * 3 + d]);
  EXPECT_EQ(tester.output(0).shape, (std::vector<int64_t>{2, 2, 3, 3}));
  EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 0, 0));
}

TEST_P(SliceTest, StridedEllipsisNewAxisShrinkMatchesExplicitIndices) {
  // numpy: x[..., np.newaxis, 2, 1:5:3]
  const std::vector<int64_t> shape = {3, 4, 5, 6};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 22);
  StridedCase c{{0, 0, 2, 1}, {0, 0, 3, 5}, {1, 1, 1, 3}};
  c.ellipsis_mask = 1;
  c.new_axis_mask = 2;
  c.shrink_mask = 4;
  OpTester tester("StridedSlice");
  tester.Input("x", shape, x);
  AddStrided(tester, c).Output("y").Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  std::vector<double> expected;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 4; ++b)
      for (int d = 0; d < 2; ++d)
        expected.push_back(x[((a * 4 + b) * 5 + 2) * 6 + 1 + 3 * d]);
  EXPECT_EQ(tester.output(0).shape, (std::vector<int64_t>{3, 4, 1, 2}));
  EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 0, 0));
}

TEST_P(SliceTest, StridedMasksWithReverseAndShrinkMatchExplicitIndices) {
  // numpy: x[:, ::-1, -2, 1:]
  const std::vector<int64_t> shape = {2, 5, 7, 3};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 23);
  StridedCase c{{9, 9, -2, 1}, {-9, 9, 0, 0}, {1, -1, 1, 1}};
  c.begin_mask = 1 | 2;
  c.end_mask = 1 | 2 | 8;
  c.shrink_mask = 4;
  OpTester tester("StridedSlice");
  tester.Input("x", shape, x);
  AddStrided(tester, c).Output("y").Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  std::vector<double> expected;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 5; ++b)
      for (int d = 0; d < 2; ++d)
        expected.push_back(x[((a * 5 + 4 - b) * 7 + 5) * 3 + 1 + d]);
  EXPECT_EQ(tester.output(0).shape, (std::vector<int64_t>{2, 5, 2}));
  EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 0, 0));
}

TEST_P(SliceTest, StridedLeadingNewAxisAndImplicitEllipsis) {
  // numpy: x[np.newaxis, 1] on int32 data, spec given as arguments.
  const std::vector<int64_t> shape = {3, 4, 5};
  std::vector<int32_t> x(Product(shape));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(3 * i + 1);
  OpTester tester("StridedSlice");
  tester.InputInt("x", shape, x)
      .OutputInt("y")
      .ArgInts("begin", {0, 1})
      .ArgInts("end", {0, 2})
      .ArgInts("strides", {1, 1})
      .Arg("new_axis_mask", 1)
      .Arg("shrink_axis_mask", 2)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).shape, (std::vector<int64_t>{1, 4, 5}));
  const std::vector<int32_t> expected(x.begin() + 20, x.begin() + 40);
  EXPECT_EQ(tester.output(0).ints, expected);
}

TEST_P(SliceTest, StridedOutOfRangeBoundsAreClamped) {
  // numpy: x[-100:100, 5:-100:-1] (the second reversed, starting clamped).
  const std::vector<int64_t> shape = {3, 4};
  const std::vector<float> x = RandomFloats(12, -1, 1, 24);
  OpTester tester("StridedSlice");
  tester.Input("x", shape, x);
  AddStrided(tester, StridedCase{{-100, 5}, {100, -100}, {1, -1}})
      .Output("y")
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  std::vector<double> expected;
  for (int a = 0; a < 3; ++a)
    for (int b = 3; b >= 0; --b) expected.push_back(x[a * 4 + b]);
  EXPECT_EQ(tester.output(0).shape, shape);
  EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 0, 0));
}

TEST_P(SliceTest, StridedHugeStridesTakeOneElement) {
  const std::vector<float> x = RandomFloats(12, -1, 1, 26);
  OpTester tester("StridedSlice");
  tester.Input("x", {3, 4}, x)
      .Output("y")
      .ArgInts("begin", {1, -1})
      .ArgInts("end", {3, -100})
      .ArgInts("strides", {kMax, kMin})
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).shape, (std::vector<int64_t>{1, 1}));
  EXPECT_TRUE(AllClose(tester.output(0).floats, {x[1 * 4 + 3]}, 0, 0));
}

TEST_P(SliceTest, StridedSliceModeTakesSizes) {
  // tf.slice(x, [1, 0, 2], [-1, 2, 3])
  const std::vector<int64_t> shape = {3, 4, 5};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 25);
  OpTester tester("StridedSlice");
  tester.Input("x", shape, x)
      .ConstantInt("begin", {3}, {1, 0, 2})
      .ConstantInt("size", {3}, {-1, 2, 3})
      .Output("y")
      .Arg("slice", 1)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  std::vector<double> expected;
  for (int a = 1; a < 3; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 2; c < 5; ++c) expected.push_back(x[(a * 4 + b) * 5 + c]);
  EXPECT_EQ(tester.output(0).shape, (std::vector<int64_t>{2, 2, 3}));
  EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 0, 0));
}

INSTANTIATE_TEST_SUITE_P(Threads, SliceTest, ::testing::Values(1, 2));

// --- errors ---------------------------------------------------------------

MaceStatus RunSlice(const std::string &name, const std::vector<int64_t> &starts,
                    const std::vector<int64_t> &ends,
                    const std::vector<int64_t> &axes,
                    const std::vector<int64_t> &steps) {
  OpTester tester("Slice", name);
  tester.Input("x", {2, 3, 4}, RandomFloats(24))
      .Output("y")
      .ArgInts("starts", starts)
      .ArgInts("ends", ends)
      .ArgInts("axes", axes)
      .ArgInts("steps", steps);
  return tester.Run();
}

void ExpectError(const MaceStatus &status, const std::string &piece) {
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(piece), std::string::npos)
      << status.information();
}

TEST(SliceErrorTest, ZeroStepIsRejected) {
  ExpectError(RunSlice("s0", {0}, {2}, {1}, {0}), "'steps'");
}

TEST(SliceErrorTest, RepeatedAxisIsRejected) {
  ExpectError(RunSlice("s1", {0, 1}, {2, 3}, {1, -2}, {1, 1}), "repeats");
}

TEST(SliceErrorTest, AxisOutOfRangeIsRejected) {
  ExpectError(RunSlice("s2", {0}, {2}, {3}, {1}), "'axes'");
}

TEST(SliceErrorTest, LengthMismatchIsRejected) {
  ExpectError(RunSlice("s3", {0, 0}, {2}, {0, 1}, {1, 1}), "same length");
}

MaceStatus RunStrided(const std::string &name, const StridedCase &c) {
  OpTester tester("StridedSlice", name);
  tester.Input("x", {2, 3, 4}, RandomFloats(24));
  AddStrided(tester, c).Output("y");
  return tester.Run();
}

TEST(StridedSliceErrorTest, ZeroStrideIsRejected) {
  ExpectError(RunStrided("ss0", StridedCase{{0, 0}, {1, 3}, {1, 0}}),
              "stride of dim 1 is zero");
}

TEST(StridedSliceErrorTest, ShrinkIndexOutOfRangeIsRejected) {
  StridedCase c{{0, 3}, {1, 4}, {1, 1}};
  c.shrink_mask = 2;
  ExpectError(RunStrided("ss1", c), "out of range");
}

TEST(StridedSliceErrorTest, TwoEllipsesAreRejected) {
  StridedCase c{{0, 0}, {1, 1}, {1, 1}};
  c.ellipsis_mask = 3;
  ExpectError(RunStrided("ss2", c), "'ellipsis_mask'");
}

TEST(StridedSliceErrorTest, SpecLongerThanRankIsRejected) {
  ExpectError(
      RunStrided("ss3", StridedCase{{0, 0, 0, 0}, {1, 1, 1, 1}, {1, 1, 1, 1}}),
      "past the input");
}

TEST(StridedSliceErrorTest, NonConstantBeginIsRejected) {
  OpTester tester("StridedSlice", "ss4");
  tester.Input("x", {2, 3}, RandomFloats(6))
      .InputInt("begin", {2}, {0, 0})
      .ConstantInt("end", {2}, {1, 1})
      .Output("y");
  ExpectError(tester.Run(), "'begin'");
}

TEST(StridedSliceErrorTest, SliceModeSizePastEndIsRejected) {
  OpTester tester("StridedSlice", "ss5");
  tester.Input("x", {2, 3}, RandomFloats(6))
      .ConstantInt("begin", {2}, {1, 1})
      .ConstantInt("size", {2}, {1, 3})
      .Output("y")
      .Arg("slice", 1);
  ExpectError(tester.Run(), "out of range");
}

}  // namespace
}  // namespace test
}  // namespace mace
