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

// DepthToSpace on NHWC: output (n, h*b + i, w*b + j, c) reads input
// channel (i*b + j)*depth + c (DCR) or c*b*b + i*b + j (CRD).
std::vector<double> DepthToSpaceReference(const std::vector<float> &x,
                                          const Dims &s, int64_t b, bool crd) {
  const int64_t depth = s[3] / (b * b);
  const int64_t oh = s[1] * b, ow = s[2] * b;
  std::vector<double> y;
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t yy = 0; yy < oh; ++yy)
      for (int64_t xx = 0; xx < ow; ++xx)
        for (int64_t c = 0; c < depth; ++c) {
          const int64_t i = yy % b, j = xx % b;
          const int64_t ch =
              crd ? c * b * b + i * b + j : (i * b + j) * depth + c;
          y.push_back(x[((n * s[1] + yy / b) * s[2] + xx / b) * s[3] + ch]);
        }
  return y;
}

// SpaceToDepth on NHWC: output channel (i*b + j)*C + c of (n, h, w) reads
// input (n, h*b + i, w*b + j, c).
std::vector<double> SpaceToDepthReference(const std::vector<float> &x,
                                          const Dims &s, int64_t b) {
  std::vector<double> y;
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t h = 0; h < s[1] / b; ++h)
      for (int64_t w = 0; w < s[2] / b; ++w)
        for (int64_t i = 0; i < b; ++i)
          for (int64_t j = 0; j < b; ++j)
            for (int64_t c = 0; c < s[3]; ++c)
              y.push_back(
                  x[((n * s[1] + h * b + i) * s[2] + w * b + j) * s[3] + c]);
  return y;
}

class DepthToSpaceTest : public ::testing::TestWithParam<int> {};

TEST_P(DepthToSpaceTest, BothModesMatchReference) {
  const std::vector<std::pair<Dims, int64_t>> cases = {{{2, 3, 5, 12}, 2},
                                                       {{1, 2, 3, 18}, 3},
                                                       {{2, 1, 1, 4}, 2},
                                                       {{1, 3, 2, 5}, 1}};
  for (const auto &c : cases) {
    const Dims &shape = c.first;
    const int64_t b = c.second;
    const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 101);
    for (const char *mode : {"DCR", "CRD", ""}) {
      OpTester tester("DepthToSpace");
      tester.Input("x", shape, x)
          .Output("y")
          .Arg("block_size", b)
          .Threads(GetParam());
      if (*mode) tester.ArgString("mode", mode);
      ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS) << mode;
      const bool crd = std::string(mode) == "CRD";
      EXPECT_EQ(
          tester.output(0).shape,
          (Dims{shape[0], shape[1] * b, shape[2] * b, shape[3] / (b * b)}));
      EXPECT_TRUE(AllClose(tester.output(0).floats,
                           DepthToSpaceReference(x, shape, b, crd), 0, 0))
          << "mode '" << mode << "' block " << b;
    }
  }
}

TEST_P(DepthToSpaceTest, SpaceToDepthMatchesReferenceAndInverts) {
  const std::vector<std::pair<Dims, int64_t>> cases = {
      {{2, 6, 9, 5}, 3}, {{1, 4, 2, 3}, 2}, {{1, 2, 2, 17}, 2}};
  for (const auto &c : cases) {
    const Dims &shape = c.first;
    const int64_t b = c.second;
    const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 102);
    OpTester tester("SpaceToDepth");
    tester.Input("x", shape, x)
        .Output("y")
        .Arg("block_size", b)
        .Threads(GetParam());
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
    const Dims out = {shape[0], shape[1] / b, shape[2] / b, shape[3] * b * b};
    EXPECT_EQ(tester.output(0).shape, out);
    EXPECT_TRUE(AllClose(tester.output(0).floats,
                         SpaceToDepthReference(x, shape, b), 0, 0));
    OpTester back("DepthToSpace");
    back.Input("x", out, tester.output(0).floats)
        .Output("y")
        .Arg("block_size", b)
        .Threads(GetParam());
    ASSERT_EQ(back.Run(), MaceStatus::MACE_SUCCESS);
    EXPECT_TRUE(AllClose(back.output(0).floats, ToDouble(x), 0, 0));
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, DepthToSpaceTest, ::testing::Values(1, 2));

MaceStatus RunBlock(const std::string &type, const std::string &name,
                    const Dims &shape, int64_t block,
                    const std::string &mode = "") {
  OpTester tester(type, name);
  tester.Input("x", shape, RandomFloats(Product(shape)))
      .Output("y")
      .Arg("block_size", block);
  if (!mode.empty()) tester.ArgString("mode", mode);
  return tester.Run();
}

void ExpectError(const MaceStatus &status, const std::string &piece) {
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(piece), std::string::npos)
      << status.information();
}

TEST(DepthToSpaceErrorTest, ChannelsNotDivisibleByBlockSquaredAreRejected) {
  ExpectError(RunBlock("DepthToSpace", "d0", {1, 2, 2, 6}, 2), "block_size");
}

TEST(DepthToSpaceErrorTest, SpatialNotDivisibleByBlockIsRejected) {
  ExpectError(RunBlock("SpaceToDepth", "d1", {1, 4, 5, 3}, 2), "block_size");
}

TEST(DepthToSpaceErrorTest, ZeroBlockIsRejected) {
  ExpectError(RunBlock("DepthToSpace", "d2", {1, 2, 2, 4}, 0), "'block_size'");
}

TEST(DepthToSpaceErrorTest, UnknownModeIsRejected) {
  ExpectError(RunBlock("DepthToSpace", "d3", {1, 2, 2, 4}, 2, "RDC"), "'mode'");
  ExpectError(RunBlock("SpaceToDepth", "d4", {1, 2, 2, 4}, 2, "CRD"), "'mode'");
}

TEST(DepthToSpaceErrorTest, WrongRankIsRejected) {
  ExpectError(RunBlock("DepthToSpace", "d5", {2, 2, 4}, 2), "rank 4");
}

}  // namespace
}  // namespace test
}  // namespace mace
