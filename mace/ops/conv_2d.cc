// Conv2D: grouped 2-D convolution of NHWC data with a fused bias and
// activation.
//   inputs:  input [N, H, W, Cin], filter [Cout, Kh, Kw, Cin / group]
//            (OHWI), optional bias [Cout], then, with a fused PRELU (bias
//            then required), its slope [Cout] or [1]; filter and bias may
//            be constants
//            or values fed at run time (ONNX models may give weights as
//            graph inputs): only their shapes are needed in Prepare; with
//            `fused_add`, the bias (then required) and slope are followed
//            by the addend [N, Ho, Wo, Cout];
//   args:    strides, dilations, padding, padding_values, round_mode (see
//            conv_pool_util.h), group (default 1), fused activation,
//            winograd (absent or -1: automatic, 0: never, 2 / 4 / 6: that
//            output tile where Winograd applies, 4 for 6 on a 5x5
//            window), fused_add (0 or 1: the
//            last input is added to the output before the activation, a
//            residual connection fused by the converter);
//   output:  [N, Ho, Wo, Cout], Ho / Wo from the window arguments:
//            act(conv(input) + bias + addend).
// With a constant filter, Prepare packs it for one of three fast kernels:
// Winograd F(m,3) / F(m,5) for 3x3 / 5x5 stride-1 dilation-1 ungrouped
// convolutions when the cost model (mace/kernels/winograd.h) or the
// `winograd` arg says so;
// Winograd along one axis for 1x3 / 3x1, 1x5 / 5x1 and 1x7 / 7x1 ones
// when its cost model says so (mace/kernels/winograd_1d.h; `winograd` 0
// turns it off too); otherwise GEMM over im2col tiles
// (mace/kernels/conv_im2col.h, any window and group). All fuse bias and
// activation. A filter fed at run time runs the reference tap loop, which
// is also their specification.

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
    MACE_RETURN_IF_ERROR(ReadFusedAdd(*context, &fused_add_));
    MACE_RETURN_IF_ERROR(
        ExpectWeightedOpInputs(*context, activation_, "filter", fused_add_));
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
    int winograd = -1;
    MACE_RETURN_IF_ERROR(context->args().GetInt("winograd", -1, &winograd));
    if (winograd != -1 && winograd != 0 && winograd != 2 && winograd != 4 &&
        winograd != 6) {
      return context->InvalidArgs("argument 'winograd' must be -1 (automatic)",
                                  ", 0 (never), 2, 4 or 6, is ", winograd);
    }
    MACE_RETURN_IF_ERROR(PrepareKernel(context, winograd));
    // Only the reference path reads the taps.
    if (!Packed()) BuildForwardTaps(dims_, window_, pads_, &rows_, &cols_);
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
      const float *input = context->input(0).data<float>();
      float *scratch = context->scratch<float>();
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
        im2col_.Run(input, bias, clamped ? clamp : nullptr, addend, output,
                    out_stride, scratch, context->thread_pool(),
                    activated && !clamped ? &epilogue : nullptr);
      }
      return MaceStatus::MACE_SUCCESS;
    }
    if (!fused_add_) {
      GroupedConvByTaps(dims_, rows_, cols_, context->input(0).data<float>(),
                        context->input(1).data<float>(), bias, activation_,
                        output, context->thread_pool(), slope);
      return MaceStatus::MACE_SUCCESS;
    }
    GroupedConvByTaps(dims_, rows_, cols_, context->input(0).data<float>(),
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
  static MaceStatus ReadFusedAdd(const OpContext &context, bool *fused_add) {
    int value = 0;
    MACE_RETURN_IF_ERROR(context.args().GetInt("fused_add", 0, &value));
    if (value != 0 && value != 1) {
      return context.InvalidArgs("argument 'fused_add' must be 0 or 1, is ",
                                 value);
    }
    *fused_add = value == 1;
    return MaceStatus::MACE_SUCCESS;
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

  // Packs a constant filter for one of the fast kernels and requests its
  // scratch; leaves all empty (reference path) for a fed filter.
  MaceStatus PrepareKernel(OpContext *context, int winograd) {
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
    int64_t scratch_bytes = 0;
    if (tile > 0) {
      packed = winograd_.Init(geometry, tile, weights, isa, threads,
                              context->thread_pool(), context->packed_weights(),
                              context->deferred_work());
      scratch_bytes = winograd_.ScratchBytes();
    } else if (points_1d > 0) {
      packed = winograd_1d_.Init(
          geometry, weights, isa, threads, context->thread_pool(),
          context->packed_weights(), context->deferred_work(), points_1d);
      scratch_bytes = winograd_1d_.ScratchBytes();
    } else {
      packed =
          im2col_.Init(geometry, weights, isa, threads, context->thread_pool(),
                       context->packed_weights(), context->deferred_work());
      scratch_bytes = im2col_.ScratchBytes();
    }
    if (!packed) {
      return context->OutOfResources("cannot allocate the packed copy of ",
                                     "filter '", filter.name(), "'");
    }
    context->RequestScratch(scratch_bytes);
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
