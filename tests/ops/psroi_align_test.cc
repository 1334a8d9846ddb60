#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

using Shape = std::vector<int64_t>;

// MACE's / R-FCN's PSROIAlign in float64, written the way the published
// kernel reads: per bin, samples one pixel apart from the clipped bin
// start, each the four floor/ceil neighbours with bilinear weights (inside
// the map only), summed and divided by the bin area.
std::vector<double> PSROIAlignReference(const Shape &fshape,
                                        const std::vector<float> &features,
                                        const std::vector<float> &rois,
                                        double spatial_scale, int output_dim,
                                        int group) {
  const int64_t height = fshape[1], width = fshape[2], channels = fshape[3];
  const int64_t num_rois = static_cast<int64_t>(rois.size()) / 5;
  std::vector<double> out;
  auto at = [&](int64_t b, int64_t y, int64_t x, int64_t c) -> double {
    if (y < 0 || y > height - 1 || x < 0 || x > width - 1) return 0.0;
    return features[((b * height + y) * width + x) * channels + c];
  };
  for (int64_t r = 0; r < num_rois; ++r) {
    const float *roi = &rois[5 * r];
    const int64_t b = static_cast<int64_t>(roi[0]);
    const double start_w = roi[1] * spatial_scale;
    const double start_h = roi[2] * spatial_scale;
    const double end_w = (roi[3] + 1.0) * spatial_scale;
    const double end_h = (roi[4] + 1.0) * spatial_scale;
    const double roi_w = std::max(end_w - start_w, 0.1);
    const double roi_h = std::max(end_h - start_h, 0.1);
    for (int ph = 0; ph < group; ++ph) {
      for (int pw = 0; pw < group; ++pw) {
        auto clip = [](double v, double hi) {
          return std::min(std::max(v, 0.0), hi);
        };
        const double hstart = clip(start_h + ph * roi_h / group, height);
        const double hend = clip(start_h + (ph + 1) * roi_h / group, height);
        const double wstart = clip(start_w + pw * roi_w / group, width);
        const double wend = clip(start_w + (pw + 1) * roi_w / group, width);
        for (int c = 0; c < output_dim; ++c) {
          const int64_t cin = (c * group + ph) * group + pw;
          if (hend <= hstart || wend <= wstart) {
            out.push_back(0.0);
            continue;
          }
          double sum = 0.0;
          for (double h = hstart; h < hend; h += 1.0) {
            for (double w = wstart; w < wend; w += 1.0) {
              const int64_t left = static_cast<int64_t>(std::floor(w));
              const int64_t right = static_cast<int64_t>(std::ceil(w));
              const int64_t bottom = static_cast<int64_t>(std::floor(h));
              const int64_t top = static_cast<int64_t>(std::ceil(h));
              sum += (1 - w + left) * (1 - top + h) * at(b, top, left, cin);
              sum += (1 - right + w) * (1 - top + h) * at(b, top, right, cin);
              sum +=
                  (1 - w + left) * (1 - h + bottom) * at(b, bottom, left, cin);
              sum += (1 - right + w) * (1 - h + bottom) *
                     at(b, bottom, right, cin);
            }
          }
          out.push_back(sum / ((hend - hstart) * (wend - wstart)));
        }
      }
    }
  }
  return out;
}

class PSROIAlignTest : public ::testing::TestWithParam<int> {};

TEST_P(PSROIAlignTest, EdgeRoisMatchReference) {
  const int group = 3, output_dim = 5;
  const Shape fshape = {2, 9, 11, output_dim * group * group};
  const std::vector<float> features = RandomFloats(Product(fshape), -1, 1, 401);
  const std::vector<float> rois = {
      0,    2.3f,  3.1f,  12.7f, 15.2f,  // inside
      1,    -6.5f, -4.0f, 8.2f,  5.5f,   // past the top-left corner
      1,    15.0f, 10.0f, 40.0f, 30.0f,  // past the bottom-right corner
      0,    7.0f,  7.0f,  7.0f,  7.0f,   // zero area in image coordinates
      0,    9.0f,  4.0f,  3.0f,  2.0f,   // inverted: forced to 0.1 wide
      1,    30.0f, 30.0f, 50.0f, 50.0f,  // entirely outside: zeros
      0,    0.0f,  0.0f,  21.0f, 17.0f,  // whole map, integer samples
      1.7f, 1.5f,  2.5f,  9.5f,  6.5f,   // batch index truncated to 1
  };
  const Shape rshape = {8, 5};
  const std::vector<double> expected =
      PSROIAlignReference(fshape, features, rois, 0.5, output_dim, group);
  for (bool constant_rois : {false, true}) {
    OpTester tester("PSROIAlign");
    tester.Input("features", fshape, features);
    if (constant_rois) {
      tester.Constant("rois", rshape, rois);
    } else {
      tester.Input("rois", rshape, rois);
    }
    tester.Output("y")
        .ArgFloat("spatial_scale", 0.5f)
        .Arg("output_dim", output_dim)
        .Arg("group_size", group)
        .Threads(GetParam());
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
    EXPECT_EQ(tester.output(0).shape, (Shape{8, group, group, output_dim}));
    EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 1e-5, 1e-5));
  }
  // The ROI outside the map pools nothing.
  const size_t per_roi = group * group * output_dim;
  for (size_t i = 5 * per_roi; i < 6 * per_roi; ++i) {
    EXPECT_EQ(expected[i], 0.0);
  }
}

TEST_P(PSROIAlignTest, MaceRoiShapeAndGroupSizeOneMatchReference) {
  const int group = 1, output_dim = 7;
  const Shape fshape = {1, 5, 13, output_dim};
  const std::vector<float> features = RandomFloats(Product(fshape), -2, 2, 402);
  const std::vector<float> rois = {0, 3.0f,  1.0f,  30.0f, 13.0f,
                                   0, 10.5f, 0.25f, 51.0f, 19.75f,
                                   0, -8.0f, -8.0f, 60.0f, 25.0f};
  OpTester tester("PSROIAlign");
  tester.Input("features", fshape, features)
      .Input("rois", {3, 1, 1, 5}, rois)
      .Output("y")
      .ArgFloat("spatial_scale", 0.25f)
      .Arg("output_dim", output_dim)
      .Arg("group_size", group)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).shape, (Shape{3, 1, 1, output_dim}));
  EXPECT_TRUE(AllClose(
      tester.output(0).floats,
      PSROIAlignReference(fshape, features, rois, 0.25, output_dim, group),
      1e-5, 1e-5));
}

TEST_P(PSROIAlignTest, IntegerSampleCountsCoincidentCornersAsMace) {
  // ROI 0: one sample at (0, 0): floor and ceil coincide on both axes, so
  // F[0, 0] = 1 is counted four times (MACE's arithmetic). ROI 1: one
  // sample at (0.5, 0.5): the plain bilinear mean (1 + 2 + 3 + 4) / 4.
  OpTester tester("PSROIAlign");
  tester.Input("features", {1, 2, 2, 1}, {1, 2, 3, 4})
      .Input("rois", {2, 5}, {0, 0, 0, 0, 0, 0, 0.5f, 0.5f, 0.5f, 0.5f})
      .Output("y")
      .ArgFloat("spatial_scale", 1.0f)
      .Arg("output_dim", 1)
      .Arg("group_size", 1)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).floats, (std::vector<float>{4.0f, 2.5f}));
}

INSTANTIATE_TEST_SUITE_P(Threads, PSROIAlignTest, ::testing::Values(1, 2));

struct ErrorCase {
  const char *what;
  Shape fshape;
  Shape rshape;
  float spatial_scale;
  int output_dim;
  int group_size;
  const char *message;
};

TEST(PSROIAlignErrorTest, BadShapesAndArgumentsAreRejected) {
  const ErrorCase cases[] = {
      {"rank-3 features", {4, 4, 8}, {1, 5}, 1.0f, 2, 2, "rank 4"},
      {"rois of 4 values", {1, 4, 4, 8}, {1, 4}, 1.0f, 2, 2, "[R, 5]"},
      {"channels", {1, 4, 4, 9}, {1, 5}, 1.0f, 2, 2, "output_dim * group"},
      {"zero scale", {1, 4, 4, 8}, {1, 5}, 0.0f, 2, 2, "'spatial_scale'"},
      {"zero group", {1, 4, 4, 8}, {1, 5}, 1.0f, 2, 0, "'group_size'"},
      {"zero output_dim", {1, 4, 4, 8}, {1, 5}, 1.0f, 0, 2, "'output_dim'"},
  };
  for (const ErrorCase &c : cases) {
    OpTester tester("PSROIAlign");
    tester.Input("features", c.fshape, std::vector<float>(Product(c.fshape)))
        .Input("rois", c.rshape, std::vector<float>(Product(c.rshape)))
        .Output("y")
        .ArgFloat("spatial_scale", c.spatial_scale)
        .Arg("output_dim", c.output_dim)
        .Arg("group_size", c.group_size);
    const MaceStatus status = tester.Run();
    EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS) << c.what;
    EXPECT_NE(status.information().find(c.message), std::string::npos)
        << c.what << ": " << status.information();
    EXPECT_NE(status.information().find("PSROIAlign"), std::string::npos);
  }
}

TEST(PSROIAlignErrorTest, MissingArgumentsAreRejected) {
  OpTester tester("PSROIAlign");
  tester.Input("features", {1, 2, 2, 4}, std::vector<float>(16))
      .Input("rois", {1, 5}, std::vector<float>(5))
      .Output("y");
  const MaceStatus status = tester.Run();
  EXPECT_NE(status.information().find("'spatial_scale'"), std::string::npos)
      << status.information();
}

TEST(PSROIAlignErrorTest, BatchIndexOutOfRangeIsRunTimeError) {
  for (float batch : {2.0f, -1.0f, NAN}) {
    OpTester tester("PSROIAlign");
    tester.Input("features", {2, 3, 3, 4}, std::vector<float>(72))
        .Input("rois", {2, 5}, {0, 0, 0, 4, 4, batch, 0, 0, 4, 4})
        .Output("y")
        .ArgFloat("spatial_scale", 0.5f)
        .Arg("output_dim", 1)
        .Arg("group_size", 2);
    const MaceStatus status = tester.Run();
    EXPECT_EQ(status.code(), MaceStatus::MACE_RUNTIME_ERROR);
    EXPECT_NE(status.information().find("batch index"), std::string::npos)
        << status.information();
  }
}

TEST(PSROIAlignErrorTest, NchwAndIntFeaturesAreRejected) {
  OpTester nchw("PSROIAlign");
  nchw.Input("features", {1, 2, 2, 4}, std::vector<float>(16))
      .Input("rois", {1, 5}, std::vector<float>(5))
      .Output("y")
      .ArgFloat("spatial_scale", 1.0f)
      .Arg("output_dim", 1)
      .Arg("group_size", 2)
      .Arg("data_format", 2);
  EXPECT_EQ(nchw.Run().code(), MaceStatus::MACE_UNSUPPORTED);

  OpTester ints("PSROIAlign");
  ints.InputInt("features", {1, 2, 2, 4}, std::vector<int32_t>(16))
      .Input("rois", {1, 5}, std::vector<float>(5))
      .Output("y")
      .ArgFloat("spatial_scale", 1.0f)
      .Arg("output_dim", 1)
      .Arg("group_size", 2);
  const MaceStatus status = ints.Run();
  EXPECT_NE(status.information().find("DT_FLOAT"), std::string::npos)
      << status.information();
}

}  // namespace
}  // namespace test
}  // namespace mace
