// Shared pieces of the convolution family (Conv2D, DepthwiseConv2d,
// Deconv2D, DepthwiseDeconv2d, Pooling), all NHWC.
//
// A sliding-window op and its transpose differ only in which input row
// feeds which output row through which kernel row. That map is computed
// once in Prepare as "taps" per axis; the reference kernels below then
// walk the taps, so they need no bounds checks, div or mod at run time and
// serve the forward and the transposed ops alike.

#ifndef MACE_OPS_COMMON_CONV_UTIL_H_
#define MACE_OPS_COMMON_CONV_UTIL_H_

#include <cstdint>
#include <vector>

#include "mace/core/operation.h"
#include "mace/ops/common/activation_util.h"
#include "mace/ops/common/conv_pool_util.h"

namespace mace {

// Along one axis: output index o is fed by taps [begin[o], begin[o + 1]),
// tap t reading input index input[t] through kernel index kernel[t].
struct AxisTaps {
  std::vector<int64_t> begin;
  std::vector<int64_t> input;
  std::vector<int64_t> kernel;
};

// Forward window: o reads input o * stride - pad_begin + k * dilation,
// kept when inside [0, in) (padding cells contribute nothing).
void BuildWindowTaps(int64_t out, int64_t in, int64_t kernel, int64_t stride,
                     int64_t dilation, int64_t pad_begin, AxisTaps *taps);

// Transposed window: input i reaches full-output index
// i * stride + k * dilation; output o is full-output index o + pad_begin.
void BuildTransposedTaps(int64_t out, int64_t in, int64_t kernel,
                         int64_t stride, int64_t dilation, int64_t pad_begin,
                         AxisTaps *taps);

// Rejects window arguments so large that output-size arithmetic could
// overflow (a model file may declare anything).
MaceStatus CheckWindowRange(const OpContext &context, const Window2D &window,
                            int64_t kernel_h, int64_t kernel_w);

// Rejects an output whose tap tables or element count would not fit.
MaceStatus CheckOutputSize(const OpContext &context, const Shape &shape,
                           int64_t kernel_h, int64_t kernel_w);

// Returns Unsupported when the op says its data is NCHW (data_format 2).
MaceStatus CheckNhwc(const OpContext &context);

// Checks that input `index` is a float tensor of rank 4 with every dim in
// [1, 2^31); `what` names its role in the message ("input", "filter").
MaceStatus CheckFloat4D(const OpContext &context, int index, const char *what);

// Reads the optional `group` argument (default 1, must be >= 1).
MaceStatus ReadGroup(const OpContext &context, int64_t *group);

// Checks an optional bias input: float, rank 1, `channels` values.
MaceStatus CheckBias(const OpContext &context, int index, int64_t channels);

// Sizes of a grouped convolution whose filter is
// [out_c, kernel_h, kernel_w, in_c / groups].
struct ConvDims {
  int64_t batch = 0, in_h = 0, in_w = 0, in_c = 0;
  int64_t out_h = 0, out_w = 0, out_c = 0;
  int64_t kernel_h = 0, kernel_w = 0, groups = 1;
};

// Reads batch, height, width and channels of the NHWC input 0.
void ReadInputDims(const OpContext &context, ConvDims *dims);

// ReadInputDims, the `group` argument (ReadGroup) and the filter (input 1)
// of a grouped convolution, [out_c, kernel_h, kernel_w, in_c / groups]:
// rejects a group that does not divide both channel counts and a filter
// whose last dim is not in_c / groups.
MaceStatus ReadGroupedConvDims(const OpContext &context, ConvDims *dims);

// ReadInputDims, then the filter (input 1) of a depthwise convolution,
// [kernel_h, kernel_w, in_c, multiplier] (out_c = in_c * multiplier):
// rejects a filter of other channels, and a `group` argument, when given,
// other than in_c.
MaceStatus ReadDepthwiseConvDims(const OpContext &context, ConvDims *dims);

// The forward sliding-window part of a convolution's Prepare, shared by
// Conv2D, DepthwiseConv2d and PointwiseDepthwiseConv2d: reads the window
// arguments (into *window), computes the output size (into
// dims->out_h/out_w) and the pads that give it (*pads), checks it and sets
// output 0 to float [N, out_h, out_w, out_c].
MaceStatus PrepareForwardWindow(OpContext *context, ConvDims *dims,
                                Window2D *window, Pads2D *pads);
// The row and column taps of the reference loops, for the window and
// pads PrepareForwardWindow gave (only the reference path needs them).
void BuildForwardTaps(const ConvDims &dims, const Window2D &window,
                      const Pads2D &pads, AxisTaps *rows, AxisTaps *cols);

// y[n, oh, ow, oc] = act(bias[oc] + sum over row taps, column taps and the
// input channels of oc's group of x[n, ih, iw, ic] * w[oc, kh, kw, ic']).
// bias may be null. Parallel over output rows.
// `slope` is a fused PRELU's slope (act PRELU only; see activation_util.h).
void GroupedConvByTaps(const ConvDims &dims, const AxisTaps &rows,
                       const AxisTaps &cols, const float *x, const float *w,
                       const float *bias, const Activation &act, float *y,
                       ThreadPool *pool,
                       const PReluSlope &slope = PReluSlope());

// Depthwise: filter [kernel_h, kernel_w, channels, multiplier], output
// channel c * multiplier + m reads input channel c only. dims.in_c is the
// channel count, dims.out_c = in_c * multiplier, dims.groups unused.
void DepthwiseConvByTaps(const ConvDims &dims, const AxisTaps &rows,
                         const AxisTaps &cols, const float *x, const float *w,
                         const float *bias, const Activation &act, float *y,
                         ThreadPool *pool,
                         const PReluSlope &slope = PReluSlope());

}  // namespace mace

#endif  // MACE_OPS_COMMON_CONV_UTIL_H_
