// Matrix-vector product for layers run on one sample (FullyConnected with
// batch 1): y[o] = dot(w[o, :], x) + bias[o], w stored [n, k] as the model
// gives it. The packed SGEMM would fill one row of its 6- to 8-row tiles and
// needs a packed copy of w; here every weight is read once, in place, which
// is all a batch-1 layer can do (it is bound by memory bandwidth).
// Vectorised along k per ISA (see activation.h for the ISAs), four rows at
// a time sharing each load of x (one on the generic path).

#ifndef MACE_KERNELS_GEMV_H_
#define MACE_KERNELS_GEMV_H_

#include <cstdint>

#include "mace/core/thread_pool.h"
#include "mace/kernels/activation.h"

namespace mace {
namespace kernels {

// Rows [0, n) of y; bias may be null, pool too (then one thread). Each y[o]
// is summed by one thread in an order fixed per ISA, so the result does not
// depend on the thread count. Allocates nothing.
void Gemv(const float *w, const float *x, const float *bias, int64_t n,
          int64_t k, float *y, ThreadPool *pool);
void Gemv(VectorIsa isa, const float *w, const float *x, const float *bias,
          int64_t n, int64_t k, float *y, ThreadPool *pool);

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_GEMV_H_
