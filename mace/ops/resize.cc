// ResizeBilinear and ResizeNearestNeighbor on NHWC float32 data:
// [N, H, W, C] -> [N, out_h, out_w, C].
//
// Output size, first match wins: a constant int32 input 1 of two values
// [out_h, out_w]; arg `size` (ints [out_h, out_w]); args `height_scale` and
// `width_scale` (floats, out = floor(in * scale)).
//
// Coordinate mapping, by precedence:
// 1. When arg `coordinate_transformation_mode` or `nearest_mode` (strings,
//    ONNX names) is present, ONNX Resize semantics apply and the bool flags
//    below are ignored. coordinate_transformation_mode: half_pixel (the
//    default), pytorch_half_pixel, align_corners, asymmetric,
//    tf_half_pixel_for_nn. nearest_mode (nearest only; default
//    round_prefer_floor): round_prefer_floor, round_prefer_ceil, floor,
//    ceil. The scale s is the given height/width scale when the size came
//    from those args, else out / in, as ONNX does; coordinates are computed
//    in double.
// 2. Otherwise TensorFlow 2's tf.compat.v1.image.resize_* with args
//    `align_corners` and `half_pixel_centers` (bools, default false, not
//    both). scale = in / out, or (in - 1) / (out - 1) with align_corners and
//    out > 1; coordinates are computed in float32 as TensorFlow does, so
//    nearest picks the same pixel at exact ties.
//    bilinear: src = (o + 0.5) * scale - 0.5 with half_pixel_centers, else
//      o * scale; rows floor(src) (>= 0) and ceil(src) (<= in - 1), weight
//      src - floor(src).
//    nearest: align_corners: round(o * scale); half_pixel_centers:
//      floor((o + 0.5) * scale); else floor(o * scale); clamped to the input.
// The per-pixel arithmetic runs in the vector kernels
// (mace/kernels/resize.h), in TensorFlow's order of operations: lerp along
// x on both rows, then along y.

#include <cmath>
#include <string>
#include <vector>

#include "mace/core/aligned_buffer.h"
#include "mace/core/tensor.h"
#include "mace/kernels/resize.h"
#include "mace/ops/common/move_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

// Source coordinate rules: the first three are TensorFlow's flags, the
// rest ONNX's coordinate_transformation_mode values.
enum class Coord {
  kTfLegacy,
  kTfHalfPixel,
  kTfAlignCorners,
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
};
enum class NearestRound { kPreferFloor, kPreferCeil, kFloor, kCeil };

// Source positions along one axis, for each output index.
struct AxisMap {
  std::vector<int64_t> lower, upper;  // nearest uses lower only
  std::vector<float> lerp;            // weight of upper
};

struct AxisSpec {
  int64_t in = 0, out = 0;
  double onnx_scale = 0.0;  // out / in or the scale argument (ONNX modes)
};

bool IsOnnx(Coord coord) {
  return coord != Coord::kTfLegacy && coord != Coord::kTfHalfPixel &&
         coord != Coord::kTfAlignCorners;
}

// TensorFlow's source coordinate, in float32 as TensorFlow computes it.
float TfSource(Coord coord, bool nearest, const AxisSpec &axis, int64_t o) {
  const bool align = coord == Coord::kTfAlignCorners && axis.out > 1;
  const float scale =
      align ? static_cast<float>(axis.in - 1) / static_cast<float>(axis.out - 1)
            : static_cast<float>(axis.in) / static_cast<float>(axis.out);
  const float x = static_cast<float>(o);
  if (coord == Coord::kTfHalfPixel) {
    return nearest ? (x + 0.5f) * scale : (x + 0.5f) * scale - 0.5f;
  }
  return x * scale;
}

// ONNX's x_original.
double OnnxSource(Coord coord, const AxisSpec &axis, int64_t o) {
  const double x = static_cast<double>(o);
  const double s = axis.onnx_scale;
  switch (coord) {
    case Coord::kPytorchHalfPixel:
      return axis.out > 1 ? (x + 0.5) / s - 0.5 : 0.0;
    case Coord::kAlignCorners:
      return axis.out == 1 ? 0.0
                           : x * static_cast<double>(axis.in - 1) /
                                 static_cast<double>(axis.out - 1);
    case Coord::kAsymmetric:
      return x / s;
    case Coord::kTfHalfPixelForNn:
      return (x + 0.5) / s;
    default:
      return (x + 0.5) / s - 0.5;
  }
}

int64_t Clamp(int64_t v, int64_t hi) { return v < 0 ? 0 : (v > hi ? hi : v); }

AxisMap BuildAxisMap(bool nearest, Coord coord, NearestRound round,
                     const AxisSpec &axis) {
  AxisMap map;
  const int64_t hi = axis.in - 1;
  for (int64_t o = 0; o < axis.out; ++o) {
    int64_t lower = 0, upper = 0;
    float lerp = 0.0f;
    if (!IsOnnx(coord)) {
      const float src = TfSource(coord, nearest, axis, o);
      if (nearest) {
        lower = static_cast<int64_t>(coord == Coord::kTfAlignCorners
                                         ? std::round(src)
                                         : std::floor(src));
      } else {
        lower = static_cast<int64_t>(std::floor(src));
        upper = static_cast<int64_t>(std::ceil(src));
        lerp = src - std::floor(src);
      }
    } else {
      const double src = OnnxSource(coord, axis, o);
      if (nearest) {
        switch (round) {
          case NearestRound::kPreferFloor:
            lower = static_cast<int64_t>(std::ceil(src - 0.5));
            break;
          case NearestRound::kPreferCeil:
            lower = static_cast<int64_t>(std::floor(src + 0.5));
            break;
          case NearestRound::kFloor:
            lower = static_cast<int64_t>(std::floor(src));
            break;
          case NearestRound::kCeil:
            lower = static_cast<int64_t>(std::ceil(src));
            break;
        }
      } else {
        lower = static_cast<int64_t>(std::floor(src));
        upper = lower + 1;
        lerp = static_cast<float>(src - std::floor(src));
      }
    }
    map.lower.push_back(Clamp(lower, hi));
    map.upper.push_back(Clamp(upper, hi));
    map.lerp.push_back(lerp);
  }
  return map;
}

class ResizeOp : public Operation {
 public:
  explicit ResizeOp(bool nearest) : nearest_(nearest) {}

  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 2));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(CheckNhwc(*context));
    MACE_RETURN_IF_ERROR(context->ExpectDtype(0, DT_FLOAT));
    MACE_RETURN_IF_ERROR(context->ExpectRank(0, 4));
    const Tensor &input = context->input(0);
    if (input.dim(1) < 1 || input.dim(2) < 1) {
      return context->InvalidArgs("input '", input.name(), "' shape ",
                                  ShapeToString(input.shape()),
                                  " has an empty spatial dim");
    }
    AxisSpec h, w;
    h.in = input.dim(1);
    w.in = input.dim(2);
    MACE_RETURN_IF_ERROR(OutputSize(*context, &h, &w));
    Coord coord = Coord::kTfLegacy;
    NearestRound round = NearestRound::kPreferFloor;
    MACE_RETURN_IF_ERROR(ParseMode(*context, &coord, &round));
    MACE_RETURN_IF_ERROR(SetOutput(
        context, DT_FLOAT, {input.dim(0), h.out, w.out, input.dim(3)}));
    MACE_RETURN_IF_ERROR(ExpectFitsMemory(*context, h, w));
    rows_ = BuildAxisMap(nearest_, coord, round, h);
    cols_ = BuildAxisMap(nearest_, coord, round, w);
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const Tensor &input = context->input(0);
    Tensor *output = context->output(0);
    kernels::ResizeShape shape;
    shape.batch = input.dim(0);
    shape.in_h = input.dim(1);
    shape.in_w = input.dim(2);
    shape.channels = input.dim(3);
    shape.out_h = output->dim(1);
    shape.out_w = output->dim(2);
    kernels::Resize(nearest_ ? kernels::ResizeKind::kNearest
                             : kernels::ResizeKind::kBilinear,
                    shape, KernelAxis(rows_), KernelAxis(cols_),
                    input.data<float>(), output->mutable_data<float>(),
                    context->thread_pool());
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  // [out_h, out_w] from input 1, arg `size`, or the scale args.
  static MaceStatus OutputSize(const OpContext &context, AxisSpec *h,
                               AxisSpec *w) {
    const OpArgs &args = context.args();
    std::vector<int64_t> size;
    if (context.num_inputs() == 2) {
      MACE_RETURN_IF_ERROR(ReadConstantInts(context, 1, "size", &size));
    } else if (args.Has("size")) {
      MACE_RETURN_IF_ERROR(args.GetInts("size", {}, &size));
    } else if (args.Has("height_scale") && args.Has("width_scale")) {
      float scale_h = 0.0f, scale_w = 0.0f;
      MACE_RETURN_IF_ERROR(args.GetFloat("height_scale", 0.0f, &scale_h));
      MACE_RETURN_IF_ERROR(args.GetFloat("width_scale", 0.0f, &scale_w));
      MACE_RETURN_IF_ERROR(FromScale(context, "height_scale", scale_h, h));
      return FromScale(context, "width_scale", scale_w, w);
    } else {
      return context.InvalidArgs(
          "needs the output size as input 1, argument 'size', or arguments "
          "'height_scale' and 'width_scale'");
    }
    if (size.size() != 2) {
      return context.InvalidArgs(
          "output size must have 2 values "
          "[out_h, out_w], has ",
          size.size());
    }
    for (int64_t s : size) {
      if (s < 1 || s > (int64_t{1} << 31)) {
        return context.InvalidArgs("output size ", ShapeToString(size),
                                   " must be positive and at most 2^31");
      }
    }
    h->out = size[0];
    w->out = size[1];
    h->onnx_scale = static_cast<double>(h->out) / static_cast<double>(h->in);
    w->onnx_scale = static_cast<double>(w->out) / static_cast<double>(w->in);
    return MaceStatus::MACE_SUCCESS;
  }

  // An output size no machine of this one's memory could hold is refused
  // before its coordinate maps (one entry a row and a column) are built:
  // a size of 2^31 would otherwise spend minutes and tens of GB on them.
  static MaceStatus ExpectFitsMemory(const OpContext &context,
                                     const AxisSpec &h, const AxisSpec &w) {
    const Tensor &output = context.output(0);
    constexpr int64_t kMapEntryBytes =
        2 * sizeof(int64_t) + sizeof(float);  // lower, upper, lerp
    if (!HasValidSize(output) ||
        static_cast<uint64_t>(output.bytes()) +
                static_cast<uint64_t>((h.out + w.out) * kMapEntryBytes) >
            PhysicalMemoryBytes()) {
      return context.OutOfResources(
          "output shape ", ShapeToString(output.shape()),
          " needs more memory than this machine has");
    }
    return MaceStatus::MACE_SUCCESS;
  }

  static MaceStatus FromScale(const OpContext &context, const char *name,
                              float scale, AxisSpec *axis) {
    const double out = std::floor(static_cast<double>(axis->in) * scale);
    if (!(scale > 0.0f) || !(out >= 1.0) || out > double{1 << 30}) {
      return context.InvalidArgs("argument '", name, "' = ", scale,
                                 " gives output size ", out, " for input size ",
                                 axis->in, "; expected 1 to 2^30");
    }
    axis->out = static_cast<int64_t>(out);
    axis->onnx_scale = scale;
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus ParseMode(const OpContext &context, Coord *coord,
                       NearestRound *round) const {
    const OpArgs &args = context.args();
    if (args.Has("coordinate_transformation_mode") ||
        args.Has("nearest_mode")) {
      std::string mode, rounding;
      MACE_RETURN_IF_ERROR(args.GetString("coordinate_transformation_mode",
                                          "half_pixel", &mode));
      MACE_RETURN_IF_ERROR(
          args.GetString("nearest_mode", "round_prefer_floor", &rounding));
      return ParseOnnxMode(context, mode, rounding, coord, round);
    }
    bool align = false, half_pixel = false;
    MACE_RETURN_IF_ERROR(args.GetBool("align_corners", false, &align));
    MACE_RETURN_IF_ERROR(
        args.GetBool("half_pixel_centers", false, &half_pixel));
    if (align && half_pixel) {
      return context.InvalidArgs(
          "arguments 'align_corners' and "
          "'half_pixel_centers' cannot both be set");
    }
    *coord = align        ? Coord::kTfAlignCorners
             : half_pixel ? Coord::kTfHalfPixel
                          : Coord::kTfLegacy;
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus ParseOnnxMode(const OpContext &context, const std::string &mode,
                           const std::string &rounding, Coord *coord,
                           NearestRound *round) const {
    if (mode == "half_pixel") {
      *coord = Coord::kHalfPixel;
    } else if (mode == "pytorch_half_pixel") {
      *coord = Coord::kPytorchHalfPixel;
    } else if (mode == "align_corners") {
      *coord = Coord::kAlignCorners;
    } else if (mode == "asymmetric") {
      *coord = Coord::kAsymmetric;
    } else if (mode == "tf_half_pixel_for_nn") {
      *coord = Coord::kTfHalfPixelForNn;
    } else {
      return context.Unsupported(
          "argument 'coordinate_transformation_mode' = '", mode,
          "' is not one of half_pixel, pytorch_half_pixel, align_corners, "
          "asymmetric, tf_half_pixel_for_nn");
    }
    if (rounding == "round_prefer_floor") {
      *round = NearestRound::kPreferFloor;
    } else if (rounding == "round_prefer_ceil") {
      *round = NearestRound::kPreferCeil;
    } else if (rounding == "floor") {
      *round = NearestRound::kFloor;
    } else if (rounding == "ceil") {
      *round = NearestRound::kCeil;
    } else if (nearest_) {
      return context.Unsupported(
          "argument 'nearest_mode' = '", rounding,
          "' is not one of round_prefer_floor, round_prefer_ceil, floor, "
          "ceil");
    }
    return MaceStatus::MACE_SUCCESS;
  }

  static kernels::ResizeAxis KernelAxis(const AxisMap &map) {
    kernels::ResizeAxis axis;
    axis.lower = map.lower.data();
    axis.upper = map.upper.data();
    axis.lerp = map.lerp.data();
    return axis;
  }

  bool nearest_;
  AxisMap rows_, cols_;
};

class ResizeBilinearOp : public ResizeOp {
 public:
  ResizeBilinearOp() : ResizeOp(false) {}
};

class ResizeNearestNeighborOp : public ResizeOp {
 public:
  ResizeNearestNeighborOp() : ResizeOp(true) {}
};

}  // namespace

void RegisterResize(OpRegistry *registry) {
  registry->Register<ResizeBilinearOp>("ResizeBilinear");
  registry->Register<ResizeNearestNeighborOp>("ResizeNearestNeighbor");
}

}  // namespace mace
