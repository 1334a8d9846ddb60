#include <cmath>
#include <cstdint>
#include <functional>
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
using BinaryFn = std::function<double(double, double)>;
using UnaryFn = std::function<double(double)>;

// Numpy broadcast of two shapes, written independently of the op's helper.
Shape Broadcast(const Shape &a, const Shape &b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Flat index into `shape` of the element that output element `flat` (of
// `out`) reads under broadcasting.
int64_t SourceIndex(const Shape &out, const Shape &shape, int64_t flat) {
  std::vector<int64_t> coord(out.size());
  for (size_t i = out.size(); i-- > 0;) {
    coord[i] = flat % out[i];
    flat /= out[i];
  }
  int64_t index = 0;
  const size_t offset = out.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t c = shape[i] == 1 ? 0 : coord[i + offset];
    index = index * shape[i] + c;
  }
  return index;
}

template <typename T>
std::vector<double> BinaryReference(const Shape &sa, const std::vector<T> &a,
                                    const Shape &sb, const std::vector<T> &b,
                                    const BinaryFn &fn) {
  const Shape out = Broadcast(sa, sb);
  std::vector<double> expected(Product(out));
  for (int64_t i = 0; i < Product(out); ++i) {
    expected[i] = fn(static_cast<double>(a[SourceIndex(out, sa, i)]),
                     static_cast<double>(b[SourceIndex(out, sb, i)]));
  }
  return expected;
}

std::vector<float> IntsAsFloats(const std::vector<int32_t> &v) {
  return std::vector<float>(v.begin(), v.end());
}

// Values in [0.5, 2] with alternating signs: safe divisors.
std::vector<float> NonZero(int64_t count, uint32_t seed) {
  std::vector<float> v = RandomFloats(count, 0.5f, 2.0f, seed);
  for (size_t i = 0; i < v.size(); i += 2) v[i] = -v[i];
  return v;
}

enum DataKind { kGeneral, kPositiveBase, kTies };

struct BinaryCase {
  int type;
  const char *name;
  BinaryFn reference;
  DataKind data;
};

double RoundHalfEven(double x) {
  const double f = std::floor(x);
  if (x - f != 0.5) return std::round(x);
  return std::fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

std::vector<BinaryCase> FloatBinaryCases() {
  return {
      {0, "SUM", [](double a, double b) { return a + b; }, kGeneral},
      {1, "SUB", [](double a, double b) { return a - b; }, kGeneral},
      {2, "PROD", [](double a, double b) { return a * b; }, kGeneral},
      {3, "DIV", [](double a, double b) { return a / b; }, kGeneral},
      {4, "MIN", [](double a, double b) { return std::min(a, b); }, kTies},
      {5, "MAX", [](double a, double b) { return std::max(a, b); }, kTies},
      {8, "SQR_DIFF", [](double a, double b) { return (a - b) * (a - b); },
       kGeneral},
      {9, "POW", [](double a, double b) { return std::pow(a, b); },
       kPositiveBase},
      {10, "EQUAL", [](double a, double b) { return a == b ? 1.0 : 0.0; },
       kTies},
      {11, "FLOOR_DIV", [](double a, double b) { return std::floor(a / b); },
       kGeneral},
      {23, "GREATER", [](double a, double b) { return a > b ? 1.0 : 0.0; },
       kTies},
      {24, "LESS", [](double a, double b) { return a < b ? 1.0 : 0.0; }, kTies},
      {25, "NOT_EQUAL", [](double a, double b) { return a != b ? 1.0 : 0.0; },
       kTies},
  };
}

void MakeBinaryData(DataKind kind, int64_t na, int64_t nb,
                    std::vector<float> *a, std::vector<float> *b) {
  switch (kind) {
    case kGeneral:
      *a = RandomFloats(na, -3.0f, 3.0f, 11);
      *b = NonZero(nb, 12);
      break;
    case kPositiveBase:
      *a = RandomFloats(na, 0.5f, 2.0f, 13);
      *b = RandomFloats(nb, -2.0f, 2.0f, 14);
      break;
    case kTies:
      *a = IntsAsFloats(RandomInts(na, -2, 2, 15));
      *b = IntsAsFloats(RandomInts(nb, -2, 2, 16));
      break;
  }
}

class EltwiseTest : public ::testing::TestWithParam<int> {};

// Runs type `c` on a (shape sa) and b (shape sb) and checks it against the
// reference.
void ExpectBinaryMatches(const BinaryCase &c, const Shape &sa, const Shape &sb,
                         int threads) {
  std::vector<float> a, b;
  MakeBinaryData(c.data, Product(sa), Product(sb), &a, &b);
  OpTester tester("Eltwise");
  tester.Input("a", sa, a)
      .Input("b", sb, b)
      .Output("y")
      .Arg("type", c.type)
      .Threads(threads);
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS)
      << c.name << " " << ::testing::PrintToString(sa) << " vs "
      << ::testing::PrintToString(sb);
  EXPECT_EQ(tester.output(0).shape, Broadcast(sa, sb)) << c.name;
  EXPECT_TRUE(AllClose(tester.output(0).floats,
                       BinaryReference(sa, a, sb, b, c.reference)))
      << c.name << " " << ::testing::PrintToString(sa) << " vs "
      << ::testing::PrintToString(sb);
}

TEST_P(EltwiseTest, EveryBinaryFloatTypeBroadcastsRank4WithRank2) {
  for (const BinaryCase &c : FloatBinaryCases()) {
    ExpectBinaryMatches(c, {2, 3, 1, 5}, {4, 1}, GetParam());
  }
}

TEST_P(EltwiseTest, BroadcastWorksInEitherOperandOrder) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{4, 1}, {2, 3, 1, 5}},    {{2, 3, 1, 5}, {}},
      {{}, {2, 3, 1, 5}},        {{3, 1, 17}, {3, 7, 1}},
      {{1, 1, 1}, {2, 5, 7}},    {{2, 5, 7}, {2, 5, 7}},
      {{2, 1, 7, 1}, {5, 1, 3}}, {{1}, {1}},
  };
  for (const BinaryCase &c : FloatBinaryCases()) {
    if (c.type != 1 && c.type != 3 && c.type != 24) continue;  // SUB DIV LESS
    for (const auto &pair : shapes) {
      ExpectBinaryMatches(c, pair.first, pair.second, GetParam());
    }
  }
}

// Large enough that the thread pool splits rows between threads.
TEST_P(EltwiseTest, LargeTensorsSplitAcrossThreads) {
  const BinaryCase sub = FloatBinaryCases()[1];
  ExpectBinaryMatches(sub, {3, 67, 1, 129}, {5, 1}, GetParam());
  ExpectBinaryMatches(sub, {67, 129}, {3, 67, 129}, GetParam());
  const std::vector<float> x = RandomFloats(3 * 67 * 129, -2, 2, 17);
  OpTester tester("Eltwise");
  tester.Input("x", {3, 67, 129}, x)
      .Output("y")
      .Arg("type", 17)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  std::vector<double> expected;
  for (float v : x) expected.push_back(std::exp(static_cast<double>(v)));
  EXPECT_TRUE(AllClose(tester.output(0).floats, expected));
}

// Same-shape operands merge into one long row, cut into pieces shared
// among the threads; a per-channel or scalar operand on either side takes
// the broadcast loops. Every binary float type through each of them.
TEST_P(EltwiseTest, LongRowsAndBroadcastOperandsOnEitherSide) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 33, 65, 5}, {2, 33, 65, 5}},  // one row of 21450 values
      {{2, 9, 7, 5}, {5}},               // per channel
      {{5}, {2, 9, 7, 5}},
      {{2, 9, 7, 5}, {}},  // scalar
      {{}, {2, 9, 7, 5}},
  };
  for (const BinaryCase &c : FloatBinaryCases()) {
    for (const auto &pair : shapes) {
      ExpectBinaryMatches(c, pair.first, pair.second, GetParam());
    }
  }
}

TEST_P(EltwiseTest, SumWithCoefficientsWeighsOperands) {
  const Shape sa = {2, 3, 1, 5}, sb = {4, 1};
  const std::vector<float> a = RandomFloats(30, -1, 1, 3);
  const std::vector<float> b = RandomFloats(4, -1, 1, 4);
  OpTester tester("Eltwise");
  tester.Input("a", sa, a)
      .Input("b", sb, b)
      .Output("y")
      .Arg("type", 0)
      .ArgFloats("coeff", {0.5f, -2.0f})
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_TRUE(AllClose(tester.output(0).floats,
                       BinaryReference(sa, a, sb, b, [](double p, double q) {
                         return 0.5 * p - 2.0 * q;
                       })));
}

struct UnaryCase {
  int type;
  const char *name;
  UnaryFn reference;
  float low, high;
};

TEST_P(EltwiseTest, EveryUnaryFloatTypeMatchesReference) {
  const std::vector<UnaryCase> cases = {
      {6, "NEG", [](double x) { return -x; }, -3, 3},
      {7, "ABS", [](double x) { return std::fabs(x); }, -3, 3},
      {12, "CLIP", [](double x) { return std::min(std::max(x, -0.5), 0.7); },
       -2, 2},
      {13, "SIGN", [](double x) { return double((x > 0) - (x < 0)); }, -3, 3},
      {15, "SQRT", [](double x) { return std::sqrt(x); }, 0, 4},
      {16, "RSQRT", [](double x) { return 1.0 / std::sqrt(x); }, 0.1f, 4},
      {17, "EXP", [](double x) { return std::exp(x); }, -4, 4},
      {18, "LOG", [](double x) { return std::log(x); }, 0.05f, 5},
      {19, "ERF", [](double x) { return std::erf(x); }, -3, 3},
      {20, "RECIPROCAL", [](double x) { return 1.0 / x; }, 0.2f, 3},
      {21, "FLOOR", [](double x) { return std::floor(x); }, -5, 5},
      {22, "CEIL", [](double x) { return std::ceil(x); }, -5, 5},
      {26, "ROUND", RoundHalfEven, -5, 5},
      {27, "SIN", [](double x) { return std::sin(x); }, -4, 4},
      {28, "COS", [](double x) { return std::cos(x); }, -4, 4},
  };
  const Shape shape = {2, 5, 7, 3};
  for (const UnaryCase &c : cases) {
    std::vector<float> x = RandomFloats(Product(shape), c.low, c.high, 21);
    // Exact halves, integers and zeros, where rounding and sign differ.
    for (int i = 0; i < 24; ++i) {
      x[i * 5] = c.low >= 0 ? 0.5f * (i + 1) : 0.5f * (i - 12);
    }
    OpTester tester("Eltwise");
    tester.Input("x", shape, x)
        .Output("y")
        .Arg("type", c.type)
        .Threads(GetParam());
    if (c.type == 12) tester.ArgFloats("coeff", {-0.5f, 0.7f});
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS) << c.name;
    std::vector<double> expected;
    for (float v : x) expected.push_back(c.reference(v));
    EXPECT_EQ(tester.output(0).shape, shape) << c.name;
    EXPECT_TRUE(AllClose(tester.output(0).floats, expected)) << c.name;
  }
}

TEST_P(EltwiseTest, RoundTiesGoToEven) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {
      -2.5f,       -1.5f,        -0.5f,      0.5f,       1.5f, 2.5f, 3.5f,
      0.49999997f, -0.49999997f, 2.5000002f, 8388609.0f, inf,  -inf};
  OpTester tester("Eltwise");
  tester.Input("x", {13}, x).Output("y").Arg("type", 26).Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  const std::vector<float> expected = {-2, -2, -0, 0,          2,   2,   4,
                                       0,  -0, 3,  8388609.0f, inf, -inf};
  EXPECT_EQ(tester.output(0).floats, expected);
}

TEST_P(EltwiseTest, ScalarInputTakesEitherOperandPosition) {
  const Shape shape = {3, 1, 7};
  const std::vector<float> x = NonZero(21, 5);
  for (int type : {1, 3, 9, 24}) {  // SUB, DIV, POW, LESS
    for (int index : {0, 1}) {
      std::vector<float> xs = x;
      if (type == 9) xs = RandomFloats(21, 0.5f, 2.0f, 6);
      OpTester tester("Eltwise");
      tester.Input("x", shape, xs)
          .Output("y")
          .Arg("type", type)
          .ArgFloat("scalar_input", 1.5f)
          .Arg("scalar_input_index", index)
          .Threads(GetParam());
      ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
      std::vector<double> expected;
      for (float v : xs) {
        const double p = index == 1 ? v : 1.5, q = index == 1 ? 1.5 : v;
        switch (type) {
          case 1:
            expected.push_back(p - q);
            break;
          case 3:
            expected.push_back(p / q);
            break;
          case 9:
            expected.push_back(std::pow(p, q));
            break;
          default:
            expected.push_back(p < q ? 1.0 : 0.0);
            break;
        }
      }
      EXPECT_EQ(tester.output(0).shape, shape);
      EXPECT_TRUE(AllClose(tester.output(0).floats, expected))
          << "type " << type << " index " << index;
    }
  }
}

TEST_P(EltwiseTest, ConstantSecondOperandBroadcasts) {
  const Shape sa = {2, 3, 4, 5};
  const std::vector<float> a = RandomFloats(120, -1, 1, 8);
  const std::vector<float> b = RandomFloats(5, -1, 1, 9);
  OpTester tester("Eltwise");
  tester.Input("a", sa, a)
      .Constant("b", {5}, b)
      .Output("y")
      .Arg("type", 2)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_TRUE(
      AllClose(tester.output(0).floats,
               BinaryReference(sa, a, Shape{5}, b,
                               [](double p, double q) { return p * q; })));
}

// int32: exact results, int64 reference with C semantics.
int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

TEST_P(EltwiseTest, Int32BinaryTypesMatchIntegerReference) {
  struct IntCase {
    int type;
    std::function<int64_t(int64_t, int64_t)> fn;
  };
  const std::vector<IntCase> cases = {
      {0, [](int64_t a, int64_t b) { return a + b; }},
      {1, [](int64_t a, int64_t b) { return a - b; }},
      {2, [](int64_t a, int64_t b) { return a * b; }},
      {3, [](int64_t a, int64_t b) { return a / b; }},  // truncation
      {11, FloorDiv},
      {4, [](int64_t a, int64_t b) { return std::min(a, b); }},
      {5, [](int64_t a, int64_t b) { return std::max(a, b); }},
      {10, [](int64_t a, int64_t b) { return int64_t{a == b}; }},
      {23, [](int64_t a, int64_t b) { return int64_t{a > b}; }},
      {24, [](int64_t a, int64_t b) { return int64_t{a < b}; }},
      {25, [](int64_t a, int64_t b) { return int64_t{a != b}; }},
  };
  const Shape sa = {2, 3, 1, 5}, sb = {4, 1};
  const Shape out = Broadcast(sa, sb);
  const std::vector<int32_t> a = RandomInts(30, -20, 20, 31);
  std::vector<int32_t> b = RandomInts(4, 1, 7, 32);
  b[1] = -b[1];
  b[3] = -3;
  for (const IntCase &c : cases) {
    OpTester tester("Eltwise");
    tester.InputInt("a", sa, a)
        .InputInt("b", sb, b)
        .OutputInt("y")
        .Arg("type", c.type)
        .Threads(GetParam());
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS) << "type " << c.type;
    std::vector<int32_t> expected;
    for (int64_t i = 0; i < Product(out); ++i) {
      expected.push_back(static_cast<int32_t>(
          c.fn(a[SourceIndex(out, sa, i)], b[SourceIndex(out, sb, i)])));
    }
    EXPECT_EQ(tester.output(0).shape, out);
    EXPECT_EQ(tester.output(0).ints, expected) << "type " << c.type;
  }
}

TEST_P(EltwiseTest, Int32UnaryTypesAndScalarOperand) {
  const std::vector<int32_t> x = {-7, -1, 0, 3, 9, -2147483647, 2147483647};
  const std::vector<std::pair<int, std::vector<int32_t>>> cases = {
      {6, {7, 1, 0, -3, -9, 2147483647, -2147483647}},
      {7, {7, 1, 0, 3, 9, 2147483647, 2147483647}},
      {13, {-1, -1, 0, 1, 1, -1, 1}},
  };
  for (const auto &c : cases) {
    OpTester tester("Eltwise");
    tester.InputInt("x", {7}, x)
        .OutputInt("y")
        .Arg("type", c.first)
        .Threads(GetParam());
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
    EXPECT_EQ(tester.output(0).ints, c.second) << "type " << c.first;
  }
  // 2 - x (scalar first) and x / 2 (scalar second, truncating).
  OpTester sub("Eltwise");
  sub.InputInt("x", {7}, x)
      .OutputInt("y")
      .Arg("type", 1)
      .ArgFloat("scalar_input", 2.0f)
      .Arg("scalar_input_index", 0)
      .Threads(GetParam());
  ASSERT_EQ(sub.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(sub.output(0).ints,
            (std::vector<int32_t>{9, 3, 2, -1, -7, -2147483647, -2147483645}));
  OpTester div("Eltwise");
  div.InputInt("x", {7}, x)
      .OutputInt("y")
      .Arg("type", 3)
      .ArgFloat("scalar_input", 2.0f)
      .Threads(GetParam());
  ASSERT_EQ(div.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(div.output(0).ints,
            (std::vector<int32_t>{-3, 0, 0, 1, 4, -1073741823, 1073741823}));
}

TEST(EltwiseInt32Test, OverflowWrapsAround) {
  OpTester tester("Eltwise");
  tester.InputInt("a", {3}, {2147483647, -2147483647 - 1, 65536})
      .InputInt("b", {3}, {1, -1, 65536})
      .OutputInt("y")
      .Arg("type", 2);  // PROD
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).ints,
            (std::vector<int32_t>{2147483647, -2147483647 - 1, 0}));
  OpTester sum("Eltwise");
  sum.InputInt("a", {1}, {2147483647})
      .InputInt("b", {1}, {1})
      .OutputInt("y")
      .Arg("type", 0);
  ASSERT_EQ(sum.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(sum.output(0).ints, (std::vector<int32_t>{-2147483647 - 1}));
}

INSTANTIATE_TEST_SUITE_P(Threads, EltwiseTest, ::testing::Values(1, 2));

// Errors -------------------------------------------------------------------

MaceStatus RunExpectingError(OpTester *tester, const std::string &needle) {
  const MaceStatus status = tester->Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(needle), std::string::npos)
      << status.information();
  return status;
}

TEST(EltwiseErrorTest, ShapesThatDoNotBroadcastAreRejected) {
  OpTester tester("Eltwise", "add1");
  tester.Input("a", {2, 3}, RandomFloats(6))
      .Input("b", {4}, RandomFloats(4))
      .Output("y")
      .Arg("type", 0);
  const MaceStatus status = RunExpectingError(&tester, "broadcast");
  EXPECT_NE(status.information().find("add1"), std::string::npos);
  EXPECT_NE(status.information().find("[2,3]"), std::string::npos);
}

TEST(EltwiseErrorTest, UnknownTypeCodesAreRejected) {
  for (int type : {14, 29, -1, 99}) {
    OpTester tester("Eltwise");
    tester.Input("a", {3}, {1, 2, 3}).Output("y").Arg("type", type);
    RunExpectingError(&tester, "'type'");
  }
  OpTester missing("Eltwise");
  missing.Input("a", {3}, {1, 2, 3}).Output("y");
  RunExpectingError(&missing, "'type'");
}

TEST(EltwiseErrorTest, TypeGivenAsFloatIsRejected) {
  OpTester tester("Eltwise");
  tester.Input("a", {3}, {1, 2, 3}).Output("y").ArgFloat("type", 0.5f);
  RunExpectingError(&tester, "'type'");
}

TEST(EltwiseErrorTest, UnaryTypeWithTwoInputsIsRejected) {
  OpTester tester("Eltwise");
  tester.Input("a", {3}, {1, 2, 3})
      .Input("b", {3}, {1, 2, 3})
      .Output("y")
      .Arg("type", 17);
  RunExpectingError(&tester, "EXP");
}

TEST(EltwiseErrorTest, ClipNeedsMinAndMaxCoefficients) {
  OpTester tester("Eltwise");
  tester.Input("a", {3}, {1, 2, 3})
      .Output("y")
      .Arg("type", 12)
      .ArgFloats("coeff", {1.0f});
  RunExpectingError(&tester, "coeff");
  OpTester reversed("Eltwise");
  reversed.Input("a", {3}, {1, 2, 3})
      .Output("y")
      .Arg("type", 12)
      .ArgFloats("coeff", {1.0f, 0.0f});
  RunExpectingError(&reversed, "coeff");
}

TEST(EltwiseErrorTest, FloatOnlyTypeOnInt32IsUnsupported) {
  OpTester tester("Eltwise");
  tester.InputInt("a", {3}, {1, 2, 3})
      .InputInt("b", {3}, {1, 2, 3})
      .OutputInt("y")
      .Arg("type", 9);
  const MaceStatus status = RunExpectingError(&tester, "POW");
  EXPECT_EQ(status.code(), MaceStatus::MACE_UNSUPPORTED);
}

TEST(EltwiseErrorTest, MixedInputDtypesAreRejected) {
  OpTester tester("Eltwise");
  tester.Input("a", {3}, {1, 2, 3})
      .InputInt("b", {3}, {1, 2, 3})
      .Output("y")
      .Arg("type", 0);
  RunExpectingError(&tester, "input 1");
}

TEST(EltwiseErrorTest, BadScalarArgumentsAreRejected) {
  OpTester index("Eltwise");
  index.Input("a", {3}, {1, 2, 3})
      .Output("y")
      .Arg("type", 1)
      .Arg("scalar_input_index", 2);
  RunExpectingError(&index, "scalar_input_index");
  OpTester fraction("Eltwise");
  fraction.InputInt("a", {3}, {1, 2, 3})
      .OutputInt("y")
      .Arg("type", 0)
      .ArgFloat("scalar_input", 0.5f);
  RunExpectingError(&fraction, "scalar_input");
}

TEST(EltwiseErrorTest, NchwDataFormatIsUnsupported) {
  OpTester tester("Eltwise");
  tester.Input("a", {1, 2, 2, 3}, RandomFloats(12))
      .Output("y")
      .Arg("type", 6)
      .Arg("data_format", 2);
  const MaceStatus status = RunExpectingError(&tester, "data_format");
  EXPECT_EQ(status.code(), MaceStatus::MACE_UNSUPPORTED);
}

TEST(EltwiseErrorTest, Int32DivisionByZeroFailsAtRun) {
  OpTester tester("Eltwise", "div0");
  tester.InputInt("a", {2, 3}, {1, 2, 3, 4, 5, 6})
      .InputInt("b", {3}, {1, 0, 2})
      .OutputInt("y")
      .Arg("type", 3);
  const MaceStatus status = RunExpectingError(&tester, "zero");
  EXPECT_EQ(status.code(), MaceStatus::MACE_RUNTIME_ERROR);
  EXPECT_NE(status.information().find("div0"), std::string::npos);
}

}  // namespace
}  // namespace test
}  // namespace mace
