// SPDX-License-Identifier: MIT
/*
 * Data type conversion.  The fp16 routines follow the well-known
 * float-arithmetic formulation (as in the FP16 library by M. Dukhan):
 * exact, branch-light, and correct for subnormals, infinities and NaNs
 * under the default IEEE rounding mode.
 */
#include <string.h>

#include "dtype.h"
#include "gemm.h"
#include "spyre_program.h"

static inline uint32_t f32_bits(float f)
{
    uint32_t u;

    memcpy(&u, &f, sizeof(u));
    return u;
}

static inline float f32_from_bits(uint32_t u)
{
    float f;

    memcpy(&f, &u, sizeof(f));
    return f;
}

float fp16_to_f32(uint16_t h)
{
    uint32_t w = (uint32_t)h << 16;
    uint32_t sign = w & 0x80000000u;
    uint32_t two_w = w + w;
    /* Normal: move the exponent into place and rescale by 2^-112. */
    float normal = f32_from_bits((two_w >> 4) + (0xe0u << 23)) / 0x1p112f;
    /* Subnormal: the mantissa as a float in [0.5, 1), minus the 0.5 bias. */
    float subnormal = f32_from_bits((two_w >> 17) | (126u << 23)) - 0.5f;

    return f32_from_bits(sign |
                         f32_bits(two_w < (1u << 27) ? subnormal : normal));
}

uint16_t f32_to_fp16(float f)
{
    uint32_t w = f32_bits(f);
    uint32_t shl1_w = w + w;
    uint32_t sign = w & 0x80000000u;
    uint32_t bias = shl1_w & 0xff000000u;
    /* Scaling up then down saturates overflow to infinity and rounds once. */
    float base = ((f < 0 ? -f : f) * 0x1p112f) / 0x1p110f;
    uint32_t bits;

    if (bias < 0x71000000u) {
        bias = 0x71000000u;
    }
    base = f32_from_bits((bias >> 1) + 0x07800000u) + base;
    bits = f32_bits(base);
    if (shl1_w > 0xff000000u) { /* NaN: keep it quiet */
        return (uint16_t)(sign >> 16 | 0x7e00u);
    }
    return (uint16_t)(sign >> 16 |
                      (((bits >> 13) & 0x7c00u) + (bits & 0x0fffu)));
}

float bf16_to_f32(uint16_t b)
{
    return f32_from_bits((uint32_t)b << 16);
}

uint16_t f32_to_bf16(float f)
{
    uint32_t w = f32_bits(f);

    if ((w & 0x7fffffffu) > 0x7f800000u) {
        return (uint16_t)(w >> 16 | 0x0040u);
    }
    return (uint16_t)((w + 0x7fffu + ((w >> 16) & 1)) >> 16);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/*
 * The first n / 8 * 8 of n floats to fp16 with F16C, 8 at a time; a group
 * holding a NaN goes through f32_to_fp16 (VCVTPS2PH keeps part of a NaN's
 * payload, f32_to_fp16 makes every NaN the same quiet one).  Returns how
 * many it stored.
 */
static __attribute__((target("avx2,f16c"))) size_t store_fp16_f16c(
    uint8_t *dst, const float *src, size_t n)
{
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(src + i);

        if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q))) {
            for (size_t j = i; j < i + 8; j++) {
                uint16_t h = f32_to_fp16(src[j]);

                memcpy(dst + 2 * j, &h, 2);
            }
            continue;
        }
        _mm_storeu_si128((void *)(dst + 2 * i),
                         _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
    }
    return i;
}

static size_t store_fp16_simd(uint8_t *dst, const float *src, size_t n)
{
    /* Every AVX2 CPU has F16C (clang 14 cannot test "f16c" here: gemm.c). */
    if (n >= 8 && __builtin_cpu_supports("avx2")) {
        return store_fp16_f16c(dst, src, n);
    }
    return 0;
}
#else
static size_t store_fp16_simd(uint8_t *dst, const float *src, size_t n)
{
    (void)dst;
    (void)src;
    (void)n;
    return 0;
}
#endif

void dtype_load(const uint8_t *src, unsigned dtype, size_t n, float *dst)
{
    uint16_t h;

    switch (dtype) {
    case SPK_DT_FP32:
        memcpy(dst, src, n * sizeof(float));
        return;
    case SPK_DT_FP16:
        if (simd_fp16_to_f32(src, dst, n)) { /* F16C: the same exact values */
            return;
        }
        for (size_t i = 0; i < n; i++) {
            memcpy(&h, src + 2 * i, 2);
            dst[i] = fp16_to_f32(h);
        }
        return;
    default:
        for (size_t i = 0; i < n; i++) {
            memcpy(&h, src + 2 * i, 2);
            dst[i] = bf16_to_f32(h);
        }
        return;
    }
}

void dtype_store(uint8_t *dst, unsigned dtype, const float *src, size_t n,
                 size_t padded_bytes)
{
    size_t used = n * (dtype == SPK_DT_FP32 ? 4 : 2);
    uint16_t h;

    switch (dtype) {
    case SPK_DT_FP32:
        memcpy(dst, src, used);
        break;
    case SPK_DT_FP16:
        for (size_t i = store_fp16_simd(dst, src, n); i < n; i++) {
            h = f32_to_fp16(src[i]);
            memcpy(dst + 2 * i, &h, 2);
        }
        break;
    default:
        for (size_t i = 0; i < n; i++) {
            h = f32_to_bf16(src[i]);
            memcpy(dst + 2 * i, &h, 2);
        }
        break;
    }
    if (padded_bytes > used) {
        memset(dst + used, 0, padded_bytes - used);
    }
}
