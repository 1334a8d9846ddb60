// BinaryChannels: the ISA choice (the activation kernels', SelectedVectorIsa)
// and the split among threads.

#include "mace/kernels/binary_channels.h"

#include <algorithm>

#include "mace/kernels/binary_channels_impl.h"

namespace mace {
namespace kernels {
namespace {

// Values per chunk of the work shared among threads.
constexpr int64_t kChunkValues = 4096;

}  // namespace

void BinaryChannels(BinaryKind kind, const float *a, const float *b,
                    int64_t period, bool repeated_first, float *y, int64_t n,
                    ThreadPool *pool) {
  BinaryChannels(SelectedVectorIsa(), kind, a, b, period, repeated_first, y, n,
                 pool);
}

void BinaryChannels(VectorIsa isa, BinaryKind kind, const float *a,
                    const float *b, int64_t period, bool repeated_first,
                    float *y, int64_t n, ThreadPool *pool) {
  if (n <= 0 || period <= 0) return;
  const BinaryRowsFn rows_fn = KernelsFor<BinaryChannelsKernels>(isa).rows;
  if (period == n) {
    // One shape: chunks of values, each a row of its own.
    auto run = [&](int64_t begin, int64_t end) {
      rows_fn(kind, a + begin, b + begin, end - begin, repeated_first,
              y + begin, 1);
    };
    ParallelForOrInline(pool, 0, n, kChunkValues, run);
    return;
  }
  // Chunks of whole rows, so that every chunk starts at channel 0.
  const int64_t rows = n / period;
  auto run = [&](int64_t begin, int64_t end) {
    rows_fn(kind, a + begin * period, b, period, repeated_first,
            y + begin * period, end - begin);
  };
  ParallelForOrInline(pool, 0, rows,
                      std::max<int64_t>(1, kChunkValues / period), run);
}

}  // namespace kernels
}  // namespace mace
