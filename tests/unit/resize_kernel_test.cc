// The resize kernels of every ISA this machine runs on 1, 3, 7, 15, 16, 17
// and 33 channels (around every vector width), 1-pixel images, up- and
// downsampling, batch 2, against
//  - float64 bilinear interpolation (within 1e-6 on values in [-1, 1]:
//    float rounding in TensorFlow's order, with or without FMA, stays
//    within a few 1e-8),
//  - the input pixel itself for nearest, bit for bit,
// on random source maps and on maps that repeat rows (nearest upsampling,
// where the driver copies the row before), with no pool and on 1 and 2
// threads, which must give the same bits. Then the
// ResizeBilinear and ResizeNearestNeighbor ops under every ISA.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mace/kernels/resize.h"
#include "tests/common/kernel_test_util.h"
#include "tests/common/op_tester.h"

namespace mace {
namespace kernels {
namespace {

using test::RandomVector;
using test::StartPool;

// The source indices and weights of one axis, owned.
struct AxisMap {
  std::vector<int64_t> lower, upper;
  std::vector<float> lerp;

  ResizeAxis View() const {
    ResizeAxis axis;
    axis.lower = lower.data();
    axis.upper = upper.data();
    axis.lerp = lerp.data();
    return axis;
  }
};

// Random: any lower, upper the next index (clamped), any weight; the
// weight is 0 or 0.5 now and then, as real maps have.
AxisMap RandomMap(int64_t in, int64_t out, std::mt19937 *rng) {
  std::uniform_int_distribution<int64_t> index(0, in - 1);
  std::uniform_real_distribution<float> weight(0.0f, 1.0f);
  AxisMap map;
  for (int64_t o = 0; o < out; ++o) {
    const int64_t lower = index(*rng);
    map.lower.push_back(lower);
    map.upper.push_back(std::min(lower + 1, in - 1));
    map.lerp.push_back(o % 5 == 0 ? 0.0f : o % 5 == 1 ? 0.5f : weight(*rng));
  }
  return map;
}

// Upsampling by floor(o * in / out): runs of equal rows and weights.
AxisMap RepeatingMap(int64_t in, int64_t out) {
  AxisMap map;
  for (int64_t o = 0; o < out; ++o) {
    const int64_t lower = o * in / out;
    map.lower.push_back(lower);
    map.upper.push_back(std::min(lower + 1, in - 1));
    map.lerp.push_back(0.25f);
  }
  return map;
}

struct Case {
  ResizeShape shape;
  AxisMap rows, cols;
  std::vector<float> x;
};

void ExpectMatchesReference(const Case &k, ResizeKind kind,
                            const std::vector<float> &y,
                            const std::string &what) {
  const ResizeShape &s = k.shape;
  const int64_t C = s.channels;
  int failures = 0;
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t oy = 0; oy < s.out_h; ++oy) {
      for (int64_t ox = 0; ox < s.out_w; ++ox) {
        for (int64_t c = 0; c < C; ++c) {
          auto in = [&](int64_t iy, int64_t ix) {
            return k.x[((n * s.in_h + iy) * s.in_w + ix) * C + c];
          };
          const float got = y[((n * s.out_h + oy) * s.out_w + ox) * C + c];
          const int64_t r0 = k.rows.lower[oy], r1 = k.rows.upper[oy];
          const int64_t c0 = k.cols.lower[ox], c1 = k.cols.upper[ox];
          bool ok = false;
          double want = 0.0;
          if (kind == ResizeKind::kNearest) {
            want = in(r0, c0);
            ok = got == in(r0, c0);
          } else {
            const double ly = k.rows.lerp[oy], lx = k.cols.lerp[ox];
            want = (1 - ly) * ((1 - lx) * in(r0, c0) + lx * in(r0, c1)) +
                   ly * ((1 - lx) * in(r1, c0) + lx * in(r1, c1));
            ok = std::fabs(got - want) <= 1e-6;
          }
          if (!ok && ++failures <= 3) {
            ADD_FAILURE() << what << " at n=" << n << " oy=" << oy
                          << " ox=" << ox << " c=" << c << ": got " << got
                          << ", want " << want;
          }
        }
      }
    }
  }
}

void CheckEveryIsaAndThreadCount(const Case &k, const std::string &what) {
  static const auto pool1 = StartPool(1);
  static const auto pool2 = StartPool(2);
  const ResizeShape &s = k.shape;
  const int64_t out_size = s.batch * s.out_h * s.out_w * s.channels;
  for (ResizeKind kind : {ResizeKind::kBilinear, ResizeKind::kNearest}) {
    for (VectorIsa isa : AvailableVectorIsas()) {
      std::vector<float> first;
      for (ThreadPool *pool :
           {static_cast<ThreadPool *>(nullptr), pool1.get(), pool2.get()}) {
        const std::string where =
            what + " " + VectorIsaName(isa) +
            (kind == ResizeKind::kNearest ? " nearest" : " bilinear") +
            " threads=" + std::to_string(pool ? pool->num_threads() : 0) +
            " in=" + std::to_string(s.in_h) + "x" + std::to_string(s.in_w) +
            " out=" + std::to_string(s.out_h) + "x" + std::to_string(s.out_w) +
            " c=" + std::to_string(s.channels);
        std::vector<float> y(out_size, NAN);
        Resize(isa, kind, s, k.rows.View(), k.cols.View(), k.x.data(), y.data(),
               pool);
        if (first.empty()) {
          ExpectMatchesReference(k, kind, y, where);
          first = y;
        } else {
          ASSERT_EQ(
              0, std::memcmp(first.data(), y.data(), out_size * sizeof(float)))
              << where << " differs from the run without a pool";
        }
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

const int64_t kChannels[] = {1, 3, 7, 15, 16, 17, 33};
// in_h, in_w, out_h, out_w
const int64_t kSizes[][4] = {
    {1, 1, 1, 1}, {1, 1, 3, 5}, {2, 3, 7, 11}, {5, 4, 3, 2}, {6, 6, 13, 12}};

TEST(ResizeKernelTest, RandomMapsMatchReferencesOnEveryIsa) {
  std::mt19937 rng(20261121);
  for (const auto &size : kSizes) {
    for (int64_t channels : kChannels) {
      Case k;
      k.shape = ResizeShape{2, size[0], size[1], channels, size[2], size[3]};
      k.rows = RandomMap(size[0], size[2], &rng);
      k.cols = RandomMap(size[1], size[3], &rng);
      k.x = RandomVector(2 * size[0] * size[1] * channels, &rng);
      CheckEveryIsaAndThreadCount(k, "random map");
      if (HasFailure()) return;
    }
  }
}

TEST(ResizeKernelTest, RepeatedRowsMatchReferencesOnEveryIsa) {
  std::mt19937 rng(3);
  for (const auto &size : kSizes) {
    for (int64_t channels : kChannels) {
      Case k;
      k.shape = ResizeShape{2, size[0], size[1], channels, size[2], size[3]};
      k.rows = RepeatingMap(size[0], size[2]);
      k.cols = RepeatingMap(size[1], size[3]);
      k.x = RandomVector(2 * size[0] * size[1] * channels, &rng);
      CheckEveryIsaAndThreadCount(k, "repeating map");
      if (HasFailure()) return;
    }
  }
}

TEST(ResizeKernelTest, EmptyShapesWriteNothing) {
  const int64_t zero = 0;
  const float weight = 0.0f;
  const ResizeAxis axis{&zero, &zero, &weight};
  float x = 1.0f, y = 7.0f;
  for (VectorIsa isa : AvailableVectorIsas()) {
    for (ResizeKind kind : {ResizeKind::kBilinear, ResizeKind::kNearest}) {
      Resize(isa, kind, ResizeShape{0, 1, 1, 1, 1, 1}, axis, axis, &x, &y,
             nullptr);
      Resize(isa, kind, ResizeShape{1, 1, 1, 0, 1, 1}, axis, axis, &x, &y,
             nullptr);
      EXPECT_EQ(y, 7.0f);
    }
  }
}

// 2x upsampling of [1, 4, 5, 19] with TensorFlow's half_pixel_centers
// through the ops, under every ISA, against the mapping written out here:
// bilinear src = (o + 0.5) / 2 - 0.5, nearest floor((o + 0.5) / 2).
TEST(ResizeKernelTest, OpsMatchFloat64UnderEveryIsa) {
  std::mt19937 rng(5);
  const int64_t H = 4, W = 5, C = 19, OH = 8, OW = 10;
  const std::vector<float> x = RandomVector(H * W * C, &rng);
  auto in = [&](int64_t iy, int64_t ix, int64_t c) {
    return static_cast<double>(x[(iy * W + ix) * C + c]);
  };
  const VectorIsa before = SelectedVectorIsa();
  for (VectorIsa isa : AvailableVectorIsas()) {
    ASSERT_TRUE(SetVectorIsaForTesting(isa));
    for (bool nearest : {false, true}) {
      const std::string what = std::string(VectorIsaName(isa)) +
                               (nearest ? " nearest" : " bilinear");
      test::OpTester op(nearest ? "ResizeNearestNeighbor" : "ResizeBilinear");
      op.Input("x", {1, H, W, C}, x)
          .Output("y")
          .ArgInts("size", {OH, OW})
          .Arg("half_pixel_centers", 1)
          .Threads(2);
      ASSERT_EQ(op.Run(), MaceStatus::MACE_SUCCESS) << what;
      ASSERT_EQ(op.output(0).shape, (std::vector<int64_t>{1, OH, OW, C}));
      for (int64_t oy = 0; oy < OH; ++oy) {
        for (int64_t ox = 0; ox < OW; ++ox) {
          for (int64_t c = 0; c < C; ++c) {
            double want = 0.0;
            if (nearest) {
              want = in(std::min<int64_t>(H - 1, (2 * oy + 1) / 4),
                        std::min<int64_t>(W - 1, (2 * ox + 1) / 4), c);
            } else {
              const double sy = (oy + 0.5) / 2 - 0.5, sx = (ox + 0.5) / 2 - 0.5;
              const int64_t y0 = static_cast<int64_t>(std::floor(sy));
              const int64_t x0 = static_cast<int64_t>(std::floor(sx));
              const double ly = sy - y0, lx = sx - x0;
              auto at = [&](int64_t iy, int64_t ix) {
                return in(std::clamp<int64_t>(iy, 0, H - 1),
                          std::clamp<int64_t>(ix, 0, W - 1), c);
              };
              want = (1 - ly) * ((1 - lx) * at(y0, x0) + lx * at(y0, x0 + 1)) +
                     ly * ((1 - lx) * at(y0 + 1, x0) + lx * at(y0 + 1, x0 + 1));
            }
            ASSERT_NEAR(op.output(0).floats[(oy * OW + ox) * C + c], want, 1e-6)
                << what << " at " << oy << "," << ox << "," << c;
          }
        }
      }
    }
  }
  SetVectorIsaForTesting(before);
}

}  // namespace
}  // namespace kernels
}  // namespace mace
