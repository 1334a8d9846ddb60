#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

using Dims = std::vector<int64_t>;

// out[i_0, ..., i_k] = x[j] where j has coordinate i_a on input axis
// perm[a]: walk the output in order and build each input offset.
template <typename T>
std::vector<double> TransposeReference(const std::vector<T> &x,
                                       const Dims &shape, const Dims &perm,
                                       Dims *out_shape) {
  const size_t rank = shape.size();
  out_shape->clear();
  for (int64_t p : perm) out_shape->push_back(shape[p]);
  std::vector<double> out;
  std::vector<int64_t> pos(rank, 0), in_pos(rank, 0);
  for (int64_t n = 0; n < Product(shape); ++n) {
    for (size_t a = 0; a < rank; ++a) in_pos[perm[a]] = pos[a];
    int64_t offset = 0;
    for (size_t k = 0; k < rank; ++k) offset = offset * shape[k] + in_pos[k];
    out.push_back(static_cast<double>(x[offset]));
    for (int a = static_cast<int>(rank) - 1; a >= 0; --a) {
      if (++pos[a] < (*out_shape)[a]) break;
      pos[a] = 0;
    }
  }
  return out;
}

// Runs Transpose on `threads` threads; the output must equal the reference
// exactly (a transpose only moves values).
void ExpectTransposeMatches(const std::vector<float> &x, const Dims &shape,
                            const Dims &perm, int threads) {
  OpTester tester("Transpose");
  tester.Input("x", shape, x)
      .Output("y")
      .ArgInts("dims", perm)
      .Threads(threads);
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  Dims expected_shape;
  const std::vector<double> expected =
      TransposeReference(x, shape, perm, &expected_shape);
  EXPECT_EQ(tester.output(0).shape, expected_shape);
  EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 0, 0));
}

class TransposeTest : public ::testing::TestWithParam<int> {};

TEST_P(TransposeTest, Rank5PermutationsMatchReference) {
  const Dims shape = {2, 3, 1, 5, 7};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 41);
  const std::vector<Dims> perms = {{4, 2, 0, 3, 1},
                                   {0, 1, 2, 4, 3},
                                   {1, 0, 3, 2, 4},
                                   {3, 4, 1, 0, 2},
                                   {0, 1, 2, 3, 4}};
  for (const Dims &perm : perms) {
    ExpectTransposeMatches(x, shape, perm, GetParam());
  }
}

// Dims longer than one copy block (16 rows; 1024 pixels when three planes
// are interleaved), with partial blocks: the image-layout transposes of a
// model's input and output, and 3-D ones.
TEST_P(TransposeTest, ShapesSpanningSeveralCopyBlocksMatchReference) {
  const std::vector<std::pair<Dims, Dims>> cases = {
      {{1, 3, 37, 41}, {0, 2, 3, 1}},   // NCHW -> NHWC, 3 channels
      {{2, 3, 45, 47}, {0, 2, 3, 1}},   // two images of 2 blocks and 67 pixels
      {{2, 37, 19, 20}, {0, 3, 1, 2}},  // NHWC -> NCHW
      {{20, 35, 17}, {2, 0, 1}},
      {{20, 35, 17}, {1, 2, 0}},
      {{33, 18}, {1, 0}}};
  for (const auto &[shape, perm] : cases) {
    const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 43);
    ExpectTransposeMatches(x, shape, perm, GetParam());
  }
}

// Feature maps through the 4 x 4 register tiles of the float transpose:
// channel counts and planes that are not multiples of 4 or of a copy block
// (edges of both), and dims of one before, between and after the others
// (dropped before the neighbours are joined).
TEST_P(TransposeTest, FeatureMapLayoutChangesMatchReference) {
  const std::vector<std::pair<Dims, Dims>> cases = {
      {{1, 32, 23, 29}, {0, 2, 3, 1}},  // NCHW -> NHWC
      {{2, 13, 9, 37}, {0, 2, 3, 1}},
      {{1, 23, 29, 32}, {0, 3, 1, 2}},  // NHWC -> NCHW
      {{2, 9, 37, 13}, {0, 3, 1, 2}},
      {{1, 7, 1, 45, 6}, {0, 3, 2, 4, 1}},
      {{5, 1, 66, 1}, {3, 2, 0, 1}},
      {{3, 4, 70}, {0, 2, 1}}};
  for (const auto &[shape, perm] : cases) {
    const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 44);
    ExpectTransposeMatches(x, shape, perm, GetParam());
  }
}

TEST_P(TransposeTest, NhwcToNchwMatchesExplicitIndices) {
  const int64_t n = 2, h = 5, w = 7, c = 17;
  const std::vector<float> x = RandomFloats(n * h * w * c, -1, 1, 42);
  OpTester tester("Transpose");
  tester.Input("x", {n, h, w, c}, x)
      .Output("y")
      .ArgInts("dims", {0, 3, 1, 2})
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  std::vector<double> expected;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t xx = 0; xx < w; ++xx)
          expected.push_back(x[((b * h + y) * w + xx) * c + ch]);
  EXPECT_EQ(tester.output(0).shape, (Dims{n, c, h, w}));
  EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 0, 0));
}

TEST_P(TransposeTest, EmptyDimsReverseInt32) {
  const Dims shape = {3, 4, 5};
  std::vector<int32_t> x(Product(shape));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(i) * 3 - 7;
  OpTester tester("Transpose");
  tester.InputInt("x", shape, x).OutputInt("y").Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  Dims expected_shape;
  const std::vector<double> expected =
      TransposeReference(x, shape, {2, 1, 0}, &expected_shape);
  EXPECT_EQ(tester.output(0).shape, expected_shape);
  const std::vector<int32_t> &y = tester.output(0).ints;
  EXPECT_EQ(std::vector<double>(y.begin(), y.end()), expected);
}

INSTANTIATE_TEST_SUITE_P(Threads, TransposeTest, ::testing::Values(1, 2));

MaceStatus RunPerm(const std::string &name, const Dims &perm) {
  OpTester tester("Transpose", name);
  tester.Input("x", {2, 3, 4}, RandomFloats(24))
      .Output("y")
      .ArgInts("dims", perm);
  return tester.Run();
}

void ExpectBadPermutation(const MaceStatus &status, const std::string &name) {
  EXPECT_EQ(status.code(), MaceStatus::MACE_INVALID_ARGS);
  EXPECT_NE(status.information().find(name), std::string::npos);
  EXPECT_NE(status.information().find("'dims'"), std::string::npos)
      << status.information();
}

TEST(TransposeErrorTest, RepeatedAxisIsRejected) {
  ExpectBadPermutation(RunPerm("t0", {0, 1, 1}), "t0");
}

TEST(TransposeErrorTest, AxisOutOfRangeIsRejected) {
  ExpectBadPermutation(RunPerm("t1", {0, 3, 1}), "t1");
}

TEST(TransposeErrorTest, WrongLengthIsRejected) {
  ExpectBadPermutation(RunPerm("t2", {1, 0}), "t2");
}

TEST(TransposeErrorTest, DimsOfWrongKindIsRejected) {
  OpTester tester("Transpose", "t3");
  tester.Input("x", {2, 3}, RandomFloats(6)).Output("y").Arg("dims", 1);
  const MaceStatus status = tester.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("'dims'"), std::string::npos);
}

}  // namespace
}  // namespace test
}  // namespace mace
