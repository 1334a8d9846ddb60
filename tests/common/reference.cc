#include "tests/common/reference.h"

#include <cmath>
#include <sstream>

namespace mace {
namespace test {

std::vector<float> RandomFloats(int64_t count, float low, float high,
                                uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> values(count);
  for (float &v : values) v = dist(rng);
  return values;
}

std::vector<int32_t> RandomInts(int64_t count, int32_t low, int32_t high,
                                uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> dist(low, high);
  std::vector<int32_t> values(count);
  for (int32_t &v : values) v = dist(rng);
  return values;
}

int64_t Product(const std::vector<int64_t> &shape) {
  int64_t p = 1;
  for (int64_t d : shape) p *= d;
  return p;
}

std::vector<double> ToDouble(const std::vector<float> &values) {
  return std::vector<double>(values.begin(), values.end());
}

::testing::AssertionResult AllClose(const std::vector<float> &actual,
                                    const std::vector<double> &expected,
                                    double rel_tol, double abs_tol) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << "size mismatch: actual " << actual.size() << " vs expected "
           << expected.size();
  }
  double worst_excess = 0.0;
  size_t worst = 0;
  size_t bad = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double diff = std::fabs(actual[i] - expected[i]);
    const double allowed = abs_tol + rel_tol * std::fabs(expected[i]);
    if (!(diff <= allowed)) {  // also catches NaN
      ++bad;
      const double excess = std::isnan(diff) ? 1e300 : diff - allowed;
      if (excess >= worst_excess) {
        worst_excess = excess;
        worst = i;
      }
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << actual.size() << " elements differ; worst at "
         << worst << ": actual " << actual[worst] << " expected "
         << expected[worst];
}

}  // namespace test
}  // namespace mace
