// Integer division rounded down or up, where C++ truncates toward zero:
// window arithmetic (pads, the taps a kernel index reaches) runs on
// negative offsets; and rounding up to a multiple (scratch layouts).

#ifndef MACE_CORE_INT_MATH_H_
#define MACE_CORE_INT_MATH_H_

#include <cstdint>

namespace mace {

// floor(a / b) for b != 0.
inline int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

// ceil(a / b) for b != 0.
inline int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

// The least multiple of b (> 0) not below a: where an area may start after
// a bytes of another, aligned to b.
inline int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

// Alignment for SIMD loads and whole cache lines, in bytes.
constexpr int64_t kCacheLineBytes = 64;

}  // namespace mace

#endif  // MACE_CORE_INT_MATH_H_
