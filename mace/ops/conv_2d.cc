// Conv2D: grouped 2-D convolution of NHWC data with a fused bias and
// activation.
//   inputs:  input [N, H, W, Cin], filter [Cout, Kh, Kw, Cin / group]
//            (OHWI), optional bias [Cout], then, with a fused PRELU (bias
//            then required), its slope [Cout] or [1]; filter and bias may
//            be constants
//            or values fed at run time (ONNX models may give weights as
//            graph inputs): only their shapes are needed in Prepare; with
//            `input_scale`, the bias (then required) and slope are followed
//            by the scale [N or 1, 1, 1, Cin]; with `fused_add`, by the
//            addend [N, Ho, Wo, Cout], last;
//   args:    strides, dilations, padding, padding_values, round_mode (see
//            conv_pool_util.h), group (default 1), fused activation,
//            winograd (absent or -1: automatic, 0: never, 2 / 4 / 6: that
//            output tile where Winograd applies, 4 for 6 on a 5x5
//            window), fused_add (0 or 1: the
//            last input is added to the output before the activation, a
//            residual connection fused by the converter), input_scale
//            (0 or 1: the input is multiplied by the scale, one factor per
//            image and input channel, before the convolution: a
//            squeeze-and-excitation gate fused by the converter);
//   output:  [N, Ho, Wo, Cout], Ho / Wo from the window arguments:
//            act(conv(input * scale) + bias + addend).
// With a constant filter, Prepare packs it for one of three fast kernels:
// Winograd F(m,3) / F(m,5) for 3x3 / 5x5 stride-1 dilation-1 ungrouped
// convolutions when the cost model (mace/kernels/winograd.h) or the
// `winograd` arg says so;
// Winograd along one axis for 1x3 / 3x1, 1x5 / 5x1 and 1x7 / 7x1 ones
// when its cost model says so (mace/kernels/winograd_1d.h; `winograd` 0
// turns it off too); otherwise GEMM over im2col tiles
// (mace/kernels/conv_im2col.h, any window and group). All fuse bias and
// activation. A filter fed at run time runs the reference tap loop, which
// is also their specification. An input scale goes into a copy of the
// packed im2col filter's rows at each Run (one scale for every image, one
// group), else into a scaled copy of the input.

#include "mace/core/int_math.h"
#include "mace/kernels/binary_channels.h"
#include "mace/kernels/conv_im2col.h"
#include "mace/kernels/winograd.h"
#include "mace/kernels/winograd_1d.h"
#include "mace/ops/common/conv_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class Conv2dOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(CheckNhwc(*context));
    MACE_RETURN_IF_ERROR(ParseActivation(*context, true, &activation_));
    MACE_RETURN_IF_ERROR(ReadFlag(*context, "fused_add", &fused_add_));
    MACE_RETURN_IF_ERROR(ReadFlag(*context, "input_scale", &input_scale_));
    MACE_RETURN_IF_ERROR(ExpectWeightedOpInputs(*context, activation_, "filter",
                                                fused_add_, input_scale_));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(CheckFloat4D(*context, 0, "input"));
    MACE_RETURN_IF_ERROR(CheckFloat4D(*context, 1, "filter"));
    MACE_RETURN_IF_ERROR(ReadGroupedConvDims(*context, &dims_));
    if (context->num_inputs() >= 3) {
      MACE_RETURN_IF_ERROR(CheckBias(*context, 2, dims_.out_c));
    }
    MACE_RETURN_IF_ERROR(CheckFusedPReluSlope(
        *context, activation_, kWeightedOpSlopeIndex, dims_.out_c));

    MACE_RETURN_IF_ERROR(
        PrepareForwardWindow(context, &dims_, &window_, &pads_));
    if (fused_add_) {
      MACE_RETURN_IF_ERROR(CheckAddend(*context));
    }
    if (input_scale_) {
      MACE_RETURN_IF_ERROR(CheckInputScale(*context));
    }
    int winograd = -1;
    MACE_RETURN_IF_ERROR(context->args().GetInt("winograd", -1, &winograd));
    if (winograd != -1 && winograd != 0 && winograd != 2 && winograd != 4 &&
        winograd != 6) {
      return context->InvalidArgs("argument 'winograd' must be -1 (automatic)",
                                  ", 0 (never), 2, 4 or 6, is ", winograd);
    }
    int64_t kernel_scratch_bytes = 0;
    MACE_RETURN_IF_ERROR(
        PrepareKernel(context, winograd, &kernel_scratch_bytes));
    // Only the reference path reads the taps.
    if (!Packed()) BuildForwardTaps(dims_, window_, pads_, &rows_, &cols_);
    context->RequestScratch(PlanInputScale(*context, kernel_scratch_bytes));
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const float *bias =
        context->num_inputs() >= 3 ? context->input(2).data<float>() : nullptr;
    const PReluSlope slope =
        FusedPReluSlope(*context, activation_, kWeightedOpSlopeIndex);
    float *output = context->output(0)->mutable_data<float>();
    const float *addend =
        fused_add_ ? context->input(context->num_inputs() - 1).data<float>()
                   : nullptr;
    float *scratch = context->scratch<float>();
    const float *input = context->input(0).data<float>();
    const float *scale =
        input_scale_ ? context->input(ScaleIndex()).data<float>() : nullptr;
    if (scale_mode_ == ScaleMode::kInputCopy) {
      float *scaled = scratch + scale_offset_;
      ScaleInputChannels(input, scale, scaled, context->thread_pool());
      input = scaled;
    }
    if (Packed()) {
      // Pixels of a Concat's input written in place lie further apart
      // (WritesStridedOutput excludes the addend, laid out packed).
      const int64_t out_stride = context->output_row_stride() > 0
                                     ? context->output_row_stride()
                                     : dims_.out_c;
      const Activation act = activation_;
      // Winograd adds the addend in its epilogue, after the output
      // transform; im2col in the GEMM's registers.
      const float *epilogue_addend = im2col_.initialized() ? nullptr : addend;
      auto activate = [&](float *c, int64_t rows, int64_t cols, int64_t ldc) {
        const int64_t offset = c - output;
        ActivateBlock(
            act, slope, offset % ldc, c, rows, cols, ldc,
            epilogue_addend != nullptr ? epilogue_addend + offset : nullptr);
      };
      const kernels::SgemmEpilogue epilogue(activate);
      const bool activated = act.type != ActivationType::kNoop;
      const kernels::SgemmEpilogue *winograd_epilogue =
          activated || addend != nullptr ? &epilogue : nullptr;
      if (winograd_.initialized()) {
        winograd_.Run(input, bias, output, out_stride, scratch,
                      context->thread_pool(), winograd_epilogue);
      } else if (winograd_1d_.initialized()) {
        winograd_1d_.Run(input, bias, output, out_stride, scratch,
                         context->thread_pool(), winograd_epilogue);
      } else {
        // ReLU / ReLU6 clamp in the GEMM's registers; others are an
        // epilogue pass over each finished block.
        float clamp[2];
        const bool clamped = ToClampBounds(act, clamp);
        const kernels::SgemmEpilogue *im2col_epilogue =
            activated && !clamped ? &epilogue : nullptr;
        if (scale_mode_ == ScaleMode::kFilterRows) {
          im2col_.RunScaledInput(input, scale, bias, clamped ? clamp : nullptr,
                                 addend, output, out_stride, scratch,
                                 context->thread_pool(), im2col_epilogue);
        } else {
          im2col_.Run(input, bias, clamped ? clamp : nullptr, addend, output,
                      out_stride, scratch, context->thread_pool(),
                      im2col_epilogue);
        }
      }
      return MaceStatus::MACE_SUCCESS;
    }
    if (!fused_add_) {
      GroupedConvByTaps(dims_, rows_, cols_, input,
                        context->input(1).data<float>(), bias, activation_,
                        output, context->thread_pool(), slope);
      return MaceStatus::MACE_SUCCESS;
    }
    GroupedConvByTaps(dims_, rows_, cols_, input,
                      context->input(1).data<float>(), bias, Activation(),
                      output, context->thread_pool());
    ActivateBlock(activation_, slope, 0, output,
                  dims_.batch * dims_.out_h * dims_.out_w, dims_.out_c,
                  dims_.out_c, addend);
    return MaceStatus::MACE_SUCCESS;
  }

  // The packed kernels write any pixel stride; the reference path and a
  // fused addend (laid out packed) do not.
  bool WritesStridedOutput() const override { return Packed() && !fused_add_; }

  // The GEMM adds the addend in its registers, reading each output
  // element's addend before writing the element, so the output may take
  // over the addend's buffer. Winograd and the reference path add it in a
  // pass over the finished output, which must not overwrite it first.
  OutputMemory output_memory() const override {
    return fused_add_ && im2col_.initialized()
               ? OutputMemory::kMayReuseLastInput
               : OutputMemory::kOwn;
  }

  int FilterInput() const override { return 1; }

  int64_t MacCount(const OpContext &context) const override {
    return dims_.batch * dims_.out_h * dims_.out_w * dims_.out_c *
           dims_.kernel_h * dims_.kernel_w * (dims_.in_c / dims_.groups);
  }

 private:
  // How Run applies an input scale.
  enum class ScaleMode {
    kNone,
    // Into a copy of the packed im2col filter's rows.
    kFilterRows,
    // Into a copy of the input, as the Eltwise op would have made it: a
    // scale per image, a large filter, another kernel.
    kInputCopy,
  };

  static constexpr int64_t kFloatBytes = sizeof(float);

  // A 0 / 1 argument, 0 when absent.
  static MaceStatus ReadFlag(const OpContext &context, const char *name,
                             bool *flag) {
    int value = 0;
    MACE_RETURN_IF_ERROR(context.args().GetInt(name, 0, &value));
    if (value != 0 && value != 1) {
      return context.InvalidArgs("argument '", name, "' must be 0 or 1, is ",
                                 value);
    }
    *flag = value == 1;
    return MaceStatus::MACE_SUCCESS;
  }

  // The input scale's index: after the bias and a PRELU's slope.
  int ScaleIndex() const {
    return kWeightedOpSlopeIndex +
           (activation_.type == ActivationType::kPRelu ? 1 : 0);
  }

  // The input scale: float [N or 1, 1, 1, Cin].
  MaceStatus CheckInputScale(const OpContext &context) const {
    const Tensor &scale = context.input(ScaleIndex());
    const Shape &shape = scale.shape();
    const bool fits = scale.dtype() == DT_FLOAT && shape.size() == 4 &&
                      (shape[0] == 1 || shape[0] == dims_.batch) &&
                      shape[1] == 1 && shape[2] == 1 && shape[3] == dims_.in_c;
    if (!fits) {
      return context.InvalidArgs(
          "input scale '", scale.name(), "' must be float [", dims_.batch,
          " or 1, 1, 1, ", dims_.in_c, "], is ", DataTypeName(scale.dtype()),
          " ", ShapeToString(shape));
    }
    return MaceStatus::MACE_SUCCESS;
  }

  // Chooses how Run applies the input scale; returns the scratch bytes
  // Run needs, given the kernel's.
  int64_t PlanInputScale(const OpContext &context,
                         int64_t kernel_scratch_bytes) {
    scale_mode_ = ScaleMode::kNone;
    scale_images_ = 0;
    if (!input_scale_) return kernel_scratch_bytes;
    scale_images_ = context.input(ScaleIndex()).dim(0);
    if (im2col_.initialized() && im2col_.ScalesFilterRows() &&
        scale_images_ == 1) {
      scale_mode_ = ScaleMode::kFilterRows;
      return im2col_.ScaledInputScratchBytes();
    }
    // The scaled input follows the kernel's scratch, aligned for its
    // loads.
    scale_mode_ = ScaleMode::kInputCopy;
    scale_offset_ =
        RoundUp(kernel_scratch_bytes, kCacheLineBytes) / kFloatBytes;
    return (scale_offset_ +
            dims_.batch * dims_.in_h * dims_.in_w * dims_.in_c) *
           kFloatBytes;
  }

  // scaled = input * scale, the scale's row for each image (or its one
  // row for all).
  void ScaleInputChannels(const float *input, const float *scale, float *scaled,
                          ThreadPool *pool) const {
    const int64_t image = dims_.in_h * dims_.in_w * dims_.in_c;
    const int64_t images = scale_images_ == 1 ? 1 : dims_.batch;
    const int64_t each = scale_images_ == 1 ? dims_.batch * image : image;
    for (int64_t n = 0; n < images; ++n) {
      kernels::BinaryChannels(kernels::BinaryKind::kProd, input + n * each,
                              scale + n * dims_.in_c, dims_.in_c, false,
                              scaled + n * each, each, pool);
    }
  }

  // The addend of a fused addition: float, of the output's shape.
  MaceStatus CheckAddend(const OpContext &context) const {
    const Tensor &addend = context.input(context.num_inputs() - 1);
    const Shape expected = {dims_.batch, dims_.out_h, dims_.out_w, dims_.out_c};
    if (addend.dtype() != DT_FLOAT || addend.shape() != expected) {
      return context.InvalidArgs(
          "addend '", addend.name(), "' must be float of the output's shape ",
          ShapeToString(expected), ", is ", DataTypeName(addend.dtype()), " ",
          ShapeToString(addend.shape()));
    }
    return MaceStatus::MACE_SUCCESS;
  }

  // Packs a constant filter for one of the fast kernels and says the
  // scratch it needs; leaves all empty (reference path) for a fed filter.
  MaceStatus PrepareKernel(OpContext *context, int winograd,
                           int64_t *scratch_bytes) {
    *scratch_bytes = 0;
    winograd_ = kernels::WinogradConv();
    winograd_1d_ = kernels::Winograd1dConv();
    im2col_ = kernels::Im2colConv();
    const Tensor &filter = context->input(1);
    if (!filter.is_constant() || !filter.has_data() || !context->will_run()) {
      return MaceStatus::MACE_SUCCESS;
    }
    const kernels::ConvGeometry geometry = Geometry();
    const int threads = context->thread_pool() != nullptr
                            ? context->thread_pool()->num_threads()
                            : 1;
    const kernels::SgemmIsa isa = kernels::SelectedSgemmIsa();
    const int tile = winograd < 0 ? kernels::ChooseWinogradTile(geometry, isa)
                     : kernels::WinogradApplies(geometry) ? winograd
                                                          : 0;
    const int points_1d = tile == 0 && winograd != 0
                              ? kernels::Winograd1dTilePoints(geometry)
                              : 0;
    const float *weights = filter.data<float>();
    bool packed = false;
    if (tile > 0) {
      packed = winograd_.Init(geometry, tile, weights, isa, threads,
                              context->thread_pool(), context->packed_weights(),
                              context->deferred_work());
      *scratch_bytes = winograd_.ScratchBytes();
    } else if (points_1d > 0) {
      packed = winograd_1d_.Init(
          geometry, weights, isa, threads, context->thread_pool(),
          context->packed_weights(), context->deferred_work(), points_1d);
      *scratch_bytes = winograd_1d_.ScratchBytes();
    } else {
      packed =
          im2col_.Init(geometry, weights, isa, threads, context->thread_pool(),
                       context->packed_weights(), context->deferred_work());
      *scratch_bytes = im2col_.ScratchBytes();
    }
    if (!packed) {
      return context->OutOfResources("cannot allocate the packed copy of ",
                                     "filter '", filter.name(), "'");
    }
    return MaceStatus::MACE_SUCCESS;
  }

  // Whether a fast kernel holds the filter packed (else the reference
  // path runs).
  bool Packed() const {
    return winograd_.initialized() || winograd_1d_.initialized() ||
           im2col_.initialized();
  }

  // dims_ plus the window arguments, as the fast kernels take them.
  kernels::ConvGeometry Geometry() const {
    kernels::ConvGeometry g;
    g.batch = dims_.batch;
    g.in_h = dims_.in_h;
    g.in_w = dims_.in_w;
    g.in_c = dims_.in_c;
    g.out_h = dims_.out_h;
    g.out_w = dims_.out_w;
    g.out_c = dims_.out_c;
    g.kernel_h = dims_.kernel_h;
    g.kernel_w = dims_.kernel_w;
    g.stride_h = window_.stride_h;
    g.stride_w = window_.stride_w;
    g.dilation_h = window_.dilation_h;
    g.dilation_w = window_.dilation_w;
    g.pad_top = pads_.top;
    g.pad_left = pads_.left;
    g.groups = dims_.groups;
    return g;
  }

  Activation activation_;
  bool fused_add_ = false;
  bool input_scale_ = false;
  ScaleMode scale_mode_ = ScaleMode::kNone;
  int64_t scale_images_ = 0;  // the input scale's first dimension
  int64_t scale_offset_ = 0;  // kInputCopy: the copy's place in scratch

  ConvDims dims_;
  Window2D window_;
  Pads2D pads_;
  AxisTaps rows_;
  AxisTaps cols_;
  // At most one initialised; none: reference path.
  kernels::WinogradConv winograd_;
  kernels::Winograd1dConv winograd_1d_;
  kernels::Im2colConv im2col_;
};

}  // namespace

void RegisterConv2D(OpRegistry *registry) {
  registry->Register<Conv2dOp>("Conv2D");
}

}  // namespace mace
