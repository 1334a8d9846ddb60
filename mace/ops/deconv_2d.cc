// Transposed convolutions of NHWC data, with a fused bias and activation.
//
// Deconv2D: input [N, H, W, Cin], filter [Cout, Kh, Kw, Cin / group], then
// either an optional bias [Cout], or (TensorFlow models) an int32 constant
// output_shape [4] followed by an optional bias. With a fused PRELU the
// bias is required and the slope ([Cout] or [1]) follows it as the last
// input. Filter, bias and slope may be constants or values fed at run time
// (only their shapes are needed in Prepare).
// DepthwiseDeconv2d: filter [Kh, Kw, C, multiplier], output channel
// c * multiplier + m from input channel c; `group`, if given, must be C.
//
// Input pixel i reaches the full output at i * stride + k * dilation; the
// output is that full output with pads cropped off its borders:
//   - padding_values (ONNX ConvTranspose pads [top, left, bottom, right],
//     or MACE's [total_h, total_w] with top = total / 2):
//     out = (in - 1) * stride - pad_top - pad_bottom
//           + dilation * (kernel - 1) + 1 + output_padding;
//   - otherwise TF conv2d_transpose: padding VALID or SAME, output size from
//     `output_shape` ([N, Ho, Wo, Cout], an input or an int-list argument)
//     or else SAME: in * stride, VALID: (in - 1) * stride + extent (plus
//     output_padding); pads are those of the forward conv of that output.

#include <algorithm>
#include <limits>

#include "mace/kernels/deconv_gemm.h"
#include "mace/ops/common/conv_util.h"
#include "mace/ops/common/dense_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

// Output size and leading crop along one axis.
struct TransposedAxis {
  int64_t in = 0, kernel = 0, stride = 1, dilation = 1;
  int64_t out = 0, pad_begin = 0;
};

class DeconvOp : public Operation {
 public:
  explicit DeconvOp(bool depthwise) : depthwise_(depthwise) {}

  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(CheckNhwc(*context));
    MACE_RETURN_IF_ERROR(ParseActivation(*context, true, &activation_));
    const bool prelu = activation_.type == ActivationType::kPRelu;
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(2, prelu ? 5 : 4));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(CheckFloat4D(*context, 0, "input"));
    MACE_RETURN_IF_ERROR(CheckFloat4D(*context, 1, "filter"));
    MACE_RETURN_IF_ERROR(ClassifyInputs(*context));
    MACE_RETURN_IF_ERROR(depthwise_ ? ReadDepthwiseConvDims(*context, &dims_)
                                    : ReadGroupedConvDims(*context, &dims_));
    if (bias_index_ >= 0) {
      MACE_RETURN_IF_ERROR(CheckBias(*context, bias_index_, dims_.out_c));
    }
    MACE_RETURN_IF_ERROR(
        CheckFusedPReluSlope(*context, activation_, slope_index_, dims_.out_c));
    MACE_RETURN_IF_ERROR(ComputeOutput(*context));
    const Shape out_shape = {dims_.batch, dims_.out_h, dims_.out_w,
                             dims_.out_c};
    MACE_RETURN_IF_ERROR(
        CheckOutputSize(*context, out_shape, dims_.kernel_h, dims_.kernel_w));
    BuildTaps();
    Tensor *output = context->output(0);
    output->set_dtype(DT_FLOAT);
    output->set_shape(out_shape);
    return PrepareGemm(context);
  }

  MaceStatus Run(OpContext *context) override {
    const float *bias =
        bias_index_ >= 0 ? context->input(bias_index_).data<float>() : nullptr;
    const float *x = context->input(0).data<float>();
    const float *w = context->input(1).data<float>();
    float *y = context->output(0)->mutable_data<float>();
    const PReluSlope slope =
        FusedPReluSlope(*context, activation_, slope_index_);
    if (gemm_.initialized()) {
      float *scratch = context->scratch<float>();
      if (filter_fed_) {
        gemm_.PackFilter(w, scratch + gemm_.ScratchBytes() / sizeof(float),
                         context->thread_pool());
      }
      gemm_.Run(x, bias, y, scratch, context->thread_pool());
      const int64_t channels = dims_.out_c;
      const Activation act = activation_;
      context->thread_pool()->ParallelFor(
          0, dims_.batch * dims_.out_h * dims_.out_w, GrainFor(channels),
          [&](int64_t begin, int64_t end) {
            ActivateBlock(act, slope, 0, y + begin * channels, end - begin,
                          channels, channels);
          });
      return MaceStatus::MACE_SUCCESS;
    }
    if (depthwise_) {
      DepthwiseConvByTaps(dims_, rows_, cols_, x, w, bias, activation_, y,
                          context->thread_pool(), slope);
    } else {
      GroupedConvByTaps(dims_, rows_, cols_, x, w, bias, activation_, y,
                        context->thread_pool(), slope);
    }
    return MaceStatus::MACE_SUCCESS;
  }

  // Every input pixel meets every kernel tap once (cropped ones included).
  int FilterInput() const override { return 1; }

  int64_t MacCount(const OpContext &context) const override {
    const int64_t per_tap =
        depthwise_ ? dims_.out_c : dims_.in_c * dims_.out_c / dims_.groups;
    return dims_.batch * dims_.in_h * dims_.in_w * dims_.kernel_h *
           dims_.kernel_w * per_tap;
  }

 private:
  // A filter of one group goes the GEMM path, packed here when it is a
  // constant, else before each run (the taps path ran UNet's 3x3/2
  // up-convolution at 2 GMACPS, its filter fed at run time 26x slower than
  // the GEMM).
  MaceStatus PrepareGemm(OpContext *context) {
    gemm_ = kernels::DeconvGemm();
    filter_fed_ = false;
    const Tensor &filter = context->input(1);
    if (depthwise_ || dims_.groups != 1 || !context->will_run()) {
      return MaceStatus::MACE_SUCCESS;
    }
    const bool constant = filter.is_constant() && filter.has_data();
    kernels::DeconvGeometry g;
    g.batch = dims_.batch;
    g.in_h = dims_.in_h;
    g.in_w = dims_.in_w;
    g.in_c = dims_.in_c;
    g.out_h = dims_.out_h;
    g.out_w = dims_.out_w;
    g.out_c = dims_.out_c;
    g.kernel_h = dims_.kernel_h;
    g.kernel_w = dims_.kernel_w;
    g.stride_h = row_axis_.stride;
    g.stride_w = col_axis_.stride;
    g.dilation_h = row_axis_.dilation;
    g.dilation_w = col_axis_.dilation;
    g.pad_top = row_axis_.pad_begin;
    g.pad_left = col_axis_.pad_begin;
    const bool placed =
        constant ? gemm_.Init(g, filter.data<float>(),
                              kernels::SelectedSgemmIsa(),
                              context->thread_pool(), context->packed_weights())
                 : gemm_.Init(g, kernels::SelectedSgemmIsa());
    if (!placed) {
      return context->OutOfResources("cannot allocate the packed copy of ",
                                     "filter '", filter.name(), "'");
    }
    filter_fed_ = !constant;
    context->RequestScratch(gemm_.ScratchBytes() +
                            (filter_fed_ ? gemm_.FilterReorderBytes() : 0));
    return MaceStatus::MACE_SUCCESS;
  }

  // An int32 input 2 is TensorFlow's output_shape; bias follows it. A
  // fused PRELU's slope is the last input, after the (required) bias.
  MaceStatus ClassifyInputs(const OpContext &context) {
    const bool prelu = activation_.type == ActivationType::kPRelu;
    const int n = context.num_inputs() - (prelu ? 1 : 0);
    const bool has_shape_input = n >= 3 && context.input(2).dtype() == DT_INT32;
    if (n == 4 && !has_shape_input) {
      return context.InvalidArgs("with 4 inputs",
                                 prelu ? " before the PRELU slope" : "",
                                 ", input 2 must be the int32 output_shape");
    }
    shape_index_ = has_shape_input ? 2 : -1;
    bias_index_ = has_shape_input ? (n == 4 ? 3 : -1) : (n == 3 ? 2 : -1);
    slope_index_ = prelu ? n : -1;
    if (prelu && bias_index_ < 0) {
      return context.InvalidArgs(
          "a fused PRELU needs a bias, then its slope, as the last inputs");
    }
    return MaceStatus::MACE_SUCCESS;
  }

  // Reads output_shape from input 2 or the argument; empty when absent.
  MaceStatus ReadOutputShape(const OpContext &context,
                             std::vector<int64_t> *shape) {
    if (shape_index_ >= 0) {
      MACE_RETURN_IF_ERROR(context.ExpectConstant(shape_index_));
      const Tensor &t = context.input(shape_index_);
      if (t.rank() != 1 || t.dim(0) != 4) {
        return context.InvalidArgs("output_shape input '", t.name(),
                                   "' must have 4 values, has shape ",
                                   ShapeToString(t.shape()));
      }
      const int32_t *v = t.data<int32_t>();
      shape->assign(v, v + 4);
    } else {
      MACE_RETURN_IF_ERROR(context.args().GetInts(
          "output_shape", std::vector<int64_t>{}, shape));
      if (!shape->empty() && shape->size() != 4) {
        return context.InvalidArgs(
            "argument 'output_shape' must have 4 values [N, H, W, C], has ",
            shape->size());
      }
    }
    if (shape->empty()) return MaceStatus::MACE_SUCCESS;
    const std::vector<int64_t> &s = *shape;
    constexpr int64_t kMaxSize = std::numeric_limits<int32_t>::max();
    if (s[0] != dims_.batch || s[3] != dims_.out_c || s[1] < 1 || s[2] < 1 ||
        s[1] > kMaxSize || s[2] > kMaxSize) {
      return context.InvalidArgs("output_shape ", ShapeToString(s),
                                 " must be [", dims_.batch, ", Ho, Wo, ",
                                 dims_.out_c, "] with Ho, Wo in [1, 2^31)");
    }
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus ReadOutputPadding(const OpContext &context, const Window2D &window,
                               std::vector<int64_t> *output_padding) {
    MACE_RETURN_IF_ERROR(context.args().GetInts(
        "output_padding", std::vector<int64_t>{0, 0}, output_padding));
    const std::vector<int64_t> &p = *output_padding;
    // As ONNX and PyTorch: extra rows must be less than one stride (or one
    // dilation) beyond the full output, or they could hold nothing.
    if (p.size() != 2 || p[0] < 0 || p[1] < 0 ||
        p[0] >= std::max(window.stride_h, window.dilation_h) ||
        p[1] >= std::max(window.stride_w, window.dilation_w)) {
      return context.InvalidArgs(
          "argument 'output_padding' must be two values [h, w], each >= 0 ",
          "and less than the stride or dilation of its axis");
    }
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus ComputeOutput(const OpContext &context) {
    Window2D window;
    MACE_RETURN_IF_ERROR(ParseWindow2D(context, &window));
    MACE_RETURN_IF_ERROR(
        CheckWindowRange(context, window, dims_.kernel_h, dims_.kernel_w));
    std::vector<int64_t> output_padding;
    MACE_RETURN_IF_ERROR(ReadOutputPadding(context, window, &output_padding));
    std::vector<int64_t> output_shape;
    MACE_RETURN_IF_ERROR(ReadOutputShape(context, &output_shape));

    TransposedAxis rows{dims_.in_h, dims_.kernel_h, window.stride_h,
                        window.dilation_h};
    TransposedAxis cols{dims_.in_w, dims_.kernel_w, window.stride_w,
                        window.dilation_w};
    const std::vector<int64_t> &pads = window.explicit_pads;
    if (!pads.empty()) {
      if (!output_shape.empty()) {
        return context.InvalidArgs(
            "give either 'padding_values' or output_shape, not both");
      }
      const bool four = pads.size() == 4;
      const int64_t top = four ? pads[0] : pads[0] / 2;
      const int64_t left = four ? pads[1] : pads[1] / 2;
      const int64_t bottom = four ? pads[2] : pads[0] - top;
      const int64_t right = four ? pads[3] : pads[1] - left;
      ExplicitAxis(top, bottom, output_padding[0], &rows);
      ExplicitAxis(left, right, output_padding[1], &cols);
    } else {
      if (window.padding == PaddingType::kFull) {
        return context.InvalidArgs(
            "argument 'padding' must be 0 (VALID) or 1 (SAME), is 2 (FULL)");
      }
      const bool has_shape = !output_shape.empty();
      if (has_shape && (output_padding[0] != 0 || output_padding[1] != 0)) {
        return context.InvalidArgs(
            "argument 'output_padding' cannot be used with output_shape");
      }
      const bool same = window.padding == PaddingType::kSame;
      MACE_RETURN_IF_ERROR(TfAxis(context, same,
                                  has_shape ? output_shape[1] : -1,
                                  output_padding[0], &rows));
      MACE_RETURN_IF_ERROR(TfAxis(context, same,
                                  has_shape ? output_shape[2] : -1,
                                  output_padding[1], &cols));
    }
    if (rows.out < 1 || cols.out < 1) {
      return context.InvalidArgs("padding_values crop the whole output: ",
                                 "output would be ", rows.out, "x", cols.out);
    }
    dims_.out_h = rows.out;
    dims_.out_w = cols.out;
    row_axis_ = rows;
    col_axis_ = cols;
    return MaceStatus::MACE_SUCCESS;
  }

  // After CheckOutputSize, which bounds the tables.
  void BuildTaps() {
    const TransposedAxis &rows = row_axis_, &cols = col_axis_;
    BuildTransposedTaps(rows.out, rows.in, rows.kernel, rows.stride,
                        rows.dilation, rows.pad_begin, &rows_);
    BuildTransposedTaps(cols.out, cols.in, cols.kernel, cols.stride,
                        cols.dilation, cols.pad_begin, &cols_);
  }

  static int64_t Extent(const TransposedAxis &axis) {
    return (axis.kernel - 1) * axis.dilation + 1;
  }

  static void ExplicitAxis(int64_t pad_begin, int64_t pad_end,
                           int64_t output_padding, TransposedAxis *axis) {
    axis->pad_begin = pad_begin;
    axis->out = (axis->in - 1) * axis->stride + Extent(*axis) - pad_begin -
                pad_end + output_padding;
  }

  // TF conv2d_transpose: `requested` output size (-1: the natural one),
  // which must map back onto `in` under the forward conv.
  static MaceStatus TfAxis(const OpContext &context, bool same,
                           int64_t requested, int64_t output_padding,
                           TransposedAxis *axis) {
    const int64_t in = axis->in, stride = axis->stride;
    const int64_t extent = Extent(*axis);
    int64_t base = same ? in * stride : (in - 1) * stride + extent;
    if (requested >= 0) {
      int64_t forward = 0;  // the forward conv's output size
      if (same) {
        forward = (requested + stride - 1) / stride;
      } else if (requested >= extent) {
        forward = (requested - extent) / stride + 1;
      }
      if (forward != in) {
        return context.InvalidArgs(
            "output_shape size ", requested, " does not give input size ", in,
            " under a ", same ? "SAME" : "VALID", " conv with stride ", stride,
            " and window ", extent);
      }
      base = requested;
    }
    const int64_t total =
        std::max<int64_t>((in - 1) * stride + extent - base, 0);
    axis->pad_begin = total / 2;
    axis->out = base + output_padding;
    return MaceStatus::MACE_SUCCESS;
  }

  const bool depthwise_;
  int shape_index_ = -1;
  int bias_index_ = -1;
  int slope_index_ = -1;
  Activation activation_;
  ConvDims dims_;
  AxisTaps rows_;
  AxisTaps cols_;
  TransposedAxis row_axis_;
  TransposedAxis col_axis_;
  kernels::DeconvGemm gemm_;  // one group; else the taps
  bool filter_fed_ = false;   // gemm_ packs the filter before each run
};

class Deconv2dOp : public DeconvOp {
 public:
  Deconv2dOp() : DeconvOp(false) {}
};

class DepthwiseDeconv2dOp : public DeconvOp {
 public:
  DepthwiseDeconv2dOp() : DeconvOp(true) {}
};

}  // namespace

void RegisterDeconv2D(OpRegistry *registry) {
  registry->Register<Deconv2dOp>("Deconv2D");
  registry->Register<DepthwiseDeconv2dOp>("DepthwiseDeconv2d");
}

}  // namespace mace
