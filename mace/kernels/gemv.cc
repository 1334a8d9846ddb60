#include "mace/kernels/gemv.h"

#include <algorithm>

namespace mace {
namespace kernels {
namespace {

// Eight independent partial sums: the compiler maps them to vector lanes
// without reassociating a single sum (which it may not do for floats).
constexpr int kLanes = 8;

float Dot(const float *w, const float *x, int64_t k) {
  float lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= k; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lanes[j] += w[i + j] * x[i + j];
  }
  float sum = 0.0f;
  for (; i < k; ++i) sum += w[i] * x[i];
  for (int j = 0; j < kLanes; ++j) sum += lanes[j];
  return sum;
}

}  // namespace

void Gemv(const float *w, const float *x, const float *bias, int64_t n,
          int64_t k, float *y, ThreadPool *pool) {
  // About 64 KiB of weights per task: enough to amortise a wake-up.
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(k, 1));
  pool->ParallelFor(0, n, grain, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      y[o] = Dot(w + o * k, x, k) + (bias != nullptr ? bias[o] : 0.0f);
    }
  });
}

}  // namespace kernels
}  // namespace mace
