// Output sizes and paddings of sliding-window ops (Conv2D, Pooling,
// depthwise), from MACE's arguments:
//   `padding`        VALID=0, SAME=1 (TF: pad so out = ceil(in/stride),
//                    extra pad at the end), FULL=2 (pad dk-1 on each side);
//   `padding_values` explicit pads, overriding `padding`: two values
//                    [total_h, total_w] as MACE writes them (top = total/2),
//                    or four [top, left, bottom, right] (ONNX order);
//   `strides`, `dilations` [h, w], default [1, 1];
//   `round_mode`     FLOOR=0 (default) or CEIL=1 output size (Caffe pooling).

#ifndef MACE_OPS_COMMON_CONV_POOL_UTIL_H_
#define MACE_OPS_COMMON_CONV_POOL_UTIL_H_

#include <cstdint>
#include <vector>

#include "mace/core/operation.h"

namespace mace {

enum class PaddingType { kValid = 0, kSame = 1, kFull = 2 };

struct Window2D {
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  PaddingType padding = PaddingType::kValid;
  std::vector<int64_t> explicit_pads;  // empty, 2 or 4 values
  bool ceil_mode = false;
};

struct Pads2D {
  int64_t top = 0, left = 0, bottom = 0, right = 0;
};

// Reads strides, dilations, padding, padding_values, round_mode.
MaceStatus ParseWindow2D(const OpContext &context, Window2D *window);

// Output height and width and the pads that give them, for a kernel of
// kernel_h x kernel_w on an input of in_h x in_w. Errors when the window
// does not fit (output size < 1) or a pad is negative.
MaceStatus ComputeWindowOutput(const OpContext &context,
                               const Window2D &window, int64_t in_h,
                               int64_t in_w, int64_t kernel_h,
                               int64_t kernel_w, int64_t *out_h,
                               int64_t *out_w, Pads2D *pads);

}  // namespace mace

#endif  // MACE_OPS_COMMON_CONV_POOL_UTIL_H_
