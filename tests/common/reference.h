// Helpers for tests that compare against an independent float64 reference:
// random data, NHWC indexing, and closeness checks.

#ifndef TESTS_COMMON_REFERENCE_H_
#define TESTS_COMMON_REFERENCE_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace mace {
namespace test {

// Uniform floats in [low, high) from a fixed seed.
std::vector<float> RandomFloats(int64_t count, float low = -1.0f,
                                float high = 1.0f, uint32_t seed = 1234);
std::vector<int32_t> RandomInts(int64_t count, int32_t low, int32_t high,
                                uint32_t seed = 1234);

int64_t Product(const std::vector<int64_t> &shape);

// Widen float32 data to float64 for reference computations.
std::vector<double> ToDouble(const std::vector<float> &values);

// Passes when |actual - expected| <= abs_tol + rel_tol * |expected| for
// every element, and shapes (element counts) agree; reports the worst one.
::testing::AssertionResult AllClose(const std::vector<float> &actual,
                                    const std::vector<double> &expected,
                                    double rel_tol = 1e-5,
                                    double abs_tol = 1e-5);

}  // namespace test
}  // namespace mace

#endif  // TESTS_COMMON_REFERENCE_H_
