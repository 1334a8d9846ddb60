#include "mace/kernels/deconv_gemm.h"

#include <algorithm>
#include <vector>

#include "mace/core/int_math.h"

namespace mace {
namespace kernels {
namespace {

// Scratch of a tile (its GEMM output): about 256 KiB, so it is still in L2
// when the scatter reads it; at least one micro-kernel's rows.
constexpr int64_t kTileBytes = 256 * 1024;

// Output channels per scatter task.
constexpr int64_t kScatterChannels = 64;

}  // namespace

bool DeconvGemm::Init(const DeconvGeometry &geometry, const float *filter,
                      SgemmIsa isa, ThreadPool *pool,
                      PackedWeightSource *source) {
  bool ready = false;
  if (!Place(geometry, isa, source, &ready)) return false;
  if (!ready) {
    std::vector<float> by_tap(FilterReorderBytes() / sizeof(float));
    PackFilter(filter, by_tap.data(), pool);
  }
  return true;
}

bool DeconvGemm::Init(const DeconvGeometry &geometry, SgemmIsa isa) {
  bool ready = false;
  return Place(geometry, isa, nullptr, &ready);
}

bool DeconvGemm::Place(const DeconvGeometry &geometry, SgemmIsa isa,
                       PackedWeightSource *source, bool *ready) {
  geo_ = geometry;
  const int64_t n = geo_.kernel_h * geo_.kernel_w * geo_.out_c;
  if (!AcquirePackedB(geo_.in_c, n, isa, source, &packed_, ready)) {
    return false;
  }
  const int64_t mr = SgemmTileRows(packed_.isa);
  const int64_t rows = kTileBytes / (std::max<int64_t>(n, 1) *
                                     static_cast<int64_t>(sizeof(float)));
  tile_pixels_ = std::max(mr, rows / mr * mr);
  return true;
}

int64_t DeconvGemm::FilterReorderBytes() const {
  return geo_.kernel_h * geo_.kernel_w * geo_.out_c * geo_.in_c *
         static_cast<int64_t>(sizeof(float));
}

void DeconvGemm::PackFilter(const float *filter, float *reorder,
                            ThreadPool *pool) {
  // B's column (tap, co) is filter row (co, tap): the rows reordered to
  // [tap][co] so that a tap's output channels are contiguous in cols.
  const int64_t taps = geo_.kernel_h * geo_.kernel_w;
  for (int64_t co = 0; co < geo_.out_c; ++co) {
    for (int64_t tap = 0; tap < taps; ++tap) {
      std::copy_n(filter + (co * taps + tap) * geo_.in_c, geo_.in_c,
                  reorder + (tap * geo_.out_c + co) * geo_.in_c);
    }
  }
  PackBInto(reorder, true, &packed_, pool);
}

int64_t DeconvGemm::ScratchBytes() const {
  return tile_pixels_ * geo_.kernel_h * geo_.kernel_w * geo_.out_c *
         static_cast<int64_t>(sizeof(float));
}

void DeconvGemm::ScatterBlock(const float *cols, int64_t pixel0,
                              int64_t p_begin, int64_t p_end, int64_t oh_begin,
                              int64_t oh_end, int64_t c_begin, int64_t c_end,
                              float *output) const {
  const DeconvGeometry &g = geo_;
  const int64_t n = g.kernel_h * g.kernel_w * g.out_c;
  const int64_t in_pixels = g.in_h * g.in_w;
  for (int64_t p = p_begin; p < p_end; ++p) {
    const int64_t pixel = pixel0 + p;
    const int64_t image = pixel / in_pixels;
    const int64_t ih = pixel % in_pixels / g.in_w;
    const int64_t iw = pixel % g.in_w;
    float *out_image = output + image * g.out_h * g.out_w * g.out_c;
    const float *row = cols + p * n;
    for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
      const int64_t oh = ih * g.stride_h + kh * g.dilation_h - g.pad_top;
      if (oh < oh_begin || oh >= oh_end) continue;
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        const int64_t ow = iw * g.stride_w + kw * g.dilation_w - g.pad_left;
        if (ow < 0 || ow >= g.out_w) continue;
        float *dst = out_image + (oh * g.out_w + ow) * g.out_c;
        const float *src = row + (kh * g.kernel_w + kw) * g.out_c;
        for (int64_t c = c_begin; c < c_end; ++c) dst[c] += src[c];
      }
    }
  }
}

void DeconvGemm::Scatter(const float *cols, int64_t pixel0, int64_t pixels,
                         float *output, ThreadPool *pool) const {
  const DeconvGeometry &g = geo_;
  const int threads = pool != nullptr ? pool->num_threads() : 1;
  const int64_t blocks = (g.out_c + kScatterChannels - 1) / kScatterChannels;
  if (blocks >= threads) {
    auto scatter = [&](int64_t block_begin, int64_t block_end) {
      ScatterBlock(cols, pixel0, 0, pixels, 0, g.out_h,
                   block_begin * kScatterChannels,
                   std::min(block_end * kScatterChannels, g.out_c), output);
    };
    ParallelForOrInline(pool, 0, blocks, 1, scatter);
    return;
  }
  // Fewer channel blocks than threads (a head of a few classes, or 64
  // channels on two threads): bands of the output rows the tile reaches in
  // each image, every channel, one band per thread. A task reads only the
  // tile's pixels whose input rows reach its band, so overlapping taps stay
  // within one task.
  const int64_t in_pixels = g.in_h * g.in_w;
  const int64_t first_image = pixel0 / in_pixels;
  const int64_t last_pixel = pixel0 + pixels - 1;
  const int64_t images = last_pixel / in_pixels - first_image + 1;
  const int64_t reach = (g.kernel_h - 1) * g.dilation_h;
  auto scatter = [&](int64_t task_begin, int64_t task_end) {
    for (int64_t task = task_begin; task < task_end; ++task) {
      const int64_t image = first_image + task / threads;
      const int64_t band = task % threads;
      const int64_t image_start = image * in_pixels;
      // The input rows of this image in the tile, and the output rows they
      // reach.
      const int64_t ih_first =
          (std::max(pixel0, image_start) - image_start) / g.in_w;
      const int64_t ih_last =
          (std::min(last_pixel, image_start + in_pixels - 1) - image_start) /
          g.in_w;
      const int64_t oh_lo =
          std::max<int64_t>(0, ih_first * g.stride_h - g.pad_top);
      const int64_t oh_hi = std::min<int64_t>(
          g.out_h, ih_last * g.stride_h + reach - g.pad_top + 1);
      if (oh_lo >= oh_hi) continue;
      const int64_t oh_begin = oh_lo + band * (oh_hi - oh_lo) / threads;
      const int64_t oh_end = oh_lo + (band + 1) * (oh_hi - oh_lo) / threads;
      // Input rows ih with ih * stride + kh * dilation - pad in the band.
      const int64_t ih_lo = std::max<int64_t>(
          0, CeilDiv(oh_begin + g.pad_top - reach, g.stride_h));
      const int64_t ih_hi = std::min<int64_t>(
          g.in_h, FloorDiv(oh_end - 1 + g.pad_top, g.stride_h) + 1);
      if (oh_begin >= oh_end || ih_lo >= ih_hi) continue;
      const int64_t p_begin =
          std::max(pixel0, image_start + ih_lo * g.in_w) - pixel0;
      const int64_t p_end =
          std::min(pixel0 + pixels, image_start + ih_hi * g.in_w) - pixel0;
      if (p_begin < p_end) {
        ScatterBlock(cols, pixel0, p_begin, p_end, oh_begin, oh_end, 0, g.out_c,
                     output);
      }
    }
  };
  pool->ParallelFor(0, images * threads, 1, scatter);
}

void DeconvGemm::Run(const float *input, const float *bias, float *output,
                     float *scratch, ThreadPool *pool) const {
  const DeconvGeometry &g = geo_;
  const int64_t out_pixels = g.batch * g.out_h * g.out_w;
  auto fill = [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      float *dst = output + p * g.out_c;
      if (bias != nullptr) {
        std::copy_n(bias, g.out_c, dst);
      } else {
        std::fill_n(dst, g.out_c, 0.0f);
      }
    }
  };
  ParallelForOrInline(
      pool, 0, out_pixels,
      std::max<int64_t>(1, 4096 / std::max<int64_t>(g.out_c, 1)), fill);
  const int64_t n = g.kernel_h * g.kernel_w * g.out_c;
  const int64_t in_pixels = g.batch * g.in_h * g.in_w;
  for (int64_t p0 = 0; p0 < in_pixels; p0 += tile_pixels_) {
    const int64_t pixels = std::min(tile_pixels_, in_pixels - p0);
    Sgemm(pixels, n, g.in_c, input + p0 * g.in_c, g.in_c, packed_, nullptr,
          scratch, n, pool);
    Scatter(scratch, p0, pixels, output, pool);
  }
}

}  // namespace kernels
}  // namespace mace
