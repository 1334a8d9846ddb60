#include "mace/kernels/conv_im2col.h"

#include <algorithm>
#include <cstring>

#include "mace/core/int_math.h"
#include "mace/kernels/conv_tasks.h"

namespace mace {
namespace kernels {
namespace {

// An im2col tile of about this many bytes stays in L2 next to the filter
// panel being multiplied; but never fewer rows than kMinTileRows, as each
// tile streams the whole packed filter once (16 rows ran ResNet-50's
// 3x3x512 on 7x7 at 31 GMACPS, 64 rows at 40 on AVX-512).
constexpr int64_t kTileBytes = 128 * 1024;
constexpr int64_t kMinTileRows = 64;
constexpr int64_t kMaxTileRows = 512;

// RunWindowRows' bands: output rows that share one pass over each panel of
// the filter, about an im2col tile's pixels (tiles_: the tiles' L2
// budget and their split among threads; each band streams the whole
// filter) and at most kMaxBandRows rows. Rows of kWideRowPixels or more go
// one at a time, as they did before bands (RGB stems). Before bands,
// outputs under 48 pixels wide (Inception's 17x17 and 35x35) and filters
// over 512 KiB gathered im2col tiles instead; the gather cost those layers
// 7-12% of their time (op benchmarks with it skipped). Bands of a fixed 64
// pixels ran ResNet-50's 1x1 stride-2 layer to 28x28 1.11x the time of
// the gathered tiles of 128 pixels (K = 256): its 512 KiB filter streamed
// half as often again.
constexpr int64_t kWideRowPixels = 64;
// Rows go in place unless cutting them row by row costs the micro-kernels
// more than this percentage of the gathered tiles' calls (SgemmRowsCost):
// a 7-pixel row is a 6- and a 1-row call, and ResNet-50's stride-2 3x3 on
// 14x14 to 7x7 ran 1.35x the time by rows (costed 1.4x), its 28x28 to
// 14x14 1.11x (costed 1.13x), where rows of 17 and 35 pixels (costed
// 1.0x) ran 0.90x.
constexpr int64_t kWindowRowsMaxCostPercent = 105;
// Copies n floats. Runs of a few channels (an RGB stem's window rows are 9
// or 21 floats) go as fixed-size moves the compiler inlines: a memcpy call
// per run cost as much as the gathering itself there. No loop either: GCC
// turns a loop of 16-byte copies back into a memcpy call of the run's
// length, which made a 3x3 RGB stem's gathering 9x slower.
inline void CopyRun(float *dst, const float *src, int64_t n) {
  if (n >= 32) {
    std::memcpy(dst, src, n * sizeof(float));
    return;
  }
  auto copy_if = [&](int64_t floats) {
    if ((n & floats) == 0) return;
    std::memcpy(dst, src, floats * sizeof(float));
    dst += floats;
    src += floats;
  };
  copy_if(16);
  copy_if(8);
  copy_if(4);
  copy_if(2);
  copy_if(1);
}

// A packed filter up to this size takes an input scale into a scaled copy
// of its rows, made by the calling thread at each Run (64 KiB: a few
// microseconds, while the other threads wait). Larger ones ran slower so
// than after the scale's own pass over the input (MobileNet-v3's 14x14
// 672 -> 160 projection at 2 threads), as did scaling the gathered
// im2col tiles instead (each column block's thread scales its own copy).
constexpr int64_t kMaxScaledFilterFloats = 16 * 1024;

}  // namespace

int64_t Im2colTileRows(int64_t k, int64_t mr) {
  int64_t rows = kTileBytes / (std::max<int64_t>(k, 1) *
                               static_cast<int64_t>(sizeof(float)));
  rows = std::clamp(rows, kMinTileRows, kMaxTileRows);
  return std::max<int64_t>(mr, rows / mr * mr);
}

bool Im2colConv::Init(const ConvGeometry &geometry, const float *filter,
                      SgemmIsa isa, int threads, ThreadPool *pool,
                      PackedWeightSource *source, DeferredWork *defer) {
  geo_ = geometry;
  const int64_t in_per_group = geo_.in_c / geo_.groups;
  const int64_t out_per_group = geo_.out_c / geo_.groups;
  k_ = geo_.kernel_h * geo_.kernel_w * in_per_group;
  bool ready = false;
  if (!AcquirePackedBs(geo_.groups, k_, out_per_group, isa, source, &storage_,
                       &packed_, &ready)) {
    return false;
  }
  if (!ready) {
    for (int64_t g = 0; g < geo_.groups; ++g) {
      // Group g's filter rows are contiguous: out_per_group rows of k_.
      const float *group_filter = filter + g * out_per_group * k_;
      if (defer != nullptr) {
        DeferPackBInto(group_filter, true, &packed_[g], defer);
      } else {
        PackBInto(group_filter, true, &packed_[g], pool);
      }
    }
  }
  slots_ = std::max(1, threads);
  const int64_t mr = SgemmTileRows(packed_[0].isa);
  tiles_ = ThreadRowBlocks(
      geo_.batch * geo_.out_h * geo_.out_w, Im2colTileRows(k_, mr), mr, slots_,
      packed_[0].size() * static_cast<int64_t>(sizeof(float)));
  by_window_rows_ = WindowRowsPay();
  return true;
}

bool Im2colConv::ReadsInputInPlace() const {
  return geo_.kernel_h == 1 && geo_.kernel_w == 1 && geo_.stride_h == 1 &&
         geo_.stride_w == 1 && geo_.pad_top == 0 && geo_.pad_left == 0 &&
         geo_.out_h == geo_.in_h && geo_.out_w == geo_.in_w;
}

int64_t Im2colConv::InputBytes() const {
  return geo_.batch * geo_.in_h * geo_.in_w * geo_.in_c *
         static_cast<int64_t>(sizeof(float));
}

int64_t Im2colConv::MatrixBytes() const {
  if (geo_.groups != 1 || packed_.empty()) return 0;
  return packed_[0].size() * static_cast<int64_t>(sizeof(float));
}

int64_t Im2colConv::ScratchBytes() const {
  if (ReadsInputInPlace()) return 0;
  const int64_t slot_floats = ReadsWindowRowsInPlace()
                                  ? WindowRowsScratchFloats()
                                  : tiles_.max_rows() * k_;
  return static_cast<int64_t>(slots_) * slot_floats *
         static_cast<int64_t>(sizeof(float));
}

void Im2colConv::GatherRows(const float *input, int64_t group, int64_t pixel0,
                            int64_t rows, float *a) const {
  const ConvGeometry &g = geo_;
  const int64_t in_per_group = g.in_c / g.groups;
  const int64_t pixels_per_image = g.out_h * g.out_w;
  const size_t run_bytes = in_per_group * sizeof(float);
  const bool whole_rows_contiguous = g.groups == 1 && g.dilation_w == 1;
  const int64_t window_run = g.kernel_w * in_per_group;
  // The pixel's coordinates advance with it: three 64-bit divisions per
  // row cost more than copying a stem's 27 values.
  int64_t n = pixel0 / pixels_per_image;
  int64_t oh = pixel0 % pixels_per_image / g.out_w;
  int64_t ow = pixel0 % g.out_w;
  for (int64_t r = 0; r < rows; ++r) {
    const float *image =
        input + n * g.in_h * g.in_w * g.in_c + group * in_per_group;
    float *dst = a + r * k_;
    const int64_t iw0 = ow * g.stride_w - g.pad_left;
    const bool window_inside =
        whole_rows_contiguous && iw0 >= 0 && iw0 + g.kernel_w <= g.in_w;
    for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
      const int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
      if (ih < 0 || ih >= g.in_h) {
        std::memset(dst, 0, window_run * sizeof(float));
        dst += window_run;
        continue;
      }
      const float *row = image + ih * g.in_w * g.in_c;
      if (window_inside) {
        // The window's row is one run of the input (few channels, as an
        // RGB stem's 3, would otherwise cost a call per tap).
        CopyRun(dst, row + iw0 * g.in_c, window_run);
        dst += window_run;
        continue;
      }
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        const int64_t iw = iw0 + kw * g.dilation_w;
        if (iw < 0 || iw >= g.in_w) {
          std::memset(dst, 0, run_bytes);
        } else {
          CopyRun(dst, row + iw * g.in_c, in_per_group);
        }
        dst += in_per_group;
      }
    }
    if (++ow == g.out_w) {
      ow = 0;
      if (++oh == g.out_h) {
        oh = 0;
        ++n;
      }
    }
  }
}

std::pair<int64_t, int64_t> Im2colConv::InteriorColumns() const {
  const ConvGeometry &g = geo_;
  const int64_t ow_lo =
      std::min(g.out_w, (g.pad_left + g.stride_w - 1) / g.stride_w);
  const int64_t last_inside = g.in_w - g.kernel_w + g.pad_left;
  const int64_t ow_hi = std::clamp(
      last_inside >= 0 ? last_inside / g.stride_w + 1 : 0, ow_lo, g.out_w);
  return {ow_lo, ow_hi};
}

bool Im2colConv::ReadsWindowRowsInPlace() const { return by_window_rows_; }

bool Im2colConv::WindowRowsPay() const {
  if (ReadsInputInPlace() || geo_.groups != 1 || geo_.dilation_w != 1 ||
      geo_.kernel_h > kMaxWindowRows) {
    return false;
  }
  // A strided 1x1 gathers one run of in_c a pixel, cheap next to its
  // out_c multiply-adds a value; read in place by bands, ResNet-50's
  // stride-2 1x1 layers (rows of 28 and 14 pixels) ran 1.05x the time.
  if (geo_.kernel_h * geo_.kernel_w == 1 && geo_.out_w < kWideRowPixels) {
    return false;
  }
  const SgemmIsa isa = packed_[0].isa;
  int64_t gathered = 0;
  for (int64_t tile = 0; tile < tiles_.blocks(); ++tile) {
    gathered += SgemmRowsCost(tiles_.Rows(tile), isa);
  }
  const WindowRowSplit split = SplitWindowRow();
  const int64_t by_rows =
      geo_.batch * geo_.out_h *
      (SgemmRowsCost(split.left_end, isa) +
       SgemmRowsCost(split.right_begin - split.left_end, isa) +
       SgemmRowsCost(geo_.out_w - split.right_begin, isa));
  return by_rows * 100 <= gathered * kWindowRowsMaxCostPercent;
}

int64_t Im2colConv::BandRows() const {
  if (geo_.out_w >= kWideRowPixels) return 1;
  const int64_t rows = (tiles_.max_rows() + geo_.out_w - 1) / geo_.out_w;
  return std::clamp<int64_t>(rows, 1, kMaxBandRows);
}

Im2colConv::WindowRowSplit Im2colConv::SplitWindowRow() const {
  const int64_t out_w = geo_.out_w;
  const int64_t mr = SgemmTileRows(packed_[0].isa);
  const auto [ow_lo, ow_hi] = InteriorColumns();
  WindowRowSplit split;
  split.left_end =
      ow_lo > 0 ? std::min(out_w, (ow_lo + mr - 1) / mr * mr) : int64_t{0};
  split.right_begin =
      ow_hi >= out_w
          ? out_w
          : split.left_end +
                std::max<int64_t>(0, ow_hi - split.left_end) / mr * mr;
  return split;
}

int64_t Im2colConv::PaddedBlockColumns(int64_t pixels) const {
  return pixels > 0 ? (pixels - 1) * geo_.stride_w + geo_.kernel_w : 0;
}

int64_t Im2colConv::PaddedEdgeFloats(int64_t pixels) const {
  return geo_.kernel_h * PaddedBlockColumns(pixels) * geo_.in_c;
}

int64_t Im2colConv::WindowRowsScratchFloats() const {
  const WindowRowSplit split = SplitWindowRow();
  return BandRows() * (PaddedEdgeFloats(split.left_end) +
                       PaddedEdgeFloats(geo_.out_w - split.right_begin));
}

void Im2colConv::CopyPaddedWindowRows(const float *const *in_rows,
                                      int64_t first, int64_t last, float *dst,
                                      bool copy, const float **runs) const {
  const ConvGeometry &g = geo_;
  const int64_t columns = PaddedBlockColumns(last - first);
  const int64_t iw0 = first * g.stride_w - g.pad_left;
  const int64_t copy_begin = std::clamp<int64_t>(-iw0, 0, columns);
  const int64_t copy_end =
      std::clamp<int64_t>(g.in_w - iw0, copy_begin, columns);
  for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
    if (in_rows[kh] == nullptr) {
      runs[kh] = nullptr;
      continue;
    }
    float *row = dst + kh * columns * g.in_c;
    runs[kh] = row;
    if (!copy) continue;
    std::fill(row, row + copy_begin * g.in_c, 0.0f);
    if (copy_end > copy_begin) {
      std::memcpy(row + copy_begin * g.in_c,
                  in_rows[kh] + (iw0 + copy_begin) * g.in_c,
                  (copy_end - copy_begin) * g.in_c * sizeof(float));
    }
    std::fill(row + copy_end * g.in_c, row + columns * g.in_c, 0.0f);
  }
}

void Im2colConv::RunWindowRows(const PackedMatrixB &matrix, const float *input,
                               const float *bias, const float *clamp,
                               const float *addend, float *output,
                               int64_t out_stride, float *scratch,
                               ThreadPool *pool,
                               const SgemmEpilogue *epilogue) const {
  const ConvGeometry &g = geo_;
  const int64_t out_rows = g.batch * g.out_h;
  const int64_t band_rows = BandRows();
  const int64_t bands = (out_rows + band_rows - 1) / band_rows;
  const int64_t nr = matrix.nr;
  const ConvTaskGrid grid = PlanConvTasks(pool, slots_, g.out_c, nr, bands,
                                          InputBytes(), MatrixBytes());
  const int64_t col_block = grid.col_block;
  const WindowRowSplit split = SplitWindowRow();
  const int64_t left_floats = PaddedEdgeFloats(split.left_end);
  const int64_t row_floats =
      left_floats + PaddedEdgeFloats(g.out_w - split.right_begin);
  const int64_t slot_floats = WindowRowsScratchFloats();
  const int64_t lda = g.stride_w * g.in_c;
  const int kernel_h = static_cast<int>(g.kernel_h);

  // `held`: the band whose edge pixels' padded window rows the slot holds.
  ForEachSlotRange(
      pool, grid.slots, grid.tasks(),
      [&](int slot, int64_t &held, int64_t begin, int64_t end) {
        float *padded = scratch + slot * slot_floats;
        for (int64_t task = begin; task < end; ++task) {
          const int64_t band = grid.RowTask(task);
          const int64_t row0 = band * band_rows;
          const int64_t rows = std::min(band_rows, out_rows - row0);
          const int64_t col0 = grid.ColBlock(task) * col_block;
          const int64_t col1 = std::min(col0 + col_block, g.out_c);
          // Each row's pixels in up to three segments: the edges read a
          // padded copy of their window rows (a tile of one edge pixel
          // costs nearly as much as a full one, so the copies cover whole
          // micro-kernel tiles), the pixels between read the input.
          WindowSegment segments[kMaxBandRows * 3];
          int count = 0;
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t row = row0 + r;
            const int64_t n = row / g.out_h;
            const int64_t oh = row % g.out_h;
            // The input row of each window row, null where it is padding.
            const float *in_rows[kMaxWindowRows];
            for (int kh = 0; kh < kernel_h; ++kh) {
              const int64_t ih =
                  oh * g.stride_h - g.pad_top + kh * g.dilation_h;
              in_rows[kh] = ih >= 0 && ih < g.in_h
                                ? input + (n * g.in_h + ih) * g.in_w * g.in_c
                                : nullptr;
            }
            float *row_padded = padded + r * row_floats;
            auto add_padded = [&](int64_t first, int64_t last, float *dst) {
              if (first >= last) return;
              WindowSegment &s = segments[count++];
              s = WindowSegment{row * g.out_w + first, last - first, {}};
              // The slot holds the copy already when it ran this band for
              // another column block.
              CopyPaddedWindowRows(in_rows, first, last, dst, held != band,
                                   s.runs);
            };
            add_padded(0, split.left_end, row_padded);
            if (split.right_begin > split.left_end) {
              WindowSegment &s = segments[count++];
              s = WindowSegment{row * g.out_w + split.left_end,
                                split.right_begin - split.left_end,
                                {}};
              const int64_t iw0 = split.left_end * g.stride_w - g.pad_left;
              for (int kh = 0; kh < kernel_h; ++kh) {
                s.runs[kh] = in_rows[kh] != nullptr ? in_rows[kh] + iw0 * g.in_c
                                                    : nullptr;
              }
            }
            add_padded(split.right_begin, g.out_w, row_padded + left_floats);
          }
          held = band;
          // Each panel of the filter goes down the whole band while it
          // stays in L1 / L2.
          for (int64_t p0 = col0; p0 < col1; p0 += nr) {
            const int64_t p1 = std::min(p0 + nr, col1);
            for (int i = 0; i < count; ++i) {
              const WindowSegment &s = segments[i];
              const int64_t at = s.pixel0 * out_stride;
              SgemmColumnsInRuns(
                  s.pixels, p0, p1,
                  SgemmARuns{s.runs, kernel_h, g.kernel_w * g.in_c}, lda,
                  matrix, bias, clamp,
                  addend != nullptr ? addend + at : nullptr, output + at,
                  out_stride, epilogue);
            }
          }
        }
      });
}

void Im2colConv::Run(const float *input, const float *bias, const float *clamp,
                     const float *addend, float *output, int64_t out_stride,
                     float *scratch, ThreadPool *pool,
                     const SgemmEpilogue *epilogue) const {
  RunWith(packed_.data(), input, bias, clamp, addend, output, out_stride,
          scratch, pool, epilogue);
}

bool Im2colConv::ScalesFilterRows() const {
  return geo_.groups == 1 && packed_[0].size() <= kMaxScaledFilterFloats;
}

int64_t Im2colConv::ScaledFilterOffset() const {
  return RoundUp(ScratchBytes(), kCacheLineBytes) /
         static_cast<int64_t>(sizeof(float));
}

int64_t Im2colConv::ScaledInputScratchBytes() const {
  return (ScaledFilterOffset() + packed_[0].size()) *
         static_cast<int64_t>(sizeof(float));
}

void Im2colConv::RunScaledInput(const float *input, const float *channel_scale,
                                const float *bias, const float *clamp,
                                const float *addend, float *output,
                                int64_t out_stride, float *scratch,
                                ThreadPool *pool,
                                const SgemmEpilogue *epilogue) const {
  PackedMatrixB scaled;
  ScalePackedBRows(packed_[0], channel_scale, geo_.in_c,
                   scratch + ScaledFilterOffset(), &scaled);
  RunWith(&scaled, input, bias, clamp, addend, output, out_stride, scratch,
          pool, epilogue);
}

void Im2colConv::RunWith(const PackedMatrixB *matrices, const float *input,
                         const float *bias, const float *clamp,
                         const float *addend, float *output, int64_t out_stride,
                         float *scratch, ThreadPool *pool,
                         const SgemmEpilogue *epilogue) const {
  if (ReadsWindowRowsInPlace()) {
    RunWindowRows(matrices[0], input, bias, clamp, addend, output, out_stride,
                  scratch, pool, epilogue);
    return;
  }
  const int64_t out_per_group = geo_.out_c / geo_.groups;
  const int64_t in_per_group = geo_.in_c / geo_.groups;
  const int64_t pixel_tiles = tiles_.blocks();
  const ConvTaskGrid grid =
      PlanConvTasks(pool, slots_, out_per_group, matrices[0].nr,
                    pixel_tiles * geo_.groups, InputBytes(), MatrixBytes());
  const int64_t col_block = grid.col_block;
  const bool in_place = ReadsInputInPlace();

  // `gathered`: the (group, tile) whose rows the slot's a_tile holds.
  ForEachSlotRange(
      pool, grid.slots, grid.tasks(),
      [&](int slot, int64_t &gathered, int64_t begin, int64_t end) {
        float *a_tile =
            in_place ? nullptr : scratch + slot * tiles_.max_rows() * k_;
        for (int64_t task = begin; task < end; ++task) {
          const int64_t group_tile = grid.RowTask(task);
          const int64_t group = group_tile / pixel_tiles;
          const int64_t tile = group_tile % pixel_tiles;
          const int64_t pixel0 = tiles_.Begin(tile);
          const int64_t rows = tiles_.Rows(tile);
          const int64_t col0 = grid.ColBlock(task) * col_block;
          const float *a;
          int64_t lda;
          if (in_place) {
            a = input + pixel0 * geo_.in_c + group * in_per_group;
            lda = geo_.in_c;
          } else {
            if (gathered != group_tile) {
              GatherRows(input, group, pixel0, rows, a_tile);
              gathered = group_tile;
            }
            a = a_tile;
            lda = k_;
          }
          const int64_t c0 = pixel0 * out_stride + group * out_per_group;
          SgemmColumns(rows, col0, std::min(col0 + col_block, out_per_group),
                       k_, a, lda, matrices[group],
                       bias != nullptr ? bias + group * out_per_group : nullptr,
                       clamp, addend != nullptr ? addend + c0 : nullptr,
                       output + c0, out_stride, epilogue);
        }
      });
}

}  // namespace kernels
}  // namespace mace
