// Each kind of malformed model gives a clear error naming what is wrong;
// ValidateModel's shortcuts (one is_known_op call per op type, no sorting
// of graphs already in order) and ReadFileToString, checked directly.

#include "mace/model/model_loader.h"

#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "mace/model/model_builder.h"
#include "mace/ops/op_registry.h"
#include "mace/public/mace.h"

namespace mace {
namespace {

// relu(x) → y, plus a weight so offsets can be corrupted.
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

MaceStatus Create(const NetDef &net, const std::string &weights) {
  std::string graph;
  net.SerializeToString(&graph);
  std::shared_ptr<MaceEngine> engine;
  return CreateMaceEngineFromProto(
      reinterpret_cast<const unsigned char *>(graph.data()), graph.size(),
      reinterpret_cast<const unsigned char *>(weights.data()), weights.size(),
      {}, {}, MaceEngineConfig(DeviceType::CPU), &engine);
}

// Serializes the builder's model, lets `mutate` edit the NetDef, creates
// an engine and returns the status.
template <typename Mutation>
MaceStatus CreateMutated(Mutation mutate) {
  ModelBuilder builder = TwoOpModel();
  std::string graph, weights;
  EXPECT_EQ(builder.Serialize(WeightStorage::kFloat32, &graph, &weights),
            MaceStatus::MACE_SUCCESS);
  NetDef net;
  EXPECT_TRUE(net.ParseFromString(graph));
  mutate(&net, &weights);
  return Create(net, weights);
}

void ExpectErrorMentions(const MaceStatus &status, const std::string &needle) {
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(needle), std::string::npos)
      << "message: " << status.information();
}

TEST(ModelLoaderTest, ValidModelLoads) {
  EXPECT_EQ(CreateMutated([](NetDef *, std::string *) {}),
            MaceStatus::MACE_SUCCESS);
}

TEST(ModelLoaderTest, UnknownOpTypeNamesOpAndType) {
  const MaceStatus status = CreateMutated([](NetDef *net, std::string *) {
    net->mutable_op(1)->set_type("FancyOp");
  });
  EXPECT_EQ(status.code(), MaceStatus::MACE_UNSUPPORTED);
  ExpectErrorMentions(status, "FancyOp");
  ExpectErrorMentions(status, "prelu");
}

TEST(ModelLoaderTest, InputThatNothingProducesNamesTensor) {
  ExpectErrorMentions(CreateMutated([](NetDef *net, std::string *) {
                        net->mutable_op(1)->set_input(0, "ghost");
                      }),
                      "ghost");
}

TEST(ModelLoaderTest, TensorOffsetOutsideWeightsNamesTensor) {
  ExpectErrorMentions(CreateMutated([](NetDef *net, std::string *) {
                        net->mutable_tensors(0)->set_offset(1 << 20);
                      }),
                      "slope");
}

TEST(ModelLoaderTest, TruncatedWeightsAreRejected) {
  ExpectErrorMentions(
      CreateMutated([](NetDef *, std::string *weights) { weights->resize(4); }),
      "outside the weights");
}

TEST(ModelLoaderTest, NegativeDimsAreRejected) {
  ExpectErrorMentions(CreateMutated([](NetDef *net, std::string *) {
                        net->mutable_tensors(0)->set_dims(0, -3);
                      }),
                      "slope");
}

TEST(ModelLoaderTest, OverflowingDimsAreRejected) {
  ExpectErrorMentions(CreateMutated([](NetDef *net, std::string *) {
                        ConstTensor *t = net->mutable_tensors(0);
                        t->set_dims(0, int64_t{1} << 40);
                        t->add_dims(int64_t{1} << 40);
                      }),
                      "overflow");
}

TEST(ModelLoaderTest, DataSizeDisagreeingWithDimsIsRejected) {
  ExpectErrorMentions(CreateMutated([](NetDef *net, std::string *) {
                        net->mutable_tensors(0)->set_data_size(2);
                      }),
                      "data_size");
}

TEST(ModelLoaderTest, NegativeInputDimsAreRejected) {
  ExpectErrorMentions(CreateMutated([](NetDef *net, std::string *) {
                        net->mutable_input_info(0)->set_dims(1, -2);
                      }),
                      "input 'x'");
}

// Int32 dims whose product fits int64 but not a tensor: ops' byte
// arithmetic on such an input would overflow.
TEST(ModelLoaderTest, InputDimsLargerThanATensorAreRejected) {
  const MaceStatus status = CreateMutated([](NetDef *net, std::string *) {
    InputOutputInfo *info = net->mutable_input_info(0);
    info->clear_dims();
    info->add_dims(std::numeric_limits<int32_t>::max());
    info->add_dims(std::numeric_limits<int32_t>::max());
  });
  ExpectErrorMentions(status, "input 'x'");
  ExpectErrorMentions(status, "256 GiB");
}

TEST(ModelLoaderTest, ArgumentOfWrongKindNamesOpAndArgument) {
  const MaceStatus status = CreateMutated([](NetDef *net, std::string *) {
    Argument *arg = net->mutable_op(0)->mutable_arg(0);
    arg->clear_s();
    arg->set_f(1.5f);
  });
  ExpectErrorMentions(status, "relu");
  ExpectErrorMentions(status, "'activation'");
}

TEST(ModelLoaderTest, DuplicateOutputNamesAreRejected) {
  ExpectErrorMentions(CreateMutated([](NetDef *net, std::string *) {
                        net->mutable_op(1)->set_output(0, "h");
                      }),
                      "duplicate output");
}

TEST(ModelLoaderTest, OutputShadowingAWeightIsRejected) {
  ExpectErrorMentions(CreateMutated([](NetDef *net, std::string *) {
                        net->mutable_op(0)->set_output(0, "slope");
                      }),
                      "slope");
}

TEST(ModelLoaderTest, CyclesAreRejected) {
  ExpectErrorMentions(CreateMutated([](NetDef *net, std::string *) {
                        net->mutable_op(0)->set_input(0, "y");
                      }),
                      "cycle");
}

TEST(ModelLoaderTest, SelfLoopIsRejected) {
  ExpectErrorMentions(CreateMutated([](NetDef *net, std::string *) {
                        net->mutable_op(0)->set_input(0, "h");
                      }),
                      "cycle");
}

TEST(ModelLoaderTest, OpsOutOfOrderAreSorted) {
  EXPECT_EQ(CreateMutated([](NetDef *net, std::string *) {
              net->mutable_op()->SwapElements(0, 1);
            }),
            MaceStatus::MACE_SUCCESS);
}

TEST(ModelLoaderTest, UndeclaredOutputIsRejected) {
  ExpectErrorMentions(CreateMutated([](NetDef *net, std::string *) {
                        net->mutable_output_info(0)->set_name("nowhere");
                      }),
                      "nowhere");
}

// Some ops read input 0 or write output 0 before checking their counts:
// ValidateModel refuses an op without them before any op sees it.
TEST(ModelLoaderTest, OpWithoutInputsIsRejectedForEveryType) {
  for (const std::string &type : OpRegistry::Global().Types()) {
    ExpectErrorMentions(CreateMutated([&type](NetDef *net, std::string *) {
                          OperatorDef *op = net->mutable_op(0);
                          op->set_type(type);
                          op->clear_input();
                        }),
                        "has no input");
  }
}

TEST(ModelLoaderTest, OpWithoutOutputsIsRejectedForEveryType) {
  for (const std::string &type : OpRegistry::Global().Types()) {
    ExpectErrorMentions(CreateMutated([&type](NetDef *net, std::string *) {
                          OperatorDef *sink = net->add_op();
                          sink->set_name("sink");
                          sink->set_type(type);
                          sink->add_input("h");
                        }),
                        "'sink' (" + type + ") has no output");
  }
}

TEST(ModelLoaderTest, GarbageGraphBytesAreRejected) {
  const std::string garbage = "\xff\xff\xff\xff this is not a protobuf";
  std::shared_ptr<MaceEngine> engine;
  const MaceStatus status = CreateMaceEngineFromProto(
      reinterpret_cast<const unsigned char *>(garbage.data()), garbage.size(),
      nullptr, 0, {}, {}, MaceEngineConfig(DeviceType::CPU), &engine);
  EXPECT_EQ(status.code(), MaceStatus::MACE_INVALID_ARGS);
  EXPECT_EQ(engine, nullptr);
}

TEST(ModelLoaderTest, MissingFilesNameThePath) {
  std::shared_ptr<MaceEngine> engine;
  const MaceStatus status = CreateMaceEngineFromProto(
      std::string("/nonexistent/model.pb"), std::string("/nonexistent/m.data"),
      {}, {}, MaceEngineConfig(DeviceType::CPU), &engine);
  ExpectErrorMentions(status, "/nonexistent/model.pb");
}

TEST(ModelLoaderTest, UnsupportedWeightTypeIsRejected) {
  ExpectErrorMentions(CreateMutated([](NetDef *net, std::string *) {
                        net->mutable_tensors(0)->set_data_type(DT_INT16);
                      }),
                      "DT_INT16");
}

TEST(ModelLoaderTest, MultiNetDefLoads) {
  ModelBuilder builder = TwoOpModel();
  std::string graph, weights;
  ASSERT_EQ(builder.Serialize(WeightStorage::kFloat32, &graph, &weights),
            MaceStatus::MACE_SUCCESS);
  MultiNetDef multi;
  ASSERT_TRUE(multi.add_net_def()->ParseFromString(graph));
  std::string multi_bytes;
  multi.SerializeToString(&multi_bytes);
  std::shared_ptr<MaceEngine> engine;
  EXPECT_EQ(
      CreateMaceEngineFromProto(
          reinterpret_cast<const unsigned char *>(multi_bytes.data()),
          multi_bytes.size(),
          reinterpret_cast<const unsigned char *>(weights.data()),
          weights.size(), {}, {}, MaceEngineConfig(DeviceType::CPU), &engine),
      MaceStatus::MACE_SUCCESS);
}

// ---- ValidateModel and ReadFileToString, called directly --------------

NetDef TwoOpNet() {
  std::string graph, weights;
  EXPECT_EQ(TwoOpModel().Serialize(WeightStorage::kFloat32, &graph, &weights),
            MaceStatus::MACE_SUCCESS);
  NetDef net;
  EXPECT_TRUE(net.ParseFromString(graph));
  return net;
}

TEST(ModelLoaderTest, ValidationAsksOncePerOpType) {
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

TEST(ModelLoaderTest, ValidationSortsOpsAfterTheirProducers) {
  NetDef net = TwoOpNet();
  auto any_type = [](const std::string &) { return true; };
  ASSERT_EQ(ValidateModel(&net, 1 << 20, any_type), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(net.op(0).name(), "relu");  // already sorted: kept as is
  net.mutable_op()->SwapElements(0, 1);
  ASSERT_EQ(ValidateModel(&net, 1 << 20, any_type), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(net.op(0).name(), "relu");
  EXPECT_EQ(net.op(1).name(), "prelu");
}

TEST(ModelLoaderTest, SelfLoopAfterAForwardReferenceIsRejected) {
  NetDef net = TwoOpNet();
  net.mutable_op()->SwapElements(0, 1);  // prelu first: a forward reference
  net.mutable_op(1)->set_input(0, "h");  // relu now consumes its own output
  const MaceStatus status =
      ValidateModel(&net, 1 << 20, [](const std::string &) { return true; });
  ExpectErrorMentions(status, "consumes its own output");
  ExpectErrorMentions(status, "relu");
}

TEST(ModelLoaderTest, ReadFileToStringReadsEveryByte) {
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

TEST(ModelLoaderTest, ReadFileToStringReadsFilesWithoutASize) {
  // /proc files report size 0 yet have contents.
  std::string read;
  ASSERT_EQ(ReadFileToString("/proc/self/status", &read),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(read.find("Name:"), std::string::npos);
}

TEST(ModelLoaderTest, ReadFileToStringNamesAPathItCannotRead) {
  std::string read;
  ExpectErrorMentions(ReadFileToString("/nonexistent/graph.pb", &read),
                      "/nonexistent/graph.pb");
  ExpectErrorMentions(ReadFileToString("/", &read), "'/'");
}

}  // namespace
}  // namespace mace
