// Work that ops' Prepare hands back to be done later, all of it in one
// loop: the packing of every op's weights at load then runs as pieces that
// the threads claim one by one, so each thread packs whole pieces and
// faults in their pages. Packed op by op, most of a model's matrices are
// too small to split and stay on the calling thread with their page
// faults, while the workers sleep (perf of a 2-thread load of
// MobileNet-v3: the worker had 3-8 samples of the caller's 161-179 in
// half of the loads).

#ifndef MACE_CORE_DEFERRED_WORK_H_
#define MACE_CORE_DEFERRED_WORK_H_

#include <functional>
#include <vector>

#include "mace/core/thread_pool.h"

namespace mace {

class DeferredWork {
 public:
  // A task must not throw and must stay valid (with what it points to)
  // until RunAll.
  void Add(std::function<void()> task) { tasks_.push_back(std::move(task)); }

  // Runs every task once, each on one of `pool`'s threads (all on the
  // caller without a pool): the caller takes them from the first added
  // on, the workers from the last; then forgets them.
  void RunAll(ThreadPool *pool);

  bool empty() const { return tasks_.empty(); }

 private:
  std::vector<std::function<void()>> tasks_;
};

}  // namespace mace

#endif  // MACE_CORE_DEFERRED_WORK_H_
