#include "mace/model/float_storage.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace mace {
namespace {

TEST(FloatStorageTest, HalfRoundTripsEveryHalfValue) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const uint16_t half = static_cast<uint16_t>(bits);
    const float value = HalfToFloat(half);
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(value))));
      continue;
    }
    EXPECT_EQ(FloatToHalf(value), half) << std::hex << bits;
  }
}

TEST(FloatStorageTest, HalfRoundsToNearestEven) {
  EXPECT_EQ(HalfToFloat(FloatToHalf(1.0f + 1.0f / 2048)), 1.0f);
  EXPECT_EQ(HalfToFloat(FloatToHalf(1.0f + 3.0f / 2048)), 1.0f + 2.0f / 1024);
  EXPECT_EQ(HalfToFloat(FloatToHalf(70000.0f)),
            std::numeric_limits<float>::infinity());
  EXPECT_EQ(HalfToFloat(FloatToHalf(1e-9f)), 0.0f);
  EXPECT_NEAR(HalfToFloat(FloatToHalf(3.0e-6f)), 3.0e-6f, 3e-8);
}

TEST(FloatStorageTest, HalfErrorIsWithinHalfUlpOnRange) {
  for (float x = -1000.0f; x < 1000.0f; x += 0.37f) {
    const float y = HalfToFloat(FloatToHalf(x));
    EXPECT_LE(std::fabs(y - x), std::fabs(x) * (1.0f / 2048) + 1e-7f) << x;
  }
}

TEST(FloatStorageTest, BFloat16KeepsTopBitsWithRounding) {
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(1.0f)), 1.0f);
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(-2.5f)), -2.5f);
  for (float x = -100.0f; x < 100.0f; x += 0.731f) {
    const float y = BFloat16ToFloat(FloatToBFloat16(x));
    EXPECT_LE(std::fabs(y - x), std::fabs(x) / 256.0f) << x;
  }
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(
      FloatToBFloat16(std::numeric_limits<float>::quiet_NaN()))));
}

}  // namespace
}  // namespace mace
