// InterleaveThreePlanes against a plain loop: every row count around the
// vector width, bit for bit (NaN payloads and negative zeros included).

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "mace/kernels/interleave.h"

namespace mace {
namespace kernels {
namespace {

TEST(InterleaveKernelTest, ThreePlanesMatchAPlainLoopBitForBit) {
  std::mt19937 rng(3);
  for (int64_t rows = 0; rows <= 37; ++rows) {
    const int64_t plane = rows + 5;  // planes need not be adjacent
    std::vector<uint32_t> bits(3 * plane);
    for (auto &b : bits) b = static_cast<uint32_t>(rng());
    if (rows > 2) {
      bits[1] = 0x7fc00123u;          // a NaN with a payload
      bits[plane + 2] = 0x80000000u;  // -0
    }
    std::vector<float> src(bits.size());
    std::memcpy(src.data(), bits.data(), bits.size() * sizeof(float));
    std::vector<float> dst(3 * rows + 1, 0.0f);
    const float guard = 12345.0f;
    dst.back() = guard;
    InterleaveThreePlanes(src.data(), plane, rows, dst.data());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < 3; ++j) {
        uint32_t got;
        std::memcpy(&got, &dst[3 * r + j], sizeof(got));
        ASSERT_EQ(got, bits[j * plane + r])
            << "rows " << rows << " r " << r << " j " << j;
      }
    }
    EXPECT_EQ(dst.back(), guard) << "wrote past the output, rows " << rows;
  }
}

}  // namespace
}  // namespace kernels
}  // namespace mace
