// Direct depthwise convolution on NHWC data, channel multiplier 1, with a
// fused bias and activation: 3x3 and 5x5 windows, strides 1 and 2, any
// padding, no dilation. Vectorised along channels (see activation.h for the
// ISAs); each output row is computed by one thread, in the same order
// whatever the thread count.

#ifndef MACE_KERNELS_DEPTHWISE_H_
#define MACE_KERNELS_DEPTHWISE_H_

#include <cstdint>

#include "mace/core/thread_pool.h"
#include "mace/kernels/activation.h"

namespace mace {
namespace kernels {

struct DepthwiseShape {
  int64_t batch = 0, in_h = 0, in_w = 0, channels = 0;
  int64_t out_h = 0, out_w = 0;
  int64_t kernel_h = 0, kernel_w = 0;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  // Output pixel (oh, ow) reads input rows from oh * stride_h - pad_top
  // and columns from ow * stride_w - pad_left; cells outside read zero.
  int64_t pad_top = 0, pad_left = 0;
};

// Whether DepthwiseConv2d handles this shape: kernel 3x3 or 5x5, strides
// 1 or 2, dilation 1, pads smaller than the kernel.
bool DepthwiseKernelSupports(const DepthwiseShape &shape);

// y[n, oh, ow, c] = act(bias[c] + sum over kh, kw of
//   x[n, oh * sh - pad_top + kh, ow * sw - pad_left + kw, c] * w[kh, kw, c])
// with w laid out [kernel_h, kernel_w, channels] and bias null or
// `channels` values. Allocates nothing.
void DepthwiseConv2d(const DepthwiseShape &shape, const float *x,
                     const float *w, const float *bias,
                     const ActivationParams &act, float *y, ThreadPool *pool);
void DepthwiseConv2d(VectorIsa isa, const DepthwiseShape &shape, const float *x,
                     const float *w, const float *bias,
                     const ActivationParams &act, float *y, ThreadPool *pool);

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_DEPTHWISE_H_
