// Internal to mace/kernels: the micro-kernel interface shared by the
// per-ISA files, the driver (sgemm.cc) and the dispatch table.

#ifndef MACE_KERNELS_SGEMM_UKERNEL_H_
#define MACE_KERNELS_SGEMM_UKERNEL_H_

#include <cstdint>
#include <type_traits>
#include <utility>

#include "mace/kernels/sgemm.h"

namespace mace {
namespace kernels {

// A as one micro-kernel call reads it: the runs of A (SgemmARuns), from
// the tile's first row on. Row r's value p of run s is
// runs.runs[s][offset + r * lda + p] and multiplies the panel's row
// s * run_k + p; a null run (a convolution window's row in the padding)
// stands for zeros and is skipped. A plain matrix is one run.
struct SgemmTileA {
  SgemmARuns runs;
  int64_t offset;
  int64_t lda;
};

// Computes `rows` (1..mr) rows by nr columns of C:
//   c[r][j] = clamp(bias[j] + addend[r * ldc + j]
//                   + sum_p A[r][p] * b[p * nr + j])
// with A as `a` describes it, b one packed panel (k rows of nr floats),
// bias nr floats or null, addend laid out as C or null (a fused residual
// addition), and clamp null or {lo, hi}: min(max(v, lo), hi) in registers
// before the store (a NaN becomes lo, as the reference ReLU makes it 0).
// Every run is summed in registers: C is written once, whatever the
// count. Reads exactly `rows` rows of A (and of the addend) and writes
// exactly rows x nr values of C. `prefetch`, when not null, is the start
// of k cache lines (kSgemmPrefetchStride bytes apart) that a later call
// will read: the kernel asks for one of them per k step, into L2, so that
// the next panel's trip from L3 or memory overlaps this call's arithmetic
// instead of stalling the next one.
using SgemmUkernelFn = void (*)(const SgemmTileA &a, const float *b,
                                const float *bias, const float *clamp,
                                const float *addend, float *c, int64_t ldc,
                                const char *prefetch);

constexpr int64_t kSgemmPrefetchStride = 64;

// Hints that the cache line holding `line` be brought into L2; never faults.
inline __attribute__((always_inline)) void PrefetchToL2(const char *line) {
  __builtin_prefetch(line, 0, 2);
}

// The parity of a depth step, as a compile-time constant: kernels whose
// few accumulators would leave them waiting on the FMA latency
// (SgemmPairsSteps) keep a second set for the odd steps.
using EvenStep = std::integral_constant<int, 0>;
using OddStep = std::integral_constant<int, 1>;

// Independent accumulator chains that keep two FMA pipes of 4-cycle latency
// busy: a kernel with fewer waits on its own results, unless it alternates
// two accumulator sets (SgemmPairsSteps). Measured when the sets went by a
// tile's height: the half-width kernels 1.07-1.8x on AVX2, 1.1-1.7x for
// 1-3 rows on AVX-512, and 8 rows of 16 lanes, which had the chains
// already, 15% slower paired. AVX-512's 16-column kernel now pairs on its
// 12 rows too (a width pairs at every height or none): MobileNet-v2's
// 32 -> 16 projection on 112x112 took 0.257-0.302 ms against
// 0.256-0.273 before (`mace run --benchmark` minima, 3 alternations),
// within the noise.
constexpr int kSgemmFmaChains = 8;

// Whether a family's kernels of `vectors` accumulators a row, at most
// `rows` tall, alternate two accumulator sets, which sums a value's even
// and odd depth steps apart: at every height or none, so that a value of C
// is summed in the same order whatever rows share its tile, and a result
// never depends on how callers cut the rows (among threads: paired short
// tiles and unpaired tall ones of one width had MobileNet-v2's output
// differ by up to 2e-5 between 1 and 2 threads). A width pairs when the
// short tiles the driver makes of long blocks (rows / 2, TileHeight) would
// have too few chains and the paired tall tile, with the B row and A's
// broadcast, fits in the family's `registers`: AVX-512's 16 columns on 12
// rows and AVX2's 8 on 6; not AVX2's full 16 columns, whose 3-row tiles go
// unpaired (6 chains), nor any width for the 1-3 rows of tiny products.
constexpr bool SgemmPairsSteps(int rows, int vectors, int registers) {
  return (rows / 2) * vectors < kSgemmFmaChains &&
         2 * rows * vectors + vectors + 1 <= registers;
}

// Steps [0, k) as step(p, parity), asking for line p of the prefetch region
// with step p when kPrefetch. kPaired = false: one step per source
// iteration (parity always even), unrolled four times by the compiler;
// GCC 12 allocated the AVX2 kernel's 12 accumulators badly in a loop
// written with several steps per iteration (a spill and register copies
// every trip), which left the 6x16 kernel 8-10% slower (in-process A/B,
// blocks in L1/L2, K = 64-1024). kPaired = true: an even and an odd step
// per iteration, for the kernels that alternate two accumulator sets.
template <bool kPrefetch, bool kPaired, typename Step>
inline __attribute__((always_inline)) void DepthSteps(int64_t k,
                                                      const char *prefetch,
                                                      Step &step) {
  auto fetch_and_step = [&](int64_t p, auto parity)
      __attribute__((always_inline)) {
    if constexpr (kPrefetch) PrefetchToL2(prefetch + p * kSgemmPrefetchStride);
    step(p, parity);
  };
  if constexpr (kPaired) {
    int64_t p = 0;
#pragma GCC unroll 2
    for (; p + 2 <= k; p += 2) {
      fetch_and_step(p, EvenStep{});
      fetch_and_step(p + 1, OddStep{});
    }
    if (p < k) fetch_and_step(p, EvenStep{});
  } else {
#pragma GCC unroll 4
    for (int64_t p = 0; p < k; ++p) fetch_and_step(p, EvenStep{});
  }
}

// The micro-kernels' depth loop: step(p, parity) for p = 0 .. k - 1, with
// line p of the prefetch region (if any) asked for on the way. Several
// steps per trip, and the prefetch test outside the loop: with one step
// per trip the counter, the branch and that test took a quarter of the
// AVX-512 kernel's instructions, and unrolling made ResNet-50's and
// MobileNet-v1's pointwise layers with K = 512-1024 5-9% faster (op
// benchmarks, 1 thread).
template <bool kPaired, typename Step>
inline __attribute__((always_inline)) void ForEachDepthStep(
    int64_t k, const char *prefetch, Step &&step) {
  if (prefetch != nullptr) {
    DepthSteps<true, kPaired>(k, prefetch, step);
  } else {
    DepthSteps<false, kPaired>(k, prefetch, step);
  }
}

// The micro-kernels' loop over A's runs: step(a_run, b_run, p, parity) for
// every depth step p of every run that is not null (ForEachDepthStep), a_run
// pointing at the tile's first row in the run and b_run at the run's first
// row of the panel of kNr columns; line s * run_k + p of the prefetch
// region is asked for with step p of run s. kPaired: as DepthSteps.
template <int kNr, bool kPaired = false, typename Step>
inline __attribute__((always_inline)) void ForEachRunStep(const SgemmTileA &a,
                                                          const float *b,
                                                          const char *prefetch,
                                                          Step &&step) {
  if (a.runs.count == 1) {
    // A plain matrix, the common case, without the runs' loop around its
    // depth loop: a fixed cost per call that a 1x1 layer of depth 16
    // (MobileNet-v2's and EfficientNet's expansions) paid on every tile (of
    // 8 x 32 on AVX-512 then). 16 -> 96 channels on 112x112 (AVX-512, 1
    // thread, 8 interleaved pairs) went from 437-582 to 399-486 us; deeper
    // layers moved within the noise. Written apart from the loop below: the
    // same body shared through a lambda taking the run's index compiled to
    // other code, which ran 2.3-2.8x slower at that depth in two of four
    // interleaved runs.
    if (a.runs.runs[0] == nullptr) return;
    const float *a_run = a.runs.runs[0] + a.offset;
    auto run_step = [&](int64_t p, auto parity) __attribute__((always_inline)) {
      step(a_run, b, p, parity);
    };
    ForEachDepthStep<kPaired>(a.runs.run_k, prefetch, run_step);
    return;
  }
  for (int s = 0; s < a.runs.count; ++s) {
    if (a.runs.runs[s] == nullptr) continue;
    const float *a_run = a.runs.runs[s] + a.offset;
    const float *b_run = b + s * a.runs.run_k * kNr;
    const char *fetch = prefetch != nullptr
                            ? prefetch + s * a.runs.run_k * kSgemmPrefetchStride
                            : nullptr;
    auto run_step = [&](int64_t p, auto parity) __attribute__((always_inline)) {
      step(a_run, b_run, p, parity);
    };
    ForEachDepthStep<kPaired>(a.runs.run_k, fetch, run_step);
  }
}

constexpr int kSgemmMaxMr = 8;
constexpr int kSgemmMaxNr = 64;

// Narrow kernels per panel: as many as a panel has vectors but one.
constexpr int kSgemmMaxNarrow = 3;
// Rows of a narrow kernel call: fewer columns leave registers for more.
constexpr int kSgemmMaxNarrowMr = 12;

// Kernels that read a whole packed panel but compute and write only its
// first `width` columns, `mr` rows at most (by_rows[r] for r rows,
// by_rows[0] null), for a panel whose other columns are padding: a narrow
// B (a convolution with 16 output channels), or the last panel of 40
// columns in panels of 64, does not pay for its padding.
struct SgemmNarrowUkernels {
  int width;
  int mr;
  SgemmUkernelFn by_rows[kSgemmMaxNarrowMr + 1];
};

// One kernel family: by_rows[r] is the kernel for r rows (by_rows[0] null).
// narrow, narrowest first, holds the narrow kernels a family has (width 0
// past the last).
struct SgemmUkernels {
  const char *name;
  int mr;
  int nr;
  SgemmUkernelFn by_rows[kSgemmMaxMr + 1];
  SgemmNarrowUkernels narrow[kSgemmMaxNarrow];
};

// Defined by the per-ISA files that the build includes.
const SgemmUkernels &SgemmUkernels4x8Generic();
const SgemmUkernels &SgemmUkernels6x16Avx2();
const SgemmUkernels &SgemmUkernels6x64Avx512();
const SgemmUkernels &SgemmUkernels4x16Neon();

// The family of `isa`, or null when this binary does not have it.
const SgemmUkernels *SgemmUkernelsFor(SgemmIsa isa);

// Calls f(r) for r = 0 .. kRows - 1, r a compile-time constant
// (std::integral_constant). Kernels loop over their accumulator rows with
// it rather than with a for loop: indices known before optimisation let the
// compiler keep an accumulator array in registers (GCC 12 otherwise mirrors
// it to the stack on every k step, halving the AVX2 kernel's speed).
template <typename F, int... kRow>
inline __attribute__((always_inline)) void ForEachRowImpl(
    F &&f, std::integer_sequence<int, kRow...>) {
  (f(std::integral_constant<int, kRow>{}), ...);
}
template <int kRows, typename F>
inline __attribute__((always_inline)) void ForEachRow(F &&f) {
  ForEachRowImpl(f, std::make_integer_sequence<int, kRows>{});
}

}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_SGEMM_UKERNEL_H_
