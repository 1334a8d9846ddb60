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

// out[n, h, w, c] = x at each coordinate mirrored (i -> dim-1-i) on the
// flipped axes.
std::vector<double> ReverseReference(const std::vector<float> &x, const Dims &s,
                                     const std::vector<bool> &f) {
  std::vector<double> y;
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t h = 0; h < s[1]; ++h)
      for (int64_t w = 0; w < s[2]; ++w)
        for (int64_t c = 0; c < s[3]; ++c) {
          const int64_t a = f[0] ? s[0] - 1 - n : n;
          const int64_t b = f[1] ? s[1] - 1 - h : h;
          const int64_t d = f[2] ? s[2] - 1 - w : w;
          const int64_t e = f[3] ? s[3] - 1 - c : c;
          y.push_back(x[((a * s[1] + b) * s[2] + d) * s[3] + e]);
        }
  return y;
}

class ReverseTest : public ::testing::TestWithParam<int> {};

TEST_P(ReverseTest, AxesFromArgumentMatchReference) {
  const Dims shape = {2, 5, 7, 3};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 71);
  const std::vector<std::pair<Dims, std::vector<bool>>> cases = {
      {{1}, {false, true, false, false}},
      {{-1}, {false, false, false, true}},
      {{0, 2}, {true, false, true, false}},
      {{3, 2, 1, 0}, {true, true, true, true}},
      {{}, {false, false, false, false}},
  };
  for (const auto &c : cases) {
    OpTester tester("Reverse");
    tester.Input("x", shape, x)
        .Output("y")
        .ArgInts("axis", c.first)
        .Threads(GetParam());
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
    EXPECT_EQ(tester.output(0).shape, shape);
    EXPECT_TRUE(AllClose(tester.output(0).floats,
                         ReverseReference(x, shape, c.second), 0, 0));
  }
}

TEST_P(ReverseTest, AxesFromConstantInput) {
  const Dims shape = {1, 4, 6, 17};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 72);
  OpTester tester("Reverse");
  tester.Input("x", shape, x)
      .ConstantInt("axis", {2}, {2, -3})
      .Output("y")
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_TRUE(AllClose(tester.output(0).floats,
                       ReverseReference(x, shape, {false, true, true, false}),
                       0, 0));
}

INSTANTIATE_TEST_SUITE_P(Threads, ReverseTest, ::testing::Values(1, 2));

void ExpectError(const MaceStatus &status, const std::string &piece) {
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(piece), std::string::npos)
      << status.information();
}

TEST(ReverseErrorTest, RepeatedAxisIsRejected) {
  OpTester tester("Reverse", "r0");
  tester.Input("x", {2, 3}, RandomFloats(6))
      .Output("y")
      .ArgInts("axis", {1, -1});
  ExpectError(tester.Run(), "repeated");
}

TEST(ReverseErrorTest, AxisOutOfRangeIsRejected) {
  OpTester tester("Reverse", "r1");
  tester.Input("x", {2, 3}, RandomFloats(6)).Output("y").ArgInts("axis", {2});
  ExpectError(tester.Run(), "axis");
}

TEST(ReverseErrorTest, NonConstantAxisIsRejected) {
  OpTester tester("Reverse", "r2");
  tester.Input("x", {2, 3}, RandomFloats(6))
      .InputInt("axis", {1}, {0})
      .Output("y");
  ExpectError(tester.Run(), "r2");
}

}  // namespace
}  // namespace test
}  // namespace mace
