// InterleaveThreePlanes and TransposeRows against plain loops: every size
// around the vector width and the transpose's row runs, bit for bit (NaN
// payloads and negative zeros included).

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "mace/kernels/activation.h"
#include "mace/kernels/interleave.h"

namespace mace {
namespace kernels {
namespace {

void ExpectThreePlanesMatch(VectorIsa isa, bool through_default) {
  std::mt19937 rng(3);
  for (int64_t rows = 0; rows <= 53; ++rows) {
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
    if (through_default) {
      InterleaveThreePlanes(src.data(), plane, rows, dst.data());
    } else {
      InterleaveThreePlanes(isa, src.data(), plane, rows, dst.data());
    }
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

// Every ISA's kernel (AVX-512's in blocks of 16 pixels), on every size up
// to past three blocks, and the default entry point.
TEST(InterleaveKernelTest, ThreePlanesMatchAPlainLoopBitForBit) {
  {
    SCOPED_TRACE("the default entry point");
    ExpectThreePlanesMatch(SelectedVectorIsa(), true);
  }
  for (VectorIsa isa : AvailableVectorIsas()) {
    SCOPED_TRACE(VectorIsaName(isa));
    ExpectThreePlanesMatch(isa, false);
  }
}

TEST(InterleaveKernelTest, TransposeRowsMatchesAPlainLoopBitForBit) {
  std::mt19937 rng(5);
  const uint32_t kUntouched = 0x12345678u;
  for (int64_t rows : {0, 1, 3, 4, 5, 63, 64, 65, 131}) {
    for (int64_t cols = 0; cols <= 9; ++cols) {
      // Strides past the sizes: neither side is dense.
      const int64_t src_stride = rows + 3;
      const int64_t dst_stride = cols + 2;
      std::vector<uint32_t> bits(cols * src_stride);
      for (auto &b : bits) b = static_cast<uint32_t>(rng());
      if (rows > 2 && cols > 1) {
        bits[src_stride + 2] = 0x7fc00123u;  // a NaN with a payload
        bits[1] = 0x80000000u;               // -0
      }
      std::vector<float> src(bits.size());
      std::memcpy(src.data(), bits.data(), bits.size() * sizeof(float));
      std::vector<uint32_t> dst_bits(rows * dst_stride + 1, kUntouched);
      std::vector<float> dst(dst_bits.size());
      std::memcpy(dst.data(), dst_bits.data(), dst.size() * sizeof(float));
      TransposeRows(src.data(), src_stride, rows, cols, dst.data(), dst_stride);
      for (int64_t r = 0; r <= rows; ++r) {
        for (int64_t j = 0; j < dst_stride; ++j) {
          if (r * dst_stride + j >= static_cast<int64_t>(dst.size())) break;
          uint32_t got;
          std::memcpy(&got, &dst[r * dst_stride + j], sizeof(got));
          const bool written = r < rows && j < cols;
          ASSERT_EQ(got, written ? bits[j * src_stride + r] : kUntouched)
              << "rows " << rows << " cols " << cols << " r " << r << " j "
              << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace kernels
}  // namespace mace
