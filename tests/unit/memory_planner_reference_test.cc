// PlanMemory's placement against a plain, slow statement of the documented
// algorithm, on random requests with many equal sizes (ties decide).

#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "mace/core/memory_planner.h"

namespace mace {
namespace {

int64_t Aligned(int64_t bytes) {
  return (std::max<int64_t>(bytes, 1) + 63) / 64 * 64;
}

// The documented placement, written plainly: buffers by size, largest
// first and equal sizes in request order, each at the lowest aligned
// offset where it overlaps no placed buffer that is alive with it.
std::vector<int64_t> ReferencePlacement(
    const std::vector<BufferRequest> &requests) {
  std::vector<size_t> order;
  for (size_t i = 0; i < requests.size(); ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return requests[a].bytes > requests[b].bytes;
  });
  std::vector<int64_t> offsets(requests.size(), 0);
  std::vector<size_t> placed;
  for (size_t index : order) {
    const BufferRequest &r = requests[index];
    for (int64_t offset = 0;; offset += 64) {
      bool fits = true;
      for (size_t other : placed) {
        const BufferRequest &o = requests[other];
        const bool in_time =
            r.first_step <= o.last_step && o.first_step <= r.last_step;
        const bool in_space = offset < offsets[other] + Aligned(o.bytes) &&
                              offsets[other] < offset + Aligned(r.bytes);
        if (in_time && in_space) {
          fits = false;
          break;
        }
      }
      if (fits) {
        offsets[index] = offset;
        break;
      }
    }
    placed.push_back(index);
  }
  return offsets;
}

TEST(MemoryPlannerReferenceTest, PlacementMatchesTheGreedyBySizeReference) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<BufferRequest> requests;
    const int n = rng() % 30;
    for (int i = 0; i < n; ++i) {
      const int first = rng() % 20;
      // Few distinct sizes, so that ties decide many placements.
      const int64_t bytes = 64 * (1 + rng() % 4) - (rng() % 2) * 10;
      requests.push_back({bytes, first, first + static_cast<int>(rng() % 5)});
    }
    const MemoryPlan plan = PlanMemory(requests);
    const std::vector<int64_t> expected = ReferencePlacement(requests);
    ASSERT_EQ(plan.offsets, expected) << "trial " << trial;
    int64_t peak = 0;
    for (int i = 0; i < n; ++i) {
      peak = std::max(peak, expected[i] + Aligned(requests[i].bytes));
    }
    EXPECT_EQ(plan.arena_bytes, peak) << "trial " << trial;
  }
}

}  // namespace
}  // namespace mace
