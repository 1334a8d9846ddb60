// Benchmarks of Softmax along the last axis (attention-like rows; the
// 1 x 1000 classifier head is MACE_BM_SOFTMAX_1_1000_float_CPU in
// dw_benchmark.cc) and along a middle axis, and of ResizeBilinear /
// ResizeNearestNeighbor (2x upsampling as in FPN / segmentation heads; 3
// channels for the tail path). Names follow MACE's:
// MACE_BM_SOFTMAX_<shape>[_AXIS<a>]_float_CPU,
// MACE_BM_RESIZE_<BILINEAR|NEAREST>_<N_C_H_W>_<out_h>_<out_w>_float_CPU.
// GMACPS counts output elements.
//
// Environment: MACE_VECTOR_ISA (read by dw_benchmark.cc) and
// MACE_BM_THREADS as bench_util.h says.

#include <functional>
#include <string>
#include <vector>

#include "benchmarks/ops/bench_util.h"

namespace mace {
namespace bench {
namespace {

// Softmax of `shape` along `axis` (-1: the last, left out of the name).
void RegisterSoftmaxAlong(const std::vector<int64_t> &shape, int axis) {
  const std::string name =
      "MACE_BM_SOFTMAX_" + JoinDims(shape) +
      (axis < 0 ? std::string() : "_AXIS" + std::to_string(axis)) +
      "_float_CPU";
  RegisterOneOp(
      name, "Softmax", shape, shape,
      [axis](OperatorDef *op) { ModelBuilder::AddIntArg(op, "axis", axis); },
      Count(shape));
}

// Resize of NHWC [1, h, w, c] to [1, out_h, out_w, c] (TensorFlow's
// half_pixel_centers mapping).
void RegisterResize(bool nearest, int64_t c, int64_t h, int64_t w,
                    int64_t out_h, int64_t out_w) {
  const std::string name = std::string("MACE_BM_RESIZE_") +
                           (nearest ? "NEAREST_" : "BILINEAR_") +
                           JoinDims({1, c, h, w, out_h, out_w}) + "_float_CPU";
  RegisterOneOp(
      name, nearest ? "ResizeNearestNeighbor" : "ResizeBilinear", {1, h, w, c},
      {1, out_h, out_w, c},
      [out_h, out_w](OperatorDef *op) {
        ModelBuilder::AddIntsArg(op, "size", {out_h, out_w});
        ModelBuilder::AddIntArg(op, "half_pixel_centers", 1);
      },
      out_h * out_w * c);
}

const bool kRegistered = [] {
  RegisterSoftmaxAlong({1, 8, 128, 128}, -1);
  RegisterSoftmaxAlong({1, 8, 128, 128}, 2);
  RegisterSoftmaxAlong({1, 21, 64, 64}, 1);
  RegisterResize(false, 32, 56, 56, 112, 112);
  RegisterResize(true, 32, 56, 56, 112, 112);
  RegisterResize(false, 3, 128, 128, 256, 256);
  RegisterResize(true, 3, 128, 128, 256, 256);
  return true;
}();

}  // namespace
}  // namespace bench
}  // namespace mace
