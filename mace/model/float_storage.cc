#include "mace/model/float_storage.h"

#include <cstring>

namespace mace {
namespace {

uint32_t BitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float FloatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

}  // namespace

uint16_t FloatToHalf(float value) {
  const uint32_t bits = BitsOf(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits >= 0x7f800000u) {  // inf or nan
    const bool nan = abs_bits > 0x7f800000u;
    return sign | 0x7c00u | (nan ? 0x200u : 0u);
  }
  if (abs_bits >= 0x477ff000u) return sign | 0x7c00u;  // rounds to inf
  if (abs_bits < 0x38800000u) {                         // fp16 subnormal
    if (abs_bits < 0x33000000u) return sign;            // rounds to 0
    const int exponent = static_cast<int>(abs_bits >> 23);
    const uint32_t mantissa = (abs_bits & 0x7fffffu) | 0x800000u;
    const int shift = 126 - exponent;  // 14..24
    const uint32_t half_mantissa = mantissa >> shift;
    const uint32_t remainder = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    uint32_t rounded = half_mantissa;
    if (remainder > halfway || (remainder == halfway && (half_mantissa & 1))) {
      ++rounded;
    }
    return sign | static_cast<uint16_t>(rounded);
  }
  // Normal: rebias exponent, round mantissa to 10 bits, nearest even.
  uint32_t rebased = abs_bits - 0x38000000u;
  const uint32_t remainder = rebased & 0x1fffu;
  uint32_t result = rebased >> 13;
  if (remainder > 0x1000u || (remainder == 0x1000u && (result & 1))) {
    ++result;
  }
  return sign | static_cast<uint16_t>(result);
}

float HalfToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return FloatOf(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) {
    return FloatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
  }
  if (mantissa == 0) return FloatOf(sign);
  // Subnormal: value = mantissa * 2^-24.
  const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
  return sign ? -magnitude : magnitude;
}

uint16_t FloatToBFloat16(float value) {
  uint32_t bits = BitsOf(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<uint16_t>((bits >> 16) | 0x40u);  // quiet nan
  }
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float BFloat16ToFloat(uint16_t bits) {
  return FloatOf(static_cast<uint32_t>(bits) << 16);
}

}  // namespace mace
