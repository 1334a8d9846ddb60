// LayerNorm: normalizes over dims axis..end (`axis`, default -1):
//   y = (x - mean) / sqrt(var + epsilon) * gamma + beta,
// mean and (biased) var taken over those dims. gamma and beta are optional
// (inputs 1 and 2) and broadcast numpy-style to the normalized dims.

#include <algorithm>
#include <cmath>
#include <vector>

#include "mace/ops/common/dense_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

constexpr float kDefaultEpsilon = 1e-5f;

// Where each normalized position reads an affine parameter whose shape
// broadcasts to `norm_dims`; left empty when the parameter has one value per
// position already (identity map), and when `build` is false: an op that
// will not run (shape inference at conversion) or has no rows to normalize
// only checks the shape. The map has one entry per normalized position, so
// it is built only where an input of at least that size exists: a model
// whose empty input declared dims [0, 1, 2^63 - 1] asked for 2^63 entries.
MaceStatus ParamIndex(const OpContext &context, int index, const char *what,
                      const Shape &norm_dims, bool build,
                      std::vector<int64_t> *map) {
  const Tensor &param = context.input(index);
  Shape dims = param.shape();
  // Leading 1s beyond the normalized rank carry no information.
  while (dims.size() > norm_dims.size() && dims.front() == 1) {
    dims.erase(dims.begin());
  }
  bool ok = dims.size() <= norm_dims.size();
  const size_t offset =
      norm_dims.size() - std::min(dims.size(), norm_dims.size());
  for (size_t i = 0; ok && i < dims.size(); ++i) {
    ok = dims[i] == 1 || dims[i] == norm_dims[offset + i];
  }
  if (!ok) {
    return context.InvalidArgs(what, " (input ", index, " '", param.name(),
                               "') has shape ", ShapeToString(param.shape()),
                               ", which does not broadcast to the normalized "
                               "dims ",
                               ShapeToString(norm_dims));
  }
  map->clear();
  const int64_t count = ShapeElementCount(norm_dims);
  if (!build || param.size() == count) return MaceStatus::MACE_SUCCESS;
  // Element strides of the parameter aligned to norm_dims, 0 where it
  // broadcasts.
  std::vector<int64_t> strides(norm_dims.size(), 0);
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    if (dims[i] != 1) strides[offset + i] = stride;
    stride *= dims[i];
  }
  map->resize(count);
  for (int64_t p = 0; p < count; ++p) {
    int64_t rest = p;
    int64_t at = 0;
    for (size_t i = norm_dims.size(); i-- > 0;) {
      at += (rest % norm_dims[i]) * strides[i];
      rest /= norm_dims[i];
    }
    (*map)[p] = at;
  }
  return MaceStatus::MACE_SUCCESS;
}

class LayerNormOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 3));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(RejectNchw(*context));
    MACE_RETURN_IF_ERROR(ExpectFloatInputs(*context));
    MACE_RETURN_IF_ERROR(ExpectMinRank(*context, 0, 1));
    MACE_RETURN_IF_ERROR(
        GetNonNegativeFloat(*context, "epsilon", kDefaultEpsilon, &epsilon_));
    int64_t axis_arg = -1;
    MACE_RETURN_IF_ERROR(
        context->args().GetInt("axis", int64_t{-1}, &axis_arg));
    const Tensor &input = context->input(0);
    int axis = 0;
    MACE_RETURN_IF_ERROR(
        NormalizeAxis(*context, "axis", axis_arg, input.rank(), &axis));
    const Shape norm_dims(input.shape().begin() + axis, input.shape().end());
    rows_ = 1;
    for (int i = 0; i < axis; ++i) rows_ *= input.dim(i);
    row_size_ = ShapeElementCount(norm_dims);
    const bool build_maps = context->will_run() && input.size() > 0;
    if (context->num_inputs() > 1) {
      MACE_RETURN_IF_ERROR(ParamIndex(*context, 1, "gamma", norm_dims,
                                      build_maps, &gamma_index_));
    }
    if (context->num_inputs() > 2) {
      MACE_RETURN_IF_ERROR(ParamIndex(*context, 2, "beta", norm_dims,
                                      build_maps, &beta_index_));
    }
    Tensor *output = context->output(0);
    output->set_dtype(DT_FLOAT);
    output->set_shape(input.shape());
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const float *x = context->input(0).data<float>();
    const float *gamma =
        context->num_inputs() > 1 ? context->input(1).data<float>() : nullptr;
    const float *beta =
        context->num_inputs() > 2 ? context->input(2).data<float>() : nullptr;
    float *y = context->output(0)->mutable_data<float>();
    const int64_t row_size = row_size_;
    const int64_t grain = GrainFor(3 * row_size);
    context->thread_pool()->ParallelFor(
        0, rows_, grain, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            NormalizeRow(x + r * row_size, gamma, beta, y + r * row_size);
          }
        });
    return MaceStatus::MACE_SUCCESS;
  }

  // Each row is read fully (mean, var) before it is written, element by
  // element, so the output may share the input's buffer.
  OutputMemory output_memory() const override {
    return OutputMemory::kMayReuseInput0;
  }

 private:
  void NormalizeRow(const float *x, const float *gamma, const float *beta,
                    float *y) const {
    if (row_size_ == 0) return;
    // Two passes in double: a row can be long, and a one-pass variance
    // loses precision when the mean is large.
    double sum = 0.0;
    for (int64_t j = 0; j < row_size_; ++j) sum += x[j];
    const double mean = sum / row_size_;
    double sq_sum = 0.0;
    for (int64_t j = 0; j < row_size_; ++j) {
      const double d = x[j] - mean;
      sq_sum += d * d;
    }
    const double inv_std = 1.0 / std::sqrt(sq_sum / row_size_ + epsilon_);
    for (int64_t j = 0; j < row_size_; ++j) {
      // In double: a float mean would be rounded at the scale of x, which
      // can be much coarser than the spread around it.
      float v = static_cast<float>((x[j] - mean) * inv_std);
      if (gamma != nullptr) {
        v *= gamma[gamma_index_.empty() ? j : gamma_index_[j]];
      }
      if (beta != nullptr) {
        v += beta[beta_index_.empty() ? j : beta_index_[j]];
      }
      y[j] = v;
    }
  }

  float epsilon_ = kDefaultEpsilon;
  int64_t rows_ = 0;
  int64_t row_size_ = 0;
  std::vector<int64_t> gamma_index_;
  std::vector<int64_t> beta_index_;
};

}  // namespace

void RegisterLayerNorm(OpRegistry *registry) {
  registry->Register<LayerNormOp>("LayerNorm");
}

}  // namespace mace
