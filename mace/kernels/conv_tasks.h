// Internal to the convolution kernels: how they share a Run among threads
// when each thread needs its own scratch (an im2col tile, a block of
// Winograd-transformed tiles). Pooling cuts its channels by
// ColumnBlockWidth too.

#ifndef MACE_KERNELS_CONV_TASKS_H_
#define MACE_KERNELS_CONV_TASKS_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "mace/core/thread_pool.h"

namespace mace {
namespace kernels {

// Hands out `count` scratch areas to the chunks that run at the same time:
// a chunk claims a free one for as long as it runs. Each thread runs one
// chunk at a time, so with count >= the pool's threads a claim never waits.
// Each area also records what it holds (held(slot), -1 at first), for the
// next chunk that claims it; only the claiming thread touches it, and the
// claim acquires what the releasing thread wrote.
class ScratchSlots {
 public:
  explicit ScratchSlots(int count) : slots_(count) {}

  int Claim() {
    for (;;) {
      for (size_t slot = 0; slot < slots_.size(); ++slot) {
        std::atomic<bool> &busy = slots_[slot].busy;
        bool expected = false;
        if (!busy.load(std::memory_order_relaxed) &&
            busy.compare_exchange_strong(expected, true,
                                         std::memory_order_acquire)) {
          return static_cast<int>(slot);
        }
      }
      std::this_thread::yield();
    }
  }

  void Release(int slot) {
    slots_[slot].busy.store(false, std::memory_order_release);
  }

  int64_t &held(int slot) { return slots_[slot].held; }

 private:
  struct Slot {
    std::atomic<bool> busy{false};
    int64_t held = -1;
  };
  std::vector<Slot> slots_;
};

// Calls fn(slot, held, begin, end) over contiguous ranges covering
// [0, tasks), each range on one thread with scratch area `slot` (< slots)
// to itself for the call. `held` is what that area holds, as the last
// range on the slot left it (-1 at first): a range may skip work an earlier
// one on the same slot did (the same input tile for two column blocks,
// whose tasks often come one chunk each). The ranges are the pool's
// chunks: each thread starts with its own share of them and then helps
// with the others', so a vCPU that is slowed or descheduled does not hold
// the op while the other thread idles, as fixed halves did. The result
// does not depend on how the tasks are cut or which threads run them.
template <typename Fn>
void ForEachSlotRange(ThreadPool *pool, int slots, int64_t tasks, Fn &&fn) {
  if (tasks <= 0) return;
  if (pool == nullptr || slots <= 1 || tasks == 1) {
    int64_t held = -1;
    fn(0, held, int64_t{0}, tasks);
    return;
  }
  ScratchSlots scratch(slots);
  pool->ParallelFor(0, tasks, 1, [&](int64_t begin, int64_t end) {
    const int slot = scratch.Claim();
    struct Release {
      ScratchSlots *slots;
      int slot;
      ~Release() { slots->Release(slot); }
    } release{&scratch, slot};
    fn(slot, scratch.held(slot), begin, end);
  });
}

// Splits n columns into blocks of a multiple of `panel` columns so that
// `row_tasks` x blocks gives every one of `threads` threads about four
// tasks to share; one block when rows alone suffice.
// Returns the block width.
inline int64_t ColumnBlockWidth(int64_t n, int64_t panel, int64_t row_tasks,
                                int threads) {
  const int64_t panels = (n + panel - 1) / panel;
  const int64_t wanted = 4 * static_cast<int64_t>(threads);
  if (threads <= 1 || row_tasks >= wanted) return panels * panel;
  const int64_t blocks = std::min(panels, (wanted + row_tasks - 1) / row_tasks);
  return ((panels + blocks - 1) / blocks) * panel;
}

// A packed matrix up to this size is read whole by every thread from its
// own L2, so blocks of rows multiplying it are cut to give each thread
// rows of its own (ThreadRowBlocks) rather than a share of the output
// channels of every row. Depthwise convolutions and pooling split by rows:
// a split by channels had each thread read half of the next op's input
// from the other core's cache (MobileNet-v2's 14x14 depthwise ran slower
// on 2 threads than on 1 after its 64->384 expansion, one tile of 196
// pixels cut into channel blocks), and Winograd transformed the same input
// tiles on every thread. On the lent 16-core machine limits of 1-8 MiB
// measured the same as 512 KiB for im2col, and for Winograd F(2,3) every
// limit from 128 KiB to 4 MiB a matrix (2-64 MiB of filter), all ahead of
// none and of 32 KiB.
constexpr int64_t kPixelSplitMatrixBytes = 512 * 1024;

// How a convolution's Run shares its tasks: `slots` scratch areas (the
// pool's threads, at most the `max_slots` its scratch was sized for) and
// the output channels cut into col_blocks blocks of col_block columns
// (ColumnBlockWidth over `row_tasks` rows of tasks). Task t is row task
// RowTask(t) of column block ColBlock(t): by rows first (each column block
// of a row task, then the next row task), or, with columns_first, by
// column blocks first, so that each thread's share of the tasks is whole
// column blocks (SplitColumnsFirst).
struct ConvTaskGrid {
  int slots;
  int64_t col_block;
  int64_t col_blocks;
  int64_t row_tasks;
  bool columns_first = false;

  int64_t tasks() const { return row_tasks * col_blocks; }
  int64_t RowTask(int64_t task) const {
    return columns_first ? task % row_tasks : task / col_blocks;
  }
  int64_t ColBlock(int64_t task) const {
    return columns_first ? task / row_tasks : task % col_blocks;
  }
};

// A packed matrix larger than kPixelSplitMatrixBytes (above) does not stay
// in L2 from one block of rows to the next: rows first, each thread reads
// its share of the input once and the whole matrix about twice (counted
// so), columns first the whole input and its share of the matrix. Columns
// first when that reads less: input (T - 1) / T <= (2 - 1 / T) matrix for
// T threads (ResNet-50's stride-2 3x3 filters, 0.6-9.4 MB, against inputs
// of 0.4-1.6 MB). In-process A/B on 2 threads: its stride-2 3x3 layers on
// 56x56 and 28x28 0.92-0.93 of their time, all its stride-2 layers
// together 0.94-0.99, the whole model within noise.
inline bool SplitColumnsFirst(int64_t input_bytes, int64_t matrix_bytes,
                              int threads) {
  if (threads <= 1 || matrix_bytes <= kPixelSplitMatrixBytes) return false;
  return input_bytes * (threads - 1) <= (2 * threads - 1) * matrix_bytes;
}

// The grid for a convolution whose tasks multiply a packed matrix of
// `matrix_bytes` (0: rows first, as before) by an input of `input_bytes`.
inline ConvTaskGrid PlanConvTasks(ThreadPool *pool, int max_slots, int64_t n,
                                  int64_t panel, int64_t row_tasks,
                                  int64_t input_bytes = 0,
                                  int64_t matrix_bytes = 0) {
  const int threads = pool != nullptr ? pool->num_threads() : 1;
  ConvTaskGrid grid;
  grid.slots = std::min(threads, max_slots);
  grid.row_tasks = row_tasks;
  grid.col_block = ColumnBlockWidth(n, panel, row_tasks, grid.slots);
  grid.col_blocks = (n + grid.col_block - 1) / grid.col_block;
  const int64_t panels = (n + panel - 1) / panel;
  if (SplitColumnsFirst(input_bytes, matrix_bytes, grid.slots) &&
      panels >= grid.slots) {
    // A multiple of the slots' count of blocks, so that the threads'
    // equal shares of the tasks are whole blocks.
    const int64_t blocks = std::min(
        panels,
        (std::max<int64_t>(grid.col_blocks, grid.slots) + grid.slots - 1) /
            grid.slots * grid.slots);
    grid.col_block = (panels + blocks - 1) / blocks * panel;
    grid.col_blocks = (n + grid.col_block - 1) / grid.col_block;
    grid.columns_first = true;
  }
  return grid;
}

// `count` rows (output pixels, Winograd tiles) cut into the fewest blocks
// of about `max_rows`, the units that threads take with a scratch slot
// each. The cut keeps the count of blocks: each block streams the whole
// filter, which a 7x7 layer's 16 MB of Winograd filter cannot afford
// twice. Cutting at max_rows alone left slivers (13x13's 49 Winograd tiles
// went as 48 + 1, one thread doing nearly all the work), and even blocks
// of a count the micro-kernel's rows (`align`) do not divide end in a
// partial tile (196 pixels as 4 x 49, each block ending in a one-row pass
// over the filter); blocks of even rows rounded up to `align` left the
// last short instead (196 as 54 + 54 + 54 + 34: on 2 threads, the one with
// the first two blocks did 1.23x the other's rows). So the rows go in
// units of align rows (the last maybe partial), shared out evenly: blocks
// differ by at most one unit (196 as 48 + 48 + 48 + 52), and only the
// last ends in a partial tile.
class RowBlocks {
 public:
  RowBlocks() = default;

  // The fewest blocks of at most about max_rows rows.
  static RowBlocks AtMost(int64_t count, int64_t max_rows, int64_t align) {
    const int64_t most = std::max<int64_t>(max_rows, 1);
    return RowBlocks(count, (std::max<int64_t>(count, 0) + most - 1) / most,
                     align);
  }
  // `blocks` blocks, fewer when count has fewer units.
  static RowBlocks Count(int64_t count, int64_t blocks, int64_t align) {
    return RowBlocks(count, blocks, align);
  }

  int64_t blocks() const { return blocks_; }
  // The first row of `block`; count() for block == blocks().
  int64_t Begin(int64_t block) const {
    if (block >= blocks_) return count_;
    return std::min(count_, block * units_ / blocks_ * align_);
  }
  int64_t Rows(int64_t block) const { return Begin(block + 1) - Begin(block); }
  // The rows of the largest block: what one slot's scratch must hold.
  int64_t max_rows() const { return max_rows_; }
  int64_t count() const { return count_; }

 private:
  RowBlocks(int64_t count, int64_t blocks, int64_t align)
      : count_(std::max<int64_t>(count, 0)),
        align_(std::max<int64_t>(align, 1)),
        units_((count_ + align_ - 1) / align_),
        blocks_(std::clamp<int64_t>(blocks, 1, std::max<int64_t>(units_, 1))) {
    for (int64_t block = 0; block < blocks_; ++block) {
      max_rows_ = std::max(max_rows_, Rows(block));
    }
  }

  int64_t count_ = 0;
  int64_t align_ = 1;
  int64_t units_ = 0;  // of align_ rows, the last maybe partial
  int64_t blocks_ = 1;
  int64_t max_rows_ = 0;
};

// RowBlocks::AtMost(count, max_rows, align), raised to a multiple of
// `slots` blocks when slots threads share them and each block multiplies a
// packed matrix of `matrix_bytes` <= kPixelSplitMatrixBytes (streaming it
// once more per block costs little): Inception's 96-channel 3x3 on 35x35
// went as 3 blocks of Winograd tiles on 2 threads, one thread doing 1.2x
// the other's tiles, and ran 1.06x slower than in 4 (in-process A/B).
inline RowBlocks ThreadRowBlocks(int64_t count, int64_t max_rows, int64_t align,
                                 int slots, int64_t matrix_bytes) {
  const RowBlocks blocks = RowBlocks::AtMost(count, max_rows, align);
  if (slots <= 1 || matrix_bytes > kPixelSplitMatrixBytes) return blocks;
  const int64_t rounded = (blocks.blocks() + slots - 1) / slots * slots;
  return RowBlocks::Count(count, rounded, align);
}

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_CONV_TASKS_H_
