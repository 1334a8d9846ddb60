#include "mace/kernels/winograd.h"

#include <algorithm>

#include "mace/kernels/conv_tasks.h"
#include "mace/kernels/winograd_transform.h"

namespace mace {
namespace kernels {
namespace {

// A block of tiles takes about this much scratch (transformed input and
// products), so it stays in L2 while the GEMMs walk it; at least one
// micro-kernel's rows of tiles, at most kMaxBlockTiles. 1 MiB ran 10-50%
// faster than 512 KiB on ResNet-50's 3x3 layers (AVX-512, 2 MiB L2).
constexpr int64_t kBlockBytes = 1024 * 1024;
constexpr int64_t kMaxBlockTiles = 128;

// Cost model, in multiply-adds of the packed SGEMM, first fitted to the
// ten 3x3 stride-1 shapes of benchmarks/ops/conv_benchmark.cc (ResNet-50
// stages 64-512 channels, SqueezeNet's expand layers, Inception v3's 32
// and 80->192 channel layers; one thread):
//  - a GEMM costs its multiply-adds times (1 + StreamCost / reuse), reuse
//    being the rows that share one pass over the packed filter (tiles per
//    block for Winograd, pixels per tile for im2col): large filters (F(6,3)
//    on 512 channels is 64 MiB) are streamed from L3 once per block;
//  - a transform costs kWinogradTransformCost per value per tile side;
//  - and, since 2026-12-02, one more pass over the filter
//    (ColdFilterCost), as a layer of a model finds it.
// Without the last term, on AVX-512 (an Intel Xeon and an AMD EPYC Zen 4
// host, 2026-11-26) it picked the fastest of im2col, F(2,3), F(4,3), F(6,3)
// on all ten benchmarked shapes on the Intel host, and of im2col, F(2,3),
// F(4,3) on nine on the AMD one (on 256@14x14 F(4,3) is 7% faster there,
// F(2,3) 9% faster on the Intel host). On AVX2 (an AMD EPYC Zen 3 host,
// 2026-11-27) it picked the fastest of im2col, F(2,3), F(4,3) on all ten,
// and of the four on eight (F(6,3) 1.5% and 14% faster on 128@28x28 and
// 80->192@73x73; on 32@149x149 it takes F(6,3), 3% slower than F(4,3)).
// The transform cost, kWinogradTransformCost (winograd.h), serves the 1-D
// kernels' model too (winograd_1d.cc): on the AVX2 host it picked the
// faster of im2col and 1-D Winograd on all 19 shapes measured (one
// thread), im2col on the 5 with few channels.

// The filter stream's cost in multiply-adds grows with the multiply-adds
// a cycle: AVX-512 does twice AVX2's, and AVX-512's 8 on AVX2 picked
// F(2,3) on 512@7x7 where F(4,3) is 18% faster in the op benchmark (and
// stream costs 1 to 6 the same as 4), before ColdFilterCost. Until
// measured, NEON and the generic kernels (fewer multiply-adds a cycle
// still) take AVX2's.
double StreamCost(SgemmIsa isa) { return isa == SgemmIsa::kAvx512 ? 8.0 : 4.0; }

const WinogradTransforms &TransformsFor(SgemmIsa isa, int kernel,
                                        int tile_m) {
  switch (isa) {
#if defined(__x86_64__)
    case SgemmIsa::kAvx2:
      return WinogradTransformsAvx2(kernel, tile_m);
    case SgemmIsa::kAvx512:
      return WinogradTransformsAvx512(kernel, tile_m);
#endif
#if defined(__aarch64__)
    case SgemmIsa::kNeon:
      return WinogradTransformsNeon(kernel, tile_m);
#endif
    default:
      return WinogradTransformsGeneric(kernel, tile_m);
  }
}

// Input points per tile side: m + r - 1.
int TileSide(const ConvGeometry &g, int tile_m) {
  return tile_m + static_cast<int>(g.kernel_h) - 1;
}

// Writes the transformed filter U = G g G^T of output channels
// [oc_begin, oc_end) (whole panels of the packed matrices) into packed[xi]
// (xi = r * t + c), which holds U[r][c] as an in_c x out_c matrix, in
// blocks of 16 x 16 channels: each panel's rows are filled in order.
// `taps`: the window's kernel_h * kernel_w.
void TransformFilter(const WinogradTransforms &transforms, const float *filter,
                     int64_t in_c, int64_t taps, int64_t oc_begin,
                     int64_t oc_end, std::vector<PackedMatrixB> *packed) {
  const int64_t nr = (*packed)[0].nr;
  const int64_t oc_lanes = std::min<int64_t>(kWinogradLanes, nr);
  const size_t elements = packed->size();
  std::vector<float *> rows(elements);
  for (int64_t panel0 = oc_begin; panel0 < oc_end; panel0 += nr) {
    const int64_t panel_end = std::min(panel0 + nr, oc_end);
    for (int64_t ic0 = 0; ic0 < in_c; ic0 += kWinogradLanes) {
      const int ic_count =
          static_cast<int>(std::min<int64_t>(kWinogradLanes, in_c - ic0));
      for (int64_t oc0 = panel0; oc0 < panel_end; oc0 += oc_lanes) {
        for (size_t xi = 0; xi < elements; ++xi) {
          PackedMatrixB &u = (*packed)[xi];
          rows[xi] = u.values + u.Offset(ic0, oc0);
        }
        transforms.filter(filter + oc0 * taps * in_c + ic0, in_c,
                          static_cast<int>(std::min(oc_lanes, panel_end - oc0)),
                          ic_count, rows.data(), nr);
      }
    }
  }
}

// Tiles per block of F(tile_m, r).
int64_t BlockTiles(const ConvGeometry &g, int tile_m, int64_t mr,
                   int64_t tiles) {
  const int64_t t = TileSide(g, tile_m);
  return WinogradBlockTiles(t * t, g, mr, tiles);
}

int64_t TileCount(const ConvGeometry &g, int tile_m) {
  return g.batch * ((g.out_h + tile_m - 1) / tile_m) *
         ((g.out_w + tile_m - 1) / tile_m);
}

// What the cost model knows of the SGEMM it runs on.
struct GemmShape {
  int64_t mr;     // micro-kernel rows
  double stream;  // StreamCost
};

double GemmCost(const GemmShape &gemm, double macs, int64_t reuse) {
  return macs * (1.0 + gemm.stream / static_cast<double>(reuse));
}

// A benchmark that runs one convolution over and over finds its filter in
// L2 at each iteration; in a model every other layer's weights and
// activations have gone through the caches since, and the filter comes
// from memory once more at every Run. The larger Winograd filters (F(4,3)
// holds 36 / 9 of the filter's floats, F(2,3) 16 / 9) pay for it, most
// where few tiles share it. Per-op times in the zoo models (`mace run
// --benchmark`, 7-9 interleaved processes, medians; Intel Xeon,
// 2026-12-02), the layers whose choice this term changed, new / old time:
//  - AVX-512: SqueezeNet's 13x13 48->192 and 64->256, F(4,3) -> F(2,3),
//    0.83 and 0.82 at 1 thread, 0.66 and 0.64 at 2; DenseNet-121's 14x14
//    128->32, F(4,3) -> F(2,3), 0.71 (0.64 at 2 threads), and 7x7 128->32,
//    F(2,3) -> im2col, 0.75 (0.71);
//  - AVX2 (this host's AVX2 kernels, AVX-512 disabled; 1 thread):
//    ResNet-18's 14x14 256->256 and 7x7 512->512, F(4,3) -> F(2,3), 0.78
//    and 0.69 (the whole model 0.86; ResNet-50 has the same layers); the
//    same change on UNet's 8x8 64->128 and 128->128, 0.70 and 0.69, on
//    Inception-v3's 8x8 448->384, 0.75, and on DenseNet-121's 7x7 128->32,
//    0.72.
// On a lent 16-core Xeon (2 MiB of L2 a core) the same AVX-512 layers ran
// in 0.45-0.91 of their time at 2-16 threads (docs/performance.md, stop
// 40); SqueezeNet's no faster at 1 thread there.
// No other 3x3 layer of the zoo changed. Half or twice this cost picks the
// same on AVX-512; four times moves ResNet's 7x7 512->512 to im2col (1.10x
// slower in ResNet-18) and UNet's 16x16 and 8x8 layers (the model 1.04x).
double ColdFilterCost(const GemmShape &gemm, double filter_floats) {
  return gemm.stream * filter_floats;
}

double WinogradCost(const ConvGeometry &g, int tile_m, const GemmShape &gemm) {
  const double t = TileSide(g, tile_m);
  const int64_t tiles = TileCount(g, tile_m);
  // The filter is streamed once per block: the reuse is the tiles a block
  // has on average (16 tiles in blocks of at most 12 go as 12 + 4, two
  // passes over the filter, as blocks of 8 would).
  const int64_t block = BlockTiles(g, tile_m, gemm.mr, tiles);
  const int64_t passes = (tiles + block - 1) / block;
  const double products = GemmCost(gemm, tiles * t * t * g.in_c * g.out_c,
                                   std::max<int64_t>(1, tiles / passes));
  return products + ColdFilterCost(gemm, t * t * g.in_c * g.out_c) +
         tiles * t * t * (g.in_c + g.out_c) * t * kWinogradTransformCost;
}

double Im2colCost(const ConvGeometry &g, const GemmShape &gemm) {
  const int64_t pixels = g.batch * g.out_h * g.out_w;
  const int64_t k = g.kernel_h * g.kernel_w * g.in_c / g.groups;
  const int64_t reuse = std::min(Im2colTileRows(k, gemm.mr), pixels);
  return GemmCost(gemm, static_cast<double>(pixels) * k * g.out_c, reuse) +
         ColdFilterCost(gemm, static_cast<double>(k) * g.out_c);
}

}  // namespace

// Floats between two transform elements' matrices of a block (its tiles
// by its channels), rounded up to an odd count of cache lines. A tile's
// input transform writes, and its output transform reads, the same row of
// all 36 or 64 elements together: at a stride of an even count of lines
// they share fewer of the L1 cache's 64 sets (one at a multiple of 4 KiB),
// whose 8 ways then miss in turn. Unpadded, in-process A/B, one thread:
// SqueezeNet's 3x3 layers on 13x13 (products 12 KiB and 16 KiB apart) ran
// F(4,3) in 1.13x the time, its 16->64 on 55x55 in 1.11x, ResNet-50's 256
// channels on 14x14 (blocks of 12 and 4 tiles) in 1.05x.
int64_t WinogradBlockTiles(int64_t elements, const ConvGeometry &g, int64_t mr,
                           int64_t tiles) {
  const int64_t tile_bytes =
      elements * (g.in_c + g.out_c) * static_cast<int64_t>(sizeof(float));
  const int64_t block =
      std::clamp(kBlockBytes / tile_bytes, mr, kMaxBlockTiles);
  // All the tiles in one block when they fit, whatever mr: a 7x7 layer's
  // 16 F(2,3) tiles in blocks of 12 and 4 (6-row tiles) streamed its 16 MiB
  // of filter twice, and ran at 0.68 of one block's speed.
  if (tiles <= block) return tiles;
  return std::max(mr, block / mr * mr);
}

int64_t WinogradElementStride(int64_t floats) {
  constexpr int64_t kLineFloats = 64 / sizeof(float);
  const int64_t lines = (floats + kLineFloats - 1) / kLineFloats;
  return (lines | 1) * kLineFloats;
}

bool WinogradApplies(const ConvGeometry &g) {
  return (g.kernel_h == 3 || g.kernel_h == 5) && g.kernel_w == g.kernel_h &&
         g.stride_h == 1 && g.stride_w == 1 && g.dilation_h == 1 &&
         g.dilation_w == 1 && g.groups == 1;
}

int WinogradTileFor(const ConvGeometry &g, int requested) {
  const int largest = g.kernel_h == 5 ? 4 : 6;
  return requested <= 2 ? 2 : requested <= 4 ? 4 : largest;
}

int CheapestWinogradTile(const ConvGeometry &g, SgemmIsa isa,
                         std::initializer_list<int> tiles) {
  if (!WinogradApplies(g)) return 0;
  const GemmShape gemm{SgemmTileRows(isa), StreamCost(isa)};
  int best = 0;
  double best_cost = Im2colCost(g, gemm);
  for (int requested : tiles) {
    const int tile_m = WinogradTileFor(g, requested);
    const double cost = WinogradCost(g, tile_m, gemm);
    if (cost < best_cost) {
      best = tile_m;
      best_cost = cost;
    }
  }
  return best;
}

int ChooseWinogradTile(const ConvGeometry &g, SgemmIsa isa) {
  if (g.kernel_h == 5) return CheapestWinogradTile(g, isa, {2});
  return CheapestWinogradTile(g, isa, {2, 4});
}

bool WinogradConv::Init(const ConvGeometry &geometry, int tile_m,
                        const float *filter, SgemmIsa isa, int threads,
                        ThreadPool *pool, PackedWeightSource *source,
                        DeferredWork *defer) {
  geo_ = geometry;
  tile_m_ = WinogradTileFor(geo_, tile_m);
  tile_t_ = TileSide(geo_, tile_m_);
  tiles_h_ = (geo_.out_h + tile_m_ - 1) / tile_m_;
  tiles_w_ = (geo_.out_w + tile_m_ - 1) / tile_m_;
  const int elements = tile_t_ * tile_t_;
  bool ready = false;
  if (!AcquirePackedBs(elements, geo_.in_c, geo_.out_c, isa, source, &storage_,
                       &packed_, &ready)) {
    return false;
  }
  transforms_ = &TransformsFor(packed_[0].isa, static_cast<int>(geo_.kernel_h),
                               tile_m_);
  // Whole panels per thread: neighbouring output channels share cache
  // lines of the packed rows. A source's ready matrices were transformed
  // by an earlier load.
  const int64_t nr = packed_[0].nr;
  if (!ready) {
    RunOrDeferPanels((geo_.out_c + nr - 1) / nr,
                     int64_t{elements} * geo_.in_c * nr, pool, defer,
                     [this, filter](int64_t begin, int64_t end) {
                       TransformPanels(filter, begin, end);
                     });
  }
  const int64_t mr = SgemmTileRows(packed_[0].isa);
  slots_ = std::max(1, threads);
  // Each tile block multiplies the tile_t^2 matrices one after another.
  blocks_ = ThreadRowBlocks(
      TileCount(), BlockTiles(geo_, tile_m_, mr, TileCount()), mr, slots_,
      packed_[0].size() * static_cast<int64_t>(sizeof(float)));
  return true;
}

int64_t WinogradConv::TileCount() const {
  return kernels::TileCount(geo_, tile_m_);
}

void WinogradConv::TransformPanels(const float *filter, int64_t begin,
                                   int64_t end) {
  const int64_t nr = packed_[0].nr;
  TransformFilter(*transforms_, filter, geo_.in_c,
                  geo_.kernel_h * geo_.kernel_w, begin * nr,
                  std::min(end * nr, geo_.out_c), &packed_);
  if (end * nr >= geo_.out_c) {
    for (PackedMatrixB &u : packed_) ZeroPadColumns(&u);
  }
}

int64_t WinogradConv::ScratchBytes() const {
  return static_cast<int64_t>(slots_) * SlotFloats() *
         static_cast<int64_t>(sizeof(float));
}

int64_t WinogradConv::SlotFloats() const {
  return tile_t_ * tile_t_ *
         (WinogradElementStride(blocks_.max_rows() * geo_.in_c) +
          WinogradElementStride(blocks_.max_rows() * geo_.out_c));
}

void WinogradConv::Run(const float *input, const float *bias, float *output,
                       int64_t out_stride, float *scratch, ThreadPool *pool,
                       const SgemmEpilogue *epilogue) const {
  const int64_t elements = tile_t_ * tile_t_;
  const int64_t tile_blocks = blocks_.blocks();
  const ConvTaskGrid grid =
      PlanConvTasks(pool, slots_, geo_.out_c, packed_[0].nr, tile_blocks);
  const int64_t col_block = grid.col_block;
  const int64_t col_blocks = grid.col_blocks;
  const int64_t slot_floats = SlotFloats();

  // `transformed`: the tile block whose input the slot's v holds (kept
  // across chunks: SqueezeNet's 13x13 layers have one block of 49 tiles
  // and 6-8 column tasks, one chunk each).
  ForEachSlotRange(
      pool, grid.slots, tile_blocks * col_blocks,
      [&](int slot, int64_t &transformed, int64_t begin, int64_t end) {
        float *v = scratch + slot * slot_floats;
        float *m = v + elements * WinogradElementStride(blocks_.max_rows() *
                                                        geo_.in_c);
        for (int64_t task = begin; task < end; ++task) {
          const int64_t block = task / col_blocks;
          const int64_t col0 = task % col_blocks * col_block;
          const int64_t col1 = std::min(col0 + col_block, geo_.out_c);
          WinogradTileRun run;
          run.in_h = geo_.in_h;
          run.in_w = geo_.in_w;
          run.in_c = geo_.in_c;
          run.out_h = geo_.out_h;
          run.out_w = geo_.out_w;
          run.out_c = geo_.out_c;
          run.out_stride = out_stride;
          run.tiles_h = tiles_h_;
          run.tiles_w = tiles_w_;
          run.pad_top = geo_.pad_top;
          run.pad_left = geo_.pad_left;
          run.tile_begin = blocks_.Begin(block);
          run.tile_count = blocks_.Rows(block);
          run.v_stride = WinogradElementStride(run.tile_count * geo_.in_c);
          run.m_stride = WinogradElementStride(run.tile_count * geo_.out_c);
          if (transformed != block) {
            transforms_->input(run, input, v);
            transformed = block;
          }
          for (int64_t xi = 0; xi < elements; ++xi) {
            SgemmColumns(run.tile_count, col0, col1, geo_.in_c,
                         v + xi * run.v_stride, geo_.in_c, packed_[xi], nullptr,
                         nullptr, nullptr, m + xi * run.m_stride, geo_.out_c,
                         nullptr);
          }
          transforms_->output(run, m, bias, col0, col1, output);
          if (epilogue == nullptr) continue;
          const int64_t tiles_per_image = tiles_h_ * tiles_w_;
          for (int64_t tile = run.tile_begin;
               tile < run.tile_begin + run.tile_count; ++tile) {
            const int64_t n = tile / tiles_per_image;
            const int64_t oh0 = tile % tiles_per_image / tiles_w_ * tile_m_;
            const int64_t ow0 = tile % tiles_w_ * tile_m_;
            const int64_t rows = std::min<int64_t>(tile_m_, geo_.out_h - oh0);
            const int64_t cols = std::min<int64_t>(tile_m_, geo_.out_w - ow0);
            for (int64_t r = 0; r < rows; ++r) {
              float *pixel =
                  output +
                  ((n * geo_.out_h + oh0 + r) * geo_.out_w + ow0) * out_stride;
              (*epilogue)(pixel + col0, cols, col1 - col0, out_stride);
            }
          }
        }
      });
}

}  // namespace kernels
}  // namespace mace
