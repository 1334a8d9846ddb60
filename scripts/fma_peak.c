/* The fp32 peak of one core, measured: a loop of independent fused
 * multiply-adds on registers only (no memory traffic), in the widest
 * vectors the compiler's target has (build with -march=native: AVX-512,
 * AVX2 + FMA, aarch64 NEON, else scalar). Prints
 *   fma_peak <GFLOP/s> <isa>
 * the best of several runs of ~0.1 s each. scripts/bench_machine.py builds
 * and runs it for the benchmark's "% peak": on a VM that hides the
 * maximum clock, the nominal clock x FLOP/cycle is not the peak (this
 * machine's cores reached 3.1-3.5 GHz x 64 FLOP/cycle against the nominal
 * 2.7). */
#include <stdio.h>
#include <time.h>

#if defined(__AVX512F__)
#include <immintrin.h>
typedef __m512 Vec;
#define ISA "avx512"
#define LANES 16
#define SET1(x) _mm512_set1_ps(x)
#define FMA(acc, a, b) acc = _mm512_fmadd_ps(acc, a, b)
#define SUM(v) _mm512_reduce_add_ps(v)
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
typedef __m256 Vec;
#define ISA "avx2"
#define LANES 8
#define SET1(x) _mm256_set1_ps(x)
#define FMA(acc, a, b) acc = _mm256_fmadd_ps(acc, a, b)
static float SUM(__m256 v) {
  float lanes[8];
  _mm256_storeu_ps(lanes, v);
  float s = 0;
  for (int i = 0; i < 8; ++i) s += lanes[i];
  return s;
}
#elif defined(__aarch64__)
#include <arm_neon.h>
typedef float32x4_t Vec;
#define ISA "neon"
#define LANES 4
#define SET1(x) vdupq_n_f32(x)
#define FMA(acc, a, b) acc = vfmaq_f32(b, acc, a)
#define SUM(v) vaddvq_f32(v)
#else
typedef float Vec;
#define ISA "scalar"
#define LANES 1
#define SET1(x) (x)
#define FMA(acc, a, b) acc = acc * a + b
#define SUM(v) (v)
#endif

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* 12 independent chains: enough to cover a 4-cycle FMA latency on two
 * ports, and within the 16 registers of AVX2. */
#define CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define DECLARE(i) Vec c##i = SET1(0.001f * (i));
#define STEP(i) FMA(c##i, a, b);
#define ADD(i) sum += SUM(c##i);

int main(void) {
  CHAINS(DECLARE)
  const Vec a = SET1(0.999999f), b = SET1(1e-7f);
  const long iterations = 20000000L;
  double best = 0.0;
  for (int run = 0; run < 7; ++run) {
    const double start = Now();
    for (long it = 0; it < iterations; ++it) {
      CHAINS(STEP)
    }
    const double seconds = Now() - start;
    const double gflops = iterations * 12.0 * LANES * 2.0 / seconds / 1e9;
    if (gflops > best) best = gflops;
  }
  float sum = 0;
  CHAINS(ADD)
  /* The sum keeps the loop from being optimised away. */
  printf("fma_peak %.1f %s %g\n", best, ISA, (double)sum);
  return 0;
}
