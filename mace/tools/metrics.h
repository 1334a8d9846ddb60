// Validation metrics of an output against a reference (formats.md), all in
// float64 over the flattened values:
//   cosine similarity  dot(x, x') / (|x| |x'|); 1 when both norms are 0,
//                      0 when one is;
//   SQNR               sum(x^2) / sum((x - x')^2), x the reference; +inf
//                      when the outputs are equal; also in dB;
//   pixel accuracy     fraction of rows (values reshaped to [-1, last dim],
//                      4-D NCHW outputs first seen as NHWC) whose argmax
//                      agrees; 1 for outputs of rank < 2.

#ifndef MACE_TOOLS_METRICS_H_
#define MACE_TOOLS_METRICS_H_

#include <cstdint>
#include <vector>

namespace mace {
namespace tools {

struct Similarity {
  double cosine = 0.0;
  double sqnr = 0.0;
  double sqnr_db = 0.0;
  double pixel_accuracy = 0.0;
};

// `reference` and `actual` hold the same number of values, laid out as
// `shape` (in NCHW when `nchw` and the shape has rank 4).
Similarity CompareOutputs(const std::vector<double> &reference,
                          const std::vector<double> &actual,
                          const std::vector<int64_t> &shape, bool nchw);

// Whether an output passes: cosine strictly above the threshold.
inline bool PassesThreshold(const Similarity &similarity, double threshold) {
  return similarity.cosine > threshold;
}

}  // namespace tools
}  // namespace mace

#endif  // MACE_TOOLS_METRICS_H_
