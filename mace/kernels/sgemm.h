// Packed single-precision GEMM: C = A * B + bias, with B (the weights)
// packed once into column panels and A read in place (row-major, any lda).
//
// One binary carries every micro-kernel its target can run (generic, AVX2,
// AVX-512 on x86-64; NEON on aarch64); the ISA is picked once from the CPU
// features (mace/core/cpu_info.h) and recorded in each PackedMatrixB, so a
// matrix packed for one kernel is always multiplied by that kernel.

#ifndef MACE_KERNELS_SGEMM_H_
#define MACE_KERNELS_SGEMM_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "mace/core/aligned_buffer.h"
#include "mace/core/deferred_work.h"
#include "mace/core/function_ref.h"
#include "mace/core/packed_weight_source.h"
#include "mace/core/thread_pool.h"

namespace mace {
namespace kernels {

enum class SgemmIsa { kGeneric, kAvx2, kAvx512, kNeon };

// The version of every layout packed at load and kept in packed weight
// cache files (mace/core/packed_weight_cache.h): the panels below, the
// Winograd elements' order and filter transforms (2: 1 x r and r x 1
// convolutions may be packed as 1-D Winograd; 3: 5x5 ones as F(2,5); 4:
// 1-D Winograd on tiles of 6 points), DeconvGemm's tap-major columns, the
// depthwise filters re-laid with padded taps (5), AVX-512 panels of 64
// columns (6). Raise it with any change to one of them, so that files of
// the old layout are replaced instead of read.
constexpr int kPackedLayoutVersion = 6;

const char *SgemmIsaName(SgemmIsa isa);

// Whether this binary has the kernel and this CPU can run it.
bool SgemmIsaAvailable(SgemmIsa isa);

// Every ISA of SgemmIsaAvailable, generic first.
std::vector<SgemmIsa> AvailableSgemmIsas();

// The ISA PackB uses by default: the best available one, unless a test or a
// benchmark tool forced another with SetSgemmIsaForTesting.
SgemmIsa SelectedSgemmIsa();

// Forces the default ISA (ignored when not available; returns whether it
// was applied). Affects matrices packed afterwards only.
bool SetSgemmIsaForTesting(SgemmIsa isa);

// B laid out for one micro-kernel: ceil(n / nr) panels, panel p holding
// columns [p * nr, p * nr + nr) as k rows of nr contiguous floats (columns
// past n are zero), panels one after another. Whatever packs a panel
// writes all of it, pad columns included, so that laying out a matrix
// writes none of its fresh memory (a load maps that on all its threads
// first, packed_weight_source.h).
struct PackedMatrixB {
  int64_t k = 0;
  int64_t n = 0;
  int nr = 0;
  SgemmIsa isa = SgemmIsa::kGeneric;
  // The panels: in `storage`, or in a buffer shared by several matrices
  // (Winograd's, a grouped convolution's) that their owner keeps alive.
  float *values = nullptr;
  AlignedArray<float> storage;

  bool empty() const { return values == nullptr; }
  // Floats the panels take.
  int64_t size() const { return nr > 0 ? (n + nr - 1) / nr * k * nr : 0; }
  // Where element (row, col) of B lives in values.
  int64_t Offset(int64_t row, int64_t col) const {
    return ((col / nr) * k + row) * nr + col % nr;
  }
};

// Packs the k x n matrix B for `isa`. With b_is_n_by_k, `b` is stored as
// n rows of k (B transposed: FullyConnected's [Cout, K] weight); otherwise
// as k rows of n (a 1x1 convolution's [Cin, Cout]). Panels are shared
// among the threads of `pool` (may be null). Returns false, leaving
// `packed` empty, when the memory is not available.
bool PackB(const float *b, int64_t k, int64_t n, bool b_is_n_by_k, SgemmIsa isa,
           PackedMatrixB *packed, ThreadPool *pool = nullptr);
bool PackB(const float *b, int64_t k, int64_t n, bool b_is_n_by_k,
           PackedMatrixB *packed);

// Sizes `packed` for a k x n matrix in the layout of `isa`, in storage of
// its own, every element left for the caller to write: PackBInto, or, for
// callers that compute B while packing it (Winograd's filter transform),
// each element at packed->Offset(row, col) and the pad columns past n by
// ZeroPadColumns. False when out of memory.
bool AllocatePackedB(int64_t k, int64_t n, SgemmIsa isa, PackedMatrixB *packed);

// Zeroes the pad columns past n (in the last panel), for callers that
// write the other elements one by one.
void ZeroPadColumns(PackedMatrixB *packed);

// Floats a k x n matrix takes packed for `isa`.
int64_t PackedBSize(int64_t k, int64_t n, SgemmIsa isa);

// As AllocatePackedB, but lays `packed` over `values` (PackedBSize floats
// that the caller owns): matrices packed together share one allocation,
// which is large enough for huge pages (aligned_buffer.h).
void PlacePackedB(int64_t k, int64_t n, SgemmIsa isa, float *values,
                  PackedMatrixB *packed);

// Sizes `count` k x n matrices for `isa` (as PlacePackedB) in one
// allocation: from `source` when it is not null (an engine's packed
// weight cache or arena), else `storage`, which the caller keeps as long
// as the matrices. *ready says that the source handed back matrices
// packed by an earlier load: the caller must then leave them as they are
// (read-only); otherwise it fills them (PackBInto, say). False, with
// `packed` empty, when out of memory.
bool AcquirePackedBs(int64_t count, int64_t k, int64_t n, SgemmIsa isa,
                     PackedWeightSource *source, AlignedArray<float> *storage,
                     std::vector<PackedMatrixB> *packed, bool *ready);

// One matrix as AcquirePackedBs, in its own storage when `source` is null.
bool AcquirePackedB(int64_t k, int64_t n, SgemmIsa isa,
                    PackedWeightSource *source, PackedMatrixB *packed,
                    bool *ready);

// PackB through a `source` as AcquirePackedB: packs only when the source
// did not hand the matrix back already packed.
bool PackB(const float *b, int64_t k, int64_t n, bool b_is_n_by_k, SgemmIsa isa,
           PackedWeightSource *source, PackedMatrixB *packed, ThreadPool *pool);

// Lays `scaled` over `values` (PackedBSize floats of b's shape and ISA) as
// b with row r multiplied by row_scale[r % period]: A * diag(s) * B in one
// GEMM of A by the scaled copy, which is how a convolution takes a
// per-channel scale of its input (a squeeze-and-excitation gate) without a
// pass over A (period: the input channels, as the filter's k rows run over
// window taps of in_c channels each).
void ScalePackedBRows(const PackedMatrixB &b, const float *row_scale,
                      int64_t period, float *values, PackedMatrixB *scaled);

// Packs into a matrix already sized by AllocatePackedB or PlacePackedB.
void PackBInto(const float *b, bool b_is_n_by_k, PackedMatrixB *packed,
               ThreadPool *pool);

// PackBInto left to `work` as pieces of whole panels (about 256 KiB each),
// done when the work runs; `b` and `packed` must stay valid until then.
void DeferPackBInto(const float *b, bool b_is_n_by_k, PackedMatrixB *packed,
                    DeferredWork *work);

// Panels of `panel_floats` packed floats each in one deferred piece: about
// 256 KiB, at least one panel.
int64_t DeferredPiecePanels(int64_t panel_floats);

// Leaves fn(begin, end) over `panels` panels of `panel_floats` floats each
// to `work`, in pieces of DeferredPiecePanels; fn is copied into each.
template <typename PanelsFn>
void DeferPanelPieces(int64_t panels, int64_t panel_floats, DeferredWork *work,
                      const PanelsFn &fn) {
  const int64_t piece = DeferredPiecePanels(panel_floats);
  for (int64_t begin = 0; begin < panels; begin += piece) {
    const int64_t end = std::min(begin + piece, panels);
    work->Add([fn, begin, end] { fn(begin, end); });
  }
}

// fn(begin, end) over `panels` panels of `panel_floats` floats each: left
// to `work` (DeferPanelPieces) when it is not null, else run now, one panel
// a task among the threads of `pool` (may be null: on the caller).
template <typename PanelsFn>
void RunOrDeferPanels(int64_t panels, int64_t panel_floats, ThreadPool *pool,
                      DeferredWork *work, const PanelsFn &fn) {
  if (work != nullptr) {
    DeferPanelPieces(panels, panel_floats, work, fn);
  } else {
    ParallelForOrInline(pool, 0, panels, 1, fn);
  }
}

// Called on each finished block of C (rows x cols values, rows ldc apart)
// by the thread that computed it, while it is still in cache: the place for
// a fused activation.
using SgemmEpilogue =
    FunctionRef<void(float *c, int64_t rows, int64_t cols, int64_t ldc)>;

// C[m x n] (row stride ldc) = A[m x k] (row stride lda) * B + bias, bias
// one value per column of C or null. Splits C into blocks of rows and
// columns shared among the pool's threads (pool may be null: one thread).
// Allocates nothing.
void Sgemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
           const PackedMatrixB &b, const float *bias, float *c, int64_t ldc,
           ThreadPool *pool);
void Sgemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
           const PackedMatrixB &b, const float *bias, float *c, int64_t ldc,
           ThreadPool *pool, SgemmEpilogue epilogue);

// As Sgemm, with C clamped to [clamp[0], clamp[1]] in the micro-kernels'
// registers before it is stored (clamp null: not clamped): a fused ReLU
// (0, +inf) or ReLU6 (0, 6) without a pass over C. A NaN becomes clamp[0],
// as the reference ReLU makes it 0.
void SgemmClamped(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                  const PackedMatrixB &b, const float *bias, const float *clamp,
                  float *c, int64_t ldc, ThreadPool *pool);

// Columns per packed panel (nr) and rows per micro-kernel call (mr) of the
// kernel family of `isa` (generic's when this binary lacks it; given even
// where this CPU cannot run it): callers that split C themselves cut it at
// multiples of these.
int SgemmPanelWidth(SgemmIsa isa);
int SgemmTileRows(SgemmIsa isa);

// What one panel's pass over m rows of C costs the kernels of `isa`, in
// rows of multiply-adds: the rows as Sgemm cuts them into micro-kernel
// calls, a call of few rows charged as the rows whose accumulators it
// takes to hide the FMA latency (about 2 mr / 3: a 1-row call on AVX2 ran
// at a quarter of a 6-row call's rate; since the short kernels alternate
// two accumulator sets, at about 0.4, which this charge does not follow
// yet). For callers choosing between ways to cut the same pixels.
int64_t SgemmRowsCost(int64_t m, SgemmIsa isa);

// As Sgemm on the calling thread only, for columns [col_begin, col_end) of
// B and C (col_begin a multiple of b.nr, col_end <= b.n): the building
// block of callers that share work among threads themselves (convolution
// tiles). c, bias and addend point at column 0; clamp (as SgemmClamped),
// addend and epilogue may be null. An addend, laid out as C (ldc), is added
// in the micro-kernels' registers before the clamp: a fused residual
// addition.
void SgemmColumns(int64_t m, int64_t col_begin, int64_t col_end, int64_t k,
                  const float *a, int64_t lda, const PackedMatrixB &b,
                  const float *bias, const float *clamp, const float *addend,
                  float *c, int64_t ldc, const SgemmEpilogue *epilogue);

// A whose depth comes in `count` runs of run_k values (count * run_k = B's
// k): row r's value p of run s is runs[s][r * lda + p] and multiplies B's
// row s * run_k + p. A null run stands for zeros (a convolution window's
// row in the padding) and is skipped. This is an im2col read in place: a
// window row of a convolution with unit dilation along the width is one
// run of the input, and the window rows of neighbouring output pixels are
// lda = stride_w * in_c apart.
struct SgemmARuns {
  const float *const *runs;
  int count;
  int64_t run_k;
};

// As SgemmColumns with A in runs.
void SgemmColumnsInRuns(int64_t m, int64_t col_begin, int64_t col_end,
                        const SgemmARuns &a, int64_t lda,
                        const PackedMatrixB &b, const float *bias,
                        const float *clamp, const float *addend, float *c,
                        int64_t ldc, const SgemmEpilogue *epilogue);

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_SGEMM_H_
