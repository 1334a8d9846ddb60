// Reduce: MEAN, MIN, MAX, PROD or SUM over a set of axes.
//
// Arguments: `reduce_type` (int, MACE's codes MEAN=0, MIN=1, MAX=2, PROD=3,
// SUM=4; default MEAN), `axis` (ints; empty or absent = every axis; negative
// values count from the back; an axis listed twice is an error),
// `keepdims` (bool, default false: reduced axes are dropped; true: they stay
// with size 1). float32 accumulates in double; int32 SUM and PROD wrap
// around, int32 MEAN truncates toward zero.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "mace/ops/common/elt_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

enum ReduceType : int { kMean = 0, kMin = 1, kMax = 2, kProd = 3, kSum = 4 };

// The input seen as kept and reduced dims, after dropping dims of size 1
// and merging neighbours of the same kind. An output element's inputs are
// base (from its kept coordinates) + a reduced row offset + j * inner_stride.
struct ReducePlan {
  std::vector<int64_t> kept_dims, kept_strides;        // output order
  std::vector<int64_t> reduced_dims, reduced_strides;  // all but the last
  int64_t inner = 1, inner_stride = 0;                 // the last reduced dim
  int64_t reduce_rows = 1;  // product of reduced_dims
  int64_t outputs = 1;      // product of kept_dims
  int64_t count = 1;        // inputs per output

  static int64_t Offset(const std::vector<int64_t> &dims,
                        const std::vector<int64_t> &strides, int64_t index) {
    int64_t offset = 0;
    for (size_t k = dims.size(); k-- > 0;) {
      offset += (index % dims[k]) * strides[k];
      index /= dims[k];
    }
    return offset;
  }
};

ReducePlan MakePlan(const Shape &shape, const std::vector<bool> &reduced) {
  std::vector<int64_t> dims, strides;
  std::vector<bool> kinds;
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {  // inner to outer
    const int64_t d = shape[i];
    if (d != 1) {
      if (!dims.empty() && kinds.back() == reduced[i]) {
        dims.back() *= d;
      } else {
        dims.push_back(d);
        strides.push_back(stride);
        kinds.push_back(reduced[i]);
      }
    }
    stride *= d;
  }
  ReducePlan plan;
  bool have_inner = false;
  for (size_t k = 0; k < dims.size(); ++k) {  // inner to outer
    if (!kinds[k]) {
      plan.kept_dims.insert(plan.kept_dims.begin(), dims[k]);
      plan.kept_strides.insert(plan.kept_strides.begin(), strides[k]);
      plan.outputs *= dims[k];
    } else if (!have_inner) {
      have_inner = true;
      plan.inner = dims[k];
      plan.inner_stride = strides[k];
      plan.count *= dims[k];
    } else {
      plan.reduced_dims.insert(plan.reduced_dims.begin(), dims[k]);
      plan.reduced_strides.insert(plan.reduced_strides.begin(), strides[k]);
      plan.reduce_rows *= dims[k];
      plan.count *= dims[k];
    }
  }
  return plan;
}

// ReduceLoop when the input's last dim is kept (a channels-last global
// pool, [N, H, W, C] over H and W): the same fold in the same order for
// each output, but for a block of neighbouring outputs at once, whose
// inputs are contiguous runs, instead of one output's inputs a row apart
// (ShuffleNet's mean over 7x7x1024 ran 1.8x slower that way than over the
// NCHW tensor).
template <typename T, typename Acc, typename Add, typename Finish>
void ReduceColumnsLoop(const ReducePlan &plan, const T *x, T *y,
                       ThreadPool *pool, Acc init, Add add, Finish finish) {
  constexpr int64_t kBlock = 64;
  const int64_t columns = plan.kept_dims.back();
  const int64_t blocks = (columns + kBlock - 1) / kBlock;
  const int64_t tasks = plan.outputs / columns * blocks;
  const int64_t grain =
      std::max<int64_t>(1, 4096 / std::max<int64_t>(plan.count * kBlock, 1));
  pool->ParallelFor(0, tasks, grain, [&](int64_t begin, int64_t end) {
    Acc acc[kBlock];
    for (int64_t t = begin; t < end; ++t) {
      const int64_t first = t / blocks * columns + t % blocks * kBlock;
      const int64_t count = std::min(kBlock, columns - t % blocks * kBlock);
      const T *base =
          x + ReducePlan::Offset(plan.kept_dims, plan.kept_strides, first);
      std::fill(acc, acc + count, init);
      for (int64_t r = 0; r < plan.reduce_rows; ++r) {
        const T *row = base + ReducePlan::Offset(plan.reduced_dims,
                                                 plan.reduced_strides, r);
        for (int64_t j = 0; j < plan.inner; ++j) {
          const T *values = row + j * plan.inner_stride;
          for (int64_t c = 0; c < count; ++c) acc[c] = add(acc[c], values[c]);
        }
      }
      for (int64_t c = 0; c < count; ++c) y[first + c] = finish(acc[c]);
    }
  });
}

// y[o] = finish(fold of add over o's inputs, starting from init).
template <typename T, typename Acc, typename Add, typename Finish>
void ReduceLoop(const ReducePlan &plan, const T *x, T *y, ThreadPool *pool,
                Acc init, Add add, Finish finish) {
  if (!plan.kept_strides.empty() && plan.kept_strides.back() == 1 &&
      plan.kept_dims.back() >= 8) {
    ReduceColumnsLoop(plan, x, y, pool, init, add, finish);
    return;
  }
  const int64_t grain =
      std::max<int64_t>(1, 4096 / std::max<int64_t>(plan.count, 1));
  pool->ParallelFor(0, plan.outputs, grain, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const int64_t base =
          ReducePlan::Offset(plan.kept_dims, plan.kept_strides, o);
      Acc acc = init;
      for (int64_t r = 0; r < plan.reduce_rows; ++r) {
        const T *row =
            x + base +
            ReducePlan::Offset(plan.reduced_dims, plan.reduced_strides, r);
        for (int64_t j = 0; j < plan.inner; ++j) {
          acc = add(acc, row[j * plan.inner_stride]);
        }
      }
      y[o] = finish(acc);
    }
  });
}

void ReduceFloat(int type, const ReducePlan &plan, const float *x, float *y,
                 ThreadPool *pool) {
  const double count = static_cast<double>(plan.count);
  auto to_float = [](double v) { return static_cast<float>(v); };
  auto same = [](float v) { return v; };
  auto sum = [](double acc, float v) { return acc + v; };
  switch (type) {
    case kMean:
      ReduceLoop(plan, x, y, pool, 0.0, sum,
                 [count](double v) { return static_cast<float>(v / count); });
      break;
    case kSum:
      ReduceLoop(plan, x, y, pool, 0.0, sum, to_float);
      break;
    case kProd:
      ReduceLoop(
          plan, x, y, pool, 1.0, [](double acc, float v) { return acc * v; },
          to_float);
      break;
    case kMin:
      ReduceLoop(
          plan, x, y, pool, std::numeric_limits<float>::infinity(),
          [](float acc, float v) { return v < acc ? v : acc; }, same);
      break;
    case kMax:
      ReduceLoop(
          plan, x, y, pool, -std::numeric_limits<float>::infinity(),
          [](float acc, float v) { return v > acc ? v : acc; }, same);
      break;
    default:
      break;
  }
}

void ReduceInt(int type, const ReducePlan &plan, const int32_t *x, int32_t *y,
               ThreadPool *pool) {
  const int64_t count = plan.count;
  // uint32 arithmetic wraps where int32 would overflow (undefined).
  auto wrap = [](uint32_t v) { return static_cast<int32_t>(v); };
  auto same = [](int32_t v) { return v; };
  switch (type) {
    case kMean:
      ReduceLoop(
          plan, x, y, pool, int64_t{0},
          [](int64_t acc, int32_t v) { return acc + v; },
          [count](int64_t v) { return static_cast<int32_t>(v / count); });
      break;
    case kSum:
      ReduceLoop(
          plan, x, y, pool, uint32_t{0},
          [](uint32_t acc, int32_t v) {
            return acc + static_cast<uint32_t>(v);
          },
          wrap);
      break;
    case kProd:
      ReduceLoop(
          plan, x, y, pool, uint32_t{1},
          [](uint32_t acc, int32_t v) {
            return acc * static_cast<uint32_t>(v);
          },
          wrap);
      break;
    case kMin:
      ReduceLoop(
          plan, x, y, pool, std::numeric_limits<int32_t>::max(),
          [](int32_t acc, int32_t v) { return v < acc ? v : acc; }, same);
      break;
    case kMax:
      ReduceLoop(
          plan, x, y, pool, std::numeric_limits<int32_t>::min(),
          [](int32_t acc, int32_t v) { return v > acc ? v : acc; }, same);
      break;
    default:
      break;
  }
}

class ReduceOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(ExpectNotNchw(*context));
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 1));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(ExpectFloatOrInt32(*context, 0));
    const Tensor &input = context->input(0);
    const OpArgs &args = context->args();
    MACE_RETURN_IF_ERROR(args.GetInt("reduce_type", kMean, &type_));
    if (type_ < kMean || type_ > kSum) {
      return context->InvalidArgs("argument 'reduce_type' = ", type_,
                                  " is not one of MEAN=0, MIN=1, MAX=2, ",
                                  "PROD=3, SUM=4");
    }
    bool keepdims = false;
    MACE_RETURN_IF_ERROR(args.GetBool("keepdims", false, &keepdims));
    std::vector<bool> reduced;
    MACE_RETURN_IF_ERROR(ParseAxes(*context, &reduced));

    plan_ = MakePlan(input.shape(), reduced);
    if (plan_.count == 0 && type_ != kSum && type_ != kProd) {
      return context->InvalidArgs("reducing over zero elements (input shape ",
                                  ShapeToString(input.shape()),
                                  ") has no MEAN, MIN or MAX");
    }
    Shape out_shape;
    for (int i = 0; i < input.rank(); ++i) {
      if (!reduced[i]) {
        out_shape.push_back(input.dim(i));
      } else if (keepdims) {
        out_shape.push_back(1);
      }
    }
    Tensor *output = context->output(0);
    output->set_dtype(input.dtype());
    output->set_shape(out_shape);
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const Tensor &input = context->input(0);
    Tensor *output = context->output(0);
    if (input.dtype() == DT_INT32) {
      ReduceInt(type_, plan_, input.data<int32_t>(),
                output->mutable_data<int32_t>(), context->thread_pool());
    } else {
      ReduceFloat(type_, plan_, input.data<float>(),
                  output->mutable_data<float>(), context->thread_pool());
    }
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  // reduced[i]: whether input axis i is reduced.
  static MaceStatus ParseAxes(const OpContext &context,
                              std::vector<bool> *reduced) {
    const int rank = context.input(0).rank();
    std::vector<int64_t> axes;
    MACE_RETURN_IF_ERROR(context.args().GetInts("axis", {}, &axes));
    reduced->assign(rank, axes.empty());
    for (int64_t axis : axes) {
      int normalized = 0;
      MACE_RETURN_IF_ERROR(
          NormalizeAxis(context, "argument 'axis'", axis, rank, &normalized));
      if ((*reduced)[normalized]) {
        return context.InvalidArgs("argument 'axis' lists axis ", normalized,
                                   " more than once");
      }
      (*reduced)[normalized] = true;
    }
    return MaceStatus::MACE_SUCCESS;
  }

  int type_ = kMean;
  ReducePlan plan_;
};

}  // namespace

void RegisterReduce(OpRegistry *registry) {
  registry->Register<ReduceOp>("Reduce");
}

}  // namespace mace
