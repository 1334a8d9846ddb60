#include "tests/common/kernel_test_util.h"

#include "gtest/gtest.h"

namespace mace {
namespace test {

std::unique_ptr<ThreadPool> StartPool(int threads) {
  auto pool = std::make_unique<ThreadPool>(threads, AFFINITY_NONE);
  EXPECT_EQ(pool->Init(), MaceStatus::MACE_SUCCESS);
  return pool;
}

std::vector<float> RandomVector(int64_t count, std::mt19937 *rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float &x : v) x = dist(*rng);
  return v;
}

}  // namespace test
}  // namespace mace
