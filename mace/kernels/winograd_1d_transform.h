// Internal to mace/kernels: the transforms of Winograd1dConv (1-D F(m, r)
// on tiles of t = m + r - 1 = 8 or 6 points), shared by winograd_1d.cc and
// the per-ISA files.
//
// Tiles of 8 use F(6,3)'s points (0, +-1, +-2, +-1/2, infinity), tiles of
// 6 F(4,3)'s (0, +-3/2, +-2/3, infinity): that transform's Bt for every r,
// and At and G from its points (WinogradOnPoints).
// The input and output transforms run WinogradApply (winograd_transform.h)
// over kWinogradLanes channels at a time, compiled by each per-ISA file
// with its own vector flags.

#ifndef MACE_KERNELS_WINOGRAD_1D_TRANSFORM_H_
#define MACE_KERNELS_WINOGRAD_1D_TRANSFORM_H_

#include <cstdint>

#include "mace/kernels/winograd_1d.h"
#include "mace/kernels/winograd_transform.h"

namespace mace {
namespace kernels {

// At of F(kM, kT + 1 - kM) and G of F(kT + 1 - kR, kR) on the points of
// the tile of kT (WinogradOnPoints).
template <int kT, int kM>
struct Winograd1dAt {
  static constexpr double At(int q, int j) {
    return WinogradOnPoints<kM, kT + 1 - kM>::At(q, j);
  }
};

template <int kT, int kR>
struct Winograd1dG {
  static constexpr double At(int j, int k) {
    return WinogradOnPoints<kT + 1 - kR, kR>::G(j, k);
  }
};

// v[j * v_stride + c] = sum_k Bt[j][k] taps[k][c] for c < channels: one
// tile's t input points (each `channels` floats) to its t transformed rows.
using Winograd1dInputFn = void (*)(const float *const *taps, int64_t channels,
                                   float *v, int64_t v_stride);
// out[q * out_step + c] = bias[c] + sum_j At[q][j] m[j * m_stride + c] for
// q < outputs (<= m) and c < channels; bias null: none.
using Winograd1dOutputFn = void (*)(const float *m, int64_t m_stride,
                                    const float *bias, int64_t channels,
                                    int64_t outputs, float *out,
                                    int64_t out_step);

struct Winograd1dTransforms {
  Winograd1dInputFn input;
  Winograd1dOutputFn output;
};

// Per-ISA tables for r = 3, 5 or 7 on tiles of t = 8 points, r = 3 or 5
// on tiles of 6 (defined by the files the build has).
const Winograd1dTransforms &Winograd1dTransformsGeneric(int r, int t);
const Winograd1dTransforms &Winograd1dTransformsAvx2(int r, int t);
const Winograd1dTransforms &Winograd1dTransformsAvx512(int r, int t);
const Winograd1dTransforms &Winograd1dTransformsNeon(int r, int t);

// Internal to each including file, as winograd_transform.h's templates.
namespace {

template <typename IsaTag, int kT>
void Winograd1dInput(const float *const *taps, int64_t channels, float *v,
                     int64_t v_stride) {
  int64_t c = 0;
  for (; c + kWinogradLanes <= channels; c += kWinogradLanes) {
    WinogradApply<WinogradBt<kT - 2, 3>, kT, kT>(
        [&](int k, WinogradVec *x) { LoadLanes(taps[k] + c, x); },
        [&](int j, const WinogradVec &value) {
          StoreLanes(v + j * v_stride + c, value);
        });
  }
  if (c == channels) return;
  // A channel tail: zeros past the channels.
  const int64_t lanes = channels - c;
  float staged[kT][kWinogradLanes] = {};
  for (int k = 0; k < kT; ++k) {
    std::memcpy(staged[k], taps[k] + c, lanes * sizeof(float));
  }
  WinogradApply<WinogradBt<kT - 2, 3>, kT, kT>(
      [&](int k, WinogradVec *x) { LoadLanes(staged[k], x); },
      [&](int j, const WinogradVec &value) {
        float lane_values[kWinogradLanes];
        StoreLanes(lane_values, value);
        std::memcpy(v + j * v_stride + c, lane_values, lanes * sizeof(float));
      });
}

template <typename IsaTag, int kT, int kM>
void Winograd1dOutput(const float *m, int64_t m_stride, const float *bias,
                      int64_t channels, int64_t outputs, float *out,
                      int64_t out_step) {
  for (int64_t c = 0; c < channels; c += kWinogradLanes) {
    const int64_t lanes = std::min<int64_t>(kWinogradLanes, channels - c);
    float staged[kT][kWinogradLanes];
    float lane_bias[kWinogradLanes] = {};
    if (bias != nullptr) {
      std::memcpy(lane_bias, bias + c, lanes * sizeof(float));
    }
    WinogradVec b;
    LoadLanes(lane_bias, &b);
    const bool whole = lanes == kWinogradLanes;
    // A channel tail goes through `staged`, zeros past the channels.
    if (!whole) {
      std::memset(staged, 0, sizeof(staged));
      for (int j = 0; j < kT; ++j) {
        std::memcpy(staged[j], m + j * m_stride + c, lanes * sizeof(float));
      }
    }
    WinogradApply<Winograd1dAt<kT, kM>, kM, kT>(
        [&](int j, WinogradVec *x) {
          LoadLanes(whole ? m + j * m_stride + c : staged[j], x);
        },
        [&](int q, const WinogradVec &value) {
          if (q >= outputs) return;
          if (whole) {
            StoreLanes(out + q * out_step + c, value + b);
            return;
          }
          float lane_values[kWinogradLanes];
          StoreLanes(lane_values, value + b);
          std::memcpy(out + q * out_step + c, lane_values,
                      lanes * sizeof(float));
        });
  }
}

template <typename IsaTag, int kT, int kR>
constexpr Winograd1dTransforms kWinograd1dTransforms = {
    Winograd1dInput<IsaTag, kT>, Winograd1dOutput<IsaTag, kT, kT + 1 - kR>};

template <typename IsaTag>
const Winograd1dTransforms &Winograd1dTransformsFor(int r, int t) {
  if (t == 6) {
    return r == 3 ? kWinograd1dTransforms<IsaTag, 6, 3>
                  : kWinograd1dTransforms<IsaTag, 6, 5>;
  }
  return r == 3   ? kWinograd1dTransforms<IsaTag, 8, 3>
         : r == 5 ? kWinograd1dTransforms<IsaTag, 8, 5>
                  : kWinograd1dTransforms<IsaTag, 8, 7>;
}

}  // namespace
}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_WINOGRAD_1D_TRANSFORM_H_
