// PointwiseDepthwiseConv2d: a 1x1 convolution followed by a depthwise one,
// the expansion and depthwise layers of an inverted residual block
// (MobileNet-v2/v3, EfficientNet) or a ShuffleNet-v2 branch, computed a
// strip of rows at a time so that the pointwise output, often several
// times the input's size, never leaves the cache:
//   y = act(dw_bias + depthwise(z)),  z = pointwise_act(pw_bias + x * pw)
//   inputs:  input [N, H, W, Cin], pointwise filter [C, 1, 1, Cin] (OHWI),
//            pointwise bias [C], depthwise filter [Kh, Kw, C, 1],
//            depthwise bias [C]; the filters and biases constant;
//   args:    the depthwise window (strides, dilations, padding,
//            padding_values, round_mode: conv_pool_util.h) and activation
//            (activation, max_limit, ...: activation_util.h), the
//            pointwise activation as `pointwise_activation`,
//            `pointwise_max_limit`, ...; no PRELU;
//   output:  [N, Ho, Wo, C].
// The converter fuses Conv2D + DepthwiseConv2d into it where z would be
// large (mace/converter/passes/fuse_pointwise_depthwise.cc); the depthwise
// part must be one the direct kernels take (3x3 or 5x5, strides 1 or 2,
// no dilation).
//
// Each thread takes a band of output rows and walks it in strips: the
// pointwise rows a strip's windows read go into the thread's scratch
// (SGEMM, bias and activation fused), then the depthwise kernel turns them
// into the strip's output rows. The rows two strips share stay in the
// scratch (moved to its top) instead of being computed again; those two
// bands share are computed by both. Where bands would be thinner than
// kMinBandRows, that overlap costs more than the cache saves (MobileNet-v3
// at 16 threads on the lent Xeon: 1.03-1.11 of the two ops' time), and
// the op runs as the two ops would, the whole pointwise output into
// scratch on all threads, then the depthwise convolution. On the
// 1x112x112x16 -> 96, 3x3 stride 2 block of MobileNet-v2, with the caches
// emptied before each call, 1 thread: 1319 us as two ops, 819 us in
// strips of 4 rows.

#include <algorithm>
#include <cstring>

#include "mace/kernels/depthwise.h"
#include "mace/kernels/sgemm.h"
#include "mace/ops/common/activation_util.h"
#include "mace/ops/common/conv_util.h"
#include "mace/ops/common/depthwise_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

// The scratch a thread's strip of pointwise rows may take: a share of a
// 1 MiB L2 that leaves room for the strip's input and output rows.
constexpr int64_t kStripBytes = int64_t{320} << 10;

// Output rows a thread's band needs for strips to pay: a band reads
// (kernel - stride) pointwise rows that the band before computes too.
constexpr int64_t kMinBandRows = 8;

class PointwiseDepthwiseConv2dOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(CheckNhwc(*context));
    MACE_RETURN_IF_ERROR(ParseActivation(*context, false, &activation_));
    MACE_RETURN_IF_ERROR(
        ParseActivation(*context, false, "pointwise_", &pointwise_activation_));
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(5, 5));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(CheckFloat4D(*context, 0, "input"));
    MACE_RETURN_IF_ERROR(CheckFloat4D(*context, 1, "pointwise filter"));
    MACE_RETURN_IF_ERROR(CheckFloat4D(*context, 3, "depthwise filter"));
    MACE_RETURN_IF_ERROR(ReadDims(*context));
    MACE_RETURN_IF_ERROR(CheckBias(*context, 2, dims_.in_c));
    MACE_RETURN_IF_ERROR(CheckBias(*context, 4, dims_.in_c));
    for (int index : {1, 2, 3, 4}) {
      MACE_RETURN_IF_ERROR(context->ExpectConstant(index));
    }
    MACE_RETURN_IF_ERROR(PrepareWindow(context));
    PlanStrips(context);
    return PackWeights(context);
  }

  MaceStatus Run(OpContext *context) override {
    const float *x = context->input(0).data<float>();
    float *y = context->output(0)->mutable_data<float>();
    float *scratch = context->scratch<float>();
    const int64_t in_image = dims_.in_h * dims_.in_w * in_c_;
    const int64_t out_image = dims_.out_h * dims_.out_w * dims_.out_c;
    for (int64_t n = 0; n < dims_.batch; ++n) {
      if (whole_) {
        RunWhole(*context, x + n * in_image, y + n * out_image, scratch);
        continue;
      }
      ParallelForOrInline(
          context->thread_pool(), 0, bands_, 1,
          [&](int64_t begin, int64_t end) {
            for (int64_t band = begin; band < end; ++band) {
              RunBand(*context, band, x + n * in_image, y + n * out_image,
                      scratch + band * strip_floats_);
            }
          });
    }
    return MaceStatus::MACE_SUCCESS;
  }

  // The depthwise filter: the op's window is the depthwise one's.
  int FilterInput() const override { return 3; }

  int64_t MacCount(const OpContext &context) const override {
    return dims_.batch * (dims_.in_h * dims_.in_w * dims_.in_c * in_c_ +
                          dims_.out_h * dims_.out_w * dims_.out_c *
                              dims_.kernel_h * dims_.kernel_w);
  }

 private:
  // dims_ describes the depthwise part: its input is the pointwise output
  // [N, H, W, C]; in_c_ is the pointwise input's channels.
  MaceStatus ReadDims(const OpContext &context) {
    ReadInputDims(context, &dims_);
    in_c_ = dims_.in_c;
    const Tensor &pointwise = context.input(1);
    const Tensor &depthwise = context.input(3);
    const int64_t channels = pointwise.dim(0);
    if (pointwise.dim(1) != 1 || pointwise.dim(2) != 1 ||
        pointwise.dim(3) != in_c_) {
      return context.InvalidArgs(
          "pointwise filter '", pointwise.name(), "' must be [C, 1, 1, ",
          in_c_, "] for the input's ", in_c_, " channels, is ",
          ShapeToString(pointwise.shape()));
    }
    if (depthwise.dim(2) != channels || depthwise.dim(3) != 1) {
      return context.InvalidArgs(
          "depthwise filter '", depthwise.name(), "' must be [Kh, Kw, ",
          channels, ", 1] for the pointwise filter's ", channels,
          " channels, is ", ShapeToString(depthwise.shape()));
    }
    dims_.in_c = channels;
    dims_.out_c = channels;
    dims_.kernel_h = depthwise.dim(0);
    dims_.kernel_w = depthwise.dim(1);
    return MaceStatus::MACE_SUCCESS;
  }

  // The output size (PrepareForwardWindow's checks, output 0 sized) and
  // the depthwise kernels' shape, which must be one they take.
  MaceStatus PrepareWindow(OpContext *context) {
    Window2D window;
    Pads2D pads;
    MACE_RETURN_IF_ERROR(PrepareForwardWindow(context, &dims_, &window, &pads));
    shape_ = MakeDepthwiseShape(dims_, window, pads);
    shape_.batch = 1;
    if (!kernels::DepthwiseKernelSupports(shape_)) {
      return context->Unsupported(
          "the depthwise window must be 3x3 or 5x5 with strides 1 or 2, no ",
          "dilation and pads smaller than the window, is ", dims_.kernel_h,
          "x", dims_.kernel_w, " with strides ", window.stride_h, ", ",
          window.stride_w, " and dilations ", window.dilation_h, ", ",
          window.dilation_w);
    }
    return MaceStatus::MACE_SUCCESS;
  }

  // Output rows a strip (as many as keep its pointwise rows within
  // kStripBytes) and a thread's band (one band a thread), or whole_: too
  // few rows for the threads' bands, or a window that starts below the
  // input's last row and so reads only the bottom padding, which a strip
  // of its own cannot hold.
  void PlanStrips(OpContext *context) {
    const int64_t stride = shape_.stride_h;
    const int64_t row_floats = dims_.in_w * dims_.in_c;
    const int64_t budget_rows =
        std::max<int64_t>(kStripBytes / (row_floats * 4), dims_.kernel_h);
    strip_rows_ = std::max<int64_t>((budget_rows - dims_.kernel_h) / stride + 1,
                                    1);
    const int threads = context->thread_pool() != nullptr
                            ? context->thread_pool()->num_threads()
                            : 1;
    bands_ = threads;
    const bool every_window_reads_input =
        (dims_.out_h - 1) * stride - shape_.pad_top < dims_.in_h;
    whole_ = !every_window_reads_input ||
             (threads > 1 && dims_.out_h < kMinBandRows * threads);
    if (whole_) {
      strip_rows_ = dims_.out_h;
      bands_ = 1;
    }
    strip_rows_ = std::min(strip_rows_, dims_.out_h);
    // Any strip_rows_ output rows read at most this many input rows; the
    // whole pointwise output takes every row, read or not.
    const int64_t strip_in_rows =
        whole_ ? dims_.in_h
               : std::min((strip_rows_ - 1) * stride + dims_.kernel_h,
                          dims_.in_h);
    strip_floats_ = strip_in_rows * row_floats;
    context->RequestScratch(bands_ * strip_floats_ *
                            static_cast<int64_t>(sizeof(float)));
  }

  struct RowRange {
    int64_t begin, end;
    int64_t count() const { return end - begin; }
  };

  // The input rows the windows of output rows [first, last) read, clipped
  // to the input.
  RowRange InputRows(int64_t first, int64_t last) const {
    const int64_t top = first * shape_.stride_h - shape_.pad_top;
    const int64_t bottom =
        (last - 1) * shape_.stride_h - shape_.pad_top + dims_.kernel_h;
    return {std::max<int64_t>(top, 0), std::min(bottom, dims_.in_h)};
  }

  MaceStatus PackWeights(OpContext *context) {
    packed_ = kernels::PackedMatrixB();
    laid_ = nullptr;
    owned_ = AlignedArray<float>();
    if (!context->will_run()) return MaceStatus::MACE_SUCCESS;
    const Tensor &pointwise = context->input(1);
    if (!kernels::PackB(pointwise.data<float>(), in_c_, dims_.in_c, true,
                        kernels::SelectedSgemmIsa(), context->packed_weights(),
                        &packed_, context->thread_pool())) {
      return context->OutOfResources("cannot allocate the packed copy of ",
                                     "filter '", pointwise.name(), "'");
    }
    return LayDepthwiseFilter(*context, context->input(3), &shape_, &owned_,
                              &laid_);
  }

  // One image as the two ops: the pointwise output whole into `z` on all
  // threads, then the depthwise convolution.
  void RunWhole(const OpContext &context, const float *x, float *y,
                float *z) const {
    ThreadPool *pool = context.thread_pool();
    Pointwise(context, x, dims_.in_h * dims_.in_w, z, pool);
    Depthwise(context, shape_, z, y, pool);
  }

  // Output rows [first, last) of one band of one image, in strips.
  void RunBand(const OpContext &context, int64_t band, const float *x,
               float *y, float *strip) const {
    const int64_t first = dims_.out_h * band / bands_;
    const int64_t last = dims_.out_h * (band + 1) / bands_;
    const int64_t row_floats = dims_.in_w * dims_.in_c;
    RowRange held = {0, 0};  // pointwise rows in `strip`, from its top
    for (int64_t begin = first; begin < last; begin += strip_rows_) {
      const int64_t end = std::min(begin + strip_rows_, last);
      const RowRange needed = InputRows(begin, end);
      int64_t kept = 0;
      if (held.count() > 0 && needed.begin >= held.begin &&
          needed.begin < held.end) {
        kept = held.end - needed.begin;
        std::memmove(strip, strip + (needed.begin - held.begin) * row_floats,
                     kept * row_floats * sizeof(float));
      }
      RunPointwise(context, x, needed.begin + kept, needed.end,
                   strip + kept * row_floats);
      held = needed;
      RunDepthwise(context, strip, needed, begin, end, y);
    }
  }

  // Pointwise rows [begin, end) of the image into `z`.
  void RunPointwise(const OpContext &context, const float *x, int64_t begin,
                    int64_t end, float *z) const {
    if (end <= begin) return;
    Pointwise(context, x + begin * dims_.in_w * in_c_,
              (end - begin) * dims_.in_w, z, nullptr);
  }

  // Output rows [first, last) from the pointwise rows `held` in `strip`.
  void RunDepthwise(const OpContext &context, const float *strip,
                    const RowRange &held, int64_t first, int64_t last,
                    float *y) const {
    kernels::DepthwiseShape shape = shape_;
    shape.in_h = held.count();
    shape.out_h = last - first;
    // Output row first + r reads rows from (first + r) * stride - pad_top,
    // which is row (that - held.begin) of the strip.
    shape.pad_top = shape_.pad_top + held.begin - first * shape_.stride_h;
    Depthwise(context, shape, strip, y + first * dims_.out_w * dims_.out_c,
              nullptr);
  }

  // z = pointwise_act(x * pw + pw_bias) for `pixels` pixels of x, on the
  // pool's threads (none: the caller's).
  void Pointwise(const OpContext &context, const float *x, int64_t pixels,
                 float *z, ThreadPool *pool) const {
    const int64_t channels = dims_.in_c;
    const float *bias = context.input(2).data<float>();
    const Activation act = pointwise_activation_;
    float clamp[2];
    if (ToClampBounds(act, clamp)) {
      kernels::SgemmClamped(pixels, channels, in_c_, x, in_c_, packed_, bias,
                            clamp, z, channels, pool);
    } else if (act.type != ActivationType::kNoop) {
      auto activate = [act, z, channels](float *c, int64_t rows, int64_t cols,
                                         int64_t ldc) {
        ActivateBlock(act, PReluSlope(), (c - z) % channels, c, rows, cols,
                      ldc);
      };
      kernels::Sgemm(pixels, channels, in_c_, x, in_c_, packed_, bias, z,
                     channels, pool, kernels::SgemmEpilogue(activate));
    } else {
      kernels::Sgemm(pixels, channels, in_c_, x, in_c_, packed_, bias, z,
                     channels, pool);
    }
  }

  // y = act(depthwise(z) + dw_bias) over `shape`, on the pool's threads.
  void Depthwise(const OpContext &context, const kernels::DepthwiseShape &shape,
                 const float *z, float *y, ThreadPool *pool) const {
    kernels::ActivationParams fused;
    const bool in_kernel = ToKernelActivation(activation_, PReluSlope(), &fused);
    const float *weights =
        laid_ != nullptr ? laid_ : context.input(3).data<float>();
    kernels::DepthwiseConv2d(shape, z, weights, context.input(4).data<float>(),
                             fused, y, pool);
    if (!in_kernel) {
      ActivateRowsInPlace(activation_, PReluSlope(), dims_.out_c, y,
                          shape.out_h * shape.out_w, pool);
    }
  }

  Activation activation_;
  Activation pointwise_activation_;
  ConvDims dims_;
  int64_t in_c_ = 0;
  kernels::DepthwiseShape shape_;
  int64_t strip_rows_ = 1;
  int64_t bands_ = 1;
  bool whole_ = false;  // run as the two ops (PlanStrips)
  int64_t strip_floats_ = 0;
  kernels::PackedMatrixB packed_;
  const float *laid_ = nullptr;  // null: the depthwise filter as it is
  AlignedArray<float> owned_;    // laid_ without a packed weight store
};

}  // namespace

void RegisterPointwiseDepthwiseConv2d(OpRegistry *registry) {
  registry->Register<PointwiseDepthwiseConv2dOp>("PointwiseDepthwiseConv2d");
}

}  // namespace mace
