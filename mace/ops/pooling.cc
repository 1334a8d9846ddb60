// Pooling: max or average over 2-D windows of NHWC data, per channel.
//   input:   [N, H, W, C];
//   args:    pooling_type (AVG=1 default, MAX=2), kernels [kh, kw],
//            strides, dilations, padding, padding_values, round_mode
//            (FLOOR=0, CEIL=1; see conv_pool_util.h), count_include_pad
//            (0 default: an average divides by the input cells in the
//            window; 1: also by its padding cells, never by cells past the
//            padded input that CEIL mode adds), global_pooling (1: the
//            window is the whole H x W, output 1 x 1; other window
//            arguments are ignored);
//   output:  [N, Ho, Wo, C]. Max pooling ignores padding cells. A window
//            made of padding cells only is an error at init.
// The arithmetic runs in the vector kernels (mace/kernels/pooling.h); this
// file defines what they compute: the window, its clipping and divisors.

#include <vector>

#include "mace/kernels/pooling.h"
#include "mace/ops/common/conv_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

enum class PoolingType { kAvg = 1, kMax = 2 };

// Reads an int argument that must be 0 or 1.
MaceStatus ReadFlag(const OpContext &context, const char *name, int *value) {
  MACE_RETURN_IF_ERROR(context.args().GetInt(name, 0, value));
  if (*value != 0 && *value != 1) {
    return context.InvalidArgs("argument '", name, "' must be 0 or 1, is ",
                               *value);
  }
  return MaceStatus::MACE_SUCCESS;
}

// Along one axis, how many window cells lie inside [low, high).
void CountCells(int64_t out, int64_t kernel, int64_t stride, int64_t dilation,
                int64_t pad_begin, int64_t low, int64_t high,
                std::vector<int64_t> *counts) {
  counts->assign(out, 0);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t k = 0; k < kernel; ++k) {
      const int64_t i = o * stride - pad_begin + k * dilation;
      if (i >= low && i < high) ++(*counts)[o];
    }
  }
}

class PoolingOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(CheckNhwc(*context));
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 1));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(CheckFloat4D(*context, 0, "input"));
    MACE_RETURN_IF_ERROR(ReadArgs(*context));
    const Tensor &input = context->input(0);
    batch_ = input.dim(0);
    in_h_ = input.dim(1);
    in_w_ = input.dim(2);
    channels_ = input.dim(3);

    Window2D window;
    int64_t kernel_h = in_h_, kernel_w = in_w_;
    if (!global_) {
      MACE_RETURN_IF_ERROR(ParseWindow2D(*context, &window));
      MACE_RETURN_IF_ERROR(ReadKernel(*context, &kernel_h, &kernel_w));
      MACE_RETURN_IF_ERROR(
          CheckWindowRange(*context, window, kernel_h, kernel_w));
    }
    Pads2D pads;
    MACE_RETURN_IF_ERROR(ComputeWindowOutput(*context, window, in_h_, in_w_,
                                             kernel_h, kernel_w, &out_h_,
                                             &out_w_, &pads));
    const Shape out_shape = {batch_, out_h_, out_w_, channels_};
    MACE_RETURN_IF_ERROR(
        CheckOutputSize(*context, out_shape, kernel_h, kernel_w));
    BuildWindowTaps(out_h_, in_h_, kernel_h, window.stride_h, window.dilation_h,
                    pads.top, &rows_);
    BuildWindowTaps(out_w_, in_w_, kernel_w, window.stride_w, window.dilation_w,
                    pads.left, &cols_);
    MACE_RETURN_IF_ERROR(CheckNoEmptyWindow(*context));
    // Cells an average divides by: input cells only, or the padded range.
    const bool with_pads = count_include_pad_ == 1;
    CountCells(out_h_, kernel_h, window.stride_h, window.dilation_h, pads.top,
               with_pads ? -pads.top : 0, in_h_ + (with_pads ? pads.bottom : 0),
               &row_counts_);
    CountCells(out_w_, kernel_w, window.stride_w, window.dilation_w, pads.left,
               with_pads ? -pads.left : 0, in_w_ + (with_pads ? pads.right : 0),
               &col_counts_);

    SetKernelShape(window, pads, kernel_h, kernel_w);

    Tensor *output = context->output(0);
    output->set_dtype(DT_FLOAT);
    output->set_shape(out_shape);
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    kernels::Pool2d(type_ == PoolingType::kMax ? kernels::PoolKind::kMax
                                               : kernels::PoolKind::kAvg,
                    shape_, context->input(0).data<float>(), row_counts_.data(),
                    col_counts_.data(),
                    context->output(0)->mutable_data<float>(),
                    context->thread_pool());
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  MaceStatus ReadArgs(const OpContext &context) {
    int type = 0;
    MACE_RETURN_IF_ERROR(context.args().GetInt("pooling_type", 1, &type));
    if (type != 1 && type != 2) {
      return context.InvalidArgs(
          "argument 'pooling_type' must be 1 (AVG) or 2 (MAX), is ", type);
    }
    type_ = static_cast<PoolingType>(type);
    // Only checked here: ParseWindow2D applies it.
    int round_mode = 0;
    MACE_RETURN_IF_ERROR(ReadFlag(context, "round_mode", &round_mode));
    MACE_RETURN_IF_ERROR(
        ReadFlag(context, "count_include_pad", &count_include_pad_));
    int global = 0;
    MACE_RETURN_IF_ERROR(ReadFlag(context, "global_pooling", &global));
    global_ = global == 1;
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus ReadKernel(const OpContext &context, int64_t *kernel_h,
                        int64_t *kernel_w) {
    std::vector<int64_t> kernels;
    MACE_RETURN_IF_ERROR(
        context.args().GetInts("kernels", std::vector<int64_t>{}, &kernels));
    if (kernels.size() != 2 || kernels[0] < 1 || kernels[1] < 1) {
      return context.InvalidArgs(
          "argument 'kernels' must be two positive values [kh, kw]");
    }
    *kernel_h = kernels[0];
    *kernel_w = kernels[1];
    return MaceStatus::MACE_SUCCESS;
  }

  // A window of padding cells only has no max and no average.
  MaceStatus CheckNoEmptyWindow(const OpContext &context) const {
    const AxisTaps *axes[] = {&rows_, &cols_};
    for (const AxisTaps *taps : axes) {
      for (size_t o = 0; o + 1 < taps->begin.size(); ++o) {
        if (taps->begin[o] == taps->begin[o + 1]) {
          return context.InvalidArgs(
              "a pooling window covers padding only (output ",
              taps == &rows_ ? "row " : "column ", o,
              "); reduce padding_values");
        }
      }
    }
    return MaceStatus::MACE_SUCCESS;
  }

  void SetKernelShape(const Window2D &window, const Pads2D &pads,
                      int64_t kernel_h, int64_t kernel_w) {
    shape_.batch = batch_;
    shape_.in_h = in_h_;
    shape_.in_w = in_w_;
    shape_.channels = channels_;
    shape_.out_h = out_h_;
    shape_.out_w = out_w_;
    shape_.kernel_h = kernel_h;
    shape_.kernel_w = kernel_w;
    shape_.stride_h = window.stride_h;
    shape_.stride_w = window.stride_w;
    shape_.dilation_h = window.dilation_h;
    shape_.dilation_w = window.dilation_w;
    shape_.pad_top = pads.top;
    shape_.pad_left = pads.left;
  }

  PoolingType type_ = PoolingType::kAvg;
  int count_include_pad_ = 0;
  bool global_ = false;
  int64_t batch_ = 0, in_h_ = 0, in_w_ = 0, channels_ = 0;
  int64_t out_h_ = 0, out_w_ = 0;
  AxisTaps rows_;
  AxisTaps cols_;
  std::vector<int64_t> row_counts_;
  std::vector<int64_t> col_counts_;
  kernels::PoolShape shape_;
};

}  // namespace

void RegisterPooling(OpRegistry *registry) {
  registry->Register<PoolingOp>("Pooling");
}

}  // namespace mace
