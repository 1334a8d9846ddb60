// Internal to mace/kernels: the vector types the per-ISA files compile the
// shared algorithms with, and the vectorised activations (the fused
// epilogue of every vector kernel).
//
// A vector type V offers: T (the register type), kWidth (lanes), Load /
// Store (kWidth floats), LoadPartial / StorePartial (the first n < kWidth
// lanes; other lanes read as 0 and are never written), Set1, Zero, Add,
// Sub, Mul, Div, Fma(a, b, c) = a * b + c, Max(a, b) = a > b ? a : b (so
// a NaN in a yields b, as the reference loops' comparisons do), Min, Abs,
// SelectLess(a, b, t, f) = a < b ? t : f, Pow2FromBiased(b) = 2^n for
// b = kExpMagic + n, n integral in [-126, 127] (b's low mantissa bits,
// n + 127, shifted into the exponent field), ReduceAdd (the sum of
// the lanes, in an order fixed per type), and
// kLibmTranscendentals: when true, SigmoidLanes / TanhLanes / ExpLanes /
// ErfLanes
// through the C library replace the polynomial approximations below.
//
// Every definition here has internal linkage (an unnamed namespace): each
// per-ISA file gets its own copy built with its own flags, so the linker can
// never hand an AVX-512 copy of a helper to code that runs on any x86-64.

#ifndef MACE_KERNELS_ACTIVATION_VEC_H_
#define MACE_KERNELS_ACTIVATION_VEC_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif
#if defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "mace/kernels/activation.h"

namespace mace {
namespace kernels {
namespace {

// Calls f(i) for i = 0 .. kN - 1 with i a compile-time constant, so arrays
// of accumulators indexed by i stay in registers.
template <typename F, int... kI>
inline __attribute__((always_inline)) void UnrollImpl(
    F &&f, std::integer_sequence<int, kI...>) {
  (f(std::integral_constant<int, kI>{}), ...);
}
template <int kN, typename F>
inline __attribute__((always_inline)) void Unroll(F &&f) {
  UnrollImpl(f, std::make_integer_sequence<int, kN>{});
}

inline int64_t MinIndex(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t MaxIndex(int64_t a, int64_t b) { return a > b ? a : b; }

// Portable: 4 plain lanes, loops the compiler vectorises for the target's
// baseline (SSE2 on x86-64).
struct VecGeneric {
  struct T {
    float v[4];
  };
  static constexpr int kWidth = 4;
  // SIGMOID and TANH per lane through the C library, as the reference
  // computes them: without SIMD the polynomial is no faster than libm.
  static constexpr bool kLibmTranscendentals = true;

  template <typename F>
  static T Map(F f) {
    T r;
    for (int i = 0; i < 4; ++i) r.v[i] = f(i);
    return r;
  }
  static T Load(const float *p) {
    return Map([p](int i) { return p[i]; });
  }
  static void Store(float *p, T v) {
    for (int i = 0; i < 4; ++i) p[i] = v.v[i];
  }
  static T LoadPartial(const float *p, int n) {
    return Map([p, n](int i) { return i < n ? p[i] : 0.0f; });
  }
  static void StorePartial(float *p, int n, T v) {
    for (int i = 0; i < n; ++i) p[i] = v.v[i];
  }
  static T Set1(float s) {
    return Map([s](int) { return s; });
  }
  static T Zero() { return Set1(0.0f); }
  static T Add(T a, T b) {
    return Map([&](int i) { return a.v[i] + b.v[i]; });
  }
  static T Sub(T a, T b) {
    return Map([&](int i) { return a.v[i] - b.v[i]; });
  }
  static T Mul(T a, T b) {
    return Map([&](int i) { return a.v[i] * b.v[i]; });
  }
  static T Div(T a, T b) {
    return Map([&](int i) { return a.v[i] / b.v[i]; });
  }
  // Not fused: the generic build has no guaranteed FMA instruction.
  static T Fma(T a, T b, T c) {
    return Map([&](int i) { return a.v[i] * b.v[i] + c.v[i]; });
  }
  static T Max(T a, T b) {
    return Map([&](int i) { return a.v[i] > b.v[i] ? a.v[i] : b.v[i]; });
  }
  static T Min(T a, T b) {
    return Map([&](int i) { return a.v[i] < b.v[i] ? a.v[i] : b.v[i]; });
  }
  static T Abs(T a) {
    return Map([&](int i) { return a.v[i] < 0.0f ? -a.v[i] : a.v[i]; });
  }
  static T SelectLess(T a, T b, T t, T f) {
    return Map([&](int i) { return a.v[i] < b.v[i] ? t.v[i] : f.v[i]; });
  }
  static T Pow2FromBiased(T b) {
    return Map([&](int i) {
      uint32_t bits;
      std::memcpy(&bits, &b.v[i], sizeof(bits));
      bits <<= 23;
      float f;
      std::memcpy(&f, &bits, sizeof(f));
      return f;
    });
  }
  static T SigmoidLanes(T a) {
    return Map([&](int i) { return 1.0f / (1.0f + std::exp(-a.v[i])); });
  }
  static T TanhLanes(T a) {
    return Map([&](int i) { return std::tanh(a.v[i]); });
  }
  static T ExpLanes(T a) {
    return Map([&](int i) { return std::exp(a.v[i]); });
  }
  static T ErfLanes(T a) {
    return Map([&](int i) { return std::erf(a.v[i]); });
  }
  static float ReduceAdd(T a) { return (a.v[0] + a.v[2]) + (a.v[1] + a.v[3]); }
};

#if defined(__AVX2__) && defined(__FMA__)
// Lane masks for 0..8 active lanes: a window of 8 starting at 8 - n.
alignas(32) constexpr int32_t kAvx2LaneMasks[16] = {
    -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

struct VecAvx2 {
  using T = __m256;
  static constexpr int kWidth = 8;
  static constexpr bool kLibmTranscendentals = false;

  static __m256i Mask(int n) {
    return _mm256_loadu_si256(
        reinterpret_cast<const __m256i *>(kAvx2LaneMasks + 8 - n));
  }
  static T Load(const float *p) { return _mm256_loadu_ps(p); }
  static void Store(float *p, T v) { _mm256_storeu_ps(p, v); }
  static T LoadPartial(const float *p, int n) {
    return _mm256_maskload_ps(p, Mask(n));
  }
  static void StorePartial(float *p, int n, T v) {
    _mm256_maskstore_ps(p, Mask(n), v);
  }
  static T Set1(float s) { return _mm256_set1_ps(s); }
  static T Zero() { return _mm256_setzero_ps(); }
  static T Add(T a, T b) { return _mm256_add_ps(a, b); }
  static T Sub(T a, T b) { return _mm256_sub_ps(a, b); }
  static T Mul(T a, T b) { return _mm256_mul_ps(a, b); }
  static T Div(T a, T b) { return _mm256_div_ps(a, b); }
  static T Fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static T Max(T a, T b) { return _mm256_max_ps(a, b); }
  static T Min(T a, T b) { return _mm256_min_ps(a, b); }
  static T Abs(T a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static T SelectLess(T a, T b, T t, T f) {
    return _mm256_blendv_ps(f, t, _mm256_cmp_ps(a, b, _CMP_LT_OQ));
  }
  static T Pow2FromBiased(T b) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(b), 23));
  }
  static float ReduceAdd(T a) {
    __m128 s =
        _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
  }
};
#endif  // __AVX2__ && __FMA__

#if defined(__AVX512F__)
struct VecAvx512 {
  using T = __m512;
  static constexpr int kWidth = 16;
  static constexpr bool kLibmTranscendentals = false;

  static __mmask16 Mask(int n) {
    return static_cast<__mmask16>((1u << n) - 1u);
  }
  static T Load(const float *p) { return _mm512_loadu_ps(p); }
  static void Store(float *p, T v) { _mm512_storeu_ps(p, v); }
  static T LoadPartial(const float *p, int n) {
    return _mm512_maskz_loadu_ps(Mask(n), p);
  }
  static void StorePartial(float *p, int n, T v) {
    _mm512_mask_storeu_ps(p, Mask(n), v);
  }
  static T Set1(float s) { return _mm512_set1_ps(s); }
  static T Zero() { return _mm512_setzero_ps(); }
  static T Add(T a, T b) { return _mm512_add_ps(a, b); }
  static T Sub(T a, T b) { return _mm512_sub_ps(a, b); }
  static T Mul(T a, T b) { return _mm512_mul_ps(a, b); }
  static T Div(T a, T b) { return _mm512_div_ps(a, b); }
  static T Fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  // Masked forms with every lane set: the same vmaxps / vminps. GCC 12's
  // _mm512_max_ps passes _mm512_undefined_ps() through, which -Wall flags
  // as uninitialized once inlined into the depthwise tiles.
  static T Max(T a, T b) { return _mm512_mask_max_ps(a, 0xFFFF, a, b); }
  static T Min(T a, T b) { return _mm512_mask_min_ps(a, 0xFFFF, a, b); }
  static T Abs(T a) { return _mm512_abs_ps(a); }
  static T SelectLess(T a, T b, T t, T f) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), f, t);
  }
  static T Pow2FromBiased(T b) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(b), 23));
  }
  static float ReduceAdd(T a) { return _mm512_reduce_add_ps(a); }
};
#endif  // __AVX512F__

#if defined(__aarch64__)
struct VecNeon {
  using T = float32x4_t;
  static constexpr int kWidth = 4;
  static constexpr bool kLibmTranscendentals = false;

  static T Load(const float *p) { return vld1q_f32(p); }
  static void Store(float *p, T v) { vst1q_f32(p, v); }
  static T LoadPartial(const float *p, int n) {
    float lanes[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int i = 0; i < n; ++i) lanes[i] = p[i];
    return vld1q_f32(lanes);
  }
  static void StorePartial(float *p, int n, T v) {
    float lanes[4];
    vst1q_f32(lanes, v);
    for (int i = 0; i < n; ++i) p[i] = lanes[i];
  }
  static T Set1(float s) { return vdupq_n_f32(s); }
  static T Zero() { return vdupq_n_f32(0.0f); }
  static T Add(T a, T b) { return vaddq_f32(a, b); }
  static T Sub(T a, T b) { return vsubq_f32(a, b); }
  static T Mul(T a, T b) { return vmulq_f32(a, b); }
  static T Div(T a, T b) { return vdivq_f32(a, b); }
  static T Fma(T a, T b, T c) { return vfmaq_f32(c, a, b); }
  // a > b ? a : b, NaN in a giving b like the x86 and generic types.
  static T Max(T a, T b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
  static T Min(T a, T b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
  static T Abs(T a) { return vabsq_f32(a); }
  static T SelectLess(T a, T b, T t, T f) {
    return vbslq_f32(vcltq_f32(a, b), t, f);
  }
  static T Pow2FromBiased(T b) {
    return vreinterpretq_f32_s32(vshlq_n_s32(vreinterpretq_s32_f32(b), 23));
  }
  static float ReduceAdd(T a) { return vaddvq_f32(a); }
};
#endif  // __aarch64__

// The range ExpInRange accepts: 2^n stays a normal float inside it.
constexpr float kExpLowest = -87.33654f;
constexpr float kExpHighest = 88.0f;
// 1.5 * 2^23 + 127: adding it to a float of magnitude below 2^22 rounds it
// to an integer n (in the current rounding mode, to nearest), and leaves
// n + 127, the biased exponent of 2^n, in the sum's low mantissa bits.
constexpr float kExpMagic = 12583039.0f;

// exp(x) within 1.6e-7 relative (about 2 ulp): x = n ln2 + r with
// |r| <= ln2 / 2, exp(r) by a degree-5 polynomial (its coefficients a
// minimax fit for the relative error, 9.2e-8 before rounding; they agree
// with XNNPACK's to 4-5 digits), 2^n from the exponent bits. Five FMAs
// where Cephes' expf takes seven: the transcendental activations are
// bound by the FMA pipes. x must lie in [kExpLowest, kExpHighest] or be
// NaN (which gives NaN on the SIMD types).
template <class V>
inline typename V::T ExpInRange(typename V::T x) {
  using T = typename V::T;
  // n = x log2(e) rounded to an integer by the addition of kExpMagic, in
  // the FMA, whose sum also yields 2^n (Pow2FromBiased): no float-to-int
  // conversion or rounding instruction in the chain.
  const T magic = V::Set1(kExpMagic);
  const T biased = V::Fma(x, V::Set1(1.44269504088896341f), magic);
  const T n = V::Sub(biased, magic);
  // ln2 in two parts, so n * ln2 is subtracted without rounding error.
  x = V::Fma(n, V::Set1(-0.693359375f), x);
  x = V::Fma(n, V::Set1(2.12194440e-4f), x);
  T p = V::Set1(0x1.0fa834p-7f);
  p = V::Fma(p, x, V::Set1(0x1.573a54p-5f));
  p = V::Fma(p, x, V::Set1(0x1.555a6ap-3f));
  p = V::Fma(p, x, V::Set1(0x1.fffdc6p-2f));
  p = V::Fma(p, x, V::Set1(0x1.fffff6p-1f));
  p = V::Fma(p, x, V::Set1(1.0f));
  return V::Mul(p, V::Pow2FromBiased(biased));
}

// exp(x) clamped so 2^n stays a normal float: results below 2^-126 come out
// as about 1.2e-38, above e^88 as e^88.
template <class V>
inline typename V::T Exp(typename V::T x) {
  return ExpInRange<V>(
      V::Min(V::Max(x, V::Set1(kExpLowest)), V::Set1(kExpHighest)));
}

template <class V>
inline typename V::T Sigmoid(typename V::T x) {
  const typename V::T one = V::Set1(1.0f);
  return V::Div(one, V::Add(one, Exp<V>(V::Sub(V::Zero(), x))));
}

// Cephes' tanhf: an odd polynomial below |x| = 0.625, where
// 1 - 2 / (exp(2x) + 1) would lose digits to cancellation; that formula
// (exact for either sign) above.
template <class V>
inline typename V::T Tanh(typename V::T x) {
  using T = typename V::T;
  const T one = V::Set1(1.0f);
  const T x2 = V::Mul(x, x);
  T p = V::Set1(-5.70498872745e-3f);
  p = V::Fma(p, x2, V::Set1(2.06390887954e-2f));
  p = V::Fma(p, x2, V::Set1(-5.37397155531e-2f));
  p = V::Fma(p, x2, V::Set1(1.33314422036e-1f));
  p = V::Fma(p, x2, V::Set1(-3.33332819422e-1f));
  const T small = V::Fma(V::Mul(p, x2), x, x);
  const T e = Exp<V>(V::Add(x, x));
  const T large = V::Sub(one, V::Div(V::Set1(2.0f), V::Add(e, one)));
  return V::SelectLess(V::Abs(x), V::Set1(0.625f), small, large);
}

// erf(x) as a rational function of x (odd numerator, even denominator),
// |error| < 5e-7 on every float; |x| >= 4 gives +-1, as erf does in
// float. The coefficients are Eigen's generic_fast_erf_float ones.
template <class V>
inline typename V::T Erf(typename V::T x) {
  using T = typename V::T;
  // The bounds first: Max / Min return their second operand for a NaN,
  // which must come out a NaN.
  x = V::Min(V::Set1(4.0f), V::Max(V::Set1(-4.0f), x));
  const T x2 = V::Mul(x, x);
  T p = V::Set1(-2.72614225801306e-10f);
  p = V::Fma(p, x2, V::Set1(2.77068142495902e-08f));
  p = V::Fma(p, x2, V::Set1(-2.10102402082508e-06f));
  p = V::Fma(p, x2, V::Set1(-5.69250639462346e-05f));
  p = V::Fma(p, x2, V::Set1(-7.34990630326855e-04f));
  p = V::Fma(p, x2, V::Set1(-2.95459980854025e-03f));
  p = V::Fma(p, x2, V::Set1(-1.60960333262415e-02f));
  T q = V::Set1(-1.45660718464996e-05f);
  q = V::Fma(q, x2, V::Set1(-2.13374055278905e-04f));
  q = V::Fma(q, x2, V::Set1(-1.68282697438203e-03f));
  q = V::Fma(q, x2, V::Set1(-7.37332916720468e-03f));
  q = V::Fma(q, x2, V::Set1(-1.42647390514189e-02f));
  return V::Div(V::Mul(x, p), q);
}

// The activation of an ActivationParams on vectors of channels.
template <class V>
class VecActivation {
 public:
  using T = typename V::T;

  explicit VecActivation(const ActivationParams &act)
      : kind_(act.kind),
        limit_(V::Set1(act.max_limit)),
        coefficient_(V::Set1(act.coefficient)),
        alpha_(V::Set1(act.hardsigmoid_alpha)),
        beta_(V::Set1(act.hardsigmoid_beta)),
        slope_(act.slope) {
    // A shared PRELU slope is a LeakyRelu.
    if (kind_ == ActivationKind::kPRelu && act.slope_size == 1) {
      kind_ = ActivationKind::kLeakyRelu;
      coefficient_ = V::Set1(act.slope[0]);
    }
  }

  ActivationKind kind() const { return kind_; }

  // v holds channels [c, c + lanes), lanes <= kWidth.
  T operator()(T v, int64_t c, int lanes) const {
    T out = v;
    Dispatch([&](auto kind) {
      out = Apply<decltype(kind)::value>(v, c, lanes);
    });
    return out;
  }

  // Calls f(std::integral_constant<ActivationKind, kind()>{}): loops
  // instantiated per kind call Apply<K>, without a switch per vector that
  // keeps the compiler from hoisting constants and interleaving vectors.
  template <class F>
  void Dispatch(F &&f) const {
    using K = ActivationKind;
    switch (kind_) {
      case K::kNone: return f(std::integral_constant<K, K::kNone>{});
      case K::kRelu: return f(std::integral_constant<K, K::kRelu>{});
      case K::kReluX: return f(std::integral_constant<K, K::kReluX>{});
      case K::kLeakyRelu: return f(std::integral_constant<K, K::kLeakyRelu>{});
      case K::kPRelu: return f(std::integral_constant<K, K::kPRelu>{});
      case K::kSigmoid: return f(std::integral_constant<K, K::kSigmoid>{});
      case K::kTanh: return f(std::integral_constant<K, K::kTanh>{});
      case K::kHardSigmoid:
        return f(std::integral_constant<K, K::kHardSigmoid>{});
      case K::kHardSwish: return f(std::integral_constant<K, K::kHardSwish>{});
      case K::kSwish: return f(std::integral_constant<K, K::kSwish>{});
      case K::kErf: return f(std::integral_constant<K, K::kErf>{});
      case K::kGelu: return f(std::integral_constant<K, K::kGelu>{});
    }
  }

  // The activation of kind K (which must be kind()) on v, channels
  // [c, c + lanes).
  template <ActivationKind kKind>
  T Apply(T v, int64_t c, int lanes) const {
    using K = ActivationKind;
    if constexpr (kKind == K::kNone) {
      return v;
    } else if constexpr (kKind == K::kRelu) {
      return V::Max(v, V::Zero());
    } else if constexpr (kKind == K::kReluX) {
      return V::Min(V::Max(v, V::Zero()), limit_);
    } else if constexpr (kKind == K::kLeakyRelu) {
      return Leaky(v, coefficient_);
    } else if constexpr (kKind == K::kPRelu) {
      return Leaky(v, lanes == V::kWidth ? V::Load(slope_ + c)
                                         : V::LoadPartial(slope_ + c, lanes));
    } else if constexpr (kKind == K::kSigmoid) {
      if constexpr (V::kLibmTranscendentals) {
        return V::SigmoidLanes(v);
      } else {
        return Sigmoid<V>(v);
      }
    } else if constexpr (kKind == K::kTanh) {
      if constexpr (V::kLibmTranscendentals) {
        return V::TanhLanes(v);
      } else {
        return Tanh<V>(v);
      }
    } else if constexpr (kKind == K::kHardSigmoid) {
      return V::Min(V::Max(V::Fma(v, alpha_, beta_), V::Zero()),
                    V::Set1(1.0f));
    } else if constexpr (kKind == K::kHardSwish) {
      // In the reference's order: x * clamp(x + 3, 0, 6), then / 6.
      return V::Div(
          V::Mul(v, V::Min(V::Max(V::Add(v, V::Set1(3.0f)), V::Zero()),
                           V::Set1(6.0f))),
          V::Set1(6.0f));
    } else if constexpr (kKind == K::kErf) {
      return ErfOf(v);
    } else if constexpr (kKind == K::kGelu) {
      const T half_x = V::Mul(V::Set1(0.5f), v);
      const T e = ErfOf(V::Mul(v, V::Set1(0.70710678118654752f)));
      return V::Fma(half_x, e, half_x);
    } else {
      static_assert(kKind == K::kSwish, "every ActivationKind is handled");
      const T scaled = V::Mul(V::Sub(V::Zero(), coefficient_), v);
      T e;
      if constexpr (V::kLibmTranscendentals) {
        e = V::ExpLanes(scaled);
      } else {
        e = Exp<V>(scaled);
      }
      return V::Div(v, V::Add(V::Set1(1.0f), e));
    }
  }

 private:
  static T ErfOf(T v) {
    if constexpr (V::kLibmTranscendentals) {
      return V::ErfLanes(v);
    } else {
      return Erf<V>(v);
    }
  }

  // x >= 0 ? x : x * s, exact: max(x, 0) + min(x, 0) * s adds a zero.
  static T Leaky(T v, T s) {
    return V::Fma(V::Min(v, V::Zero()), s, V::Max(v, V::Zero()));
  }

  ActivationKind kind_;
  T limit_;
  T coefficient_;
  T alpha_;
  T beta_;
  const float *slope_;
};

// ActivateChannelsKernel's loops; kAdd: with act.addend added first.
template <class V, bool kAdd>
void ActivateChannelsLoops(const VecActivation<V> &activation,
                           int64_t channels, const float *x,
                           const float *addend, float *y, int64_t n) {
  constexpr int kW = V::kWidth;
  auto load = [&](int64_t i) {
    typename V::T v = V::Load(x + i);
    if constexpr (kAdd) v = V::Add(v, V::Load(addend + i));
    return v;
  };
  auto load_partial = [&](int64_t i, int lanes) {
    typename V::T v = V::LoadPartial(x + i, lanes);
    if constexpr (kAdd) v = V::Add(v, V::LoadPartial(addend + i, lanes));
    return v;
  };
  if (activation.kind() == ActivationKind::kPRelu) {
    for (int64_t row = 0; row < n; row += channels) {
      int64_t c = 0;
      for (; c + kW <= channels; c += kW) {
        V::Store(y + row + c, activation(load(row + c), c, kW));
      }
      if (c < channels) {
        const int lanes = static_cast<int>(channels - c);
        V::StorePartial(y + row + c, lanes,
                        activation(load_partial(row + c, lanes), c, lanes));
      }
    }
    return;
  }
  activation.Dispatch([&](auto kind) {
    constexpr ActivationKind kKind = decltype(kind)::value;
    auto apply = [&](typename V::T v, int lanes) {
      return activation.template Apply<kKind>(v, 0, lanes);
    };
    // Four vectors a step: the transcendental activations are chains of
    // dependent operations, which only independent vectors overlap.
    int64_t i = 0;
    for (; i + 4 * kW <= n; i += 4 * kW) {
      typename V::T v[4];
      Unroll<4>([&](auto j) { v[j] = load(i + j * kW); });
      Unroll<4>([&](auto j) { v[j] = apply(v[j], kW); });
      Unroll<4>([&](auto j) { V::Store(y + i + j * kW, v[j]); });
    }
    for (; i + kW <= n; i += kW) V::Store(y + i, apply(load(i), kW));
    if (i < n) {
      const int lanes = static_cast<int>(n - i);
      V::StorePartial(y + i, lanes, apply(load_partial(i, lanes), lanes));
    }
  });
}

// Four rows of n values, ld apart, a vector of each row a step: a row
// shorter than ActivateChannelsLoops' four vectors would leave each
// vector's chain of dependent operations to itself. Not for PRELU (its
// slope goes by channel). kAdd: with `addend` (laid out as x) added first.
template <class V, bool kAdd>
void ActivateFourRows(const VecActivation<V> &activation, const float *x,
                      const float *addend, float *y, int64_t n, int64_t ld) {
  constexpr int kW = V::kWidth;
  activation.Dispatch([&](auto kind) {
    constexpr ActivationKind kKind = decltype(kind)::value;
    for (int64_t i = 0; i < n; i += kW) {
      const int lanes = static_cast<int>(std::min<int64_t>(kW, n - i));
      auto load = [&](const float *p) {
        return lanes == kW ? V::Load(p) : V::LoadPartial(p, lanes);
      };
      typename V::T v[4];
      Unroll<4>([&](auto j) {
        v[j] = load(x + j * ld + i);
        if constexpr (kAdd) v[j] = V::Add(v[j], load(addend + j * ld + i));
      });
      Unroll<4>([&](auto j) {
        v[j] = activation.template Apply<kKind>(v[j], 0, lanes);
      });
      Unroll<4>([&](auto j) {
        if (lanes == kW) {
          V::Store(y + j * ld + i, v[j]);
        } else {
          V::StorePartial(y + j * ld + i, lanes, v[j]);
        }
      });
    }
  });
}

// Applies act to `rows` rows of n values of channels [0, channels)
// repeated (n a multiple of channels when the slope is per channel), row r
// at x + r * ld, y + r * ld, after adding act.addend + r * ld when it is
// set; x, y and the addend possibly equal. Rows that follow one another
// go as one; short ones four at a time: a GEMM epilogue's block of a
// 16- or 32-channel stem came row by row, each row's one or two vectors
// waiting on their own exp (EfficientNet-B0's 3 -> 32 stem took 2.1-2.5x
// as long with its swish as without). Each value is computed as a row
// alone would compute it.
template <class V>
void ActivateChannelsKernel(const ActivationParams &act, int64_t channels,
                            const float *x, float *y, int64_t n, int64_t rows,
                            int64_t ld) {
  const VecActivation<V> activation(act);
  if (ld == n) {
    n *= rows;
    rows = 1;
  }
  int64_t r = 0;
  if (n < 4 * V::kWidth && activation.kind() != ActivationKind::kPRelu) {
    for (; r + 4 <= rows; r += 4) {
      const int64_t offset = r * ld;
      if (act.addend != nullptr) {
        ActivateFourRows<V, true>(activation, x + offset, act.addend + offset,
                                  y + offset, n, ld);
      } else {
        ActivateFourRows<V, false>(activation, x + offset, nullptr,
                                   y + offset, n, ld);
      }
    }
  }
  for (; r < rows; ++r) {
    const int64_t offset = r * ld;
    if (act.addend != nullptr) {
      ActivateChannelsLoops<V, true>(activation, channels, x + offset,
                                     act.addend + offset, y + offset, n);
    } else {
      ActivateChannelsLoops<V, false>(activation, channels, x + offset,
                                      nullptr, y + offset, n);
    }
  }
}

}  // namespace
}  // namespace kernels
}  // namespace mace

#endif  // MACE_KERNELS_ACTIVATION_VEC_H_
