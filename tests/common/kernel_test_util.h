// Helpers shared by the kernel tests (tests/unit/*kernel*_test.cc,
// sgemm_test.cc): a started thread pool, and random inputs drawn from the
// test's own generator (so each test controls its sequence).

#ifndef TESTS_COMMON_KERNEL_TEST_UTIL_H_
#define TESTS_COMMON_KERNEL_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "mace/core/thread_pool.h"

namespace mace {
namespace test {

// A pool of `threads` threads, Init checked (a failure fails the test).
std::unique_ptr<ThreadPool> StartPool(int threads);

// `count` uniform floats in [-1, 1) from `rng`.
std::vector<float> RandomVector(int64_t count, std::mt19937 *rng);

}  // namespace test
}  // namespace mace

#endif  // TESTS_COMMON_KERNEL_TEST_UTIL_H_
