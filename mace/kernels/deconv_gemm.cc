#include "mace/kernels/deconv_gemm.h"

#include <algorithm>
#include <vector>

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
  geo_ = geometry;
  const int64_t taps = geo_.kernel_h * geo_.kernel_w;
  const int64_t n = taps * geo_.out_c;
  bool ready = false;
  if (!AcquirePackedB(geo_.in_c, n, isa, source, &packed_, &ready)) {
    return false;
  }
  if (!ready) {
    // B's column (tap, co) is filter row (co, tap): reorder the rows to
    // [tap][co] so that a tap's output channels are contiguous in cols.
    std::vector<float> by_tap(n * geo_.in_c);
    for (int64_t co = 0; co < geo_.out_c; ++co) {
      for (int64_t tap = 0; tap < taps; ++tap) {
        std::copy_n(filter + (co * taps + tap) * geo_.in_c, geo_.in_c,
                    by_tap.data() + (tap * geo_.out_c + co) * geo_.in_c);
      }
    }
    PackBInto(by_tap.data(), true, &packed_, pool);
  }
  const int64_t mr = SgemmTileRows(packed_.isa);
  const int64_t rows = kTileBytes / (std::max<int64_t>(n, 1) *
                                     static_cast<int64_t>(sizeof(float)));
  tile_pixels_ = std::max(mr, rows / mr * mr);
  return true;
}

int64_t DeconvGemm::ScratchBytes() const {
  return tile_pixels_ * geo_.kernel_h * geo_.kernel_w * geo_.out_c *
         static_cast<int64_t>(sizeof(float));
}

void DeconvGemm::Scatter(const float *cols, int64_t pixel0, int64_t pixels,
                         float *output, ThreadPool *pool) const {
  const DeconvGeometry &g = geo_;
  const int64_t n = g.kernel_h * g.kernel_w * g.out_c;
  const int64_t in_pixels = g.in_h * g.in_w;
  auto scatter = [&](int64_t block_begin, int64_t block_end) {
    const int64_t c0 = block_begin * kScatterChannels;
    const int64_t c1 = std::min(block_end * kScatterChannels, g.out_c);
    for (int64_t p = 0; p < pixels; ++p) {
      const int64_t pixel = pixel0 + p;
      const int64_t image = pixel / in_pixels;
      const int64_t ih = pixel % in_pixels / g.in_w;
      const int64_t iw = pixel % g.in_w;
      float *out_image = output + image * g.out_h * g.out_w * g.out_c;
      const float *row = cols + p * n;
      for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
        const int64_t oh = ih * g.stride_h + kh * g.dilation_h - g.pad_top;
        if (oh < 0 || oh >= g.out_h) continue;
        for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
          const int64_t ow = iw * g.stride_w + kw * g.dilation_w - g.pad_left;
          if (ow < 0 || ow >= g.out_w) continue;
          float *dst = out_image + (oh * g.out_w + ow) * g.out_c;
          const float *src = row + (kh * g.kernel_w + kw) * g.out_c;
          for (int64_t c = c0; c < c1; ++c) dst[c] += src[c];
        }
      }
    }
  };
  const int64_t blocks = (g.out_c + kScatterChannels - 1) / kScatterChannels;
  if (pool != nullptr) {
    pool->ParallelFor(0, blocks, 1, scatter);
  } else {
    scatter(0, blocks);
  }
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
  if (pool != nullptr) {
    pool->ParallelFor(
        0, out_pixels,
        std::max<int64_t>(1, 4096 / std::max<int64_t>(g.out_c, 1)), fill);
  } else {
    fill(0, out_pixels);
  }
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
