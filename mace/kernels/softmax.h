// Softmax and log-softmax along one axis, vectorised (see activation.h for
// the ISAs). The data is `outer` blocks of [length, inner] floats and each
// line (length values `inner` apart) is normalised on its own:
//   softmax:     y = exp(x - max) / sum(exp(x - max))
//   log-softmax: y = (x - max) - log(sum(exp(x - max)))
// Subtracting the line's max keeps exp from overflowing on large inputs; a
// -inf input gives 0 (log-softmax: -inf) as long as the line has a finite
// value. A NaN, +inf or a line of -inf gives NaN throughout the line.
//
// inner == 1 (the axis is the last one): each line is contiguous and is
// vectorised along its length. inner > 1: up to kWidth neighbouring lines
// are processed at once, one per lane. exp is the Cephes polynomial on the
// SIMD ISAs (~2 ulp) and the C library's on generic; the sums run in lanes,
// so the ISAs agree to a few ulp, not bit for bit.

#ifndef MACE_KERNELS_SOFTMAX_H_
#define MACE_KERNELS_SOFTMAX_H_

#include <cstdint>

#include "mace/core/thread_pool.h"
#include "mace/kernels/activation.h"

namespace mace {
namespace kernels {

struct SoftmaxShape {
  int64_t outer = 1;   // product of the dims before the axis
  int64_t length = 0;  // the axis' dim
  int64_t inner = 1;   // product of the dims after the axis
};

// y may equal x (each value is read before its output is written). Lines
// are shared among the threads of pool (may be null); allocates nothing.
void Softmax(bool log, const SoftmaxShape &shape, const float *x, float *y,
             ThreadPool *pool);
void Softmax(VectorIsa isa, bool log, const SoftmaxShape &shape, const float *x,
             float *y, ThreadPool *pool);

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_SOFTMAX_H_
