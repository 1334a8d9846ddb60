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

// Output channel k * group + g takes input channel g * (C / group) + k.
std::vector<double> ShuffleReference(const std::vector<float> &x,
                                     int64_t channels, int64_t group) {
  const int64_t per_group = channels / group;
  std::vector<double> y(x.size());
  for (size_t row = 0; row < x.size() / channels; ++row)
    for (int64_t g = 0; g < group; ++g)
      for (int64_t k = 0; k < per_group; ++k)
        y[row * channels + k * group + g] =
            x[row * channels + g * per_group + k];
  return y;
}

class ChannelShuffleTest : public ::testing::TestWithParam<int> {};

TEST_P(ChannelShuffleTest, GroupsMatchReference) {
  const Dims shape = {2, 5, 7, 12};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 91);
  for (int64_t group : {1, 2, 3, 4, 6, 12}) {
    OpTester tester("ChannelShuffle");
    tester.Input("x", shape, x)
        .Output("y")
        .Arg("group", group)
        .Threads(GetParam());
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS) << group;
    EXPECT_EQ(tester.output(0).shape, shape);
    EXPECT_TRUE(
        AllClose(tester.output(0).floats, ShuffleReference(x, 12, group), 0, 0))
        << "group " << group;
  }
}

TEST_P(ChannelShuffleTest, Rank2WithOddChannels) {
  const std::vector<float> x = RandomFloats(3 * 15, -1, 1, 92);
  OpTester tester("ChannelShuffle");
  tester.Input("x", {3, 15}, x).Output("y").Arg("group", 5).Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_TRUE(
      AllClose(tester.output(0).floats, ShuffleReference(x, 15, 5), 0, 0));
}

// ShuffleNet's two groups take their own per-pixel path: many pixels
// (several thread chunks) and an odd half (58 + 58 channels, and 2 + 2).
TEST_P(ChannelShuffleTest, TwoGroupsOverManyPixelsMatchReference) {
  for (const Dims &shape : {Dims{2, 13, 11, 116}, Dims{1, 3, 5, 4}}) {
    const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 93);
    OpTester tester("ChannelShuffle");
    tester.Input("x", shape, x).Output("y").Arg("group", 2).Threads(GetParam());
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
    EXPECT_TRUE(AllClose(tester.output(0).floats,
                         ShuffleReference(x, shape.back(), 2), 0, 0));
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, ChannelShuffleTest, ::testing::Values(1, 2));

MaceStatus RunShuffle(const std::string &name, int64_t group) {
  OpTester tester("ChannelShuffle", name);
  tester.Input("x", {1, 2, 2, 7}, RandomFloats(28)).Output("y");
  if (group >= 0) tester.Arg("group", group);
  return tester.Run();
}

void ExpectError(const MaceStatus &status, const std::string &piece) {
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(piece), std::string::npos)
      << status.information();
}

TEST(ChannelShuffleErrorTest, GroupNotDividingChannelsIsRejected) {
  ExpectError(RunShuffle("cs0", 2), "'group'");
}

TEST(ChannelShuffleErrorTest, ZeroGroupIsRejected) {
  ExpectError(RunShuffle("cs1", 0), "'group'");
}

TEST(ChannelShuffleErrorTest, MissingGroupIsRejected) {
  ExpectError(RunShuffle("cs2", -1), "'group'");
}

}  // namespace
}  // namespace test
}  // namespace mace
