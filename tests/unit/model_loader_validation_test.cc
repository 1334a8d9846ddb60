// ValidateModel's shortcuts (one is_known_op call per op type, no sorting
// of graphs already in order) and ReadFileToString, checked directly.

#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "mace/model/model_builder.h"
#include "mace/model/model_loader.h"
#include "mace/public/mace.h"

namespace mace {
namespace {

// relu(x) → h, prelu(h, slope) → y.
ModelBuilder TwoOpModel() {
  ModelBuilder builder("loader_test");
  builder.AddInput("x", {1, 2, 2, 3}, DT_FLOAT, 0);
  OperatorDef *relu = builder.AddOp("Activation", "relu", {"x"}, {"h"});
  ModelBuilder::AddStringArg(relu, "activation", "RELU");
  builder.AddFloatTensor("slope", {3}, {0.1f, 0.2f, 0.3f});
  OperatorDef *prelu =
      builder.AddOp("Activation", "prelu", {"h", "slope"}, {"y"});
  ModelBuilder::AddStringArg(prelu, "activation", "PRELU");
  builder.AddOutput("y", {1, 2, 2, 3}, DT_FLOAT, 0);
  return builder;
}

void ExpectErrorMentions(const MaceStatus &status, const std::string &needle) {
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(needle), std::string::npos)
      << "message: " << status.information();
}

NetDef TwoOpNet() {
  std::string graph, weights;
  EXPECT_EQ(TwoOpModel().Serialize(WeightStorage::kFloat32, &graph, &weights),
            MaceStatus::MACE_SUCCESS);
  NetDef net;
  EXPECT_TRUE(net.ParseFromString(graph));
  return net;
}

TEST(ModelLoaderValidationTest, ValidationAsksOncePerOpType) {
  NetDef net = TwoOpNet();
  std::map<std::string, int> asked;
  auto is_known = [&asked](const std::string &type) {
    ++asked[type];
    return type == "Activation";
  };
  ASSERT_EQ(ValidateModel(&net, 1 << 20, is_known), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(asked, (std::map<std::string, int>{{"Activation", 1}}));

  // A type the callback rejects is still rejected after known ones.
  *net.add_op() = net.op(1);
  net.mutable_op(2)->set_type("FancyOp");
  net.mutable_op(2)->set_name("fancy");
  net.mutable_op(2)->set_output(0, "z");
  const MaceStatus status = ValidateModel(&net, 1 << 20, is_known);
  EXPECT_EQ(status.code(), MaceStatus::MACE_UNSUPPORTED);
  ExpectErrorMentions(status, "FancyOp");
  ExpectErrorMentions(status, "fancy");
}

TEST(ModelLoaderValidationTest, ValidationSortsOpsAfterTheirProducers) {
  NetDef net = TwoOpNet();
  auto any_type = [](const std::string &) { return true; };
  ASSERT_EQ(ValidateModel(&net, 1 << 20, any_type), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(net.op(0).name(), "relu");  // already sorted: kept as is
  net.mutable_op()->SwapElements(0, 1);
  ASSERT_EQ(ValidateModel(&net, 1 << 20, any_type), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(net.op(0).name(), "relu");
  EXPECT_EQ(net.op(1).name(), "prelu");
}

TEST(ModelLoaderValidationTest, SelfLoopAfterAForwardReferenceIsRejected) {
  NetDef net = TwoOpNet();
  net.mutable_op()->SwapElements(0, 1);  // prelu first: a forward reference
  net.mutable_op(1)->set_input(0, "h");  // relu now consumes its own output
  const MaceStatus status =
      ValidateModel(&net, 1 << 20, [](const std::string &) { return true; });
  ExpectErrorMentions(status, "consumes its own output");
  ExpectErrorMentions(status, "relu");
}

TEST(ModelLoaderValidationTest, ReadFileToStringReadsEveryByte) {
  const std::string path = ::testing::TempDir() + "model_loader_read_test.bin";
  for (size_t size :
       {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, size_t{70000}}) {
    std::string written(size, '\0');
    for (size_t i = 0; i < size; ++i) written[i] = static_cast<char>(i * 31);
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(written.data(), static_cast<std::streamsize>(size));
    }
    std::string read = "stale";
    ASSERT_EQ(ReadFileToString(path, &read), MaceStatus::MACE_SUCCESS);
    EXPECT_EQ(read, written) << size << " bytes";
  }
  std::remove(path.c_str());
}

TEST(ModelLoaderValidationTest, ReadFileToStringReadsFilesWithoutASize) {
  // /proc files report size 0 yet have contents.
  std::string read;
  ASSERT_EQ(ReadFileToString("/proc/self/status", &read),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(read.find("Name:"), std::string::npos);
}

TEST(ModelLoaderValidationTest, ReadFileToStringNamesAPathItCannotRead) {
  std::string read;
  ExpectErrorMentions(ReadFileToString("/nonexistent/graph.pb", &read),
                      "/nonexistent/graph.pb");
  ExpectErrorMentions(ReadFileToString("/", &read), "'/'");
}

}  // namespace
}  // namespace mace
