// The softmax driver: picks the kernels of the ISA and shares the lines
// among the threads, whole rows for contiguous lines, blocks of one vector
// of neighbouring lines otherwise.

#include "mace/kernels/softmax.h"

#include "mace/kernels/softmax_impl.h"

namespace mace {
namespace kernels {
namespace {

// About 4K values per task: enough work to pay for the hand-off.
int64_t GrainOf(int64_t values_per_item) {
  return MaxIndex(1, 4096 / MaxIndex(1, values_per_item));
}

}  // namespace

void Softmax(bool log, const SoftmaxShape &shape, const float *x, float *y,
             ThreadPool *pool) {
  Softmax(SelectedVectorIsa(), log, shape, x, y, pool);
}

void Softmax(VectorIsa isa, bool log, const SoftmaxShape &s, const float *x,
             float *y, ThreadPool *pool) {
  if (s.outer <= 0 || s.length <= 0 || s.inner <= 0) return;
  const SoftmaxKernels &kernels = KernelsFor<SoftmaxKernels>(isa);
  const int64_t block_size = s.length * s.inner;
  if (s.inner == 1) {
    auto run = [&](int64_t begin, int64_t end) {
      kernels.rows(log, s.length, x + begin * s.length, y + begin * s.length,
                   end - begin);
    };
    ParallelForOrInline(pool, 0, s.outer, GrainOf(s.length), run);
    return;
  }
  const int64_t width = kernels.width;
  const int64_t blocks = (s.inner + width - 1) / width;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t first_line = (task % blocks) * width;
      const int64_t offset = (task / blocks) * block_size + first_line;
      kernels.lanes(log, s.length, s.inner, x + offset, y + offset,
                    static_cast<int>(MinIndex(width, s.inner - first_line)));
    }
  };
  ParallelForOrInline(pool, 0, s.outer * blocks, GrainOf(s.length * width),
                      run);
}

}  // namespace kernels
}  // namespace mace
