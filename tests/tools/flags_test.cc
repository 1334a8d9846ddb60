#include "mace/tools/flags.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mace {
namespace tools {
namespace {

// Holds argv storage for a parse.
struct Args {
  explicit Args(std::vector<std::string> items) : items(std::move(items)) {
    for (std::string &item : this->items) pointers.push_back(&item[0]);
  }
  int argc() const { return static_cast<int>(pointers.size()); }
  char **argv() { return pointers.data(); }
  std::vector<std::string> items;
  std::vector<char *> pointers;
};

class FlagSetTest : public ::testing::Test {
 protected:
  FlagSetTest() : flags_("mace test", "a test") {
    flags_.String("model", "FILE", "model", &model_);
    flags_.Alias("model-file", "model");
    flags_.Int("num-threads", "T", "threads", &threads_);
    flags_.Double("validate-threshold", "X", "threshold", &threshold_);
    flags_.Switch("verbose", "more output", &verbose_);
    flags_.Repeated("input", "NAME=FILE", "inputs", &inputs_);
    flags_.String("input-range", "LO,HI", "range", &range_);
    flags_.Positional("M.pb", "model", &positional_);
  }

  MaceStatus Parse(std::vector<std::string> items) {
    items.insert(items.begin(), "mace");
    Args args(items);
    bool help = false;
    MaceStatus status = flags_.Parse(args.argc(), args.argv(), 1, &help);
    help_ = help;
    return status;
  }

  FlagSet flags_;
  std::string model_, range_, positional_;
  int threads_ = -1;
  double threshold_ = 0.999;
  bool verbose_ = false, help_ = false;
  std::vector<std::string> inputs_;
};

TEST_F(FlagSetTest, ParsesSpacedAndEqualsValues) {
  ASSERT_EQ(Parse({"--model", "m.pb", "--num-threads=4", "--verbose", "--input",
                   "a=x.npy", "--input=b=y.npy", "p.pb"}),
            MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(model_, "m.pb");
  EXPECT_EQ(threads_, 4);
  EXPECT_TRUE(verbose_);
  EXPECT_EQ(inputs_, (std::vector<std::string>{"a=x.npy", "b=y.npy"}));
  EXPECT_EQ(positional_, "p.pb");
  EXPECT_TRUE(flags_.WasSet("num_threads"));
  EXPECT_FALSE(flags_.WasSet("validate-threshold"));
}

TEST_F(FlagSetTest, UnderscoreSpellingsAndAliasesAreAccepted) {
  ASSERT_EQ(Parse({"--num_threads", "2", "--validate_threshold", "0.5",
                   "--model_file", "m.pb"}),
            MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(threads_, 2);
  EXPECT_DOUBLE_EQ(threshold_, 0.5);
  EXPECT_EQ(model_, "m.pb");
}

TEST_F(FlagSetTest, ValuesMayStartWithADash) {
  ASSERT_EQ(Parse({"--input-range", "-1,1", "--num-threads", "-1"}),
            MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(range_, "-1,1");
  EXPECT_EQ(threads_, -1);
}

TEST_F(FlagSetTest, UnknownFlagSuggestsTheNearest) {
  const MaceStatus status = Parse({"--num-thread", "2"});
  ASSERT_NE(status, MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("did you mean '--num-threads'"),
            std::string::npos)
      << status.information();
  const MaceStatus far = Parse({"--zzzzzzzz"});
  ASSERT_NE(far, MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(far.information().find("did you mean"), std::string::npos);
}

TEST_F(FlagSetTest, BadValuesAreErrors) {
  EXPECT_NE(Parse({"--num-threads", "four"}), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(Parse({"--num-threads", "99999999999"}), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(Parse({"--validate-threshold", "nan"}), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(Parse({"--model"}), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(Parse({"a.pb", "b.pb"}), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(Parse({"-x"}), MaceStatus::MACE_SUCCESS);
}

TEST_F(FlagSetTest, HelpStopsParsing) {
  ASSERT_EQ(Parse({"--help", "--bogus"}), MaceStatus::MACE_SUCCESS);
  EXPECT_TRUE(help_);
  const std::string help = flags_.Help();
  EXPECT_NE(help.find("--model FILE"), std::string::npos);
  EXPECT_NE(help.find("--model-file"), std::string::npos);
}

TEST(NearestMatchTest, FindsTyposAndPrefixes) {
  const std::vector<std::string> names = {"run", "info", "validate-outputs"};
  EXPECT_EQ(NearestMatch("rnu", names), "run");
  EXPECT_EQ(NearestMatch("valid", names), "validate-outputs");
  EXPECT_EQ(NearestMatch("quantize", names), "");
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);
}

}  // namespace
}  // namespace tools
}  // namespace mace
