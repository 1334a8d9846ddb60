// Max and average pooling on NHWC data, vectorised along channels (see
// activation.h for the ISAs): any window, stride, dilation and padding;
// global pooling is the window covering the whole image. Each output row's
// channels are computed by one thread, or by blocks of channels on several
// when the rows are fewer than the threads (global pooling), each in the
// reference op's order of operations (mace/ops/pooling.cc), so the results
// equal the reference's bit for bit whatever the thread count.

#ifndef MACE_KERNELS_POOLING_H_
#define MACE_KERNELS_POOLING_H_

#include <cstdint>

#include "mace/core/thread_pool.h"
#include "mace/kernels/activation.h"

namespace mace {
namespace kernels {

enum class PoolKind { kMax, kAvg };

struct PoolShape {
  int64_t batch = 0, in_h = 0, in_w = 0, channels = 0;
  int64_t out_h = 0, out_w = 0;
  int64_t kernel_h = 0, kernel_w = 0;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  // Output (oh, ow) reads rows oh * stride_h - pad_top + kh * dilation_h
  // and the like for columns; cells outside the input are skipped.
  int64_t pad_top = 0, pad_left = 0;
};

// Max: the largest input cell of each window (-inf for none). Average: the
// sum of the window's input cells times 1 / (row_counts[oh] *
// col_counts[ow]), the divisors the op's count_include_pad rule gives
// (unused for max, may be null then). Allocates nothing.
void Pool2d(PoolKind kind, const PoolShape &shape, const float *x,
            const int64_t *row_counts, const int64_t *col_counts, float *y,
            ThreadPool *pool);
void Pool2d(VectorIsa isa, PoolKind kind, const PoolShape &shape,
            const float *x, const int64_t *row_counts,
            const int64_t *col_counts, float *y, ThreadPool *pool);

// Channels a task of Pool2d covers for `rows` output rows (batch x out_h)
// on `threads` threads with vectors of `lanes` floats: all of them when
// the rows give each thread about four tasks, else blocks of whole groups
// of four vectors (or of single vectors, when the groups are fewer than
// the threads) that come closer to it.
int64_t PoolChannelBlock(int64_t rows, int64_t channels, int lanes,
                         int threads);

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_POOLING_H_
