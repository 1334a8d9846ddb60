// Proposal: the Faster R-CNN region proposal layer (py-faster-rcnn's
// proposal_layer.py, as MACE's Proposal op runs it), on NHWC tensors.
//
// Inputs: rpn_cls_prob [1, H, W, 2A] (channels a < A background, A + a
// foreground score of anchor a), rpn_bbox_pred [1, H, W, 4A] (dx, dy, dw, dh
// of anchor a at channels 4a..4a+3), im_info (3 floats: image height, width,
// scale; a constant or a model input). A = |scales| * |ratios|.
// Arguments: `feat_stride` (int, 16), `base_size` (int, 16), `scales`
// (floats or ints, [8, 16, 32]), `ratios` (floats, [0.5, 1, 2]), `min_size`
// (16), `pre_nms_top_n` (int, 6000; <= 0: all), `post_nms_top_n` (int, 300;
// <= 0: all), `nms_thresh` (float, 0.7). MACE's converter writes all of
// them; these defaults are Caffe's / py-faster-rcnn's.
//
// Steps: the A anchors of generate_anchors (ratio-major, scale-minor; widths
// and heights rounded half to even as numpy) shifted by feat_stride * (w, h)
// for every cell, ordered (h, w, a); bbox_transform_inv with +1 widths
// (ctr = x1 + 0.5 * width, new x1/x2 = ctr' -/+ 0.5 * width'); clip to
// [0, width - 1] x [0, height - 1]; drop boxes whose width or height
// (x2 - x1 + 1) is below min_size * im_info[2]; sort by foreground score,
// highest first (ties: lower anchor index first; NaN scores last); keep
// pre_nms_top_n; greedy NMS that drops a box whose IoU (+1 widths) with a
// kept box is > nms_thresh; keep post_nms_top_n.
//
// Output 0: rois [K, 1, 1, 5] (MACE's shape), rows (0, x1, y1, x2, y2). MACE
// sizes it to the number of proposals found; here shapes are fixed at init,
// so K = min(post_nms_top_n, pre_nms_top_n, H * W * A) (limits <= 0 left out)
// and the rows after the proposals found are zeros. Optional output 1:
// int32 [1], the number of proposals found (the valid rows).

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "mace/ops/op_registry.h"

namespace mace {
namespace {

// Anchors (x1, y1, x2, y2) of py-faster-rcnn's generate_anchors.
std::vector<double> GenerateAnchors(int base_size,
                                    const std::vector<float> &ratios,
                                    const std::vector<float> &scales) {
  const double base_w = base_size, base_ctr = 0.5 * (base_size - 1);
  std::vector<double> anchors;
  for (float ratio : ratios) {
    const double ws = std::nearbyint(std::sqrt(base_w * base_w / ratio));
    const double hs = std::nearbyint(ws * ratio);
    for (float scale : scales) {
      const double w = ws * scale, h = hs * scale;
      anchors.insert(anchors.end(),
                     {base_ctr - 0.5 * (w - 1), base_ctr - 0.5 * (h - 1),
                      base_ctr + 0.5 * (w - 1), base_ctr + 0.5 * (h - 1)});
    }
  }
  return anchors;
}

// (inter) / (union) of two boxes with +1 pixel widths.
double IoU(const float *a, const float *b, double area_a, double area_b) {
  const double iw = std::max(0.0, static_cast<double>(std::min(a[2], b[2])) -
                                      std::max(a[0], b[0]) + 1);
  const double ih = std::max(0.0, static_cast<double>(std::min(a[3], b[3])) -
                                      std::max(a[1], b[1]) + 1);
  const double inter = iw * ih;
  return inter / (area_a + area_b - inter);
}

double Area(const float *box) {
  return (static_cast<double>(box[2]) - box[0] + 1) *
         (static_cast<double>(box[3]) - box[1] + 1);
}

class ProposalOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    int format = 0;
    MACE_RETURN_IF_ERROR(context->args().GetInt("data_format", 0, &format));
    if (format == 2) {
      return context->Unsupported("data_format NCHW (2); inputs must be NHWC");
    }
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(3, 3));
    if (context->num_outputs() != 1 && context->num_outputs() != 2) {
      return context->InvalidArgs("expects 1 or 2 outputs, got ",
                                  context->num_outputs());
    }
    MACE_RETURN_IF_ERROR(ReadArgs(*context));
    MACE_RETURN_IF_ERROR(CheckInputs(*context));
    anchors_ = GenerateAnchors(base_size_, ratios_, scales_);

    const Tensor &cls = context->input(0);
    height_ = cls.dim(1);
    width_ = cls.dim(2);
    num_boxes_ = height_ * width_ * num_anchors_;
    if (num_boxes_ > std::numeric_limits<int32_t>::max()) {
      return context->Unsupported("H * W * anchors = ", num_boxes_,
                                  " boxes is too many");
    }
    capacity_ = num_boxes_;
    if (pre_nms_top_n_ > 0) capacity_ = std::min(capacity_, pre_nms_top_n_);
    if (post_nms_top_n_ > 0) capacity_ = std::min(capacity_, post_nms_top_n_);
    // Scratch: boxes (4 floats), score (float), order (int32), suppressed
    // flag (byte) per anchor box.
    context->RequestScratch(num_boxes_ * 25);

    Tensor *rois = context->output(0);
    rois->set_dtype(DT_FLOAT);
    rois->set_shape({capacity_, 1, 1, 5});
    if (context->num_outputs() == 2) {
      context->output(1)->set_dtype(DT_INT32);
      context->output(1)->set_shape({1});
    }
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const int64_t m = num_boxes_;
    uint8_t *scratch = context->scratch<uint8_t>();
    float *boxes = reinterpret_cast<float *>(scratch);
    float *scores = boxes + 4 * m;
    int32_t *order = reinterpret_cast<int32_t *>(scores + m);
    uint8_t *suppressed = reinterpret_cast<uint8_t *>(order + m);

    DecodeBoxes(context, boxes, scores);
    const int64_t n = SortedCandidates(*context, boxes, scores, order);
    const int64_t kept = Nms(boxes, order, n, suppressed,
                             context->output(0)->mutable_data<float>());
    if (context->num_outputs() == 2) {
      context->output(1)->mutable_data<int32_t>()[0] =
          static_cast<int32_t>(kept);
    }
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  MaceStatus ReadArgs(const OpContext &context) {
    const OpArgs &args = context.args();
    MACE_RETURN_IF_ERROR(args.GetInt("feat_stride", 16, &feat_stride_));
    MACE_RETURN_IF_ERROR(args.GetInt("base_size", 16, &base_size_));
    MACE_RETURN_IF_ERROR(args.GetFloats("scales", {8, 16, 32}, &scales_));
    MACE_RETURN_IF_ERROR(args.GetFloats("ratios", {0.5f, 1, 2}, &ratios_));
    MACE_RETURN_IF_ERROR(args.GetFloat("min_size", 16, &min_size_));
    MACE_RETURN_IF_ERROR(
        args.GetInt("pre_nms_top_n", int64_t{6000}, &pre_nms_top_n_));
    MACE_RETURN_IF_ERROR(
        args.GetInt("post_nms_top_n", int64_t{300}, &post_nms_top_n_));
    MACE_RETURN_IF_ERROR(args.GetFloat("nms_thresh", 0.7f, &nms_thresh_));
    if (feat_stride_ < 1 || base_size_ < 1) {
      return context.InvalidArgs("arguments 'feat_stride' = ", feat_stride_,
                                 " and 'base_size' = ", base_size_,
                                 " must be >= 1");
    }
    MACE_RETURN_IF_ERROR(CheckPositive(context, "scales", scales_));
    MACE_RETURN_IF_ERROR(CheckPositive(context, "ratios", ratios_));
    if (!std::isfinite(min_size_) || min_size_ < 0) {
      return context.InvalidArgs("argument 'min_size' = ", min_size_,
                                 " must be a finite number >= 0");
    }
    if (!std::isfinite(nms_thresh_) || nms_thresh_ < 0) {
      return context.InvalidArgs("argument 'nms_thresh' = ", nms_thresh_,
                                 " must be a finite number >= 0");
    }
    num_anchors_ = static_cast<int64_t>(scales_.size()) *
                   static_cast<int64_t>(ratios_.size());
    return MaceStatus::MACE_SUCCESS;
  }

  static MaceStatus CheckPositive(const OpContext &context, const char *name,
                                  const std::vector<float> &values) {
    if (values.empty()) {
      return context.InvalidArgs("argument '", name, "' must not be empty");
    }
    for (float v : values) {
      if (!std::isfinite(v) || v <= 0) {
        return context.InvalidArgs("argument '", name, "' has value ", v,
                                   "; values must be finite and > 0");
      }
    }
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus CheckInputs(const OpContext &context) const {
    for (int i = 0; i < 3; ++i) {
      MACE_RETURN_IF_ERROR(context.ExpectDtype(i, DT_FLOAT));
    }
    MACE_RETURN_IF_ERROR(context.ExpectRank(0, 4));
    MACE_RETURN_IF_ERROR(context.ExpectRank(1, 4));
    const Tensor &cls = context.input(0), &bbox = context.input(1);
    if (cls.dim(0) != 1 || bbox.dim(0) != 1) {
      return context.Unsupported("batch ", cls.dim(0), " / ", bbox.dim(0),
                                 ": only one image (batch 1) is supported");
    }
    if (cls.dim(1) != bbox.dim(1) || cls.dim(2) != bbox.dim(2)) {
      return context.InvalidArgs(
          "rpn_cls_prob '", cls.name(), "' ", ShapeToString(cls.shape()),
          " and rpn_bbox_pred '", bbox.name(), "' ",
          ShapeToString(bbox.shape()), " differ in height or width");
    }
    if (cls.dim(3) != 2 * num_anchors_ || bbox.dim(3) != 4 * num_anchors_) {
      return context.InvalidArgs("rpn_cls_prob has ", cls.dim(3),
                                 " channels and rpn_bbox_pred ", bbox.dim(3),
                                 "; with ", num_anchors_,
                                 " anchors (scales x ratios) expected ",
                                 2 * num_anchors_, " and ", 4 * num_anchors_);
    }
    if (context.input(2).size() != 3) {
      return context.InvalidArgs("im_info '", context.input(2).name(),
                                 "' has shape ",
                                 ShapeToString(context.input(2).shape()),
                                 ", expected 3 values (height, width, scale)");
    }
    return MaceStatus::MACE_SUCCESS;
  }

  // Boxes of every (h, w, a) after deltas and clipping, and their scores.
  void DecodeBoxes(OpContext *context, float *boxes, float *scores) const {
    const float *cls = context->input(0).data<float>();
    const float *deltas = context->input(1).data<float>();
    const float *im_info = context->input(2).data<float>();
    const double max_x = im_info[1] - 1.0, max_y = im_info[0] - 1.0;
    const int64_t num_anchors = num_anchors_;
    context->thread_pool()->ParallelFor(
        0, height_ * width_, 16, [&](int64_t begin, int64_t end) {
          for (int64_t cell = begin; cell < end; ++cell) {
            const double shift_x =
                static_cast<double>(cell % width_) * feat_stride_;
            const double shift_y =
                static_cast<double>(cell / width_) * feat_stride_;
            for (int64_t a = 0; a < num_anchors; ++a) {
              const int64_t i = cell * num_anchors + a;
              const double *anchor = &anchors_[4 * a];
              const float *d = deltas + 4 * i;
              const double x1 = anchor[0] + shift_x, y1 = anchor[1] + shift_y;
              const double w = anchor[2] + shift_x - x1 + 1.0;
              const double h = anchor[3] + shift_y - y1 + 1.0;
              const double cx = d[0] * w + (x1 + 0.5 * w);
              const double cy = d[1] * h + (y1 + 0.5 * h);
              const double pw = std::exp(double{d[2]}) * w;
              const double ph = std::exp(double{d[3]}) * h;
              float *box = boxes + 4 * i;
              box[0] = Clip(cx - 0.5 * pw, max_x);
              box[1] = Clip(cy - 0.5 * ph, max_y);
              box[2] = Clip(cx + 0.5 * pw, max_x);
              box[3] = Clip(cy + 0.5 * ph, max_y);
              const float score = cls[cell * 2 * num_anchors + num_anchors + a];
              scores[i] = std::isnan(score)
                              ? -std::numeric_limits<float>::infinity()
                              : score;
            }
          }
        });
  }

  // py-faster-rcnn's clip: max(min(v, limit), 0); NaN stays NaN and is
  // dropped by the size filter.
  static float Clip(double v, double limit) {
    return static_cast<float>(std::max(std::min(v, limit), 0.0));
  }

  // Indices of the boxes that pass the size filter, best first, cut to
  // pre_nms_top_n; returns how many.
  int64_t SortedCandidates(const OpContext &context, const float *boxes,
                           const float *scores, int32_t *order) const {
    const float *im_info = context.input(2).data<float>();
    const double min_size = double{min_size_} * im_info[2];
    int64_t n = 0;
    for (int64_t i = 0; i < num_boxes_; ++i) {
      const float *box = boxes + 4 * i;
      const double w = static_cast<double>(box[2]) - box[0] + 1.0;
      const double h = static_cast<double>(box[3]) - box[1] + 1.0;
      if (w >= min_size && h >= min_size) order[n++] = static_cast<int32_t>(i);
    }
    const int64_t top = pre_nms_top_n_ > 0 ? std::min(n, pre_nms_top_n_) : n;
    std::partial_sort(
        order, order + top, order + n, [scores](int32_t a, int32_t b) {
          return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
        });
    return top;
  }

  // Greedy NMS over order[0, n); writes the kept rows and zero padding to
  // `rois`; returns how many were kept.
  int64_t Nms(const float *boxes, const int32_t *order, int64_t n,
              uint8_t *suppressed, float *rois) const {
    std::fill(suppressed, suppressed + n, uint8_t{0});
    int64_t kept = 0;
    for (int64_t i = 0; i < n && kept < capacity_; ++i) {
      if (suppressed[i]) continue;
      const float *box = boxes + 4 * int64_t{order[i]};
      float *row = rois + 5 * kept++;
      row[0] = 0.0f;
      std::memcpy(row + 1, box, 4 * sizeof(float));
      const double area = Area(box);
      for (int64_t j = i + 1; j < n; ++j) {
        if (suppressed[j]) continue;
        const float *other = boxes + 4 * int64_t{order[j]};
        if (IoU(box, other, area, Area(other)) > nms_thresh_) suppressed[j] = 1;
      }
    }
    std::fill(rois + 5 * kept, rois + 5 * capacity_, 0.0f);
    return kept;
  }

  int feat_stride_ = 16, base_size_ = 16;
  std::vector<float> scales_, ratios_;
  float min_size_ = 16, nms_thresh_ = 0.7f;
  int64_t pre_nms_top_n_ = 6000, post_nms_top_n_ = 300;
  int64_t num_anchors_ = 0, height_ = 0, width_ = 0, num_boxes_ = 0;
  int64_t capacity_ = 0;
  std::vector<double> anchors_;
};

}  // namespace

void RegisterProposal(OpRegistry *registry) {
  registry->Register<ProposalOp>("Proposal");
}

}  // namespace mace
