#include "mace/core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <sstream>
#include <system_error>
#include <thread>
#include <utility>

#if defined(__linux__)
#include <sched.h>
#endif

#include "mace/core/cpu_info.h"
#include "mace/core/index_claim.h"
#include "mace/core/logging.h"
#include "mace/core/status.h"

namespace mace {
namespace {

// More chunks than threads lets fast cores (or threads that wake first)
// take over work from slow ones; few enough that per-chunk cost stays small.
constexpr int64_t kChunksPerThread = 4;

// The published task word is generation << kParticipantBits | participants.
// One word, so a worker can never pair one loop's generation with another
// loop's participant count. 48 bits of generation do not wrap in practice.
constexpr int kParticipantBits = 16;
constexpr uint64_t kParticipantMask = (uint64_t{1} << kParticipantBits) - 1;
constexpr int kMaxThreads = 1 << kParticipantBits;

// The gate word: this bit is set while the caller still lets workers into
// the current loop; the bits below count the workers inside it.
constexpr uint64_t kGateOpen = uint64_t{1} << 63;

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

bool IsKnownPolicy(CPUAffinityPolicy policy) {
  return policy >= AFFINITY_NONE && policy <= AFFINITY_POWER_SAVE;
}

// Cores this process may run on, by id.
std::vector<int> AllowedCpus() {
  const int count = GetCpuCount();
  std::vector<int> cpus;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < count && cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
    if (!cpus.empty()) return cpus;
  }
#endif
  for (int cpu = 0; cpu < count; ++cpu) cpus.push_back(cpu);
  return cpus;
}

// The allowed cores the policy picks, in the order it prefers them. Cores
// are ranked by max frequency only when every one is known and they differ;
// otherwise no core is faster than another and all are kept, by id.
std::vector<int> SelectCpus(CPUAffinityPolicy policy) {
  if (policy == AFFINITY_NONE || !IsKnownPolicy(policy)) return {};
  std::vector<int> cpus = AllowedCpus();
  const std::vector<int> freqs = GetCpuMaxFrequencies();
  auto freq = [&freqs](int cpu) { return freqs[cpu]; };
  const bool all_known = std::all_of(cpus.begin(), cpus.end(),
                                     [&](int cpu) { return freq(cpu) > 0; });
  const bool all_equal = std::all_of(cpus.begin(), cpus.end(), [&](int cpu) {
    return freq(cpu) == freq(cpus.front());
  });
  if (!all_known || all_equal) return cpus;

  const bool slow_first =
      policy == AFFINITY_POWER_SAVE || policy == AFFINITY_LITTLE_ONLY;
  std::stable_sort(cpus.begin(), cpus.end(), [&](int a, int b) {
    return slow_first ? freq(a) < freq(b) : freq(a) > freq(b);
  });
  if (policy == AFFINITY_BIG_ONLY || policy == AFFINITY_LITTLE_ONLY) {
    const int edge = freq(cpus.front());
    cpus.erase(std::find_if(cpus.begin(), cpus.end(),
                            [&](int cpu) { return freq(cpu) != edge; }),
               cpus.end());
  }
  return cpus;
}

std::string CpuList(const std::vector<int> &cpus) {
  std::ostringstream out;
  for (size_t i = 0; i < cpus.size(); ++i) out << (i ? "," : "") << cpus[i];
  return out.str();
}

void BindCurrentThread(const std::vector<int> &cpus, int thread_index) {
#if defined(__linux__)
  if (cpus.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
  }
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    const std::string reason =
        std::error_code(errno, std::generic_category()).message();
    LOG(WARNING) << "thread pool: cannot bind thread " << thread_index
                 << " to cores " << CpuList(cpus) << ": " << reason;
  }
#else
  (void)cpus;
  (void)thread_index;
#endif
}

}  // namespace

class ThreadPool::Impl {
 public:
  Impl(int num_threads, CPUAffinityPolicy policy,
       std::chrono::microseconds spin);
  ~Impl();

  MaceStatus Init();
  void ParallelFor(int64_t begin, int64_t end, int64_t grain,
                   FunctionRef<void(int64_t, int64_t)> fn);

  int num_threads() const { return num_threads_; }
  const std::vector<int> &cpu_ids() const { return cpu_ids_; }
  void Rest() { resting_.store(true); }
  int SleepingWorkers() const;

 private:
  // Where a worker sleeps; one per worker so that a loop wakes only the
  // workers it needs.
  struct alignas(64) WorkerSlot {
    std::mutex mutex;
    std::condition_variable cv;
    std::atomic<bool> sleeping{false};
  };

  std::vector<int> WorkerCpus(int thread_index) const;
  void WorkerLoop(int thread_index, std::vector<int> cpus);
  uint64_t WaitForNewTask(WorkerSlot *slot, uint64_t seen);
  void WakeParticipants(int participants);
  void RunChunks(int thread_index);
  void RunChunk(int64_t chunk);
  bool TryEnter();
  void RunChunksOnWorker(int thread_index);
  void CloseGateAndWait();
  void Shutdown();

  template <typename Pred>
  bool SpinUntil(Pred pred) const;

  int num_threads_;
  const CPUAffinityPolicy policy_;
  const std::chrono::microseconds spin_;
  std::vector<int> cpu_ids_;
  // Spinning yields instead of pausing with more threads than cores (a
  // spinning thread takes a core from one that has work) and under a
  // hypervisor: a vCPU looping on x86 PAUSE triggers pause-loop exits,
  // with which the host gives its time to another guest, and the worker is
  // then not running when its loop comes (ResNet-50 at 2 threads on this
  // VM: 0.96, tail of the slowest processes 100 -> 70 ms).
  bool yield_when_spinning_ = false;
  // Set by Rest, cleared by ParallelFor: waiting workers sleep at once.
  std::atomic<bool> resting_{false};
  bool initialized_ = false;
  int active_workers_ = 0;
  std::vector<std::unique_ptr<WorkerSlot>> slots_;
  std::vector<std::thread> workers_;

  // The loop being run: written by the caller before it opens gate_, read
  // by the workers that got in until they leave.
  const FunctionRef<void(int64_t, int64_t)> *fn_ = nullptr;
  int64_t begin_ = 0;
  int64_t end_ = 0;
  int64_t chunk_ = 0;
  int64_t num_chunks_ = 0;
  uint64_t generation_ = 0;  // Caller-only; guarded by busy_.

  // The chunks of the loop being run, cut into one contiguous share per
  // participant: shares_[t] holds the range [front, back) of chunk indices
  // still unclaimed in thread t's share, as front << 32 | back.
  struct alignas(64) Share {
    std::atomic<uint64_t> range{0};
  };
  std::vector<Share> shares_;
  int num_shares_ = 0;

  // Separate cache lines: workers poll task_ while chunks are claimed.
  alignas(64) std::atomic<uint64_t> task_{0};
  alignas(64) std::atomic<uint64_t> gate_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> busy_{false};  // A ParallelFor owns the workers.
  std::atomic<bool> stop_{false};
  std::mutex done_mutex_;
  std::condition_variable done_cv_;
  std::mutex error_mutex_;
  std::exception_ptr worker_error_;
};

ThreadPool::Impl::Impl(int num_threads, CPUAffinityPolicy policy,
                       std::chrono::microseconds spin)
    : policy_(policy), spin_(spin), cpu_ids_(SelectCpus(policy)) {
  // One unbound thread has no workers to size, bind or spin: counting the
  // cores (a sysfs read and a syscall, tens of microseconds the first time
  // in a process) would only slow down a small model's load.
  if (num_threads == 1 && cpu_ids_.empty()) {
    num_threads_ = 1;
    return;
  }
  const int usable = cpu_ids_.empty() ? static_cast<int>(AllowedCpus().size())
                                      : static_cast<int>(cpu_ids_.size());
  num_threads_ = num_threads > 0 ? std::min(num_threads, kMaxThreads) : usable;
  if (num_threads_ <= static_cast<int>(cpu_ids_.size())) {
    cpu_ids_.resize(num_threads_);
  }
  yield_when_spinning_ = num_threads_ > usable || GetCpuFeatures().hypervisor;
}

ThreadPool::Impl::~Impl() { Shutdown(); }

// One core per thread when there are enough; otherwise every worker may
// use any chosen core. Index 0 is the calling thread, which belongs to the
// application and is not bound: cpu_ids_[0] is left free for it.
std::vector<int> ThreadPool::Impl::WorkerCpus(int thread_index) const {
  if (num_threads_ <= static_cast<int>(cpu_ids_.size())) {
    return {cpu_ids_[thread_index]};
  }
  return cpu_ids_;
}

MaceStatus ThreadPool::Impl::Init() {
  if (initialized_) return MaceStatus::MACE_SUCCESS;
  initialized_ = true;
  if (!IsKnownPolicy(policy_)) {
    num_threads_ = 1;
    return InvalidArgs("thread pool: unknown CPU affinity policy ",
                       static_cast<int>(policy_));
  }
  const int num_workers = num_threads_ - 1;
  shares_ = std::vector<Share>(num_threads_);
  slots_.reserve(num_workers);
  for (int i = 0; i < num_workers; ++i) {
    slots_.push_back(std::make_unique<WorkerSlot>());
  }
  workers_.reserve(num_workers);
  try {
    for (int i = 1; i <= num_workers; ++i) {
      workers_.emplace_back(&Impl::WorkerLoop, this, i, WorkerCpus(i));
    }
  } catch (const std::system_error &e) {
    const size_t started = workers_.size();
    Shutdown();
    num_threads_ = 1;
    return OutOfResources("thread pool: started ", started, " of ", num_workers,
                          " worker threads: ", e.what());
  }
  active_workers_ = num_workers;
  return MaceStatus::MACE_SUCCESS;
}

void ThreadPool::Impl::Shutdown() {
  stop_.store(true);
  // Under each worker's lock, so that a worker about to sleep either sees
  // stop_ or is already waiting when notified.
  for (auto &slot : slots_) {
    std::lock_guard<std::mutex> lock(slot->mutex);
    slot->cv.notify_one();
  }
  for (auto &worker : workers_) worker.join();
  workers_.clear();
  active_workers_ = 0;
}

template <typename Pred>
bool ThreadPool::Impl::SpinUntil(Pred pred) const {
  const auto deadline = std::chrono::steady_clock::now() + spin_;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    if (yield_when_spinning_) {
      std::this_thread::yield();
    } else {
      CpuRelax();
    }
  }
  return true;
}

void ThreadPool::Impl::WorkerLoop(int thread_index, std::vector<int> cpus) {
  BindCurrentThread(cpus, thread_index);
  WorkerSlot *slot = slots_[thread_index - 1].get();
  uint64_t seen = 0;
  for (;;) {
    seen = WaitForNewTask(slot, seen);
    if (stop_.load()) return;
    if (thread_index <= static_cast<int>(seen & kParticipantMask)) {
      RunChunksOnWorker(thread_index);
    }
  }
}

// Spins, then sleeps, until task_ differs from `seen` or the pool stops.
// The sleep cannot miss a wake-up: the worker sets `sleeping` then reads
// task_, the caller writes task_ then reads `sleeping` (all seq_cst), so
// at least one of them sees the other; a caller that sees `sleeping` locks
// the slot's mutex, which the worker holds until it is inside wait().
uint64_t ThreadPool::Impl::WaitForNewTask(WorkerSlot *slot, uint64_t seen) {
  uint64_t task = seen;
  auto changed = [&] {
    task = task_.load();
    return task != seen || stop_.load();
  };
  if (SpinUntil([&] { return changed() || resting_.load(); }) && changed()) {
    return task;
  }
  std::unique_lock<std::mutex> lock(slot->mutex);
  slot->sleeping.store(true);
  slot->cv.wait(lock, changed);
  slot->sleeping.store(false, std::memory_order_relaxed);
  return task;
}

int ThreadPool::Impl::SleepingWorkers() const {
  int sleeping = 0;
  for (const auto &slot : slots_) sleeping += slot->sleeping.load() ? 1 : 0;
  return sleeping;
}

void ThreadPool::Impl::WakeParticipants(int participants) {
  for (int i = 0; i < participants; ++i) {
    WorkerSlot &slot = *slots_[i];
    if (slot.sleeping.load()) {
      std::lock_guard<std::mutex> lock(slot.mutex);
      slot.cv.notify_one();
    }
  }
}

void ThreadPool::Impl::RunChunk(int64_t chunk) {
  const int64_t lo = begin_ + chunk * chunk_;
  (*fn_)(lo, lo + std::min(chunk_, end_ - lo));
}

// Thread t runs its own share first, front to back, then takes chunks from
// the back of the others' shares. Consecutive loops over the same rows give
// a thread the same part of them, so it mostly reads what it wrote into its
// own core's cache in the loop before (taking whichever chunk came next
// sent each op's rows to the other core about half of the time). A thread
// that is slowed or descheduled still does not hold the loop: the others
// finish its share from the far end.
void ThreadPool::Impl::RunChunks(int thread_index) {
  const int shares = num_shares_;
  int64_t chunk;
  if (thread_index < shares) {
    while (ClaimIndex(shares_[thread_index].range, true, &chunk)) {
      RunChunk(chunk);
    }
  }
  // Every share, its own last: a worker that came in late may have an
  // index past this loop's shares.
  for (int i = 1; i <= shares; ++i) {
    while (
        ClaimIndex(shares_[(thread_index + i) % shares].range, false, &chunk)) {
      RunChunk(chunk);
    }
  }
}

// A worker may only read the task fields from inside the gate: the caller
// closes it once every chunk is claimed and waits only for the workers
// inside, so a worker that wakes late costs the caller nothing.
bool ThreadPool::Impl::TryEnter() {
  uint64_t gate = gate_.load();
  while (gate & kGateOpen) {
    if (gate_.compare_exchange_weak(gate, gate + 1)) return true;
  }
  return false;
}

void ThreadPool::Impl::RunChunksOnWorker(int thread_index) {
  if (!TryEnter()) return;
  try {
    RunChunks(thread_index);
  } catch (...) {
    // Handed to the caller, which rethrows once every thread is done.
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!worker_error_) worker_error_ = std::current_exception();
  }
  // Same hand-off as WaitForNewTask, with the roles of waiter and waker
  // swapped: the last worker out of a closed gate wakes a sleeping caller.
  if (gate_.fetch_sub(1) == 1 && caller_sleeping_.load()) {
    std::lock_guard<std::mutex> lock(done_mutex_);
    done_cv_.notify_one();
  }
}

void ThreadPool::Impl::CloseGateAndWait() {
  if (gate_.fetch_and(~kGateOpen) == kGateOpen) return;
  auto done = [this] { return gate_.load() == 0; };
  if (SpinUntil(done)) return;
  std::unique_lock<std::mutex> lock(done_mutex_);
  caller_sleeping_.store(true);
  done_cv_.wait(lock, done);
  caller_sleeping_.store(false, std::memory_order_relaxed);
}

void ThreadPool::Impl::ParallelFor(
    int64_t begin, int64_t end, int64_t grain,
    FunctionRef<void(int64_t, int64_t)> fn) {
  if (begin >= end) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t range = end - begin;
  // A nested call, or one racing another thread's call, finds the workers
  // taken and runs alone rather than deadlocking or corrupting the task.
  if (active_workers_ == 0 || range / grain < 2 ||
      busy_.exchange(true, std::memory_order_acquire)) {
    fn(begin, end);
    return;
  }

  const int64_t max_chunks =
      std::min(range / grain, int64_t{num_threads_} * kChunksPerThread);
  fn_ = &fn;
  begin_ = begin;
  end_ = end;
  chunk_ = (range + max_chunks - 1) / max_chunks;  // >= grain.
  num_chunks_ = (range + chunk_ - 1) / chunk_;
  const int participants =
      static_cast<int>(std::min<int64_t>(num_chunks_, active_workers_ + 1)) - 1;
  num_shares_ = participants + 1;
  for (int t = 0; t < num_shares_; ++t) {
    const uint64_t front = static_cast<uint64_t>(num_chunks_ * t / num_shares_);
    const uint64_t back =
        static_cast<uint64_t>(num_chunks_ * (t + 1) / num_shares_);
    shares_[t].range.store(ClaimableRange(front, back),
                           std::memory_order_relaxed);
  }
  resting_.store(false, std::memory_order_relaxed);
  gate_.store(kGateOpen);
  ++generation_;
  task_.store((generation_ << kParticipantBits) |
              static_cast<uint64_t>(participants));
  WakeParticipants(participants);

  std::exception_ptr error;
  try {
    RunChunks(0);
  } catch (...) {
    error = std::current_exception();
  }
  // Every chunk is claimed now (unless fn threw here, which abandons the
  // rest); workers inside may still be running theirs.
  CloseGateAndWait();
  std::exception_ptr worker_error = std::exchange(worker_error_, nullptr);
  busy_.store(false, std::memory_order_release);
  if (!error) error = std::move(worker_error);
  if (error) std::rethrow_exception(error);
}

ThreadPool::ThreadPool(int num_threads, CPUAffinityPolicy policy,
                       std::chrono::microseconds spin)
    : impl_(std::make_unique<Impl>(num_threads, policy, spin)) {}

ThreadPool::~ThreadPool() = default;

MaceStatus ThreadPool::Init() { return impl_->Init(); }

int ThreadPool::num_threads() const { return impl_->num_threads(); }

void ThreadPool::Rest() { impl_->Rest(); }

int ThreadPool::SleepingWorkers() const { return impl_->SleepingWorkers(); }

void ThreadPool::ParallelFor(int64_t begin, int64_t end, int64_t grain,
                             FunctionRef<void(int64_t, int64_t)> fn) {
  impl_->ParallelFor(begin, end, grain, fn);
}

const std::vector<int> &ThreadPool::cpu_ids() const { return impl_->cpu_ids(); }

}  // namespace mace
