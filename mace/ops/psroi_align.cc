// PSROIAlign: R-FCN's position-sensitive ROI pooling with bilinear samples,
// as MACE computes it.
//
// Inputs: features [N, H, W, C] (NHWC, C = output_dim * G * G), rois [R, 5]
// or [R, 1, 1, 5] (MACE's Proposal output) holding (batch index, x1, y1, x2,
// y2) in image coordinates. Arguments: `spatial_scale` (float, > 0; image ->
// feature coordinates), `output_dim` (int, >= 1), `group_size` G (int, >= 1;
// also the pooled size). Output: [R, G, G, output_dim].
//
// For ROI (b, x1, y1, x2, y2), s = spatial_scale:
//   start_w = x1*s, start_h = y1*s, end_w = (x2+1)*s, end_h = (y2+1)*s
//   roi_w = max(end_w - start_w, 0.1), roi_h = max(end_h - start_h, 0.1)
//   bin (ph, pw): hstart = clamp(start_h + ph*roi_h/G, 0, H),
//                 hend   = clamp(start_h + (ph+1)*roi_h/G, 0, H),
//                 wstart, wend likewise with pw, roi_w and W.
//   An empty bin (hend <= hstart or wend <= wstart) gives 0. Otherwise the
//   samples are (h, w) = (hstart + i, wstart + j) for integers i, j >= 0 with
//   h < hend and w < wend; each sample is
//     v = sum over y in {floor(h), ceil(h)}, x in {floor(w), ceil(w)} of
//         (1 - |h - y|) * (1 - |w - x|) * F[b, y, x, c_in]
//   over the corners inside the map (the four pairs are summed even when
//   they coincide, so a sample on an integer coordinate counts 2x per such
//   axis: MACE's arithmetic, kept so that models give MACE's numbers), and
//   out[r, ph, pw, c] = (sum of v) / ((hend - hstart) * (wend - wstart)),
//   c_in = (c*G + ph)*G + pw.
// A batch index outside [0, N) (it is truncated toward zero) is a run-time
// error.

#include <algorithm>
#include <cmath>

#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class PSROIAlignOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(ExpectNhwc(*context));
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(2, 2));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(context->ExpectDtype(0, DT_FLOAT));
    MACE_RETURN_IF_ERROR(context->ExpectDtype(1, DT_FLOAT));
    MACE_RETURN_IF_ERROR(context->ExpectRank(0, 4));
    MACE_RETURN_IF_ERROR(ReadArgs(*context));
    const Tensor &features = context->input(0);
    const int64_t channels = features.dim(3);
    const int64_t per_dim = int64_t{group_size_} * group_size_;
    if (channels % per_dim != 0 || channels / per_dim != output_dim_) {
      return context->InvalidArgs(
          "features '", features.name(), "' have ", channels,
          " channels, expected output_dim * group_size^2 = ", output_dim_,
          " * ", group_size_, "^2");
    }
    MACE_RETURN_IF_ERROR(CheckRois(*context));
    batch_ = features.dim(0);
    height_ = features.dim(1);
    width_ = features.dim(2);
    channels_ = channels;
    num_rois_ = context->input(1).dim(0);
    Tensor *output = context->output(0);
    output->set_dtype(DT_FLOAT);
    output->set_shape({num_rois_, group_size_, group_size_, output_dim_});
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const float *rois = context->input(1).data<float>();
    for (int64_t r = 0; r < num_rois_; ++r) {
      const float b = rois[5 * r];
      if (!(b >= 0.0f && b < static_cast<float>(batch_))) {
        return context->RuntimeError(
            "ROI ", r, " of '", context->input(1).name(), "' has batch index ",
            b, ", outside [0, ", batch_, ")");
      }
    }
    const int64_t bins = int64_t{group_size_} * group_size_;
    context->thread_pool()->ParallelFor(
        0, num_rois_ * bins, 1, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            PoolBin(context, i / bins, static_cast<int>(i % bins));
          }
        });
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  static MaceStatus ExpectNhwc(const OpContext &context) {
    int format = 0;
    MACE_RETURN_IF_ERROR(context.args().GetInt("data_format", 0, &format));
    if (format == 2) {
      return context.Unsupported("data_format NCHW (2); features must be NHWC");
    }
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus ReadArgs(const OpContext &context) {
    const OpArgs &args = context.args();
    MACE_RETURN_IF_ERROR(args.GetFloat("spatial_scale", 0.0f, &spatial_scale_));
    MACE_RETURN_IF_ERROR(args.GetInt("output_dim", 0, &output_dim_));
    MACE_RETURN_IF_ERROR(args.GetInt("group_size", 0, &group_size_));
    if (!(std::isfinite(spatial_scale_) && spatial_scale_ > 0.0f)) {
      return context.InvalidArgs("argument 'spatial_scale' = ", spatial_scale_,
                                 " must be a finite number > 0");
    }
    if (output_dim_ < 1) {
      return context.InvalidArgs("argument 'output_dim' = ", output_dim_,
                                 " must be >= 1");
    }
    if (group_size_ < 1) {
      return context.InvalidArgs("argument 'group_size' = ", group_size_,
                                 " must be >= 1");
    }
    return MaceStatus::MACE_SUCCESS;
  }

  static MaceStatus CheckRois(const OpContext &context) {
    const Tensor &rois = context.input(1);
    const Shape &s = rois.shape();
    const bool flat = s.size() == 2 && s[1] == 5;
    const bool mace = s.size() == 4 && s[1] == 1 && s[2] == 1 && s[3] == 5;
    if (!flat && !mace) {
      return context.InvalidArgs("rois '", rois.name(), "' have shape ",
                                 ShapeToString(s),
                                 ", expected [R, 5] or [R, 1, 1, 5]");
    }
    return MaceStatus::MACE_SUCCESS;
  }

  // Clamps to [0, limit]; NaN (from a NaN ROI) becomes 0.
  static double Clamp(double v, double limit) {
    v = v > 0.0 ? v : 0.0;
    return v < limit ? v : limit;
  }

  // Output bin `bin` (= ph * G + pw) of ROI r, all output_dim channels.
  void PoolBin(OpContext *context, int64_t r, int bin) const {
    const float *roi = context->input(1).data<float>() + 5 * r;
    const int ph = bin / group_size_, pw = bin % group_size_;
    const double scale = spatial_scale_;
    const double start_w = roi[1] * scale, start_h = roi[2] * scale;
    const double end_w = (roi[3] + 1.0) * scale, end_h = (roi[4] + 1.0) * scale;
    const double roi_w = std::max(end_w - start_w, 0.1);
    const double roi_h = std::max(end_h - start_h, 0.1);
    const double bin_h = roi_h / group_size_, bin_w = roi_w / group_size_;
    const double hstart = Clamp(start_h + ph * bin_h, height_);
    const double hend = Clamp(start_h + (ph + 1) * bin_h, height_);
    const double wstart = Clamp(start_w + pw * bin_w, width_);
    const double wend = Clamp(start_w + (pw + 1) * bin_w, width_);

    float *out = context->output(0)->mutable_data<float>() +
                 (r * group_size_ * group_size_ + bin) * output_dim_;
    if (hend <= hstart || wend <= wstart) {
      std::fill(out, out + output_dim_, 0.0f);
      return;
    }
    const int64_t b = static_cast<int64_t>(roi[0]);
    const float *image =
        context->input(0).data<float>() + b * height_ * width_ * channels_;
    const double area = (hend - hstart) * (wend - wstart);
    for (int c = 0; c < output_dim_; ++c) {
      const int64_t c_in = (int64_t{c} * group_size_ + ph) * group_size_ + pw;
      double sum = 0.0;
      for (int64_t i = 0; hstart + i < hend; ++i) {
        for (int64_t j = 0; wstart + j < wend; ++j) {
          sum += Sample(image, c_in, hstart + i, wstart + j);
        }
      }
      out[c] = static_cast<float>(sum / area);
    }
  }

  // The four floor/ceil corners around (h, w), as described at the top.
  double Sample(const float *image, int64_t c_in, double h, double w) const {
    const int64_t ys[2] = {static_cast<int64_t>(std::floor(h)),
                           static_cast<int64_t>(std::ceil(h))};
    const int64_t xs[2] = {static_cast<int64_t>(std::floor(w)),
                           static_cast<int64_t>(std::ceil(w))};
    double v = 0.0;
    for (int64_t y : ys) {
      if (y < 0 || y >= height_) continue;
      const double wy = 1.0 - std::fabs(h - static_cast<double>(y));
      for (int64_t x : xs) {
        if (x < 0 || x >= width_) continue;
        const double wx = 1.0 - std::fabs(w - static_cast<double>(x));
        v += wy * wx * image[(y * width_ + x) * channels_ + c_in];
      }
    }
    return v;
  }

  float spatial_scale_ = 0.0f;
  int output_dim_ = 0, group_size_ = 0;
  int64_t batch_ = 0, height_ = 0, width_ = 0, channels_ = 0, num_rois_ = 0;
};

}  // namespace

void RegisterPSROIAlign(OpRegistry *registry) {
  registry->Register<PSROIAlignOp>("PSROIAlign");
}

}  // namespace mace
