// Winograd convolution along one axis, F(m, r) on tiles of t = m + r - 1
// = 8 or 6 points, for 1 x r and r x 1 stride-1 dilation-1 ungrouped NHWC
// convolutions, r = 3, 5 or 7 (Inception's factorised 1x7 / 7x1 and
// 1x3 / 3x1 layers): F(2,7), F(4,5), F(6,3) on 8 points, F(2,5), F(4,3)
// on 6.
//
// A tile is t input pixels along the kernel's axis, giving m output
// pixels. Per block of tiles: the input transform gives t matrices
// [tiles, Cin]; each is multiplied by the packed SGEMM with its transformed
// filter [Cin, Cout] (transformed and packed once, at Init); the output
// transform turns the t products back into m pixels and adds the bias. A
// 1 x 7 convolution then costs 8 / 2 = 4 multiplies per output instead of
// 7 (1 x 3: 1.33 instead of 3), plus the transforms. Tiles of 6 do more
// multiplies per output but fewer per line on short lines: 8 outputs of
// a 1 x 3 take two tiles either way, 12 products on 6 points against 16.
//
// Tiles of 8 come from F(6,3)'s points 0, +-1, +-2, +-1/2 and infinity,
// tiles of 6 from F(4,3)'s 0, +-3/2, +-2/3 and infinity: that transform's
// Bt, and At and G from its points (WinogradOnPoints,
// winograd_transform.h). On random data in [-1, 1] and 192 channels the
// float32 error of the 8-point ones, relative to the sum of the absolute
// products behind an output, is 4.9e-8 for F(6,3), 2.9e-8 for F(4,5) and
// 2.4e-8 for F(2,7), 4.5-5.7x direct summation's; fewer points give less.

#ifndef MACE_KERNELS_WINOGRAD_1D_H_
#define MACE_KERNELS_WINOGRAD_1D_H_

#include <cstdint>
#include <vector>

#include "mace/core/aligned_buffer.h"
#include "mace/core/thread_pool.h"
#include "mace/kernels/conv_im2col.h"
#include "mace/kernels/sgemm.h"

namespace mace {
namespace kernels {

// The most points a tile has along the kernel's axis.
constexpr int kWinograd1dMaxTile = 8;

// Whether Winograd1dConv can compute this convolution: a 1 x r or r x 1
// window, r = 3, 5 or 7, stride 1, dilation 1, one group.
bool Winograd1dApplies(const ConvGeometry &geometry);

// The tile (8 or 6 points) expected to be fastest, or 0 when im2col is
// expected to be faster or Winograd1dConv does not apply: the GEMMs'
// multiply-adds (t per tile instead of r per output pixel) plus the
// transforms' values at 3 multiply-adds each, as Winograd's cost model
// counts them (fitted on AVX2; the other ISAs take the same).
int Winograd1dTilePoints(const ConvGeometry &geometry);

class Winograd1dConv {
 public:
  // `geometry` must satisfy Winograd1dApplies. Transforms `filter` (OHWI)
  // and packs it for `isa` (t / r of the filter's size); false when that
  // does not fit in memory. `tile_points`: 8, 6 (r = 3 or 5), or 0 for
  // Winograd1dTilePoints's choice (8 where that is im2col). As
  // WinogradConv::Init: `pool` (may be null) shares the transform;
  // `source` (may be null) gives the memory of the transformed filter,
  // maybe transformed already (sgemm.h AcquirePackedBs); with `defer` (may
  // be null) the transform is left to it, and `filter` must stay valid
  // until it runs.
  bool Init(const ConvGeometry &geometry, const float *filter, SgemmIsa isa,
            int threads, ThreadPool *pool = nullptr,
            PackedWeightSource *source = nullptr,
            DeferredWork *defer = nullptr, int tile_points = 0);

  int64_t ScratchBytes() const;

  // As WinogradConv::Run: output[N, out_h, out_w, out_c] (pixels
  // out_stride floats apart) = conv(input) + bias (null: none); the
  // epilogue (may be null) sees the finished pixels of a tile, rows =
  // pixels.
  void Run(const float *input, const float *bias, float *output,
           int64_t out_stride, float *scratch, ThreadPool *pool,
           const SgemmEpilogue *epilogue) const;

  bool initialized() const { return !packed_.empty(); }
  // Output pixels per tile: tile_points() + 1 - r.
  int tile_m() const { return tile_m_; }
  // Points per tile: tile_m() + r - 1.
  int tile_points() const { return tile_t_; }
  const RowBlocks &blocks() const { return blocks_; }

 private:
  // Where one tile reads and writes.
  struct TileSpan;
  TileSpan Span(int64_t tile, const float *input, const float *zeros,
                float *output, int64_t out_stride) const;
  int64_t SlotFloats() const;
  // Transforms the filter's output channels of panels [begin, end).
  void TransformPanels(const float *filter, int64_t begin, int64_t end);

  ConvGeometry geo_;
  bool along_w_ = true;  // a 1 x r window (else r x 1)
  int r_ = 0;
  int tile_m_ = 0;
  int tile_t_ = 0;
  int64_t tiles_a_ = 0, tiles_b_ = 0;  // tile grid [batch][a][b]
  RowBlocks blocks_;
  int slots_ = 1;
  AlignedArray<float> storage_;
  std::vector<PackedMatrixB> packed_;  // per transform element: [Cin, Cout]
};

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_WINOGRAD_1D_H_
