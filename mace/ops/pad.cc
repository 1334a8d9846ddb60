// Pad: grows (or, with negative values in CONSTANT mode, shrinks) each dim.
// Args: `paddings` (ints, two per input dim: [d0_before, d0_after,
// d1_before, ...]; required), `pad_type` (int: CONSTANT=0 default,
// REFLECT=1, SYMMETRIC=2, EDGE=3), `constant_value` (float, default 0).
// REFLECT mirrors without repeating the edge (pads must be < dim),
// SYMMETRIC mirrors repeating it (pads <= dim), EDGE repeats the edge.
// Negative paddings remove elements and are allowed in CONSTANT mode only.
// Any rank; output dim = dim + before + after. Float32.

#include <algorithm>
#include <cstring>
#include <vector>

#include "mace/ops/common/move_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

enum class PadMode { kConstant = 0, kReflect = 1, kSymmetric = 2, kEdge = 3 };

const char *ModeName(PadMode mode) {
  switch (mode) {
    case PadMode::kConstant:
      return "CONSTANT";
    case PadMode::kReflect:
      return "REFLECT";
    case PadMode::kSymmetric:
      return "SYMMETRIC";
    case PadMode::kEdge:
      return "EDGE";
  }
  return "?";
}

// Input index of position p (relative to the input's first element) along
// a dim of size `dim`, or -1 for the constant value.
int64_t SourceIndex(PadMode mode, int64_t p, int64_t dim) {
  if (p >= 0 && p < dim) return p;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kReflect:
      return p < 0 ? -p : 2 * (dim - 1) - p;
    case PadMode::kSymmetric:
      return p < 0 ? -p - 1 : 2 * dim - 1 - p;
    case PadMode::kEdge:
      return p < 0 ? 0 : dim - 1;
  }
  return -1;
}

class PadOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 1));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(CheckNhwc(*context));
    MACE_RETURN_IF_ERROR(ExpectFloatOrInt32(*context, 0, false));
    const OpArgs &args = context->args();
    int type = 0;
    MACE_RETURN_IF_ERROR(args.GetInt("pad_type", 0, &type));
    if (type < 0 || type > 3) {
      return context->InvalidArgs("argument 'pad_type' = ", type,
                                  " is not CONSTANT=0, REFLECT=1, "
                                  "SYMMETRIC=2 or EDGE=3");
    }
    mode_ = static_cast<PadMode>(type);
    MACE_RETURN_IF_ERROR(args.GetFloat("constant_value", 0.0f, &value_));
    // int32 range (checked by GetInts) keeps dim + before + after exact.
    std::vector<int> pads;
    MACE_RETURN_IF_ERROR(args.GetInts("paddings", {}, &pads));
    const Tensor &input = context->input(0);
    const int rank = input.rank();
    if (static_cast<int>(pads.size()) != 2 * rank) {
      return context->InvalidArgs("argument 'paddings' has ", pads.size(),
                                  " values, expected 2 per input dim (",
                                  2 * rank, ")");
    }
    Shape shape(rank);
    before_.assign(rank, 0);
    for (int i = 0; i < rank; ++i) {
      MACE_RETURN_IF_ERROR(
          CheckPads(*context, i, pads[2 * i], pads[2 * i + 1], input.dim(i)));
      before_[i] = pads[2 * i];
      shape[i] = input.dim(i) + pads[2 * i] + pads[2 * i + 1];
      if (shape[i] < 0) {
        return context->InvalidArgs("paddings ", pads[2 * i], ", ",
                                    pads[2 * i + 1], " remove more than the ",
                                    input.dim(i), " elements of dim ", i);
      }
    }
    in_strides_ = RowMajorStrides(input.shape());
    return SetOutput(context, DT_FLOAT, shape);
  }

  MaceStatus Run(OpContext *context) override {
    const Tensor &input = context->input(0);
    Tensor *output = context->output(0);
    const float *x = input.data<float>();
    float *y = output->mutable_data<float>();
    const int rank = input.rank();
    if (rank == 0) {
      y[0] = x[0];
      return MaceStatus::MACE_SUCCESS;
    }
    if (output->size() == 0) return MaceStatus::MACE_SUCCESS;
    const Shape &out_shape = output->shape();
    const int64_t inner = out_shape[rank - 1];
    const int64_t rows = output->size() / inner;
    context->thread_pool()->ParallelFor(
        0, rows, std::max<int64_t>(1, 4096 / inner),
        [&](int64_t begin, int64_t end) {
          for (int64_t row = begin; row < end; ++row) {
            float *dst = y + row * inner;
            const int64_t offset = RowOffset(input.shape(), out_shape, row);
            if (offset < 0) {
              std::fill(dst, dst + inner, value_);
            } else {
              FillRow(x + offset, input.dim(rank - 1), before_[rank - 1], inner,
                      dst);
            }
          }
        });
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  MaceStatus CheckPads(const OpContext &context, int axis, int64_t before,
                       int64_t after, int64_t dim) const {
    if (mode_ != PadMode::kConstant && (before < 0 || after < 0)) {
      return context.InvalidArgs("argument 'paddings' of dim ", axis,
                                 " is negative (", before, ", ", after,
                                 "); only CONSTANT mode can crop");
    }
    if (before <= 0 && after <= 0) return MaceStatus::MACE_SUCCESS;
    bool limited = true;
    int64_t limit = 0;
    if (mode_ == PadMode::kReflect) {
      limit = dim - 1;
    } else if (mode_ == PadMode::kSymmetric) {
      limit = dim;
    } else if (mode_ == PadMode::kEdge) {
      limited = dim == 0;  // an empty dim has no edge to repeat
    } else {
      limited = false;
    }
    if (limited && (before > limit || after > limit)) {
      return context.InvalidArgs("argument 'paddings' of dim ", axis, " (",
                                 before, ", ", after, ") must be at most ",
                                 limit, " for ", ModeName(mode_),
                                 " padding of a dim of size ", dim);
    }
    return MaceStatus::MACE_SUCCESS;
  }

  // Input offset of the start of output row `row` (all dims but the last),
  // or -1 when the row lies in constant padding.
  int64_t RowOffset(const Shape &in_shape, const Shape &out_shape,
                    int64_t row) const {
    int64_t offset = 0;
    for (int k = static_cast<int>(out_shape.size()) - 2; k >= 0; --k) {
      const int64_t src =
          SourceIndex(mode_, row % out_shape[k] - before_[k], in_shape[k]);
      if (src < 0) return -1;
      offset += src * in_strides_[k];
      row /= out_shape[k];
    }
    return offset;
  }

  // One output row of `out` values from an input row of `dim` values that
  // starts `before` values in (negative: cropped): padding, copy, padding.
  void FillRow(const float *src, int64_t dim, int64_t before, int64_t out,
               float *dst) const {
    const int64_t copy_begin = std::min(std::max<int64_t>(before, 0), out);
    const int64_t copy_end = std::min(before + dim, out);
    for (int64_t j = 0; j < copy_begin; ++j) {
      const int64_t s = SourceIndex(mode_, j - before, dim);
      dst[j] = s < 0 ? value_ : src[s];
    }
    if (copy_end > copy_begin) {
      std::memcpy(dst + copy_begin, src + copy_begin - before,
                  (copy_end - copy_begin) * sizeof(float));
    }
    for (int64_t j = std::max(copy_end, copy_begin); j < out; ++j) {
      const int64_t s = SourceIndex(mode_, j - before, dim);
      dst[j] = s < 0 ? value_ : src[s];
    }
  }

  PadMode mode_ = PadMode::kConstant;
  float value_ = 0.0f;
  std::vector<int64_t> before_;  // padding before each dim (< 0: crop)
  std::vector<int64_t> in_strides_;
};

}  // namespace

void RegisterPad(OpRegistry *registry) { registry->Register<PadOp>("Pad"); }

}  // namespace mace
