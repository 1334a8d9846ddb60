// Places buffers with known lifetimes in one arena so that buffers alive at
// the same time never overlap. Greedy by size (largest first), each buffer
// at the lowest aligned offset that fits between already placed buffers
// whose lifetimes intersect its own (as TFLite's and XNNPACK's planners).

#ifndef MACE_CORE_MEMORY_PLANNER_H_
#define MACE_CORE_MEMORY_PLANNER_H_

#include <cstdint>
#include <vector>

namespace mace {

struct BufferRequest {
  int64_t bytes = 0;
  int first_step = 0;  // step that writes it first
  int last_step = 0;   // last step that reads it (inclusive)
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // parallel to the requests
  int64_t arena_bytes = 0;       // peak: the arena size needed
};

constexpr int64_t kArenaAlignment = 64;

MemoryPlan PlanMemory(const std::vector<BufferRequest> &requests);

}  // namespace mace

#endif  // MACE_CORE_MEMORY_PLANNER_H_
