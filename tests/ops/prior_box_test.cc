// PriorBox against a float64 transcription of SSD Caffe's
// prior_box_layer.cpp (cell loop, per-min-size boxes, ratio list with flip
// and duplicate removal, clip, variances).

#include <algorithm>
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

using Shape = std::vector<int64_t>;

struct Params {
  std::vector<float> min_size, max_size, aspect_ratio;
  bool flip = true, clip = false;
  std::vector<float> variance = {0.1f};
  int img_h = 0, img_w = 0;
  float step_h = 0, step_w = 0, offset = 0.5f;
};

std::vector<double> Reference(int layer_h, int layer_w, int image_h,
                              int image_w, const Params &p) {
  std::vector<double> ratios = {1.0};
  for (float r : p.aspect_ratio) {
    bool seen = false;
    for (double a : ratios) seen = seen || std::fabs(r - a) < 1e-6;
    if (seen) continue;
    ratios.push_back(r);
    if (p.flip) ratios.push_back(1.0 / r);
  }
  const double img_h = p.img_h ? p.img_h : image_h;
  const double img_w = p.img_w ? p.img_w : image_w;
  const double step_h = p.step_h ? p.step_h : img_h / layer_h;
  const double step_w = p.step_w ? p.step_w : img_w / layer_w;
  std::vector<double> boxes;
  auto add = [&](double cx, double cy, double w, double h) {
    for (double v : {(cx - w / 2) / img_w, (cy - h / 2) / img_h,
                     (cx + w / 2) / img_w, (cy + h / 2) / img_h}) {
      boxes.push_back(p.clip ? std::min(std::max(v, 0.0), 1.0) : v);
    }
  };
  for (int h = 0; h < layer_h; ++h) {
    for (int w = 0; w < layer_w; ++w) {
      const double cx = (w + p.offset) * step_w, cy = (h + p.offset) * step_h;
      for (size_t s = 0; s < p.min_size.size(); ++s) {
        add(cx, cy, p.min_size[s], p.min_size[s]);
        if (!p.max_size.empty()) {
          const double side = std::sqrt(double(p.min_size[s]) * p.max_size[s]);
          add(cx, cy, side, side);
        }
        for (double r : ratios) {
          if (std::fabs(r - 1.0) < 1e-6) continue;
          add(cx, cy, p.min_size[s] * std::sqrt(r),
              p.min_size[s] / std::sqrt(r));
        }
      }
    }
  }
  const size_t count = boxes.size();
  for (size_t i = 0; i < count; ++i) {
    boxes.push_back(p.variance[p.variance.size() == 1 ? 0 : i % 4]);
  }
  return boxes;
}

MaceStatus RunPriorBox(const Shape &feature, const Shape &image,
                       const Params &p, OpTester *tester) {
  tester->Input("feature", feature, RandomFloats(Product(feature)))
      .Input("image", image, RandomFloats(Product(image)))
      .Output("priors")
      .ArgFloats("min_size", p.min_size)
      .ArgFloats("max_size", p.max_size)
      .ArgFloats("aspect_ratio", p.aspect_ratio)
      .Arg("flip", p.flip)
      .Arg("clip", p.clip)
      .ArgFloats("variance", p.variance)
      .Arg("img_h", p.img_h)
      .Arg("img_w", p.img_w)
      .ArgFloat("step_h", p.step_h)
      .ArgFloat("step_w", p.step_w)
      .ArgFloat("offset", p.offset);
  return tester->Run();
}

TEST(PriorBoxTest, MinMaxSizesAndFlippedRatiosMatchCaffe) {
  Params p;
  p.min_size = {30, 60};
  p.max_size = {60, 111};
  p.aspect_ratio = {2, 3, 2.0000001f};  // the near-duplicate is dropped
  p.variance = {0.1f, 0.1f, 0.2f, 0.2f};
  OpTester tester("PriorBox");
  ASSERT_EQ(RunPriorBox({1, 3, 5, 8}, {1, 90, 120, 3}, p, &tester),
            MaceStatus::MACE_SUCCESS);
  const std::vector<double> want = Reference(3, 5, 90, 120, p);
  // 15 cells x 2 min sizes x (1 + 1 max + 4 ratios) boxes x 4 coordinates.
  EXPECT_EQ(tester.output(0).shape, (Shape{1, 2, 15 * 2 * 6 * 4}));
  EXPECT_TRUE(AllClose(tester.output(0).floats, want, 1e-5, 1e-6));
}

TEST(PriorBoxTest, ClipStepOffsetAndImageSizeOverrides) {
  Params p;
  p.min_size = {40};
  p.aspect_ratio = {0.5f};
  p.flip = false;
  p.clip = true;
  p.img_h = 64;
  p.img_w = 80;
  p.step_h = 16;
  p.step_w = 20;
  p.offset = 0.25f;
  OpTester tester("PriorBox");
  ASSERT_EQ(RunPriorBox({1, 4, 4, 2}, {1, 7, 9, 1}, p, &tester),
            MaceStatus::MACE_SUCCESS);
  const std::vector<double> want = Reference(4, 4, 7, 9, p);
  EXPECT_TRUE(AllClose(tester.output(0).floats, want, 1e-5, 1e-6));
  const auto &out = tester.output(0).floats;
  EXPECT_EQ(*std::min_element(out.begin(), out.end()), 0.0f);
}

TEST(PriorBoxTest, InvalidArgumentsAreNamed) {
  Params no_min;
  OpTester a("PriorBox");
  EXPECT_EQ(RunPriorBox({1, 2, 2, 1}, {1, 8, 8, 1}, no_min, &a).code(),
            MaceStatus::MACE_INVALID_ARGS);
  Params small_max;
  small_max.min_size = {10};
  small_max.max_size = {5};
  OpTester b("PriorBox");
  const MaceStatus status =
      RunPriorBox({1, 2, 2, 1}, {1, 8, 8, 1}, small_max, &b);
  ASSERT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("max_size"), std::string::npos);
  Params three_variances;
  three_variances.min_size = {10};
  three_variances.variance = {0.1f, 0.2f, 0.3f};
  OpTester c("PriorBox");
  const MaceStatus bad =
      RunPriorBox({1, 2, 2, 1}, {1, 8, 8, 1}, three_variances, &c);
  ASSERT_NE(bad.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(bad.information().find("variance"), std::string::npos);
}

}  // namespace
}  // namespace test
}  // namespace mace
