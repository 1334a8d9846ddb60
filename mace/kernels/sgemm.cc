// SGEMM driver: packing of B and the blocked loop over C that calls the
// micro-kernels of mace/kernels/sgemm_ukernel.h.
//
// Blocking: C is cut into blocks of kRowTiles * mr rows by kColPanels * nr
// columns (nr columns when that leaves fewer than 4 blocks per thread), one
// ParallelFor task each, so a batch-1 FullyConnected still splits over
// columns. Inside a block, each B panel (k x nr) is walked, a depth slice
// of at most 256 KiB at a time, down all the block's row tiles while it
// sits in L1/L2; A is read in place, never packed. A panel whose last
// vectors are padding goes to the family's narrowest kernels that cover its
// real columns; other column edges (n not a multiple of the width written)
// go through a stack tile of the block's rows, row edges through the
// kernels for fewer rows (a short last tile evened with the one before it,
// TileHeight), so nothing is read or written past the matrices.

#include <algorithm>
#include <cstring>

#include "mace/core/int_math.h"
#include "mace/kernels/sgemm_ukernel.h"

namespace mace {
namespace kernels {
namespace {

constexpr int64_t kRowTiles = 8;
constexpr int64_t kColPanels = 4;

// The kernels of `isa` where this binary has them, whether or not this CPU
// runs them (their shape is all the Winograd cost model's tests ask of an
// ISA the host lacks); else the generic ones.
const SgemmUkernels &BuiltUkernelsOrGeneric(SgemmIsa isa) {
  const SgemmUkernels *ukernels = SgemmUkernelsFor(isa);
  return ukernels != nullptr ? *ukernels : SgemmUkernels4x8Generic();
}

const SgemmUkernels &UkernelsOrGeneric(SgemmIsa isa) {
  return BuiltUkernelsOrGeneric(SgemmIsaAvailable(isa) ? isa
                                                       : SgemmIsa::kGeneric);
}

// Rows of the next micro-kernel call when `left` rows remain: mr, except
// that a short last tile shares the last two tiles' rows with the one
// before it (8 + 1 -> 5 + 4): a kernel call of one or two rows waits on
// its few accumulators' FMA latency and costs about half a full one, as
// the 49 rows of a 7x7 output have it.
int64_t TileHeight(int64_t left, int64_t mr) {
  if (left <= mr) return left;
  if (left >= 2 * mr || left - mr >= mr / 2) return mr;
  return (left + 1) / 2;
}

// Rows of the next block of rows when `left` rows remain: block_rows, or
// all that remain when that would leave fewer than mr after the block. A
// 7x7 layer's 49 pixels went as 48 + 1, the last a one-row call per panel
// (latency-bound: it costs about what 4 rows do on AVX2); now as one block
// whose last 7 rows go as 4 + 3 (TileHeight).
int64_t BlockHeight(int64_t left, int64_t block_rows, int64_t mr) {
  return left - block_rows < mr ? left : block_rows;
}

// How many BlockHeight blocks m rows make (the one block of m < block_rows
// included).
int64_t BlockCount(int64_t m, int64_t block_rows, int64_t mr) {
  return std::max<int64_t>(1, (m + block_rows - mr) / block_rows);
}

// A panel slice of at most this many bytes stays in L2 while the block's
// row tiles go down it. Without slicing, each row tile re-read the whole
// panel: 64-column AVX-512 panels of ResNet-50's deep layers (K = 2048 to
// 4608: 0.5-1.2 MiB a panel) left L2 between tiles, and the 3x3x512 im2col
// on 7x7 ran at 0.72 of the 32-column kernel's speed.
constexpr int64_t kPanelSliceBytes = 256 * 1024;

// One slice of the depth: A's runs (a piece of a plain matrix's one run,
// or whole runs of several) and the panel rows they multiply,
// [b_row0, b_row0 + k).
struct DepthSlice {
  SgemmARuns a;
  int64_t b_row0;
  int64_t k;
};

// Cuts A's depth into slices whose panel rows take at most
// kPanelSliceBytes (whole runs when A has several; at least one run), of
// even sizes; one slice (of no depth) when A has none. The slices of a
// one-run A point at their start of the run, which this object keeps.
class DepthSlices {
 public:
  DepthSlices(const SgemmARuns &a, int64_t nr) {
    const int64_t k = a.count * a.run_k;
    const int64_t most_k = std::max<int64_t>(
        1, kPanelSliceBytes / (nr * static_cast<int64_t>(sizeof(float))));
    if (a.count == 1) {
      count_ = std::clamp<int64_t>((k + most_k - 1) / most_k, 1, kMaxSlices);
      for (int64_t s = 0; s < count_; ++s) {
        const int64_t p0 = s * k / count_;
        const int64_t p1 = (s + 1) * k / count_;
        shifted_[s] = a.runs[0] != nullptr ? a.runs[0] + p0 : nullptr;
        slices_[s] = {SgemmARuns{&shifted_[s], 1, p1 - p0}, p0, p1 - p0};
      }
      return;
    }
    const int64_t runs_per_slice = std::max<int64_t>(1, most_k / a.run_k);
    const int64_t wanted = (a.count + runs_per_slice - 1) / runs_per_slice;
    count_ = std::clamp<int64_t>(wanted, 1, kMaxSlices);
    for (int64_t s = 0; s < count_; ++s) {
      const int64_t r0 = s * a.count / count_;
      const int64_t r1 = (s + 1) * a.count / count_;
      slices_[s] = {SgemmARuns{a.runs + r0, static_cast<int>(r1 - r0), a.run_k},
                    r0 * a.run_k, (r1 - r0) * a.run_k};
    }
  }
  DepthSlices(const DepthSlices &) = delete;
  DepthSlices &operator=(const DepthSlices &) = delete;

  int64_t count() const { return count_; }
  const DepthSlice &operator[](int64_t s) const { return slices_[s]; }

 private:
  // K = 65536 on 64-column panels; deeper matrices take longer slices.
  static constexpr int64_t kMaxSlices = 64;
  int64_t count_ = 0;
  // Only [0, count_) is written and read.
  const float *shifted_[kMaxSlices];
  DepthSlice slices_[kMaxSlices];
};

// Where the micro-kernel calls of one panel slice write: C itself, or the
// block's edge tile (a panel's columns past n), which holds its partial
// sums from slice to slice and goes to C after the last.
struct SliceTarget {
  float *c;
  int64_t ldc;
};

// Fetches `rows` rows of `floats` addend values, ldc apart, into L1: the
// next row tile's, while this tile's multiply-adds run. The micro-kernel
// reads a tile's addend after its depth loop, when a miss stalls it: a
// residual is read once, from memory, and ResNet-50's layer1 conv3 (K =
// 64, 3.2 MB of addend) ran at 0.82-0.86 of its time with this prefetch at
// 1 thread, 0.85-0.90 at 2 (compare_builds, 7-9 processes a run).
void PrefetchAddendRows(const float *first_row, int64_t ldc, int64_t rows,
                        int64_t floats) {
  constexpr int64_t kLineFloats = kCacheLineBytes / sizeof(float);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t f = 0; f < floats; f += kLineFloats) {
      __builtin_prefetch(first_row + r * ldc + f, 0, 3);
    }
  }
}

// Computes C's block [row0, row0 + rows) x [col0, col0 + cols) (col0 a
// multiple of nr) and hands it to the epilogue. Each panel goes in depth
// slices (DepthSlices), every slice down all the block's row tiles: the
// first adds the bias and the addend, later ones the partial sums in C,
// the last clamps. A comes in runs (SgemmARuns; one run of depth k for a
// plain GEMM), which each micro-kernel call sums in its registers.
void RunBlock(const SgemmUkernels &uk, int64_t n, int64_t k,
              const SgemmARuns &a, int64_t lda, const PackedMatrixB &b,
              const float *bias, const float *clamp, const float *addend,
              float *c, int64_t ldc, int64_t row0, int64_t rows, int64_t col0,
              int64_t cols, const SgemmEpilogue *epilogue) {
  const int64_t mr = uk.mr;
  const int64_t nr = uk.nr;
  // A block has at most kRowTiles + 1 tiles of rows (BlockHeight).
  float edge_c[(kRowTiles + 1) * kSgemmMaxMr * kSgemmMaxNr];
  float edge_bias[kSgemmMaxNr];
  const DepthSlices slices(a, nr);
  const float *const b_end = b.values + b.size();
  for (int64_t j = col0; j < col0 + cols; j += nr) {
    const float *panel = b.values + (j / nr) * k * nr;
    const int64_t jn = std::min(nr, n - j);
    // Columns the kernels compute and write: nr, or fewer through the
    // family's narrowest kernels that cover the panel's real columns.
    const SgemmUkernelFn *by_rows = uk.by_rows;
    int64_t width = nr;
    int64_t tile_rows = mr;
    for (const SgemmNarrowUkernels &narrow : uk.narrow) {
      if (narrow.width >= jn) {
        by_rows = narrow.by_rows;
        width = narrow.width;
        tile_rows = narrow.mr;
        break;
      }
    }
    const float *panel_bias = bias != nullptr ? bias + j : nullptr;
    if (bias != nullptr && jn < width) {
      std::memcpy(edge_bias, bias + j, jn * sizeof(float));
      std::fill(edge_bias + jn, edge_bias + nr, 0.0f);
      panel_bias = edge_bias;
    }
    const bool edge = jn != width;
    SliceTarget target{c + row0 * ldc + j, ldc};
    if (edge) {
      // The block's rows of the addend, if any, start the edge tile's sums.
      target = {edge_c, nr};
      std::fill(edge_c, edge_c + rows * nr, 0.0f);
      if (addend != nullptr) {
        for (int64_t r = 0; r < rows; ++r) {
          std::memcpy(edge_c + r * nr, addend + (row0 + r) * ldc + j,
                      jn * sizeof(float));
        }
      }
    }
    for (int64_t s = 0; s < slices.count(); ++s) {
      const DepthSlice &slice = slices[s];
      const bool first = s == 0;
      const bool last = s + 1 == slices.count();
      const float *b_slice = panel + slice.b_row0 * nr;
      // The weights after this slice (the next slice or panel), fetched
      // ahead by the first row tiles (one kernel call covers
      // prefetch_bytes of them): once B is out of L2, as a network's
      // weights are, each slice otherwise arrives at the latency of L3
      // while the FMAs wait.
      const float *next = b_slice + slice.k * nr;
      const int64_t next_bytes = std::min<int64_t>(b_end - next, slice.k * nr) *
                                 static_cast<int64_t>(sizeof(float));
      const int64_t prefetch_bytes = slice.k * kSgemmPrefetchStride;
      int64_t prefetched = 0;
      SgemmTileA tile_a{slice.a, 0, lda};
      for (int64_t i = row0; i < row0 + rows;) {
        const int64_t in = TileHeight(row0 + rows - i, tile_rows);
        const SgemmUkernelFn kernel = by_rows[in];
        const char *prefetch = nullptr;
        if (prefetched + prefetch_bytes <= next_bytes) {
          prefetch = reinterpret_cast<const char *>(next) + prefetched;
          prefetched += prefetch_bytes;
        }
        float *tile_c = target.c + (i - row0) * target.ldc;
        // The sums so far: in the target, but for C's first slice, whose
        // sums so far are the addend (the edge tile holds a copy of it).
        const float *tile_addend = tile_c;
        if (first && !edge) {
          tile_addend = addend != nullptr ? addend + i * ldc + j : nullptr;
        }
        const int64_t next_rows = std::min(tile_rows, row0 + rows - i - in);
        if (first && !edge && addend != nullptr && next_rows > 0) {
          PrefetchAddendRows(addend + (i + in) * ldc + j, ldc, next_rows,
                             width);
        }
        tile_a.offset = i * lda;
        kernel(tile_a, b_slice, first ? panel_bias : nullptr,
               last ? clamp : nullptr, tile_addend, tile_c, target.ldc,
               prefetch);
        i += in;
      }
    }
    if (edge) {
      for (int64_t r = 0; r < rows; ++r) {
        std::memcpy(c + (row0 + r) * ldc + j, edge_c + r * nr,
                    jn * sizeof(float));
      }
    }
  }
  if (epilogue != nullptr) (*epilogue)(c + row0 * ldc + col0, rows, cols, ldc);
}

void SgemmImpl(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
               const PackedMatrixB &b, const float *bias, const float *clamp,
               const float *addend, float *c, int64_t ldc, ThreadPool *pool,
               const SgemmEpilogue *epilogue) {
  if (m <= 0 || n <= 0) return;
  const SgemmUkernels &uk = UkernelsOrGeneric(b.isa);
  const int64_t block_rows = uk.mr * kRowTiles;
  const int64_t row_blocks = BlockCount(m, block_rows, uk.mr);
  int64_t block_cols = uk.nr * kColPanels;
  const int threads = pool != nullptr ? pool->num_threads() : 1;
  if (threads > 1 &&
      row_blocks * ((n + block_cols - 1) / block_cols) < 4 * threads) {
    block_cols = uk.nr;  // few rows (a small batch): split finer over columns
  }
  const int64_t col_blocks = (n + block_cols - 1) / block_cols;

  const SgemmARuns whole_a{&a, 1, k};
  auto run_blocks = [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t row0 = (t / col_blocks) * block_rows;
      const int64_t col0 = (t % col_blocks) * block_cols;
      RunBlock(uk, n, k, whole_a, lda, b, bias, clamp, addend, c, ldc, row0,
               BlockHeight(m - row0, block_rows, uk.mr), col0,
               std::min(block_cols, n - col0), epilogue);
    }
  };
  const int64_t tasks = row_blocks * col_blocks;
  if (threads > 1 && tasks > 1) {
    pool->ParallelFor(0, tasks, 1, run_blocks);
  } else {
    run_blocks(0, tasks);
  }
}

}  // namespace

void Sgemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
           const PackedMatrixB &b, const float *bias, float *c, int64_t ldc,
           ThreadPool *pool) {
  SgemmImpl(m, n, k, a, lda, b, bias, nullptr, nullptr, c, ldc, pool, nullptr);
}

void Sgemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
           const PackedMatrixB &b, const float *bias, float *c, int64_t ldc,
           ThreadPool *pool, SgemmEpilogue epilogue) {
  SgemmImpl(m, n, k, a, lda, b, bias, nullptr, nullptr, c, ldc, pool,
            &epilogue);
}

void SgemmClamped(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                  const PackedMatrixB &b, const float *bias, const float *clamp,
                  float *c, int64_t ldc, ThreadPool *pool) {
  SgemmImpl(m, n, k, a, lda, b, bias, clamp, nullptr, c, ldc, pool, nullptr);
}

int64_t SgemmRowsCost(int64_t m, SgemmIsa isa) {
  const int64_t mr = BuiltUkernelsOrGeneric(isa).mr;
  const int64_t block_rows = mr * kRowTiles;
  const int64_t latency_rows = std::max<int64_t>(1, 2 * mr / 3);
  int64_t cost = 0;
  for (int64_t row0 = 0, rows = 0; row0 < m; row0 += rows) {
    rows = BlockHeight(m - row0, block_rows, mr);
    for (int64_t i = row0; i < row0 + rows;) {
      const int64_t tile = TileHeight(row0 + rows - i, mr);
      cost += std::max(tile, latency_rows);
      i += tile;
    }
  }
  return cost;
}

int SgemmPanelWidth(SgemmIsa isa) { return BuiltUkernelsOrGeneric(isa).nr; }

int SgemmTileRows(SgemmIsa isa) { return BuiltUkernelsOrGeneric(isa).mr; }

void SgemmColumns(int64_t m, int64_t col_begin, int64_t col_end, int64_t k,
                  const float *a, int64_t lda, const PackedMatrixB &b,
                  const float *bias, const float *clamp, const float *addend,
                  float *c, int64_t ldc, const SgemmEpilogue *epilogue) {
  SgemmColumnsInRuns(m, col_begin, col_end, SgemmARuns{&a, 1, k}, lda, b, bias,
                     clamp, addend, c, ldc, epilogue);
}

void SgemmColumnsInRuns(int64_t m, int64_t col_begin, int64_t col_end,
                        const SgemmARuns &a, int64_t lda,
                        const PackedMatrixB &b, const float *bias,
                        const float *clamp, const float *addend, float *c,
                        int64_t ldc, const SgemmEpilogue *epilogue) {
  const SgemmUkernels &uk = UkernelsOrGeneric(b.isa);
  const int64_t block_rows = uk.mr * kRowTiles;
  const int64_t block_cols = uk.nr * kColPanels;
  for (int64_t row0 = 0, rows = 0; row0 < m; row0 += rows) {
    rows = BlockHeight(m - row0, block_rows, uk.mr);
    for (int64_t col0 = col_begin; col0 < col_end; col0 += block_cols) {
      RunBlock(uk, b.n, b.k, a, lda, b, bias, clamp, addend, c, ldc, row0, rows,
               col0, std::min(block_cols, col_end - col0), epilogue);
    }
  }
}

}  // namespace kernels
}  // namespace mace
