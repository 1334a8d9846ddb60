// Bilinear and nearest-neighbour resizing of NHWC data, vectorised along
// channels (see activation.h for the ISAs). The coordinate rules (which
// input rows and columns an output pixel reads, and their weights) are the
// op's (mace/ops/resize.cc); the kernels take them precomputed per output
// row and column. Bilinear keeps TensorFlow's order of operations:
//   top    = x[r0, c0] + (x[r0, c1] - x[r0, c0]) * col_lerp
//   bottom = x[r1, c0] + (x[r1, c1] - x[r1, c0]) * col_lerp
//   y      = top + (bottom - top) * row_lerp
// with a fused multiply-add where the ISA has one (so the ISAs agree to an
// ulp or so, not bit for bit; thread counts never change a bit). Nearest
// copies x[r0, c0].

#ifndef MACE_KERNELS_RESIZE_H_
#define MACE_KERNELS_RESIZE_H_

#include <cstdint>

#include "mace/core/thread_pool.h"
#include "mace/kernels/activation.h"

namespace mace {
namespace kernels {

enum class ResizeKind { kBilinear, kNearest };

struct ResizeShape {
  int64_t batch = 0, in_h = 0, in_w = 0, channels = 0;
  int64_t out_h = 0, out_w = 0;
};

// Where the outputs along one axis read: output o reads input index
// lower[o] and, for bilinear, upper[o] with weight lerp[o] (lower gets
// 1 - lerp). Indices must lie in [0, in); nearest needs lower only.
struct ResizeAxis {
  const int64_t *lower = nullptr;
  const int64_t *upper = nullptr;
  const float *lerp = nullptr;
};

// x is [batch, in_h, in_w, channels], y [batch, out_h, out_w, channels];
// rows has out_h entries, cols out_w. Output rows are shared among the
// threads of pool (may be null). Bilinear allocates two rows of
// [out_w, channels] per task for input rows interpolated along x.
void Resize(ResizeKind kind, const ResizeShape &shape, const ResizeAxis &rows,
            const ResizeAxis &cols, const float *x, float *y, ThreadPool *pool);
void Resize(VectorIsa isa, ResizeKind kind, const ResizeShape &shape,
            const ResizeAxis &rows, const ResizeAxis &cols, const float *x,
            float *y, ThreadPool *pool);

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_RESIZE_H_
