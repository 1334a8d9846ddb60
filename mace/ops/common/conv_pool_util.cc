#include "mace/ops/common/conv_pool_util.h"

#include <algorithm>

namespace mace {
namespace {

MaceStatus ReadPair(const OpContext &context, const char *name,
                    int64_t *first, int64_t *second) {
  std::vector<int64_t> values;
  MACE_RETURN_IF_ERROR(context.args().GetInts(name, {1, 1}, &values));
  if (values.size() != 2 || values[0] < 1 || values[1] < 1) {
    return context.InvalidArgs("argument '", name,
                               "' must be two positive values [h, w]");
  }
  *first = values[0];
  *second = values[1];
  return MaceStatus::MACE_SUCCESS;
}

// Output size along one axis; -1 when the window does not fit.
int64_t AxisOutput(int64_t in, int64_t pad_begin, int64_t pad_end,
                   int64_t extent, int64_t stride, bool ceil_mode) {
  const int64_t span = in + pad_begin + pad_end - extent;
  if (span < 0) return -1;
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // As in Caffe and PyTorch: the last window must start inside the input
  // or the leading pad, not entirely in the trailing pad.
  if (ceil_mode && out > 1 && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

}  // namespace

MaceStatus ParseWindow2D(const OpContext &context, Window2D *window) {
  const OpArgs &args = context.args();
  MACE_RETURN_IF_ERROR(
      ReadPair(context, "strides", &window->stride_h, &window->stride_w));
  MACE_RETURN_IF_ERROR(ReadPair(context, "dilations", &window->dilation_h,
                                &window->dilation_w));
  int padding = 0;
  MACE_RETURN_IF_ERROR(args.GetInt("padding", 0, &padding));
  if (padding < 0 || padding > 2) {
    return context.InvalidArgs("argument 'padding' must be 0 (VALID), ",
                               "1 (SAME) or 2 (FULL), is ", padding);
  }
  window->padding = static_cast<PaddingType>(padding);
  MACE_RETURN_IF_ERROR(
      args.GetInts("padding_values", std::vector<int64_t>{},
                   &window->explicit_pads));
  const size_t n = window->explicit_pads.size();
  if (n != 0 && n != 2 && n != 4) {
    return context.InvalidArgs(
        "argument 'padding_values' must have 2 or 4 values, has ", n);
  }
  for (int64_t pad : window->explicit_pads) {
    if (pad < 0) {
      return context.InvalidArgs("argument 'padding_values' is negative");
    }
  }
  int round_mode = 0;
  MACE_RETURN_IF_ERROR(args.GetInt("round_mode", 0, &round_mode));
  window->ceil_mode = round_mode == 1;
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ComputeWindowOutput(const OpContext &context,
                               const Window2D &window, int64_t in_h,
                               int64_t in_w, int64_t kernel_h,
                               int64_t kernel_w, int64_t *out_h,
                               int64_t *out_w, Pads2D *pads) {
  const int64_t extent_h = (kernel_h - 1) * window.dilation_h + 1;
  const int64_t extent_w = (kernel_w - 1) * window.dilation_w + 1;
  const std::vector<int64_t> &ep = window.explicit_pads;
  if (ep.size() == 4) {
    *pads = Pads2D{ep[0], ep[1], ep[2], ep[3]};
  } else if (ep.size() == 2) {
    *pads = Pads2D{ep[0] / 2, ep[1] / 2, ep[0] - ep[0] / 2,
                   ep[1] - ep[1] / 2};
  } else if (window.padding == PaddingType::kSame) {
    const int64_t oh = (in_h + window.stride_h - 1) / window.stride_h;
    const int64_t ow = (in_w + window.stride_w - 1) / window.stride_w;
    const int64_t pad_h =
        std::max<int64_t>((oh - 1) * window.stride_h + extent_h - in_h, 0);
    const int64_t pad_w =
        std::max<int64_t>((ow - 1) * window.stride_w + extent_w - in_w, 0);
    *pads = Pads2D{pad_h / 2, pad_w / 2, pad_h - pad_h / 2,
                   pad_w - pad_w / 2};
  } else if (window.padding == PaddingType::kFull) {
    *pads = Pads2D{extent_h - 1, extent_w - 1, extent_h - 1, extent_w - 1};
  } else {
    *pads = Pads2D{};
  }
  *out_h = AxisOutput(in_h, pads->top, pads->bottom, extent_h,
                      window.stride_h, window.ceil_mode);
  *out_w = AxisOutput(in_w, pads->left, pads->right, extent_w,
                      window.stride_w, window.ceil_mode);
  if (*out_h < 1 || *out_w < 1) {
    return context.InvalidArgs("window ", kernel_h, "x", kernel_w,
                               " (dilated ", extent_h, "x", extent_w,
                               ") does not fit input ", in_h, "x", in_w,
                               " with pads [", pads->top, ",", pads->left,
                               ",", pads->bottom, ",", pads->right, "]");
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace mace
