// Small helpers shared by the shape and elementwise op families (Eltwise,
// Reduce, ArgMax, Concat, Split, Stack, Gather, ...): axis arguments, the
// NHWC-only rule, and the row copies that concatenate and split.

#ifndef MACE_OPS_COMMON_ELT_UTIL_H_
#define MACE_OPS_COMMON_ELT_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mace/core/operation.h"

namespace mace {

// These ops work on NHWC (or layout-free) data only; MACE marks NCHW data
// with the int argument data_format = 2.
inline MaceStatus ExpectNotNchw(const OpContext &context) {
  int data_format = 0;
  MACE_RETURN_IF_ERROR(context.args().GetInt("data_format", 0, &data_format));
  if (data_format == 2) {
    return context.Unsupported("data_format NCHW (2) is not supported; ",
                               "CPU ops take NHWC data");
  }
  return MaceStatus::MACE_SUCCESS;
}

// Maps `axis` in [-rank, rank) to [0, rank); an error naming `what` (the
// argument or input that gave it) when out of range.
inline MaceStatus NormalizeAxis(const OpContext &context, const char *what,
                                int64_t axis, int rank, int *normalized) {
  if (rank == 0) {
    return context.InvalidArgs(what, " = ", axis,
                               " but the input is a scalar (rank 0)");
  }
  if (axis < -rank || axis >= rank) {
    return context.InvalidArgs(what, " = ", axis, " is out of range [", -rank,
                               ", ", rank - 1, "]");
  }
  *normalized = static_cast<int>(axis < 0 ? axis + rank : axis);
  return MaceStatus::MACE_SUCCESS;
}

// Product of shape[begin, end).
inline int64_t DimProduct(const Shape &shape, int begin, int end) {
  int64_t product = 1;
  for (int i = begin; i < end; ++i) product *= shape[i];
  return product;
}

// Each tensor viewed as `rows` rows: output 0's row r is the concatenation
// of row r of every input, input i's rows being row_bytes[i] long. For
// Concat and Stack. Inputs their producers wrote in place
// (OpContext::input_in_place) are skipped.
inline void ConcatRows(OpContext *context, int64_t rows,
                       const std::vector<int64_t> &row_bytes) {
  int64_t out_row_bytes = 0;
  bool any_to_copy = false;
  for (size_t i = 0; i < row_bytes.size(); ++i) {
    out_row_bytes += row_bytes[i];
    any_to_copy =
        any_to_copy ||
        (row_bytes[i] > 0 && !context->input_in_place(static_cast<int>(i)));
  }
  if (!any_to_copy) return;
  uint8_t *out = static_cast<uint8_t *>(context->output(0)->raw_mutable_data());
  const int64_t grain =
      std::max<int64_t>(1, 16384 / std::max<int64_t>(out_row_bytes, 1));
  context->thread_pool()->ParallelFor(
      0, rows, grain, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          uint8_t *dst = out + r * out_row_bytes;
          for (size_t i = 0; i < row_bytes.size(); ++i) {
            if (row_bytes[i] == 0 ||
                context->input_in_place(static_cast<int>(i))) {
              dst += row_bytes[i];
              continue;
            }
            const uint8_t *src = static_cast<const uint8_t *>(
                context->input(static_cast<int>(i)).raw_data());
            std::memcpy(dst, src + r * row_bytes[i], row_bytes[i]);
            dst += row_bytes[i];
          }
        }
      });
}

// The inverse of ConcatRows: output i's row r is the i-th piece of input
// 0's row r, pieces being row_bytes[i] long. For Split and Unstack. Output
// 0's rows lie first_output_pitch bytes apart when it is not 0 (inside a
// joined tensor).
inline void SplitRows(OpContext *context, int64_t rows,
                      const std::vector<int64_t> &row_bytes,
                      int64_t first_output_pitch = 0) {
  int64_t in_row_bytes = 0;
  for (int64_t b : row_bytes) in_row_bytes += b;
  const uint8_t *in =
      static_cast<const uint8_t *>(context->input(0).raw_data());
  const int64_t grain =
      std::max<int64_t>(1, 16384 / std::max<int64_t>(in_row_bytes, 1));
  context->thread_pool()->ParallelFor(
      0, rows, grain, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const uint8_t *src = in + r * in_row_bytes;
          for (size_t i = 0; i < row_bytes.size(); ++i) {
            if (row_bytes[i] == 0) continue;
            uint8_t *dst = static_cast<uint8_t *>(
                context->output(static_cast<int>(i))->raw_mutable_data());
            const int64_t pitch = i == 0 && first_output_pitch > 0
                                      ? first_output_pitch
                                      : row_bytes[i];
            std::memcpy(dst + r * pitch, src, row_bytes[i]);
            src += row_bytes[i];
          }
        }
      });
}

// Float32 or int32, the dtypes of the data-movement ops.
inline MaceStatus ExpectFloatOrInt32(const OpContext &context, int index) {
  const Tensor &t = context.input(index);
  if (t.dtype() != DT_FLOAT && t.dtype() != DT_INT32) {
    return context.InvalidArgs("input ", index, " '", t.name(),
                               "' must be DT_FLOAT or DT_INT32, is ",
                               DataTypeName(t.dtype()));
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace mace

#endif  // MACE_OPS_COMMON_ELT_UTIL_H_
