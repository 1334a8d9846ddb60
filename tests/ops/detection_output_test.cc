// DetectionOutput against a float64 transcription of SSD Caffe's
// detection_output_layer.cpp with shared locations: box decoding (CORNER,
// CENTER_SIZE, CORNER_SIZE), per-class confidence filter + top_k + greedy
// NMS (normalized IoU), keep_top_k across classes, rows by label.

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

using Shape = std::vector<int64_t>;

struct Params {
  int num_classes = 3;
  int background = 0;
  double nms_threshold = 0.45;
  int top_k = -1;
  int keep_top_k = -1;
  double confidence = 0.05;
  int code_type = 2;  // CENTER_SIZE
};

struct RefBox {
  double x1, y1, x2, y2;
};

double RefSize(const RefBox &b) {
  return (b.x2 < b.x1 || b.y2 < b.y1) ? 0.0 : (b.x2 - b.x1) * (b.y2 - b.y1);
}

double RefIoU(const RefBox &a, const RefBox &b) {
  const double w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  const double h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  if (w < 0 || h < 0) return 0.0;
  const double inter = w * h;
  return inter / (RefSize(a) + RefSize(b) - inter);
}

// Rows (image, label, score, box) for one image, in Caffe's order.
std::vector<double> Reference(int priors, const std::vector<float> &loc,
                              const std::vector<float> &conf,
                              const std::vector<float> &prior, const Params &p,
                              int image) {
  std::vector<RefBox> boxes;
  for (int i = 0; i < priors; ++i) {
    const float *pb = &prior[i * 4];
    const float *v = &prior[priors * 4 + i * 4];
    const float *l = &loc[(image * priors + i) * 4];
    const double pw = pb[2] - pb[0], ph = pb[3] - pb[1];
    if (p.code_type == 1) {
      boxes.push_back({pb[0] + v[0] * l[0], pb[1] + v[1] * l[1],
                       pb[2] + v[2] * l[2], pb[3] + v[3] * l[3]});
    } else if (p.code_type == 3) {
      boxes.push_back({pb[0] + v[0] * l[0] * pw, pb[1] + v[1] * l[1] * ph,
                       pb[2] + v[2] * l[2] * pw, pb[3] + v[3] * l[3] * ph});
    } else {
      const double cx = (pb[0] + pb[2]) / 2.0 + v[0] * l[0] * pw;
      const double cy = (pb[1] + pb[3]) / 2.0 + v[1] * l[1] * ph;
      const double w = std::exp(v[2] * l[2]) * pw;
      const double h = std::exp(v[3] * l[3]) * ph;
      boxes.push_back({cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2});
    }
  }
  std::map<int, std::vector<std::pair<double, int>>> kept;  // label → (s, i)
  int total = 0;
  for (int c = 0; c < p.num_classes; ++c) {
    if (c == p.background) continue;
    std::vector<std::pair<double, int>> cand;
    for (int i = 0; i < priors; ++i) {
      const double s = conf[(image * priors + i) * p.num_classes + c];
      if (s > p.confidence) cand.push_back({s, i});
    }
    std::stable_sort(
        cand.begin(), cand.end(),
        [](const auto &a, const auto &b) { return a.first > b.first; });
    if (p.top_k > 0 && static_cast<int>(cand.size()) > p.top_k) {
      cand.resize(p.top_k);
    }
    for (const auto &candidate : cand) {
      bool keep = true;
      for (const auto &k : kept[c]) {
        keep = keep && RefIoU(boxes[candidate.second], boxes[k.second]) <=
                           p.nms_threshold;
      }
      if (keep) kept[c].push_back(candidate);
    }
    total += static_cast<int>(kept[c].size());
  }
  if (p.keep_top_k > 0 && total > p.keep_top_k) {
    std::vector<std::pair<double, std::pair<int, int>>> all;
    for (const auto &entry : kept) {
      for (const auto &k : entry.second) {
        all.push_back({k.first, {entry.first, k.second}});
      }
    }
    std::stable_sort(all.begin(), all.end(), [](const auto &a, const auto &b) {
      return a.first > b.first;
    });
    all.resize(p.keep_top_k);
    kept.clear();
    for (const auto &a : all) {
      kept[a.second.first].push_back({a.first, a.second.second});
    }
  }
  std::vector<double> rows;
  for (const auto &entry : kept) {
    for (const auto &k : entry.second) {
      const RefBox &b = boxes[k.second];
      for (double v : {double(image), double(entry.first), k.first, b.x1, b.y1,
                       b.x2, b.y2}) {
        rows.push_back(v);
      }
    }
  }
  return rows;
}

// Priors in a grid with jitter, so neighbours overlap and NMS has work.
std::vector<float> Priors(int count) {
  std::vector<float> prior(count * 8);
  const std::vector<float> jitter = RandomFloats(count * 4, -0.05f, 0.05f, 7);
  for (int i = 0; i < count; ++i) {
    const float cx = 0.1f + 0.8f * (i % 5) / 4.0f + jitter[i * 4];
    const float cy = 0.1f + 0.8f * (i / 5 % 5) / 4.0f + jitter[i * 4 + 1];
    const float w = 0.3f + jitter[i * 4 + 2], h = 0.25f + jitter[i * 4 + 3];
    prior[i * 4 + 0] = cx - w / 2;
    prior[i * 4 + 1] = cy - h / 2;
    prior[i * 4 + 2] = cx + w / 2;
    prior[i * 4 + 3] = cy + h / 2;
    const float variances[4] = {0.1f, 0.1f, 0.2f, 0.2f};
    for (int k = 0; k < 4; ++k) prior[count * 4 + i * 4 + k] = variances[k];
  }
  return prior;
}

// Scores per prior normalized over classes (as after a softmax).
std::vector<float> Scores(int batch, int priors, int classes) {
  std::vector<float> conf = RandomFloats(batch * priors * classes, 0, 1, 11);
  for (int i = 0; i < batch * priors; ++i) {
    float sum = 0;
    for (int c = 0; c < classes; ++c) sum += conf[i * classes + c];
    for (int c = 0; c < classes; ++c) conf[i * classes + c] /= sum;
  }
  return conf;
}

// `rows` is the op's fixed capacity; `full` says whether the detections
// should fill it (keep_top_k reached) or NMS should leave -1 rows.
void Check(int batch, int priors, const Params &p, int64_t rows, bool full) {
  const std::vector<float> loc = RandomFloats(batch * priors * 4, -1, 1, 5);
  const std::vector<float> conf = Scores(batch, priors, p.num_classes);
  const std::vector<float> prior = Priors(priors);
  OpTester tester("DetectionOutput");
  tester.Input("loc", {batch, priors * 4}, loc)
      .Input("conf", {batch, priors * p.num_classes}, conf)
      .Constant("priors", {1, 2, priors * 4}, prior)
      .Output("detections")
      .OutputInt("count")
      .Arg("num_classes", p.num_classes)
      .Arg("background_label_id", p.background)
      .ArgFloat("nms_threshold", static_cast<float>(p.nms_threshold))
      .Arg("top_k", p.top_k)
      .Arg("keep_top_k", p.keep_top_k)
      .ArgFloat("confidence_threshold", static_cast<float>(p.confidence))
      .Arg("code_type", p.code_type);
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  std::vector<double> want;
  for (int n = 0; n < batch; ++n) {
    const std::vector<double> image = Reference(priors, loc, conf, prior, p, n);
    want.insert(want.end(), image.begin(), image.end());
  }
  const int64_t found = static_cast<int64_t>(want.size() / 7);
  ASSERT_LE(found, rows);
  EXPECT_GT(found, 0);
  if (full) {
    EXPECT_EQ(found, rows);
  } else {
    EXPECT_LT(found, rows) << "NMS should have suppressed boxes";
  }
  want.resize(rows * 7, -1.0);
  EXPECT_EQ(tester.output(0).shape, (Shape{1, 1, rows, 7}));
  EXPECT_EQ(tester.output(1).ints, (std::vector<int32_t>{int32_t(found)}));
  EXPECT_TRUE(AllClose(tester.output(0).floats, want, 1e-5, 1e-6));
}

TEST(DetectionOutputTest, CenterSizeDecodingWithNmsMatchesCaffe) {
  Params p;
  // Capacity: 2 foreground classes x 25 priors, per image.
  Check(1, 25, p, 2 * 25, false);
}

TEST(DetectionOutputTest, KeepTopKKeepsTheBestScoresInLabelOrder) {
  Params p;
  p.num_classes = 4;
  p.keep_top_k = 6;
  p.top_k = 10;
  Check(2, 25, p, 2 * 6, true);
}

TEST(DetectionOutputTest, CornerCodesAndNoBackgroundClass) {
  Params p;
  p.code_type = 1;
  p.background = -1;
  p.nms_threshold = 0.3;
  Check(1, 20, p, 3 * 20, false);
  p.code_type = 3;
  Check(1, 20, p, 3 * 20, false);
}

TEST(DetectionOutputTest, MismatchedInputsAndPerClassBoxesAreErrors) {
  OpTester wrong("DetectionOutput");
  wrong.Input("loc", {1, 12}, RandomFloats(12))
      .Input("conf", {1, 10}, RandomFloats(10))
      .Constant("priors", {1, 2, 12}, Priors(3))
      .Output("detections")
      .Arg("num_classes", 3);
  const MaceStatus status = wrong.Run();
  ASSERT_EQ(status.code(), MaceStatus::MACE_INVALID_ARGS);
  EXPECT_NE(status.information().find("conf"), std::string::npos);
  OpTester per_class("DetectionOutput");
  per_class.Input("loc", {1, 12}, RandomFloats(12))
      .Input("conf", {1, 9}, RandomFloats(9))
      .Constant("priors", {1, 2, 12}, Priors(3))
      .Output("detections")
      .Arg("num_classes", 3)
      .Arg("share_location", 0);
  EXPECT_EQ(per_class.Run().code(), MaceStatus::MACE_UNSUPPORTED);
}

// Found by tests/fuzz/op_fuzzer.cc: the input check multiplied N x P x
// num_classes, and the capacity N x keep_top_k, in int64 without a bound.
TEST(DetectionOutputTest, CountsBeyondInt64AreErrors) {
  const int64_t huge = std::numeric_limits<int64_t>::max();
  auto run = [](int64_t num_classes, int64_t keep_top_k) {
    OpTester tester("DetectionOutput");
    tester.Input("loc", {2, 12}, RandomFloats(24))
        .Input("conf", {2, 9}, RandomFloats(18))
        .Constant("priors", {1, 2, 12}, Priors(3))
        .Output("detections")
        .Arg("num_classes", num_classes)
        .Arg("keep_top_k", keep_top_k);
    return tester.Run();
  };
  ASSERT_EQ(run(3, -1), MaceStatus::MACE_SUCCESS);
  MaceStatus status = run(huge, -1);
  EXPECT_EQ(status.code(), MaceStatus::MACE_INVALID_ARGS);
  EXPECT_NE(status.information().find("conf"), std::string::npos)
      << status.information();
  status = run(3, huge);
  EXPECT_EQ(status.code(), MaceStatus::MACE_INVALID_ARGS);
  EXPECT_NE(status.information().find("keep_top_k"), std::string::npos)
      << status.information();
}

}  // namespace
}  // namespace test
}  // namespace mace
