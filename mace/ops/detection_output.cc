// DetectionOutput: SSD's box decoding, per-class NMS and top-k selection
// (SSD Caffe's detection_output_layer.cpp, shared locations).
//
// Inputs: loc [N, P * 4] (box offsets per prior), conf [N, P * C] (class
// scores per prior), priors [1, 2, P * 4] (PriorBox's output: boxes, then
// variances). Any shapes with those element counts are accepted.
// Arguments: `num_classes` C (>= 1), `share_location` (1; 0 is
// unsupported), `background_label_id` (0; -1: none), `nms_threshold`
// (0.3), `top_k` (-1: all; candidates per class before NMS), `eta` (1:
// adaptive NMS threshold factor), `code_type` (CORNER=1 default,
// CENTER_SIZE=2, CORNER_SIZE=3), `variance_encoded_in_target` (0),
// `keep_top_k` (-1: all), `confidence_threshold` (-inf).
//
// Per image and class c != background: the scores above
// confidence_threshold, highest first (stable for ties), the first top_k;
// greedy NMS keeps a box when its IoU (normalized boxes, no +1) with every
// kept box is <= the threshold (times eta after each kept box while above
// 0.5). Per image, when more than keep_top_k boxes are kept, the
// keep_top_k best scores stay. Rows (image, label, score, xmin, ymin, xmax,
// ymax) by image, then label, then score.
//
// Output 0: [1, 1, K, 7], K fixed at init: N * keep_top_k when given, else
// N * (C - background) * min(P, top_k); the rows after the detections are
// -1. Optional output 1: int32 [1], the number of detections.

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "mace/ops/op_registry.h"

namespace mace {
namespace {

enum CodeType : int { kCorner = 1, kCenterSize = 2, kCornerSize = 3 };

struct Box {
  double x1, y1, x2, y2;
};

double Size(const Box &b) {
  if (b.x2 < b.x1 || b.y2 < b.y1) return 0.0;
  return (b.x2 - b.x1) * (b.y2 - b.y1);
}

double Overlap(const Box &a, const Box &b) {
  if (b.x1 > a.x2 || b.x2 < a.x1 || b.y1 > a.y2 || b.y2 < a.y1) return 0.0;
  const Box inter{std::max(a.x1, b.x1), std::max(a.y1, b.y1),
                  std::min(a.x2, b.x2), std::min(a.y2, b.y2)};
  const double i = Size(inter);
  const double u = Size(a) + Size(b) - i;
  return u > 0 ? i / u : 0.0;
}

class DetectionOutputOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(3, 3));
    if (context->num_outputs() != 1 && context->num_outputs() != 2) {
      return context->InvalidArgs("expects 1 or 2 outputs, got ",
                                  context->num_outputs());
    }
    for (int i = 0; i < 3; ++i) {
      MACE_RETURN_IF_ERROR(context->ExpectDtype(i, DT_FLOAT));
    }
    MACE_RETURN_IF_ERROR(ReadArgs(*context));
    const Tensor &loc = context->input(0), &conf = context->input(1),
                 &priors = context->input(2);
    if (priors.size() % 8 != 0 || priors.size() == 0) {
      return context->InvalidArgs("priors '", priors.name(), "' ",
                                  ShapeToString(priors.shape()),
                                  " should hold 2 * P * 4 values");
    }
    num_priors_ = priors.size() / 8;
    batch_ = loc.rank() >= 1 ? loc.dim(0) : 0;
    // Counts of -1 (overflow) match no tensor.
    if (batch_ < 1 ||
        loc.size() != ShapeElementCount({batch_, num_priors_, 4}) ||
        conf.rank() < 1 || conf.dim(0) != batch_ ||
        conf.size() !=
            ShapeElementCount({batch_, num_priors_, num_classes_})) {
      return context->InvalidArgs(
          "loc ", ShapeToString(loc.shape()), " and conf ",
          ShapeToString(conf.shape()), " should be [N, ", num_priors_,
          " * 4] and [N, ", num_priors_, " * ", num_classes_, "] for ",
          num_priors_, " priors");
    }
    const int64_t classes =
        num_classes_ - (background_ >= 0 && background_ < num_classes_);
    const int64_t per_class =
        top_k_ > 0 ? std::min(top_k_, num_priors_) : num_priors_;
    per_image_ = keep_top_k_ > 0 ? keep_top_k_ : classes * per_class;
    const int64_t rows = ShapeElementCount({batch_, per_image_});
    if (rows < 0) {
      return context->InvalidArgs("keep_top_k = ", keep_top_k_, " rows for ",
                                  batch_, " images is too many");
    }
    rows_ = std::max<int64_t>(rows, 1);
    Tensor *out = context->output(0);
    out->set_dtype(DT_FLOAT);
    out->set_shape({1, 1, rows_, 7});
    if (context->num_outputs() == 2) {
      context->output(1)->set_dtype(DT_INT32);
      context->output(1)->set_shape({1});
    }
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    const float *loc = context->input(0).data<float>();
    const float *conf = context->input(1).data<float>();
    const float *priors = context->input(2).data<float>();
    float *out = context->output(0)->mutable_data<float>();
    std::fill(out, out + rows_ * 7, -1.0f);
    int64_t written = 0;
    std::vector<Box> boxes(num_priors_);
    for (int64_t n = 0; n < batch_; ++n) {
      Decode(priors, loc + n * num_priors_ * 4, &boxes);
      const float *scores = conf + n * num_priors_ * num_classes_;
      // (score, label, prior) of every kept box.
      std::vector<Detection> kept;
      for (int64_t c = 0; c < num_classes_; ++c) {
        if (c == background_) continue;
        Nms(boxes, scores, c, &kept);
      }
      if (keep_top_k_ > 0 && static_cast<int64_t>(kept.size()) > keep_top_k_) {
        std::stable_sort(kept.begin(), kept.end(),
                         [](const Detection &a, const Detection &b) {
                           return a.score > b.score;
                         });
        kept.resize(keep_top_k_);
        std::stable_sort(kept.begin(), kept.end(),
                         [](const Detection &a, const Detection &b) {
                           return a.label < b.label;
                         });
      }
      for (const Detection &d : kept) {
        float *row = out + written * 7;
        const Box &b = boxes[d.prior];
        row[0] = static_cast<float>(n);
        row[1] = static_cast<float>(d.label);
        row[2] = d.score;
        row[3] = static_cast<float>(b.x1);
        row[4] = static_cast<float>(b.y1);
        row[5] = static_cast<float>(b.x2);
        row[6] = static_cast<float>(b.y2);
        ++written;
      }
    }
    if (context->num_outputs() == 2) {
      context->output(1)->mutable_data<int32_t>()[0] =
          static_cast<int32_t>(written);
    }
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  struct Detection {
    float score;
    int64_t label;
    int64_t prior;
  };

  void Decode(const float *priors, const float *loc,
              std::vector<Box> *boxes) const {
    const float *variances = priors + num_priors_ * 4;
    for (int64_t p = 0; p < num_priors_; ++p) {
      const float *pb = priors + p * 4, *v = variances + p * 4;
      const float *l = loc + p * 4;
      double d[4];
      for (int i = 0; i < 4; ++i) {
        d[i] = variance_encoded_ ? l[i] : static_cast<double>(v[i]) * l[i];
      }
      const double pw = static_cast<double>(pb[2]) - pb[0];
      const double ph = static_cast<double>(pb[3]) - pb[1];
      Box &b = (*boxes)[p];
      if (code_type_ == kCorner) {
        b = {pb[0] + d[0], pb[1] + d[1], pb[2] + d[2], pb[3] + d[3]};
      } else if (code_type_ == kCornerSize) {
        b = {pb[0] + d[0] * pw, pb[1] + d[1] * ph, pb[2] + d[2] * pw,
             pb[3] + d[3] * ph};
      } else {
        const double cx =
            (static_cast<double>(pb[0]) + pb[2]) / 2.0 + d[0] * pw;
        const double cy =
            (static_cast<double>(pb[1]) + pb[3]) / 2.0 + d[1] * ph;
        const double w = std::exp(d[2]) * pw, h = std::exp(d[3]) * ph;
        b = {cx - w / 2.0, cy - h / 2.0, cx + w / 2.0, cy + h / 2.0};
      }
    }
  }

  void Nms(const std::vector<Box> &boxes, const float *scores, int64_t label,
           std::vector<Detection> *kept) const {
    std::vector<Detection> candidates;
    for (int64_t p = 0; p < num_priors_; ++p) {
      const float s = scores[p * num_classes_ + label];
      if (s > confidence_threshold_) candidates.push_back({s, label, p});
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Detection &a, const Detection &b) {
                       return a.score > b.score;
                     });
    if (top_k_ > 0 && static_cast<int64_t>(candidates.size()) > top_k_) {
      candidates.resize(top_k_);
    }
    double threshold = nms_threshold_;
    const size_t first = kept->size();
    for (const Detection &candidate : candidates) {
      bool keep = true;
      for (size_t k = first; k < kept->size() && keep; ++k) {
        keep = Overlap(boxes[candidate.prior], boxes[(*kept)[k].prior]) <=
               threshold;
      }
      if (!keep) continue;
      kept->push_back(candidate);
      if (eta_ < 1 && threshold > 0.5) threshold *= eta_;
    }
  }

  MaceStatus ReadArgs(const OpContext &context) {
    const OpArgs &args = context.args();
    MACE_RETURN_IF_ERROR(args.GetInt("num_classes", int64_t{0}, &num_classes_));
    bool share_location = true;
    MACE_RETURN_IF_ERROR(args.GetBool("share_location", true, &share_location));
    MACE_RETURN_IF_ERROR(
        args.GetInt("background_label_id", int64_t{0}, &background_));
    MACE_RETURN_IF_ERROR(args.GetFloat("nms_threshold", 0.3f, &nms_threshold_));
    MACE_RETURN_IF_ERROR(args.GetInt("top_k", int64_t{-1}, &top_k_));
    MACE_RETURN_IF_ERROR(args.GetFloat("eta", 1.0f, &eta_));
    MACE_RETURN_IF_ERROR(
        args.GetInt("code_type", int64_t{kCorner}, &code_type_));
    MACE_RETURN_IF_ERROR(
        args.GetBool("variance_encoded_in_target", false, &variance_encoded_));
    MACE_RETURN_IF_ERROR(args.GetInt("keep_top_k", int64_t{-1}, &keep_top_k_));
    MACE_RETURN_IF_ERROR(args.GetFloat("confidence_threshold",
                                       -std::numeric_limits<float>::max(),
                                       &confidence_threshold_));
    if (num_classes_ < 1) {
      return context.InvalidArgs("argument 'num_classes' = ", num_classes_,
                                 " must be >= 1");
    }
    if (!share_location) {
      return context.Unsupported("share_location = 0 (per-class boxes)");
    }
    if (code_type_ < kCorner || code_type_ > kCornerSize) {
      return context.InvalidArgs("argument 'code_type' = ", code_type_,
                                 " should be 1 (CORNER), 2 (CENTER_SIZE) or "
                                 "3 (CORNER_SIZE)");
    }
    if (!(nms_threshold_ >= 0) || !(eta_ > 0 && eta_ <= 1)) {
      return context.InvalidArgs(
          "nms_threshold must be >= 0 and eta in "
          "(0, 1]");
    }
    return MaceStatus::MACE_SUCCESS;
  }

  int64_t num_classes_ = 0, background_ = 0, top_k_ = -1, keep_top_k_ = -1;
  int64_t code_type_ = kCorner;
  float nms_threshold_ = 0.3f, eta_ = 1.0f, confidence_threshold_ = 0;
  bool variance_encoded_ = false;
  int64_t num_priors_ = 0, batch_ = 0, per_image_ = 0, rows_ = 0;
};

}  // namespace

// prior_box.cc. The SSD pair registers through one entry of the registry
// list.
void RegisterPriorBox(OpRegistry *registry);

void RegisterSsdDetection(OpRegistry *registry) {
  RegisterPriorBox(registry);
  registry->Register<DetectionOutputOp>("DetectionOutput");
}

}  // namespace mace
