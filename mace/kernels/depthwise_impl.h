// Internal to mace/kernels: the depthwise row kernel, written once over a
// vector type (activation_vec.h) and instantiated by depthwise_<isa>.cc.
//
// One call computes one output row. A row of at most 8 pixels at stride 1
// (7x7 and smaller maps) goes whole, its accumulators in registers
// (DepthwiseNarrowBlock). Otherwise columns whose window lies inside the
// input (the interior) go in tiles of pixels x channel vectors, several
// independent accumulators covering the FMA latency; each weight vector is
// loaded once per tile and, in 4-pixel 3x3 tiles, each input vector the
// windows share once. Border columns (windows reaching into the padding)
// and rows whose window is clipped at the top or bottom only skip the taps
// that fall outside. Channels go in vectors of the ISA's width; the last,
// partial one uses lane masks. On the SIMD ISAs rows apply ReLU / ReLUX
// in registers through a compile-time clamp and any other activation over
// the finished row; the portable path applies VecActivation per store
// (kDepthwiseWideTiles).

#ifndef MACE_KERNELS_DEPTHWISE_IMPL_H_
#define MACE_KERNELS_DEPTHWISE_IMPL_H_

#include "mace/kernels/activation_vec.h"
#include "mace/kernels/depthwise.h"
#include "mace/kernels/isa_kernels.h"

namespace mace {
namespace kernels {

// Computes output row oh of one image: x_image is [in_h, in_w, C], y_row
// [out_w, C].
using DepthwiseRowFn = void (*)(const DepthwiseShape &shape,
                                const float *x_image, int64_t oh,
                                const float *w, const float *bias,
                                const ActivationParams &act, float *y_row);

// One ISA's row kernels: rows[kernel 3x3, 5x5][stride_w 1, 2].
struct DepthwiseKernels {
  const char *name;
  DepthwiseRowFn rows[2][2];
};

// Defined by the per-ISA files that the build includes.
template <>
const DepthwiseKernels &IsaKernels<DepthwiseKernels, VectorIsa::kGeneric>();
template <>
const DepthwiseKernels &IsaKernels<DepthwiseKernels, VectorIsa::kAvx2>();
template <>
const DepthwiseKernels &IsaKernels<DepthwiseKernels, VectorIsa::kAvx512>();
template <>
const DepthwiseKernels &IsaKernels<DepthwiseKernels, VectorIsa::kNeon>();

namespace {

template <class V, bool kFull>
inline __attribute__((always_inline)) typename V::T LoadLanes(const float *p,
                                                              int lanes) {
  return kFull ? V::Load(p) : V::LoadPartial(p, lanes);
}

template <class V, bool kFull>
inline __attribute__((always_inline)) void StoreLanes(float *p, int lanes,
                                                      typename V::T v) {
  if (kFull) {
    V::Store(p, v);
  } else {
    V::StorePartial(p, lanes, v);
  }
}

// Where one output row reads: input row ih0 + r for kernel rows [r0, r1).
struct DepthwiseRowWindow {
  int64_t ih0, r0, r1;
};

// kTile interior pixels from column ow, times kBlocks vectors of channels
// from c (kFull false: one vector of `lanes` < kWidth channels). kTile *
// kBlocks independent accumulators hide the FMA latency. kFullWindow: the
// window covers all K rows, unrolled, so the tile is one straight block.
template <class V, int K, int S, int kTile, int kBlocks, bool kFullWindow,
          bool kFull, class Act>
inline __attribute__((always_inline)) void DepthwiseInteriorBlock(
    const DepthwiseShape &s, const float *x, const DepthwiseRowWindow &win,
    int64_t ow, const float *w, const float *bias, const Act &activation,
    float *y_row, int64_t c, int lanes) {
  using T = typename V::T;
  constexpr int kW = V::kWidth;
  const int64_t channels = s.channels;
  const int64_t tap_stride = s.weight_stride;  // set by the driver
  const int64_t iw0 = ow * S - s.pad_left;
  T acc[kTile][kBlocks];
  Unroll<kBlocks>([&](auto b) {
    const T init = bias != nullptr
                       ? LoadLanes<V, kFull>(bias + c + b * kW, lanes)
                       : V::Zero();
    Unroll<kTile>([&](auto p) { acc[p][b] = init; });
  });
  // Inlined by force: GCC emitted it out of line for the looped rows, the
  // accumulators going through memory (5x5 rows ran 17-23% slower on the
  // lent Xeon, AVX-512).
  auto window_row = [&](auto r) __attribute__((always_inline)) {
    const float *xr = x + ((win.ih0 + r) * s.in_w + iw0) * channels + c;
    const float *wr = w + r * K * tap_stride + c;
    if constexpr (kBlocks == 1 && kTile <= 4) {
      // The (kTile - 1) * S + K input vectors the tile's windows share,
      // each loaded once.
      constexpr int kInputs = (kTile - 1) * S + K;
      T in[kInputs];
      Unroll<kInputs>([&](auto i) {
        in[i] = LoadLanes<V, kFull>(xr + i * channels, lanes);
      });
      Unroll<K>([&](auto k) {
        const T wk = LoadLanes<V, kFull>(wr + k * tap_stride, lanes);
        Unroll<kTile>(
            [&](auto p) { acc[p][0] = V::Fma(in[p * S + k], wk, acc[p][0]); });
      });
    } else {
      Unroll<K>([&](auto k) {
        Unroll<kBlocks>([&](auto b) {
          const T wk =
              LoadLanes<V, kFull>(wr + k * tap_stride + b * kW, lanes);
          Unroll<kTile>([&](auto p) {
            const T in = LoadLanes<V, kFull>(
                xr + (p * S + k) * channels + b * kW, lanes);
            acc[p][b] = V::Fma(in, wk, acc[p][b]);
          });
        });
      });
    }
  };
  if constexpr (kFullWindow) {
    Unroll<K>(window_row);
  } else {
    for (int64_t r = win.r0; r < win.r1; ++r) window_row(r);
  }
  float *y = y_row + ow * channels + c;
  Unroll<kTile>([&](auto p) {
    Unroll<kBlocks>([&](auto b) {
      StoreLanes<V, kFull>(y + p * channels + b * kW, lanes,
                           activation(acc[p][b], c + b * kW, lanes));
    });
  });
}

template <class V, int K, int S, int kTile, int kBlocks, bool kFullWindow,
          class Act>
void DepthwiseInteriorPixels(const DepthwiseShape &s, const float *x,
                             const DepthwiseRowWindow &win, int64_t ow,
                             const float *w, const float *bias,
                             const Act &activation, float *y_row) {
  constexpr int kW = V::kWidth;
  int64_t c = 0;
  for (; c + kBlocks * kW <= s.channels; c += kBlocks * kW) {
    DepthwiseInteriorBlock<V, K, S, kTile, kBlocks, kFullWindow, true>(
        s, x, win, ow, w, bias, activation, y_row, c, kW);
  }
  for (; c + kW <= s.channels; c += kW) {
    DepthwiseInteriorBlock<V, K, S, kTile, 1, kFullWindow, true>(
        s, x, win, ow, w, bias, activation, y_row, c, kW);
  }
  if (c < s.channels) {
    DepthwiseInteriorBlock<V, K, S, kTile, 1, false, false>(
        s, x, win, ow, w, bias, activation, y_row, c,
        static_cast<int>(s.channels - c));
  }
}

// Window columns [k0, k1) of one pixel clipped on the left or right, for
// kBlocks vectors of channels from c (kFull false: one of `lanes`).
template <class V, int K, int kBlocks, bool kFull, class Act>
inline __attribute__((always_inline)) void DepthwiseBorderBlock(
    const DepthwiseShape &s, const float *x, const DepthwiseRowWindow &win,
    int64_t iw0, int64_t k0, int64_t k1, const float *w, const float *bias,
    const Act &activation, float *y, int64_t c, int lanes) {
  using T = typename V::T;
  constexpr int kW = V::kWidth;
  const int64_t channels = s.channels;
  const int64_t tap_stride = s.weight_stride;  // set by the driver
  T acc[kBlocks];
  Unroll<kBlocks>([&](auto b) {
    acc[b] = bias != nullptr ? LoadLanes<V, kFull>(bias + c + b * kW, lanes)
                             : V::Zero();
  });
  for (int64_t r = win.r0; r < win.r1; ++r) {
    const float *xr = x + ((win.ih0 + r) * s.in_w + iw0) * channels + c;
    const float *wr = w + r * K * tap_stride + c;
    for (int64_t k = k0; k < k1; ++k) {
      Unroll<kBlocks>([&](auto b) {
        acc[b] = V::Fma(LoadLanes<V, kFull>(xr + k * channels + b * kW, lanes),
                        LoadLanes<V, kFull>(wr + k * tap_stride + b * kW,
                                            lanes),
                        acc[b]);
      });
    }
  }
  Unroll<kBlocks>([&](auto b) {
    StoreLanes<V, kFull>(y + c + b * kW, lanes,
                         activation(acc[b], c + b * kW, lanes));
  });
}

// One pixel whose window is clipped on the left or right.
template <class V, int K, class Act>
void DepthwiseBorderPixel(const DepthwiseShape &s, const float *x,
                          const DepthwiseRowWindow &win, int64_t ow,
                          const float *w, const float *bias,
                          const Act &activation, float *y_row) {
  constexpr int kW = V::kWidth;
  constexpr int kBlocks = 4;
  const int64_t channels = s.channels;
  const int64_t iw0 = ow * s.stride_w - s.pad_left;
  const int64_t k0 = MaxIndex(0, -iw0);
  const int64_t k1 = MaxIndex(k0, MinIndex(K, s.in_w - iw0));
  float *y = y_row + ow * channels;
  int64_t c = 0;
  for (; c + kBlocks * kW <= channels; c += kBlocks * kW) {
    DepthwiseBorderBlock<V, K, kBlocks, true>(s, x, win, iw0, k0, k1, w, bias,
                                              activation, y, c, kW);
  }
  for (; c + kW <= channels; c += kW) {
    DepthwiseBorderBlock<V, K, 1, true>(s, x, win, iw0, k0, k1, w, bias,
                                        activation, y, c, kW);
  }
  if (c < channels) {
    DepthwiseBorderBlock<V, K, 1, false>(s, x, win, iw0, k0, k1, w, bias,
                                         activation, y, c,
                                         static_cast<int>(channels - c));
  }
}

// Whether V takes the 8-pixel tiles, the unrolled windows and the
// activation types. Not the portable 4-lane vectors: arrays the compiler
// maps lane by lane, whose unrolled tiles took a sanitized build over 12
// minutes to compile, for a fallback path.
template <class V>
constexpr bool kDepthwiseWideTiles = !std::is_same_v<V, VecGeneric>;

// Interior columns [ow, ow_hi) of one output row; returns ow_hi.
template <class V, int K, int S, bool kFullWindow, class Act>
int64_t DepthwiseInteriorColumns(const DepthwiseShape &s, const float *x,
                                 const DepthwiseRowWindow &win, int64_t ow,
                                 int64_t ow_hi, const float *w,
                                 const float *bias, const Act &activation,
                                 float *y_row) {
  // Tiles chosen by measurement. 8 pixels a tile keep 8 FMA chains in
  // flight; a full window makes each chain 9 (3x3) or 25 (5x5) FMAs deep.
  // On Zen 3 (AVX2) they beat 3x3 tiles of 4 pixels sharing their loaded
  // inputs by 5-25% from 14 columns up. What is left of a row goes in tiles
  // of 4 (3x3: sharing inputs; 5x5: two channel vectors, measured on Xeon),
  // single pixels take 4 channel vectors.
  // Only tiles of one channel vector unroll the window (kFullWindow):
  // the others gained little and multiplied the code the compiler emits.
  if constexpr (kDepthwiseWideTiles<V>) {
    for (; ow + 8 <= ow_hi; ow += 8) {
      DepthwiseInteriorPixels<V, K, S, 8, 1, kFullWindow>(
          s, x, win, ow, w, bias, activation, y_row);
    }
  }
  for (; ow + 4 <= ow_hi; ow += 4) {
    DepthwiseInteriorPixels<V, K, S, 4, K == 5 ? 2 : 1, kFullWindow && K == 3>(
        s, x, win, ow, w, bias, activation, y_row);
  }
  for (; ow < ow_hi; ++ow) {
    DepthwiseInteriorPixels<V, K, S, 1, 4, false>(s, x, win, ow, w, bias,
                                                  activation, y_row);
  }
  return ow;
}

// The activation the row kernel applies in registers: none (kClamp false)
// or min(max(v, lo), hi), which is ReLU with (0, +inf) and ReLUX with (0,
// max_limit), NaN becoming 0 as before. A type, so no switch sits in the
// tile loops: with VecActivation's switch there, the compiler spilled the
// tiles' addresses to the stack (3x3, 96 channels at 28x28 ran 1.5x slower
// on Zen 3). Other kinds go over the finished row. Two kinds, not one per
// activation: every kind multiplies the tiles the compiler unrolls.
template <class V, bool kClamp>
struct ClampActivation {
  typename V::T lo, hi;
  typename V::T operator()(typename V::T v, int64_t, int) const {
    if constexpr (kClamp) {
      return V::Min(V::Max(v, lo), hi);
    } else {
      return v;
    }
  }
};

// Rows of at most this many pixels (stride 1) go whole through
// DepthwiseNarrowBlock.
constexpr int kNarrowRowPixels = 8;

// A whole output row of at most kNarrowRowPixels pixels at stride 1, for
// one vector of channels from c (kFull false: `lanes` channels), the row's
// accumulators in registers: per kernel row, its K weight vectors and each
// input vector are loaded once, where the per-pixel border path (most of a
// 7x7 map under a 5x5 window) loads both for every tap. Output pixel p
// reads input column j - pad_left for j = p + k, so unrolling j and k makes
// p a compile-time index.
template <class V, int K, bool kFull, class Act>
inline __attribute__((always_inline)) void DepthwiseNarrowBlock(
    const DepthwiseShape &s, const float *x, const DepthwiseRowWindow &win,
    const float *w, const float *bias, const Act &activation, float *y_row,
    int64_t c, int lanes) {
  using T = typename V::T;
  constexpr int kPixels = kNarrowRowPixels;
  const int64_t channels = s.channels;
  const int64_t tap_stride = s.weight_stride;  // set by the driver
  const T init =
      bias != nullptr ? LoadLanes<V, kFull>(bias + c, lanes) : V::Zero();
  T acc[kPixels];
  Unroll<kPixels>([&](auto p) { acc[p] = init; });
  for (int64_t r = win.r0; r < win.r1; ++r) {
    const float *xr = x + (win.ih0 + r) * s.in_w * channels + c;
    const float *wr = w + r * K * tap_stride + c;
    T wk[K];
    Unroll<K>(
        [&](auto k) {
          wk[k] = LoadLanes<V, kFull>(wr + k * tap_stride, lanes);
        });
    Unroll<kPixels + K - 1>([&](auto j) {
      const int64_t iw = j - s.pad_left;
      if (iw < 0 || iw >= s.in_w) return;
      const T in = LoadLanes<V, kFull>(xr + iw * channels, lanes);
      Unroll<K>([&](auto k) {
        constexpr int kPixel =
            static_cast<int>(decltype(j)::value) - static_cast<int>(k);
        if constexpr (kPixel >= 0 && kPixel < kPixels) {
          if (kPixel < s.out_w) acc[kPixel] = V::Fma(in, wk[k], acc[kPixel]);
        }
      });
    });
  }
  Unroll<kPixels>([&](auto p) {
    if (p < s.out_w) {
      StoreLanes<V, kFull>(y_row + p * channels + c, lanes,
                           activation(acc[p], c, lanes));
    }
  });
}

// Whether a narrow row's pixels, `channels` floats apart, stay clear of
// 4 KiB aliasing among themselves: with a pixel stride of 1 KiB, 2 KiB or
// 4 KiB (256, 512, 1024 channels) a pixel's stores and another's loads
// share their address's low 12 bits, and the loads wait on the stores.
// Zen 4, AVX-512: DEPTHWISE_CONV_2D_1_1024_7_7_K3x3S1D1 35 us narrow
// against 27 us by pixels, while 1_1024_7_7_K5x5S1D1, whose pixels are
// nearly all border ones, is 70 us narrow against 93-105 us (1152
// channels: 32 us narrow, 79 us by pixels). So 5x5 rows go narrow
// regardless, 3x3 rows only when clear.
inline bool NarrowRowAliasFree(int64_t channels) {
  constexpr int64_t kAliasBytes = 4096;
  for (int64_t d = 1; d < kNarrowRowPixels; ++d) {
    if (channels * static_cast<int64_t>(sizeof(float)) * d % kAliasBytes == 0) {
      return false;
    }
  }
  return true;
}

template <class V, int K, class Act>
void DepthwiseNarrowRow(const DepthwiseShape &s, const float *x,
                        const DepthwiseRowWindow &win, const float *w,
                        const float *bias, const Act &activation,
                        float *y_row) {
  constexpr int kW = V::kWidth;
  int64_t c = 0;
  for (; c + kW <= s.channels; c += kW) {
    DepthwiseNarrowBlock<V, K, true>(s, x, win, w, bias, activation, y_row, c,
                                     kW);
  }
  if (c < s.channels) {
    DepthwiseNarrowBlock<V, K, false>(s, x, win, w, bias, activation, y_row, c,
                                      static_cast<int>(s.channels - c));
  }
}

template <class V, int K, int S, class Act>
void DepthwiseRowWith(const DepthwiseShape &s, const float *x, int64_t oh,
                      const float *w, const float *bias, const Act &activation,
                      float *y_row) {
  DepthwiseRowWindow win;
  win.ih0 = oh * s.stride_h - s.pad_top;
  win.r0 = MaxIndex(0, -win.ih0);
  win.r1 = MaxIndex(win.r0, MinIndex(K, s.in_h - win.ih0));
  if constexpr (S == 1 && kDepthwiseWideTiles<V>) {
    if (s.out_w <= kNarrowRowPixels &&
        (K == 5 || NarrowRowAliasFree(s.channels))) {
      DepthwiseNarrowRow<V, K>(s, x, win, w, bias, activation, y_row);
      return;
    }
  }
  // Interior columns: iw0 = ow * S - pad_left >= 0 and iw0 + K <= in_w.
  const int64_t ow_lo = MinIndex(s.out_w, (s.pad_left + S - 1) / S);
  const int64_t last_start = s.in_w - K + s.pad_left;
  const int64_t ow_hi = MaxIndex(
      ow_lo, MinIndex(s.out_w, last_start >= 0 ? last_start / S + 1 : 0));
  int64_t ow = 0;
  for (; ow < ow_lo; ++ow) {
    DepthwiseBorderPixel<V, K>(s, x, win, ow, w, bias, activation, y_row);
  }
  if constexpr (kDepthwiseWideTiles<V>) {
    if (win.r0 == 0 && win.r1 == K) {
      ow = DepthwiseInteriorColumns<V, K, S, true>(s, x, win, ow, ow_hi, w,
                                                   bias, activation, y_row);
    }
  }
  ow = DepthwiseInteriorColumns<V, K, S, false>(s, x, win, ow, ow_hi, w, bias,
                                                activation, y_row);
  for (; ow < s.out_w; ++ow) {
    DepthwiseBorderPixel<V, K>(s, x, win, ow, w, bias, activation, y_row);
  }
}

template <class V, int K, int S>
void DepthwiseRow(const DepthwiseShape &s, const float *x, int64_t oh,
                  const float *w, const float *bias,
                  const ActivationParams &act, float *y_row) {
  if constexpr (!kDepthwiseWideTiles<V>) {
    // The fallback path keeps one instantiation: the switch per store.
    DepthwiseRowWith<V, K, S>(s, x, oh, w, bias, VecActivation<V>(act), y_row);
    return;
  }
  const typename V::T zero = V::Zero();
  float bounds[2];
  if (ClampBounds(act, bounds)) {
    DepthwiseRowWith<V, K, S>(
        s, x, oh, w, bias,
        ClampActivation<V, true>{V::Set1(bounds[0]), V::Set1(bounds[1])},
        y_row);
    return;
  }
  DepthwiseRowWith<V, K, S>(s, x, oh, w, bias,
                            ClampActivation<V, false>{zero, zero}, y_row);
  if (act.kind == ActivationKind::kNone) return;
  // Any other activation goes over the finished row, still in L1.
  const VecActivation<V> activation(act);
  ActivateChannelsLoops<V, false>(activation, s.channels, y_row, nullptr, y_row,
                                  s.out_w * s.channels);
}

template <class V>
DepthwiseKernels MakeDepthwiseKernels(const char *name) {
  return {name,
          {{DepthwiseRow<V, 3, 1>, DepthwiseRow<V, 3, 2>},
           {DepthwiseRow<V, 5, 1>, DepthwiseRow<V, 5, 2>}}};
}

}  // namespace
}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_DEPTHWISE_IMPL_H_
