// SGEMM driver: packing of B and the blocked loop over C that calls the
// micro-kernels of mace/kernels/sgemm_ukernel.h.
//
// Blocking: C is cut into blocks of kRowTiles * mr rows by kColPanels * nr
// columns (nr columns when that leaves fewer than 4 blocks per thread), one
// ParallelFor task each, so a batch-1 FullyConnected still splits over
// columns. Inside a block, each B panel (k x nr) is walked
// down all the block's row tiles while it sits in L1/L2; A is read in
// place, never packed. A panel with at most nr / 2 real columns goes to the
// family's half-width kernels where it has them; other column edges (n not
// a multiple of the width written) go through a stack tile, row edges
// through the kernels for fewer rows (a short last tile evened with the one
// before it, TileHeight), so nothing is read or written past the matrices.

#include <algorithm>
#include <cstring>

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

// Computes C's block [row0, row0 + rows) x [col0, col0 + cols) (col0 a
// multiple of nr) and hands it to the epilogue. The depth is not sliced:
// slicing it at 256 (partial sums added through a stack tile) measured no
// faster on ResNet-50's 3x3x512 im2col (K = 4608) and slower on K = 1024.
// A comes in runs (SgemmARuns; one run of depth k for a plain GEMM), which
// each micro-kernel call sums in its registers.
void RunBlock(const SgemmUkernels &uk, int64_t n, int64_t k,
              const SgemmARuns &a, int64_t lda, const PackedMatrixB &b,
              const float *bias, const float *clamp, const float *addend,
              float *c, int64_t ldc, int64_t row0, int64_t rows, int64_t col0,
              int64_t cols, const SgemmEpilogue *epilogue) {
  const int64_t mr = uk.mr;
  const int64_t nr = uk.nr;
  float edge_c[kSgemmMaxMr * kSgemmMaxNr];
  float edge_addend[kSgemmMaxMr * kSgemmMaxNr];
  float edge_bias[kSgemmMaxNr];
  const int64_t panel_bytes = k * nr * static_cast<int64_t>(sizeof(float));
  const int64_t prefetch_bytes = k * kSgemmPrefetchStride;
  SgemmTileA tile_a{a, 0, lda};
  for (int64_t j = col0; j < col0 + cols; j += nr) {
    const float *panel = b.values + (j / nr) * k * nr;
    // The panel after this one, fetched ahead by the first row tiles (one
    // kernel call covers prefetch_bytes of it): once B is out of L2, as a
    // network's weights are, each panel otherwise arrives at the latency
    // of L3 while the FMAs wait.
    const char *next_panel =
        j + nr < n ? reinterpret_cast<const char *>(panel + k * nr) : nullptr;
    int64_t prefetched = 0;
    const int64_t jn = std::min(nr, n - j);
    // Columns the kernel computes and writes: nr, or nr / 2 through the
    // family's half-width kernels when the rest of the panel is padding.
    const bool half = jn <= nr / 2 && uk.half_by_rows[1] != nullptr;
    const int64_t width = half ? nr / 2 : nr;
    const float *panel_bias = bias != nullptr ? bias + j : nullptr;
    if (bias != nullptr && jn < width) {
      std::memcpy(edge_bias, bias + j, jn * sizeof(float));
      std::fill(edge_bias + jn, edge_bias + nr, 0.0f);
      panel_bias = edge_bias;
    }
    for (int64_t i = row0; i < row0 + rows;) {
      const int64_t in = TileHeight(row0 + rows - i, mr);
      const SgemmUkernelFn kernel = half ? uk.half_by_rows[in] : uk.by_rows[in];
      const char *prefetch = nullptr;
      if (next_panel != nullptr && prefetched + prefetch_bytes <= panel_bytes) {
        prefetch = next_panel + prefetched;
        prefetched += prefetch_bytes;
      }
      const float *tile_addend =
          addend != nullptr ? addend + i * ldc + j : nullptr;
      float *tile_c = c + i * ldc + j;
      int64_t tile_ldc = ldc;
      if (jn != width) {
        if (tile_addend != nullptr) {
          for (int64_t r = 0; r < in; ++r) {
            std::memcpy(edge_addend + r * nr, tile_addend + r * ldc,
                        jn * sizeof(float));
          }
          tile_addend = edge_addend;
        }
        tile_c = edge_c;
        tile_ldc = nr;
      }
      tile_a.offset = i * lda;
      kernel(tile_a, panel, panel_bias, clamp, tile_addend, tile_c, tile_ldc,
             prefetch);
      if (jn != width) {
        for (int64_t r = 0; r < in; ++r) {
          std::memcpy(c + (i + r) * ldc + j, edge_c + r * nr,
                      jn * sizeof(float));
        }
      }
      i += in;
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
