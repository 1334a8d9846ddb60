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

// Caffe crop on 4-D data with explicit offsets per NHWC dim (0 for dims
// before the axis).
std::vector<double> CropReference(const std::vector<float> &x,
                                  const Dims &shape, const Dims &out,
                                  const Dims &off) {
  std::vector<double> y;
  for (int64_t n = 0; n < out[0]; ++n)
    for (int64_t h = 0; h < out[1]; ++h)
      for (int64_t w = 0; w < out[2]; ++w)
        for (int64_t c = 0; c < out[3]; ++c)
          y.push_back(x[(((n + off[0]) * shape[1] + h + off[1]) * shape[2] + w +
                         off[2]) *
                            shape[3] +
                        c + off[3]]);
  return y;
}

struct CropCase {
  int64_t axis;
  Dims offsets;    // the argument
  Dims reference;  // reference input's shape
  Dims out, per_dim_offset;
};

class CropTest : public ::testing::TestWithParam<int> {};

TEST_P(CropTest, AxisAndOffsetFormsMatchReference) {
  const Dims shape = {2, 9, 11, 7};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 61);
  const std::vector<CropCase> cases = {
      // Default axis 2 (W and C), one offset for both.
      {2, {1}, {1, 1, 5, 3}, {2, 9, 5, 3}, {0, 0, 1, 1}},
      // Axis 1, one offset per cropped dim.
      {1, {2, 0, 4}, {1, 5, 11, 3}, {2, 5, 11, 3}, {0, 2, 0, 4}},
      // Axis 0, no offsets; reference covers everything.
      {0, {}, {1, 1, 1, 1}, {1, 1, 1, 1}, {0, 0, 0, 0}},
      // Negative axis -3 == 1, exact fit at the far end.
      {-3, {4, 3, 0}, {9, 5, 8, 7}, {2, 5, 8, 7}, {0, 4, 3, 0}},
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    const CropCase &cc = cases[c];
    OpTester tester("Crop");
    tester.Input("x", shape, x)
        .Input("ref", cc.reference,
               std::vector<float>(Product(cc.reference), 0.0f))
        .Output("y")
        .Arg("axis", cc.axis)
        .Threads(GetParam());
    if (!cc.offsets.empty()) tester.ArgInts("offset", cc.offsets);
    const MaceStatus status = tester.Run();
    ASSERT_EQ(status, MaceStatus::MACE_SUCCESS)
        << "case " << c << ": " << status.information();
    EXPECT_EQ(tester.output(0).shape, cc.out) << "case " << c;
    EXPECT_TRUE(AllClose(tester.output(0).floats,
                         CropReference(x, shape, cc.out, cc.per_dim_offset), 0,
                         0))
        << "case " << c;
  }
}

TEST_P(CropTest, DefaultAxisIsTwo) {
  const Dims shape = {1, 4, 6, 5};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 62);
  OpTester tester("Crop");
  tester.Input("x", shape, x)
      .Input("ref", {3, 2, 3, 2}, std::vector<float>(36, 0.0f))
      .Output("y")
      .ArgInts("offset", {2, 3})
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).shape, (Dims{1, 4, 3, 2}));
  EXPECT_TRUE(AllClose(tester.output(0).floats,
                       CropReference(x, shape, {1, 4, 3, 2}, {0, 0, 2, 3}), 0,
                       0));
}

INSTANTIATE_TEST_SUITE_P(Threads, CropTest, ::testing::Values(1, 2));

MaceStatus RunCrop(const std::string &name, const Dims &ref, int64_t axis,
                   const Dims &offsets) {
  OpTester tester("Crop", name);
  tester.Input("x", {1, 5, 6, 3}, RandomFloats(90))
      .Input("ref", ref, std::vector<float>(Product(ref), 0.0f))
      .Output("y")
      .Arg("axis", axis)
      .ArgInts("offset", offsets);
  return tester.Run();
}

void ExpectError(const MaceStatus &status, const std::string &piece) {
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(piece), std::string::npos)
      << status.information();
}

TEST(CropErrorTest, OffsetPlusSizePastInputIsRejected) {
  ExpectError(RunCrop("c0", {1, 3, 4, 3}, 1, {3}), "out of range");
}

TEST(CropErrorTest, ReferenceLargerThanInputIsRejected) {
  ExpectError(RunCrop("c1", {1, 5, 7, 3}, 2, {0}), "out of range");
}

TEST(CropErrorTest, WrongOffsetCountIsRejected) {
  ExpectError(RunCrop("c2", {1, 3, 4, 3}, 1, {0, 0}), "'offset'");
}

TEST(CropErrorTest, AxisOutOfRangeIsRejected) {
  ExpectError(RunCrop("c3", {1, 3, 4, 3}, 4, {0}), "'axis'");
}

TEST(CropErrorTest, ReferenceRankMismatchIsRejected) {
  ExpectError(RunCrop("c4", {3, 4, 3}, 1, {0}), "reference");
}

}  // namespace
}  // namespace test
}  // namespace mace
