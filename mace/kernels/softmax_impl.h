// Internal to mace/kernels: the softmax kernels, written once over a vector
// type (activation_vec.h) and instantiated by softmax_<isa>.cc.
//
// Contiguous lines (the axis is the last one): three passes per line, each
// vectorised along the line with four independent accumulators: the max,
// exp(x - max) with its sum (stored for softmax), then the scaling (or, for
// log-softmax, x - max - log(sum)). A tail shorter than a vector goes
// through a -inf padded copy, whose extra lanes add exp(-inf) = 0 to the
// sum. Strided lines (the axis is not the last one): the same three passes
// with one line per lane, kWidth neighbouring lines at a time.

#ifndef MACE_KERNELS_SOFTMAX_IMPL_H_
#define MACE_KERNELS_SOFTMAX_IMPL_H_

#include <algorithm>
#include <cmath>
#include <limits>

#include "mace/kernels/activation_vec.h"
#include "mace/kernels/isa_kernels.h"
#include "mace/kernels/softmax.h"

namespace mace {
namespace kernels {

// `rows` contiguous lines of `length` values from x to y.
using SoftmaxRowsFn = void (*)(bool log, int64_t length, const float *x,
                               float *y, int64_t rows);
// `lanes` (<= width) neighbouring lines of `length` values `stride` apart,
// starting at x[0 .. lanes) and y[0 .. lanes).
using SoftmaxLanesFn = void (*)(bool log, int64_t length, int64_t stride,
                                const float *x, float *y, int lanes);

struct SoftmaxKernels {
  const char *name;
  int width;  // the lanes of a vector
  SoftmaxRowsFn rows;
  SoftmaxLanesFn lanes;
};

// Defined by the per-ISA files that the build includes.
template <>
const SoftmaxKernels &IsaKernels<SoftmaxKernels, VectorIsa::kGeneric>();
template <>
const SoftmaxKernels &IsaKernels<SoftmaxKernels, VectorIsa::kAvx2>();
template <>
const SoftmaxKernels &IsaKernels<SoftmaxKernels, VectorIsa::kAvx512>();
template <>
const SoftmaxKernels &IsaKernels<SoftmaxKernels, VectorIsa::kNeon>();

namespace {

// exp(d) for d = x - max, which is <= 0, -inf or NaN. Below the range of
// normal floats the result is 0 (the true value is < 2^-126, nothing next
// to the line max's exp(0) = 1), so a -inf input gives exactly 0. The
// selects compare with `<`, false for NaN on every ISA, so NaN stays NaN.
template <class V>
inline typename V::T ExpOfNonPositive(typename V::T d) {
  if constexpr (V::kLibmTranscendentals) {
    return V::ExpLanes(d);
  } else {
    const typename V::T lowest = V::Set1(kExpLowest);
    const typename V::T e = ExpInRange<V>(V::SelectLess(d, lowest, lowest, d));
    return V::SelectLess(d, lowest, V::Zero(), e);
  }
}

template <class V>
inline float ReduceMax(typename V::T v) {
  float lanes[V::kWidth];
  V::Store(lanes, v);
  float max = lanes[0];
  for (int i = 1; i < V::kWidth; ++i) max = std::max(max, lanes[i]);
  return max;
}

template <class V>
inline float ReduceSum(typename V::T v) {
  float lanes[V::kWidth];
  V::Store(lanes, v);
  float sum = 0.0f;
  for (int i = 0; i < V::kWidth; ++i) sum += lanes[i];
  return sum;
}

// The max of x[0 .. n), n >= 1. A tail shorter than a vector is covered
// by the line's last full vector again (max does not mind the overlap).
template <class V>
float LineMax(const float *x, int64_t n) {
  using T = typename V::T;
  constexpr int kW = V::kWidth;
  if (n < kW) {
    float max = x[0];
    for (int64_t j = 1; j < n; ++j) max = std::max(max, x[j]);
    return max;
  }
  T acc[4];
  Unroll<4>([&](auto i) { acc[i] = V::Load(x); });
  int64_t j = kW;
  for (; j + 4 * kW <= n; j += 4 * kW) {
    Unroll<4>(
        [&](auto i) { acc[i] = V::Max(acc[i], V::Load(x + j + i * kW)); });
  }
  for (; j + kW <= n; j += kW) acc[0] = V::Max(acc[0], V::Load(x + j));
  if (j < n) acc[1] = V::Max(acc[1], V::Load(x + n - kW));
  return ReduceMax<V>(V::Max(V::Max(acc[0], acc[1]), V::Max(acc[2], acc[3])));
}

// The sum of exp(x[j] - max) over j < n; with kStore the exps also go to
// y[j] (y may equal x: each x[j] is read before y[j] is written).
template <class V, bool kStore>
float ExpSum(const float *x, float max, float *y, int64_t n) {
  using T = typename V::T;
  constexpr int kW = V::kWidth;
  const T m = V::Set1(max);
  T acc[4];
  Unroll<4>([&](auto i) { acc[i] = V::Zero(); });
  int64_t j = 0;
  for (; j + 4 * kW <= n; j += 4 * kW) {
    Unroll<4>([&](auto i) {
      const T e = ExpOfNonPositive<V>(V::Sub(V::Load(x + j + i * kW), m));
      if constexpr (kStore) V::Store(y + j + i * kW, e);
      acc[i] = V::Add(acc[i], e);
    });
  }
  for (; j + kW <= n; j += kW) {
    const T e = ExpOfNonPositive<V>(V::Sub(V::Load(x + j), m));
    if constexpr (kStore) V::Store(y + j, e);
    acc[0] = V::Add(acc[0], e);
  }
  if (j < n) {
    const int lanes = static_cast<int>(n - j);
    float padded[kW];
    std::fill(padded, padded + kW, -std::numeric_limits<float>::infinity());
    std::copy(x + j, x + n, padded);
    const T e = ExpOfNonPositive<V>(V::Sub(V::Load(padded), m));
    if constexpr (kStore) V::StorePartial(y + j, lanes, e);
    acc[1] = V::Add(acc[1], e);
  }
  return ReduceSum<V>(V::Add(V::Add(acc[0], acc[1]), V::Add(acc[2], acc[3])));
}

// y[j] = f(x[j]) for j < n, f on vectors.
template <class V, class F>
inline __attribute__((always_inline)) void MapLine(const float *x, float *y,
                                                   int64_t n, F f) {
  constexpr int kW = V::kWidth;
  int64_t j = 0;
  for (; j + 2 * kW <= n; j += 2 * kW) {
    const typename V::T a = V::Load(x + j);
    const typename V::T b = V::Load(x + j + kW);
    V::Store(y + j, f(a));
    V::Store(y + j + kW, f(b));
  }
  for (; j < n; j += kW) {
    const int lanes = static_cast<int>(MinIndex(kW, n - j));
    V::StorePartial(y + j, lanes, f(V::LoadPartial(x + j, lanes)));
  }
}

template <class V>
void SoftmaxRows(bool log, int64_t length, const float *x, float *y,
                 int64_t rows) {
  using T = typename V::T;
  for (int64_t r = 0; r < rows; ++r) {
    const float *x_row = x + r * length;
    float *y_row = y + r * length;
    const float max = LineMax<V>(x_row, length);
    const T m = V::Set1(max);
    if (log) {
      const T log_sum =
          V::Set1(std::log(ExpSum<V, false>(x_row, max, y_row, length)));
      MapLine<V>(x_row, y_row, length,
                 [&](T v) { return V::Sub(V::Sub(v, m), log_sum); });
    } else {
      const T inv_sum =
          V::Set1(1.0f / ExpSum<V, true>(x_row, max, y_row, length));
      MapLine<V>(y_row, y_row, length, [&](T v) { return V::Mul(v, inv_sum); });
    }
  }
}

template <class V, bool kFull>
void SoftmaxLanesOf(bool log, int64_t length, int64_t stride, const float *x,
                    float *y, int lanes) {
  using T = typename V::T;
  auto load = [lanes](const float *p) {
    return kFull ? V::Load(p) : V::LoadPartial(p, lanes);
  };
  auto store = [lanes](float *p, T v) {
    if (kFull) {
      V::Store(p, v);
    } else {
      V::StorePartial(p, lanes, v);
    }
  };
  T m = load(x);
  for (int64_t j = 1; j < length; ++j) m = V::Max(m, load(x + j * stride));
  T sum = V::Zero();
  for (int64_t j = 0; j < length; ++j) {
    const T e = ExpOfNonPositive<V>(V::Sub(load(x + j * stride), m));
    if (!log) store(y + j * stride, e);
    sum = V::Add(sum, e);
  }
  if (log) {
    // No vector log: once per line, through the C library.
    float sums[V::kWidth];
    V::Store(sums, sum);
    for (float &s : sums) s = std::log(s);
    const T log_sum = V::Load(sums);
    for (int64_t j = 0; j < length; ++j) {
      store(y + j * stride, V::Sub(V::Sub(load(x + j * stride), m), log_sum));
    }
  } else {
    const T inv_sum = V::Div(V::Set1(1.0f), sum);
    for (int64_t j = 0; j < length; ++j) {
      store(y + j * stride, V::Mul(load(y + j * stride), inv_sum));
    }
  }
}

template <class V>
void SoftmaxLanes(bool log, int64_t length, int64_t stride, const float *x,
                  float *y, int lanes) {
  if (lanes == V::kWidth) {
    SoftmaxLanesOf<V, true>(log, length, stride, x, y, lanes);
  } else {
    SoftmaxLanesOf<V, false>(log, length, stride, x, y, lanes);
  }
}

template <class V>
SoftmaxKernels MakeSoftmaxKernels(const char *name) {
  return {name, V::kWidth, SoftmaxRows<V>, SoftmaxLanes<V>};
}

}  // namespace
}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_SOFTMAX_IMPL_H_
