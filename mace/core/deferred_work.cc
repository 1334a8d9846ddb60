#include "mace/core/deferred_work.h"

#include <atomic>
#include <cstdint>

#include "mace/core/index_claim.h"

namespace mace {

void DeferredWork::RunAll(ThreadPool *pool) {
  // Each thread claims one task at a time until none is left: tasks differ
  // in size, and a worker that wakes late takes only what is left. The
  // caller takes them from the front and the others from the back, so that
  // threads fill memory far apart (two threads writing into the same fresh
  // huge page wait for each other while the kernel zeroes it).
  std::atomic<uint64_t> range{ClaimableRange(0, tasks_.size())};
  auto drain = [this, &range](int64_t thread_share, int64_t) {
    int64_t task = 0;
    while (ClaimIndex(range, thread_share == 0, &task)) tasks_[task]();
  };
  if (pool != nullptr && pool->num_threads() > 1 && tasks_.size() > 1) {
    pool->ParallelFor(0, pool->num_threads(), 1, drain);
  } else {
    drain(0, 0);
  }
  tasks_.clear();
}

}  // namespace mace
