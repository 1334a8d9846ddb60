#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

using Shape = std::vector<int64_t>;
using Box = std::array<double, 4>;

struct Params {
  int feat_stride = 16;
  int base_size = 16;
  std::vector<float> scales = {8, 16, 32};
  std::vector<float> ratios = {0.5f, 1, 2};
  double min_size = 16;
  int pre_nms_top_n = 6000;
  int post_nms_top_n = 300;
  double nms_thresh = 0.7;
};

// numpy's round: half to even.
double NpRound(double v) {
  const double f = std::floor(v), d = v - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return std::fmod(f, 2.0) == 0.0 ? f : f + 1;
}

// py-faster-rcnn's generate_anchors.py, step by step.
void WhCtrs(const Box &a, double *w, double *h, double *xc, double *yc) {
  *w = a[2] - a[0] + 1;
  *h = a[3] - a[1] + 1;
  *xc = a[0] + 0.5 * (*w - 1);
  *yc = a[1] + 0.5 * (*h - 1);
}
Box MkAnchor(double w, double h, double xc, double yc) {
  return {xc - 0.5 * (w - 1), yc - 0.5 * (h - 1), xc + 0.5 * (w - 1),
          yc + 0.5 * (h - 1)};
}
std::vector<Box> ReferenceAnchors(const Params &p) {
  double w, h, xc, yc;
  WhCtrs({0, 0, p.base_size - 1.0, p.base_size - 1.0}, &w, &h, &xc, &yc);
  std::vector<Box> anchors;
  for (double ratio : p.ratios) {
    const double ws = NpRound(std::sqrt(w * h / ratio));
    const double hs = NpRound(ws * ratio);
    double rw, rh, rxc, ryc;
    WhCtrs(MkAnchor(ws, hs, xc, yc), &rw, &rh, &rxc, &ryc);
    for (double scale : p.scales) {
      anchors.push_back(MkAnchor(rw * scale, rh * scale, rxc, ryc));
    }
  }
  return anchors;
}

// proposal_layer.py's forward in float64; returns the kept boxes in order.
std::vector<Box> ProposalReference(int64_t height, int64_t width,
                                   const std::vector<float> &cls,
                                   const std::vector<float> &deltas,
                                   const std::vector<float> &im_info,
                                   const Params &p) {
  const std::vector<Box> anchors = ReferenceAnchors(p);
  const int64_t a_count = static_cast<int64_t>(anchors.size());
  struct Candidate {
    Box box;
    double score;
  };
  std::vector<Candidate> candidates;
  const double min_size = p.min_size * im_info[2];
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      for (int64_t a = 0; a < a_count; ++a) {
        const int64_t cell = y * width + x;
        Box anchor = anchors[a];
        anchor[0] += x * p.feat_stride;
        anchor[2] += x * p.feat_stride;
        anchor[1] += y * p.feat_stride;
        anchor[3] += y * p.feat_stride;
        const float *d = &deltas[(cell * a_count + a) * 4];
        const double w = anchor[2] - anchor[0] + 1.0;
        const double h = anchor[3] - anchor[1] + 1.0;
        const double cx = anchor[0] + 0.5 * w, cy = anchor[1] + 0.5 * h;
        const double pcx = d[0] * w + cx, pcy = d[1] * h + cy;
        const double pw = std::exp(double{d[2]}) * w;
        const double ph = std::exp(double{d[3]}) * h;
        Box box = {pcx - 0.5 * pw, pcy - 0.5 * ph, pcx + 0.5 * pw,
                   pcy + 0.5 * ph};
        const double limits[4] = {im_info[1] - 1.0, im_info[0] - 1.0,
                                  im_info[1] - 1.0, im_info[0] - 1.0};
        for (int k = 0; k < 4; ++k) {
          box[k] = std::max(std::min(box[k], limits[k]), 0.0);
        }
        const double score = cls[cell * 2 * a_count + a_count + a];
        if (box[2] - box[0] + 1 >= min_size &&
            box[3] - box[1] + 1 >= min_size) {
          candidates.push_back(
              {box, std::isnan(score) ? -std::numeric_limits<double>::infinity()
                                      : score});
        }
      }
    }
  }
  std::stable_sort(
      candidates.begin(), candidates.end(),
      [](const Candidate &l, const Candidate &r) { return l.score > r.score; });
  if (p.pre_nms_top_n > 0 &&
      candidates.size() > static_cast<size_t>(p.pre_nms_top_n)) {
    candidates.resize(p.pre_nms_top_n);
  }
  // py_cpu_nms: keep the best, drop all with IoU > thresh, repeat.
  std::vector<Box> kept;
  std::vector<Candidate> rest = candidates;
  while (!rest.empty()) {
    const Box best = rest[0].box;
    kept.push_back(best);
    const double area = (best[2] - best[0] + 1) * (best[3] - best[1] + 1);
    std::vector<Candidate> next;
    for (size_t j = 1; j < rest.size(); ++j) {
      const Box &o = rest[j].box;
      const double iw =
          std::max(0.0, std::min(best[2], o[2]) - std::max(best[0], o[0]) + 1);
      const double ih =
          std::max(0.0, std::min(best[3], o[3]) - std::max(best[1], o[1]) + 1);
      const double other = (o[2] - o[0] + 1) * (o[3] - o[1] + 1);
      const double iou = iw * ih / (area + other - iw * ih);
      if (iou <= p.nms_thresh) next.push_back(rest[j]);
    }
    rest.swap(next);
  }
  if (p.post_nms_top_n > 0 &&
      kept.size() > static_cast<size_t>(p.post_nms_top_n)) {
    kept.resize(p.post_nms_top_n);
  }
  return kept;
}

// Rows (0, x1, y1, x2, y2), zero-padded to `rows`.
std::vector<double> ToRows(const std::vector<Box> &boxes, int64_t rows) {
  std::vector<double> out(rows * 5, 0.0);
  for (size_t i = 0; i < boxes.size(); ++i) {
    for (int k = 0; k < 4; ++k) out[i * 5 + 1 + k] = boxes[i][k];
  }
  return out;
}

void SetArgs(OpTester *tester, const Params &p) {
  tester->Arg("feat_stride", p.feat_stride)
      .Arg("base_size", p.base_size)
      .ArgFloats("scales", p.scales)
      .ArgFloats("ratios", p.ratios)
      .ArgFloat("min_size", static_cast<float>(p.min_size))
      .Arg("pre_nms_top_n", p.pre_nms_top_n)
      .Arg("post_nms_top_n", p.post_nms_top_n)
      .ArgFloat("nms_thresh", static_cast<float>(p.nms_thresh));
}

struct Inputs {
  int64_t height, width, anchors;
  std::vector<float> cls, deltas, im_info;
};

Inputs RandomInputs(int64_t height, int64_t width, int64_t anchors,
                    std::vector<float> im_info, uint32_t seed) {
  return {height,
          width,
          anchors,
          RandomFloats(height * width * 2 * anchors, 0, 1, seed),
          RandomFloats(height * width * 4 * anchors, -0.6f, 0.6f, seed + 1),
          im_info};
}

// Runs Proposal with rois and count outputs; checks both against the
// reference with `rows` output rows.
void ExpectMatchesReference(const Inputs &in, const Params &p, int64_t rows,
                            bool args, bool constant_im_info, int threads) {
  const Shape cls_shape = {1, in.height, in.width, 2 * in.anchors};
  const Shape box_shape = {1, in.height, in.width, 4 * in.anchors};
  OpTester tester("Proposal");
  tester.Input("rpn_cls_prob", cls_shape, in.cls)
      .Input("rpn_bbox_pred", box_shape, in.deltas);
  if (constant_im_info) {
    tester.Constant("im_info", {1, 3}, in.im_info);
  } else {
    tester.Input("im_info", {3}, in.im_info);
  }
  tester.Output("rois").OutputInt("count").Threads(threads);
  if (args) SetArgs(&tester, p);
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  const std::vector<Box> kept =
      ProposalReference(in.height, in.width, in.cls, in.deltas, in.im_info, p);
  EXPECT_EQ(tester.output(0).shape, (Shape{rows, 1, 1, 5}));
  EXPECT_EQ(tester.output(1).ints,
            std::vector<int32_t>{static_cast<int32_t>(kept.size())});
  EXPECT_TRUE(
      AllClose(tester.output(0).floats, ToRows(kept, rows), 1e-6, 1e-4));
}

class ProposalTest : public ::testing::TestWithParam<int> {};

TEST_P(ProposalTest, SmallAnchorsWithFilteringAndNmsMatchReference) {
  Params p;
  p.scales = {1, 2};
  p.min_size = 4;  // x im_info[2] = 6.4
  p.pre_nms_top_n = 60;
  p.post_nms_top_n = 15;
  p.nms_thresh = 0.5;
  const Inputs in = RandomInputs(4, 5, 6, {64, 80, 1.6f}, 501);
  for (bool constant_im_info : {false, true}) {
    ExpectMatchesReference(in, p, 15, true, constant_im_info, GetParam());
  }
}

TEST_P(ProposalTest, DefaultArgumentsPadFewerBoxesWithZeros) {
  // 3 x 4 cells x 9 anchors = 108 boxes at most (< 300): 108 rows, of
  // which NMS keeps far fewer on a 50 x 70 image.
  const Inputs in = RandomInputs(3, 4, 9, {50, 70, 0.5f}, 502);
  ExpectMatchesReference(in, Params(), 108, false, true, GetParam());
}

TEST_P(ProposalTest, NonPositiveLimitsKeepEveryBox) {
  Params p;
  p.scales = {0.5f, 1.5f};
  p.ratios = {1, 3};
  p.base_size = 12;
  p.feat_stride = 8;
  p.min_size = 0;
  p.pre_nms_top_n = 0;
  p.post_nms_top_n = -1;
  p.nms_thresh = 0.3;
  const Inputs in = RandomInputs(5, 3, 4, {41, 23, 1}, 503);
  ExpectMatchesReference(in, p, 5 * 3 * 4, true, false, GetParam());
}

TEST_P(ProposalTest, NanScoresRankLast) {
  Params p;
  p.scales = {1};
  p.ratios = {1};
  p.min_size = 0;
  p.nms_thresh = 2;  // nothing suppressed: the order is visible
  Inputs in = RandomInputs(2, 3, 1, {100, 100, 1}, 504);
  in.cls[1] = NAN;  // foreground of cell 0
  in.cls[7] = NAN;  // foreground of cell 3
  ExpectMatchesReference(in, p, 6, true, true, GetParam());
}

TEST_P(ProposalTest, ZeroDeltasGivePublishedDefaultAnchors) {
  // generate_anchors() of py-faster-rcnn (base 16, ratios 0.5/1/2, scales
  // 8/16/32), seen at cell (23, 23) (shift 368) of a big image; zero deltas
  // map (x1, y1, x2, y2) to (x1, y1, x2 + 1, y2 + 1).
  const double published[9][4] = {
      {-84, -40, 99, 55}, {-176, -88, 191, 103},  {-360, -184, 375, 199},
      {-56, -56, 71, 71}, {-120, -120, 135, 135}, {-248, -248, 263, 263},
      {-36, -80, 51, 95}, {-80, -168, 95, 183},   {-168, -344, 183, 359}};
  const int64_t cells = 24;
  std::vector<float> cls(cells * cells * 18, 0.0f);
  for (int a = 0; a < 9; ++a) {
    cls[(cells * cells - 1) * 18 + 9 + a] = 1.0f - 0.01f * a;
  }
  OpTester tester("Proposal");
  tester.Input("rpn_cls_prob", {1, cells, cells, 18}, cls)
      .Input("rpn_bbox_pred", {1, cells, cells, 36},
             std::vector<float>(cells * cells * 36, 0.0f))
      .Constant("im_info", {3}, {10000, 10000, 1})
      .Output("rois")
      .ArgFloat("min_size", 0)
      .ArgFloat("nms_thresh", 1.0f)
      .Arg("post_nms_top_n", 9)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  std::vector<double> expected;
  for (const auto &anchor : published) {
    expected.insert(expected.end(), {0, anchor[0] + 368, anchor[1] + 368,
                                     anchor[2] + 369, anchor[3] + 369});
  }
  EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 0, 0));
}

// One cell, zero deltas: the row is the anchor with x2, y2 one larger.
std::vector<float> ZeroDeltaRows(const Params &p, int64_t width,
                                 const std::vector<float> &fg, int outputs) {
  const int64_t a = static_cast<int64_t>(p.scales.size() * p.ratios.size());
  std::vector<float> cls(width * 2 * a, 0.0f);
  for (int64_t i = 0; i < width * a; ++i) {
    cls[(i / a) * 2 * a + a + i % a] = fg[i];
  }
  OpTester tester("Proposal");
  tester.Input("rpn_cls_prob", {1, 1, width, 2 * a}, cls)
      .Input("rpn_bbox_pred", {1, 1, width, 4 * a},
             std::vector<float>(width * 4 * a, 0.0f))
      .Constant("im_info", {3}, {100, 100, 1})
      .Output("rois");
  if (outputs == 2) tester.OutputInt("count");
  SetArgs(&tester, p);
  EXPECT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  return tester.output(0).floats;
}

TEST(ProposalAnchorTest, AnchorSidesRoundHalfToEvenAsNumpy) {
  // base 4, ratio 1.5: ws = round(sqrt(16 / 1.5)) = 3, hs = round(4.5) = 4
  // (numpy; 5 if rounded half away from zero), centred on (1.5, 1.5).
  Params p;
  p.base_size = 4;
  p.ratios = {1.5f};
  p.scales = {1};
  p.min_size = 0;
  EXPECT_EQ(ZeroDeltaRows(p, 1, {0.5f}, 1),
            (std::vector<float>{0, 0.5f, 0, 3.5f, 4}));
}

TEST(ProposalAnchorTest, IoUEqualToThresholdIsKeptAsPyFasterRcnn) {
  // Boxes (0, 0, 17, 17) and (6, 0, 23, 17): IoU = 216 / 432 = 0.5 exactly;
  // py-faster-rcnn drops only IoU > thresh (MACE drops >=).
  Params p;
  p.base_size = 17;
  p.feat_stride = 6;
  p.ratios = {1};
  p.scales = {1};
  p.min_size = 0;
  p.nms_thresh = 0.5;
  EXPECT_EQ(ZeroDeltaRows(p, 2, {0.9f, 0.8f}, 1),
            (std::vector<float>{0, 0, 0, 17, 17, 0, 6, 0, 23, 17}));
  p.nms_thresh = 0.49;
  EXPECT_EQ(ZeroDeltaRows(p, 2, {0.9f, 0.8f}, 2),
            (std::vector<float>{0, 0, 0, 17, 17, 0, 0, 0, 0, 0}));
}

TEST_P(ProposalTest, IdenticalClippedBoxesAreSuppressedToOne) {
  Params p;
  p.scales = {32};
  p.ratios = {1};
  Inputs in = RandomInputs(2, 3, 1, {40, 40, 1}, 505);
  in.deltas.assign(in.deltas.size(), 0.0f);
  ExpectMatchesReference(in, p, 6, true, true, GetParam());
  OpTester tester("Proposal");
  tester.Input("rpn_cls_prob", {1, 2, 3, 2}, in.cls)
      .Input("rpn_bbox_pred", {1, 2, 3, 4}, in.deltas)
      .Constant("im_info", {3}, in.im_info)
      .Output("rois")
      .OutputInt("count");
  SetArgs(&tester, p);
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(1).ints, std::vector<int32_t>{1});
  std::vector<float> rows(30, 0.0f);
  rows[3] = rows[4] = 39;
  EXPECT_EQ(tester.output(0).floats, rows);
}

TEST_P(ProposalTest, AllBoxesBelowMinSizeGiveZeroRows) {
  Params p;
  p.scales = {1, 2};
  p.min_size = 500;
  p.post_nms_top_n = 7;
  const Inputs in = RandomInputs(3, 3, 6, {48, 48, 1}, 506);
  ExpectMatchesReference(in, p, 7, true, false, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Threads, ProposalTest, ::testing::Values(1, 2));

struct ErrorCase {
  const char *what;
  Shape cls, bbox, im_info;
  const char *arg;  // "" or the name of a bad argument set below
  const char *message;
};

TEST(ProposalErrorTest, BadShapesAndArgumentsAreRejected) {
  const ErrorCase cases[] = {
      {"cls channels", {1, 2, 2, 16}, {1, 2, 2, 36}, {3}, "", "channels"},
      {"bbox channels", {1, 2, 2, 18}, {1, 2, 2, 32}, {3}, "", "channels"},
      {"batch 2", {2, 2, 2, 18}, {2, 2, 2, 36}, {3}, "", "batch"},
      {"height", {1, 3, 2, 18}, {1, 2, 2, 36}, {3}, "", "height or width"},
      {"rank 3", {2, 2, 18}, {1, 2, 2, 36}, {3}, "", "rank 4"},
      {"im_info", {1, 2, 2, 18}, {1, 2, 2, 36}, {2}, "", "im_info"},
      {"scales", {1, 2, 2, 18}, {1, 2, 2, 36}, {3}, "scales", "'scales'"},
      {"ratios", {1, 2, 2, 18}, {1, 2, 2, 36}, {3}, "ratios", "'ratios'"},
      {"stride",
       {1, 2, 2, 18},
       {1, 2, 2, 36},
       {3},
       "feat_stride",
       "'feat_stride'"},
      {"thresh",
       {1, 2, 2, 18},
       {1, 2, 2, 36},
       {3},
       "nms_thresh",
       "'nms_thresh'"},
      {"min_size", {1, 2, 2, 18}, {1, 2, 2, 36}, {3}, "min_size", "'min_size'"},
      {"nchw", {1, 2, 2, 18}, {1, 2, 2, 36}, {3}, "data_format", "NCHW"},
  };
  for (const ErrorCase &c : cases) {
    OpTester tester("Proposal");
    tester.Input("cls", c.cls, std::vector<float>(Product(c.cls)))
        .Input("bbox", c.bbox, std::vector<float>(Product(c.bbox)))
        .Input("im_info", c.im_info, std::vector<float>(Product(c.im_info)))
        .Output("rois");
    const std::string arg = c.arg;
    if (arg == "scales") tester.ArgFloats("scales", {});
    if (arg == "ratios") tester.ArgFloats("ratios", {0.5f, -1.0f, 2.0f});
    if (arg == "feat_stride") tester.Arg("feat_stride", 0);
    if (arg == "nms_thresh") tester.ArgFloat("nms_thresh", NAN);
    if (arg == "min_size") tester.ArgFloat("min_size", -1.0f);
    if (arg == "data_format") tester.Arg("data_format", 2);
    const MaceStatus status = tester.Run();
    EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS) << c.what;
    EXPECT_NE(status.information().find(c.message), std::string::npos)
        << c.what << ": " << status.information();
    EXPECT_NE(status.information().find("Proposal"), std::string::npos)
        << c.what;
  }
}

TEST(ProposalErrorTest, ThreeOutputsAndWrongKindAreRejected) {
  OpTester outputs("Proposal");
  outputs.Input("cls", {1, 1, 1, 18}, std::vector<float>(18))
      .Input("bbox", {1, 1, 1, 36}, std::vector<float>(36))
      .Input("im_info", {3}, {10, 10, 1})
      .Output("a")
      .Output("b")
      .Output("c");
  EXPECT_NE(outputs.Run().information().find("outputs"), std::string::npos);

  OpTester kind("Proposal");
  kind.Input("cls", {1, 1, 1, 18}, std::vector<float>(18))
      .Input("bbox", {1, 1, 1, 36}, std::vector<float>(36))
      .Input("im_info", {3}, {10, 10, 1})
      .Output("rois")
      .ArgString("pre_nms_top_n", "many");
  EXPECT_NE(kind.Run().information().find("'pre_nms_top_n'"),
            std::string::npos);
}

}  // namespace
}  // namespace test
}  // namespace mace
