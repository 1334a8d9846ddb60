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

// SpaceToBatchND on NHWC: pad H and W with zeros, then output batch
// (i*bw + j)*N + n at (y, x) is padded (n, y*bh + i, x*bw + j).
std::vector<double> SpaceToBatchReference(const std::vector<float> &x,
                                          const Dims &s, const Dims &block,
                                          const Dims &pads, Dims *out) {
  const int64_t hp = s[1] + pads[0] + pads[1];
  const int64_t wp = s[2] + pads[2] + pads[3];
  const int64_t bh = block[0], bw = block[1];
  *out = {s[0] * bh * bw, hp / bh, wp / bw, s[3]};
  std::vector<double> y;
  for (int64_t i = 0; i < bh; ++i)
    for (int64_t j = 0; j < bw; ++j)
      for (int64_t n = 0; n < s[0]; ++n)
        for (int64_t yy = 0; yy < hp / bh; ++yy)
          for (int64_t xx = 0; xx < wp / bw; ++xx)
            for (int64_t c = 0; c < s[3]; ++c) {
              const int64_t h = yy * bh + i - pads[0];
              const int64_t w = xx * bw + j - pads[2];
              const bool inside = h >= 0 && h < s[1] && w >= 0 && w < s[2];
              y.push_back(inside ? x[((n * s[1] + h) * s[2] + w) * s[3] + c]
                                 : 0.0);
            }
  return y;
}

// BatchToSpaceND: output (n, y, x) is input batch
// ((y+top) % bh * bw + (x+left) % bw) * N + n at ((y+top)/bh, (x+left)/bw).
std::vector<double> BatchToSpaceReference(const std::vector<float> &x,
                                          const Dims &s, const Dims &block,
                                          const Dims &crops, Dims *out) {
  const int64_t bh = block[0], bw = block[1];
  const int64_t n_out = s[0] / (bh * bw);
  *out = {n_out, s[1] * bh - crops[0] - crops[1],
          s[2] * bw - crops[2] - crops[3], s[3]};
  std::vector<double> y;
  for (int64_t n = 0; n < n_out; ++n)
    for (int64_t yy = 0; yy < (*out)[1]; ++yy)
      for (int64_t xx = 0; xx < (*out)[2]; ++xx)
        for (int64_t c = 0; c < s[3]; ++c) {
          const int64_t fy = yy + crops[0], fx = xx + crops[2];
          const int64_t b = ((fy % bh) * bw + fx % bw) * n_out + n;
          y.push_back(x[((b * s[1] + fy / bh) * s[2] + fx / bw) * s[3] + c]);
        }
  return y;
}

struct BlockCase {
  Dims shape, block, margins;
};

class SpaceToBatchTest : public ::testing::TestWithParam<int> {};

TEST_P(SpaceToBatchTest, PaddedSpaceToBatchMatchesReferenceAndRoundTrips) {
  const std::vector<BlockCase> cases = {{{2, 5, 7, 3}, {2, 3}, {1, 0, 1, 1}},
                                        {{1, 4, 4, 17}, {2, 2}, {0, 0, 0, 0}},
                                        {{3, 1, 5, 2}, {3, 1}, {1, 1, 0, 0}},
                                        {{1, 3, 3, 5}, {1, 1}, {2, 1, 0, 3}}};
  for (size_t k = 0; k < cases.size(); ++k) {
    const BlockCase &c = cases[k];
    const std::vector<float> x = RandomFloats(Product(c.shape), -1, 1, 111);
    OpTester tester("SpaceToBatchND");
    tester.Input("x", c.shape, x)
        .Output("y")
        .ArgInts("block_shape", c.block)
        .ArgInts("paddings", c.margins)
        .Threads(GetParam());
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS) << "case " << k;
    Dims out;
    const std::vector<double> expected =
        SpaceToBatchReference(x, c.shape, c.block, c.margins, &out);
    EXPECT_EQ(tester.output(0).shape, out) << "case " << k;
    EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 0, 0))
        << "case " << k;
    // Cropping what was padded gives the input back.
    OpTester back("BatchToSpaceND");
    back.Input("x", out, tester.output(0).floats)
        .Output("y")
        .ArgInts("block_shape", c.block)
        .ArgInts("crops", c.margins)
        .Threads(GetParam());
    ASSERT_EQ(back.Run(), MaceStatus::MACE_SUCCESS) << "case " << k;
    EXPECT_EQ(back.output(0).shape, c.shape) << "case " << k;
    EXPECT_TRUE(AllClose(back.output(0).floats, ToDouble(x), 0, 0))
        << "case " << k;
  }
}

TEST_P(SpaceToBatchTest, BatchToSpaceWithCropsMatchesReference) {
  const std::vector<BlockCase> cases = {{{12, 3, 3, 3}, {2, 3}, {1, 0, 2, 1}},
                                        {{8, 2, 3, 5}, {2, 2}, {0, 1, 1, 0}},
                                        {{3, 2, 2, 7}, {3, 1}, {0, 0, 0, 0}}};
  for (size_t k = 0; k < cases.size(); ++k) {
    const BlockCase &c = cases[k];
    const std::vector<float> x = RandomFloats(Product(c.shape), -1, 1, 112);
    OpTester tester("BatchToSpaceND");
    tester.Input("x", c.shape, x)
        .Output("y")
        .ArgInts("block_shape", c.block)
        .ArgInts("crops", c.margins)
        .Threads(GetParam());
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS) << "case " << k;
    Dims out;
    const std::vector<double> expected =
        BatchToSpaceReference(x, c.shape, c.block, c.margins, &out);
    EXPECT_EQ(tester.output(0).shape, out) << "case " << k;
    EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 0, 0))
        << "case " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, SpaceToBatchTest, ::testing::Values(1, 2));

MaceStatus RunBlock(const std::string &type, const std::string &name,
                    const Dims &shape, const Dims &block, const Dims &margins) {
  OpTester tester(type, name);
  tester.Input("x", shape, RandomFloats(Product(shape)))
      .Output("y")
      .ArgInts("block_shape", block)
      .ArgInts(type == "SpaceToBatchND" ? "paddings" : "crops", margins);
  return tester.Run();
}

void ExpectError(const MaceStatus &status, const std::string &piece) {
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(piece), std::string::npos)
      << status.information();
}

TEST(SpaceToBatchErrorTest, BlockNotDividingPaddedSizeIsRejected) {
  ExpectError(
      RunBlock("SpaceToBatchND", "sb0", {1, 5, 4, 2}, {2, 2}, {0, 0, 0, 0}),
      "divisible by block_shape");
}

TEST(SpaceToBatchErrorTest, BatchNotDivisibleIsRejected) {
  ExpectError(
      RunBlock("BatchToSpaceND", "bs0", {6, 2, 2, 1}, {2, 2}, {0, 0, 0, 0}),
      "divisible by block_shape");
}

TEST(SpaceToBatchErrorTest, NegativePaddingIsRejected) {
  ExpectError(
      RunBlock("SpaceToBatchND", "sb1", {1, 4, 4, 1}, {2, 2}, {-2, 0, 0, 0}),
      "'paddings'");
}

TEST(SpaceToBatchErrorTest, CropsLargerThanOutputAreRejected) {
  ExpectError(
      RunBlock("BatchToSpaceND", "bs1", {4, 1, 1, 1}, {2, 2}, {2, 1, 0, 0}),
      "'crops'");
}

TEST(SpaceToBatchErrorTest, BadBlockShapeIsRejected) {
  ExpectError(
      RunBlock("SpaceToBatchND", "sb2", {1, 4, 4, 1}, {2}, {0, 0, 0, 0}),
      "'block_shape'");
  ExpectError(
      RunBlock("BatchToSpaceND", "bs2", {4, 1, 1, 1}, {0, 2}, {0, 0, 0, 0}),
      "'block_shape'");
}

}  // namespace
}  // namespace test
}  // namespace mace
