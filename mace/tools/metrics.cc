#include "mace/tools/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mace {
namespace tools {
namespace {

double Cosine(const std::vector<double> &x, const std::vector<double> &y) {
  double dot = 0.0, xx = 0.0, yy = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    dot += x[i] * y[i];
    xx += x[i] * x[i];
    yy += y[i] * y[i];
  }
  if (xx == 0.0 && yy == 0.0) return 1.0;
  if (xx == 0.0 || yy == 0.0) return 0.0;
  const double cosine = dot / (std::sqrt(xx) * std::sqrt(yy));
  return std::isnan(cosine) ? cosine : std::clamp(cosine, -1.0, 1.0);
}

double Sqnr(const std::vector<double> &reference,
            const std::vector<double> &actual) {
  double signal = 0.0, noise = 0.0;
  for (size_t i = 0; i < reference.size(); ++i) {
    const double diff = reference[i] - actual[i];
    signal += reference[i] * reference[i];
    noise += diff * diff;
  }
  if (noise == 0.0) return std::numeric_limits<double>::infinity();
  return signal / noise;
}

// NCHW values reordered as NHWC.
std::vector<double> NchwToNhwc(const std::vector<double> &x,
                               const std::vector<int64_t> &shape) {
  const int64_t n = shape[0], c = shape[1], h = shape[2], w = shape[3];
  std::vector<double> out(x.size());
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t i = 0; i < h * w; ++i) {
        out[(b * h * w + i) * c + ch] = x[(b * c + ch) * h * w + i];
      }
    }
  }
  return out;
}

// First index of the largest value in [begin, begin + length).
int64_t ArgMax(const std::vector<double> &x, int64_t begin, int64_t length) {
  int64_t best = 0;
  for (int64_t i = 1; i < length; ++i) {
    if (x[begin + i] > x[begin + best]) best = i;
  }
  return best;
}

double PixelAccuracy(const std::vector<double> &reference,
                     const std::vector<double> &actual,
                     const std::vector<int64_t> &shape, bool nchw) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  if (shape.size() < 2 || count != static_cast<int64_t>(reference.size()) ||
      count == 0) {
    return 1.0;
  }
  const bool transpose = nchw && shape.size() == 4;
  const std::vector<double> x =
      transpose ? NchwToNhwc(reference, shape) : reference;
  const std::vector<double> y = transpose ? NchwToNhwc(actual, shape) : actual;
  const int64_t last = transpose ? shape[1] : shape.back();
  const int64_t rows = count / last;
  int64_t agree = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (ArgMax(x, r * last, last) == ArgMax(y, r * last, last)) ++agree;
  }
  return static_cast<double>(agree) / static_cast<double>(rows);
}

}  // namespace

Similarity CompareOutputs(const std::vector<double> &reference,
                          const std::vector<double> &actual,
                          const std::vector<int64_t> &shape, bool nchw) {
  Similarity result;
  result.cosine = Cosine(reference, actual);
  result.sqnr = Sqnr(reference, actual);
  result.sqnr_db = 10.0 * std::log10(result.sqnr);
  result.pixel_accuracy = PixelAccuracy(reference, actual, shape, nchw);
  return result;
}

}  // namespace tools
}  // namespace mace
