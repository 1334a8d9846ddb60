// Convolution as GEMM over im2col tiles: NHWC input, OHWI filter packed
// once for the packed SGEMM (mace/kernels/sgemm.h), any kernel size,
// stride, dilation, padding and group count.
//
// Output pixels are cut into tiles of `tile_rows`; for each tile and group
// the rows of the im2col matrix (one row per output pixel: the Kh x Kw x
// Cin/group inputs it reads, in the filter's (kh, kw, ic) order, zero where
// the window leaves the input) are gathered into a per-thread scratch tile
// and multiplied by that group's packed [K, Cout/group] filter. The tile is
// sized to stay in L2, so scratch is threads x tile_rows x K floats however
// large the image. A 1x1, stride-1, unpadded convolution reads the input in
// place (no scratch). One group with unit dilation along the width goes by
// bands of output rows instead, unless its rows are too narrow for whole
// micro-kernel tiles (SgemmRowsCost) or it is a strided 1x1 on narrow rows:
// each row's window rows are read in place wherever the window lies inside
// the input's width, and copied with the padding's zeros for the edge
// pixels, rounded to whole micro-kernel tiles; each panel of the filter
// goes down the whole band, about an im2col tile's pixels.

#ifndef MACE_KERNELS_CONV_IM2COL_H_
#define MACE_KERNELS_CONV_IM2COL_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "mace/core/thread_pool.h"
#include "mace/kernels/conv_tasks.h"
#include "mace/kernels/sgemm.h"

namespace mace {
namespace kernels {

// Sizes of one NHWC convolution with an OHWI filter
// [out_c, kernel_h, kernel_w, in_c / groups].
struct ConvGeometry {
  int64_t batch = 1, in_h = 1, in_w = 1, in_c = 1;
  int64_t out_h = 1, out_w = 1, out_c = 1;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;
  int64_t groups = 1;
};

// Output pixels per im2col tile for GEMM depth k (kernel_h * kernel_w *
// in_c / groups) and micro-kernel rows mr: also the number of rows that
// share one pass over the packed filter, which the Winograd cost model
// compares against.
int64_t Im2colTileRows(int64_t k, int64_t mr);

class Im2colConv {
 public:
  // Packs `filter` (OHWI) for `isa` and sizes the tiles for `threads`
  // threads (the pool's size at Run; more threads than that share slots).
  // False when the packed filter does not fit in memory.
  // `pool` (may be null) shares the packing; `source` (may be null) gives
  // the memory of the packed filter, maybe packed already (sgemm.h
  // AcquirePackedBs); with `defer` (may be null) the packing is left to it
  // instead, and `filter` must stay valid until it runs.
  bool Init(const ConvGeometry &geometry, const float *filter, SgemmIsa isa,
            int threads, ThreadPool *pool = nullptr,
            PackedWeightSource *source = nullptr,
            DeferredWork *defer = nullptr);

  // Scratch Run needs (0 when the input is read in place).
  int64_t ScratchBytes() const;

  // output[N, out_h, out_w, out_c] = conv(input) + bias + addend (bias,
  // addend null: none; the addend laid out as the output), clamped as
  // SgemmClamped (clamp null: not), with the output's pixels out_stride
  // floats apart (>= out_c: out_c, or inside a tensor joined along
  // channels); epilogue (may be null) sees each finished block of the
  // output (rows = pixels, ldc = out_stride), with c pointing into
  // `output`.
  void Run(const float *input, const float *bias, const float *clamp,
           const float *addend, float *output, int64_t out_stride,
           float *scratch, ThreadPool *pool,
           const SgemmEpilogue *epilogue) const;

  // Whether RunScaledInput applies: one group (the filter's rows are the
  // window taps of every input channel) and a packed filter small enough
  // to scale at every Run (the input's pass it saves costs more).
  bool ScalesFilterRows() const;
  // Scratch RunScaledInput needs.
  int64_t ScaledInputScratchBytes() const;
  // As Run on input * channel_scale (in_c factors, the same for every
  // pixel: a squeeze-and-excitation gate), without a pass over the input:
  // the calling thread scales the packed filter's rows into the scratch
  // (after Run's own), and the threads multiply the input by that.
  // ScalesFilterRows only.
  void RunScaledInput(const float *input, const float *channel_scale,
                      const float *bias, const float *clamp,
                      const float *addend, float *output, int64_t out_stride,
                      float *scratch, ThreadPool *pool,
                      const SgemmEpilogue *epilogue) const;

  bool initialized() const { return !packed_.empty(); }

  // The output pixels' im2col tiles (the units Run shares among threads).
  const RowBlocks &tiles() const { return tiles_; }

 private:
  // Kernel heights up to this read their window rows in place.
  static constexpr int64_t kMaxWindowRows = 16;
  // Output rows per RunWindowRows band, at most.
  static constexpr int64_t kMaxBandRows = 16;

  void GatherRows(const float *input, int64_t group, int64_t pixel0,
                  int64_t rows, float *a) const;
  bool ReadsInputInPlace() const;
  // The input's and the packed filter's sizes, which decide whether
  // threads split the output channels first (SplitColumnsFirst); the
  // filter's only for one group.
  int64_t InputBytes() const;
  int64_t MatrixBytes() const;
  // Whether Run goes by bands of output rows (RunWindowRows) instead of
  // gathering im2col tiles (WindowRowsPay, decided at Init).
  bool ReadsWindowRowsInPlace() const;
  // Whether it may (one group, unit dilation along the width, at most
  // kMaxWindowRows window rows) and row-by-row micro-kernel calls cost
  // about what the gathered tiles' do (SgemmRowsCost).
  bool WindowRowsPay() const;
  // Output rows per band: about an im2col tile's pixels, one row when
  // rows are wide (conv_im2col.cc).
  int64_t BandRows() const;
  // Output columns [first, last) whose window lies inside the input's
  // width (unit dilation along it).
  std::pair<int64_t, int64_t> InteriorColumns() const;
  // How RunWindowRows cuts an output row: pixels [0, left_end) and
  // [right_begin, out_w) read a padded copy of their window rows (the
  // edges, rounded to whole micro-kernel tiles), the pixels between read
  // the input where it lies.
  struct WindowRowSplit {
    int64_t left_end;
    int64_t right_begin;
  };
  WindowRowSplit SplitWindowRow() const;
  // Input columns the window rows of `pixels` neighbouring pixels span.
  int64_t PaddedBlockColumns(int64_t pixels) const;
  // Floats of the padded window rows of `pixels` neighbouring pixels.
  int64_t PaddedEdgeFloats(int64_t pixels) const;
  // Each slot's scratch in RunWindowRows: the padded window rows of both
  // edges of every row of a band.
  int64_t WindowRowsScratchFloats() const;
  // Points runs[kh] at window row kh of output pixels [first, last) of the
  // output row whose input rows are in_rows (null: padding), laid out in
  // `dst` with the padding's zeros; copies them there when `copy` (not
  // when the scratch holds them already). A window row in the padding
  // gets a null run.
  void CopyPaddedWindowRows(const float *const *in_rows, int64_t first,
                            int64_t last, float *dst, bool copy,
                            const float **runs) const;
  // Pixels of one output row that RunWindowRows multiplies as one GEMM:
  // A is one run per window row (SgemmARuns), lda = stride_w * in_c apart.
  struct WindowSegment {
    int64_t pixel0;  // the first pixel, counted over the batch's outputs
    int64_t pixels;
    const float *runs[kMaxWindowRows];
  };
  // Where in the scratch RunScaledInput puts the scaled filter, in floats:
  // after Run's own, aligned for the micro-kernels' loads.
  int64_t ScaledFilterOffset() const;
  // Run with `matrices` (one per group) for the packed filters.
  void RunWith(const PackedMatrixB *matrices, const float *input,
               const float *bias, const float *clamp, const float *addend,
               float *output, int64_t out_stride, float *scratch,
               ThreadPool *pool, const SgemmEpilogue *epilogue) const;
  // Run by bands of output rows: each row's pixels multiply `matrix` (the
  // one group's filter) with A read in place between the edges and from a
  // zero-padded copy at them; each filter panel goes down the whole band.
  void RunWindowRows(const PackedMatrixB &matrix, const float *input,
                     const float *bias, const float *clamp, const float *addend,
                     float *output, int64_t out_stride, float *scratch,
                     ThreadPool *pool, const SgemmEpilogue *epilogue) const;

  ConvGeometry geo_;
  int64_t k_ = 0;    // GEMM depth: kernel_h * kernel_w * in_c / groups
  RowBlocks tiles_;  // the output pixels' im2col tiles
  int slots_ = 1;
  bool by_window_rows_ = false;
  std::vector<PackedMatrixB> packed_;  // one per group
  AlignedArray<float> storage_;        // the values of every packed_
};

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_CONV_IM2COL_H_
