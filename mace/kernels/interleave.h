// Layout changes that move floats bit for bit: channel planes to
// channels-last (an NCHW input of three channels, an RGB image, into the
// NHWC that every op reads), and the transposes of weight packing.

#ifndef MACE_KERNELS_INTERLEAVE_H_
#define MACE_KERNELS_INTERLEAVE_H_

#include <cstdint>

#include "mace/kernels/activation.h"

namespace mace {
namespace kernels {

// dst[3 * r + j] = src[j * plane + r] for r < rows and j < 3. AVX-512
// permutes where the CPU has them (SelectedVectorIsa), else SSE2 on x86-64
// and NEON on aarch64 (both always present there), a plain loop
// elsewhere; values are moved bit for bit.
void InterleaveThreePlanes(const float *src, int64_t plane, int64_t rows,
                           float *dst);
// As above with the kernel of `isa` (tests; the baseline one where this
// build or CPU has none of its own).
void InterleaveThreePlanes(VectorIsa isa, const float *src, int64_t plane,
                           int64_t rows, float *dst);

// dst[r * dst_stride + j] = src[j * src_stride + r] for r < rows and
// j < cols: `cols` source rows become columns. In 4 x 4 blocks of SSE2 or
// NEON registers where present, a plain loop elsewhere; the rows are taken
// in runs that keep the destination block in L1.
void TransposeRows(const float *src, int64_t src_stride, int64_t rows,
                   int64_t cols, float *dst, int64_t dst_stride);

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_INTERLEAVE_H_
