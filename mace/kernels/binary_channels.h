// Vector kernels of the float binary Eltwise ops on the two broadcast
// patterns that take nearly all of their time in CNNs: operands of one
// shape (a residual addition), and an operand repeated for every pixel of
// the other (a squeeze-and-excitation gate, a per-channel scale or shift).
// Other patterns stay on the op's broadcast loops.

#ifndef MACE_KERNELS_BINARY_CHANNELS_H_
#define MACE_KERNELS_BINARY_CHANNELS_H_

#include <cstdint>

#include "mace/core/thread_pool.h"
#include "mace/kernels/activation.h"

namespace mace {
namespace kernels {

enum class BinaryKind { kSum, kSub, kProd, kDiv };

// For i < n, with r = b[i % period]: y[i] = a[i] op r, or r op a[i] when
// `repeated_first`. period == n: operands of one shape; period = channels:
// b holds one value per channel of a channel-last a. n a multiple of
// period; y may equal a. Exact float arithmetic, as the scalar loops: the
// results are the same bit for bit. Parallel over chunks (pool may be
// null).
void BinaryChannels(BinaryKind kind, const float *a, const float *b,
                    int64_t period, bool repeated_first, float *y, int64_t n,
                    ThreadPool *pool);
void BinaryChannels(VectorIsa isa, BinaryKind kind, const float *a,
                    const float *b, int64_t period, bool repeated_first,
                    float *y, int64_t n, ThreadPool *pool);

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_BINARY_CHANNELS_H_
