#include "mace/ops/common/depthwise_util.h"

#include "mace/core/packed_weight_source.h"

namespace mace {

kernels::DepthwiseShape MakeDepthwiseShape(const ConvDims &dims,
                                           const Window2D &window,
                                           const Pads2D &pads) {
  kernels::DepthwiseShape shape;
  shape.batch = dims.batch;
  shape.in_h = dims.in_h;
  shape.in_w = dims.in_w;
  shape.channels = dims.in_c;
  shape.out_h = dims.out_h;
  shape.out_w = dims.out_w;
  shape.kernel_h = dims.kernel_h;
  shape.kernel_w = dims.kernel_w;
  shape.stride_h = window.stride_h;
  shape.stride_w = window.stride_w;
  shape.dilation_h = window.dilation_h;
  shape.dilation_w = window.dilation_w;
  shape.pad_top = pads.top;
  shape.pad_left = pads.left;
  shape.weight_stride = 0;
  return shape;
}

MaceStatus LayDepthwiseFilter(const OpContext &context, const Tensor &filter,
                              kernels::DepthwiseShape *shape,
                              AlignedArray<float> *owned, const float **laid) {
  *laid = nullptr;
  *owned = AlignedArray<float>();
  shape->weight_stride = 0;
  const int64_t stride = kernels::DepthwiseWeightStride(shape->channels);
  if (!context.will_run() || stride == shape->channels ||
      !filter.is_constant() || !filter.has_data()) {
    return MaceStatus::MACE_SUCCESS;
  }
  const int64_t taps = shape->kernel_h * shape->kernel_w;
  bool ready = false;
  float *copy =
      AcquirePackedFloats(context.packed_weights(), taps * stride, owned, &ready);
  if (copy == nullptr) {
    return context.OutOfResources("cannot allocate the re-laid copy of ",
                                  "filter '", filter.name(), "'");
  }
  if (!ready) {
    kernels::LayDepthwiseWeights(filter.data<float>(), taps, shape->channels,
                                 stride, copy);
  }
  *laid = copy;
  shape->weight_stride = stride;
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace mace
