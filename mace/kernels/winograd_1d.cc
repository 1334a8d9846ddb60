#include "mace/kernels/winograd_1d.h"

#include <algorithm>
#include <cstring>

#include "mace/kernels/conv_tasks.h"
#include "mace/kernels/interleave.h"
#include "mace/kernels/winograd.h"
#include "mace/kernels/winograd_1d_transform.h"

namespace mace {
namespace kernels {
namespace {

constexpr int kMaxT = kWinograd1dMaxTile;

const Winograd1dTransforms &TransformsFor(SgemmIsa isa, int r, int t) {
  switch (isa) {
#if defined(__x86_64__)
    case SgemmIsa::kAvx2:
      return Winograd1dTransformsAvx2(r, t);
    case SgemmIsa::kAvx512:
      return Winograd1dTransformsAvx512(r, t);
#endif
#if defined(__aarch64__)
    case SgemmIsa::kNeon:
      return Winograd1dTransformsNeon(r, t);
#endif
    default:
      return Winograd1dTransformsGeneric(r, t);
  }
}

// G[j][k] of r taps on tiles of kT points, as floats.
template <int kT, int kR>
void FillG(float (*g)[kMaxT]) {
  for (int j = 0; j < kT; ++j) {
    for (int k = 0; k < kR; ++k) {
      g[j][k] = static_cast<float>(Winograd1dG<kT, kR>::At(j, k));
    }
  }
}

void FillG(int t, int r, float (*g)[kMaxT]) {
  if (t == 6) {
    if (r == 3) FillG<6, 3>(g);
    if (r == 5) FillG<6, 5>(g);
    return;
  }
  if (r == 3) FillG<8, 3>(g);
  if (r == 5) FillG<8, 5>(g);
  if (r == 7) FillG<8, 7>(g);
}

// The 1-D cost model's estimate for tiles of t points (Winograd1dTilePoints).
double Winograd1dCost(const ConvGeometry &g, int64_t t) {
  const bool along_w = g.kernel_h == 1;
  const int64_t r = along_w ? g.kernel_w : g.kernel_h;
  const int64_t m = t + 1 - r;
  const int64_t length = along_w ? g.out_w : g.out_h;
  const int64_t lines = g.batch * (along_w ? g.out_h : g.out_w);
  const double tiles = static_cast<double>(lines * ((length + m - 1) / m));
  const double products = tiles * t * g.in_c * g.out_c;
  const double transforms =
      tiles * t * (t * g.in_c + m * g.out_c) * kWinogradTransformCost;
  return products + transforms;
}

}  // namespace

bool Winograd1dApplies(const ConvGeometry &g) {
  const bool one_by_r = g.kernel_h == 1 && g.kernel_w > 1;
  const bool r_by_one = g.kernel_w == 1 && g.kernel_h > 1;
  const int64_t r = one_by_r ? g.kernel_w : g.kernel_h;
  return (one_by_r || r_by_one) && (r == 3 || r == 5 || r == 7) &&
         g.stride_h == 1 && g.stride_w == 1 && g.dilation_h == 1 &&
         g.dilation_w == 1 && g.groups == 1;
}

int Winograd1dTilePoints(const ConvGeometry &g) {
  if (!Winograd1dApplies(g)) return 0;
  const bool along_w = g.kernel_h == 1;
  const int64_t r = along_w ? g.kernel_w : g.kernel_h;
  const int64_t pixels = g.batch * g.out_h * g.out_w;
  double best_cost = static_cast<double>(pixels) * r * g.in_c * g.out_c;
  int best = 0;
  for (int t : {8, 6}) {
    if (t + 1 - r < 2) continue;
    const double cost = Winograd1dCost(g, t);
    if (cost < best_cost) {
      best = t;
      best_cost = cost;
    }
  }
  return best;
}

struct Winograd1dConv::TileSpan {
  // Each in_c floats (the zero row in the padding); tile_t_ of them.
  const float *taps[kMaxT];
  float *out;             // the tile's first output pixel
  int64_t out_step;       // floats between its output pixels
  int64_t outputs;        // its pixels inside the output (<= m)
};

bool Winograd1dConv::Init(const ConvGeometry &geometry, const float *filter,
                          SgemmIsa isa, int threads, ThreadPool *pool,
                          PackedWeightSource *source, DeferredWork *defer,
                          int tile_points) {
  geo_ = geometry;
  along_w_ = geo_.kernel_h == 1;
  r_ = static_cast<int>(along_w_ ? geo_.kernel_w : geo_.kernel_h);
  if (tile_points == 0) tile_points = Winograd1dTilePoints(geo_);
  tile_t_ = tile_points == 6 && r_ <= 5 ? 6 : kMaxT;
  tile_m_ = tile_t_ + 1 - r_;
  if (along_w_) {
    tiles_a_ = geo_.out_h;
    tiles_b_ = (geo_.out_w + tile_m_ - 1) / tile_m_;
  } else {
    tiles_a_ = (geo_.out_h + tile_m_ - 1) / tile_m_;
    tiles_b_ = geo_.out_w;
  }
  bool ready = false;
  if (!AcquirePackedBs(tile_t_, geo_.in_c, geo_.out_c, isa, source, &storage_,
                       &packed_, &ready)) {
    return false;
  }
  // A source's ready matrices were transformed by an earlier load.
  const int64_t nr = packed_[0].nr;
  if (!ready) {
    RunOrDeferPanels((geo_.out_c + nr - 1) / nr,
                     int64_t{tile_t_} * geo_.in_c * nr, pool, defer,
                     [this, filter](int64_t begin, int64_t end) {
                       TransformPanels(filter, begin, end);
                     });
  }
  slots_ = std::max(1, threads);
  const int64_t tiles = geo_.batch * tiles_a_ * tiles_b_;
  const int64_t mr = SgemmTileRows(packed_[0].isa);
  blocks_ = ThreadRowBlocks(
      tiles, WinogradBlockTiles(tile_t_, geo_, mr, tiles), mr, slots_,
      packed_[0].size() * static_cast<int64_t>(sizeof(float)));
  return true;
}

// U[j][ic][oc] = sum_k G[j][k] g[oc][k][ic], tap k of (oc, ic) at
// filter[(oc * r + k) * in_c + ic] for both window shapes, in blocks of
// 16 x 16 channels: each tap's block is transposed first (4 x 4 register
// blocks reading the filter in runs of input channels, as Winograd's 2-D
// filter transform does), so that each packed row's output channels are
// computed and written together. (Element by element through
// PackedMatrixB::Offset, two divisions each, this took 90 ms of
// Inception-v3's load; gathering output channels straight from the
// filter, 16 r lines at a time, about 55.)
void Winograd1dConv::TransformPanels(const float *filter, int64_t begin,
                                     int64_t end) {
  constexpr int64_t kBlock = 16;
  float g[kMaxT][kMaxT] = {};
  FillG(tile_t_, r_, g);
  const int64_t in_c = geo_.in_c;
  const int64_t nr = packed_[0].nr;
  float t[kMaxT][kBlock][kBlock];  // [k][ic][oc] of one block (k < r)
  for (int64_t panel = begin; panel < end; ++panel) {
    const int64_t panel_oc = panel * nr;
    const int64_t panel_end = std::min(panel_oc + nr, geo_.out_c);
    float *rows[kMaxT];
    for (int j = 0; j < tile_t_; ++j) {
      rows[j] = packed_[j].values + packed_[j].Offset(0, panel_oc);
    }
    for (int64_t oc0 = panel_oc; oc0 < panel_end; oc0 += kBlock) {
      const int64_t oc_count = std::min(kBlock, panel_end - oc0);
      // Lanes past oc_count are never stored, but kept finite.
      if (oc_count < kBlock) std::memset(t, 0, sizeof(t));
      for (int64_t ic0 = 0; ic0 < in_c; ic0 += kBlock) {
        const int64_t ic_count = std::min(kBlock, in_c - ic0);
        for (int k = 0; k < r_; ++k) {
          TransposeRows(filter + (oc0 * r_ + k) * in_c + ic0, r_ * in_c,
                        ic_count, oc_count, &t[k][0][0], kBlock);
        }
        for (int64_t i = 0; i < ic_count; ++i) {
          for (int j = 0; j < tile_t_; ++j) {
            float *row = rows[j] + (ic0 + i) * nr + (oc0 - panel_oc);
            float u[kBlock];
            for (int64_t o = 0; o < kBlock; ++o) u[o] = g[j][0] * t[0][i][o];
            for (int k = 1; k < r_; ++k) {
              for (int64_t o = 0; o < kBlock; ++o) u[o] += g[j][k] * t[k][i][o];
            }
            std::memcpy(row, u, oc_count * sizeof(float));
          }
        }
      }
    }
  }
  if (end * nr >= geo_.out_c) {
    for (PackedMatrixB &u : packed_) ZeroPadColumns(&u);
  }
}

int64_t Winograd1dConv::SlotFloats() const {
  const int64_t rows = blocks_.max_rows();
  return tile_t_ * (WinogradElementStride(rows * geo_.in_c) +
                    WinogradElementStride(rows * geo_.out_c)) +
         geo_.in_c;
}

int64_t Winograd1dConv::ScratchBytes() const {
  return static_cast<int64_t>(slots_) * SlotFloats() *
         static_cast<int64_t>(sizeof(float));
}

Winograd1dConv::TileSpan Winograd1dConv::Span(int64_t tile, const float *input,
                                              const float *zeros, float *output,
                                              int64_t out_stride) const {
  const ConvGeometry &g = geo_;
  const int64_t n = tile / (tiles_a_ * tiles_b_);
  const int64_t a = tile / tiles_b_ % tiles_a_;
  const int64_t b = tile % tiles_b_;
  const float *image = input + n * g.in_h * g.in_w * g.in_c;
  TileSpan span;
  // The tile's line (an input row or column) and its first point on it.
  const float *line;
  int64_t start, length, step;
  if (along_w_) {
    const int64_t ih = a - g.pad_top;
    line = ih >= 0 && ih < g.in_h ? image + ih * g.in_w * g.in_c : nullptr;
    start = b * tile_m_ - g.pad_left;
    length = g.in_w;
    step = g.in_c;
    span.out =
        output + ((n * g.out_h + a) * g.out_w + b * tile_m_) * out_stride;
    span.out_step = out_stride;
    span.outputs = std::min<int64_t>(tile_m_, g.out_w - b * tile_m_);
  } else {
    const int64_t iw = b - g.pad_left;
    line = iw >= 0 && iw < g.in_w ? image + iw * g.in_c : nullptr;
    start = a * tile_m_ - g.pad_top;
    length = g.in_h;
    step = g.in_w * g.in_c;
    span.out =
        output + ((n * g.out_h + a * tile_m_) * g.out_w + b) * out_stride;
    span.out_step = g.out_w * out_stride;
    span.outputs = std::min<int64_t>(tile_m_, g.out_h - a * tile_m_);
  }
  for (int k = 0; k < tile_t_; ++k) {
    const int64_t x = start + k;
    span.taps[k] =
        line != nullptr && x >= 0 && x < length ? line + x * step : zeros;
  }
  return span;
}

void Winograd1dConv::Run(const float *input, const float *bias, float *output,
                         int64_t out_stride, float *scratch, ThreadPool *pool,
                         const SgemmEpilogue *epilogue) const {
  const Winograd1dTransforms &transforms =
      TransformsFor(packed_[0].isa, r_, tile_t_);
  const int64_t in_c = geo_.in_c;
  const int64_t out_c = geo_.out_c;
  const int64_t tile_blocks = blocks_.blocks();
  const ConvTaskGrid grid =
      PlanConvTasks(pool, slots_, out_c, packed_[0].nr, tile_blocks);
  const int64_t max_rows = blocks_.max_rows();
  const int64_t slot_floats = SlotFloats();

  ForEachSlotRange(
      pool, grid.slots, tile_blocks * grid.col_blocks,
      [&](int slot, int64_t &transformed, int64_t begin, int64_t end) {
        float *v = scratch + slot * slot_floats;
        float *m = v + tile_t_ * WinogradElementStride(max_rows * in_c);
        float *zeros = m + tile_t_ * WinogradElementStride(max_rows * out_c);
        std::fill(zeros, zeros + in_c, 0.0f);
        for (int64_t task = begin; task < end; ++task) {
          const int64_t block = task / grid.col_blocks;
          const int64_t col0 = task % grid.col_blocks * grid.col_block;
          const int64_t col1 = std::min(col0 + grid.col_block, out_c);
          const int64_t tile0 = blocks_.Begin(block);
          const int64_t count = blocks_.Rows(block);
          const int64_t v_stride = WinogradElementStride(count * in_c);
          const int64_t m_stride = WinogradElementStride(count * out_c);
          if (transformed != block) {
            for (int64_t i = 0; i < count; ++i) {
              const TileSpan span =
                  Span(tile0 + i, input, zeros, output, out_stride);
              transforms.input(span.taps, in_c, v + i * in_c, v_stride);
            }
            transformed = block;
          }
          for (int j = 0; j < tile_t_; ++j) {
            SgemmColumns(count, col0, col1, in_c, v + j * v_stride, in_c,
                         packed_[j], nullptr, nullptr, nullptr,
                         m + j * m_stride, out_c, nullptr);
          }
          for (int64_t i = 0; i < count; ++i) {
            const TileSpan span =
                Span(tile0 + i, input, zeros, output, out_stride);
            transforms.output(m + i * out_c + col0, m_stride,
                              bias != nullptr ? bias + col0 : nullptr,
                              col1 - col0, span.outputs, span.out + col0,
                              span.out_step);
            // One pixel at a time: an r x 1 tile's pixels are a column,
            // further apart than the epilogue's rows may be.
            for (int64_t q = 0; epilogue != nullptr && q < span.outputs; ++q) {
              (*epilogue)(span.out + q * span.out_step + col0, 1, col1 - col0,
                          out_stride);
            }
          }
        }
      });
}

}  // namespace kernels
}  // namespace mace
