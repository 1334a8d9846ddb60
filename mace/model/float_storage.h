// 16-bit float storage for weights: IEEE fp16 (DT_HALF) and bfloat16
// (DT_BFLOAT16, the top half of an fp32). Compute is always fp32.

#ifndef MACE_MODEL_FLOAT_STORAGE_H_
#define MACE_MODEL_FLOAT_STORAGE_H_

#include <cstdint>

namespace mace {

uint16_t FloatToHalf(float value);  // round to nearest even
float HalfToFloat(uint16_t bits);
uint16_t FloatToBFloat16(float value);  // round to nearest even
float BFloat16ToFloat(uint16_t bits);

}  // namespace mace

#endif  // MACE_MODEL_FLOAT_STORAGE_H_
