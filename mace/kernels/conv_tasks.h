// Internal to the convolution kernels: how they share a Run among threads
// when each thread needs its own scratch (an im2col tile, a block of
// Winograd-transformed tiles).

#ifndef MACE_KERNELS_CONV_TASKS_H_
#define MACE_KERNELS_CONV_TASKS_H_

#include <algorithm>
#include <cstdint>

#include "mace/core/thread_pool.h"

namespace mace {
namespace kernels {

// Cuts [0, tasks) into `slots` contiguous ranges and calls
// fn(slot, begin, end) for each non-empty one, the slots spread over the
// pool's threads. A slot runs on one thread at a time, so it may own a
// scratch area; contiguous ranges let a slot reuse work between
// neighbouring tasks (the same input tile for two column blocks). The
// result does not depend on how many threads run the slots.
template <typename Fn>
void ForEachSlotRange(ThreadPool *pool, int slots, int64_t tasks, Fn &&fn) {
  slots =
      static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(slots, tasks)));
  auto run_slots = [&](int64_t slot_begin, int64_t slot_end) {
    for (int64_t s = slot_begin; s < slot_end; ++s) {
      const int64_t begin = tasks * s / slots;
      const int64_t end = tasks * (s + 1) / slots;
      if (begin < end) fn(static_cast<int>(s), begin, end);
    }
  };
  if (pool != nullptr && slots > 1) {
    pool->ParallelFor(0, slots, 1, run_slots);
  } else {
    run_slots(0, slots);
  }
}

// Splits n columns into blocks of a multiple of `panel` columns so that
// `row_tasks` x blocks gives every one of `threads` threads about four
// tasks (ForEachSlotRange's static split then idles a thread for at most
// about a quarter of the time); one block when rows alone suffice.
// Returns the block width.
inline int64_t ColumnBlockWidth(int64_t n, int64_t panel, int64_t row_tasks,
                                int threads) {
  const int64_t panels = (n + panel - 1) / panel;
  const int64_t wanted = 4 * static_cast<int64_t>(threads);
  if (threads <= 1 || row_tasks >= wanted) return panels * panel;
  const int64_t blocks = std::min(panels, (wanted + row_tasks - 1) / row_tasks);
  return ((panels + blocks - 1) / blocks) * panel;
}

// How a convolution's Run shares its tasks: `slots` scratch areas (the
// pool's threads, at most the `max_slots` its scratch was sized for) and
// the output channels cut into col_blocks blocks of col_block columns
// (ColumnBlockWidth over `row_tasks` rows of tasks).
struct ConvTaskGrid {
  int slots;
  int64_t col_block;
  int64_t col_blocks;
};

inline ConvTaskGrid PlanConvTasks(ThreadPool *pool, int max_slots, int64_t n,
                                  int64_t panel, int64_t row_tasks) {
  const int threads = pool != nullptr ? pool->num_threads() : 1;
  ConvTaskGrid grid;
  grid.slots = std::min(threads, max_slots);
  grid.col_block = ColumnBlockWidth(n, panel, row_tasks, grid.slots);
  grid.col_blocks = (n + grid.col_block - 1) / grid.col_block;
  return grid;
}

// Rows per block when `count` rows (pixels, Winograd tiles) are cut into
// the fewest blocks of at most `max_rows`: the same number of blocks, made
// even. Cutting at max_rows alone can leave a sliver (13x13's 49 Winograd
// tiles went as 48 + 1), and ForEachSlotRange then gives one thread nearly
// all the work. The count of blocks is kept, not raised to the threads':
// each block streams the whole filter, which a 7x7 layer's 16 MB of
// Winograd filter cannot afford twice.
inline int64_t EvenBlockRows(int64_t count, int64_t max_rows) {
  if (count <= 0 || max_rows <= 0) return std::max<int64_t>(max_rows, 1);
  const int64_t blocks = (count + max_rows - 1) / max_rows;
  return (count + blocks - 1) / blocks;
}

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_CONV_TASKS_H_
