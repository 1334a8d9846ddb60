// A small CNN built in code (conv + relu + depthwise + pool + fully
// connected + softmax) with fixed-seed weights, and an independent float64
// implementation of the same network for checking the engine end to end.

#ifndef TESTS_COMMON_SMALL_CNN_H_
#define TESTS_COMMON_SMALL_CNN_H_

#include <cstdint>
#include <vector>

#include "mace/model/model_builder.h"

namespace mace {
namespace test {

struct SmallCnn {
  static constexpr int64_t kHeight = 13, kWidth = 11, kChannels = 3;
  static constexpr int64_t kClasses = 10;
  static std::vector<int64_t> InputShape() {
    return {1, kHeight, kWidth, kChannels};
  }

  SmallCnn();  // draws the weights
  // The network as a model: input "input" (NHWC), output "prob" [1,10].
  ModelBuilder Build() const;
  // The same network in float64.
  std::vector<double> Reference(const std::vector<float> &input) const;

  std::vector<float> conv_w, conv_b;  // OHWI [8,3,3,3], [8]
  std::vector<float> dw_w, dw_b;      // [3,3,8,1], [8]
  std::vector<float> fc_w, fc_b;      // [10, 4*3*8], [10]
};

}  // namespace test
}  // namespace mace

#endif  // TESTS_COMMON_SMALL_CNN_H_
