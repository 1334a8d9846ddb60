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
  // Floats from one tap's weights to the next's in w (>= channels); 0:
  // channels, w as a model lays it out.
  int64_t weight_stride = 0;
};

// Whether DepthwiseConv2d handles this shape: kernel 3x3 or 5x5, strides
// 1 or 2, dilation 1, pads smaller than the kernel, a weight stride of 0
// or at least the channels.
bool DepthwiseKernelSupports(const DepthwiseShape &shape);

// The weight stride DepthwiseConv2d runs fastest with for `channels`:
// channels plus one cache line where a tap's weights would start a
// multiple of 1 KiB after the previous tap's (channels a multiple of
// 256), which puts a window's taps on the same few L1 sets, evicting one
// another along with the input pixels, themselves as far apart; else
// channels. 1024 channels, 3x3 on 7x7: 39 -> 27 us, 5x5: 62 -> 38 us
// (AVX-512, 1 thread).
int64_t DepthwiseWeightStride(int64_t channels);

// w laid out [kernel_h * kernel_w, channels] as `taps` rows `stride`
// floats apart (stride >= channels), the padding zeroed.
void LayDepthwiseWeights(const float *w, int64_t taps, int64_t channels,
                         int64_t stride, float *laid);

// y[n, oh, ow, c] = act(bias[c] + sum over kh, kw of
//   x[n, oh * sh - pad_top + kh, ow * sw - pad_left + kw, c] * w[kh, kw, c])
// with w laid out [kernel_h, kernel_w, channels] (taps weight_stride
// floats apart) and bias null or `channels` values. Allocates nothing.
void DepthwiseConv2d(const DepthwiseShape &shape, const float *x,
                     const float *w, const float *bias,
                     const ActivationParams &act, float *y, ThreadPool *pool);
void DepthwiseConv2d(VectorIsa isa, const DepthwiseShape &shape, const float *x,
                     const float *w, const float *bias,
                     const ActivationParams &act, float *y, ThreadPool *pool);

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_DEPTHWISE_H_
