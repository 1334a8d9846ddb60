// A fixed pool of worker threads for data-parallel loops inside one op.
// Workers spin for a bounded time after each loop (cheap hand-off between
// consecutive ops) and then sleep; Rest() at the end of a Run sends them to
// sleep at once, so nothing burns CPU after Run returns.

#ifndef MACE_CORE_THREAD_POOL_H_
#define MACE_CORE_THREAD_POOL_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "mace/core/function_ref.h"
#include "mace/public/mace.h"

namespace mace {

class ThreadPool {
 public:
  // How long a worker (or a caller waiting for workers) spins before it
  // sleeps. Long enough to cover the gap between two ops of one Run, even
  // when the caller is held up for a while (a descheduled vCPU, a slow op
  // on the caller's side); the end of a Run ends the spinning at once
  // (Rest). ResNet-50 at 2 threads on a 2-vCPU VM, against PAUSE for 150 us
  // (interleaved processes, 24-30 each): yield for 150 us 0.96, for 1 ms
  // 0.92.
  static constexpr std::chrono::microseconds kDefaultSpin{1000};

  // num_threads <= 0: as many threads as the policy allows cores.
  ThreadPool(int num_threads, CPUAffinityPolicy policy,
             std::chrono::microseconds spin = kDefaultSpin);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  // Starts the workers and binds them (Linux) as the policy says. An
  // affinity that cannot be set is logged and ignored, never fatal.
  MaceStatus Init();

  // Threads that share a loop, the calling thread included.
  int num_threads() const;

  // Calls fn(chunk_begin, chunk_end) over contiguous chunks covering
  // [begin, end), each at least `grain` long (except the last), on up to
  // num_threads() threads; the caller takes part and returns when all
  // chunks are done. Thread t (the caller is 0) starts with the t-th of
  // equal contiguous shares of the chunks, so loops over the same range
  // give each thread the same part of it, and then takes what is left of
  // the other shares from their far end. Safe to call with begin >= end (does
  // nothing). A call made from inside fn, or while another thread's call holds
  // the workers, runs fn(begin, end) on its own caller. An exception thrown by
  // fn reaches the caller once no thread runs fn any more.
  void ParallelFor(int64_t begin, int64_t end, int64_t grain,
                   FunctionRef<void(int64_t, int64_t)> fn);

  // Says that no loop follows soon (the end of a Run): workers waiting for
  // one sleep now instead of spinning out their time. The next
  // ParallelFor wakes them as usual.
  void Rest();

  // Workers asleep now, as opposed to spinning or running a loop: a
  // diagnostic.
  int SleepingWorkers() const;

  // Cores chosen for the workers by the policy, fastest first for
  // HIGH_PERFORMANCE / BIG_ONLY, slowest first for POWER_SAVE / LITTLE_ONLY.
  const std::vector<int> &cpu_ids() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// pool->ParallelFor(begin, end, grain, fn), or fn(begin, end) in one call
// on the caller when there is no pool: kernels take a null pool when they
// run outside an engine (the packers at load, tests, benchmarks).
inline void ParallelForOrInline(ThreadPool *pool, int64_t begin, int64_t end,
                                int64_t grain,
                                FunctionRef<void(int64_t, int64_t)> fn) {
  if (pool != nullptr) {
    pool->ParallelFor(begin, end, grain, fn);
  } else if (begin < end) {
    fn(begin, end);
  }
}

}  // namespace mace

#endif  // MACE_CORE_THREAD_POOL_H_
