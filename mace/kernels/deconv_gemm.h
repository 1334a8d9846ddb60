// Transposed convolution (Deconv2D, one group) as a packed SGEMM and a
// scatter ("col2im"), NHWC; constant weights are packed once, weights fed
// at run time before each run:
//   cols[p][kh][kw][co] = sum_ci x[p][ci] * w[co][kh][kw][ci]   (GEMM)
//   y[oh][ow][co] = bias[co] + sum of the cols entries whose input pixel p
//     and tap (kh, kw) land on (oh, ow) = p * stride + tap * dilation - pad
// The input is taken in tiles of pixels so the cols scratch stays small;
// the scatter of a tile is shared among threads by blocks of output
// channels, or, when those are fewer than the threads, by bands of the
// output rows the tile reaches: either way no two threads add into the
// same value.

#ifndef MACE_KERNELS_DECONV_GEMM_H_
#define MACE_KERNELS_DECONV_GEMM_H_

#include <cstdint>

#include "mace/core/thread_pool.h"
#include "mace/kernels/sgemm.h"

namespace mace {
namespace kernels {

struct DeconvGeometry {
  int64_t batch = 1, in_h = 1, in_w = 1, in_c = 1;
  int64_t out_h = 1, out_w = 1, out_c = 1;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  // Rows / columns cropped off the start of the full output.
  int64_t pad_top = 0, pad_left = 0;
};

class DeconvGemm {
 public:
  // Packs `filter` ([Cout, Kh, Kw, Cin]) for `isa`; the pool (may be null)
  // shares the packing, `source` (may be null) gives its memory, maybe
  // packed already (sgemm.h AcquirePackedBs). False when the packed filter
  // does not fit in memory.
  bool Init(const DeconvGeometry &geometry, const float *filter, SgemmIsa isa,
            ThreadPool *pool, PackedWeightSource *source = nullptr);
  // For a filter fed at run time: allocates the packed filter, which
  // PackFilter fills before each Run. False when it does not fit in memory.
  bool Init(const DeconvGeometry &geometry, SgemmIsa isa);

  // Packs `filter` ([Cout, Kh, Kw, Cin]) in place of the previous one,
  // through `reorder` (FilterReorderBytes of scratch).
  void PackFilter(const float *filter, float *reorder, ThreadPool *pool);
  int64_t FilterReorderBytes() const;

  int64_t ScratchBytes() const;

  // output = bias (null: 0) + the transposed convolution of input.
  void Run(const float *input, const float *bias, float *output, float *scratch,
           ThreadPool *pool) const;

  bool initialized() const { return !packed_.empty(); }

 private:
  // Sets the geometry and the packed filter's memory (*ready: packed
  // already, from `source`).
  bool Place(const DeconvGeometry &geometry, SgemmIsa isa,
             PackedWeightSource *source, bool *ready);
  void Scatter(const float *cols, int64_t pixel0, int64_t pixels, float *output,
               ThreadPool *pool) const;
  // Adds the tile's rows [p_begin, p_end) (tile-relative; pixel0 is the
  // tile's first input pixel) into the output rows [oh_begin, oh_end) and
  // channels [c_begin, c_end): a task owns such a block of the output.
  void ScatterBlock(const float *cols, int64_t pixel0, int64_t p_begin,
                    int64_t p_end, int64_t oh_begin, int64_t oh_end,
                    int64_t c_begin, int64_t c_end, float *output) const;

  DeconvGeometry geo_;
  PackedMatrixB packed_;  // [Cin] x [Kh * Kw * Cout]
  int64_t tile_pixels_ = 0;
};

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_DECONV_GEMM_H_
