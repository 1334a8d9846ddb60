// Internal to mace/kernels: the Winograd F(m x m, r x r) transforms
// (Lavin & Gray 2015) of 3x3 and 5x5 windows, shared by winograd.cc and
// the per-ISA files.
//
// The matrices come from interpolation points: F(2,3) from 0, +-1 and
// infinity, F(6,3) from 0, +-1, +-2, +-1/2 and infinity (wincnn's choice,
// which keeps F(6,3)'s error smallest among small rational points), F(4,3)
// from its own set (below). Bt depends only on the points, so the 5x5
// transforms of the same input tile take the 3x3 ones' Bt: F(2,5) F(4,3)'s,
// F(4,5) F(6,3)'s; their At and G are computed from those points (below;
// the construction was checked exactly against direct correlation, in
// rational arithmetic, when it was written).
// The transforms are written once, over blocks of kWinogradLanes
// contiguous channels (NHWC keeps a pixel's channels together) held in one
// GCC vector, which each per-ISA file compiles with its own vector flags
// (winograd_avx2.cc with -mavx2, ...); the matrix coefficients are
// template constants, unrolled so that zero terms vanish.

#ifndef MACE_KERNELS_WINOGRAD_TRANSFORM_H_
#define MACE_KERNELS_WINOGRAD_TRANSFORM_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "mace/kernels/interleave.h"

namespace mace {
namespace kernels {

// Transform matrices of F(kM, kR): input tile kT = kM + kR - 1.
//   V = Bt d Bt^T (input tile d, kT x kT),  U = G g G^T (filter g, kR x kR),
//   y = At (U .* V) At^T (output tile, kM x kM).
template <int kM, int kR>
struct WinogradMatrices;

template <>
struct WinogradMatrices<2, 3> {
  static constexpr int kT = 4;
  static constexpr double kBt[4][4] = {
      {1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  static constexpr double kG[4][3] = {
      {1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static constexpr double kAt[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
};

// F(4,3) from the points 0, +-3/2, +-2/3 and infinity rather than the
// usual 0, +-1, +-2: the same zeros in Bt and At, and half the float32
// error (relative error of a 64-channel tile against float64, random
// normal and ReLU-like inputs: 0.6-0.8e-6 against 1.2-1.7e-6), found by
// searching sets of five small rational points; F(2,3) is about 0.25e-6.
template <>
struct WinogradMatrices<4, 3> {
  static constexpr int kT = 6;
  static constexpr double kBt[6][6] = {{1, 0, -97.0 / 36, 0, 1, 0},
                                       {0, -2.0 / 3, -4.0 / 9, 3.0 / 2, 1, 0},
                                       {0, 2.0 / 3, -4.0 / 9, -3.0 / 2, 1, 0},
                                       {0, -3.0 / 2, -9.0 / 4, 2.0 / 3, 1, 0},
                                       {0, 3.0 / 2, -9.0 / 4, -2.0 / 3, 1, 0},
                                       {0, 1, 0, -97.0 / 36, 0, 1}};
  static constexpr double kG[6][3] = {{1, 0, 0},
                                      {8.0 / 65, 12.0 / 65, 18.0 / 65},
                                      {8.0 / 65, -12.0 / 65, 18.0 / 65},
                                      {-81.0 / 130, -27.0 / 65, -18.0 / 65},
                                      {-81.0 / 130, 27.0 / 65, -18.0 / 65},
                                      {0, 0, 1}};
  static constexpr double kAt[4][6] = {
      {1, 1, 1, 1, 1, 0},
      {0, 3.0 / 2, -3.0 / 2, 2.0 / 3, -2.0 / 3, 0},
      {0, 9.0 / 4, 9.0 / 4, 4.0 / 9, 4.0 / 9, 0},
      {0, 27.0 / 8, -27.0 / 8, 8.0 / 27, -8.0 / 27, 1}};
};

template <>
struct WinogradMatrices<6, 3> {
  static constexpr int kT = 8;
  static constexpr double kBt[8][8] = {
      {1, 0, -21.0 / 4, 0, 21.0 / 4, 0, -1, 0},
      {0, 1, 1, -17.0 / 4, -17.0 / 4, 1, 1, 0},
      {0, -1, 1, 17.0 / 4, -17.0 / 4, -1, 1, 0},
      {0, 0.5, 0.25, -2.5, -1.25, 2, 1, 0},
      {0, -0.5, 0.25, 2.5, -1.25, -2, 1, 0},
      {0, 2, 4, -2.5, -5, 0.5, 1, 0},
      {0, -2, 4, 2.5, -5, -0.5, 1, 0},
      {0, -1, 0, 21.0 / 4, 0, -21.0 / 4, 0, 1}};
  static constexpr double kG[8][3] = {{1, 0, 0},
                                      {-2.0 / 9, -2.0 / 9, -2.0 / 9},
                                      {-2.0 / 9, 2.0 / 9, -2.0 / 9},
                                      {1.0 / 90, 1.0 / 45, 2.0 / 45},
                                      {1.0 / 90, -1.0 / 45, 2.0 / 45},
                                      {32.0 / 45, 16.0 / 45, 8.0 / 45},
                                      {32.0 / 45, -16.0 / 45, 8.0 / 45},
                                      {0, 0, 1}};
  static constexpr double kAt[6][8] = {
      {1, 1, 1, 1, 1, 1, 1, 0},
      {0, 1, -1, 2, -2, 0.5, -0.5, 0},
      {0, 1, 1, 4, 4, 0.25, 0.25, 0},
      {0, 1, -1, 8, -8, 0.125, -0.125, 0},
      {0, 1, 1, 16, 16, 1.0 / 16, 1.0 / 16, 0},
      {0, 1, -1, 32, -32, 1.0 / 32, -1.0 / 32, 1}};
};

// At and G of F(kM, kR) on the points of the 3x3 transform with the same
// input tile of kT = kM + kR - 1 points, F(kT - 2, 3), whose Bt they share:
// that At's row 1 holds the points a_j and that G's first column the row
// scales s_j (its G[j] = s_j (1, a_j, a_j^2)). Then At[i][j] = a_j^i and
// G[j][k] = s_j a_j^k, the infinity point taking At's last row and G's
// last tap (checked exactly, in rational arithmetic, against direct
// correlation when written). The 5x5 transforms below and the 1-D ones
// (winograd_1d_transform.h) are built this way.
template <int kM, int kR>
struct WinogradOnPoints {
  using SameTile = WinogradMatrices<kM + kR - 3, 3>;
  static constexpr int kT = kM + kR - 1;
  static_assert(SameTile::kT == kT, "no 3x3 transform with this tile");

  static constexpr double At(int i, int j) {
    if (j == kT - 1) return i == kM - 1 ? 1.0 : 0.0;
    double power = 1.0;
    for (int n = 0; n < i; ++n) power *= SameTile::kAt[1][j];
    return power;
  }
  static constexpr double G(int j, int k) {
    if (j == kT - 1) return k == kR - 1 ? 1.0 : 0.0;
    double value = SameTile::kG[j][0];
    for (int n = 0; n < k; ++n) value *= SameTile::kAt[1][j];
    return value;
  }
};

// f(i, j) for i < kRows, j < kCols, as a table.
template <int kRows, int kCols, typename F>
constexpr std::array<std::array<double, kCols>, kRows> WinogradTable(F f) {
  std::array<std::array<double, kCols>, kRows> table{};
  for (int i = 0; i < kRows; ++i) {
    for (int j = 0; j < kCols; ++j) table[i][j] = f(i, j);
  }
  return table;
}

// F(2,5) on F(4,3)'s points, with about its float32 error (0.8e-6 against
// 0.7e-6 root-mean-square relative, a 64-channel tile of ReLU-like inputs
// against float64); F(4,5) on F(6,3)'s, with about its error, 4x F(2,5)'s.
template <int kM>
struct WinogradMatrices<kM, 5> {
  using Points = WinogradOnPoints<kM, 5>;
  static constexpr int kT = Points::kT;
  static constexpr auto &kBt = Points::SameTile::kBt;
  static constexpr auto kG = WinogradTable<kT, 5>(Points::G);
  static constexpr auto kAt = WinogradTable<kM, kT>(Points::At);
};

// A run of consecutive tiles of one convolution (r x r, stride 1,
// dilation 1, one group): tiles are numbered over [batch, tiles_h,
// tiles_w], tile (th, tw) producing output rows th * m .. + m - 1 from
// input rows th * m - pad_top .. + m + r - 2 (likewise for columns).
struct WinogradTileRun {
  int64_t in_h, in_w, in_c, out_h, out_w, out_c;
  // Floats between neighbouring pixels of the output (>= out_c: inside a
  // tensor joined along channels).
  int64_t out_stride;
  int64_t tiles_h, tiles_w, pad_top, pad_left;
  int64_t tile_begin, tile_count;
  // Floats between the matrices of neighbouring transform elements: the
  // transformed input's (v_stride >= tile_count * in_c) and the
  // products' (m_stride >= tile_count * out_c).
  int64_t v_stride, m_stride;
};

// Input transform of a tile run: v[xi][i][c] for transform element xi
// (kT * kT of them, v_stride apart), tile i of the run, input channel c
// (row stride in_c).
using WinogradInputFn = void (*)(const WinogradTileRun &run, const float *input,
                                 float *v);
// Output transform of a tile run, channels [oc_begin, oc_end): reads
// m[xi][i][oc] (elements m_stride apart, row stride out_c), adds bias
// (null: none) and writes the tiles' in-bounds pixels of output
// [N, out_h, out_w, out_c] (pixels out_stride floats apart).
using WinogradOutputFn = void (*)(const WinogradTileRun &run, const float *m,
                                  const float *bias, int64_t oc_begin,
                                  int64_t oc_end, float *output);

// Filter transform U = G g G^T of a block of up to 16 output channels
// [oc0, oc0 + oc_count) by up to 16 input channels [ic0, ic0 + ic_count):
// `filter` points at tap (0, 0) of (oc0, ic0) (OHWI: tap (a, b) of
// (oc0 + o, ic0 + i) at filter[o * r * r * in_c + (r * a + b) * in_c + i]),
// and
// element xi of (oc0 + o, ic0 + i) goes to u[xi][i * u_stride + o], so that
// packed rows (output channels contiguous) are written in runs.
using WinogradFilterFn = void (*)(const float *filter, int64_t in_c,
                                  int oc_count, int ic_count, float *const *u,
                                  int64_t u_stride);

struct WinogradTransforms {
  WinogradInputFn input;
  WinogradOutputFn output;
  WinogradFilterFn filter;
};

// Per-ISA tables of F(tile_m, kernel): kernel 3 with tile_m 2, 4 or 6,
// kernel 5 with tile_m 2 or 4 (defined by the files the build has).
const WinogradTransforms &WinogradTransformsGeneric(int kernel, int tile_m);
const WinogradTransforms &WinogradTransformsAvx2(int kernel, int tile_m);
const WinogradTransforms &WinogradTransformsAvx512(int kernel, int tile_m);
const WinogradTransforms &WinogradTransformsNeon(int kernel, int tile_m);

// Everything below is internal to each including file (an unnamed
// namespace in a header on purpose): every per-ISA file compiles its own
// copy with its own flags, and the linker must never merge them.
namespace {

constexpr int kWinogradLanes = 16;

// kWinogradLanes floats as one GCC vector: each file's flags lower its
// arithmetic to 4 SSE / NEON operations, 2 AVX or 1 AVX-512 operation.
// Only ever used inside always-inline code, never passed between calls.
typedef float WinogradVec
    __attribute__((vector_size(kWinogradLanes * sizeof(float))));

inline __attribute__((always_inline)) void LoadLanes(const float *p,
                                                     WinogradVec *v) {
  std::memcpy(v, p, sizeof(*v));
}

inline __attribute__((always_inline)) void StoreLanes(float *p,
                                                      const WinogradVec &v) {
  std::memcpy(p, &v, sizeof(v));
}

// Calls f(std::integral_constant<int, i>) for i = 0 .. kCount - 1.
template <typename F, int... kI>
inline __attribute__((always_inline)) void WinogradForEachImpl(
    F &&f, std::integer_sequence<int, kI...>) {
  (f(std::integral_constant<int, kI>{}), ...);
}
template <int kCount, typename F>
inline __attribute__((always_inline)) void WinogradForEach(F &&f) {
  WinogradForEachImpl(f, std::make_integer_sequence<int, kCount>{});
}

// The sums below are unrolled at compile time from the coefficients, which
// are template constants: zero terms vanish, +-1 terms need no multiply,
// and a sum starts from its first term rather than from zero (adding to
// zero is an operation the compiler must keep, for -0). Two structures of
// the matrices halve the work of the rest:
//  - column pairs: inputs k and k + 1 enter every row with coefficients of
//    equal magnitude (At's columns for the points +-a), so each row needs
//    only their sum or their difference, computed once for all rows;
//  - row pairs: rows i and i + 1 differ only in the signs of some terms
//    (Bt's and G's rows for the points +-a), so row i is E + O and row
//    i + 1 is E - O, E summing the terms of equal sign and O the others.
// (Lavin & Gray's transforms are written out by hand this way.)
template <typename Coef, int kRows, int kK>
struct WinogradTerms {
  static constexpr bool ColumnsPaired(int k) {
    if (k + 1 >= kK) return false;
    bool used = false;
    for (int i = 0; i < kRows; ++i) {
      const double a = Coef::At(i, k);
      const double b = Coef::At(i, k + 1);
      if (a != b && a != -b) return false;
      used = used || a != 0.0;
    }
    return used;
  }
  // Whether `index` starts a pair when the pairs (j, j + 1) for which
  // paired(j) holds are taken greedily from 0 over [0, count).
  template <typename Paired>
  static constexpr bool StartsPair(int index, int count, Paired paired) {
    for (int j = 0; j < count;) {
      if (paired(j)) {
        if (j == index) return true;
        j += 2;
      } else {
        if (j == index) return false;
        ++j;
      }
    }
    return false;
  }
  static constexpr bool PairStart(int k) {
    return StartsPair(k, kK, [](int j) { return ColumnsPaired(j); });
  }
  static constexpr bool PairSecond(int k) { return k > 0 && PairStart(k - 1); }
  // Row i's coefficient of source k: input k, or the sum or difference
  // (UsesDifference) of the column pair starting at k; 0 for a pair's
  // second.
  static constexpr double Coefficient(int i, int k) {
    return PairSecond(k) ? 0.0 : Coef::At(i, k);
  }
  static constexpr bool UsesDifference(int i, int k) {
    return PairStart(k) && Coef::At(i, k + 1) == -Coef::At(i, k);
  }
  static constexpr bool RowsPaired(int i) {
    if (i + 1 >= kRows) return false;
    bool same = false, flipped = false;
    for (int k = 0; k < kK; ++k) {
      const double a = Coefficient(i, k);
      const double b = Coefficient(i + 1, k);
      if (a == 0.0 && b == 0.0) continue;
      if (UsesDifference(i, k) != UsesDifference(i + 1, k)) return false;
      if (a == b) {
        same = true;
      } else if (a == -b) {
        flipped = true;
      } else {
        return false;
      }
    }
    return same && flipped;
  }
  static constexpr bool RowPairStart(int i) {
    return StartsPair(i, kRows, [](int j) { return RowsPaired(j); });
  }
  static constexpr bool RowPairSecond(int i) {
    return i > 0 && RowPairStart(i - 1);
  }
  // Which of row i's terms a partial sum takes: all of them, those whose
  // sign row i + 1 keeps (E), or those whose sign it flips (O).
  enum Part { kAll, kSame, kFlipped };
  static constexpr bool Takes(int i, int k, Part part) {
    const double a = Coefficient(i, k);
    if (a == 0.0) return false;
    if (part == kAll) return true;
    const bool same = Coefficient(i + 1, k) == a;
    return part == kSame ? same : !same;
  }
};

// acc (started: holding a value) plus the terms k.. of row kRow that
// kPart takes; source k is sum[k] (a pair's sum) or dif[k] (its
// difference) or what in(k, &x) loads.
template <typename Terms, int kRow, int kK, typename Terms::Part kPart,
          int k = 0, bool kStarted = false, typename In>
inline __attribute__((always_inline)) void WinogradSum(
    const In &in, const WinogradVec *sum, const WinogradVec *dif,
    WinogradVec *acc) {
  if constexpr (k < kK) {
    constexpr bool kTaken = Terms::Takes(kRow, k, kPart);
    if constexpr (kTaken) {
      constexpr double kC = Terms::Coefficient(kRow, k);
      WinogradVec x;
      if constexpr (!Terms::PairStart(k)) {
        in(k, &x);
      } else if constexpr (Terms::UsesDifference(kRow, k)) {
        x = dif[k];
      } else {
        x = sum[k];
      }
      if constexpr (!kStarted) {
        if constexpr (kC == 1.0) {
          *acc = x;
        } else if constexpr (kC == -1.0) {
          *acc = -x;
        } else {
          *acc = static_cast<float>(kC) * x;
        }
      } else if constexpr (kC == 1.0) {
        *acc += x;
      } else if constexpr (kC == -1.0) {
        *acc -= x;
      } else {
        *acc += static_cast<float>(kC) * x;
      }
    }
    WinogradSum<Terms, kRow, kK, kPart, k + 1, kStarted || kTaken>(
        in, sum, dif, acc);
  } else if constexpr (!kStarted) {
    *acc = WinogradVec{};
  }
}

// out(i, sum_k Coef::At(i, k) * input k) for the kRows rows of a kRows x
// kK matrix Coef: in(k, &x) loads input k into x (loaders write through a
// pointer: a function returning a WinogradVec has an ABI that depends on
// the vector flags, which GCC warns about), out(i, value) takes row i's
// value.
template <typename Coef, int kRows, int kK, typename In, typename Out>
inline __attribute__((always_inline)) void WinogradApply(const In &in,
                                                         const Out &out) {
  using Terms = WinogradTerms<Coef, kRows, kK>;
  WinogradVec sum[kK];
  WinogradVec dif[kK];
  WinogradForEach<kK>([&](auto k) {
    constexpr int kIndex = decltype(k)::value;
    if constexpr (Terms::PairStart(kIndex)) {
      WinogradVec a, b;
      in(kIndex, &a);
      in(kIndex + 1, &b);
      sum[kIndex] = a + b;
      dif[kIndex] = a - b;
    }
  });
  WinogradForEach<kRows>([&](auto i) {
    constexpr int kRow = decltype(i)::value;
    if constexpr (Terms::RowPairStart(kRow)) {
      WinogradVec same, flipped;
      WinogradSum<Terms, kRow, kK, Terms::kSame>(in, sum, dif, &same);
      WinogradSum<Terms, kRow, kK, Terms::kFlipped>(in, sum, dif, &flipped);
      out(kRow, same + flipped);
      out(kRow + 1, same - flipped);
    } else if constexpr (!Terms::RowPairSecond(kRow)) {
      WinogradVec value;
      WinogradSum<Terms, kRow, kK, Terms::kAll>(in, sum, dif, &value);
      out(kRow, value);
    }
  });
}

// out(i, j, (C in C^T)[i][j]) for a kT x kT input (in(r, c, &x) loads
// element (r, c) into x) and a kRows x kT matrix C: a column of the input
// at a time into a kRows x kT temporary, then a row of that, so that few
// values are live at once (a whole tile of 16-channel vectors would not
// fit in registers).
template <typename Coef, int kRows, int kT, typename In, typename Out>
inline __attribute__((always_inline)) void WinogradSandwichBy(const In &in,
                                                              const Out &out) {
  WinogradVec tmp[kRows * kT];
  WinogradForEach<kT>([&](auto j) {
    constexpr int kJ = decltype(j)::value;
    WinogradApply<Coef, kRows, kT>(
        [&](int k, WinogradVec *x) { in(k, kJ, x); },
        [&](int i, const WinogradVec &v) { tmp[i * kT + kJ] = v; });
  });
  WinogradForEach<kRows>([&](auto i) {
    constexpr int kI = decltype(i)::value;
    WinogradApply<Coef, kRows, kT>(
        [&](int k, WinogradVec *x) { *x = tmp[kI * kT + k]; },
        [&](int j, const WinogradVec &v) { out(kI, j, v); });
  });
}

// The same from and to arrays: `in` row-major kT x kT, `out` kRows x kRows.
template <typename Coef, int kRows, int kT>
inline __attribute__((always_inline)) void WinogradSandwich(
    const WinogradVec *in, WinogradVec *out) {
  WinogradSandwichBy<Coef, kRows, kT>(
      [&](int r, int c, WinogradVec *x) { *x = in[r * kT + c]; },
      [&](int i, int j, const WinogradVec &v) { out[i * kRows + j] = v; });
}

template <int kM, int kR>
struct WinogradBt {
  static constexpr double At(int i, int k) {
    return WinogradMatrices<kM, kR>::kBt[i][k];
  }
};
template <int kM, int kR>
struct WinogradAt {
  static constexpr double At(int i, int k) {
    return WinogradMatrices<kM, kR>::kAt[i][k];
  }
};

template <int kM, int kR>
struct WinogradG {
  static constexpr double At(int i, int k) {
    return WinogradMatrices<kM, kR>::kG[i][k];
  }
};

// The lanes are output channels, so each transformed row is one store
// into a packed row. The taps of the block are first transposed into
// t[tap][i][o] by 4 x 4 register blocks, reading the filter in contiguous
// runs (gathering 16 output channels straight from it would touch 16 r^2
// lines a power of two apart, which the L1 cannot hold).
template <typename IsaTag, int kM, int kR>
void WinogradFilterTransform(const float *filter, int64_t in_c, int oc_count,
                             int ic_count, float *const *u, int64_t u_stride) {
  constexpr int kT = WinogradMatrices<kM, kR>::kT;
  constexpr int kTaps = kR * kR;
  float t[kTaps][kWinogradLanes][kWinogradLanes];  // [tap][i][o]
  // Lanes past oc_count are never stored, but kept finite.
  if (oc_count < kWinogradLanes) std::memset(t, 0, sizeof(t));
  for (int tap = 0; tap < kTaps; ++tap) {
    TransposeRows(filter + tap * in_c, kTaps * in_c, ic_count, oc_count,
                  &t[tap][0][0], kWinogradLanes);
  }
  for (int i = 0; i < ic_count; ++i) {
    WinogradVec g[kTaps];
    for (int tap = 0; tap < kTaps; ++tap) LoadLanes(t[tap][i], &g[tap]);
    WinogradVec transformed[kT * kT];
    WinogradSandwich<WinogradG<kM, kR>, kT, kR>(g, transformed);
    for (int xi = 0; xi < kT * kT; ++xi) {
      float *dst = u[xi] + i * u_stride;
      if (oc_count == kWinogradLanes) {
        StoreLanes(dst, transformed[xi]);
      } else {
        float lanes[kWinogradLanes];
        StoreLanes(lanes, transformed[xi]);
        for (int o = 0; o < oc_count; ++o) dst[o] = lanes[o];
      }
    }
  }
}

// Copies the kT x kT pixels of a tile's `lanes` (<= kWinogradLanes)
// channels from c0 into staged[r][c][lane], zeros where a pixel lies
// outside the image and in the lanes past `lanes`.
template <int kT>
inline void StageTile(const WinogradTileRun &run, const float *image,
                      int64_t ih0, int64_t iw0, int64_t c0, int64_t lanes,
                      float *staged) {
  for (int r = 0; r < kT; ++r) {
    const int64_t ih = ih0 + r;
    for (int c = 0; c < kT; ++c) {
      const int64_t iw = iw0 + c;
      float *pixel = staged + (r * kT + c) * kWinogradLanes;
      int64_t copied = 0;
      if (ih >= 0 && ih < run.in_h && iw >= 0 && iw < run.in_w) {
        std::memcpy(pixel, image + (ih * run.in_w + iw) * run.in_c + c0,
                    lanes * sizeof(float));
        copied = lanes;
      }
      std::memset(pixel + copied, 0,
                  (kWinogradLanes - copied) * sizeof(float));
    }
  }
}

template <typename IsaTag, int kM, int kR>
void WinogradInputTransform(const WinogradTileRun &run, const float *input,
                            float *v) {
  constexpr int kT = WinogradMatrices<kM, kR>::kT;
  const int64_t tiles_per_image = run.tiles_h * run.tiles_w;
  const int64_t xi_stride = run.v_stride;
  for (int64_t i = 0; i < run.tile_count; ++i) {
    const int64_t tile = run.tile_begin + i;
    const int64_t n = tile / tiles_per_image;
    const int64_t ih0 = tile % tiles_per_image / run.tiles_w * kM - run.pad_top;
    const int64_t iw0 = tile % run.tiles_w * kM - run.pad_left;
    const float *image = input + n * run.in_h * run.in_w * run.in_c;
    const bool interior =
        ih0 >= 0 && iw0 >= 0 && ih0 + kT <= run.in_h && iw0 + kT <= run.in_w;
    for (int64_t c0 = 0; c0 < run.in_c; c0 += kWinogradLanes) {
      const int64_t lanes = std::min<int64_t>(kWinogradLanes, run.in_c - c0);
      if (lanes == kWinogradLanes) {
        // Straight from the input to v (WinogradSandwichBy). An edge tile
        // is first copied with the padding's zeros into `staged`, so that
        // both kinds of tile run the same code.
        const float *base = image + (ih0 * run.in_w + iw0) * run.in_c + c0;
        int64_t row_stride = run.in_w * run.in_c;
        int64_t pixel_stride = run.in_c;
        float staged[kT * kT * kWinogradLanes];
        if (!interior) {
          StageTile<kT>(run, image, ih0, iw0, c0, kWinogradLanes, staged);
          base = staged;
          row_stride = kT * kWinogradLanes;
          pixel_stride = kWinogradLanes;
        }
        float *dst = v + i * run.in_c + c0;
        WinogradSandwichBy<WinogradBt<kM, kR>, kT, kT>(
            [&](int r, int c, WinogradVec *x) {
              LoadLanes(base + r * row_stride + c * pixel_stride, x);
            },
            [&](int r, int c, const WinogradVec &value) {
              StoreLanes(dst + (r * kT + c) * xi_stride, value);
            });
        continue;
      }
      // A channel tail: zeros outside the image and past the channels.
      float staged[kT * kT * kWinogradLanes];
      StageTile<kT>(run, image, ih0, iw0, c0, lanes, staged);
      WinogradVec d[kT * kT];
      for (int xi = 0; xi < kT * kT; ++xi) {
        LoadLanes(staged + xi * kWinogradLanes, &d[xi]);
      }
      WinogradVec transformed[kT * kT];
      WinogradSandwich<WinogradBt<kM, kR>, kT, kT>(d, transformed);
      float *dst = v + i * run.in_c + c0;
      for (int xi = 0; xi < kT * kT; ++xi) {
        float lane_values[kWinogradLanes];
        StoreLanes(lane_values, transformed[xi]);
        std::memcpy(dst + xi * xi_stride, lane_values, lanes * sizeof(float));
      }
    }
  }
}

template <typename IsaTag, int kM, int kR>
void WinogradOutputTransform(const WinogradTileRun &run, const float *m,
                             const float *bias, int64_t oc_begin,
                             int64_t oc_end, float *output) {
  constexpr int kT = WinogradMatrices<kM, kR>::kT;
  const int64_t tiles_per_image = run.tiles_h * run.tiles_w;
  const int64_t xi_stride = run.m_stride;
  for (int64_t i = 0; i < run.tile_count; ++i) {
    const int64_t tile = run.tile_begin + i;
    const int64_t n = tile / tiles_per_image;
    const int64_t oh0 = tile % tiles_per_image / run.tiles_w * kM;
    const int64_t ow0 = tile % run.tiles_w * kM;
    const int64_t rows = std::min<int64_t>(kM, run.out_h - oh0);
    const int64_t cols = std::min<int64_t>(kM, run.out_w - ow0);
    float *origin =
        output + ((n * run.out_h + oh0) * run.out_w + ow0) * run.out_stride;
    for (int64_t c0 = oc_begin; c0 < oc_end; c0 += kWinogradLanes) {
      const int64_t lanes = std::min<int64_t>(kWinogradLanes, oc_end - c0);
      const float *src = m + i * run.out_c + c0;
      float lane_values[kWinogradLanes] = {};
      if (bias != nullptr) {
        std::memcpy(lane_values, bias + c0, lanes * sizeof(float));
      }
      WinogradVec b;
      LoadLanes(lane_values, &b);
      if (lanes == kWinogradLanes) {
        // Straight from the products to the output (WinogradSandwichBy).
        // A tile cut by the output's edge goes to `staged` first and
        // copies out its pixels inside the output, so that both kinds of
        // tile run the same code.
        const bool whole = rows == kM && cols == kM;
        float staged[kM * kM * kWinogradLanes];
        float *base = whole ? origin + c0 : staged;
        const int64_t row_stride =
            whole ? run.out_w * run.out_stride : kM * kWinogradLanes;
        const int64_t pixel_stride = whole ? run.out_stride : kWinogradLanes;
        WinogradSandwichBy<WinogradAt<kM, kR>, kM, kT>(
            [&](int r, int c, WinogradVec *x) {
              LoadLanes(src + (r * kT + c) * xi_stride, x);
            },
            [&](int r, int c, const WinogradVec &v) {
              StoreLanes(base + r * row_stride + c * pixel_stride, v + b);
            });
        if (!whole) {
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t c = 0; c < cols; ++c) {
              std::memcpy(origin + (r * run.out_w + c) * run.out_stride + c0,
                          staged + (r * kM + c) * kWinogradLanes,
                          kWinogradLanes * sizeof(float));
            }
          }
        }
        continue;
      }
      // A channel tail, through a copy of its lanes.
      WinogradVec products[kT * kT];
      for (int xi = 0; xi < kT * kT; ++xi) {
        std::memcpy(lane_values, src + xi * xi_stride, lanes * sizeof(float));
        LoadLanes(lane_values, &products[xi]);
      }
      WinogradVec y[kM * kM];
      WinogradSandwich<WinogradAt<kM, kR>, kM, kT>(products, y);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          float *dst = origin + (r * run.out_w + c) * run.out_stride + c0;
          StoreLanes(lane_values, y[r * kM + c] + b);
          std::memcpy(dst, lane_values, lanes * sizeof(float));
        }
      }
    }
  }
}

template <typename IsaTag, int kM, int kR>
constexpr WinogradTransforms kWinogradTransforms = {
    WinogradInputTransform<IsaTag, kM, kR>,
    WinogradOutputTransform<IsaTag, kM, kR>,
    WinogradFilterTransform<IsaTag, kM, kR>};

// The table of one ISA file, built from its tag: F(2,3), F(4,3), F(6,3),
// F(2,5), F(4,5).
template <typename IsaTag>
const WinogradTransforms &WinogradTransformsFor(int kernel, int tile_m) {
  if (kernel == 5) {
    return tile_m <= 2 ? kWinogradTransforms<IsaTag, 2, 5>
                       : kWinogradTransforms<IsaTag, 4, 5>;
  }
  return tile_m <= 2   ? kWinogradTransforms<IsaTag, 2, 3>
         : tile_m <= 4 ? kWinogradTransforms<IsaTag, 4, 3>
                       : kWinogradTransforms<IsaTag, 6, 3>;
}

}  // namespace

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_WINOGRAD_TRANSFORM_H_
