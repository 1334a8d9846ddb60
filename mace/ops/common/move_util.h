// Helpers shared by the data-movement ops (Slice, StridedSlice, Transpose,
// Reverse, Crop, Pad, Reshape, DepthToSpace, ...): checks of layout and
// element type, reading int lists given as an argument or a constant input,
// axis normalisation, and one strided copy that covers slicing, transposing,
// reversing and cropping.

#ifndef MACE_OPS_COMMON_MOVE_UTIL_H_
#define MACE_OPS_COMMON_MOVE_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "mace/core/operation.h"
#include "mace/kernels/interleave.h"

namespace mace {

// Ops here read NHWC data only; a model that kept NCHW must be converted.
inline MaceStatus CheckNhwc(const OpContext &context) {
  int data_format = 0;
  MACE_RETURN_IF_ERROR(context.args().GetInt("data_format", 0, &data_format));
  if (data_format == 2) {
    return context.Unsupported(
        "argument 'data_format' = 2 (NCHW) is not supported: ops run on "
        "NHWC data");
  }
  return MaceStatus::MACE_SUCCESS;
}

// Input `index` must be float32, or int32 too when `allow_int32`.
inline MaceStatus ExpectFloatOrInt32(const OpContext &context, int index,
                                     bool allow_int32) {
  const DataType dtype = context.input(index).dtype();
  if (dtype == DT_FLOAT || (allow_int32 && dtype == DT_INT32)) {
    return MaceStatus::MACE_SUCCESS;
  }
  return context.InvalidArgs("input ", index, " '", context.input(index).name(),
                             "' must be ",
                             allow_int32 ? "float32 or int32" : "float32",
                             ", is ", DataTypeName(dtype));
}

// Values of a constant int32 input of rank 0 or 1 (axes, shapes, sizes).
inline MaceStatus ReadConstantInts(const OpContext &context, int index,
                                   const char *what,
                                   std::vector<int64_t> *values) {
  MACE_RETURN_IF_ERROR(context.ExpectConstant(index));
  MACE_RETURN_IF_ERROR(context.ExpectDtype(index, DT_INT32));
  const Tensor &t = context.input(index);
  if (t.rank() > 1) {
    return context.InvalidArgs(what, " input ", index, " '", t.name(),
                               "' must be 1-D, has shape ",
                               ShapeToString(t.shape()));
  }
  const int32_t *data = t.data<int32_t>();
  values->assign(data, data + t.size());
  return MaceStatus::MACE_SUCCESS;
}

// Maps `axis` in [-rank, rank) to [0, rank); `what` names it in errors.
inline MaceStatus NormalizeAxis(const OpContext &context, const char *what,
                                int64_t axis, int rank, int *normalized) {
  if (axis < -rank || axis >= rank) {
    return context.InvalidArgs(what, " ", axis, " is out of range for rank ",
                               rank, " (expected -", rank, " to ", rank - 1,
                               ")");
  }
  *normalized = static_cast<int>(axis < 0 ? axis + rank : axis);
  return MaceStatus::MACE_SUCCESS;
}

// Sets output 0's dtype and shape, refusing shapes whose element count does
// not fit int64 (huge paddings or sizes from a model file).
inline MaceStatus SetOutput(OpContext *context, DataType dtype,
                            const Shape &shape) {
  for (int64_t d : shape) {
    if (d < 0) {
      return context->InvalidArgs("computed output shape ",
                                  ShapeToString(shape), " has a negative dim");
    }
  }
  if (ShapeElementCount(shape) < 0) {
    return context->InvalidArgs("computed output shape ", ShapeToString(shape),
                                " is too large");
  }
  Tensor *output = context->output(0);
  output->set_dtype(dtype);
  output->set_shape(shape);
  return MaceStatus::MACE_SUCCESS;
}

// Row-major element strides of a shape.
inline std::vector<int64_t> RowMajorStrides(const Shape &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * shape[i + 1];
  }
  return strides;
}

// A strided view of an input: output element (i0, ..., ik) is input
// element base + sum_j i_j * steps[j]. Steps are in elements and may be
// negative (reversal) or any permutation of the input strides (transpose).
struct StridedView {
  Shape dims;
  std::vector<int64_t> steps;
  int64_t base = 0;
};

// Output rows per block of StridedCopy: a block reads kStridedBlock
// consecutive rows of every output column, so a transpose whose rows are
// contiguous in the input reads each column's sources in runs (a cache
// line of each) instead of element by element.
constexpr int64_t kStridedBlock = 16;

// Rows per block of StridedCopy when it interleaves three planes (an NCHW
// RGB input turned NHWC): 12 KiB of output a block, so that the pool's
// threads share a 224 x 224 image (49 blocks), which as one block of all
// its pixels went to one thread.
constexpr int64_t kInterleaveBlock = 1024;

// Up to this rank StridedCopy joins dims on the stack (Run allocates
// nothing); a view of higher rank is copied as it is.
constexpr int kMaxJoinedRank = 8;

// The dims and steps of a StridedView after JoinContiguousDims.
struct JoinedDims {
  int rank = 0;
  int64_t dims[kMaxJoinedRank];
  int64_t steps[kMaxJoinedRank];
};

// Sets `joined` to the view's dims and steps with the dims of one dropped
// and each pair of neighbours joined where the outer one's step spans the
// inner one (steps[a] == dims[a + 1] * steps[a + 1]): an NHWC -> NCHW
// transpose is then [C, HW] from [HW, C], one 2-D transpose instead of a
// gather per row. A contiguous last dim is not joined with the one before
// it, so that a plain copy stays cut in rows for the threads; with
// `keep_last` the last dim is left as it is (output rows written apart
// from each other). False, `joined` unset, when the view's rank is above
// kMaxJoinedRank.
inline bool JoinContiguousDims(const StridedView &view, bool keep_last,
                               JoinedDims *joined) {
  const int rank = static_cast<int>(view.dims.size());
  if (rank > kMaxJoinedRank) return false;
  // The dim that ends up last: dims of one after it are dropped.
  int last_index = rank - 1;
  while (!keep_last && last_index > 0 && view.dims[last_index] == 1) {
    --last_index;
  }
  int &r = joined->rank;
  r = 0;
  for (int a = 0; a < rank; ++a) {
    const bool last = a == last_index;
    const int64_t dim = view.dims[a];
    const int64_t step = view.steps[a];
    const bool kept = last && keep_last;
    if (dim == 1 && !kept) continue;
    const bool joins = r > 0 && !kept && !(last && step == 1) &&
                       joined->steps[r - 1] == dim * step;
    if (joins) {
      joined->dims[r - 1] *= dim;
      joined->steps[r - 1] = step;
    } else {
      joined->dims[r] = dim;
      joined->steps[r] = step;
      ++r;
    }
  }
  return true;
}

// Copies the view into the row-major output, in blocks of rows of the last
// two dims (after JoinContiguousDims) shared among the pool's threads. Output
// rows along the last dim lie out_row_stride elements apart (0: packed, the dim
// itself), as inside a tensor joined in place
// (OpContext::output_row_stride). Each block finds its input offset once,
// so the inner loops are plain strided copies. Float blocks whose rows are
// contiguous in the input and whose columns are not (transposes: NCHW <->
// NHWC) go through kernels::TransposeRows, three planes as the inner dim
// (an NCHW RGB input turned NHWC) through kernels::InterleaveThreePlanes in
// blocks of kInterleaveBlock rows; their element-by-element loop took 1 ms
// for a 32 x 112 x 112 NCHW -> NHWC transpose and 2.4 ms for 64 x 112 x
// 112 back.

template <typename T>
void StridedCopy(const StridedView &view, const T *in, T *out, ThreadPool *pool,
                 int64_t out_row_stride = 0) {
  for (int64_t d : view.dims) {
    if (d == 0) return;
  }
  const bool keep_last = out_row_stride > 0 && !view.dims.empty() &&
                         out_row_stride != view.dims.back();
  JoinedDims joined;
  const bool is_joined = JoinContiguousDims(view, keep_last, &joined);
  const int rank = is_joined ? joined.rank : static_cast<int>(view.dims.size());
  const int64_t *dims = is_joined ? joined.dims : view.dims.data();
  const int64_t *steps = is_joined ? joined.steps : view.steps.data();
  if (rank == 0) {
    out[0] = in[view.base];
    return;
  }
  // The last two dims form a 2-D block (rows x inner); the dims before them
  // are walked with division once per block, never per element.
  const int64_t inner = dims[rank - 1];
  const int64_t inner_step = steps[rank - 1];
  const int64_t rows = rank >= 2 ? dims[rank - 2] : 1;
  const int64_t row_step = rank >= 2 ? steps[rank - 2] : 0;
  const int outer_rank = std::max(rank - 2, 0);
  int64_t outer = 1;
  for (int k = 0; k < outer_rank; ++k) outer *= dims[k];
  const int64_t out_stride = out_row_stride > 0 ? out_row_stride : inner;
  const bool transposes =
      std::is_same_v<T, float> && row_step == 1 && inner_step != 1;
  const bool interleaves = transposes && inner == 3 && out_stride == inner;
  const int64_t block_rows = interleaves ? kInterleaveBlock : kStridedBlock;
  const int64_t row_blocks = (rows + block_rows - 1) / block_rows;
  auto copy_blocks = [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t index = task / row_blocks;
      const int64_t row0 = task % row_blocks * block_rows;
      const int64_t count = std::min(block_rows, rows - row0);
      int64_t offset = view.base + row0 * row_step;
      int64_t rest = index;
      for (int k = outer_rank - 1; k >= 0; --k) {
        offset += (rest % dims[k]) * steps[k];
        rest /= dims[k];
      }
      const T *src = in + offset;
      T *dst = out + (index * rows + row0) * out_stride;
      if constexpr (std::is_same_v<T, float>) {
        if (interleaves) {
          kernels::InterleaveThreePlanes(src, inner_step, count, dst);
          continue;
        }
        if (transposes) {
          kernels::TransposeRows(src, inner_step, count, inner, dst,
                                 out_stride);
          continue;
        }
      }
      if (inner_step == 1) {
        for (int64_t r = 0; r < count; ++r) {
          std::memcpy(dst + r * out_stride, src + r * row_step,
                      inner * sizeof(T));
        }
      } else {
        for (int64_t j = 0; j < inner; ++j) {
          const T *column = src + j * inner_step;
          for (int64_t r = 0; r < count; ++r) {
            dst[r * out_stride + j] = column[r * row_step];
          }
        }
      }
    }
  };
  const int64_t per_task = std::min(block_rows, rows) * inner;
  pool->ParallelFor(0, outer * row_blocks,
                    std::max<int64_t>(1, 16384 / per_task), copy_blocks);
}

// StridedCopy from input 0 to output 0 of `context`, by their dtype (float
// or int32; both are moved bit for bit), output rows as far apart as the
// context says.
inline void StridedCopyOp(const StridedView &view, OpContext *context) {
  const Tensor &input = context->input(0);
  Tensor *output = context->output(0);
  const int64_t out_row_stride = context->output_row_stride();
  if (input.dtype() == DT_INT32) {
    StridedCopy(view, input.data<int32_t>(), output->mutable_data<int32_t>(),
                context->thread_pool(), out_row_stride);
  } else {
    StridedCopy(view, input.data<float>(), output->mutable_data<float>(),
                context->thread_pool(), out_row_stride);
  }
}

// An op whose output is a strided view of its input (Transpose, Reverse,
// Crop, DepthToSpace, SpaceToDepth): its Prepare sets view(), Run copies
// that view of input 0 to output 0.
class StridedViewOp : public Operation {
 public:
  MaceStatus Run(OpContext *context) override {
    StridedCopyOp(view_, context);
    return MaceStatus::MACE_SUCCESS;
  }

 protected:
  StridedView &view() { return view_; }

 private:
  StridedView view_;
};

}  // namespace mace

#endif  // MACE_OPS_COMMON_MOVE_UTIL_H_
