// The pooling driver: picks the row kernel of the ISA and shares the output
// rows (of every image) among the threads.

#include "mace/kernels/pooling.h"

#include "mace/kernels/pooling_impl.h"

namespace mace {
namespace kernels {
namespace {}  // namespace

void Pool2d(PoolKind kind, const PoolShape &shape, const float *x,
            const int64_t *row_counts, const int64_t *col_counts, float *y,
            ThreadPool *pool) {
  Pool2d(SelectedVectorIsa(), kind, shape, x, row_counts, col_counts, y, pool);
}

void Pool2d(VectorIsa isa, PoolKind kind, const PoolShape &s, const float *x,
            const int64_t *row_counts, const int64_t *col_counts, float *y,
            ThreadPool *pool) {
  const PoolingKernels &kernels = KernelsFor<PoolingKernels>(isa);
  const PoolRowFn row_fn =
      kind == PoolKind::kMax ? kernels.max_row : kernels.avg_row;
  const int64_t image_size = s.in_h * s.in_w * s.channels;
  const int64_t row_size = s.out_w * s.channels;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / s.out_h;
      row_fn(s, x + n * image_size, row % s.out_h, row_counts, col_counts,
             y + row * row_size);
    }
  };
  ParallelForOrInline(pool, 0, s.batch * s.out_h, 1, run);
}

}  // namespace kernels
}  // namespace mace
