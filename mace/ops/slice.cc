// Slice (ONNX semantics) and StridedSlice (TensorFlow semantics). Both come
// down to a strided view of the input, a first index and a step per axis,
// worked out in Prepare and copied out by StridedCopy. Float32 and int32.
//
// Slice args: `starts`, `ends` (ints, required, same length), `axes` (ints,
// default 0..len-1, negative counts from the back, no repeats), `steps`
// (ints, default 1, non-zero, may be negative). Starts and ends are clamped
// as ONNX does, so INT64_MAX / INT64_MIN mean "to the end" / "to the start".
//
// StridedSlice inputs: x and either (begin, end[, strides]) as constant
// int32 1-D tensors, or args `begin`, `end`, `strides` (ints). Args
// `begin_mask`, `end_mask`, `ellipsis_mask`, `new_axis_mask`,
// `shrink_axis_mask` as tf.strided_slice. Arg `slice` (bool, MACE's name
// for a converted tf.slice): the end values are sizes, -1 meaning "to the
// end", and masks and strides are not used.

#include <algorithm>
#include <vector>

#include "mace/ops/common/move_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

// A step larger than the dim visits one element, as a step of exactly the
// dim does; clamping keeps step * stride and the counts below in range.
int64_t ClampStep(int64_t step, int64_t dim) {
  const int64_t limit = std::max<int64_t>(dim, 1);
  if (step > limit) return limit;
  if (step < -limit) return -limit;
  return step;
}

// First index and element count along one axis of an ONNX slice; `step`
// is already clamped.
void OnnxSliceRange(int64_t start, int64_t end, int64_t step, int64_t dim,
                    int64_t *first, int64_t *count) {
  *first = 0;
  *count = 0;
  if (dim == 0) return;
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::min(std::max<int64_t>(start, 0), dim);
    end = std::min(std::max<int64_t>(end, 0), dim);
    if (end > start) *count = (end - start - 1) / step + 1;
  } else {
    start = std::min(std::max<int64_t>(start, 0), dim - 1);
    end = std::min(std::max<int64_t>(end, -1), dim - 1);
    if (start > end) *count = (start - end - 1) / -step + 1;
  }
  *first = start;
}

class SliceOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 1));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(CheckNhwc(*context));
    MACE_RETURN_IF_ERROR(ExpectFloatOrInt32(*context, 0, true));
    const OpArgs &args = context->args();
    if (!args.Has("starts") || !args.Has("ends")) {
      return context->InvalidArgs("arguments 'starts' and 'ends' are required");
    }
    std::vector<int64_t> starts, ends, axes, steps;
    MACE_RETURN_IF_ERROR(args.GetInts("starts", {}, &starts));
    MACE_RETURN_IF_ERROR(args.GetInts("ends", {}, &ends));
    MACE_RETURN_IF_ERROR(args.GetInts("axes", {}, &axes));
    MACE_RETURN_IF_ERROR(args.GetInts("steps", {}, &steps));
    const size_t n = starts.size();
    if (!args.Has("axes")) {
      for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (!args.Has("steps")) steps.assign(n, 1);
    if (ends.size() != n || axes.size() != n || steps.size() != n) {
      return context->InvalidArgs(
          "arguments 'starts', 'ends', 'axes', 'steps' must have the same "
          "length, have ",
          n, ", ", ends.size(), ", ", axes.size(), ", ", steps.size());
    }
    const Tensor &input = context->input(0);
    const int rank = input.rank();
    view_.dims = input.shape();
    view_.steps = RowMajorStrides(input.shape());
    view_.base = 0;
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < n; ++i) {
      int axis = 0;
      MACE_RETURN_IF_ERROR(NormalizeAxis(*context, "argument 'axes' value",
                                         axes[i], rank, &axis));
      if (seen[axis]) {
        return context->InvalidArgs("argument 'axes' repeats axis ", axis);
      }
      seen[axis] = true;
      if (steps[i] == 0) {
        return context->InvalidArgs(
            "argument 'steps' has a zero step for "
            "axis ",
            axis);
      }
      const int64_t step = ClampStep(steps[i], input.dim(axis));
      int64_t first = 0, count = 0;
      OnnxSliceRange(starts[i], ends[i], step, input.dim(axis), &first, &count);
      view_.base += first * view_.steps[axis];
      view_.steps[axis] *= step;
      view_.dims[axis] = count;
    }
    takes_last_axis_ = IsLastAxisRange(input.shape());
    return SetOutput(context, input.dtype(), view_.dims);
  }

  MaceStatus Run(OpContext *context) override {
    StridedCopyOp(view_, context);
    return MaceStatus::MACE_SUCCESS;
  }

  // StridedCopy writes any row stride, into a channel join as well.
  bool WritesStridedOutput() const override { return true; }

  bool TakesLastAxisRange(int output, int64_t *begin,
                          int64_t *end) const override {
    if (!takes_last_axis_ || output != 0) return false;
    *begin = view_.base;
    *end = view_.base + view_.dims.back();
    return true;
  }

 private:
  // Whether the view is a unit-step range of the last axis of an input of
  // `shape`, every other dim whole.
  bool IsLastAxisRange(const Shape &shape) const {
    if (shape.empty() || view_.steps != RowMajorStrides(shape)) return false;
    for (size_t d = 0; d + 1 < shape.size(); ++d) {
      if (view_.dims[d] != shape[d]) return false;
    }
    return true;
  }

  StridedView view_;
  bool takes_last_axis_ = false;
};

// The slice spec of tf.strided_slice after the ellipsis is expanded: one
// entry per input dim, plus where each output dim comes from.
struct DenseSpec {
  std::vector<int64_t> begin, end, strides;
  std::vector<bool> begin_masked, end_masked, shrink;
  // Per output dim before shrinking: an input dim, or kNewAxis / kShrink.
  std::vector<int> gather;
};
constexpr int kNewAxis = -1;
constexpr int kShrinkAxis = -2;

class StridedSliceOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(CheckNhwc(*context));
    MACE_RETURN_IF_ERROR(ExpectFloatOrInt32(*context, 0, true));
    std::vector<int64_t> begin, end, strides;
    MACE_RETURN_IF_ERROR(ReadSpec(*context, &begin, &end, &strides));
    bool is_slice = false;
    MACE_RETURN_IF_ERROR(context->args().GetBool("slice", false, &is_slice));
    const Tensor &input = context->input(0);
    view_.dims.clear();
    view_.steps.clear();
    view_.base = 0;
    Shape output_shape;
    if (is_slice) {
      MACE_RETURN_IF_ERROR(PrepareTfSlice(*context, begin, end));
      output_shape = view_.dims;
    } else {
      DenseSpec dense;
      MACE_RETURN_IF_ERROR(BuildDense(*context, begin, end, strides, &dense));
      MACE_RETURN_IF_ERROR(PrepareStrided(*context, dense, &output_shape));
    }
    return SetOutput(context, input.dtype(), output_shape);
  }

  MaceStatus Run(OpContext *context) override {
    StridedCopyOp(view_, context);
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  // begin / end / strides from constant inputs 1..3, or from args when the
  // op has one input. Missing strides are all 1.
  static MaceStatus ReadSpec(const OpContext &context,
                             std::vector<int64_t> *begin,
                             std::vector<int64_t> *end,
                             std::vector<int64_t> *strides) {
    MACE_RETURN_IF_ERROR(context.ExpectInputCount(1, 4));
    const bool from_args = context.num_inputs() == 1;
    if (from_args) {
      const OpArgs &args = context.args();
      if (!args.Has("begin") || !args.Has("end")) {
        return context.InvalidArgs(
            "needs inputs (x, begin, end[, strides]) or arguments 'begin' "
            "and 'end'");
      }
      MACE_RETURN_IF_ERROR(args.GetInts("begin", {}, begin));
      MACE_RETURN_IF_ERROR(args.GetInts("end", {}, end));
      MACE_RETURN_IF_ERROR(args.GetInts("strides", {}, strides));
      if (!args.Has("strides")) strides->assign(begin->size(), 1);
    } else {
      if (context.num_inputs() == 2) {
        return context.InvalidArgs(
            "needs inputs (x, begin, end[, strides]), got 2 inputs");
      }
      MACE_RETURN_IF_ERROR(ReadConstantInts(context, 1, "begin", begin));
      MACE_RETURN_IF_ERROR(ReadConstantInts(context, 2, "end", end));
      if (context.num_inputs() == 4) {
        MACE_RETURN_IF_ERROR(ReadConstantInts(context, 3, "strides", strides));
      } else {
        strides->assign(begin->size(), 1);
      }
    }
    if (end->size() != begin->size() || strides->size() != begin->size()) {
      return context.InvalidArgs(
          "begin, end and strides must have the same "
          "length, have ",
          begin->size(), ", ", end->size(), ", ", strides->size());
    }
    // Masks are 32-bit in TensorFlow, and one more bit may be needed for
    // the implicit trailing ellipsis.
    if (begin->size() > 31) {
      return context.InvalidArgs("begin has ", begin->size(),
                                 " values, at most 31 are supported");
    }
    return MaceStatus::MACE_SUCCESS;
  }

  // tf.slice: `sizes` are element counts, -1 meaning "the rest".
  MaceStatus PrepareTfSlice(const OpContext &context,
                            const std::vector<int64_t> &begin,
                            const std::vector<int64_t> &sizes) {
    const Tensor &input = context.input(0);
    if (static_cast<int>(begin.size()) != input.rank()) {
      return context.InvalidArgs(
          "with 'slice' set, begin must have one value per input dim (",
          input.rank(), "), has ", begin.size());
    }
    const std::vector<int64_t> strides = RowMajorStrides(input.shape());
    for (int i = 0; i < input.rank(); ++i) {
      const int64_t dim = input.dim(i);
      const bool begin_ok = begin[i] >= 0 && begin[i] <= dim;
      const int64_t size =
          sizes[i] == -1 && begin_ok ? dim - begin[i] : sizes[i];
      if (!begin_ok || size < 0 || size > dim - begin[i]) {
        return context.InvalidArgs("slice of dim ", i, " (size ", dim,
                                   ") with begin ", begin[i], " and size ",
                                   sizes[i], " is out of range");
      }
      view_.dims.push_back(size);
      view_.steps.push_back(strides[i]);
      view_.base += begin[i] * strides[i];
    }
    return MaceStatus::MACE_SUCCESS;
  }

  // TensorFlow's BuildDenseSpec: expands the ellipsis (an implicit one at
  // the end when none is given) into full-range entries and records where
  // new axes and shrunk axes go. New-axis beats shrink on the same bit, as
  // in TensorFlow.
  static MaceStatus BuildDense(const OpContext &context,
                               const std::vector<int64_t> &begin,
                               const std::vector<int64_t> &end,
                               const std::vector<int64_t> &strides,
                               DenseSpec *dense) {
    int64_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0,
            shrink_mask = 0;
    const OpArgs &args = context.args();
    MACE_RETURN_IF_ERROR(args.GetInt("begin_mask", int64_t{0}, &begin_mask));
    MACE_RETURN_IF_ERROR(args.GetInt("end_mask", int64_t{0}, &end_mask));
    MACE_RETURN_IF_ERROR(
        args.GetInt("ellipsis_mask", int64_t{0}, &ellipsis_mask));
    MACE_RETURN_IF_ERROR(
        args.GetInt("new_axis_mask", int64_t{0}, &new_axis_mask));
    MACE_RETURN_IF_ERROR(
        args.GetInt("shrink_axis_mask", int64_t{0}, &shrink_mask));
    const int sparse_dims = static_cast<int>(begin.size());
    auto bit = [](int64_t mask, int i) { return ((mask >> i) & 1) != 0; };
    int ellipses = 0, new_axes_after_ellipsis = 0;
    for (int i = 0; i < sparse_dims; ++i) {
      if (ellipses > 0 && bit(new_axis_mask, i)) ++new_axes_after_ellipsis;
      if (bit(ellipsis_mask, i)) ++ellipses;
    }
    if (ellipses > 1) {
      return context.InvalidArgs("argument 'ellipsis_mask' = ", ellipsis_mask,
                                 " has more than one ellipsis");
    }
    int total_sparse = sparse_dims;
    if (ellipses == 0) {
      ellipsis_mask |= int64_t{1} << sparse_dims;
      ++total_sparse;
    }
    const int rank = context.input(0).rank();
    dense->begin.assign(rank, 0);
    dense->end.assign(rank, 0);
    dense->strides.assign(rank, 1);
    dense->begin_masked.assign(rank, false);
    dense->end_masked.assign(rank, false);
    dense->shrink.assign(rank, false);
    dense->gather.clear();
    int full = 0;
    for (int i = 0; i < total_sparse; ++i) {
      if (bit(ellipsis_mask, i)) {
        const int next = std::min(
            rank - (total_sparse - i) + 1 + new_axes_after_ellipsis, rank);
        for (; full < next; ++full) {
          dense->begin_masked[full] = dense->end_masked[full] = true;
          dense->gather.push_back(full);
        }
      } else if (bit(new_axis_mask, i)) {
        dense->gather.push_back(kNewAxis);
      } else {
        if (full == rank) {
          return context.InvalidArgs("slice spec entry ", i,
                                     " indexes past the input's ", rank,
                                     " dims");
        }
        dense->begin[full] = begin[i];
        dense->end[full] = end[i];
        dense->strides[full] = strides[i];
        dense->begin_masked[full] = bit(begin_mask, i);
        dense->end_masked[full] = bit(end_mask, i);
        dense->shrink[full] = bit(shrink_mask, i);
        dense->gather.push_back(dense->shrink[full] ? kShrinkAxis : full);
        ++full;
      }
    }
    return MaceStatus::MACE_SUCCESS;
  }

  // TensorFlow's canonical ranges per input dim, then the output shape.
  MaceStatus PrepareStrided(const OpContext &context, const DenseSpec &dense,
                            Shape *output_shape) {
    const Tensor &input = context.input(0);
    const int rank = input.rank();
    const std::vector<int64_t> in_strides = RowMajorStrides(input.shape());
    for (int i = 0; i < rank; ++i) {
      const int64_t dim = input.dim(i);
      if (dense.strides[i] == 0) {
        return context.InvalidArgs("stride of dim ", i, " is zero");
      }
      const int64_t stride = ClampStep(dense.strides[i], dim);
      int64_t first = 0, last = 0;
      if (dense.shrink[i]) {
        if (stride < 0) {
          return context.InvalidArgs(
              "dim ", i,
              " is shrunk (an index, not a range) so its stride must be "
              "positive");
        }
        first = dense.begin[i] < 0 ? dense.begin[i] + dim : dense.begin[i];
        if (first < 0 || first >= dim) {
          return context.InvalidArgs("index ", dense.begin[i], " of dim ", i,
                                     " (size ", dim, ") is out of range");
        }
        last = first + 1;
      } else {
        first =
            Canonical(dense.begin[i], dense.begin_masked[i], true, stride, dim);
        last = Canonical(dense.end[i], dense.end_masked[i], false, stride, dim);
      }
      const int64_t length = last - first;
      int64_t count = 0;
      if (length != 0 && (length < 0) == (stride < 0)) {
        count = length / stride + (length % stride != 0 ? 1 : 0);
      }
      view_.dims.push_back(count);
      view_.steps.push_back(stride * in_strides[i]);
      view_.base += count > 0 ? first * in_strides[i] : 0;
    }
    output_shape->clear();
    for (int g : dense.gather) {
      if (g == kNewAxis) {
        output_shape->push_back(1);
      } else if (g >= 0) {
        output_shape->push_back(view_.dims[g]);
      }
    }
    return MaceStatus::MACE_SUCCESS;
  }

  // A begin (is_begin) or end value clamped to the valid range for the
  // stride's direction; a masked value takes the full range.
  static int64_t Canonical(int64_t x, bool masked, bool is_begin,
                           int64_t stride, int64_t dim) {
    const int64_t lo = stride > 0 ? 0 : -1;
    const int64_t hi = stride > 0 ? dim : dim - 1;
    if (masked) {
      if (stride > 0) return is_begin ? lo : hi;
      return is_begin ? hi : lo;
    }
    const int64_t fwd = x < 0 ? x + dim : x;
    return fwd < lo ? lo : std::min(fwd, hi);
  }

  StridedView view_;
};

}  // namespace

void RegisterSlice(OpRegistry *registry) {
  registry->Register<SliceOp>("Slice");
  registry->Register<StridedSliceOp>("StridedSlice");
}

}  // namespace mace
