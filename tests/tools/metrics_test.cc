#include "mace/tools/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace mace {
namespace tools {
namespace {

TEST(MetricsTest, IdenticalOutputsHaveCosineOneAndInfiniteSqnr) {
  const std::vector<double> x = {0.1, -2.0, 3.5, 0.0};
  const Similarity s = CompareOutputs(x, x, {1, 4}, false);
  EXPECT_DOUBLE_EQ(s.cosine, 1.0);
  EXPECT_TRUE(std::isinf(s.sqnr) && s.sqnr > 0);
  EXPECT_TRUE(std::isinf(s.sqnr_db) && s.sqnr_db > 0);
  EXPECT_DOUBLE_EQ(s.pixel_accuracy, 1.0);
  EXPECT_TRUE(PassesThreshold(s, 0.999));
}

TEST(MetricsTest, ZeroNormsFollowTheConvention) {
  const std::vector<double> zeros = {0, 0, 0};
  const std::vector<double> ones = {1, 1, 1};
  EXPECT_DOUBLE_EQ(CompareOutputs(zeros, zeros, {3}, false).cosine, 1.0);
  EXPECT_DOUBLE_EQ(CompareOutputs(zeros, ones, {3}, false).cosine, 0.0);
  EXPECT_DOUBLE_EQ(CompareOutputs(ones, zeros, {3}, false).cosine, 0.0);
}

TEST(MetricsTest, CosineAndSqnrMatchHandComputedValues) {
  // reference (3, 4), actual (4, 3): dot 24, norms 5 and 5.
  const Similarity s = CompareOutputs({3, 4}, {4, 3}, {2}, false);
  EXPECT_NEAR(s.cosine, 24.0 / 25.0, 1e-15);
  // signal 25, noise 1 + 1 = 2.
  EXPECT_NEAR(s.sqnr, 12.5, 1e-12);
  EXPECT_NEAR(s.sqnr_db, 10.0 * std::log10(12.5), 1e-12);
  EXPECT_FALSE(PassesThreshold(s, 0.999));
}

TEST(MetricsTest, PassIsStrictlyAboveTheThreshold) {
  Similarity s;
  s.cosine = 0.999;
  EXPECT_FALSE(PassesThreshold(s, 0.999));
  s.cosine = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(PassesThreshold(s, 0.5));
}

TEST(MetricsTest, PixelAccuracyComparesArgmaxPerRow) {
  // Rows of the last dim: row 0 agrees (argmax 2), row 1 does not.
  const std::vector<double> ref = {0, 1, 5, 9, 0, 0};
  const std::vector<double> out = {0, 1, 4, 0, 8, 0};
  EXPECT_DOUBLE_EQ(CompareOutputs(ref, out, {2, 3}, false).pixel_accuracy, 0.5);
  // Rank 1: always 1.
  EXPECT_DOUBLE_EQ(CompareOutputs(ref, out, {6}, false).pixel_accuracy, 1.0);
}

TEST(MetricsTest, PixelAccuracyReadsNchwOutputsAsNhwc) {
  // NCHW [1, 2, 1, 2]: channel planes c0 = (a0, a1), c1 = (b0, b1). Seen as
  // NHWC the rows are pixels (a0, b0) and (a1, b1).
  const std::vector<double> ref = {1, 0, 0, 1};  // pixel 0 -> c0, pixel 1 -> c1
  const std::vector<double> out = {1, 1, 0, 0};  // pixel 0 -> c0, pixel 1 -> c0
  EXPECT_DOUBLE_EQ(CompareOutputs(ref, out, {1, 2, 1, 2}, true).pixel_accuracy,
                   0.5);
  // The same values read as NHWC rows (1,0) / (0,1) vs (1,1) / (0,0) agree
  // on argmax for both rows (first index wins ties).
  EXPECT_DOUBLE_EQ(CompareOutputs(ref, out, {1, 2, 1, 2}, false).pixel_accuracy,
                   0.5);
}

}  // namespace
}  // namespace tools
}  // namespace mace
