// Channel planes to channels-last: the layout change of an NCHW input of
// three channels (an RGB image) into the NHWC that every op reads.

#ifndef MACE_KERNELS_INTERLEAVE_H_
#define MACE_KERNELS_INTERLEAVE_H_

#include <cstdint>

namespace mace {
namespace kernels {

// dst[3 * r + j] = src[j * plane + r] for r < rows and j < 3. SSE2 on
// x86-64 and NEON on aarch64 (both always present there), a plain loop
// elsewhere; values are moved bit for bit.
void InterleaveThreePlanes(const float *src, int64_t plane, int64_t rows,
                           float *dst);

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_INTERLEAVE_H_
