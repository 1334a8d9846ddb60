// The direct depthwise kernels (mace/kernels/depthwise.h) as the ops that
// run them prepare them: DepthwiseConv2d, and PointwiseDepthwiseConv2d
// over the strips of its pointwise output.

#ifndef MACE_OPS_COMMON_DEPTHWISE_UTIL_H_
#define MACE_OPS_COMMON_DEPTHWISE_UTIL_H_

#include "mace/core/aligned_buffer.h"
#include "mace/core/operation.h"
#include "mace/kernels/depthwise.h"
#include "mace/ops/common/conv_pool_util.h"
#include "mace/ops/common/conv_util.h"

namespace mace {

// The kernels' shape of a depthwise convolution of multiplier 1 (dims:
// in_c channels), with the window and pads that gave dims' output size;
// the weight stride left 0 (the filter as the model lays it out).
kernels::DepthwiseShape MakeDepthwiseShape(const ConvDims &dims,
                                           const Window2D &window,
                                           const Pads2D &pads);

// A constant filter copied with the kernels' preferred tap stride, where
// that is not the model's, in the op's packed weight store (so that the
// packed weight cache keeps it too), else in `owned`. Sets *laid to the
// copy and shape->weight_stride to its stride, or leaves *laid null (the
// filter as it is) when no copy is needed or the op will not run.
MaceStatus LayDepthwiseFilter(const OpContext &context, const Tensor &filter,
                              kernels::DepthwiseShape *shape,
                              AlignedArray<float> *owned, const float **laid);

}  // namespace mace

#endif  // MACE_OPS_COMMON_DEPTHWISE_UTIL_H_
