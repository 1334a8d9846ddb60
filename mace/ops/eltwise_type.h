// Eltwise's `type` argument: MACE's codes (0 to 13) and this project's
// extensions (15 and up). One list for the op and the converters.

#ifndef MACE_OPS_ELTWISE_TYPE_H_
#define MACE_OPS_ELTWISE_TYPE_H_

namespace mace {

enum EltwiseType : int {
  kSum = 0,
  kSub = 1,
  kProd = 2,
  kDiv = 3,
  kMin = 4,
  kMax = 5,
  kNeg = 6,
  kAbs = 7,
  kSqrDiff = 8,
  kPow = 9,
  kEqual = 10,
  kFloorDiv = 11,
  kClip = 12,
  kSign = 13,
  kSqrt = 15,
  kRsqrt = 16,
  kExp = 17,
  kLog = 18,
  kErf = 19,
  kReciprocal = 20,
  kFloor = 21,
  kCeil = 22,
  kGreater = 23,
  kLess = 24,
  kNotEqual = 25,
  kRound = 26,
  kSin = 27,
  kCos = 28,
};

}  // namespace mace

#endif  // MACE_OPS_ELTWISE_TYPE_H_
