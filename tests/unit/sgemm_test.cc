// Every SGEMM micro-kernel family this machine can run, against a float64
// GEMM: all M, N, K combinations of edge-prone sizes, with and without bias,
// on 1 and 2 threads, B given both ways, plus strided A / C and the
// epilogue's coverage of C; then the two ops that use it (1x1 Conv2D and
// FullyConnected with constant weights) through the engine under every ISA.

#include "mace/kernels/sgemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mace/core/cpu_info.h"
#include "tests/common/kernel_test_util.h"
#include "tests/common/op_tester.h"

namespace mace {
namespace kernels {
namespace {

using test::RandomVector;
using test::StartPool;

const int64_t kSizes[] = {1, 2, 5, 7, 15, 16, 17, 31, 33, 64, 100};

// B as k rows of n, and its transpose (n rows of k).
struct Problem {
  int64_t m, n, k;
  std::vector<float> a, b_kn, b_nk, bias;
  std::vector<double> product;    // A * B in float64
  std::vector<double> magnitude;  // |A| * |B|, for the error bound
};

// `p` with b_nk, product and magnitude made from its a and b_kn.
Problem MakeProblemFrom(Problem p) {
  const int64_t m = p.m, n = p.n, k = p.k;
  p.b_nk.resize(n * k);
  for (int64_t kk = 0; kk < k; ++kk) {
    for (int64_t j = 0; j < n; ++j) p.b_nk[j * k + kk] = p.b_kn[kk * n + j];
  }
  p.product.assign(m * n, 0.0);
  p.magnitude.assign(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t kk = 0; kk < k; ++kk) {
      const double a = p.a[i * k + kk];
      for (int64_t j = 0; j < n; ++j) {
        p.product[i * n + j] += a * p.b_kn[kk * n + j];
        p.magnitude[i * n + j] += std::fabs(a * p.b_kn[kk * n + j]);
      }
    }
  }
  return p;
}

Problem MakeProblem(int64_t m, int64_t n, int64_t k, std::mt19937 *rng) {
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = RandomVector(m * k, rng);
  p.b_kn = RandomVector(k * n, rng);
  p.bias = RandomVector(n, rng);
  return MakeProblemFrom(std::move(p));
}

// Checks c (m x n, row stride ldc) against the float64 product (+ bias).
void ExpectMatches(const Problem &p, const float *c, int64_t ldc,
                   bool with_bias, const std::string &what) {
  int failures = 0;
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      const double bias = with_bias ? p.bias[j] : 0.0;
      const double want = p.product[i * p.n + j] + bias;
      const double tol =
          1e-5 * (p.magnitude[i * p.n + j] + std::fabs(bias)) + 1e-30;
      const double got = c[i * ldc + j];
      if (!(std::fabs(got - want) <= tol) && ++failures <= 3) {
        ADD_FAILURE() << what << " at (" << i << ", " << j << "): got " << got
                      << ", want " << want;
      }
    }
  }
}

TEST(SgemmTest, AvailableIsasFollowCpuFeatures) {
  const CpuFeatures &f = GetCpuFeatures();
  const std::vector<SgemmIsa> isas = AvailableSgemmIsas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.front(), SgemmIsa::kGeneric);
#if defined(__x86_64__)
  EXPECT_EQ(SgemmIsaAvailable(SgemmIsa::kAvx2), f.avx2 && f.fma);
  EXPECT_EQ(SgemmIsaAvailable(SgemmIsa::kAvx512), f.avx512f && f.fma);
  if (f.avx512f && f.fma) {
    EXPECT_EQ(SelectedSgemmIsa(), SgemmIsa::kAvx512);
  }
#elif defined(__aarch64__)
  // NEON is part of every aarch64 core: the build under qemu must pick it.
  EXPECT_TRUE(SgemmIsaAvailable(SgemmIsa::kNeon));
  EXPECT_EQ(SelectedSgemmIsa(), SgemmIsa::kNeon);
#endif
  (void)f;
}

TEST(SgemmTest, EveryIsaMatchesFloat64OnEdgeSizes) {
  std::mt19937 rng(20261121);
  auto pool1 = StartPool(1);
  auto pool2 = StartPool(2);
  const std::vector<SgemmIsa> isas = AvailableSgemmIsas();
  std::vector<float> c;
  for (int64_t m : kSizes) {
    for (int64_t n : kSizes) {
      for (int64_t k : kSizes) {
        const Problem p = MakeProblem(m, n, k, &rng);
        c.resize(m * n);
        for (SgemmIsa isa : isas) {
          for (bool n_by_k : {false, true}) {
            PackedMatrixB packed;
            PackB(n_by_k ? p.b_nk.data() : p.b_kn.data(), k, n, n_by_k, isa,
                  &packed);
            ASSERT_EQ(packed.isa, isa);
            for (bool with_bias : {false, true}) {
              for (ThreadPool *pool : {pool1.get(), pool2.get()}) {
                std::fill(c.begin(), c.end(), NAN);
                Sgemm(m, n, k, p.a.data(), k, packed,
                      with_bias ? p.bias.data() : nullptr, c.data(), n, pool);
                ExpectMatches(
                    p, c.data(), n, with_bias,
                    std::string(SgemmIsaName(isa)) + " m=" + std::to_string(m) +
                        " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                        (n_by_k ? " nk" : " kn") + (with_bias ? " bias" : "") +
                        " threads=" + std::to_string(pool->num_threads()));
              }
            }
          }
        }
        if (HasFailure()) return;
      }
    }
  }
}

TEST(SgemmTest, StridedOperandsLeaveOtherValuesAlone) {
  std::mt19937 rng(7);
  auto pool = StartPool(2);
  const int64_t m = 37, n = 45, k = 29, lda = k + 3, ldc = n + 5;
  const Problem p = MakeProblem(m, n, k, &rng);
  std::vector<float> a(m * lda, NAN);
  for (int64_t i = 0; i < m; ++i) {
    std::copy(p.a.begin() + i * k, p.a.begin() + (i + 1) * k,
              a.begin() + i * lda);
  }
  for (SgemmIsa isa : AvailableSgemmIsas()) {
    PackedMatrixB packed;
    PackB(p.b_kn.data(), k, n, false, isa, &packed);
    std::vector<float> c(m * ldc, -7.0f);
    Sgemm(m, n, k, a.data(), lda, packed, p.bias.data(), c.data(), ldc,
          pool.get());
    ExpectMatches(p, c.data(), ldc, true, SgemmIsaName(isa));
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = n; j < ldc; ++j) {
        ASSERT_EQ(c[i * ldc + j], -7.0f) << SgemmIsaName(isa);
      }
    }
  }
}

// Laying a matrix over memory writes none of it (a load maps that memory
// on all its threads first); packing writes every panel whole, its pad
// columns zero, and ZeroPadColumns zeroes them for element-wise writers.
TEST(SgemmTest, PackingWritesPadColumnsOverDirtyMemory) {
  std::mt19937 rng(11);
  for (SgemmIsa isa : AvailableSgemmIsas()) {
    for (int64_t n : {int64_t{1}, int64_t{16}, int64_t{45}, int64_t{70}}) {
      const int64_t k = 13;
      const Problem p = MakeProblem(1, n, k, &rng);
      std::vector<float> memory(PackedBSize(k, n, isa), NAN);
      PackedMatrixB packed;
      PlacePackedB(k, n, isa, memory.data(), &packed);
      for (float value : memory) ASSERT_TRUE(std::isnan(value));
      PackBInto(p.b_kn.data(), false, &packed, nullptr);
      for (int64_t col = 0; col < (n + packed.nr - 1) / packed.nr * packed.nr;
           ++col) {
        for (int64_t row = 0; row < k; ++row) {
          const float value = memory[packed.Offset(row, col)];
          ASSERT_EQ(value, col < n ? p.b_kn[row * n + col] : 0.0f)
              << SgemmIsaName(isa) << " n " << n << " (" << row << ", "
              << col << ")";
        }
      }
      std::fill(memory.begin(), memory.end(), NAN);
      ZeroPadColumns(&packed);
      for (int64_t col = 0; col < (n + packed.nr - 1) / packed.nr * packed.nr;
           ++col) {
        ASSERT_EQ(std::isnan(memory[packed.Offset(0, col)]), col < n)
            << SgemmIsaName(isa) << " n " << n << " col " << col;
      }
    }
  }
}

// Row r of the scaled copy is row r of B times scale[r % period], every
// pad column zero (an infinite factor included), the source untouched;
// multiplying A by it is A * diag(scale) * B.
TEST(SgemmTest, ScaledRowsAreTheRowsTimesTheirFactors) {
  std::mt19937 rng(12);
  for (SgemmIsa isa : AvailableSgemmIsas()) {
    for (int64_t n : {int64_t{1}, int64_t{16}, int64_t{45}, int64_t{70}}) {
      for (int64_t period : {int64_t{13}, int64_t{5}}) {
        const int64_t k = period == 13 ? 13 : 15, m = 7;
        const Problem p = MakeProblem(m, n, k, &rng);
        std::vector<float> scale = RandomVector(period, &rng);
        scale[period - 1] = INFINITY;
        PackedMatrixB packed;
        PackB(p.b_kn.data(), k, n, false, isa, &packed);
        const std::vector<float> before(packed.values,
                                        packed.values + packed.size());
        std::vector<float> memory(PackedBSize(k, n, isa), NAN);
        PackedMatrixB scaled;
        ScalePackedBRows(packed, scale.data(), period, memory.data(), &scaled);
        ASSERT_EQ(scaled.values, memory.data());
        ASSERT_EQ(scaled.isa, packed.isa);
        ASSERT_EQ(scaled.nr, packed.nr);
        EXPECT_TRUE(std::equal(before.begin(), before.end(), packed.values));
        for (int64_t col = 0; col < (n + packed.nr - 1) / packed.nr * packed.nr;
             ++col) {
          for (int64_t row = 0; row < k; ++row) {
            const float want =
                col < n ? p.b_kn[row * n + col] * scale[row % period] : 0.0f;
            ASSERT_EQ(memory[scaled.Offset(row, col)], want)
                << SgemmIsaName(isa) << " n " << n << " (" << row << ", " << col
                << ")";
          }
        }
        // A * diag(scale) * B, with finite factors this time.
        scale[period - 1] = 0.5f;
        ScalePackedBRows(packed, scale.data(), period, memory.data(), &scaled);
        Problem scaled_a = p;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t kk = 0; kk < k; ++kk) {
            scaled_a.a[i * k + kk] = p.a[i * k + kk] * scale[kk % period];
          }
        }
        scaled_a = MakeProblemFrom(scaled_a);
        std::vector<float> c(m * n, NAN);
        Sgemm(m, n, k, p.a.data(), k, scaled, nullptr, c.data(), n, nullptr);
        ExpectMatches(
            scaled_a, c.data(), n, false,
            std::string(SgemmIsaName(isa)) + " scaled n " + std::to_string(n));
      }
    }
  }
}

// A given in `runs` runs of run_k values, some of them null (zeros): every
// run pattern, with a bias, an addend and a clamp, on n columns (45: full,
// half-width and edge panels).
void ExpectRunsMatchFloat64(int64_t m, int runs, int64_t run_k,
                            std::mt19937 *rng, int64_t n = 45) {
  const int64_t k = runs * run_k;
  const int64_t lda = run_k + 2, ldc = n;
  // Run s of row r lives at storage[s][r * lda + p]; lda > run_k leaves
  // values between rows that must not be read.
  std::vector<std::vector<float>> storage(runs);
  for (auto &run : storage) run = RandomVector(m * lda, rng);
  const std::vector<float> b = RandomVector(k * n, rng);
  const std::vector<float> bias = RandomVector(n, rng);
  const std::vector<float> addend = RandomVector(m * ldc, rng);
  const float clamp[2] = {-0.5f, 0.75f};
  std::vector<const float *> run_ptrs(runs);
  for (int mask = 0; mask < (1 << runs); ++mask) {
    for (int s = 0; s < runs; ++s) {
      run_ptrs[s] = (mask >> s & 1) != 0 ? storage[s].data() : nullptr;
    }
    for (SgemmIsa isa : AvailableSgemmIsas()) {
      PackedMatrixB packed;
      PackB(b.data(), k, n, false, isa, &packed);
      std::vector<float> c(m * ldc, NAN);
      SgemmColumnsInRuns(m, 0, n, SgemmARuns{run_ptrs.data(), runs, run_k}, lda,
                         packed, bias.data(), clamp, addend.data(), c.data(),
                         ldc, nullptr);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double want = static_cast<double>(bias[j]) + addend[i * ldc + j];
          double scale = std::fabs(want);
          for (int s = 0; s < runs; ++s) {
            if (run_ptrs[s] == nullptr) continue;
            for (int64_t p = 0; p < run_k; ++p) {
              const double term = static_cast<double>(storage[s][i * lda + p]) *
                                  b[(s * run_k + p) * n + j];
              want += term;
              scale += std::fabs(term);
            }
          }
          want = std::fmin(std::fmax(want, clamp[0]), clamp[1]);
          ASSERT_NEAR(c[i * ldc + j], want, 1e-5 * scale + 1e-30)
              << SgemmIsaName(isa) << " runs " << runs << " x " << run_k
              << " mask " << mask << " at (" << i << ", " << j << ")";
        }
      }
    }
  }
}

TEST(SgemmTest, RunsOfAMatchFloat64WithNullRunsAsZeros) {
  std::mt19937 rng(23);
  ExpectRunsMatchFloat64(13, 3, 5, &rng);
}

// Column counts whose last panel is exactly some vectors wide for one ISA
// or another (8 of 16, 16, 32 or 48 of 64 columns), the narrow kernels'
// case with no edge tile, and edge tiles inside a narrow width:
// MobileNet-v2's and -v3's 24- and 40-channel projections.
TEST(SgemmTest, NarrowPanelsMatchFloat64) {
  std::mt19937 rng(37);
  for (int64_t n : {4, 8, 12, 16, 24, 32, 40, 48, 80, 96, 112}) {
    ExpectRunsMatchFloat64(13, 2, 7, &rng, n);
    // Rows past a narrow kernel's taller tiles (12 + 9 + 8 on AVX-512).
    ExpectRunsMatchFloat64(29, 1, 9, &rng, n);
    if (HasFailure()) return;
  }
}

// Runs as deep as a stride-2 3x3 convolution's window rows (3 x 512
// channels), of a depth no kernel unrolling divides, with padding runs
// first, between and last: depths that the driver slices (a run a slice)
// on full-width, narrow and edge panels, the edge tile and C holding
// the partial sums between slices.
TEST(SgemmTest, DeepRunsMatchFloat64) {
  std::mt19937 rng(29);
  ExpectRunsMatchFloat64(21, 3, 1536, &rng);
  for (int64_t n : {24, 45, 96}) {
    ExpectRunsMatchFloat64(13, 2, 513, &rng, n);
    if (HasFailure()) return;
  }
}

// Depths of real layers' GEMMs (K = 512 .. 4608; the edge sizes above stop
// at 100), with column edges, threaded, clamped and not.
TEST(SgemmTest, DeepProductsMatchFloat64) {
  std::mt19937 rng(31);
  auto pool1 = StartPool(1);
  auto pool2 = StartPool(2);
  const float clamp[2] = {-2.0f, 2.5f};
  for (int64_t k : {512, 1025, 4608}) {
    const Problem p = MakeProblem(19, 45, k, &rng);
    for (SgemmIsa isa : AvailableSgemmIsas()) {
      PackedMatrixB packed;
      PackB(p.b_nk.data(), k, p.n, true, isa, &packed);
      for (ThreadPool *pool : {pool1.get(), pool2.get()}) {
        const std::string what =
            std::string(SgemmIsaName(isa)) + " k=" + std::to_string(k) +
            " threads=" + std::to_string(pool->num_threads());
        std::vector<float> c(p.m * p.n, NAN);
        Sgemm(p.m, p.n, k, p.a.data(), k, packed, p.bias.data(), c.data(), p.n,
              pool);
        ExpectMatches(p, c.data(), p.n, true, what);
        std::vector<float> clamped(p.m * p.n, NAN);
        SgemmClamped(p.m, p.n, k, p.a.data(), k, packed, p.bias.data(), clamp,
                     clamped.data(), p.n, pool);
        for (int64_t i = 0; i < p.m * p.n; ++i) {
          ASSERT_EQ(clamped[i], std::fmin(std::fmax(c[i], clamp[0]), clamp[1]))
              << what << " at " << i;
        }
      }
    }
  }
}

// Rows cut into two calls at every row, as threads and the fused layers'
// strips cut them: each value of C comes out as the one call over all rows
// computes it, bit for bit, on widths of every narrow kernel and of full
// panels with edges, with a bias, an addend and a clamp. (A width whose
// short tiles summed their even and odd steps apart, and tall ones not,
// made whole models differ between 1 and 2 threads.)
TEST(SgemmTest, RowCutsNeverChangeABit) {
  std::mt19937 rng(41);
  const int64_t m = 61, k = 37;
  const float clamp[2] = {-1.5f, 2.0f};
  for (int64_t n : {8, 16, 24, 40, 48, 70, 80, 112, 144}) {
    const Problem p = MakeProblem(m, n, k, &rng);
    const std::vector<float> addend = RandomVector(m * n, &rng);
    for (SgemmIsa isa : AvailableSgemmIsas()) {
      PackedMatrixB packed;
      PackB(p.b_nk.data(), k, n, true, isa, &packed);
      std::vector<float> whole(m * n, NAN);
      SgemmColumns(m, 0, n, k, p.a.data(), k, packed, p.bias.data(), clamp,
                   addend.data(), whole.data(), n, nullptr);
      for (int64_t cut = 1; cut < m; ++cut) {
        std::vector<float> parts(m * n, NAN);
        SgemmColumns(cut, 0, n, k, p.a.data(), k, packed, p.bias.data(), clamp,
                     addend.data(), parts.data(), n, nullptr);
        SgemmColumns(m - cut, 0, n, k, p.a.data() + cut * k, k, packed,
                     p.bias.data(), clamp, addend.data() + cut * n,
                     parts.data() + cut * n, n, nullptr);
        ASSERT_TRUE(std::equal(whole.begin(), whole.end(), parts.begin()))
            << SgemmIsaName(isa) << " n " << n << " cut at row " << cut;
      }
    }
  }
}

TEST(SgemmTest, EpilogueSeesEveryValueOnceAfterItIsComputed) {
  std::mt19937 rng(11);
  auto pool = StartPool(2);
  const int64_t m = 70, n = 150, k = 9;
  const Problem p = MakeProblem(m, n, k, &rng);
  for (SgemmIsa isa : AvailableSgemmIsas()) {
    PackedMatrixB packed;
    PackB(p.b_nk.data(), k, n, true, isa, &packed);
    std::vector<float> c(m * n);
    std::vector<int> seen(m * n, 0);
    Sgemm(m, n, k, p.a.data(), k, packed, nullptr, c.data(), n, pool.get(),
          [&](float *tile, int64_t rows, int64_t cols, int64_t ldc) {
            for (int64_t r = 0; r < rows; ++r) {
              for (int64_t j = 0; j < cols; ++j) {
                const int64_t index = (tile - c.data()) + r * ldc + j;
                ++seen[index];
                tile[r * ldc + j] *= 2.0f;
              }
            }
          });
    for (int count : seen) ASSERT_EQ(count, 1) << SgemmIsaName(isa);
    for (int64_t i = 0; i < m * n; ++i) c[i] *= 0.5f;
    ExpectMatches(p, c.data(), n, false, SgemmIsaName(isa));
  }
}

// The in-register clamp of every micro-kernel, on row and column edges
// (m, n not multiples of any mr, nr), threaded; a NaN row comes out as the
// lower bound, as the reference ReLU makes it 0.
TEST(SgemmTest, ClampedOutputMatchesFloat64AndMapsNanToTheLowerBound) {
  std::mt19937 rng(17);
  auto pool = StartPool(2);
  const int64_t m = 37, n = 45, k = 23;
  Problem p = MakeProblem(m, n, k, &rng);
  const int64_t nan_row = 5;
  p.a[nan_row * k + 3] = NAN;
  const float clamp[2] = {-0.25f, 0.5f};
  for (SgemmIsa isa : AvailableSgemmIsas()) {
    PackedMatrixB packed;
    PackB(p.b_nk.data(), k, n, true, isa, &packed);
    std::vector<float> c(m * n, -7.0f);
    SgemmClamped(m, n, k, p.a.data(), k, packed, p.bias.data(), clamp, c.data(),
                 n, pool.get());
    int failures = 0;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const double raw = p.product[i * n + j] + p.bias[j];
        const double want = i == nan_row
                                ? clamp[0]
                                : std::fmin(std::fmax(raw, clamp[0]), clamp[1]);
        const double tol =
            1e-5 * (p.magnitude[i * n + j] + std::fabs(p.bias[j])) + 1e-30;
        if (!(std::fabs(c[i * n + j] - want) <= tol) && ++failures <= 3) {
          ADD_FAILURE() << SgemmIsaName(isa) << " at (" << i << ", " << j
                        << "): got " << c[i * n + j] << ", want " << want;
        }
      }
    }
  }
}

TEST(SgemmTest, ForcedIsaIsUsedByDefaultPacking) {
  const SgemmIsa before = SelectedSgemmIsa();
  for (SgemmIsa isa : AvailableSgemmIsas()) {
    ASSERT_TRUE(SetSgemmIsaForTesting(isa));
    PackedMatrixB packed;
    const float b[6] = {1, 2, 3, 4, 5, 6};
    PackB(b, 2, 3, false, &packed);
    EXPECT_EQ(packed.isa, isa);
    EXPECT_EQ(packed.size() % packed.nr, 0);
  }
  SetSgemmIsaForTesting(before);
}

// act = RELUX with cap 0.5, in float64.
double ReluX(double x) { return std::fmin(std::fmax(x, 0.0), 0.5); }

// y[m, o] = relux(bias[o] + sum_k x[m, k] * w[o, k]), w given as [n, k].
void ExpectOpMatches(const std::vector<float> &x, const std::vector<float> &w,
                     const std::vector<float> &bias, int64_t m, int64_t n,
                     int64_t k, const test::TensorValue &y,
                     const std::string &what) {
  ASSERT_EQ(static_cast<int64_t>(y.floats.size()), m * n) << what;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t o = 0; o < n; ++o) {
      double sum = bias[o], magnitude = std::fabs(bias[o]);
      for (int64_t kk = 0; kk < k; ++kk) {
        sum += static_cast<double>(x[i * k + kk]) * w[o * k + kk];
        magnitude +=
            std::fabs(static_cast<double>(x[i * k + kk]) * w[o * k + kk]);
      }
      ASSERT_NEAR(y.floats[i * n + o], ReluX(sum), 1e-5 * magnitude + 1e-30)
          << what << " at (" << i << ", " << o << ")";
    }
  }
}

TEST(SgemmTest, PointwiseConvAndFullyConnectedMatchFloat64UnderEveryIsa) {
  std::mt19937 rng(3);
  const int64_t batch = 2, h = 5, w = 7, cin = 19, cout = 37;
  const std::vector<float> conv_x = RandomVector(batch * h * w * cin, &rng);
  const std::vector<float> conv_w = RandomVector(cout * cin, &rng);
  const std::vector<float> conv_b = RandomVector(cout, &rng);
  const int64_t fc_batch = 3, fc_k = 40, fc_out = 45;
  const std::vector<float> fc_x = RandomVector(fc_batch * fc_k, &rng);
  const std::vector<float> fc_w = RandomVector(fc_out * fc_k, &rng);
  const std::vector<float> fc_b = RandomVector(fc_out, &rng);
  const SgemmIsa before = SelectedSgemmIsa();
  for (SgemmIsa isa : AvailableSgemmIsas()) {
    ASSERT_TRUE(SetSgemmIsaForTesting(isa));
    for (int threads : {1, 2}) {
      const std::string what = std::string(SgemmIsaName(isa)) +
                               " threads=" + std::to_string(threads);
      test::OpTester conv("Conv2D");
      conv.Input("x", {batch, h, w, cin}, conv_x)
          .Constant("w", {cout, 1, 1, cin}, conv_w)
          .Constant("b", {cout}, conv_b)
          .Output("y")
          .ArgString("activation", "RELUX")
          .ArgFloat("max_limit", 0.5f)
          .Threads(threads);
      ASSERT_EQ(conv.Run(), MaceStatus::MACE_SUCCESS) << what;
      ExpectOpMatches(conv_x, conv_w, conv_b, batch * h * w, cout, cin,
                      conv.output(0), "Conv2D " + what);

      test::OpTester fc("FullyConnected");
      fc.Input("x", {fc_batch, 2, 2, fc_k / 4}, fc_x)
          .Constant("w", {fc_out, fc_k}, fc_w)
          .Constant("b", {fc_out}, fc_b)
          .Output("y")
          .ArgString("activation", "RELUX")
          .ArgFloat("max_limit", 0.5f)
          .Threads(threads);
      ASSERT_EQ(fc.Run(), MaceStatus::MACE_SUCCESS) << what;
      ExpectOpMatches(fc_x, fc_w, fc_b, fc_batch, fc_out, fc_k, fc.output(0),
                      "FullyConnected " + what);
    }
  }
  SetSgemmIsaForTesting(before);
}

// SgemmRowsCost counts the micro-kernel calls Sgemm makes down m rows,
// each charged at least the rows that hide the FMA latency (2 mr / 3):
// whole tiles cost their rows, a short tail costs a latency-bound call.
TEST(SgemmTest, RowsCostChargesShortCallsAsLatencyBound) {
  for (SgemmIsa isa : {SgemmIsa::kGeneric, SgemmIsa::kAvx2, SgemmIsa::kAvx512,
                       SgemmIsa::kNeon}) {
    const int64_t mr = SgemmTileRows(isa);
    const int64_t latency_rows = 2 * mr / 3;
    SCOPED_TRACE(SgemmIsaName(isa));
    EXPECT_EQ(SgemmRowsCost(0, isa), 0);
    EXPECT_EQ(SgemmRowsCost(1, isa), latency_rows);
    EXPECT_EQ(SgemmRowsCost(mr, isa), mr);
    EXPECT_EQ(SgemmRowsCost(10 * mr, isa), 10 * mr);
    // mr + 1 rows go as two calls of about half each.
    const int64_t first = (mr + 2) / 2;
    EXPECT_EQ(SgemmRowsCost(mr + 1, isa),
              std::max(first, latency_rows) +
                  std::max(mr + 1 - first, latency_rows));
    // A block of rows and one more (a 7x7 layer's 49 pixels on AVX2) is
    // one block whose tail is evened, not a block and a one-row call.
    EXPECT_LT(SgemmRowsCost(8 * mr + 1, isa), 8 * mr + latency_rows);
    // More rows never cost less.
    for (int64_t m = 1; m < 4 * mr; ++m) {
      EXPECT_LE(SgemmRowsCost(m, isa), SgemmRowsCost(m + 1, isa)) << m;
    }
  }
}

}  // namespace
}  // namespace kernels
}  // namespace mace
