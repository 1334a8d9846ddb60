#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mace/model/model_builder.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

using Shape = std::vector<int64_t>;

// Engine inputs and outputs are float32/int32, so uint8 tensors are tested
// inside graphs: fed floats -> Quantize -> Dequantize -> floats.
struct GraphRun {
  ModelBuilder builder{"quantize_test"};
  std::map<std::string, std::pair<Shape, std::vector<float>>> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, std::vector<float>> results;
  WeightStorage storage = WeightStorage::kFloat32;

  void Input(const std::string &name, const Shape &shape,
             const std::vector<float> &values) {
    builder.AddInput(name, shape, DT_FLOAT, 0);
    inputs[name] = {shape, values};
  }
  void Output(const std::string &name) {
    builder.AddOutput(name, {}, DT_FLOAT, 0);
    outputs.push_back(name);
  }

  MaceStatus Run(int threads) {
    std::string graph, weights;
    MaceStatus status = builder.Serialize(storage, &graph, &weights);
    if (status != MaceStatus::MACE_SUCCESS) return status;
    MaceEngineConfig config(DeviceType::CPU);
    config.SetCPUThreadPolicy(threads, AFFINITY_NONE);
    std::vector<std::string> input_names;
    for (const auto &entry : inputs) input_names.push_back(entry.first);
    std::shared_ptr<MaceEngine> engine;
    status = CreateMaceEngineFromProto(
        reinterpret_cast<const unsigned char *>(graph.data()), graph.size(),
        reinterpret_cast<const unsigned char *>(weights.data()), weights.size(),
        input_names, outputs, config, &engine);
    if (status != MaceStatus::MACE_SUCCESS) return status;
    std::map<std::string, MaceTensor> fed, got;
    for (const auto &entry : inputs) {
      const std::vector<float> &values = entry.second.second;
      std::shared_ptr<void> buffer(new float[values.size() + 1],
                                   std::default_delete<float[]>());
      std::memcpy(buffer.get(), values.data(), values.size() * 4);
      fed[entry.first] =
          MaceTensor(entry.second.first, buffer, DataFormat::NONE, IDT_FLOAT);
    }
    status = engine->Run(fed, &got);
    if (status != MaceStatus::MACE_SUCCESS) return status;
    for (const std::string &name : outputs) {
      const MaceTensor &tensor = got.at(name);
      const float *data = tensor.data<float>().get();
      results[name].assign(data, data + Product(tensor.shape()));
    }
    return MaceStatus::MACE_SUCCESS;
  }
};

double RoundHalfAway(double v) {
  return v < 0 ? -std::floor(-v + 0.5) : std::floor(v + 0.5);
}

double ClampCode(double q) { return std::min(255.0, std::max(0.0, q)); }

// Each y[i] must be scale * (q - zero_point) for the reference code
// q = clamp(round(zero_point + x / scale), 0, 255); within 1e-3 of a
// rounding tie either neighbour is accepted (the op multiplies by a float
// reciprocal, the reference divides in double).
::testing::AssertionResult MatchesRoundTrip(const std::vector<float> &y,
                                            const std::vector<float> &x,
                                            double scale, double zero_point) {
  if (y.size() != x.size()) {
    return ::testing::AssertionFailure()
           << "size " << y.size() << " vs " << x.size();
  }
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = zero_point + x[i] / scale;
    const double q = ClampCode(RoundHalfAway(v));
    const double frac = v - std::floor(v);
    const double alt = std::fabs(frac - 0.5) < 1e-3
                           ? ClampCode(q == std::floor(v) ? q + 1 : q - 1)
                           : q;
    bool ok = false;
    for (double code : {q, alt}) {
      const double expected = scale * (code - zero_point);
      ok =
          ok || std::fabs(y[i] - expected) <= 1e-6 + 1e-5 * std::fabs(expected);
    }
    if (!ok) {
      return ::testing::AssertionFailure()
             << "element " << i << ": x " << x[i] << " gave " << y[i]
             << ", expected " << scale * (q - zero_point) << " (code " << q
             << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// MACE's AdjustRange for uint8, written from its description: the range is
// widened to hold 0 and the zero point is the code of 0.
void ReferenceRange(const std::vector<float> &x, bool non_zero, double *scale,
                    double *zero_point) {
  double lo = x[0], hi = x[0];
  for (float v : x) {
    lo = std::min<double>(lo, v);
    hi = std::max<double>(hi, v);
  }
  const double top = std::max(0.0, hi);
  double bottom = std::min(0.0, lo);
  if (non_zero) bottom = std::min(bottom, lo - (top - lo) / 254.0);
  *scale = (top - bottom) / 255.0;
  if (bottom < -1e-6 && top > 1e-6) {
    const double zero = -bottom / *scale;
    *zero_point = RoundHalfAway(zero);
    if (non_zero && std::fabs(zero - *zero_point) > 1e-6) {
      *zero_point = std::ceil(zero);
    }
  } else {
    *zero_point = bottom > -1e-6 ? 0 : 255;
  }
}

// x -> Quantize(args) -> q -> Dequantize (tensor parameters) -> y.
void AddRoundTrip(GraphRun *run, const Shape &shape,
                  const std::vector<float> &x, OperatorDef **quantize) {
  run->Input("x", shape, x);
  *quantize = run->builder.AddOp("Quantize", "quantize", {"x"}, {"q"});
  run->builder.AddOp("Dequantize", "dequantize", {"q"}, {"y"});
  run->Output("y");
}

class QuantizeTest : public ::testing::TestWithParam<int> {};

TEST_P(QuantizeTest, ArgsRoundTripMatchesReference) {
  const Shape shape = {2, 5, 7, 3};
  const std::vector<float> x = RandomFloats(Product(shape), -3, 3, 301);
  for (int zero_point : {128, 0, 255, 37}) {
    GraphRun run;
    OperatorDef *quantize = nullptr;
    AddRoundTrip(&run, shape, x, &quantize);
    ModelBuilder::AddFloatArg(quantize, "scale", 0.02f);
    ModelBuilder::AddIntArg(quantize, "zero_point", zero_point);
    ASSERT_EQ(run.Run(GetParam()), MaceStatus::MACE_SUCCESS);
    EXPECT_TRUE(MatchesRoundTrip(run.results["y"], x, 0.02f, zero_point))
        << "zero_point " << zero_point;
  }
}

TEST_P(QuantizeTest, QuantizeInfoGivesParametersWithoutArgs) {
  const Shape shape = {3, 17};
  const std::vector<float> x = RandomFloats(Product(shape), -5, 7, 302);
  GraphRun run;
  OperatorDef *quantize = nullptr;
  AddRoundTrip(&run, shape, x, &quantize);
  QuantizeActivationInfo *info = quantize->add_quantize_info();
  info->set_scale(0.05f);
  info->set_zero_point(100);
  ASSERT_EQ(run.Run(GetParam()), MaceStatus::MACE_SUCCESS);
  EXPECT_TRUE(MatchesRoundTrip(run.results["y"], x, 0.05f, 100));
}

TEST_P(QuantizeTest, NoParametersFindsRangeEveryRunAsMace) {
  struct Case {
    float low, high;
  };
  for (const Case &c : {Case{-1.3f, 2.7f}, Case{0.5f, 4.0f},
                        Case{-6.0f, -0.25f}, Case{-0.01f, 9.0f}}) {
    const Shape shape = {1, 7, 5, 3};
    const std::vector<float> x =
        RandomFloats(Product(shape), c.low, c.high, 303);
    GraphRun run;
    OperatorDef *quantize = nullptr;
    AddRoundTrip(&run, shape, x, &quantize);
    ASSERT_EQ(run.Run(GetParam()), MaceStatus::MACE_SUCCESS);
    double scale = 0, zero_point = 0;
    ReferenceRange(x, false, &scale, &zero_point);
    EXPECT_TRUE(MatchesRoundTrip(run.results["y"], x, scale, zero_point))
        << "range [" << c.low << ", " << c.high << ")";
  }
}

TEST_P(QuantizeTest, NonZeroLowersRangeSoNoValueMapsToCodeZero) {
  const Shape shape = {4, 9};
  for (float low : {-2.0f, 0.75f}) {
    const std::vector<float> x = RandomFloats(Product(shape), low, 3.0f, 304);
    GraphRun run;
    OperatorDef *quantize = nullptr;
    AddRoundTrip(&run, shape, x, &quantize);
    ModelBuilder::AddIntArg(quantize, "non_zero", 1);
    // find_range_every_time wins over the quantize_info parameters.
    ModelBuilder::AddIntArg(quantize, "find_range_every_time", 1);
    QuantizeActivationInfo *info = quantize->add_quantize_info();
    info->set_scale(1.0f);
    info->set_zero_point(0);
    ASSERT_EQ(run.Run(GetParam()), MaceStatus::MACE_SUCCESS);
    double scale = 0, zero_point = 0;
    ReferenceRange(x, true, &scale, &zero_point);
    EXPECT_TRUE(MatchesRoundTrip(run.results["y"], x, scale, zero_point));
    for (float y : run.results["y"]) {
      EXPECT_GT(y, scale * (0.5 - zero_point));  // code >= 1
    }
  }
}

TEST_P(QuantizeTest, AllZeroAndNonFiniteInputsStaySafe) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {0.0f, 0.0f, inf, -inf,
                                std::numeric_limits<float>::quiet_NaN()};
  GraphRun run;
  OperatorDef *quantize = nullptr;
  AddRoundTrip(&run, {5}, x, &quantize);
  ASSERT_EQ(run.Run(GetParam()), MaceStatus::MACE_SUCCESS);
  // No finite range: scale 1, zero point 0; +inf saturates to 255, NaN to 0.
  EXPECT_EQ(run.results["y"], (std::vector<float>{0, 0, 255, 0, 0}));
}

TEST_P(QuantizeTest, ConstantChainIsFoldedAtInitNextToUint8Weight) {
  // An odd-sized uint8 weight before a float weight: the float one must
  // still be found aligned, and both chains are folded at init.
  GraphRun run;
  const std::vector<uint8_t> codes = {0, 1, 2, 127, 128, 254, 255};
  run.builder.AddUint8Tensor("w8", {7}, codes, 0.5f, 128);
  const std::vector<float> w = {-1.0f, -0.26f, 0.0f, 0.24f, 3.0f};
  run.builder.AddFloatTensor("wf", {5}, w);
  run.builder.AddOp("Dequantize", "deq8", {"w8"}, {"y8"});
  OperatorDef *quantize = run.builder.AddOp("Quantize", "q", {"wf"}, {"qf"});
  ModelBuilder::AddFloatArg(quantize, "scale", 0.25f);
  ModelBuilder::AddIntArg(quantize, "zero_point", 4);
  run.builder.AddOp("Dequantize", "deqf", {"qf"}, {"yf"});
  run.Output("y8");
  run.Output("yf");
  for (WeightStorage storage :
       {WeightStorage::kFloat32, WeightStorage::kFloat16}) {
    run.storage = storage;
    ASSERT_EQ(run.Run(GetParam()), MaceStatus::MACE_SUCCESS);
    EXPECT_EQ(run.results["y8"],
              (std::vector<float>{-64, -63.5, -63, -0.5, 0, 63, 63.5}));
    // -1 -> 0, -0.26 -> round(2.96) = 3, 0 -> 4, 0.24 -> round(4.96) = 5,
    // 3 -> 16.
    EXPECT_EQ(run.results["yf"],
              (std::vector<float>{-1.0f, -0.25f, 0.0f, 0.25f, 3.0f}));
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, QuantizeTest, ::testing::Values(1, 2));

class DequantizeTest : public ::testing::TestWithParam<int> {};

TEST_P(DequantizeTest, Uint8WeightUsesItsTensorParameters) {
  const Shape shape = {3, 7, 13};
  std::vector<uint8_t> codes(Product(shape));
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = (i * 37) % 256;
  std::vector<double> expected;
  for (uint8_t q : codes) expected.push_back(0.037 * (q - 131.0));
  for (WeightStorage storage :
       {WeightStorage::kFloat32, WeightStorage::kFloat16}) {
    OpTester tester("Dequantize");
    tester.ConstantUint8("q", shape, codes, 0.037f, 131)
        .Output("y")
        .Storage(storage)
        .Threads(GetParam());
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
    EXPECT_EQ(tester.output(0).shape, shape);
    EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 1e-6, 1e-6));
  }
}

TEST_P(DequantizeTest, ArgsOverrideTensorParameters) {
  const std::vector<uint8_t> codes = {0, 3, 10, 200, 255};
  OpTester tester("Dequantize");
  tester.ConstantUint8("q", {5}, codes, 0.5f, 3)
      .Output("y")
      .ArgFloat("scale", 0.25f)
      .Arg("zero_point", 10)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).floats,
            (std::vector<float>{-2.5f, -1.75f, 0.0f, 47.5f, 61.25f}));
}

TEST_P(DequantizeTest, Int32AccumulatorsWithArgsAvoidOverflow) {
  const std::vector<int32_t> q = {std::numeric_limits<int32_t>::min(), -7, 0,
                                  12345, std::numeric_limits<int32_t>::max()};
  OpTester tester("Dequantize");
  tester.InputInt("acc", {5}, q)
      .Output("y")
      .ArgFloat("scale", 1e-3f)
      .Arg("zero_point", -7)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  std::vector<double> expected;
  for (int32_t v : q)
    expected.push_back(double{1e-3f} * (static_cast<double>(v) + 7));
  EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 1e-6, 1e-6));
}

INSTANTIATE_TEST_SUITE_P(Threads, DequantizeTest, ::testing::Values(1, 2));

// Runs a one-op model and returns the error message ("" on success).
std::string ErrorOf(OpTester *tester) {
  const MaceStatus status = tester->Run();
  return status == MaceStatus::MACE_SUCCESS ? "" : status.information();
}

TEST(QuantizeErrorTest, BadScaleOrZeroPointArgumentsAreRejected) {
  struct Case {
    float scale;
    int zero_point;
    const char *names;
  };
  for (const Case &c :
       {Case{0.0f, 0, "'scale'"}, Case{-1.0f, 0, "'scale'"},
        Case{std::numeric_limits<float>::quiet_NaN(), 0, "'scale'"},
        Case{0.1f, 256, "'zero_point'"}, Case{0.1f, -1, "'zero_point'"}}) {
    OpTester tester("Quantize");
    tester.Input("x", {3}, {1, 2, 3})
        .Output("q")
        .ArgFloat("scale", c.scale)
        .Arg("zero_point", c.zero_point);
    const std::string message = ErrorOf(&tester);
    EXPECT_NE(message.find(c.names), std::string::npos) << message;
    EXPECT_NE(message.find("Quantize"), std::string::npos) << message;
  }
}

TEST(QuantizeErrorTest, WrongArgumentKindIsRejected) {
  OpTester tester("Quantize");
  tester.Input("x", {3}, {1, 2, 3}).Output("q").ArgString("scale", "0.1");
  const std::string message = ErrorOf(&tester);
  EXPECT_NE(message.find("'scale'"), std::string::npos) << message;
}

TEST(QuantizeErrorTest, Int8TypeIsUnsupported) {
  OpTester tester("Quantize");
  tester.Input("x", {3}, {1, 2, 3}).Output("q").Arg("T", DT_INT8);
  const MaceStatus status = tester.Run();
  EXPECT_EQ(status.code(), MaceStatus::MACE_UNSUPPORTED);
  EXPECT_NE(status.information().find("'T'"), std::string::npos);
}

TEST(QuantizeErrorTest, NonFloatInputIsRejected) {
  OpTester tester("Quantize");
  tester.InputInt("x", {3}, {1, 2, 3}).Output("q").ArgFloat("scale", 0.1f);
  const std::string message = ErrorOf(&tester);
  EXPECT_NE(message.find("DT_FLOAT"), std::string::npos) << message;
}

TEST(QuantizeErrorTest, NegativeQuantizeInfoScaleIsRejected) {
  GraphRun run;
  OperatorDef *quantize = nullptr;
  AddRoundTrip(&run, {3}, {1, 2, 3}, &quantize);
  quantize->add_quantize_info()->set_scale(-0.5f);
  const MaceStatus status = run.Run(1);
  ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("quantize_info"), std::string::npos);
}

TEST(DequantizeErrorTest, FloatInputIsRejected) {
  OpTester tester("Dequantize");
  tester.Input("x", {3}, {1, 2, 3}).Output("y").ArgFloat("scale", 0.1f);
  const std::string message = ErrorOf(&tester);
  EXPECT_NE(message.find("DT_UINT8"), std::string::npos) << message;
}

TEST(DequantizeErrorTest, WeightWithoutScaleIsRejected) {
  OpTester tester("Dequantize");
  tester.ConstantUint8("codes", {3}, {1, 2, 3}, 0.0f, 0).Output("y");
  const std::string message = ErrorOf(&tester);
  EXPECT_NE(message.find("'codes'"), std::string::npos) << message;
  EXPECT_NE(message.find("scale"), std::string::npos) << message;
}

TEST(DequantizeErrorTest, Int32InputNeedsScaleArgument) {
  OpTester tester("Dequantize");
  tester.InputInt("acc", {3}, {1, 2, 3}).Output("y");
  const std::string message = ErrorOf(&tester);
  EXPECT_NE(message.find("scale"), std::string::npos) << message;
}

TEST(DequantizeErrorTest, BadScaleArgumentAndInputCountAreRejected) {
  OpTester bad_scale("Dequantize");
  bad_scale.ConstantUint8("q", {3}, {1, 2, 3}, 0.5f, 0)
      .Output("y")
      .ArgFloat("scale", -2.0f);
  EXPECT_NE(ErrorOf(&bad_scale).find("'scale'"), std::string::npos);

  OpTester two_inputs("Dequantize");
  two_inputs.ConstantUint8("q", {3}, {1, 2, 3}, 0.5f, 0)
      .ConstantUint8("r", {3}, {1, 2, 3}, 0.5f, 0)
      .Output("y");
  EXPECT_NE(ErrorOf(&two_inputs).find("inputs"), std::string::npos);
}

TEST(DequantizeErrorTest, InlineUint8ValuesAreRejectedByTheLoader) {
  // Inline values are 4-byte floats; copying them into a 1-byte-per-element
  // tensor would overrun it.
  GraphRun run;
  run.builder.AddUint8Tensor("w8", {3}, {1, 2, 3}, 0.5f, 0);
  for (float v : {1.0f, 2.0f, 3.0f}) {
    run.builder.mutable_net()->mutable_tensors(0)->add_float_data(v);
  }
  run.builder.AddOp("Dequantize", "deq", {"w8"}, {"y"});
  run.Output("y");
  const MaceStatus status = run.Run(1);
  ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("inline"), std::string::npos)
      << status.information();
}

}  // namespace
}  // namespace test
}  // namespace mace
