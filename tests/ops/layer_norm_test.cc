// LayerNorm against a float64 reference: normalize over dims axis..end,
// then scale by gamma and shift by beta (broadcast to the normalized dims).

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

// Value of `param` (shape `pshape`, right-aligned against `norm`) at the
// normalized position `p`.
double ParamAt(const std::vector<float> &param, Shape pshape, const Shape &norm,
               int64_t p) {
  while (pshape.size() > norm.size()) pshape.erase(pshape.begin());
  Shape index(norm.size());
  for (size_t i = norm.size(); i-- > 0;) {
    index[i] = p % norm[i];
    p /= norm[i];
  }
  int64_t flat = 0;
  const size_t offset = norm.size() - pshape.size();
  for (size_t i = 0; i < pshape.size(); ++i) {
    flat = flat * pshape[i] + (pshape[i] == 1 ? 0 : index[offset + i]);
  }
  return param[flat];
}

struct LnCase {
  Shape shape;
  int axis;           // normalized form
  Shape gamma_shape;  // empty: no gamma (and no beta)
  Shape beta_shape;   // empty: no beta
};

std::vector<double> ReferenceLayerNorm(const std::vector<float> &x,
                                       const LnCase &lc,
                                       const std::vector<float> &gamma,
                                       const std::vector<float> &beta,
                                       double eps) {
  const Shape norm(lc.shape.begin() + lc.axis, lc.shape.end());
  const int64_t size = Product(norm);
  const int64_t rows = Product(lc.shape) / size;
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0.0;
    for (int64_t j = 0; j < size; ++j) mean += x[r * size + j];
    mean /= size;
    double var = 0.0;
    for (int64_t j = 0; j < size; ++j) {
      var += (x[r * size + j] - mean) * (x[r * size + j] - mean);
    }
    var /= size;
    for (int64_t j = 0; j < size; ++j) {
      double v = (x[r * size + j] - mean) / std::sqrt(var + eps);
      if (!gamma.empty()) v *= ParamAt(gamma, lc.gamma_shape, norm, j);
      if (!beta.empty()) v += ParamAt(beta, lc.beta_shape, norm, j);
      y[r * size + j] = v;
    }
  }
  return y;
}

void CheckLayerNorm(const LnCase &lc, int64_t axis_arg, int threads,
                    float offset = 0.0f) {
  auto x = RandomFloats(Product(lc.shape), -2, 2, 81);
  for (float &v : x) v += offset;
  std::vector<float> gamma, beta;
  OpTester t("LayerNorm");
  t.Input("x", lc.shape, x);
  if (!lc.gamma_shape.empty()) {
    gamma = RandomFloats(Product(lc.gamma_shape), 0.5f, 2, 82);
    t.Constant("gamma", lc.gamma_shape, gamma);
  }
  if (!lc.beta_shape.empty()) {
    beta = RandomFloats(Product(lc.beta_shape), -1, 1, 83);
    t.Constant("beta", lc.beta_shape, beta);
  }
  t.Output("y").Arg("axis", axis_arg).ArgFloat("epsilon", 1e-3f);
  t.Threads(threads);
  MaceStatus status = t.Run();
  ASSERT_EQ(status.code(), MaceStatus::MACE_SUCCESS) << status.information();
  EXPECT_EQ(t.output(0).shape, lc.shape);
  EXPECT_TRUE(AllClose(t.output(0).floats,
                       ReferenceLayerNorm(x, lc, gamma, beta, 1e-3)));
}

TEST(LayerNormTest, LastDimMatchesReference) {
  for (int threads : {1, 2}) {
    CheckLayerNorm({{2, 3, 7}, 2, {7}, {7}}, -1, threads);
    CheckLayerNorm({{5, 17}, 1, {17}, {17}}, 1, threads);
    CheckLayerNorm({{2, 3, 3, 5}, 3, {5}, {5}}, 3, threads);
    CheckLayerNorm({{100, 17}, 1, {17}, {17}}, -1, threads);  // splits
  }
}

TEST(LayerNormTest, LastTwoDimsMatchReference) {
  for (int threads : {1, 2}) {
    CheckLayerNorm({{2, 3, 7}, 1, {3, 7}, {3, 7}}, 1, threads);
    CheckLayerNorm({{2, 5, 3, 5}, 2, {3, 5}, {3, 5}}, -2, threads);
  }
}

TEST(LayerNormTest, ParametersBroadcastToNormalizedDims) {
  for (int threads : {1, 2}) {
    CheckLayerNorm({{2, 3, 7}, 1, {7}, {3, 1}}, 1, threads);
    CheckLayerNorm({{2, 3, 7}, 1, {1}, {1, 1, 7}}, -2, threads);
  }
}

TEST(LayerNormTest, OptionalParameters) {
  for (int threads : {1, 2}) {
    CheckLayerNorm({{4, 9}, 1, {}, {}}, -1, threads);
    CheckLayerNorm({{4, 9}, 1, {9}, {}}, -1, threads);
  }
}

TEST(LayerNormTest, WholeTensorAndSizeOneRows) {
  CheckLayerNorm({{3, 5}, 0, {3, 5}, {3, 5}}, 0, 1);
  CheckLayerNorm({{4, 1}, 1, {1}, {1}}, -1, 2);
}

TEST(LayerNormTest, LargeMeanKeepsPrecision) {
  CheckLayerNorm({{3, 17}, 1, {17}, {17}}, -1, 1, 1000.0f);
}

TEST(LayerNormTest, DefaultEpsilonAndAxis) {
  const auto x = RandomFloats(3 * 6, -1e-3f, 1e-3f, 84);
  OpTester t("LayerNorm");
  t.Input("x", {3, 6}, x).Output("y");
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  // Tiny inputs make the epsilon (1e-5) visible in the result.
  EXPECT_TRUE(
      AllClose(t.output(0).floats,
               ReferenceLayerNorm(x, {{3, 6}, 1, {}, {}}, {}, {}, 1e-5)));
}

MaceStatus RunLayerNorm(const Shape &shape, int64_t axis,
                        const Shape &gamma_shape, float epsilon,
                        std::string *message) {
  OpTester t("LayerNorm", "ln1");
  t.Input("x", shape, RandomFloats(std::max<int64_t>(1, Product(shape))));
  if (!gamma_shape.empty()) {
    t.Constant("gamma", gamma_shape, RandomFloats(Product(gamma_shape)));
  }
  t.Output("y").Arg("axis", axis).ArgFloat("epsilon", epsilon);
  MaceStatus status = t.Run();
  *message = status.information();
  return status;
}

TEST(LayerNormTest, AxisOutOfRangeIsAnError) {
  std::string msg;
  EXPECT_NE(RunLayerNorm({2, 3, 7}, 3, {}, 1e-5f, &msg).code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("axis"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ln1"), std::string::npos) << msg;
  EXPECT_NE(RunLayerNorm({2, 3, 7}, -4, {}, 1e-5f, &msg).code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("axis"), std::string::npos) << msg;
}

TEST(LayerNormTest, GammaShapeMismatchIsAnError) {
  std::string msg;
  EXPECT_NE(RunLayerNorm({2, 3, 7}, -1, {5}, 1e-5f, &msg).code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("gamma"), std::string::npos) << msg;
  // A gamma over more dims than are normalized.
  EXPECT_NE(RunLayerNorm({2, 3, 7}, -1, {3, 7}, 1e-5f, &msg).code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("gamma"), std::string::npos) << msg;
}

TEST(LayerNormTest, NegativeEpsilonIsAnError) {
  std::string msg;
  EXPECT_NE(RunLayerNorm({2, 7}, -1, {}, -1.0f, &msg).code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("epsilon"), std::string::npos) << msg;
}

TEST(LayerNormTest, ScalarInputIsAnError) {
  std::string msg;
  EXPECT_NE(RunLayerNorm({}, -1, {}, 1e-5f, &msg).code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("rank"), std::string::npos) << msg;
}

}  // namespace
}  // namespace test
}  // namespace mace
