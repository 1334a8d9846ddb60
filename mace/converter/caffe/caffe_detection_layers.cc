// Detection layers: Proposal (Faster R-CNN's RPN proposal layer as a C++
// Caffe layer), PSROIAlign (R-FCN style position sensitive ROI align), and
// SSD's PriorBox and DetectionOutput. Proposal and PSROIAlign are NHWC in
// MACE; rois keep Caffe's [R, 5]. PriorBox reads only shapes, so it is fed
// constants of its bottoms' shapes and folds to a constant at conversion.

#include <limits>
#include <map>

#include "mace/converter/caffe/caffe_lowering.h"

namespace mace {
namespace converter {
namespace {

MaceStatus ToNhwc4D(const CaffeLayer &layer, CaffeContext *context, int i,
                    std::string *out) {
  if (context->RankOf(layer.Bottom(i)) != 4) {
    return layer.InvalidArgs("bottom ", i, " '", layer.Bottom(i),
                             "' has shape ",
                             ShapeToString(context->ShapeOf(layer.Bottom(i))),
                             " (expected 4-D N,C,H,W)");
  }
  return context->ToChannelLast(layer.name(), layer.Bottom(i), out);
}

MaceStatus LowerProposal(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(3, 3));
  MACE_RETURN_IF_ERROR(layer.ExpectTops(1, 1));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("proposal_param", &param));
  const std::string what = layer.What();
  int64_t feat_stride = 16, base_size = 16, min_size = 16, pre = 6000,
          post = 300;
  float nms = 0.7f;
  std::vector<float> ratios, scales;
  MACE_RETURN_IF_ERROR(param->GetInt(what, "feat_stride", 16, &feat_stride));
  MACE_RETURN_IF_ERROR(param->GetInt(what, "base_size", 16, &base_size));
  MACE_RETURN_IF_ERROR(param->GetInt(what, "min_size", 16, &min_size));
  MACE_RETURN_IF_ERROR(param->GetInt(what, "pre_nms_topn", 6000, &pre));
  MACE_RETURN_IF_ERROR(param->GetInt(what, "post_nms_topn", 300, &post));
  MACE_RETURN_IF_ERROR(param->GetFloat(what, "nms_thresh", 0.7f, &nms));
  MACE_RETURN_IF_ERROR(param->GetFloats(what, "ratio", &ratios));
  MACE_RETURN_IF_ERROR(param->GetFloats(what, "scale", &scales));
  if (ratios.empty()) ratios = {0.5f, 1.0f, 2.0f};
  if (scales.empty()) scales = {8.0f, 16.0f, 32.0f};
  const int64_t anchors = static_cast<int64_t>(ratios.size() * scales.size());
  const Shape &cls = context->ShapeOf(layer.Bottom(0));
  const Shape &bbox = context->ShapeOf(layer.Bottom(1));
  if (cls.size() != 4 || bbox.size() != 4 || cls[0] != 1 ||
      cls[1] != 2 * anchors || bbox[1] != 4 * anchors) {
    return layer.InvalidArgs("expects scores [1, ", 2 * anchors,
                             ", H, W] and deltas [1, ", 4 * anchors,
                             ", H, W] for ", anchors, " anchors, got ",
                             ShapeToString(cls), " and ", ShapeToString(bbox));
  }
  std::string cls_nhwc, bbox_nhwc;
  MACE_RETURN_IF_ERROR(ToNhwc4D(layer, context, 0, &cls_nhwc));
  MACE_RETURN_IF_ERROR(ToNhwc4D(layer, context, 1, &bbox_nhwc));
  const std::string rois = context->Temp(layer.Top(0) + "__kx115");
  MACE_RETURN_IF_ERROR(context->Emit(
      "Proposal", layer.name(), {cls_nhwc, bbox_nhwc, layer.Bottom(2)}, {rois},
      {OpArg::Int("feat_stride", feat_stride),
       OpArg::Int("base_size", base_size), OpArg::Floats("scales", scales),
       OpArg::Floats("ratios", ratios),
       OpArg::Float("min_size", static_cast<float>(min_size)),
       OpArg::Int("pre_nms_top_n", pre), OpArg::Int("post_nms_top_n", post),
       OpArg::Float("nms_thresh", nms)}));
  const int64_t k = context->ShapeOf(rois)[0];
  return context->Emit("Reshape", context->Temp(layer.name() + "__rois"),
                       {rois}, {layer.Top(0)}, {OpArg::Ints("shape", {k, 5})});
}

MaceStatus LowerPSROIAlign(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(2, 2));
  MACE_RETURN_IF_ERROR(layer.ExpectTops(1, 1));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("psroi_align_param", &param));
  const std::string what = layer.What();
  float spatial_scale = 0;
  int64_t output_dim = 0, group_size = 0;
  MACE_RETURN_IF_ERROR(
      param->GetFloat(what, "spatial_scale", 0.0f, &spatial_scale));
  MACE_RETURN_IF_ERROR(param->GetInt(what, "output_dim", 0, &output_dim));
  MACE_RETURN_IF_ERROR(param->GetInt(what, "group_size", 0, &group_size));
  std::string features;
  MACE_RETURN_IF_ERROR(ToNhwc4D(layer, context, 0, &features));
  const std::string y = context->Temp(layer.Top(0) + "__nhwc");
  MACE_RETURN_IF_ERROR(context->Emit(
      "PSROIAlign", layer.name(), {features, layer.Bottom(1)}, {y},
      {OpArg::Float("spatial_scale", spatial_scale),
       OpArg::Int("output_dim", output_dim),
       OpArg::Int("group_size", group_size)}));
  return context->FromChannelLast(layer.name(), y, layer.Top(0));
}

// A pair of floats given as `<name>` or as `<name>_h` + `<name>_w`.
MaceStatus ReadPair(const CaffeLayer &layer, const TextMessage &param,
                    const std::string &name, float *h, float *w) {
  const std::string what = layer.What();
  float both = 0;
  MACE_RETURN_IF_ERROR(param.GetFloat(what, name, 0.0f, &both));
  MACE_RETURN_IF_ERROR(param.GetFloat(what, name + "_h", both, h));
  return param.GetFloat(what, name + "_w", both, w);
}

MaceStatus LowerPriorBox(const CaffeLayer &layer, CaffeContext *context) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(2, 2));
  MACE_RETURN_IF_ERROR(layer.ExpectTops(1, 1));
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("prior_box_param", &param));
  const std::string what = layer.What();
  std::vector<float> min_size, max_size, aspect_ratio, variance;
  MACE_RETURN_IF_ERROR(param->GetFloats(what, "min_size", &min_size));
  MACE_RETURN_IF_ERROR(param->GetFloats(what, "max_size", &max_size));
  MACE_RETURN_IF_ERROR(param->GetFloats(what, "aspect_ratio", &aspect_ratio));
  MACE_RETURN_IF_ERROR(param->GetFloats(what, "variance", &variance));
  bool flip = true, clip = false;
  MACE_RETURN_IF_ERROR(param->GetBool(what, "flip", true, &flip));
  MACE_RETURN_IF_ERROR(param->GetBool(what, "clip", false, &clip));
  float img_h = 0, img_w = 0, step_h = 0, step_w = 0, offset = 0.5f;
  MACE_RETURN_IF_ERROR(ReadPair(layer, *param, "img_size", &img_h, &img_w));
  MACE_RETURN_IF_ERROR(param->GetFloat(what, "img_h", img_h, &img_h));
  MACE_RETURN_IF_ERROR(param->GetFloat(what, "img_w", img_w, &img_w));
  MACE_RETURN_IF_ERROR(ReadPair(layer, *param, "step", &step_h, &step_w));
  MACE_RETURN_IF_ERROR(param->GetFloat(what, "offset", 0.5f, &offset));
  if (variance.empty()) variance = {0.1f};
  for (int i = 0; i < 2; ++i) {
    if (context->RankOf(layer.Bottom(i)) != 4) {
      return layer.InvalidArgs("bottom ", i, " '", layer.Bottom(i),
                               "' is not 4-D N,C,H,W");
    }
  }
  // Constants of the bottoms' spatial shapes (NHWC, one channel).
  std::vector<std::string> shapes;
  for (int i = 0; i < 2; ++i) {
    const Shape &s = context->ShapeOf(layer.Bottom(i));
    shapes.push_back(context->Constant(
        layer.name() + "__shape" + std::to_string(i), {1, s[2], s[3], 1},
        std::vector<float>(static_cast<size_t>(s[2] * s[3]), 0.0f)));
  }
  return context->Emit(
      "PriorBox", layer.name(), shapes, {layer.Top(0)},
      {OpArg::Floats("min_size", min_size), OpArg::Floats("max_size", max_size),
       OpArg::Floats("aspect_ratio", aspect_ratio), OpArg::Int("flip", flip),
       OpArg::Int("clip", clip), OpArg::Floats("variance", variance),
       OpArg::Int("img_h", static_cast<int64_t>(img_h)),
       OpArg::Int("img_w", static_cast<int64_t>(img_w)),
       OpArg::Float("step_h", step_h), OpArg::Float("step_w", step_w),
       OpArg::Float("offset", offset)});
}

MaceStatus LowerDetectionOutput(const CaffeLayer &layer,
                                CaffeContext *context) {
  MACE_RETURN_IF_ERROR(layer.ExpectBottoms(3, 3));
  MACE_RETURN_IF_ERROR(layer.ExpectTops(1, 1));
  const TextMessage *param = nullptr, *nms = nullptr;
  MACE_RETURN_IF_ERROR(layer.Param("detection_output_param", &param));
  const std::string what = layer.What();
  MACE_RETURN_IF_ERROR(param->GetMessage(what, "nms_param", &nms));
  int64_t num_classes = 0, background = 0, keep_top_k = -1, top_k = -1;
  bool share_location = true, variance_encoded = false;
  float nms_threshold = 0.3f, eta = 1.0f,
        confidence = -std::numeric_limits<float>::max();
  std::string code_type;
  MACE_RETURN_IF_ERROR(param->GetInt(what, "num_classes", 0, &num_classes));
  MACE_RETURN_IF_ERROR(
      param->GetBool(what, "share_location", true, &share_location));
  MACE_RETURN_IF_ERROR(
      param->GetInt(what, "background_label_id", 0, &background));
  MACE_RETURN_IF_ERROR(param->GetInt(what, "keep_top_k", -1, &keep_top_k));
  MACE_RETURN_IF_ERROR(param->GetBool(what, "variance_encoded_in_target", false,
                                      &variance_encoded));
  MACE_RETURN_IF_ERROR(
      param->GetFloat(what, "confidence_threshold", confidence, &confidence));
  MACE_RETURN_IF_ERROR(
      param->GetString(what, "code_type", "CORNER", &code_type));
  MACE_RETURN_IF_ERROR(
      nms->GetFloat(what, "nms_threshold", 0.3f, &nms_threshold));
  MACE_RETURN_IF_ERROR(nms->GetInt(what, "top_k", -1, &top_k));
  MACE_RETURN_IF_ERROR(nms->GetFloat(what, "eta", 1.0f, &eta));
  static const std::map<std::string, int> kCodes = {
      {"CORNER", 1}, {"1", 1},           {"CENTER_SIZE", 2},
      {"2", 2},      {"CORNER_SIZE", 3}, {"3", 3}};
  auto code = kCodes.find(code_type);
  if (code == kCodes.end()) {
    return layer.Unsupported("code_type '", code_type, "'");
  }
  if (!share_location) {
    return layer.Unsupported("share_location: false (per-class boxes)");
  }
  return context->Emit(
      "DetectionOutput", layer.name(),
      {layer.Bottom(0), layer.Bottom(1), layer.Bottom(2)}, {layer.Top(0)},
      {OpArg::Int("num_classes", num_classes),
       OpArg::Int("background_label_id", background),
       OpArg::Float("nms_threshold", nms_threshold), OpArg::Int("top_k", top_k),
       OpArg::Float("eta", eta), OpArg::Int("code_type", code->second),
       OpArg::Int("variance_encoded_in_target", variance_encoded),
       OpArg::Int("keep_top_k", keep_top_k),
       OpArg::Float("confidence_threshold", confidence)});
}

}  // namespace

void RegisterCaffeDetectionLayers(CaffeLoweringTable *table) {
  (*table)["Proposal"] = LowerProposal;
  (*table)["PSROIAlign"] = LowerPSROIAlign;
  (*table)["PriorBox"] = LowerPriorBox;
  (*table)["DetectionOutput"] = LowerDetectionOutput;
}

}  // namespace converter
}  // namespace mace
