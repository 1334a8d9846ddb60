// Winograd convolution F(m x m, r x r) for r x r stride-1 dilation-1
// ungrouped NHWC convolutions (Lavin & Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2015): r = 3 with m = 2, 4 or 6, r = 5
// with m = 2 or 4.
//
// Output tiles of m x m read t^2 = (m + r - 1)^2 input pixels. Per block
// of tiles: the input transform (vectorised over channels per ISA,
// winograd_transform.h) gives t^2 matrices [tiles, Cin]; each is
// multiplied by the packed SGEMM with its transformed filter [Cin, Cout]
// (transformed and packed once, at Init); the output transform turns the
// t^2 products back into m x m pixels and adds the bias. A 3x3
// convolution then costs t^2 / m^2 instead of 9 multiplies per output:
// 4, 2.25 and 1.78 for m = 2, 4, 6; a 5x5 one 9 or 4 instead of 25 for
// m = 2, 4; plus the transforms.
//
// Precision: the transforms scale values by up to 32 (F(6,3)'s output
// matrix), so float rounding grows with m. On random data in [-1, 1]
// (tests/unit/conv_kernels_test.cc), the largest error divided by the sum
// of the absolute products behind that output was 1.3e-7 for F(2,3),
// 2.0e-6 for F(4,3) and 4.6e-6 for F(6,3), against 2.0e-7 for im2col.
// F(4,3) has since moved to points that halve its error
// (winograd_transform.h): on 256 input channels its root-mean-square error
// is 2.9x F(2,3)'s (1.4e-6 against 4.9e-7). F(2,5) shares F(4,3)'s points
// and about its error, F(4,5) F(6,3)'s.

#ifndef MACE_KERNELS_WINOGRAD_H_
#define MACE_KERNELS_WINOGRAD_H_

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "mace/core/thread_pool.h"
#include "mace/kernels/conv_im2col.h"
#include "mace/kernels/sgemm.h"

namespace mace {
namespace kernels {

struct WinogradTransforms;

// Whether Winograd can compute this convolution: 3x3 or 5x5, stride 1,
// dilation 1, one group.
bool WinogradApplies(const ConvGeometry &geometry);

// The output tile WinogradConv runs for a requested one (2, 4, 6) on
// this window: the largest it has up to the request (5x5: 2 or 4).
int WinogradTileFor(const ConvGeometry &geometry, int requested);

// Of the output tiles `tiles` (2, 4, 6; those a window lacks are taken as
// WinogradTileFor gives them), the one whose estimated time is
// the smallest and below im2col's, or 0 when im2col is expected to be
// faster (few channels) or Winograd does not apply. The estimate
// (winograd.cc) counts the GEMMs' multiply-adds, partial edge tiles
// included, how often each streams its packed filter, and the transforms;
// `isa` gives the micro-kernel's rows and what streaming the filter costs
// against a multiply-add.
int CheapestWinogradTile(const ConvGeometry &geometry, SgemmIsa isa,
                         std::initializer_list<int> tiles);

// The automatic choice: CheapestWinogradTile over F(2,3) and F(4,3), or
// F(2,5) alone. Inception-v3's fp32 output is within 6.0e-5 of ONNX
// Runtime's with it (3.6e-5 with F(2,3) alone; 1.6e-4 with F(4,3) on the
// usual points); F(6,3) (about 20x F(2,3)'s error per layer) would put it
// past the zoo's 1e-4, so it, and F(4,5) on the same points, run only
// when the op's `winograd` argument asks.
int ChooseWinogradTile(const ConvGeometry &geometry, SgemmIsa isa);

// What the Winograd cost models charge a transformed value, in
// multiply-adds of the packed SGEMM per point it sums (fitted in
// winograd.cc): the transforms run at a fraction of the SGEMM's rate.
constexpr double kWinogradTransformCost = 3.0;

// Tiles per block of a Winograd scratch (rows of each of the block's
// GEMMs) for `elements` transform elements a tile: the block's transformed
// input and products take about 1 MiB, so that they stay in L2 while the
// GEMMs walk them; whole micro-kernel tiles (mr), at least one, at most
// 128; all `tiles` when they fit in that budget.
int64_t WinogradBlockTiles(int64_t elements, const ConvGeometry &geometry,
                           int64_t mr, int64_t tiles);

// Floats between two transform elements' matrices of a block of `floats`
// each (tiles x channels) in a Winograd scratch: at least floats, an odd
// count of cache lines (winograd.cc says why).
int64_t WinogradElementStride(int64_t floats);

class WinogradConv {
 public:
  // `geometry` must satisfy WinogradApplies; tile_m is 2, 4 or 6 (as
  // WinogradTileFor takes it).
  // Transforms `filter` (OHWI) and packs it for `isa`; false when that
  // does not fit in memory.
  // `pool` (may be null) shares the transform; `source` (may be null)
  // gives the memory of the transformed filter, maybe transformed already
  // (sgemm.h AcquirePackedBs); with `defer` (may be null) the transform is
  // left to it instead, and `filter` must stay valid until it runs.
  bool Init(const ConvGeometry &geometry, int tile_m, const float *filter,
            SgemmIsa isa, int threads, ThreadPool *pool = nullptr,
            PackedWeightSource *source = nullptr,
            DeferredWork *defer = nullptr);

  int64_t ScratchBytes() const;

  // As Im2colConv::Run (without addend); the epilogue sees one output row
  // of a tile at a time.
  void Run(const float *input, const float *bias, float *output,
           int64_t out_stride, float *scratch, ThreadPool *pool,
           const SgemmEpilogue *epilogue) const;

  int tile_m() const { return tile_m_; }
  bool initialized() const { return !packed_.empty(); }

  // The blocks of output tiles (the units Run shares among threads).
  const RowBlocks &blocks() const { return blocks_; }

 private:
  int64_t TileCount() const;
  // Each slot's scratch: a block's transformed input and products.
  int64_t SlotFloats() const;
  // Transforms the filter's output channels of panels [begin, end).
  void TransformPanels(const float *filter, int64_t begin, int64_t end);

  ConvGeometry geo_;
  int tile_m_ = 0;
  int tile_t_ = 0;  // tile_m_ + kernel - 1
  int64_t tiles_h_ = 0, tiles_w_ = 0;
  RowBlocks blocks_;  // the output tiles' blocks, one task each
  int slots_ = 1;
  const WinogradTransforms *transforms_ = nullptr;
  std::vector<PackedMatrixB> packed_;  // per transform element: [Cin, Cout]
  AlignedArray<float> storage_;        // the values of every packed_
};

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_WINOGRAD_H_
