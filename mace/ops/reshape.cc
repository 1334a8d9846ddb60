// Ops that only give their input a new shape: Reshape, Squeeze, ExpandDims
// and Unsqueeze. The output is the input's bytes (kAliasInput0), so Prepare
// does all the work and Run does nothing. Float32 and int32.
//
// Reshape: input x and the new shape as a constant int32 1-D input 1 or as
// arg `shape` (ints). 0 copies the input dim at the same index (unless arg
// `allowzero` = 1, ONNX, where 0 is a literal zero); one -1 is inferred.
// Squeeze: arg `axis` (ints, negative allowed); empty or missing removes
// every dim of size 1; a listed dim whose size is not 1 is an error.
// ExpandDims: arg `axis` (int, TensorFlow: in [-rank-1, rank], negative
// counts from the back of the output).
// Unsqueeze: arg `axis` (ints, ONNX: each in [-out_rank, out_rank), no
// repeats), out_rank = rank + number of axes.

#include <limits>
#include <vector>

#include "mace/ops/common/move_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

// Shared by all four: check input and output counts and types, then let the
// subclass compute the new shape.
class AliasOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, MaxInputs()));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(CheckNhwc(*context));
    MACE_RETURN_IF_ERROR(ExpectFloatOrInt32(*context, 0, true));
    Shape shape;
    MACE_RETURN_IF_ERROR(OutputShape(*context, &shape));
    return SetOutput(context, context->input(0).dtype(), shape);
  }

  MaceStatus Run(OpContext *context) override {
    return MaceStatus::MACE_SUCCESS;
  }

  OutputMemory output_memory() const override {
    return OutputMemory::kAliasInput0;
  }

 protected:
  // Inputs after the first: Reshape's shape tensor.
  virtual int MaxInputs() const { return 1; }
  virtual MaceStatus OutputShape(const OpContext &context,
                                 Shape *shape) const = 0;
};

class ReshapeOp : public AliasOp {
 protected:
  int MaxInputs() const override { return 2; }
  MaceStatus OutputShape(const OpContext &context,
                         Shape *shape) const override {
    std::vector<int64_t> target;
    if (context.num_inputs() == 2) {
      MACE_RETURN_IF_ERROR(ReadConstantInts(context, 1, "shape", &target));
    } else if (context.args().Has("shape")) {
      MACE_RETURN_IF_ERROR(context.args().GetInts("shape", {}, &target));
    } else {
      return context.InvalidArgs(
          "needs the new shape as input 1 or argument 'shape'");
    }
    bool allow_zero = false;
    MACE_RETURN_IF_ERROR(
        context.args().GetBool("allowzero", false, &allow_zero));
    const Tensor &input = context.input(0);
    int infer_at = -1;
    int64_t known = 1;
    shape->clear();
    for (size_t i = 0; i < target.size(); ++i) {
      int64_t d = target[i];
      if (d == 0 && !allow_zero) {
        if (static_cast<int>(i) >= input.rank()) {
          return context.InvalidArgs("shape value 0 at index ", i,
                                     " copies an input dim, but the input ",
                                     "has rank ", input.rank());
        }
        d = input.dim(static_cast<int>(i));
      }
      if (d == -1) {
        if (infer_at >= 0) {
          return context.InvalidArgs("shape ", ShapeToString(target),
                                     " has more than one -1");
        }
        infer_at = static_cast<int>(i);
      } else if (d < 0) {
        return context.InvalidArgs("shape ", ShapeToString(target),
                                   " has a negative value other than -1");
      } else {
        if (d != 0 && known > std::numeric_limits<int64_t>::max() / d) {
          return context.InvalidArgs("shape ", ShapeToString(target),
                                     " is too large");
        }
        known *= d;
      }
      shape->push_back(d);
    }
    return InferAndCheck(context, target, infer_at, known, shape);
  }

 private:
  static MaceStatus InferAndCheck(const OpContext &context,
                                  const std::vector<int64_t> &target,
                                  int infer_at, int64_t known, Shape *shape) {
    const Tensor &input = context.input(0);
    const int64_t count = input.size();
    if (infer_at >= 0) {
      if (known == 0 || count % known != 0) {
        return context.InvalidArgs("cannot infer the -1 of shape ",
                                   ShapeToString(target), " for input shape ",
                                   ShapeToString(input.shape()));
      }
      (*shape)[infer_at] = count / known;
    }
    if (ShapeElementCount(*shape) != count) {
      return context.InvalidArgs("shape ", ShapeToString(target), " (",
                                 ShapeToString(*shape), ") has ",
                                 ShapeElementCount(*shape), " elements, input ",
                                 ShapeToString(input.shape()), " has ", count);
    }
    return MaceStatus::MACE_SUCCESS;
  }
};

class SqueezeOp : public AliasOp {
 protected:
  MaceStatus OutputShape(const OpContext &context,
                         Shape *shape) const override {
    std::vector<int64_t> axes;
    MACE_RETURN_IF_ERROR(context.args().GetInts("axis", {}, &axes));
    const Tensor &input = context.input(0);
    const int rank = input.rank();
    std::vector<bool> drop(rank, axes.empty());
    if (axes.empty()) {
      for (int i = 0; i < rank; ++i) drop[i] = input.dim(i) == 1;
    }
    for (int64_t a : axes) {
      int axis = 0;
      MACE_RETURN_IF_ERROR(
          NormalizeAxis(context, "argument 'axis' value", a, rank, &axis));
      if (input.dim(axis) != 1) {
        return context.InvalidArgs(
            "argument 'axis' names dim ", axis, " of size ", input.dim(axis),
            " (input shape ", ShapeToString(input.shape()),
            "); only dims of size 1 can be squeezed");
      }
      drop[axis] = true;
    }
    shape->clear();
    for (int i = 0; i < rank; ++i) {
      if (!drop[i]) shape->push_back(input.dim(i));
    }
    return MaceStatus::MACE_SUCCESS;
  }
};

class ExpandDimsOp : public AliasOp {
 protected:
  MaceStatus OutputShape(const OpContext &context,
                         Shape *shape) const override {
    if (!context.args().Has("axis")) {
      return context.InvalidArgs("argument 'axis' is required");
    }
    int64_t axis = 0;
    MACE_RETURN_IF_ERROR(context.args().GetInt("axis", int64_t{0}, &axis));
    const Tensor &input = context.input(0);
    int at = 0;
    MACE_RETURN_IF_ERROR(
        NormalizeAxis(context, "argument 'axis'", axis, input.rank() + 1, &at));
    *shape = input.shape();
    shape->insert(shape->begin() + at, 1);
    return MaceStatus::MACE_SUCCESS;
  }
};

class UnsqueezeOp : public AliasOp {
 protected:
  MaceStatus OutputShape(const OpContext &context,
                         Shape *shape) const override {
    std::vector<int64_t> axes;
    MACE_RETURN_IF_ERROR(context.args().GetInts("axis", {}, &axes));
    if (axes.empty()) {
      return context.InvalidArgs(
          "argument 'axis' must list at least one "
          "axis");
    }
    const Tensor &input = context.input(0);
    const int out_rank = input.rank() + static_cast<int>(axes.size());
    std::vector<bool> is_new(out_rank, false);
    for (int64_t a : axes) {
      int axis = 0;
      MACE_RETURN_IF_ERROR(
          NormalizeAxis(context, "argument 'axis' value", a, out_rank, &axis));
      if (is_new[axis]) {
        return context.InvalidArgs("argument 'axis' repeats axis ", axis);
      }
      is_new[axis] = true;
    }
    shape->clear();
    int next_input_dim = 0;
    for (int i = 0; i < out_rank; ++i) {
      shape->push_back(is_new[i] ? 1 : input.dim(next_input_dim++));
    }
    return MaceStatus::MACE_SUCCESS;
  }
};

}  // namespace

void RegisterReshape(OpRegistry *registry) {
  registry->Register<ReshapeOp>("Reshape");
  registry->Register<SqueezeOp>("Squeeze");
  registry->Register<ExpandDimsOp>("ExpandDims");
  registry->Register<UnsqueezeOp>("Unsqueeze");
}

}  // namespace mace
