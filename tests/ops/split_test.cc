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

// Piece p of x along `axis`, for pieces of the given sizes.
template <typename T>
std::vector<T> PieceReference(const Shape &shape, const std::vector<T> &x,
                              int axis, const std::vector<int64_t> &sizes,
                              size_t p) {
  int64_t outer = 1, inner = 1, start = 0;
  for (int i = 0; i < axis; ++i) outer *= shape[i];
  for (size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
  for (size_t i = 0; i < p; ++i) start += sizes[i];
  std::vector<T> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = start; k < start + sizes[p]; ++k) {
      for (int64_t i = 0; i < inner; ++i) {
        out.push_back(x[(o * shape[axis] + k) * inner + i]);
      }
    }
  }
  return out;
}

class SplitTest : public ::testing::TestWithParam<int> {};

TEST_P(SplitTest, UnevenSizesOnMiddleAxis) {
  const Shape shape = {2, 7, 3};
  const std::vector<int64_t> sizes = {2, 4, 0, 1};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 101);
  OpTester tester("Split");
  tester.Input("x", shape, x)
      .Output("p0")
      .Output("p1")
      .Output("p2")
      .Output("p3")
      .Arg("axis", 1)
      .ArgInts("split", sizes)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  for (size_t p = 0; p < sizes.size(); ++p) {
    EXPECT_EQ(tester.output(p).shape, (Shape{2, sizes[p], 3}));
    EXPECT_EQ(tester.output(p).floats, PieceReference(shape, x, 1, sizes, p))
        << "piece " << p;
  }
}

TEST_P(SplitTest, EqualPartsOnLastAxisInt32) {
  const Shape shape = {2, 5, 6};
  const std::vector<int32_t> x = RandomInts(Product(shape), -50, 50, 102);
  OpTester tester("Split");
  tester.InputInt("x", shape, x)
      .OutputInt("a")
      .OutputInt("b")
      .OutputInt("c")
      .Arg("axis", -1)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  for (size_t p = 0; p < 3; ++p) {
    EXPECT_EQ(tester.output(p).shape, (Shape{2, 5, 2}));
    EXPECT_EQ(tester.output(p).ints, PieceReference(shape, x, 2, {2, 2, 2}, p));
  }
}

TEST_P(SplitTest, DefaultAxisIsZero) {
  const std::vector<float> x = RandomFloats(12, -1, 1, 103);
  OpTester tester("Split");
  tester.Input("x", {4, 3}, x).Output("a").Output("b").Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).floats,
            std::vector<float>(x.begin(), x.begin() + 6));
  EXPECT_EQ(tester.output(1).floats,
            std::vector<float>(x.begin() + 6, x.end()));
}

TEST_P(SplitTest, ManyRowsSplitAcrossThreads) {
  const Shape shape = {600, 16};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 104);
  OpTester tester("Split");
  tester.Input("x", shape, x)
      .Output("a")
      .Output("b")
      .Arg("axis", 1)
      .ArgInts("split", {5, 11})
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).floats, PieceReference(shape, x, 1, {5, 11}, 0));
  EXPECT_EQ(tester.output(1).floats, PieceReference(shape, x, 1, {5, 11}, 1));
}

INSTANTIATE_TEST_SUITE_P(Threads, SplitTest, ::testing::Values(1, 2));

MaceStatus RunExpectingError(OpTester *tester, const std::string &needle) {
  const MaceStatus status = tester->Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(needle), std::string::npos)
      << status.information();
  return status;
}

TEST(SplitErrorTest, SizesNotSummingToAxisAreRejected) {
  OpTester tester("Split", "split1");
  tester.Input("x", {2, 7}, RandomFloats(14))
      .Output("a")
      .Output("b")
      .Arg("axis", 1)
      .ArgInts("split", {3, 3});
  const MaceStatus status = RunExpectingError(&tester, "'split'");
  EXPECT_NE(status.information().find("split1"), std::string::npos);
  OpTester negative("Split");
  negative.Input("x", {2, 7}, RandomFloats(14))
      .Output("a")
      .Output("b")
      .Arg("axis", 1)
      .ArgInts("split", {8, -1});
  RunExpectingError(&negative, "'split'");
  OpTester count("Split");
  count.Input("x", {2, 7}, RandomFloats(14))
      .Output("a")
      .Output("b")
      .Arg("axis", 1)
      .ArgInts("split", {7});
  RunExpectingError(&count, "'split'");
}

TEST(SplitErrorTest, IndivisibleAxisIsRejected) {
  OpTester tester("Split");
  tester.Input("x", {2, 7}, RandomFloats(14))
      .Output("a")
      .Output("b")
      .Arg("axis", 1);
  RunExpectingError(&tester, "'split'");
}

TEST(SplitErrorTest, AxisOutOfRangeIsRejected) {
  OpTester tester("Split");
  tester.Input("x", {2, 4}, RandomFloats(8))
      .Output("a")
      .Output("b")
      .Arg("axis", -3);
  RunExpectingError(&tester, "'axis'");
}

}  // namespace
}  // namespace test
}  // namespace mace
