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

// Input coordinate for padded position p (p counted from the input's first
// element) along a dim of size n, or -1 for the constant.
int64_t PadSource(int mode, int64_t p, int64_t n) {
  if (p >= 0 && p < n) return p;
  switch (mode) {
    case 1:  // reflect: ... 2 1 | 0 1 2 ... n-1 | n-2 n-3 ...
      return p < 0 ? -p : (n - 1) - (p - (n - 1));
    case 2:  // symmetric: ... 1 0 | 0 1 ... n-1 | n-1 n-2 ...
      return p < 0 ? -1 - p : (n - 1) - (p - n);
    case 3:  // edge
      return p < 0 ? 0 : n - 1;
    default:
      return -1;
  }
}

// Pads one axis at a time: each pass copies the current array into one
// that is larger (or smaller) along `axis` only.
std::vector<double> PadReference(const std::vector<float> &x, Dims shape,
                                 const Dims &pads, int mode, double value,
                                 Dims *out_shape) {
  std::vector<double> cur = ToDouble(x);
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    int64_t outer = 1, inner = 1;
    for (size_t k = 0; k < axis; ++k) outer *= shape[k];
    for (size_t k = axis + 1; k < shape.size(); ++k) inner *= shape[k];
    const int64_t n = shape[axis];
    const int64_t before = pads[2 * axis];
    const int64_t m = n + before + pads[2 * axis + 1];
    std::vector<double> next;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t q = 0; q < m; ++q) {
        const int64_t src = PadSource(mode, q - before, n);
        for (int64_t i = 0; i < inner; ++i) {
          next.push_back(src < 0 ? value : cur[(o * n + src) * inner + i]);
        }
      }
    }
    cur.swap(next);
    shape[axis] = m;
  }
  *out_shape = shape;
  return cur;
}

struct PadCase {
  Dims pads;
  int mode;
};

class PadTest : public ::testing::TestWithParam<int> {};

TEST_P(PadTest, EveryModeOnEveryAxisMatchesReference) {
  const Dims shape = {2, 5, 7, 3};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 51);
  const std::vector<PadCase> cases = {
      {{1, 0, 2, 3, 0, 1, 1, 2}, 0},
      {{0, 0, -1, 2, 3, -2, 0, -1}, 0},  // negative: crop
      {{0, 0, 1, -3, -4, 2, -1, 1}, 0},
      {{0, 0, 0, 0, 0, 0, -5, 4}, 0},  // crop past the data: all constant
      {{1, 1, 0, 0, 0, 0, 0, 0}, 1},   // reflect, one axis at a time
      {{0, 0, 4, 2, 0, 0, 0, 0}, 1},
      {{0, 0, 0, 0, 6, 3, 0, 0}, 1},
      {{0, 0, 0, 0, 0, 0, 2, 1}, 1},
      {{1, 1, 4, 4, 6, 6, 2, 2}, 1},  // reflect, the largest allowed
      {{2, 1, 0, 0, 0, 0, 0, 0}, 2},  // symmetric
      {{0, 0, 5, 3, 0, 0, 0, 0}, 2},
      {{0, 0, 0, 0, 7, 2, 0, 0}, 2},
      {{0, 0, 0, 0, 0, 0, 3, 3}, 2},
      {{3, 1, 2, 6, 1, 1, 0, 4}, 3},  // edge
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    OpTester tester("Pad");
    tester.Input("x", shape, x)
        .Output("y")
        .ArgInts("paddings", cases[c].pads)
        .Arg("pad_type", cases[c].mode)
        .ArgFloat("constant_value", 1.5f)
        .Threads(GetParam());
    const MaceStatus status = tester.Run();
    ASSERT_EQ(status, MaceStatus::MACE_SUCCESS)
        << "case " << c << ": " << status.information();
    Dims expected_shape;
    const std::vector<double> expected = PadReference(
        x, shape, cases[c].pads, cases[c].mode, 1.5, &expected_shape);
    EXPECT_EQ(tester.output(0).shape, expected_shape) << "case " << c;
    EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 0, 0))
        << "case " << c;
  }
}

TEST_P(PadTest, DefaultConstantIsZeroOnRank2) {
  const std::vector<float> x = RandomFloats(15, -1, 1, 52);
  OpTester tester("Pad");
  tester.Input("x", {3, 5}, x)
      .Output("y")
      .ArgInts("paddings", {2, 1, 0, 3})
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  Dims expected_shape;
  const std::vector<double> expected =
      PadReference(x, {3, 5}, {2, 1, 0, 3}, 0, 0.0, &expected_shape);
  EXPECT_EQ(tester.output(0).shape, (Dims{6, 8}));
  EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 0, 0));
}

INSTANTIATE_TEST_SUITE_P(Threads, PadTest, ::testing::Values(1, 2));

MaceStatus RunPad(const std::string &name, const Dims &pads, int mode) {
  OpTester tester("Pad", name);
  tester.Input("x", {1, 3, 4, 2}, RandomFloats(24))
      .Output("y")
      .ArgInts("paddings", pads)
      .Arg("pad_type", mode);
  return tester.Run();
}

void ExpectError(const MaceStatus &status, const std::string &piece) {
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(piece), std::string::npos)
      << status.information();
}

TEST(PadErrorTest, ReflectPadAsLargeAsDimIsRejected) {
  ExpectError(RunPad("p0", {0, 0, 3, 0, 0, 0, 0, 0}, 1), "REFLECT");
}

TEST(PadErrorTest, SymmetricPadLargerThanDimIsRejected) {
  ExpectError(RunPad("p1", {0, 0, 0, 0, 0, 5, 0, 0}, 2), "SYMMETRIC");
  EXPECT_EQ(RunPad("p1b", {0, 0, 0, 0, 0, 4, 0, 0}, 2),
            MaceStatus::MACE_SUCCESS);
}

TEST(PadErrorTest, NegativePadOutsideConstantModeIsRejected) {
  ExpectError(RunPad("p2", {0, 0, -1, 0, 0, 0, 0, 0}, 3), "negative");
}

TEST(PadErrorTest, CropLargerThanDimIsRejected) {
  ExpectError(RunPad("p3", {0, 0, -2, -2, 0, 0, 0, 0}, 0), "remove");
}

TEST(PadErrorTest, WrongPaddingCountIsRejected) {
  ExpectError(RunPad("p4", {1, 1, 1, 1}, 0), "'paddings'");
}

TEST(PadErrorTest, UnknownPadTypeIsRejected) {
  ExpectError(RunPad("p5", {0, 0, 0, 0, 0, 0, 0, 0}, 7), "'pad_type'");
}

TEST(PadErrorTest, NchwDataFormatIsUnsupported) {
  OpTester tester("Pad", "p6");
  tester.Input("x", {1, 2, 2, 1}, RandomFloats(4))
      .Output("y")
      .ArgInts("paddings", {0, 0, 1, 1, 1, 1, 0, 0})
      .Arg("data_format", 2);
  const MaceStatus status = tester.Run();
  EXPECT_EQ(status.code(), MaceStatus::MACE_UNSUPPORTED);
  EXPECT_NE(status.information().find("'data_format'"), std::string::npos);
}

}  // namespace
}  // namespace test
}  // namespace mace
