#include "mace/ops/common/conv_util.h"

#include <algorithm>
#include <limits>

#include "mace/core/int_math.h"

namespace mace {
namespace {

// Bound on every window argument and on tap-table lengths: keeps all the
// index arithmetic far from int64 overflow.
constexpr int64_t kMaxWindowValue = std::numeric_limits<int32_t>::max();

void ResetTaps(int64_t out, AxisTaps *taps) {
  taps->begin.assign(1, 0);
  taps->begin.reserve(out + 1);
  taps->input.clear();
  taps->kernel.clear();
}

void AddTap(int64_t input, int64_t kernel, AxisTaps *taps) {
  taps->input.push_back(input);
  taps->kernel.push_back(kernel);
}

// The kernel indices k of [0, kernel) with low <= k * dilation <= high.
// Visiting only these makes a tap table cost its taps rather than
// outputs x kernel, which a wide kernel over a narrow input makes huge.
struct KernelRange {
  int64_t first = 0;
  int64_t last = -1;
};
KernelRange KernelIndicesWithin(int64_t low, int64_t high, int64_t kernel,
                                int64_t dilation) {
  return {std::max<int64_t>(0, CeilDiv(low, dilation)),
          std::min(kernel - 1, FloorDiv(high, dilation))};
}

void CloseOutput(AxisTaps *taps) {
  taps->begin.push_back(static_cast<int64_t>(taps->input.size()));
}

}  // namespace

void BuildWindowTaps(int64_t out, int64_t in, int64_t kernel, int64_t stride,
                     int64_t dilation, int64_t pad_begin, AxisTaps *taps) {
  ResetTaps(out, taps);
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * stride - pad_begin;
    // 0 <= start + k * dilation < in.
    const KernelRange ks =
        KernelIndicesWithin(-start, in - 1 - start, kernel, dilation);
    for (int64_t k = ks.first; k <= ks.last; ++k) {
      AddTap(start + k * dilation, k, taps);
    }
    CloseOutput(taps);
  }
}

void BuildTransposedTaps(int64_t out, int64_t in, int64_t kernel,
                         int64_t stride, int64_t dilation, int64_t pad_begin,
                         AxisTaps *taps) {
  ResetTaps(out, taps);
  for (int64_t o = 0; o < out; ++o) {
    const int64_t full = o + pad_begin;
    // 0 <= full - k * dilation <= (in - 1) * stride.
    const KernelRange ks = KernelIndicesWithin(
        full - (in - 1) * stride, full, kernel, dilation);
    for (int64_t k = ks.first; k <= ks.last; ++k) {
      const int64_t scaled = full - k * dilation;
      if (scaled % stride == 0) AddTap(scaled / stride, k, taps);
    }
    CloseOutput(taps);
  }
}

MaceStatus CheckWindowRange(const OpContext &context, const Window2D &window,
                            int64_t kernel_h, int64_t kernel_w) {
  const int64_t values[] = {window.stride_h,   window.stride_w,
                            window.dilation_h, window.dilation_w,
                            kernel_h,          kernel_w};
  for (int64_t v : values) {
    if (v > kMaxWindowValue) {
      return context.InvalidArgs("kernel size, strides or dilations value ", v,
                                 " is too large");
    }
  }
  for (int64_t pad : window.explicit_pads) {
    if (pad > kMaxWindowValue) {
      return context.InvalidArgs("argument 'padding_values' value ", pad,
                                 " is too large");
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus CheckOutputSize(const OpContext &context, const Shape &shape,
                           int64_t kernel_h, int64_t kernel_w) {
  const int64_t count = ShapeElementCount(shape);
  if (count < 0 || shape[1] > kMaxWindowValue || shape[2] > kMaxWindowValue) {
    return context.InvalidArgs("output shape ", ShapeToString(shape),
                               " is too large");
  }
  // Tap tables hold at most out * kernel entries per axis.
  if (shape[1] * kernel_h > kMaxWindowValue ||
      shape[2] * kernel_w > kMaxWindowValue) {
    return context.InvalidArgs("output shape ", ShapeToString(shape),
                               " with kernel ", kernel_h, "x", kernel_w,
                               " is too large");
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus CheckNhwc(const OpContext &context) {
  int data_format = 1;
  MACE_RETURN_IF_ERROR(context.args().GetInt("data_format", 1, &data_format));
  if (data_format == 2) {
    return context.Unsupported("data_format NCHW; only NHWC is supported");
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus CheckFloat4D(const OpContext &context, int index, const char *what) {
  MACE_RETURN_IF_ERROR(context.ExpectDtype(index, DT_FLOAT));
  MACE_RETURN_IF_ERROR(context.ExpectRank(index, 4));
  const Tensor &t = context.input(index);
  for (int64_t dim : t.shape()) {
    if (dim < 1 || dim > kMaxWindowValue) {
      return context.InvalidArgs(what, " '", t.name(),
                                 "' must have dims in [1, 2^31), has shape ",
                                 ShapeToString(t.shape()));
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ReadGroup(const OpContext &context, int64_t *group) {
  MACE_RETURN_IF_ERROR(context.args().GetInt("group", int64_t{1}, group));
  if (*group < 1) {
    return context.InvalidArgs("argument 'group' must be >= 1, is ", *group);
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus CheckBias(const OpContext &context, int index, int64_t channels) {
  MACE_RETURN_IF_ERROR(context.ExpectDtype(index, DT_FLOAT));
  const Tensor &bias = context.input(index);
  if (bias.rank() != 1 || bias.dim(0) != channels) {
    return context.InvalidArgs("bias '", bias.name(), "' must have shape [",
                               channels, "] (the output channels), has ",
                               ShapeToString(bias.shape()));
  }
  return MaceStatus::MACE_SUCCESS;
}

void ReadInputDims(const OpContext &context, ConvDims *dims) {
  const Tensor &input = context.input(0);
  dims->batch = input.dim(0);
  dims->in_h = input.dim(1);
  dims->in_w = input.dim(2);
  dims->in_c = input.dim(3);
}

MaceStatus ReadGroupedConvDims(const OpContext &context, ConvDims *dims) {
  ReadInputDims(context, dims);
  MACE_RETURN_IF_ERROR(ReadGroup(context, &dims->groups));
  const Tensor &filter = context.input(1);
  dims->out_c = filter.dim(0);
  dims->kernel_h = filter.dim(1);
  dims->kernel_w = filter.dim(2);
  const int64_t group = dims->groups;
  if (dims->in_c % group != 0 || dims->out_c % group != 0) {
    return context.InvalidArgs("argument 'group' = ", group,
                               " must divide the input channels (", dims->in_c,
                               ") and output channels (", dims->out_c, ")");
  }
  if (filter.dim(3) != dims->in_c / group) {
    return context.InvalidArgs(
        "filter '", filter.name(), "' has shape ",
        ShapeToString(filter.shape()), " ([Cout, Kh, Kw, Cin / group]), ",
        "its last dim must be input channels / group = ", dims->in_c / group);
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ReadDepthwiseConvDims(const OpContext &context, ConvDims *dims) {
  ReadInputDims(context, dims);
  const Tensor &filter = context.input(1);
  dims->kernel_h = filter.dim(0);
  dims->kernel_w = filter.dim(1);
  if (filter.dim(2) != dims->in_c) {
    return context.InvalidArgs(
        "filter '", filter.name(), "' has shape ",
        ShapeToString(filter.shape()),
        " ([Kh, Kw, C, multiplier]), its third dim must be the input ",
        "channels ", dims->in_c);
  }
  dims->out_c = dims->in_c * filter.dim(3);
  if (context.args().Has("group")) {
    int64_t group = 0;
    MACE_RETURN_IF_ERROR(ReadGroup(context, &group));
    if (group != dims->in_c) {
      return context.InvalidArgs("argument 'group' = ", group,
                                 " must equal the input channels ", dims->in_c);
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

namespace {

// The walk both reference convolutions share: for every output pixel of
// every image (rows shared among the threads), y_px = bias, then
// add_tap(x_px, tap, y_px) for each (row tap, column tap) pair, x_px the
// input pixel it reads and tap its kernel position kh * kernel_w + kw,
// then the activation.
template <typename AddTap>
void ConvByTaps(const ConvDims &d, const AxisTaps &rows, const AxisTaps &cols,
                const float *x, const float *bias, const Activation &act,
                const PReluSlope &slope, float *y, ThreadPool *pool,
                const AddTap &add_tap) {
  // One task = one output row of one image; each writes only its own row.
  pool->ParallelFor(0, d.batch * d.out_h, 1, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / d.out_h;
      const int64_t oh = row % d.out_h;
      const float *x_n = x + n * d.in_h * d.in_w * d.in_c;
      for (int64_t ow = 0; ow < d.out_w; ++ow) {
        float *y_px = y + (row * d.out_w + ow) * d.out_c;
        for (int64_t oc = 0; oc < d.out_c; ++oc) {
          y_px[oc] = bias != nullptr ? bias[oc] : 0.0f;
        }
        for (int64_t r = rows.begin[oh]; r < rows.begin[oh + 1]; ++r) {
          for (int64_t c = cols.begin[ow]; c < cols.begin[ow + 1]; ++c) {
            add_tap(x_n + (rows.input[r] * d.in_w + cols.input[c]) * d.in_c,
                    rows.kernel[r] * d.kernel_w + cols.kernel[c], y_px);
          }
        }
        ActivateInPlaceWithSlope(act, slope, d.out_c, y_px, d.out_c);
      }
    }
  });
}

}  // namespace

void GroupedConvByTaps(const ConvDims &d, const AxisTaps &rows,
                       const AxisTaps &cols, const float *x, const float *w,
                       const float *bias, const Activation &act, float *y,
                       ThreadPool *pool, const PReluSlope &slope) {
  const int64_t in_per_group = d.in_c / d.groups;
  const int64_t out_per_group = d.out_c / d.groups;
  const int64_t w_oc_stride = d.kernel_h * d.kernel_w * in_per_group;
  ConvByTaps(d, rows, cols, x, bias, act, slope, y, pool,
             [&](const float *x_px, int64_t tap, float *y_px) {
               const float *w_tap = w + tap * in_per_group;
               for (int64_t g = 0; g < d.groups; ++g) {
                 const float *x_g = x_px + g * in_per_group;
                 const int64_t oc_end = (g + 1) * out_per_group;
                 for (int64_t oc = g * out_per_group; oc < oc_end; ++oc) {
                   const float *w_oc = w_tap + oc * w_oc_stride;
                   float acc = 0.0f;
                   for (int64_t ic = 0; ic < in_per_group; ++ic) {
                     acc += x_g[ic] * w_oc[ic];
                   }
                   y_px[oc] += acc;
                 }
               }
             });
}

void DepthwiseConvByTaps(const ConvDims &d, const AxisTaps &rows,
                         const AxisTaps &cols, const float *x, const float *w,
                         const float *bias, const Activation &act, float *y,
                         ThreadPool *pool, const PReluSlope &slope) {
  const int64_t multiplier = d.out_c / d.in_c;
  ConvByTaps(d, rows, cols, x, bias, act, slope, y, pool,
             [&](const float *x_px, int64_t tap, float *y_px) {
               // Filter and output share the [channel, multiplier] order, so
               // one tap is a contiguous multiply-add over out_c values.
               const float *w_tap = w + tap * d.out_c;
               for (int64_t ic = 0; ic < d.in_c; ++ic) {
                 const float xv = x_px[ic];
                 for (int64_t m = 0; m < multiplier; ++m) {
                   y_px[ic * multiplier + m] += xv * w_tap[ic * multiplier + m];
                 }
               }
             });
}

MaceStatus PrepareForwardWindow(OpContext *context, ConvDims *dims,
                                Window2D *window, Pads2D *pads) {
  MACE_RETURN_IF_ERROR(ParseWindow2D(*context, window));
  MACE_RETURN_IF_ERROR(
      CheckWindowRange(*context, *window, dims->kernel_h, dims->kernel_w));
  MACE_RETURN_IF_ERROR(ComputeWindowOutput(
      *context, *window, dims->in_h, dims->in_w, dims->kernel_h,
      dims->kernel_w, &dims->out_h, &dims->out_w, pads));
  const Shape out_shape = {dims->batch, dims->out_h, dims->out_w,
                           dims->out_c};
  MACE_RETURN_IF_ERROR(
      CheckOutputSize(*context, out_shape, dims->kernel_h, dims->kernel_w));
  Tensor *output = context->output(0);
  output->set_dtype(DT_FLOAT);
  output->set_shape(out_shape);
  return MaceStatus::MACE_SUCCESS;
}

void BuildForwardTaps(const ConvDims &dims, const Window2D &window,
                      const Pads2D &pads, AxisTaps *rows, AxisTaps *cols) {
  BuildWindowTaps(dims.out_h, dims.in_h, dims.kernel_h, window.stride_h,
                  window.dilation_h, pads.top, rows);
  BuildWindowTaps(dims.out_w, dims.in_w, dims.kernel_w, window.stride_w,
                  window.dilation_w, pads.left, cols);
}

}  // namespace mace
