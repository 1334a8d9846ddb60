// The acceptance model of the engine foundation: written with the model
// builder, saved to files, loaded from files, checked against float64.

#include <cstdio>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "tests/common/reference.h"
#include "tests/common/small_cnn.h"

namespace mace {
namespace test {
namespace {

std::string TempPath(const std::string &name) {
  const char *dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/mace_small_cnn_" +
         std::to_string(::getpid()) + "_" + name;
}

std::vector<float> RunFromFiles(const std::string &graph,
                                const std::string &data,
                                const std::vector<float> &input,
                                int threads) {
  MaceEngineConfig config(DeviceType::CPU);
  config.SetCPUThreadPolicy(threads, AFFINITY_NONE);
  std::shared_ptr<MaceEngine> engine;
  const MaceStatus status = CreateMaceEngineFromProto(
      graph, data, {"input"}, {"prob"}, config, &engine);
  EXPECT_EQ(status, MaceStatus::MACE_SUCCESS) << status.information();
  if (engine == nullptr) return {};
  std::shared_ptr<float> buffer(new float[input.size()],
                                std::default_delete<float[]>());
  std::memcpy(buffer.get(), input.data(), input.size() * sizeof(float));
  std::map<std::string, MaceTensor> inputs{
      {"input", MaceTensor(SmallCnn::InputShape(), buffer)}};
  std::map<std::string, MaceTensor> outputs;
  EXPECT_EQ(engine->Run(inputs, &outputs), MaceStatus::MACE_SUCCESS);
  const MaceTensor &prob = outputs["prob"];
  EXPECT_EQ(prob.shape(), (std::vector<int64_t>{1, SmallCnn::kClasses}));
  return std::vector<float>(prob.data().get(),
                            prob.data().get() + SmallCnn::kClasses);
}

class SmallCnnTest : public ::testing::TestWithParam<int> {};

TEST_P(SmallCnnTest, SavedAndLoadedFromFilesMatchesFloat64Reference) {
  const SmallCnn cnn;
  const std::string graph = TempPath("model.pb"), data = TempPath("model.data");
  ASSERT_EQ(cnn.Build().WriteFiles(graph, data), MaceStatus::MACE_SUCCESS);
  for (uint32_t seed : {1u, 2u, 3u}) {
    const std::vector<float> input =
        RandomFloats(Product(SmallCnn::InputShape()), -1.0f, 1.0f, seed);
    const std::vector<double> expected = cnn.Reference(input);
    // The reference must not be degenerate, or any output would "match".
    const double spread = *std::max_element(expected.begin(), expected.end()) -
                          *std::min_element(expected.begin(), expected.end());
    EXPECT_GT(spread, 0.01);
    const std::vector<float> actual =
        RunFromFiles(graph, data, input, GetParam());
    EXPECT_TRUE(AllClose(actual, expected, 1e-5, 1e-7));
  }
  std::remove(graph.c_str());
  std::remove(data.c_str());
}

TEST_P(SmallCnnTest, HalfStorageStaysClose) {
  const SmallCnn cnn;
  const std::string graph = TempPath("h.pb"), data = TempPath("h.data");
  ASSERT_EQ(cnn.Build().WriteFiles(graph, data, WeightStorage::kFloat16),
            MaceStatus::MACE_SUCCESS);
  const std::vector<float> input =
      RandomFloats(Product(SmallCnn::InputShape()), -1.0f, 1.0f, 4);
  EXPECT_TRUE(AllClose(RunFromFiles(graph, data, input, GetParam()),
                       cnn.Reference(input), 1e-2, 1e-3));
  std::remove(graph.c_str());
  std::remove(data.c_str());
}

INSTANTIATE_TEST_SUITE_P(Threads, SmallCnnTest, ::testing::Values(1, 2));

}  // namespace
}  // namespace test
}  // namespace mace
