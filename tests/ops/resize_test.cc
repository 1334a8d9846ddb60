#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

using Dims = std::vector<int64_t>;

// How a test case maps output to input coordinates: TensorFlow flags or an
// ONNX coordinate_transformation_mode (then `onnx` is non-empty).
struct Mapping {
  bool align = false, half_pixel = false;
  std::string onnx;          // coordinate_transformation_mode
  std::string nearest_mode;  // ONNX nearest_mode, "" = default
};

// Source coordinate of output index o, in double (bilinear and ONNX).
// `scale` is out/in or the scale argument (ONNX), ignored by TF modes.
double Source(const Mapping &m, int64_t o, int64_t in, int64_t out,
              double scale) {
  const double x = static_cast<double>(o);
  if (m.onnx.empty()) {
    if (m.align && out > 1) return x * (in - 1) / (out - 1);
    const double s = static_cast<double>(in) / out;
    return m.half_pixel ? (x + 0.5) * s - 0.5 : x * s;
  }
  if (m.onnx == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (m.onnx == "pytorch_half_pixel") {
    return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  }
  if (m.onnx == "align_corners") {
    return out == 1 ? 0.0 : x * (in - 1) / (out - 1);
  }
  if (m.onnx == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  return x / scale;  // asymmetric
}

int64_t Clamp(int64_t v, int64_t n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }

// Nearest source index. TensorFlow computes the index in float32 and that
// decides exact ties, so its branch does the same; ONNX's is in double.
int64_t NearestIndex(const Mapping &m, int64_t o, int64_t in, int64_t out,
                     double scale) {
  if (m.onnx.empty()) {
    const float s =
        (m.align && out > 1)
            ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
            : static_cast<float>(in) / static_cast<float>(out);
    const float x = static_cast<float>(o);
    if (m.align) return Clamp(static_cast<int64_t>(std::round(x * s)), in);
    if (m.half_pixel) {
      return Clamp(static_cast<int64_t>(std::floor((x + 0.5f) * s)), in);
    }
    return Clamp(static_cast<int64_t>(std::floor(x * s)), in);
  }
  const double src = Source(m, o, in, out, scale);
  const double f = std::floor(src);
  const double frac = src - f;
  int64_t i = static_cast<int64_t>(f);
  const std::string mode =
      m.nearest_mode.empty() ? "round_prefer_floor" : m.nearest_mode;
  if (mode == "ceil") {
    i = static_cast<int64_t>(std::ceil(src));
  } else if (mode == "round_prefer_floor") {
    if (frac > 0.5) ++i;
  } else if (mode == "round_prefer_ceil") {
    if (frac >= 0.5) ++i;
  }
  return Clamp(i, in);
}

std::vector<double> ResizeReference(const std::vector<float> &x, const Dims &s,
                                    int64_t oh, int64_t ow, bool nearest,
                                    const Mapping &m, double scale_h,
                                    double scale_w) {
  const int64_t h = s[1], w = s[2], c = s[3];
  auto at = [&](int64_t n, int64_t y, int64_t xx, int64_t ch) {
    return static_cast<double>(x[((n * h + y) * w + xx) * c + ch]);
  };
  std::vector<double> out;
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xx = 0; xx < ow; ++xx)
        for (int64_t ch = 0; ch < c; ++ch) {
          if (nearest) {
            out.push_back(at(n, NearestIndex(m, y, h, oh, scale_h),
                             NearestIndex(m, xx, w, ow, scale_w), ch));
            continue;
          }
          const double sy = Source(m, y, h, oh, scale_h);
          const double sx = Source(m, xx, w, ow, scale_w);
          const double fy = std::floor(sy), fx = std::floor(sx);
          const double wy = sy - fy, wx = sx - fx;
          const int64_t y0 = Clamp(static_cast<int64_t>(fy), h);
          const int64_t y1 = Clamp(static_cast<int64_t>(fy) + 1, h);
          const int64_t x0 = Clamp(static_cast<int64_t>(fx), w);
          const int64_t x1 = Clamp(static_cast<int64_t>(fx) + 1, w);
          out.push_back(
              (1 - wy) *
                  ((1 - wx) * at(n, y0, x0, ch) + wx * at(n, y0, x1, ch)) +
              wy * ((1 - wx) * at(n, y1, x0, ch) + wx * at(n, y1, x1, ch)));
        }
  return out;
}

void AddMapping(OpTester *tester, const Mapping &m) {
  if (!m.onnx.empty()) {
    tester->ArgString("coordinate_transformation_mode", m.onnx);
    if (!m.nearest_mode.empty())
      tester->ArgString("nearest_mode", m.nearest_mode);
    return;
  }
  if (m.align) tester->Arg("align_corners", 1);
  if (m.half_pixel) tester->Arg("half_pixel_centers", 1);
}

std::string Describe(const Mapping &m, const Dims &size, bool nearest) {
  return std::string(nearest ? "nearest " : "bilinear ") +
         (m.onnx.empty() ? (m.align        ? "align_corners"
                            : m.half_pixel ? "half_pixel_centers"
                                           : "legacy")
                         : m.onnx + "/" + m.nearest_mode) +
         " to " + std::to_string(size[0]) + "x" + std::to_string(size[1]);
}

std::vector<Mapping> AllMappings(bool nearest) {
  std::vector<Mapping> maps = {
      {false, false, "", ""}, {true, false, "", ""}, {false, true, "", ""}};
  for (const char *mode : {"half_pixel", "pytorch_half_pixel", "align_corners",
                           "asymmetric", "tf_half_pixel_for_nn"}) {
    if (!nearest) {
      maps.push_back({false, false, mode, ""});
      continue;
    }
    for (const char *round :
         {"", "round_prefer_ceil", "floor", "ceil", "round_prefer_floor"}) {
      maps.push_back({false, false, mode, round});
    }
  }
  return maps;
}

class ResizeTest : public ::testing::TestWithParam<int> {};

void CheckAllModes(bool nearest, int threads) {
  const Dims shape = {2, 5, 7, 3};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 81);
  // Up, down, to one pixel, and exact 2x / 0.5x (ties for nearest).
  const std::vector<Dims> sizes = {{9, 13}, {3, 2}, {1, 1}, {10, 14}, {4, 3}};
  for (const Mapping &m : AllMappings(nearest)) {
    for (const Dims &size : sizes) {
      OpTester tester(nearest ? "ResizeNearestNeighbor" : "ResizeBilinear");
      tester.Input("x", shape, x)
          .Output("y")
          .ArgInts("size", size)
          .Threads(threads);
      AddMapping(&tester, m);
      const std::string what = Describe(m, size, nearest);
      const MaceStatus status = tester.Run();
      ASSERT_EQ(status, MaceStatus::MACE_SUCCESS)
          << what << ": " << status.information();
      EXPECT_EQ(tester.output(0).shape, (Dims{2, size[0], size[1], 3})) << what;
      const std::vector<double> expected = ResizeReference(
          x, shape, size[0], size[1], nearest, m, size[0] / 5.0, size[1] / 7.0);
      EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 1e-5, 1e-5))
          << what;
    }
  }
}

TEST_P(ResizeTest, BilinearEveryFlagAndModeUpAndDown) {
  CheckAllModes(false, GetParam());
}

TEST_P(ResizeTest, NearestEveryFlagAndModeUpAndDown) {
  CheckAllModes(true, GetParam());
}

TEST_P(ResizeTest, SizeFromConstantInput) {
  const Dims shape = {1, 6, 4, 17};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 82);
  OpTester tester("ResizeNearestNeighbor");
  tester.Input("x", shape, x)
      .ConstantInt("size", {2}, {11, 3})
      .Output("y")
      .Arg("half_pixel_centers", 1)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  Mapping m;
  m.half_pixel = true;
  EXPECT_TRUE(AllClose(tester.output(0).floats,
                       ResizeReference(x, shape, 11, 3, true, m, 0, 0)));
}

TEST_P(ResizeTest, OnnxScalesDriveCoordinates) {
  // 7 * 0.6 = 4.2 -> 4 columns, but the coordinate uses 1 / 0.6, not 7 / 4.
  const Dims shape = {2, 5, 7, 3};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 83);
  for (bool nearest : {false, true}) {
    OpTester tester(nearest ? "ResizeNearestNeighbor" : "ResizeBilinear");
    tester.Input("x", shape, x)
        .Output("y")
        .ArgFloat("height_scale", 2.0f)
        .ArgFloat("width_scale", 0.6f)
        .ArgString("coordinate_transformation_mode", "asymmetric")
        .Threads(GetParam());
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
    EXPECT_EQ(tester.output(0).shape, (Dims{2, 10, 4, 3}));
    Mapping m;
    m.onnx = "asymmetric";
    EXPECT_TRUE(AllClose(tester.output(0).floats,
                         ResizeReference(x, shape, 10, 4, nearest, m, 2.0,
                                         static_cast<double>(0.6f))));
  }
}

TEST_P(ResizeTest, TfFlagsWithScalesUseSizeRatio) {
  const Dims shape = {1, 5, 7, 3};
  const std::vector<float> x = RandomFloats(Product(shape), -1, 1, 84);
  OpTester tester("ResizeBilinear");
  tester.Input("x", shape, x)
      .Output("y")
      .ArgFloat("height_scale", 1.5f)
      .ArgFloat("width_scale", 0.6f)
      .Arg("half_pixel_centers", 1)
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(tester.output(0).shape, (Dims{1, 7, 4, 3}));
  Mapping m;
  m.half_pixel = true;
  EXPECT_TRUE(AllClose(tester.output(0).floats,
                       ResizeReference(x, shape, 7, 4, false, m, 0, 0)));
}

TEST_P(ResizeTest, OnnxBackendExamplesGiveTheirValues) {
  // resize_downsample_scales_{linear,nearest} and
  // resize_upsample_scales_nearest from the ONNX operator docs, in NHWC.
  const std::vector<float> x8 = {1, 2, 3, 4, 5, 6, 7, 8};
  for (bool nearest : {false, true}) {
    OpTester tester(nearest ? "ResizeNearestNeighbor" : "ResizeBilinear");
    tester.Input("x", {1, 2, 4, 1}, x8)
        .Output("y")
        .ArgFloat("height_scale", 0.6f)
        .ArgFloat("width_scale", 0.6f)
        .ArgString("coordinate_transformation_mode", "half_pixel")
        .Threads(GetParam());
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
    EXPECT_EQ(tester.output(0).shape, (Dims{1, 1, 2, 1}));
    const std::vector<double> expected =
        nearest ? std::vector<double>{1, 3}
                : std::vector<double>{2.6666665, 4.3333331};
    EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 1e-6, 1e-6));
  }
  OpTester up("ResizeNearestNeighbor");
  up.Input("x", {1, 2, 2, 1}, {1, 2, 3, 4})
      .Output("y")
      .ArgFloat("height_scale", 2.0f)
      .ArgFloat("width_scale", 3.0f)
      .ArgString("nearest_mode", "round_prefer_floor")
      .Threads(GetParam());
  ASSERT_EQ(up.Run(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(up.output(0).shape, (Dims{1, 4, 6, 1}));
  EXPECT_TRUE(AllClose(
      up.output(0).floats,
      {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4},
      0, 0));
}

INSTANTIATE_TEST_SUITE_P(Threads, ResizeTest, ::testing::Values(1, 2));

void ExpectError(OpTester *tester, const std::string &piece) {
  const MaceStatus status = tester->Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(piece), std::string::npos)
      << status.information();
}

TEST(ResizeErrorTest, AlignCornersWithHalfPixelIsRejected) {
  OpTester tester("ResizeBilinear", "rb");
  tester.Input("x", {1, 2, 2, 1}, RandomFloats(4))
      .Output("y")
      .ArgInts("size", {4, 4})
      .Arg("align_corners", 1)
      .Arg("half_pixel_centers", 1);
  ExpectError(&tester, "'half_pixel_centers'");
}

TEST(ResizeErrorTest, UnknownCoordinateModeIsRejected) {
  OpTester tester("ResizeNearestNeighbor", "rn");
  tester.Input("x", {1, 2, 2, 1}, RandomFloats(4))
      .Output("y")
      .ArgInts("size", {4, 4})
      .ArgString("coordinate_transformation_mode", "tf_crop_and_resize");
  ExpectError(&tester, "tf_crop_and_resize");
}

TEST(ResizeErrorTest, UnknownNearestModeIsRejected) {
  OpTester tester("ResizeNearestNeighbor", "rn2");
  tester.Input("x", {1, 2, 2, 1}, RandomFloats(4))
      .Output("y")
      .ArgInts("size", {4, 4})
      .ArgString("nearest_mode", "nearest");
  ExpectError(&tester, "'nearest_mode'");
}

TEST(ResizeErrorTest, MissingSizeIsRejected) {
  OpTester tester("ResizeBilinear", "rb2");
  tester.Input("x", {1, 2, 2, 1}, RandomFloats(4)).Output("y");
  ExpectError(&tester, "'size'");
}

TEST(ResizeErrorTest, SizeOfWrongLengthOrZeroIsRejected) {
  OpTester three("ResizeBilinear", "rb3");
  three.Input("x", {1, 2, 2, 1}, RandomFloats(4))
      .Output("y")
      .ArgInts("size", {4, 4, 4});
  ExpectError(&three, "2 values");
  OpTester zero("ResizeBilinear", "rb4");
  zero.Input("x", {1, 2, 2, 1}, RandomFloats(4))
      .Output("y")
      .ArgInts("size", {0, 4});
  ExpectError(&zero, "positive");
}

TEST(ResizeErrorTest, SizeBeyondMemoryIsRejectedBeforeItsMapsAreBuilt) {
  // 2^62 output values: the coordinate maps alone would take 86 GB.
  OpTester tester("ResizeBilinear", "rb6");
  tester.Input("x", {1, 2, 2, 1}, RandomFloats(4))
      .Output("y")
      .ArgInts("size", {int64_t{1} << 31, int64_t{1} << 31});
  ExpectError(&tester, "more memory than this machine has");
  OpTester beyond("ResizeNearestNeighbor", "rn3");
  beyond.Input("x", {1, 2, 2, 1}, RandomFloats(4))
      .Output("y")
      .ArgInts("size", {(int64_t{1} << 31) + 1, 4});
  ExpectError(&beyond, "at most 2^31");
}

TEST(ResizeErrorTest, WrongRankIsRejected) {
  OpTester tester("ResizeBilinear", "rb5");
  tester.Input("x", {2, 2, 1}, RandomFloats(4))
      .Output("y")
      .ArgInts("size", {4, 4});
  ExpectError(&tester, "rank 4");
}

}  // namespace
}  // namespace test
}  // namespace mace
