#include "mace/core/memory_planner.h"

#include <algorithm>
#include <numeric>

namespace mace {
namespace {

int64_t AlignUp(int64_t value) {
  return (value + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

bool LifetimesOverlap(const BufferRequest &a, const BufferRequest &b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

}  // namespace

MemoryPlan PlanMemory(const std::vector<BufferRequest> &requests) {
  const size_t n = requests.size();
  MemoryPlan plan;
  plan.offsets.assign(n, 0);
  std::vector<int64_t> sizes(n);
  for (size_t i = 0; i < n; ++i) {
    sizes[i] = AlignUp(std::max<int64_t>(requests[i].bytes, 1));
  }
  // Largest first, ties in request order (a stable sort without its
  // scratch allocation).
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return requests[a].bytes != requests[b].bytes
               ? requests[a].bytes > requests[b].bytes
               : a < b;
  });
  std::vector<size_t> placed;
  placed.reserve(n);
  // Intervals taken by placed buffers that overlap the current one in
  // time, sorted by offset; reused across buffers.
  std::vector<std::pair<int64_t, int64_t>> taken;
  taken.reserve(n);
  for (size_t index : order) {
    const BufferRequest &request = requests[index];
    const int64_t size = sizes[index];
    taken.clear();
    for (size_t other : placed) {
      if (LifetimesOverlap(request, requests[other])) {
        taken.emplace_back(plan.offsets[other],
                           plan.offsets[other] + sizes[other]);
      }
    }
    std::sort(taken.begin(), taken.end());
    int64_t offset = 0;
    for (const auto &interval : taken) {
      if (interval.first - offset >= size) break;
      offset = std::max(offset, interval.second);
    }
    plan.offsets[index] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + size);
    placed.push_back(index);
  }
  return plan;
}

}  // namespace mace
