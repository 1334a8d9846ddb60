#include "mace/core/deferred_work.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace mace {
namespace {

// Claims the next task of the unclaimed range (front << 32 | back): the
// first from the front, the others from the back, so that threads fill
// memory far apart (two threads writing into the same fresh huge page
// wait for each other while the kernel zeroes it).
bool ClaimTask(std::atomic<uint64_t> *range, bool from_front, size_t *task) {
  uint64_t now = range->load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t front = now >> 32;
    const uint64_t back = now & 0xffffffffu;
    if (front >= back) return false;
    const uint64_t claimed = from_front ? now + (uint64_t{1} << 32) : now - 1;
    if (range->compare_exchange_weak(now, claimed, std::memory_order_relaxed)) {
      *task = static_cast<size_t>(from_front ? front : back - 1);
      return true;
    }
  }
}

}  // namespace

void DeferredWork::RunAll(ThreadPool *pool) {
  // Each thread claims one task at a time until none is left: tasks differ
  // in size, and a worker that wakes late takes only what is left.
  std::atomic<uint64_t> range{static_cast<uint64_t>(tasks_.size())};
  auto drain = [this, &range](int64_t thread_share, int64_t) {
    size_t task = 0;
    while (ClaimTask(&range, thread_share == 0, &task)) tasks_[task]();
  };
  if (pool != nullptr && pool->num_threads() > 1 && tasks_.size() > 1) {
    pool->ParallelFor(0, pool->num_threads(), 1, drain);
  } else {
    drain(0, 0);
  }
  tasks_.clear();
}

}  // namespace mace
