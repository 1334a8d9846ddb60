#include "mace/core/thread_pool.h"

#if defined(__linux__)
#include <sched.h>
#endif

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "mace/core/cpu_info.h"

namespace mace {
namespace {

using Chunk = std::pair<int64_t, int64_t>;

const CPUAffinityPolicy kAllPolicies[] = {
    AFFINITY_NONE, AFFINITY_BIG_ONLY, AFFINITY_LITTLE_ONLY,
    AFFINITY_HIGH_PERFORMANCE, AFFINITY_POWER_SAVE};

std::unique_ptr<ThreadPool> StartPool(int num_threads,
                                      CPUAffinityPolicy policy) {
  auto pool = std::make_unique<ThreadPool>(num_threads, policy);
  const MaceStatus status = pool->Init();
  EXPECT_EQ(status.code(), MaceStatus::MACE_SUCCESS) << status.information();
  return pool;
}

// Cores the process may run on (the pool never picks others).
std::vector<int> AllowedCpus() {
  std::vector<int> cpus;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < GetCpuCount() && cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
    return cpus;
  }
#endif
  for (int cpu = 0; cpu < GetCpuCount(); ++cpu) cpus.push_back(cpu);
  return cpus;
}

// Runs one loop and checks that every index was visited once and that the
// chunks respect the grain.
void ExpectCoversOnce(ThreadPool *pool, int64_t begin, int64_t end,
                      int64_t grain) {
  const int64_t size = std::max<int64_t>(end - begin, 0);
  std::vector<std::atomic<int>> visits(size);
  std::mutex mutex;
  std::vector<Chunk> chunks;
  pool->ParallelFor(begin, end, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) visits[i - begin].fetch_add(1);
    std::lock_guard<std::mutex> lock(mutex);
    chunks.emplace_back(lo, hi);
  });
  const std::string where = "threads " + std::to_string(pool->num_threads()) +
                            " range [" + std::to_string(begin) + ", " +
                            std::to_string(end) + ") grain " +
                            std::to_string(grain);
  for (int64_t i = 0; i < size; ++i) {
    ASSERT_EQ(visits[i].load(), 1) << where << " index " << begin + i;
  }
  for (const Chunk &chunk : chunks) {
    EXPECT_LT(chunk.first, chunk.second) << where;
    if (chunk.second != end) {
      EXPECT_GE(chunk.second - chunk.first, grain) << where;
    }
  }
  if (size == 0) {
    EXPECT_TRUE(chunks.empty()) << where;
  }
}

TEST(CpuInfoTest, CountAndFrequenciesAgree) {
  const int count = GetCpuCount();
  EXPECT_GE(count, 1);
  const std::vector<int> freqs = GetCpuMaxFrequencies();
  EXPECT_EQ(static_cast<int>(freqs.size()), count);
  for (int freq : freqs) EXPECT_GE(freq, 0);
}

// The kernel lists in /proc/cpuinfo only the features it has enabled, so
// every one listed there must be detected too.
TEST(CpuInfoTest, DetectsFeaturesTheKernelReports) {
  const CpuFeatures &features = GetCpuFeatures();
  EXPECT_EQ(&features, &GetCpuFeatures());
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::set<std::string> flags;
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("flags", 0) != 0 && line.rfind("Features", 0) != 0) {
      continue;
    }
    std::istringstream words(line.substr(line.find(':') + 1));
    for (std::string word; words >> word;) flags.insert(word);
    break;
  }
  auto expect_if_listed = [&](const char *flag, bool detected) {
    if (flags.count(flag) > 0) {
      EXPECT_TRUE(detected) << flag << " is in /proc/cpuinfo";
    }
  };
#if defined(__x86_64__) || defined(__i386__)
  expect_if_listed("avx2", features.avx2);
  expect_if_listed("fma", features.fma);
  expect_if_listed("avx512f", features.avx512f);
  expect_if_listed("avx512bw", features.avx512bw);
  expect_if_listed("avx512vl", features.avx512vl);
  expect_if_listed("avx512dq", features.avx512dq);
  expect_if_listed("avx512_vnni", features.avx512vnni);
  expect_if_listed("hypervisor", features.hypervisor);
  EXPECT_FALSE(features.neon);
  EXPECT_FALSE(features.dotprod);
#elif defined(__aarch64__)
  EXPECT_TRUE(features.neon);
  expect_if_listed("asimddp", features.dotprod);
  EXPECT_FALSE(features.avx2);
#endif
  // AVX-512 extensions are never reported without the foundation.
  if (!features.avx512f) {
    EXPECT_FALSE(features.avx512bw || features.avx512vl || features.avx512dq ||
                 features.avx512vnni);
  }
}

TEST(ThreadPoolTest, ParallelForCoversEveryIndexOnce) {
  const int cores = static_cast<int>(AllowedCpus().size());
  for (int threads : {1, 2, 3, cores + 3}) {
    auto pool = StartPool(threads, AFFINITY_NONE);
    for (int64_t begin : {int64_t{0}, int64_t{-5}, int64_t{1000}}) {
      for (int64_t size : {0, 1, 2, 3, 7, 64, 1000, 4097}) {
        for (int64_t grain : {0, 1, 3, 100}) {
          ExpectCoversOnce(pool.get(), begin, begin + size, grain);
        }
      }
    }
  }
}

TEST(ThreadPoolTest, ReversedRangeCallsNothing) {
  auto pool = StartPool(2, AFFINITY_NONE);
  int calls = 0;
  pool->ParallelFor(10, 3, 1, [&](int64_t, int64_t) { ++calls; });
  pool->ParallelFor(5, 5, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ThreadPoolTest, SmallRangeRunsAsOneCallOnCaller) {
  auto pool = StartPool(4, AFFINITY_NONE);
  std::vector<Chunk> chunks;
  std::vector<std::thread::id> ids;
  // Under 2 * grain: not worth splitting, and no other thread is involved,
  // so the unsynchronised push_back is safe.
  pool->ParallelFor(3, 22, 10, [&](int64_t lo, int64_t hi) {
    chunks.emplace_back(lo, hi);
    ids.push_back(std::this_thread::get_id());
  });
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0], Chunk(3, 22));
  EXPECT_EQ(ids[0], std::this_thread::get_id());
}

TEST(ThreadPoolTest, SingleThreadPoolRunsInline) {
  auto pool = StartPool(1, AFFINITY_NONE);
  EXPECT_EQ(pool->num_threads(), 1);
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<Chunk> chunks;
  pool->ParallelFor(0, 1000, 1, [&](int64_t lo, int64_t hi) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    chunks.emplace_back(lo, hi);
  });
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0], Chunk(0, 1000));
}

TEST(ThreadPoolTest, ParallelForBeforeInitRunsOnCaller) {
  ThreadPool pool(4, AFFINITY_NONE);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int64_t> sum{0};
  std::atomic<bool> other_thread{false};
  pool.ParallelFor(0, 100, 1, [&](int64_t lo, int64_t hi) {
    if (std::this_thread::get_id() != caller) other_thread = true;
    for (int64_t i = lo; i < hi; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 4950);
  EXPECT_FALSE(other_thread.load());
}

TEST(ThreadPoolTest, ParallelForOrInlineWithoutPoolIsOneCallOnCaller) {
  std::vector<Chunk> chunks;
  std::vector<std::thread::id> ids;
  const auto record = [&](int64_t lo, int64_t hi) {
    chunks.emplace_back(lo, hi);
    ids.push_back(std::this_thread::get_id());
  };
  ParallelForOrInline(nullptr, -4, 4097, 1, record);
  ParallelForOrInline(nullptr, 7, 7, 1, record);
  ParallelForOrInline(nullptr, 9, 2, 1, record);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0], Chunk(-4, 4097));
  EXPECT_EQ(ids[0], std::this_thread::get_id());
}

TEST(ThreadPoolTest, ParallelForOrInlineWithPoolCoversEveryIndexOnce) {
  auto pool = StartPool(3, AFFINITY_NONE);
  std::vector<std::atomic<int>> hits(5000);
  ParallelForOrInline(pool.get(), 0, 5000, 7, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) ++hits[i];
  });
  for (const auto &hit : hits) ASSERT_EQ(hit.load(), 1);
}

// Chunks that wait for one another can only finish if every thread takes
// exactly one of them.
TEST(ThreadPoolTest, EveryThreadTakesPartInALargeLoop) {
  const int threads = 3;
  auto pool = StartPool(threads, AFFINITY_NONE);
  std::atomic<int> arrived{0};
  std::mutex mutex;
  std::set<std::thread::id> ids;
  pool->ParallelFor(0, threads, 1, [&](int64_t, int64_t) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      ids.insert(std::this_thread::get_id());
    }
    arrived.fetch_add(1);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (arrived.load() < threads &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
  });
  EXPECT_EQ(ids.size(), static_cast<size_t>(threads));
}

// Chunks slow enough that the worker is up long before the caller has
// finished its own share: each thread then starts at the front of its own
// contiguous share, loop after loop, so an op reads mostly what the same
// thread wrote in the op before.
// A worker that the machine does not run for the whole 40 ms loop (seen
// beside other tests on this VM) leaves nothing to check: such loops are
// run again, up to 20 in all, until three had both threads.
TEST(ThreadPoolTest, EachThreadStartsWithItsOwnShare) {
  auto pool = StartPool(2, AFFINITY_NONE);
  const std::thread::id caller = std::this_thread::get_id();
  int shared_loops = 0;
  for (int loop = 0; loop < 20 && shared_loops < 3; ++loop) {
    std::mutex mutex;
    std::vector<std::pair<std::thread::id, int64_t>> firsts;
    std::set<std::thread::id> seen;
    pool->ParallelFor(0, 8, 1, [&](int64_t lo, int64_t) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (seen.insert(std::this_thread::get_id()).second) {
          firsts.emplace_back(std::this_thread::get_id(), lo);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    });
    for (const auto &[id, lo] : firsts) {
      EXPECT_EQ(lo, id == caller ? 0 : 4) << "loop " << loop;
    }
    if (firsts.size() == 2) ++shared_loops;
  }
  EXPECT_EQ(shared_loops, 3) << "the worker took part in too few loops";
}

// A thread held up in its first chunk leaves the rest of its share to the
// others, which take it from the far end.
TEST(ThreadPoolTest, AHeldUpThreadsShareIsFinishedByTheOthers) {
  auto pool = StartPool(2, AFFINITY_NONE);
  const std::thread::id caller = std::this_thread::get_id();
  std::mutex mutex;
  std::vector<int64_t> by_caller;
  std::vector<int64_t> by_worker;
  pool->ParallelFor(0, 8, 1, [&](int64_t lo, int64_t) {
    bool first_on_worker = false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto &mine = std::this_thread::get_id() == caller ? by_caller : by_worker;
      first_on_worker = &mine == &by_worker && mine.empty();
      mine.push_back(lo);
    }
    if (first_on_worker) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  EXPECT_LE(by_worker.size(), 1u);
  EXPECT_EQ(by_caller.size() + by_worker.size(), 8u);
  // The caller's own share in order, then the worker's from its back.
  const std::vector<int64_t> expected_start = {0, 1, 2, 3, 7};
  ASSERT_GE(by_caller.size(), expected_start.size());
  EXPECT_TRUE(std::equal(expected_start.begin(), expected_start.end(),
                         by_caller.begin()));
}

TEST(ThreadPoolTest, MoreThreadsThanCoresCompleteManySmallLoops) {
  const int threads = 2 * static_cast<int>(AllowedCpus().size()) + 1;
  auto pool = StartPool(threads, AFFINITY_HIGH_PERFORMANCE);
  EXPECT_EQ(pool->num_threads(), threads);
  std::vector<int64_t> data(48);
  for (int loop = 0; loop < 3000; ++loop) {
    const int64_t size = 2 + loop % 47;
    pool->ParallelFor(0, size, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) data[i] += i;
    });
  }
  // Index i was in range for the loops with 2 + loop % 47 > i.
  for (int64_t i = 0; i < 48; ++i) {
    int64_t expected = 0;
    for (int loop = 0; loop < 3000; ++loop) {
      if (i < 2 + loop % 47) expected += i;
    }
    ASSERT_EQ(data[i], expected) << "index " << i;
  }
}

// Pauses around the spin window (1 ms), and rests at random, send workers
// to sleep at any point of the hand-off; a lost wake-up would hang here.
TEST(ThreadPoolTest, LoopsSeparatedByPausesWakeSleepingWorkers) {
  auto pool = StartPool(3, AFFINITY_NONE);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> pause_us(0, 1500);
  std::vector<int> data(64, 0);
  for (int loop = 0; loop < 200; ++loop) {
    if (rng() % 3 == 0) pool->Rest();
    std::this_thread::sleep_for(std::chrono::microseconds(pause_us(rng)));
    pool->ParallelFor(0, 64, 4, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) ++data[i];
    });
  }
  for (int value : data) ASSERT_EQ(value, 200);
}

TEST(ThreadPoolTest, ResultsWithOneThreadEqualResultsWithMany) {
  auto compute = [](ThreadPool *pool) {
    std::vector<float> out(10007);
    pool->ParallelFor(0, 10007, 16, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        out[i] = std::sin(0.001f * i) * std::sqrt(static_cast<float>(i));
      }
    });
    return out;
  };
  auto single = StartPool(1, AFFINITY_NONE);
  auto many = StartPool(4, AFFINITY_NONE);
  EXPECT_EQ(compute(single.get()), compute(many.get()));
}

// Polls until `count` workers of `pool` sleep; false after `limit`.
bool WaitUntilSleeping(const ThreadPool &pool, int count,
                       std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (pool.SleepingWorkers() != count) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// The spin after a loop is bounded: without Rest the workers still go to
// sleep. (Asleep is in a condition-variable wait, not burning CPU; a limit
// on the process's CPU time over 300 ms of sleep said the same but moves
// with the host's steal on this VM.)
TEST(ThreadPoolTest, WorkersStopUsingCpuAfterLoop) {
  auto pool = StartPool(4, AFFINITY_NONE);
  std::vector<int64_t> data(100000);
  pool->ParallelFor(0, 100000, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) data[i] = i * i;
  });
  EXPECT_TRUE(WaitUntilSleeping(*pool, 3, std::chrono::seconds(20)))
      << pool->SleepingWorkers() << " of 3 workers asleep";
  for (int64_t i = 0; i < 100000; ++i) ASSERT_EQ(data[i], i * i);
}

// The end of a Run. Workers that spin for a minute after a loop stay awake
// for the whole test unless Rest sends them to sleep, so neither a slow
// machine nor an emulator can pass a Rest that does nothing or fail one
// that works (a CPU-time limit did both).
TEST(ThreadPoolTest, RestSendsWaitingWorkersToSleepAtOnce) {
  ThreadPool pool(4, AFFINITY_NONE, std::chrono::minutes(1));
  ASSERT_EQ(pool.Init(), MaceStatus::MACE_SUCCESS);
  std::vector<std::atomic<int>> runs(4000);
  constexpr int kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    pool.ParallelFor(0, 4000, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) runs[i].fetch_add(1);
    });
    // The loop woke every worker; none sleeps again on its own.
    ASSERT_TRUE(WaitUntilSleeping(pool, 0, std::chrono::seconds(20)));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(pool.SleepingWorkers(), 0) << "round " << round;
    pool.Rest();
    EXPECT_TRUE(WaitUntilSleeping(pool, 3, std::chrono::seconds(20)))
        << "round " << round << ": " << pool.SleepingWorkers()
        << " of 3 workers asleep after Rest";
  }
  for (const auto &count : runs) ASSERT_EQ(count.load(), kRounds);
}

TEST(ThreadPoolTest, NestedCallRunsInline) {
  auto pool = StartPool(3, AFFINITY_NONE);
  std::vector<std::atomic<int>> visits(40 * 40);
  pool->ParallelFor(0, 40, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t row = lo; row < hi; ++row) {
      pool->ParallelFor(0, 40, 1, [&](int64_t col_lo, int64_t col_hi) {
        for (int64_t col = col_lo; col < col_hi; ++col) {
          visits[row * 40 + col].fetch_add(1);
        }
      });
    }
  });
  for (auto &count : visits) ASSERT_EQ(count.load(), 1);
}

TEST(ThreadPoolTest, ConcurrentCallersGetCorrectResults) {
  auto pool = StartPool(3, AFFINITY_NONE);
  auto run = [&pool](std::vector<int> *data) {
    for (int loop = 0; loop < 300; ++loop) {
      pool->ParallelFor(0, static_cast<int64_t>(data->size()), 2,
                        [data](int64_t lo, int64_t hi) {
                          for (int64_t i = lo; i < hi; ++i) ++(*data)[i];
                        });
    }
  };
  std::vector<int> a(50, 0);
  std::vector<int> b(70, 0);
  std::thread other(run, &b);
  run(&a);
  other.join();
  for (int value : a) ASSERT_EQ(value, 300);
  for (int value : b) ASSERT_EQ(value, 300);
}

TEST(ThreadPoolTest, ExceptionInLoopReachesCallerAndPoolStaysUsable) {
  auto pool = StartPool(3, AFFINITY_NONE);
  for (int64_t bad : {0, 50, 99}) {
    EXPECT_THROW(pool->ParallelFor(0, 100, 1,
                                   [bad](int64_t lo, int64_t hi) {
                                     if (lo <= bad && bad < hi) {
                                       throw std::runtime_error("bad index");
                                     }
                                   }),
                 std::runtime_error);
  }
  ExpectCoversOnce(pool.get(), 0, 1000, 1);
}

TEST(ThreadPoolTest, InitSucceedsForEveryPolicy) {
  for (CPUAffinityPolicy policy : kAllPolicies) {
    for (int threads : {0, 1, 2, 5}) {
      auto pool = StartPool(threads, policy);
      EXPECT_GE(pool->num_threads(), 1);
      if (threads > 0) {
        EXPECT_EQ(pool->num_threads(), threads);
      }
      ExpectCoversOnce(pool.get(), 0, 257, 1);
    }
  }
}

TEST(ThreadPoolTest, UnknownPolicyIsRejectedAndLoopsStillRun) {
  // 7 is outside the enumerators but inside the enum's value range, so
  // the cast itself is well defined.
  ThreadPool pool(2, static_cast<CPUAffinityPolicy>(7));
  EXPECT_EQ(pool.Init().code(), MaceStatus::MACE_INVALID_ARGS);
  ExpectCoversOnce(&pool, 0, 100, 1);
}

TEST(ThreadPoolTest, CpuIdsFollowPolicy) {
  const std::vector<int> allowed = AllowedCpus();
  const std::vector<int> freqs = GetCpuMaxFrequencies();
  auto freq = [&freqs](int cpu) { return freqs[cpu]; };
  const bool ranked = std::all_of(allowed.begin(), allowed.end(),
                                  [&](int cpu) { return freq(cpu) > 0; }) &&
                      std::any_of(allowed.begin(), allowed.end(), [&](int cpu) {
                        return freq(cpu) != freq(allowed[0]);
                      });
  int fastest = 0;
  int slowest = std::numeric_limits<int>::max();
  for (int cpu : allowed) {
    fastest = std::max(fastest, freq(cpu));
    slowest = std::min(slowest, freq(cpu));
  }

  for (CPUAffinityPolicy policy : kAllPolicies) {
    auto pool = StartPool(0, policy);
    const std::vector<int> &ids = pool->cpu_ids();
    SCOPED_TRACE("policy " + std::to_string(policy));
    if (policy == AFFINITY_NONE) {
      EXPECT_TRUE(ids.empty());
      EXPECT_EQ(pool->num_threads(), static_cast<int>(allowed.size()));
      continue;
    }
    EXPECT_EQ(pool->num_threads(), static_cast<int>(ids.size()));
    EXPECT_EQ(std::set<int>(ids.begin(), ids.end()).size(), ids.size());
    for (int cpu : ids) {
      EXPECT_NE(std::find(allowed.begin(), allowed.end(), cpu), allowed.end());
    }
    const bool slow_first =
        policy == AFFINITY_POWER_SAVE || policy == AFFINITY_LITTLE_ONLY;
    for (size_t i = 1; i < ids.size(); ++i) {
      if (slow_first) {
        EXPECT_LE(freq(ids[i - 1]), freq(ids[i]));
      } else {
        EXPECT_GE(freq(ids[i - 1]), freq(ids[i]));
      }
    }
    if (!ranked || policy == AFFINITY_HIGH_PERFORMANCE ||
        policy == AFFINITY_POWER_SAVE) {
      EXPECT_EQ(ids.size(), allowed.size());
    } else {
      const int edge = policy == AFFINITY_BIG_ONLY ? fastest : slowest;
      for (int cpu : ids) EXPECT_EQ(freq(cpu), edge);
      EXPECT_LT(ids.size(), allowed.size());
    }
  }
}

TEST(ThreadPoolTest, CpuIdsShrinkToThreadCount) {
  auto all = StartPool(0, AFFINITY_HIGH_PERFORMANCE);
  auto one = StartPool(1, AFFINITY_HIGH_PERFORMANCE);
  ASSERT_EQ(one->cpu_ids().size(), 1u);
  EXPECT_EQ(one->cpu_ids()[0], all->cpu_ids()[0]);
  // With more threads than cores every chosen core stays listed.
  auto many = StartPool(static_cast<int>(all->cpu_ids().size()) + 2,
                        AFFINITY_HIGH_PERFORMANCE);
  EXPECT_EQ(many->cpu_ids(), all->cpu_ids());
}

#if defined(__linux__)
// Each worker is pinned to its own chosen core; cpu_ids()[0] is left to
// the calling thread, which the pool does not pin.
TEST(ThreadPoolTest, WorkersArePinnedToChosenCores) {
  auto pool = StartPool(0, AFFINITY_HIGH_PERFORMANCE);
  const int threads = pool->num_threads();
  const std::vector<int> ids = pool->cpu_ids();
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> arrived{0};
  std::mutex mutex;
  std::vector<std::vector<int>> worker_masks;
  pool->ParallelFor(0, threads, 1, [&](int64_t, int64_t) {
    if (std::this_thread::get_id() != caller) {
      cpu_set_t set;
      CPU_ZERO(&set);
      ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
      std::vector<int> mask;
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &set)) mask.push_back(cpu);
      }
      std::lock_guard<std::mutex> lock(mutex);
      worker_masks.push_back(mask);
    }
    // Hold every chunk until all threads have one, so each worker reports.
    arrived.fetch_add(1);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (arrived.load() < threads &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
  });
  ASSERT_EQ(static_cast<int>(worker_masks.size()), threads - 1);
  std::set<int> used;
  for (const std::vector<int> &mask : worker_masks) {
    ASSERT_EQ(mask.size(), 1u);
    EXPECT_NE(mask[0], ids[0]);
    EXPECT_NE(std::find(ids.begin(), ids.end(), mask[0]), ids.end());
    used.insert(mask[0]);
  }
  EXPECT_EQ(static_cast<int>(used.size()), threads - 1);
}
#endif

}  // namespace
}  // namespace mace
