// The depthwise driver: picks the row kernel of the ISA and the shape, and
// shares the output rows (of every image) among the threads.

#include "mace/kernels/depthwise.h"

#include <algorithm>

#include "mace/kernels/depthwise_impl.h"

namespace mace {
namespace kernels {
namespace {

bool IsOneOrTwo(int64_t v) { return v == 1 || v == 2; }

}  // namespace

bool DepthwiseKernelSupports(const DepthwiseShape &s) {
  return s.kernel_h == s.kernel_w && (s.kernel_w == 3 || s.kernel_w == 5) &&
         IsOneOrTwo(s.stride_h) && IsOneOrTwo(s.stride_w) &&
         s.dilation_h == 1 && s.dilation_w == 1 && s.pad_top >= 0 &&
         s.pad_left >= 0 && s.channels >= 1 && s.in_h >= 1 && s.in_w >= 1 &&
         (s.weight_stride == 0 || s.weight_stride >= s.channels);
}

int64_t DepthwiseWeightStride(int64_t channels) {
  constexpr int64_t kSetStrideFloats = 1024 / sizeof(float);
  constexpr int64_t kLineFloats = 64 / sizeof(float);
  return channels % kSetStrideFloats == 0 ? channels + kLineFloats : channels;
}

void LayDepthwiseWeights(const float *w, int64_t taps, int64_t channels,
                         int64_t stride, float *laid) {
  for (int64_t t = 0; t < taps; ++t) {
    std::copy_n(w + t * channels, channels, laid + t * stride);
    std::fill(laid + t * stride + channels, laid + (t + 1) * stride, 0.0f);
  }
}

void DepthwiseConv2d(const DepthwiseShape &shape, const float *x,
                     const float *w, const float *bias,
                     const ActivationParams &act, float *y, ThreadPool *pool) {
  DepthwiseConv2d(SelectedVectorIsa(), shape, x, w, bias, act, y, pool);
}

void DepthwiseConv2d(VectorIsa isa, const DepthwiseShape &shape,
                     const float *x, const float *w, const float *bias,
                     const ActivationParams &act, float *y, ThreadPool *pool) {
  DepthwiseShape s = shape;
  if (s.weight_stride == 0) s.weight_stride = s.channels;
  const DepthwiseRowFn row_fn =
      KernelsFor<DepthwiseKernels>(isa).rows[s.kernel_w == 5][s.stride_w == 2];
  const int64_t image_size = s.in_h * s.in_w * s.channels;
  const int64_t row_size = s.out_w * s.channels;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / s.out_h;
      row_fn(s, x + n * image_size, row % s.out_h, w, bias, act,
             y + row * row_size);
    }
  };
  ParallelForOrInline(pool, 0, s.batch * s.out_h, 1, run);
}

}  // namespace kernels
}  // namespace mace
