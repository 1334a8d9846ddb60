// Checks shared by the dense and normalization ops (FullyConnected, MatMul,
// BatchNorm, BiasAdd, Softmax, LayerNorm, InstanceNorm, LocalResponseNorm):
// layout, axis arguments and per-channel parameter vectors.

#ifndef MACE_OPS_COMMON_DENSE_UTIL_H_
#define MACE_OPS_COMMON_DENSE_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "mace/core/operation.h"

namespace mace {

// These ops read NHWC data with channels last; MACE marks NCHW ops with
// the int argument `data_format` = 2.
inline MaceStatus RejectNchw(const OpContext &context) {
  int64_t data_format = 0;
  MACE_RETURN_IF_ERROR(
      context.args().GetInt("data_format", int64_t{0}, &data_format));
  if (data_format == 2) {
    return context.Unsupported(
        "argument 'data_format' = 2 (NCHW) is not supported; data is NHWC");
  }
  return MaceStatus::MACE_SUCCESS;
}

// Every input of these ops is float32.
inline MaceStatus ExpectFloatInputs(const OpContext &context) {
  for (int i = 0; i < context.num_inputs(); ++i) {
    MACE_RETURN_IF_ERROR(context.ExpectDtype(i, DT_FLOAT));
  }
  return MaceStatus::MACE_SUCCESS;
}

// Maps an axis argument in [-rank, rank) to [0, rank).
inline MaceStatus NormalizeAxis(const OpContext &context, const char *arg_name,
                                int64_t axis, int rank, int *normalized) {
  if (axis < -rank || axis >= rank) {
    return context.InvalidArgs("argument '", arg_name, "' = ", axis,
                               " is out of range for an input of rank ", rank,
                               " (expected ", -rank, " to ", rank - 1, ")");
  }
  *normalized = static_cast<int>(axis < 0 ? axis + rank : axis);
  return MaceStatus::MACE_SUCCESS;
}

// Input `index` must be a 1-D vector of `size` values (one per channel).
inline MaceStatus ExpectVector(const OpContext &context, int index,
                               const char *what, int64_t size) {
  const Tensor &t = context.input(index);
  if (t.rank() != 1 || t.dim(0) != size) {
    return context.InvalidArgs(
        what, " (input ", index, " '", t.name(), "') must have shape [", size,
        "] to match the channel count, has shape ", ShapeToString(t.shape()));
  }
  return MaceStatus::MACE_SUCCESS;
}

// Reads a float argument that must be finite and >= 0 (epsilons).
inline MaceStatus GetNonNegativeFloat(const OpContext &context,
                                      const char *arg_name, float default_value,
                                      float *value) {
  MACE_RETURN_IF_ERROR(context.args().GetFloat(arg_name, default_value, value));
  if (!std::isfinite(*value) || *value < 0.0f) {
    return context.InvalidArgs("argument '", arg_name, "' = ", *value,
                               " must be finite and >= 0");
  }
  return MaceStatus::MACE_SUCCESS;
}

// Input `index` must have a shape whose element count, and the product of
// any subset of its dims (ignoring zeros), fits in int64, so that the ops
// can multiply dims freely.
inline MaceStatus ExpectCountableShape(const OpContext &context, int index) {
  const Tensor &t = context.input(index);
  Shape nonzero = t.shape();
  for (int64_t &d : nonzero) d = d == 0 ? 1 : d;
  if (ShapeElementCount(nonzero) < 0) {
    return context.InvalidArgs("input ", index, " '", t.name(),
                               "' has an invalid shape ",
                               ShapeToString(t.shape()));
  }
  return MaceStatus::MACE_SUCCESS;
}

// Input `index` must have at least `min_rank` dims and a countable shape.
inline MaceStatus ExpectMinRank(const OpContext &context, int index,
                                int min_rank) {
  const Tensor &t = context.input(index);
  if (t.rank() < min_rank) {
    return context.InvalidArgs("input ", index, " '", t.name(),
                               "' must have rank >= ", min_rank, ", has shape ",
                               ShapeToString(t.shape()));
  }
  return ExpectCountableShape(context, index);
}

// Items per ParallelFor chunk when each item costs `work_per_item` basic
// operations: about 2048 operations per chunk repay handing it to a worker.
inline int64_t GrainFor(int64_t work_per_item) {
  return std::max<int64_t>(1, 2048 / std::max<int64_t>(1, work_per_item));
}

}  // namespace mace

#endif  // MACE_OPS_COMMON_DENSE_UTIL_H_
