// Softmax and LogSoftmax against a float64 reference along any axis.

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

std::vector<double> ReferenceSoftmax(const std::vector<float> &x,
                                     const std::vector<int64_t> &shape,
                                     int axis, bool use_log) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= shape[i];
  for (size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
  const int64_t len = shape[axis];
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return (o * len + j) * inner + i; };
      double max_value = x[at(0)];
      for (int64_t j = 1; j < len; ++j)
        max_value = std::max<double>(max_value, x[at(j)]);
      double sum = 0.0;
      for (int64_t j = 0; j < len; ++j) sum += std::exp(x[at(j)] - max_value);
      for (int64_t j = 0; j < len; ++j) {
        const double shifted = x[at(j)] - max_value;
        y[at(j)] = use_log ? shifted - std::log(sum) : std::exp(shifted) / sum;
      }
    }
  }
  return y;
}

void CheckSoftmax(const std::vector<int64_t> &shape, int64_t axis_arg,
                  bool use_log, float range, int threads,
                  const std::string &type = "Softmax") {
  const auto x = RandomFloats(Product(shape), -range, range, 71);
  const int rank = static_cast<int>(shape.size());
  const int axis = static_cast<int>(axis_arg < 0 ? axis_arg + rank : axis_arg);
  OpTester t(type);
  t.Input("x", shape, x).Output("y").Arg("axis", axis_arg).Threads(threads);
  if (use_log && type == "Softmax") t.Arg("use_log", 1);
  MaceStatus status = t.Run();
  ASSERT_EQ(status.code(), MaceStatus::MACE_SUCCESS) << status.information();
  EXPECT_EQ(t.output(0).shape, shape);
  EXPECT_TRUE(
      AllClose(t.output(0).floats, ReferenceSoftmax(x, shape, axis, use_log)));
}

TEST(SoftmaxTest, LastAxisMatchesReference) {
  for (int threads : {1, 2}) {
    CheckSoftmax({2, 3, 5}, -1, false, 3, threads);
    CheckSoftmax({3, 17}, 1, false, 3, threads);
    CheckSoftmax({7}, 0, false, 3, threads);
    CheckSoftmax({2, 1}, -1, false, 3, threads);
  }
}

TEST(SoftmaxTest, MiddleAndFirstAxisMatchReference) {
  for (int threads : {1, 2}) {
    CheckSoftmax({2, 3, 5}, 1, false, 3, threads);
    CheckSoftmax({2, 3, 5}, -3, false, 3, threads);
    CheckSoftmax({2, 5, 7, 3}, 2, false, 3, threads);
    // Enough lines to split across threads.
    CheckSoftmax({16, 9, 17}, -1, false, 3, threads);
    CheckSoftmax({16, 9, 17}, 1, false, 3, threads);
  }
}

TEST(SoftmaxTest, DefaultAxisIsLast) {
  const auto x = RandomFloats(2 * 3 * 5, -3, 3, 72);
  OpTester t("Softmax");
  t.Input("x", {2, 3, 5}, x).Output("y");
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  EXPECT_TRUE(
      AllClose(t.output(0).floats, ReferenceSoftmax(x, {2, 3, 5}, 2, false)));
}

TEST(SoftmaxTest, LargeInputsDoNotOverflow) {
  for (int threads : {1, 2}) {
    CheckSoftmax({2, 3, 17}, -1, false, 80, threads);
    CheckSoftmax({2, 3, 17}, 1, false, 80, threads);
    CheckSoftmax({2, 3, 17}, -1, true, 80, threads);
  }
  // Far beyond exp's float range: only the max subtraction keeps this finite.
  const std::vector<float> x = {1000.0f, 999.0f, -1000.0f, 998.0f};
  OpTester t("Softmax");
  t.Input("x", {1, 4}, x).Output("y");
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  EXPECT_TRUE(
      AllClose(t.output(0).floats, ReferenceSoftmax(x, {1, 4}, 1, false)));
}

TEST(SoftmaxTest, UseLogGivesLogSoftmax) {
  for (int threads : {1, 2}) {
    CheckSoftmax({2, 3, 5}, -1, true, 3, threads);
    CheckSoftmax({2, 3, 5}, 1, true, 3, threads);
  }
}

TEST(SoftmaxTest, LogSoftmaxTypeForcesLog) {
  for (int threads : {1, 2}) {
    CheckSoftmax({2, 3, 5}, -1, true, 3, threads, "LogSoftmax");
    CheckSoftmax({3, 7, 2}, 1, true, 80, threads, "LogSoftmax");
  }
  const auto x = RandomFloats(3 * 5, -3, 3, 73);
  OpTester t("LogSoftmax");
  t.Input("x", {3, 5}, x).Output("y").Arg("use_log", 0);
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  EXPECT_TRUE(
      AllClose(t.output(0).floats, ReferenceSoftmax(x, {3, 5}, 1, true)));
}

MaceStatus RunSoftmax(const std::vector<int64_t> &shape, int64_t axis,
                      std::string *message) {
  OpTester t("Softmax", "sm1");
  t.Input("x", shape, RandomFloats(std::max<int64_t>(1, Product(shape))))
      .Output("y")
      .Arg("axis", axis);
  MaceStatus status = t.Run();
  *message = status.information();
  return status;
}

TEST(SoftmaxTest, AxisOutOfRangeIsAnError) {
  std::string msg;
  EXPECT_NE(RunSoftmax({2, 3, 5}, 3, &msg).code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("axis"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sm1"), std::string::npos) << msg;
  EXPECT_NE(RunSoftmax({2, 3, 5}, -4, &msg).code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("axis"), std::string::npos) << msg;
}

TEST(SoftmaxTest, ScalarInputIsAnError) {
  std::string msg;
  EXPECT_NE(RunSoftmax({}, -1, &msg).code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("rank"), std::string::npos) << msg;
}

TEST(SoftmaxTest, FloatAxisIsAnError) {
  OpTester t("Softmax");
  t.Input("x", {2, 3}, RandomFloats(6)).Output("y").ArgFloat("axis", 1.0f);
  MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("axis"), std::string::npos)
      << status.information();
}

}  // namespace
}  // namespace test
}  // namespace mace
