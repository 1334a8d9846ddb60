#include "mace/core/memory_planner.h"

#include <random>

#include "gtest/gtest.h"

namespace mace {
namespace {

bool Overlap(const BufferRequest &a, int64_t offset_a, const BufferRequest &b,
             int64_t offset_b) {
  const bool in_time = a.first_step <= b.last_step &&
                       b.first_step <= a.last_step;
  const bool in_space =
      offset_a < offset_b + b.bytes && offset_b < offset_a + a.bytes;
  return in_time && in_space;
}

TEST(MemoryPlannerTest, ChainReusesMemoryOfDeadBuffers) {
  // A chain where each buffer dies after the next step needs two slots.
  std::vector<BufferRequest> requests;
  for (int i = 0; i < 10; ++i) requests.push_back({1000, i, i + 1});
  const MemoryPlan plan = PlanMemory(requests);
  EXPECT_EQ(plan.arena_bytes, 2 * 1024);
}

TEST(MemoryPlannerTest, RandomLifetimesNeverOverlapAndOffsetsAligned) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<BufferRequest> requests;
    const int n = 1 + rng() % 40;
    int64_t total = 0;
    for (int i = 0; i < n; ++i) {
      const int first = rng() % 30;
      const int64_t bytes = 1 + rng() % 5000;
      requests.push_back({bytes, first, first + static_cast<int>(rng() % 6)});
      total += (bytes + 63) / 64 * 64;
    }
    const MemoryPlan plan = PlanMemory(requests);
    ASSERT_EQ(plan.offsets.size(), requests.size());
    EXPECT_LE(plan.arena_bytes, total);
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(plan.offsets[i] % kArenaAlignment, 0);
      EXPECT_LE(plan.offsets[i] + requests[i].bytes, plan.arena_bytes);
      for (int j = i + 1; j < n; ++j) {
        EXPECT_FALSE(Overlap(requests[i], plan.offsets[i], requests[j],
                             plan.offsets[j]))
            << "buffers " << i << " and " << j;
      }
    }
  }
}

TEST(MemoryPlannerTest, EmptyPlanNeedsNoArena) {
  EXPECT_EQ(PlanMemory({}).arena_bytes, 0);
}

}  // namespace
}  // namespace mace
