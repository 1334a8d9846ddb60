// MatMul against a float64 reference with numpy matmul semantics: 1-D
// operands promoted (and the added dim dropped), batch dims broadcast,
// transpose_a / transpose_b swapping the last two dims.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

using Shape = std::vector<int64_t>;

// An operand as a stack of stored matrices [batch..., rows, cols].
struct Operand {
  const std::vector<float> *data;
  Shape batch;
  int64_t rows, cols;  // stored
  bool transpose;

  double At(int64_t batch_index, int64_t r, int64_t c) const {
    if (transpose) std::swap(r, c);
    return (*data)[(batch_index * rows + r) * cols + c];
  }
};

Operand MakeOperand(const std::vector<float> &data, const Shape &shape,
                    bool transpose, bool is_lhs) {
  if (shape.size() == 1) {
    // numpy: a 1-D left operand is a row, a 1-D right operand a column.
    return is_lhs ? Operand{&data, {}, 1, shape[0], false}
                  : Operand{&data, {}, shape[0], 1, false};
  }
  Shape batch(shape.begin(), shape.end() - 2);
  return {&data, batch, shape[shape.size() - 2], shape.back(), transpose};
}

// Flat index into `batch` of the output batch position `index` (right
// aligned, broadcast dims read index 0).
int64_t OperandBatchIndex(const Shape &batch, const Shape &index) {
  int64_t flat = 0;
  const size_t offset = index.size() - batch.size();
  for (size_t i = 0; i < batch.size(); ++i) {
    flat = flat * batch[i] + (batch[i] == 1 ? 0 : index[offset + i]);
  }
  return flat;
}

std::vector<double> ReferenceMatMul(const std::vector<float> &a,
                                    const Shape &a_shape,
                                    const std::vector<float> &b,
                                    const Shape &b_shape, bool ta, bool tb,
                                    Shape *out_shape) {
  const Operand lhs = MakeOperand(a, a_shape, ta, true);
  const Operand rhs = MakeOperand(b, b_shape, tb, false);
  const int64_t m = lhs.transpose ? lhs.cols : lhs.rows;
  const int64_t k = lhs.transpose ? lhs.rows : lhs.cols;
  const int64_t n = rhs.transpose ? rhs.rows : rhs.cols;
  const size_t rank = std::max(lhs.batch.size(), rhs.batch.size());
  Shape batch(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da =
        i < lhs.batch.size() ? lhs.batch[lhs.batch.size() - 1 - i] : 1;
    const int64_t db =
        i < rhs.batch.size() ? rhs.batch[rhs.batch.size() - 1 - i] : 1;
    batch[rank - 1 - i] = std::max(da, db);
  }
  *out_shape = batch;
  if (a_shape.size() > 1) out_shape->push_back(m);
  if (b_shape.size() > 1) out_shape->push_back(n);

  std::vector<double> out;
  Shape index(rank, 0);
  for (int64_t flat = 0; flat < Product(batch); ++flat) {
    int64_t rest = flat;
    for (size_t i = rank; i-- > 0;) {
      index[i] = rest % batch[i];
      rest /= batch[i];
    }
    const int64_t ai = OperandBatchIndex(lhs.batch, index);
    const int64_t bi = OperandBatchIndex(rhs.batch, index);
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t c = 0; c < n; ++c) {
        double sum = 0.0;
        for (int64_t j = 0; j < k; ++j) {
          sum += lhs.At(ai, r, j) * rhs.At(bi, j, c);
        }
        out.push_back(sum);
      }
    }
  }
  return out;
}

struct MatMulCase {
  Shape a_shape;
  Shape b_shape;
  bool transpose_a;
  bool transpose_b;
  Shape expected_shape;
  bool constant_b;
  bool with_bias = false;  // a constant [N] third input
};

void CheckMatMul(const MatMulCase &mc, int threads) {
  const auto a = RandomFloats(Product(mc.a_shape), -1, 1, 41);
  const auto b = RandomFloats(Product(mc.b_shape), -1, 1, 42);
  Shape ref_shape;
  auto expected = ReferenceMatMul(a, mc.a_shape, b, mc.b_shape, mc.transpose_a,
                                  mc.transpose_b, &ref_shape);
  ASSERT_EQ(ref_shape, mc.expected_shape);
  OpTester t("MatMul");
  t.Input("a", mc.a_shape, a);
  if (mc.constant_b) {
    t.Constant("b", mc.b_shape, b);
  } else {
    t.Input("b", mc.b_shape, b);
  }
  if (mc.with_bias) {
    const int64_t n = mc.expected_shape.back();
    const auto bias = RandomFloats(n, -1, 1, 47);
    t.Constant("bias", {n}, bias);
    for (size_t i = 0; i < expected.size(); ++i) expected[i] += bias[i % n];
  }
  t.Output("c").Threads(threads);
  if (mc.transpose_a) t.Arg("transpose_a", 1);
  if (mc.transpose_b) t.Arg("transpose_b", 1);
  MaceStatus status = t.Run();
  ASSERT_EQ(status.code(), MaceStatus::MACE_SUCCESS) << status.information();
  EXPECT_EQ(t.output(0).shape, mc.expected_shape);
  const int64_t k = mc.a_shape.size() == 1 || !mc.transpose_a
                        ? mc.a_shape.back()
                        : mc.a_shape[mc.a_shape.size() - 2];
  // Products summed in float: error grows like sqrt(K).
  EXPECT_TRUE(AllClose(t.output(0).floats, expected, 1e-5,
                       1e-5 * std::sqrt(static_cast<double>(k))));
}

TEST(MatMulTest, TwoDMatchesReference) {
  for (int threads : {1, 2}) {
    CheckMatMul({{5, 7}, {7, 3}, false, false, {5, 3}, false}, threads);
    CheckMatMul({{1, 1}, {1, 1}, false, false, {1, 1}, false}, threads);
  }
}

TEST(MatMulTest, WorkSplitAcrossThreadsMatchesReference) {
  for (int threads : {1, 2}) {
    CheckMatMul({{4, 40, 16}, {16, 8}, false, false, {4, 40, 8}, false},
                threads);
    CheckMatMul({{4, 16, 40}, {1, 8, 16}, true, true, {4, 40, 8}, false},
                threads);
  }
}

TEST(MatMulTest, BatchDimsBroadcast) {
  for (int threads : {1, 2}) {
    CheckMatMul({{2, 1, 3, 4}, {5, 4, 6}, false, false, {2, 5, 3, 6}, false},
                threads);
    CheckMatMul({{3, 5}, {2, 5, 7}, false, false, {2, 3, 7}, false}, threads);
    CheckMatMul({{2, 1, 3, 4}, {1, 3, 4, 2}, false, false, {2, 3, 3, 2}, false},
                threads);
  }
}

TEST(MatMulTest, TransposesMatchReference) {
  for (int threads : {1, 2}) {
    CheckMatMul({{2, 4, 3}, {2, 4, 5}, true, false, {2, 3, 5}, false}, threads);
    CheckMatMul({{2, 3, 4}, {2, 5, 4}, false, true, {2, 3, 5}, false}, threads);
    CheckMatMul({{2, 9, 3}, {17, 9}, true, true, {2, 3, 17}, false}, threads);
  }
}

TEST(MatMulTest, OneDOperandsDropTheAddedDim) {
  for (int threads : {1, 2}) {
    CheckMatMul({{4}, {4, 6}, false, false, {6}, false}, threads);
    CheckMatMul({{3, 4}, {4}, false, false, {3}, false}, threads);
    CheckMatMul({{2, 3, 4}, {4}, false, false, {2, 3}, false}, threads);
    CheckMatMul({{4}, {2, 4, 6}, false, false, {2, 6}, false}, threads);
    CheckMatMul({{4}, {2, 6, 4}, false, true, {2, 6}, false}, threads);
  }
}

TEST(MatMulTest, TwoOneDOperandsGiveAScalar) {
  CheckMatMul({{7}, {7}, false, false, {}, false}, 1);
}

// A B fed at run time is packed per batch into scratch for the SGEMM:
// attention's Q x K^T (transpose_b) and P x V, several panels with an edge
// panel, a B shared by consecutive batches (packed once) and B matrices
// alternating between batches (packed again each time).
TEST(MatMulTest, RuntimeOperandsPackedPerBatchMatchReference) {
  for (int threads : {1, 2}) {
    CheckMatMul({{4, 19, 16}, {4, 37, 16}, false, true, {4, 19, 37}, false},
                threads);
    CheckMatMul({{4, 19, 37}, {4, 37, 70}, false, false, {4, 19, 70}, false},
                threads);
    CheckMatMul(
        {{2, 3, 9, 37}, {2, 1, 37, 33}, false, false, {2, 3, 9, 33}, false},
        threads);
    CheckMatMul(
        {{3, 2, 9, 37}, {2, 37, 33}, false, false, {3, 2, 9, 33}, false},
        threads);
  }
}

TEST(MatMulTest, ConstantOperandsMatchReference) {
  for (int threads : {1, 2}) {
    CheckMatMul({{2, 3, 13}, {13, 5}, false, false, {2, 3, 5}, true}, threads);
    CheckMatMul({{3, 13}, {5, 13}, false, true, {3, 5}, true}, threads);
    // Packed for the SGEMM: several panels and row tiles, batch-1 B,
    // a transformer's [batch, seq, d] x [d, 4d], a 1-D A.
    CheckMatMul({{2, 50, 37}, {37, 70}, false, false, {2, 50, 70}, true},
                threads);
    CheckMatMul({{3, 19, 37}, {1, 70, 37}, false, true, {3, 19, 70}, true},
                threads);
    CheckMatMul({{1, 17, 64}, {64, 256}, false, false, {1, 17, 256}, true},
                threads);
    CheckMatMul({{37}, {37, 33}, false, false, {33}, true}, threads);
    // A transposed: the loops, not the SGEMM.
    CheckMatMul({{2, 37, 5}, {37, 33}, true, false, {2, 5, 33}, true}, threads);
  }
}

// The bias a converter folds in (x @ W + b) on every path: constant B
// packed at init (edge panel, row tiles), B packed per batch at run time,
// the loops (A transposed), a 1-D A.
TEST(MatMulTest, BiasIsAddedToEveryRowOnEveryPath) {
  for (int threads : {1, 2}) {
    CheckMatMul({{2, 50, 37}, {37, 70}, false, false, {2, 50, 70}, true, true},
                threads);
    CheckMatMul(
        {{4, 19, 16}, {4, 37, 16}, false, true, {4, 19, 37}, false, true},
        threads);
    CheckMatMul({{2, 37, 5}, {37, 33}, true, false, {2, 5, 33}, true, true},
                threads);
    CheckMatMul({{37}, {37, 33}, false, false, {33}, true, true}, threads);
  }
}

TEST(MatMulTest, BadBiasIsAnError) {
  struct BadBias {
    Shape b_shape;
    Shape bias_shape;
    bool int_bias;
    const char *why;
  };
  const BadBias cases[] = {
      {{4, 6}, {5}, false, "wrong length"},
      {{4, 6}, {1, 6}, false, "rank 2"},
      {{4, 6}, {6}, true, "int32"},
      {{4}, {1}, false, "B of rank 1: C has no columns"},
  };
  for (const BadBias &c : cases) {
    OpTester t("MatMul", "mm_bias");
    t.Input("a", {3, 4}, RandomFloats(12))
        .Constant("b", c.b_shape, RandomFloats(Product(c.b_shape)));
    if (c.int_bias) {
      t.ConstantInt("bias", c.bias_shape,
                    std::vector<int32_t>(Product(c.bias_shape), 1));
    } else {
      t.Constant("bias", c.bias_shape, RandomFloats(Product(c.bias_shape)));
    }
    t.Output("c");
    const MaceStatus status = t.Run();
    EXPECT_EQ(status.code(), MaceStatus::MACE_INVALID_ARGS) << c.why;
    EXPECT_NE(status.information().find("mm_bias"), std::string::npos)
        << c.why << ": " << status.information();
  }
}

TEST(MatMulTest, ConstantLhsMatchesReference) {
  const auto a = RandomFloats(3 * 5, -1, 1, 43);
  const auto b = RandomFloats(2 * 5 * 4, -1, 1, 44);
  Shape shape;
  const auto expected =
      ReferenceMatMul(a, {3, 5}, b, {2, 5, 4}, false, false, &shape);
  OpTester t("MatMul");
  t.Constant("a", {3, 5}, a).Input("b", {2, 5, 4}, b).Output("c");
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(t.output(0).shape, (Shape{2, 3, 4}));
  EXPECT_TRUE(AllClose(t.output(0).floats, expected));
}

TEST(MatMulTest, Float16ConstantCloseToReference) {
  const auto a = RandomFloats(2 * 3 * 11, -1, 1, 45);
  const auto b = RandomFloats(11 * 6, -1, 1, 46);
  Shape shape;
  const auto expected =
      ReferenceMatMul(a, {2, 3, 11}, b, {11, 6}, false, false, &shape);
  OpTester t("MatMul");
  t.Input("a", {2, 3, 11}, a)
      .Constant("b", {11, 6}, b)
      .Output("c")
      .Storage(WeightStorage::kFloat16);
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  // fp16 rounds each value of B by up to 2^-11 relative; K of them add up.
  EXPECT_TRUE(
      AllClose(t.output(0).floats, expected, 1e-3, 1e-3 * std::sqrt(11.0)));
}

MaceStatus RunMatMul(const Shape &a_shape, const Shape &b_shape,
                     std::string *message, bool float_transpose = false) {
  OpTester t("MatMul", "mm1");
  t.Input("a", a_shape, RandomFloats(Product(a_shape)))
      .Input("b", b_shape, RandomFloats(Product(b_shape)))
      .Output("c");
  if (float_transpose) t.ArgFloat("transpose_a", 1.0f);
  MaceStatus status = t.Run();
  *message = status.information();
  return status;
}

TEST(MatMulTest, InnerDimMismatchIsAnError) {
  std::string msg;
  EXPECT_NE(RunMatMul({3, 4}, {5, 6}, &msg).code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("inner dims"), std::string::npos) << msg;
  EXPECT_NE(msg.find("mm1"), std::string::npos) << msg;
  EXPECT_NE(RunMatMul({4}, {5}, &msg).code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("inner dims"), std::string::npos) << msg;
}

TEST(MatMulTest, IncompatibleBatchDimsAreAnError) {
  std::string msg;
  EXPECT_NE(RunMatMul({2, 3, 4}, {3, 4, 5}, &msg).code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("broadcast"), std::string::npos) << msg;
}

TEST(MatMulTest, ScalarOperandIsAnError) {
  std::string msg;
  EXPECT_NE(RunMatMul({}, {3, 4}, &msg).code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("rank"), std::string::npos) << msg;
}

TEST(MatMulTest, FloatTransposeArgumentIsAnError) {
  std::string msg;
  EXPECT_NE(RunMatMul({3, 4}, {4, 5}, &msg, true).code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("transpose_a"), std::string::npos) << msg;
}

}  // namespace
}  // namespace test
}  // namespace mace
