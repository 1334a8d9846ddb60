// PriorBox: SSD's default boxes (SSD Caffe's prior_box_layer.cpp). Only the
// shapes of the inputs are read, so a converter may feed it constant
// tensors of the right shapes and let it fold to a constant.
//
// Inputs: feature map [N, H, W, C] and image [N, Hi, Wi, Ci] (NHWC).
// Arguments: `min_size` (floats, >= 1 value, each > 0), `max_size` (floats,
// none or one per min_size, each > its min_size), `aspect_ratio` (floats;
// 1 is always first, duplicates within 1e-6 dropped, `flip` (int, 1) adds
// 1/r), `clip` (int, 0: clamp to [0, 1]), `variance` (1 or 4 floats,
// default [0.1]), `img_h` / `img_w` (ints, 0: from the image input),
// `step_h` / `step_w` (floats, 0: image size / feature size), `offset`
// (float, 0.5).
//
// Output: [1, 2, H * W * P * 4], P = |aspect ratios| * |min_size| +
// |max_size|. Channel 0 holds the boxes (xmin, ymin, xmax, ymax) normalized
// by the image size, for each cell (h, w) in row-major order and, per cell,
// for each min_size: the square of side min_size, the square of side
// sqrt(min_size * max_size) (when given), then one box per aspect ratio
// r != 1 of width min_size * sqrt(r) and height min_size / sqrt(r); centres
// at ((w + offset) * step_w, (h + offset) * step_h). Channel 1 holds the
// variances, repeated per box.

#include <algorithm>
#include <cmath>
#include <vector>

#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class PriorBoxOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(2, 2));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(context->ExpectRank(0, 4));
    MACE_RETURN_IF_ERROR(context->ExpectRank(1, 4));
    MACE_RETURN_IF_ERROR(ReadArgs(*context));
    const Tensor &feature = context->input(0), &image = context->input(1);
    layer_h_ = feature.dim(1);
    layer_w_ = feature.dim(2);
    if (layer_h_ < 1 || layer_w_ < 1) {
      return context->InvalidArgs("feature map '", feature.name(), "' ",
                                  ShapeToString(feature.shape()),
                                  " has no cells");
    }
    if (img_h_ == 0) img_h_ = image.dim(1);
    if (img_w_ == 0) img_w_ = image.dim(2);
    if (img_h_ < 1 || img_w_ < 1) {
      return context->InvalidArgs("image size ", img_h_, "x", img_w_,
                                  " must be >= 1");
    }
    if (step_h_ == 0 && step_w_ == 0) {
      step_h_ = static_cast<float>(img_h_) / static_cast<float>(layer_h_);
      step_w_ = static_cast<float>(img_w_) / static_cast<float>(layer_w_);
    }
    const int64_t priors = static_cast<int64_t>(
        aspect_ratios_.size() * min_sizes_.size() + max_sizes_.size());
    count_ = layer_h_ * layer_w_ * priors * 4;
    Tensor *output = context->output(0);
    output->set_dtype(DT_FLOAT);
    output->set_shape({1, 2, count_});
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    float *out = context->output(0)->mutable_data<float>();
    float *box = out;
    const double img_w = static_cast<double>(img_w_);
    const double img_h = static_cast<double>(img_h_);
    auto push = [&](double cx, double cy, double bw, double bh) {
      box[0] = static_cast<float>((cx - bw / 2.0) / img_w);
      box[1] = static_cast<float>((cy - bh / 2.0) / img_h);
      box[2] = static_cast<float>((cx + bw / 2.0) / img_w);
      box[3] = static_cast<float>((cy + bh / 2.0) / img_h);
      box += 4;
    };
    for (int64_t h = 0; h < layer_h_; ++h) {
      for (int64_t w = 0; w < layer_w_; ++w) {
        const double cx = (static_cast<double>(w) + offset_) * step_w_;
        const double cy = (static_cast<double>(h) + offset_) * step_h_;
        for (size_t s = 0; s < min_sizes_.size(); ++s) {
          const double min_size = min_sizes_[s];
          push(cx, cy, min_size, min_size);
          if (!max_sizes_.empty()) {
            const double side = std::sqrt(min_size * max_sizes_[s]);
            push(cx, cy, side, side);
          }
          for (float ratio : aspect_ratios_) {
            if (std::fabs(ratio - 1.0f) < 1e-6f) continue;
            const double root = std::sqrt(static_cast<double>(ratio));
            push(cx, cy, min_size * root, min_size / root);
          }
        }
      }
    }
    if (clip_) {
      for (int64_t i = 0; i < count_; ++i) {
        out[i] = std::min(std::max(out[i], 0.0f), 1.0f);
      }
    }
    float *variance = out + count_;
    for (int64_t i = 0; i < count_; ++i) {
      variance[i] = variances_[variances_.size() == 1 ? 0 : i % 4];
    }
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  MaceStatus ReadArgs(const OpContext &context) {
    const OpArgs &args = context.args();
    MACE_RETURN_IF_ERROR(args.GetFloats("min_size", {}, &min_sizes_));
    MACE_RETURN_IF_ERROR(args.GetFloats("max_size", {}, &max_sizes_));
    std::vector<float> ratios;
    MACE_RETURN_IF_ERROR(args.GetFloats("aspect_ratio", {}, &ratios));
    bool flip = true;
    MACE_RETURN_IF_ERROR(args.GetBool("flip", true, &flip));
    MACE_RETURN_IF_ERROR(args.GetBool("clip", false, &clip_));
    MACE_RETURN_IF_ERROR(args.GetFloats("variance", {0.1f}, &variances_));
    MACE_RETURN_IF_ERROR(args.GetInt("img_h", int64_t{0}, &img_h_));
    MACE_RETURN_IF_ERROR(args.GetInt("img_w", int64_t{0}, &img_w_));
    MACE_RETURN_IF_ERROR(args.GetFloat("step_h", 0.0f, &step_h_));
    MACE_RETURN_IF_ERROR(args.GetFloat("step_w", 0.0f, &step_w_));
    MACE_RETURN_IF_ERROR(args.GetFloat("offset", 0.5f, &offset_));
    if (min_sizes_.empty()) {
      return context.InvalidArgs(
          "argument 'min_size' needs at least one "
          "value");
    }
    if (!max_sizes_.empty() && max_sizes_.size() != min_sizes_.size()) {
      return context.InvalidArgs("argument 'max_size' has ", max_sizes_.size(),
                                 " values; expected none "
                                 "or one per min_size (",
                                 min_sizes_.size(), ")");
    }
    for (size_t i = 0; i < min_sizes_.size(); ++i) {
      if (!(min_sizes_[i] > 0) || !std::isfinite(min_sizes_[i])) {
        return context.InvalidArgs("min_size ", min_sizes_[i],
                                   " must be finite and > 0");
      }
      if (!max_sizes_.empty() &&
          (!(max_sizes_[i] > min_sizes_[i]) || !std::isfinite(max_sizes_[i]))) {
        return context.InvalidArgs("max_size ", max_sizes_[i],
                                   " must be finite and > min_size ",
                                   min_sizes_[i]);
      }
    }
    if (variances_.size() != 1 && variances_.size() != 4) {
      return context.InvalidArgs("argument 'variance' has ", variances_.size(),
                                 " values, expected 1 or 4");
    }
    if (img_h_ < 0 || img_w_ < 0 || !(step_h_ >= 0) || !(step_w_ >= 0) ||
        (step_h_ == 0) != (step_w_ == 0) || !std::isfinite(offset_)) {
      return context.InvalidArgs(
          "img_h / img_w must be >= 0 and step_h / "
          "step_w both 0 or both > 0");
    }
    aspect_ratios_ = {1.0f};
    for (float ratio : ratios) {
      if (!(ratio > 0) || !std::isfinite(ratio)) {
        return context.InvalidArgs("aspect_ratio ", ratio,
                                   " must be finite and > 0");
      }
      auto known = [&](float r) {
        return std::any_of(aspect_ratios_.begin(), aspect_ratios_.end(),
                           [r](float a) { return std::fabs(r - a) < 1e-6f; });
      };
      if (known(ratio)) continue;
      aspect_ratios_.push_back(ratio);
      if (flip) aspect_ratios_.push_back(1.0f / ratio);
    }
    return MaceStatus::MACE_SUCCESS;
  }

  std::vector<float> min_sizes_, max_sizes_, aspect_ratios_, variances_;
  bool clip_ = false;
  int64_t img_h_ = 0, img_w_ = 0, layer_h_ = 0, layer_w_ = 0, count_ = 0;
  float step_h_ = 0, step_w_ = 0, offset_ = 0.5f;
};

}  // namespace

void RegisterPriorBox(OpRegistry *registry) {
  registry->Register<PriorBoxOp>("PriorBox");
}

}  // namespace mace
