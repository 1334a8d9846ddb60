// The matrix-vector driver: picks the kernel of the ISA and shares the
// output rows among the threads in whole blocks of kGemvRowBlock rows.

#include "mace/kernels/gemv.h"

#include <algorithm>

#include "mace/kernels/gemv_impl.h"

namespace mace {
namespace kernels {
namespace {}  // namespace

void Gemv(const float *w, const float *x, const float *bias, int64_t n,
          int64_t k, float *y, ThreadPool *pool) {
  Gemv(SelectedVectorIsa(), w, x, bias, n, k, y, pool);
}

void Gemv(VectorIsa isa, const float *w, const float *x, const float *bias,
          int64_t n, int64_t k, float *y, ThreadPool *pool) {
  if (n <= 0) return;
  const GemvRowsFn rows = KernelsFor<GemvKernels>(isa).rows;
  const int64_t blocks = (n + kGemvRowBlock - 1) / kGemvRowBlock;
  auto run = [&](int64_t block_begin, int64_t block_end) {
    rows(w, x, bias, k, block_begin * kGemvRowBlock,
         std::min(block_end * kGemvRowBlock, n), y);
  };
  // About 64 KiB of weights per task: enough to amortise a wake-up.
  const int64_t grain =
      std::max<int64_t>(1, 16384 / std::max<int64_t>(kGemvRowBlock * k, 1));
  ParallelForOrInline(pool, 0, blocks, grain, run);
}

}  // namespace kernels
}  // namespace mace
