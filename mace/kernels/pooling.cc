// The pooling driver: picks the row kernel of the ISA and shares the output
// rows (of every image) among the threads, and the channels too when the
// rows are too few to share (global pooling has one).

#include "mace/kernels/pooling.h"

#include <algorithm>

#include "mace/kernels/conv_tasks.h"
#include "mace/kernels/pooling_impl.h"

namespace mace {
namespace kernels {

void Pool2d(PoolKind kind, const PoolShape &shape, const float *x,
            const int64_t *row_counts, const int64_t *col_counts, float *y,
            ThreadPool *pool) {
  Pool2d(SelectedVectorIsa(), kind, shape, x, row_counts, col_counts, y, pool);
}

int64_t PoolChannelBlock(int64_t rows, int64_t channels, int lanes,
                         int threads) {
  const int64_t vectors = std::max<int64_t>(1, (channels + lanes - 1) / lanes);
  const int64_t wanted = 4 * static_cast<int64_t>(threads);
  if (threads <= 1 || rows >= wanted) return vectors * lanes;
  // The row kernel makes one pass over the window's pixels for each group
  // of four vectors and for each vector left: blocks of whole groups when
  // there are groups enough for the threads (MobileNet-v3's 72 channels
  // on AVX-512 went as five one-vector blocks, three passes on one
  // thread where one thread had made two), else of single vectors.
  const int64_t groups = (vectors + 3) / 4;
  const int64_t unit = groups * rows >= threads ? 4 : 1;
  return ColumnBlockWidth(vectors * lanes, unit * lanes, rows, threads);
}

void Pool2d(VectorIsa isa, PoolKind kind, const PoolShape &s, const float *x,
            const int64_t *row_counts, const int64_t *col_counts, float *y,
            ThreadPool *pool) {
  const PoolingKernels &kernels = KernelsFor<PoolingKernels>(isa);
  const PoolRowFn row_fn =
      kind == PoolKind::kMax ? kernels.max_row : kernels.avg_row;
  const int64_t image_size = s.in_h * s.in_w * s.channels;
  const int64_t row_size = s.out_w * s.channels;
  const int64_t rows = s.batch * s.out_h;
  const int64_t block =
      PoolChannelBlock(rows, s.channels, kernels.lanes,
                       pool != nullptr ? pool->num_threads() : 1);
  const int64_t blocks = (s.channels + block - 1) / block;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t row = task / blocks;
      const int64_t c_begin = task % blocks * block;
      const int64_t n = row / s.out_h;
      row_fn(s, x + n * image_size, row % s.out_h, c_begin,
             std::min(c_begin + block, s.channels), row_counts, col_counts,
             y + row * row_size);
    }
  };
  ParallelForOrInline(pool, 0, rows * blocks, 1, run);
}

}  // namespace kernels
}  // namespace mace
