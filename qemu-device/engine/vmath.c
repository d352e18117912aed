// SPDX-License-Identifier: MIT
/*
 * exp for the SFP ops (vmath.h).  Cephes' single-precision formulation:
 * n = round(x log2 e), r = x - n ln2 (ln2 in two parts), a degree-7
 * polynomial for exp(r) on |r| <= ln2 / 2, times 2^n applied as two
 * powers of two so that results down in the subnormals round once.  No
 * libm call, so it vectorises; every operation is a plain IEEE multiply,
 * add or subtract (no FMA: the library is built for baseline x86-64, where
 * the compiler cannot contract them), so the scalar code and the AVX2
 * path below agree bit for bit.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "vmath.h"

#define VM_LOG2E 1.44269504088896341f
#define VM_LN2_HI 0.693359375f /* exact in 9 bits: n * hi is exact */
#define VM_LN2_LO (-0.000212194440f)
/* 1.5 * 2^23: x + it - it rounds x to an integer */
#define VM_SHIFTER 12582912.0f
#define VM_EXP_HI 88.7228393554687500f    /* above: overflow to +inf */
#define VM_EXP_LO (-103.972084045410156f) /* below: rounds to +0 */
#define VM_P0 0.00019875691500f
#define VM_P1 0.0013981999507f
#define VM_P2 0.0083334519073f
#define VM_P3 0.041665795894f
#define VM_P4 0.16666665459f
#define VM_P5 0.50000001201f

static inline float pow2i(int32_t e)
{
    uint32_t u = (uint32_t)(e + 127) << 23;
    float f;

    memcpy(&f, &u, sizeof(f));
    return f;
}

float vm_expf(float x)
{
    float n, r, p;
    int32_t ni, n1;

    if (isnan(x)) {
        return x + x;
    }
    if (x > VM_EXP_HI) {
        return INFINITY;
    }
    if (x < VM_EXP_LO) {
        return 0.0f;
    }
    n = (x * VM_LOG2E + VM_SHIFTER) - VM_SHIFTER;
    r = x - n * VM_LN2_HI;
    r = r - n * VM_LN2_LO;
    p = VM_P0;
    p = p * r + VM_P1;
    p = p * r + VM_P2;
    p = p * r + VM_P3;
    p = p * r + VM_P4;
    p = p * r + VM_P5;
    p = p * (r * r) + r + 1.0f;
    /* n is in [-150, 128]: two factors in [-75, 64] keep each a normal. */
    ni = (int32_t)n;
    n1 = (ni - (ni & 1)) / 2;
    return p * pow2i(n1) * pow2i(ni - n1);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX2_TARGET __attribute__((target("avx2")))

/* vm_expf on 8 lanes: the same operations, the special cases as blends. */
static AVX2_TARGET inline __m256 exp8(__m256 x)
{
    const __m256 hi = _mm256_set1_ps(VM_EXP_HI), lo = _mm256_set1_ps(VM_EXP_LO);
    const __m256 shifter = _mm256_set1_ps(VM_SHIFTER);
    __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    __m256 over = _mm256_cmp_ps(x, hi, _CMP_GT_OQ);
    __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
    /*
     * Lanes that end as 0 (below lo: masked softmax scores, silu of a large
     * x) compute exp(0) instead: clamped to lo they would make denormals,
     * which cost the CPU a slow path each.
     */
    __m256 xc = _mm256_blendv_ps(_mm256_min_ps(_mm256_max_ps(x, lo), hi),
                                 _mm256_setzero_ps(), under);
    __m256 n, r, p, y;
    __m256i ni, n1, bias = _mm256_set1_epi32(127);

    n = _mm256_sub_ps(
        _mm256_add_ps(_mm256_mul_ps(xc, _mm256_set1_ps(VM_LOG2E)), shifter),
        shifter);
    r = _mm256_sub_ps(xc, _mm256_mul_ps(n, _mm256_set1_ps(VM_LN2_HI)));
    r = _mm256_sub_ps(r, _mm256_mul_ps(n, _mm256_set1_ps(VM_LN2_LO)));
    p = _mm256_set1_ps(VM_P0);
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(VM_P1));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(VM_P2));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(VM_P3));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(VM_P4));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(VM_P5));
    p = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(p, _mm256_mul_ps(r, r)), r),
                      _mm256_set1_ps(1.0f));
    ni = _mm256_cvttps_epi32(n);
    /* (ni - (ni & 1)) / 2 is an arithmetic shift right by one */
    n1 = _mm256_srai_epi32(ni, 1);
    y = _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(
                             _mm256_add_epi32(n1, bias), 23)));
    y = _mm256_mul_ps(
        y, _mm256_castsi256_ps(_mm256_slli_epi32(
               _mm256_add_epi32(_mm256_sub_epi32(ni, n1), bias), 23)));
    y = _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY), over);
    y = _mm256_blendv_ps(y, _mm256_setzero_ps(), under);
    return _mm256_blendv_ps(y, _mm256_add_ps(x, x), nan);
}

static AVX2_TARGET size_t exp_sub_avx2(float *x, size_t n, float sub)
{
    __m256 s = _mm256_set1_ps(sub);
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(x + i, exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), s)));
    }
    return i;
}

static AVX2_TARGET size_t silu_avx2(float *x, size_t n)
{
    const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256 e = exp8(_mm256_xor_ps(v, sign));

        _mm256_storeu_ps(x + i, _mm256_div_ps(v, _mm256_add_ps(one, e)));
    }
    return i;
}

static bool have_avx2(bool simd, size_t n)
{
    return simd && n >= 8 && __builtin_cpu_supports("avx2");
}
#else
static size_t exp_sub_avx2(float *x, size_t n, float sub)
{
    (void)x;
    (void)n;
    (void)sub;
    return 0;
}

static size_t silu_avx2(float *x, size_t n)
{
    (void)x;
    (void)n;
    return 0;
}

static bool have_avx2(bool simd, size_t n)
{
    (void)simd;
    (void)n;
    return false;
}
#endif

float vm_exp_sub_sum(float *x, size_t n, float sub, bool simd)
{
    size_t i = have_avx2(simd, n) ? exp_sub_avx2(x, n, sub) : 0;
    float sum = 0;

    for (; i < n; i++) {
        x[i] = vm_expf(x[i] - sub);
    }
    for (i = 0; i < n; i++) {
        sum += x[i];
    }
    return sum;
}

void vm_exp(float *x, size_t n, bool simd)
{
    size_t i = have_avx2(simd, n) ? exp_sub_avx2(x, n, 0.0f) : 0;

    for (; i < n; i++) {
        x[i] = vm_expf(x[i]);
    }
}

void vm_silu(float *x, size_t n, bool simd)
{
    size_t i = have_avx2(simd, n) ? silu_avx2(x, n) : 0;

    for (; i < n; i++) {
        x[i] = x[i] / (1.0f + vm_expf(-x[i]));
    }
}
