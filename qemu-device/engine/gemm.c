// SPDX-License-Identifier: MIT
/*
 * GEMM packing and tile kernels (gemm.h).  The x86 paths are compiled with
 * target attributes and picked at run time, so the library still builds
 * with plain -std=c11 for any x86-64 and runs on CPUs without AVX.
 *
 * Tiles: AVX-512 16 x 16 (16 zmm accumulators, one B vector a k step, so
 * one conversion feeds 16 FMAs and the FMA units stay busy), and for full
 * rows two column panels at once as two halves of 8 x 32 (two B vectors
 * and 8 A broadcasts feed 16 FMAs: fewer loads an FMA); AVX2 6 x 16
 * (12 ymm accumulators); portable 16 x 16 (so each B value is converted
 * once per 16 rows).  B is converted in registers
 * from wherever it lies; A is packed once per firing, MR rows
 * interleaved, so a k step's A values are one contiguous run.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "gemm.h"
#include "spyre_program.h"

static const unsigned isa_mr[GEMM_ISA_COUNT] = { 16, 6, 16, 16 };
static const char *const isa_names[GEMM_ISA_COUNT] = { "portable", "avx2",
                                                       "avx512", "avx512bf16" };

static inline float load_elem(const uint8_t *p, unsigned dtype, size_t i)
{
    uint16_t h;
    float f;

    if (dtype == SPK_DT_FP32) {
        memcpy(&f, p + 4 * i, 4);
        return f;
    }
    memcpy(&h, p + 2 * i, 2);
    return dtype == SPK_DT_FP16 ? fp16_to_f32(h) : bf16_to_f32(h);
}

static inline size_t elem_size(unsigned dtype)
{
    return dtype == SPK_DT_FP32 ? 4 : 2;
}

/*
 * Panel p's columns kk0 .. k - 1, one element at a time; rows past `rows` are
 * 0.
 */
static void pack_a_portable(const uint8_t *a, size_t a_row, unsigned dtype,
                            uint32_t rows, uint32_t k, uint32_t p, unsigned mr,
                            float *dst, uint32_t kk0)
{
    for (uint32_t kk = kk0; kk < k; kk++) {
        for (uint32_t r = 0; r < mr; r++) {
            uint32_t row = p * mr + r;

            dst[(size_t)kk * mr + r] =
                row < rows ? load_elem(a + row * a_row, dtype, kk) : 0.0f;
        }
    }
}

/* The portable tile: a k step converts the NR B values once. */
static void tile_portable(const float *ap, const uint8_t *b, size_t b_row,
                          unsigned dtype, uint32_t k, float *c, size_t ldc,
                          uint32_t rows, uint32_t cols, bool zero)
{
    const unsigned mr = isa_mr[GEMM_PORTABLE];
    float acc[16][GEMM_NR], bv[GEMM_NR];

    for (uint32_t r = 0; r < mr; r++) {
        for (uint32_t j = 0; j < GEMM_NR; j++) {
            acc[r][j] = zero || r >= rows || j >= cols ? 0.0f : c[r * ldc + j];
        }
    }
    for (uint32_t kk = 0; kk < k; kk++) {
        for (uint32_t j = 0; j < cols; j++) {
            bv[j] = load_elem(b, dtype, j);
        }
        for (uint32_t r = 0; r < rows; r++) {
            for (uint32_t j = 0; j < cols; j++) {
                acc[r][j] = fmaf(ap[r], bv[j], acc[r][j]);
            }
        }
        ap += mr;
        b += b_row;
    }
    for (uint32_t r = 0; r < rows; r++) {
        memcpy(c + r * ldc, acc[r], cols * sizeof(float));
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define X86_HAVE_SIMD 1
#define AVX2_TARGET __attribute__((target("avx2,fma,f16c")))
#define AVX512_TARGET __attribute__((target("avx512f,avx2,fma,f16c")))
#define BF16_TARGET \
    __attribute__((target("avx512f,avx512bw,avx512bf16,avx2,fma,f16c")))
#define ALWAYS_INLINE inline __attribute__((always_inline))

/* 8 elements of dtype from p as fp32, exactly. */
static ALWAYS_INLINE AVX2_TARGET __m256 load8(const uint8_t *p, unsigned dtype)
{
    if (dtype == SPK_DT_FP32) {
        return _mm256_loadu_ps((const float *)(const void *)p);
    }
    if (dtype == SPK_DT_FP16) {
        return _mm256_cvtph_ps(_mm_loadu_si128((const void *)p));
    }
    return _mm256_castsi256_ps(_mm256_slli_epi32(
        _mm256_cvtepu16_epi32(_mm_loadu_si128((const void *)p)), 16));
}

/* 16 elements of dtype from p as fp32, exactly. */
static ALWAYS_INLINE AVX512_TARGET __m512 load16(const uint8_t *p,
                                                 unsigned dtype)
{
    if (dtype == SPK_DT_FP32) {
        return _mm512_loadu_ps((const float *)(const void *)p);
    }
    if (dtype == SPK_DT_FP16) {
        return _mm512_cvtph_ps(_mm256_loadu_si256((const void *)p));
    }
    return _mm512_castsi512_ps(_mm512_slli_epi32(
        _mm512_cvtepu16_epi32(_mm256_loadu_si256((const void *)p)), 16));
}

/*
 * Rows row0 .. row0 + 7 of A, k columns kk .. kk + 7, to dst[i * stride + r].
 */
static ALWAYS_INLINE AVX2_TARGET void transpose8(const uint8_t *a, size_t a_row,
                                                 unsigned dtype, uint32_t kk,
                                                 float *dst, size_t stride)
{
    __m256 v[8], t[8];

#pragma GCC unroll 8
    for (int r = 0; r < 8; r++) {
        v[r] = load8(a + r * a_row + kk * elem_size(dtype), dtype);
    }
#pragma GCC unroll 4
    for (int r = 0; r < 8; r += 2) {
        t[r] = _mm256_unpacklo_ps(v[r], v[r + 1]);
        t[r + 1] = _mm256_unpackhi_ps(v[r], v[r + 1]);
    }
#pragma GCC unroll 2
    for (int r = 0; r < 8; r += 4) {
        v[r] = _mm256_shuffle_ps(t[r], t[r + 2], 0x44);
        v[r + 1] = _mm256_shuffle_ps(t[r], t[r + 2], 0xee);
        v[r + 2] = _mm256_shuffle_ps(t[r + 1], t[r + 3], 0x44);
        v[r + 3] = _mm256_shuffle_ps(t[r + 1], t[r + 3], 0xee);
    }
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++) {
        t[r] = _mm256_permute2f128_ps(v[r], v[r + 4], 0x20);
        t[r + 4] = _mm256_permute2f128_ps(v[r], v[r + 4], 0x31);
    }
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++) {
        _mm256_storeu_ps(dst + r * stride, t[r]);
    }
}

/* A full 16-row panel (AVX-512 layout): 8x8 register transposes. */
static ALWAYS_INLINE AVX2_TARGET void pack16_body(const uint8_t *a,
                                                  size_t a_row, unsigned dtype,
                                                  uint32_t k, float *dst)
{
    uint32_t kk = 0;

    for (; kk + 8 <= k; kk += 8) {
        transpose8(a, a_row, dtype, kk, dst + (size_t)kk * 16, 16);
        transpose8(a + 8 * a_row, a_row, dtype, kk, dst + (size_t)kk * 16 + 8,
                   16);
    }
    for (; kk < k; kk++) {
        for (uint32_t r = 0; r < 16; r++) {
            dst[(size_t)kk * 16 + r] = load_elem(a + r * a_row, dtype, kk);
        }
    }
}

/*
 * A full 6-row panel (AVX2 layout): rows converted 8 at a time, then
 * interleaved.
 */
static ALWAYS_INLINE AVX2_TARGET void pack6_body(const uint8_t *a, size_t a_row,
                                                 unsigned dtype, uint32_t k,
                                                 float *dst)
{
    uint32_t kk = 0;

    for (; kk + 8 <= k; kk += 8) {
        float t[6][8];

#pragma GCC unroll 6
        for (int r = 0; r < 6; r++) {
            _mm256_storeu_ps(
                t[r], load8(a + r * a_row + kk * elem_size(dtype), dtype));
        }
        for (int i = 0; i < 8; i++) {
#pragma GCC unroll 6
            for (int r = 0; r < 6; r++) {
                dst[(size_t)(kk + i) * 6 + r] = t[r][i];
            }
        }
    }
    for (; kk < k; kk++) {
        for (uint32_t r = 0; r < 6; r++) {
            dst[(size_t)kk * 6 + r] = load_elem(a + r * a_row, dtype, kk);
        }
    }
}

static AVX2_TARGET void pack_full_panel(enum gemm_isa isa, const uint8_t *a,
                                        size_t a_row, unsigned dtype,
                                        uint32_t k, float *dst)
{
    /* One copy of each body per dtype, with the conversion inlined. */
    if (isa >= GEMM_AVX512) {
        if (dtype == SPK_DT_FP16) {
            pack16_body(a, a_row, SPK_DT_FP16, k, dst);
        } else if (dtype == SPK_DT_BF16) {
            pack16_body(a, a_row, SPK_DT_BF16, k, dst);
        } else {
            pack16_body(a, a_row, SPK_DT_FP32, k, dst);
        }
    } else {
        if (dtype == SPK_DT_FP16) {
            pack6_body(a, a_row, SPK_DT_FP16, k, dst);
        } else if (dtype == SPK_DT_BF16) {
            pack6_body(a, a_row, SPK_DT_BF16, k, dst);
        } else {
            pack6_body(a, a_row, SPK_DT_FP32, k, dst);
        }
    }
}

/*
 * A panel with fewer than mr rows left (a decode step's single row, a
 * fused MLP's small blocks): zeros, then each row converted 8 at a time
 * and spread into its lane.
 */
static AVX2_TARGET void pack_part_panel(const uint8_t *a, size_t a_row,
                                        unsigned dtype, uint32_t nrows,
                                        uint32_t k, unsigned mr, float *dst)
{
    memset(dst, 0, (size_t)k * mr * sizeof(float));
    for (uint32_t r = 0; r < nrows; r++) {
        const uint8_t *row = a + r * a_row;
        uint32_t kk = 0;

        for (; kk + 8 <= k; kk += 8) {
            float t[8];

            _mm256_storeu_ps(t, load8(row + kk * elem_size(dtype), dtype));
            for (int i = 0; i < 8; i++) {
                dst[(size_t)(kk + i) * mr + r] = t[i];
            }
        }
        for (; kk < k; kk++) {
            dst[(size_t)kk * mr + r] = load_elem(row, dtype, kk);
        }
    }
}

/*
 * The AVX-512 tile: 16 rows x 16 columns in 16 zmm registers for the
 * whole k; a k step loads (converts) one B vector and broadcasts 16 A
 * values.  R (a constant: 1, 2, 4, 8 or 16) bounds the rows computed, so a
 * tile of a few rows (a decode step's matmuls, a fused MLP's small row
 * blocks) does not pay for 16; each row's operations are the same.
 */
static ALWAYS_INLINE AVX512_TARGET void tile512_body(
    const float *ap, const uint8_t *b, size_t b_row, unsigned dtype, uint32_t k,
    float *c, size_t ldc, uint32_t rows, uint32_t cols, bool zero,
    const uint32_t R)
{
    __mmask16 m = cols >= 16 ? 0xffff : (__mmask16)((1u << cols) - 1);
    __m512 acc[16];

#pragma GCC unroll 16
    for (uint32_t r = 0; r < R; r++) {
        acc[r] = zero || r >= rows ? _mm512_setzero_ps()
                                   : _mm512_maskz_loadu_ps(m, c + r * ldc);
    }
    for (uint32_t kk = 0; kk < k; kk++) {
        __m512 bv = load16(b, dtype);

#pragma GCC unroll 16
        for (uint32_t r = 0; r < R; r++) {
            acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(ap[r]), bv, acc[r]);
        }
        ap += 16;
        b += b_row;
    }
#pragma GCC unroll 16
    for (uint32_t r = 0; r < R; r++) {
        if (r < rows) {
            _mm512_mask_storeu_ps(c + r * ldc, m, acc[r]);
        }
    }
}

static ALWAYS_INLINE AVX512_TARGET void tile512_rows(
    const float *ap, const uint8_t *b, size_t b_row, unsigned dtype, uint32_t k,
    float *c, size_t ldc, uint32_t rows, uint32_t cols, bool zero)
{
    if (rows <= 1) {
        tile512_body(ap, b, b_row, dtype, k, c, ldc, rows, cols, zero, 1);
    } else if (rows <= 2) {
        tile512_body(ap, b, b_row, dtype, k, c, ldc, rows, cols, zero, 2);
    } else if (rows <= 4) {
        tile512_body(ap, b, b_row, dtype, k, c, ldc, rows, cols, zero, 4);
    } else if (rows <= 8) {
        tile512_body(ap, b, b_row, dtype, k, c, ldc, rows, cols, zero, 8);
    } else {
        tile512_body(ap, b, b_row, dtype, k, c, ldc, rows, cols, zero, 16);
    }
}

static AVX512_TARGET void tile_avx512(const float *ap, const uint8_t *b,
                                      size_t b_row, unsigned dtype, uint32_t k,
                                      float *c, size_t ldc, uint32_t rows,
                                      uint32_t cols, bool zero)
{
    if (dtype == SPK_DT_FP16) {
        tile512_rows(ap, b, b_row, SPK_DT_FP16, k, c, ldc, rows, cols, zero);
    } else if (dtype == SPK_DT_BF16) {
        tile512_rows(ap, b, b_row, SPK_DT_BF16, k, c, ldc, rows, cols, zero);
    } else {
        tile512_rows(ap, b, b_row, SPK_DT_FP32, k, c, ldc, rows, cols, zero);
    }
}

/*
 * The accumulators of R rows x P column panels (acc[r * P + p]) from c, or
 * 0; the last panel has the columns in @last.
 */
static ALWAYS_INLINE AVX512_TARGET void acc_load(__m512 *acc, const float *c,
                                                 size_t ldc, uint32_t rows,
                                                 __mmask16 last, bool zero,
                                                 const uint32_t R,
                                                 const uint32_t P)
{
#pragma GCC unroll 16
    for (uint32_t r = 0; r < R; r++) {
#pragma GCC unroll 8
        for (uint32_t p = 0; p < P; p++) {
            acc[r * P + p] =
                zero || r >= rows
                    ? _mm512_setzero_ps()
                    : _mm512_maskz_loadu_ps(p == P - 1 ? last : 0xffff,
                                            c + r * ldc + p * 16);
        }
    }
}

static ALWAYS_INLINE AVX512_TARGET void acc_store(const __m512 *acc, float *c,
                                                  size_t ldc, uint32_t rows,
                                                  __mmask16 last,
                                                  const uint32_t R,
                                                  const uint32_t P)
{
#pragma GCC unroll 16
    for (uint32_t r = 0; r < R; r++) {
#pragma GCC unroll 8
        for (uint32_t p = 0; p < P; p++) {
            if (r < rows) {
                _mm512_mask_storeu_ps(c + r * ldc + p * 16,
                                      p == P - 1 ? last : 0xffff,
                                      acc[r * P + p]);
            }
        }
    }
}

/*
 * P column panels of R rows (R * P <= 16 zmm accumulators): a k step
 * converts P B vectors and does R * P independent FMAs, where one panel
 * of one or two rows would wait on the FMA latency every step.  Panel p's
 * B starts at b + p * b_panel, its C at c + p * 16; the last panel has
 * cols columns.  Each element's operations are tile512_body's.
 */
static ALWAYS_INLINE AVX512_TARGET void wide512_body(
    const float *ap, const uint8_t *b, size_t b_row, size_t b_panel,
    unsigned dtype, uint32_t k, float *c, size_t ldc, uint32_t rows,
    uint32_t cols, bool zero, const uint32_t R, const uint32_t P)
{
    __mmask16 last = cols >= 16 ? 0xffff : (__mmask16)((1u << cols) - 1);
    __m512 acc[16];

    acc_load(acc, c, ldc, rows, last, zero, R, P);
    for (uint32_t kk = 0; kk < k; kk++) {
        __m512 bv[8];

#pragma GCC unroll 8
        for (uint32_t p = 0; p < P; p++) {
            bv[p] = load16(b + p * b_panel, dtype);
        }
#pragma GCC unroll 16
        for (uint32_t r = 0; r < R; r++) {
            __m512 av = _mm512_set1_ps(ap[r]);

#pragma GCC unroll 8
            for (uint32_t p = 0; p < P; p++) {
                acc[r * P + p] = _mm512_fmadd_ps(av, bv[p], acc[r * P + p]);
            }
        }
        ap += 16;
        b += b_row;
    }
    acc_store(acc, c, ldc, rows, last, R, P);
}

/*
 * panels (2, 4 or 8, at most 16 / rows rounded up to 1, 2 or 4) full panels at
 * once.
 */
static AVX512_TARGET void wide_avx512(const float *ap, const uint8_t *b,
                                      size_t b_row, size_t b_panel,
                                      unsigned dtype, uint32_t k, float *c,
                                      size_t ldc, uint32_t rows,
                                      uint32_t panels, bool zero)
{
#define WIDE_RP(dt, R, P)                                                      \
    wide512_body(ap, b, b_row, b_panel, dt, k, c, ldc, rows, GEMM_NR, zero, R, \
                 P)
#define WIDE(dt)                           \
    do {                                   \
        if (rows <= 1 && panels == 8)      \
            WIDE_RP(dt, 1, 8);             \
        else if (rows <= 1 && panels == 4) \
            WIDE_RP(dt, 1, 4);             \
        else if (rows <= 1)                \
            WIDE_RP(dt, 1, 2);             \
        else if (rows <= 2 && panels == 4) \
            WIDE_RP(dt, 2, 4);             \
        else if (rows <= 2)                \
            WIDE_RP(dt, 2, 2);             \
        else if (panels == 4)              \
            WIDE_RP(dt, 4, 4);             \
        else                               \
            WIDE_RP(dt, 4, 2);             \
    } while (0)
    if (dtype == SPK_DT_FP16) {
        WIDE(SPK_DT_FP16);
    } else if (dtype == SPK_DT_BF16) {
        WIDE(SPK_DT_BF16);
    } else {
        WIDE(SPK_DT_FP32);
    }
#undef WIDE
#undef WIDE_RP
}

/*
 * bf16 on the AVX512-BF16 path.  A panel's pairs (kk, kk + 1) are 32-bit
 * words, so packing is packing a k / 2 column fp32 matrix (moves, no
 * conversion: the bits stay); an odd k's last column pairs with 0.
 */
static AVX2_TARGET void pack_bf16_pairs(const uint8_t *a, size_t a_row,
                                        uint32_t nrows, uint32_t k,
                                        float *dst)
{
    uint32_t pairs = k / 2;

    if (nrows == 16) {
        pack16_body(a, a_row, SPK_DT_FP32, pairs, dst);
    } else {
        pack_part_panel(a, a_row, SPK_DT_FP32, nrows, pairs, 16, dst);
    }
    if (k % 2) {
        float *last = dst + (size_t)pairs * 16;

        for (uint32_t r = 0; r < 16; r++) {
            uint16_t h = 0;
            uint32_t w;

            if (r < nrows) {
                memcpy(&h, a + r * a_row + 2 * (size_t)(k - 1), 2);
            }
            w = h;
            memcpy(last + r, &w, 4);
        }
    }
}

/*
 * B's rows kk and kk + 1 (16 bf16 each) as 16 pairs, row kk in the low
 * half of each 32-bit lane; a missing row kk + 1 (hi NULL) is 0.
 */
static ALWAYS_INLINE BF16_TARGET __m512i bf16_pairs(const uint8_t *lo,
                                                    const uint8_t *hi)
{
    const __m512i idx = _mm512_set_epi16(
        47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7,
        38, 6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
    __m512i l = _mm512_castsi256_si512(_mm256_loadu_si256((const void *)lo));

    if (!hi) {
        return _mm512_cvtepu16_epi32(_mm256_loadu_si256((const void *)lo));
    }
    return _mm512_permutex2var_epi16(
        l, idx, _mm512_castsi256_si512(_mm256_loadu_si256((const void *)hi)));
}

/* One pair step: R x P VDPBF16PS of A's pairs ap[r] by B's pairs bv[p]. */
static ALWAYS_INLINE BF16_TARGET void bf16_step(__m512 *acc, const float *ap,
                                                const __m512i bv[],
                                                const uint32_t R,
                                                const uint32_t P)
{
#pragma GCC unroll 16
    for (uint32_t r = 0; r < R; r++) {
        __m512bh av = (__m512bh)_mm512_set1_ps(ap[r]);

#pragma GCC unroll 8
        for (uint32_t p = 0; p < P; p++) {
            acc[r * P + p] =
                _mm512_dpbf16_ps(acc[r * P + p], av, (__m512bh)bv[p]);
        }
    }
}

/*
 * P column panels of R rows (R * P <= 16 accumulators; P = 1 is a plain
 * tile of up to 16 rows): a pair step builds P vectors of B pairs and does
 * R * P VDPBF16PS, each two multiply-adds a lane.
 */
static ALWAYS_INLINE BF16_TARGET void bf16_body(
    const float *ap, const uint8_t *b, size_t b_row, size_t b_panel,
    uint32_t k, float *c, size_t ldc, uint32_t rows, uint32_t cols,
    bool zero, const uint32_t R, const uint32_t P, const bool paired)
{
    __mmask16 last = cols >= 16 ? 0xffff : (__mmask16)((1u << cols) - 1);
    __m512 acc[16];
    uint32_t kk;

    acc_load(acc, c, ldc, rows, last, zero, R, P);
    if (paired) {
        /* B already in pairs (gemm_pack_b_pairs): one load a panel. */
        for (kk = 0; kk < k; kk += 2) {
            __m512i bv[8];

#pragma GCC unroll 8
            for (uint32_t p = 0; p < P; p++) {
                bv[p] = _mm512_loadu_si512((const void *)(b + p * b_panel));
            }
            bf16_step(acc, ap, bv, R, P);
            ap += 16;
            b += b_row;
        }
        acc_store(acc, c, ldc, rows, last, R, P);
        return;
    }
    for (kk = 0; kk + 2 <= k; kk += 2) {
        __m512i bv[8];

#pragma GCC unroll 8
        for (uint32_t p = 0; p < P; p++) {
            bv[p] = bf16_pairs(b + p * b_panel, b + p * b_panel + b_row);
        }
        bf16_step(acc, ap, bv, R, P);
        ap += 16;
        b += 2 * b_row;
    }
    if (kk < k) {
#pragma GCC unroll 8
        for (uint32_t p = 0; p < P; p++) {
            __m512bh bv = (__m512bh)bf16_pairs(b + p * b_panel, NULL);

#pragma GCC unroll 16
            for (uint32_t r = 0; r < R; r++) {
                acc[r * P + p] = _mm512_dpbf16_ps(
                    acc[r * P + p], (__m512bh)_mm512_set1_ps(ap[r]), bv);
            }
        }
    }
    acc_store(acc, c, ldc, rows, last, R, P);
}

static BF16_TARGET void tile_bf16(const float *ap, const uint8_t *b,
                                  size_t b_row, uint32_t k, float *c,
                                  size_t ldc, uint32_t rows, uint32_t cols,
                                  bool zero, bool paired)
{
#define TILE_R(R)                                                            \
    do {                                                                     \
        if (paired)                                                          \
            bf16_body(ap, b, b_row, 0, k, c, ldc, rows, cols, zero, R, 1,    \
                      true);                                                 \
        else                                                                 \
            bf16_body(ap, b, b_row, 0, k, c, ldc, rows, cols, zero, R, 1,    \
                      false);                                                \
    } while (0)
    if (rows <= 1) {
        TILE_R(1);
    } else if (rows <= 2) {
        TILE_R(2);
    } else if (rows <= 4) {
        TILE_R(4);
    } else if (rows <= 8) {
        TILE_R(8);
    } else {
        TILE_R(16);
    }
#undef TILE_R
}

/* Full panels several at a time, as wide_avx512. */
static BF16_TARGET void wide_bf16(const float *ap, const uint8_t *b,
                                  size_t b_row, size_t b_panel, uint32_t k,
                                  float *c, size_t ldc, uint32_t rows,
                                  uint32_t panels, bool zero, bool paired)
{
#define WIDE_RP(R, P)                                                        \
    do {                                                                     \
        if (paired)                                                          \
            bf16_body(ap, b, b_row, b_panel, k, c, ldc, rows, GEMM_NR, zero, \
                      R, P, true);                                           \
        else                                                                 \
            bf16_body(ap, b, b_row, b_panel, k, c, ldc, rows, GEMM_NR, zero, \
                      R, P, false);                                          \
    } while (0)
    if (rows <= 1 && panels == 8) {
        WIDE_RP(1, 8);
    } else if (rows <= 1 && panels == 4) {
        WIDE_RP(1, 4);
    } else if (rows <= 1) {
        WIDE_RP(1, 2);
    } else if (rows <= 2 && panels == 4) {
        WIDE_RP(2, 4);
    } else if (rows <= 2) {
        WIDE_RP(2, 2);
    } else if (panels == 4) {
        WIDE_RP(4, 4);
    } else {
        WIDE_RP(4, 2);
    }
#undef WIDE_RP
}

/*
 * A full-width panel pair of up to 16 rows as two halves of 8 rows x 32
 * columns (16 accumulators each): a k step loads two B vectors and
 * broadcasts 8 A values for 16 FMAs, where a 16 x 16 tile loads 17 values
 * for 16.  Each element's operations are tile512_body's.
 */
static AVX512_TARGET void halves_avx512(const float *ap, const uint8_t *b,
                                        size_t b_row, size_t b_panel,
                                        unsigned dtype, uint32_t k, float *c,
                                        size_t ldc, uint32_t rows, bool zero)
{
    uint32_t top = rows < 8 ? rows : 8;

#define HALVES(dt)                                                            \
    do {                                                                      \
        wide512_body(ap, b, b_row, b_panel, dt, k, c, ldc, top, GEMM_NR,      \
                     zero, 8, 2);                                             \
        if (rows > 8)                                                         \
            wide512_body(ap + 8, b, b_row, b_panel, dt, k, c + 8 * ldc, ldc,  \
                         rows - 8, GEMM_NR, zero, 8, 2);                      \
    } while (0)
    if (dtype == SPK_DT_FP16) {
        HALVES(SPK_DT_FP16);
    } else if (dtype == SPK_DT_BF16) {
        HALVES(SPK_DT_BF16);
    } else {
        HALVES(SPK_DT_FP32);
    }
#undef HALVES
}

/* Up to 8 rows x 2 panels, B in pairs or not (a constant in each body). */
static ALWAYS_INLINE BF16_TARGET void half_bf16(
    const float *ap, const uint8_t *b, size_t b_row, size_t b_panel,
    uint32_t k, float *c, size_t ldc, uint32_t rows, bool zero, bool paired)
{
    if (paired) {
        bf16_body(ap, b, b_row, b_panel, k, c, ldc, rows, GEMM_NR, zero, 8, 2,
                  true);
    } else {
        bf16_body(ap, b, b_row, b_panel, k, c, ldc, rows, GEMM_NR, zero, 8, 2,
                  false);
    }
}

static BF16_TARGET void halves_bf16(const float *ap, const uint8_t *b,
                                    size_t b_row, size_t b_panel, uint32_t k,
                                    float *c, size_t ldc, uint32_t rows,
                                    bool zero, bool paired)
{
    half_bf16(ap, b, b_row, b_panel, k, c, ldc, rows < 8 ? rows : 8, zero,
              paired);
    if (rows > 8) {
        half_bf16(ap + 8, b, b_row, b_panel, k, c + 8 * ldc, ldc, rows - 8,
                  zero, paired);
    }
}

/* B's pair steps pair0 .. pair1 - 1 of `panels` panels, as gemm.h says. */
static BF16_TARGET void pack_b_pairs_bf16(const uint8_t *b, size_t b_row,
                                          uint32_t k, uint32_t panels,
                                          uint32_t pair0, uint32_t pair1,
                                          uint8_t *dst, size_t dst_panel)
{
    for (uint32_t i = pair0; i < pair1; i++) {
        const uint8_t *lo = b + 2 * (size_t)i * b_row;
        const uint8_t *hi = 2 * i + 1 < k ? lo + b_row : NULL;

        for (uint32_t p = 0; p < panels; p++) {
            _mm512_storeu_si512(
                (void *)(dst + p * dst_panel + (size_t)i * 64),
                bf16_pairs(lo + p * 32, hi ? hi + p * 32 : NULL));
        }
    }
}

/* The AVX2 tile: 6 rows x 16 columns, two ymm a row. */
static ALWAYS_INLINE AVX2_TARGET void tile256_body(
    const float *ap, const uint8_t *b, size_t b_row, unsigned dtype, uint32_t k,
    float *c, size_t ldc, uint32_t rows, uint32_t cols, bool zero)
{
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)cols), lane);
    __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)cols - 8), lane);
    size_t half = 8 * elem_size(dtype);
    __m256 acc[6][2];

#pragma GCC unroll 6
    for (uint32_t r = 0; r < 6; r++) {
        bool load = !zero && r < rows;

        acc[r][0] =
            load ? _mm256_maskload_ps(c + r * ldc, m0) : _mm256_setzero_ps();
        acc[r][1] = load ? _mm256_maskload_ps(c + r * ldc + 8, m1)
                         : _mm256_setzero_ps();
    }
    for (uint32_t kk = 0; kk < k; kk++) {
        __m256 b0 = load8(b, dtype), b1 = load8(b + half, dtype);

#pragma GCC unroll 6
        for (uint32_t r = 0; r < 6; r++) {
            __m256 av = _mm256_broadcast_ss(ap + r);

            acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
            acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
        }
        ap += 6;
        b += b_row;
    }
#pragma GCC unroll 6
    for (uint32_t r = 0; r < 6; r++) {
        if (r < rows) {
            _mm256_maskstore_ps(c + r * ldc, m0, acc[r][0]);
            _mm256_maskstore_ps(c + r * ldc + 8, m1, acc[r][1]);
        }
    }
}

static AVX2_TARGET void tile_avx2(const float *ap, const uint8_t *b,
                                  size_t b_row, unsigned dtype, uint32_t k,
                                  float *c, size_t ldc, uint32_t rows,
                                  uint32_t cols, bool zero)
{
    if (dtype == SPK_DT_FP16) {
        tile256_body(ap, b, b_row, SPK_DT_FP16, k, c, ldc, rows, cols, zero);
    } else if (dtype == SPK_DT_BF16) {
        tile256_body(ap, b, b_row, SPK_DT_BF16, k, c, ldc, rows, cols, zero);
    } else {
        tile256_body(ap, b, b_row, SPK_DT_FP32, k, c, ldc, rows, cols, zero);
    }
}

static __attribute__((target("f16c,avx"))) void fp16_to_f32_f16c(
    const uint8_t *src, float *dst, size_t n)
{
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                      (const void *)(src + 2 * i))));
    }
    for (; i < n; i++) {
        uint16_t h;

        memcpy(&h, src + 2 * i, 2);
        dst[i] = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
    }
}

/* Every AVX2 CPU has F16C (and clang 14 cannot test "f16c" here). */
static bool have_avx2(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

enum gemm_isa gemm_isa_supported(void)
{
#ifdef X86_HAVE_SIMD
    if (have_avx2()) {
        if (!__builtin_cpu_supports("avx512f")) {
            return GEMM_AVX2;
        }
        return __builtin_cpu_supports("avx512bw") &&
                       __builtin_cpu_supports("avx512bf16")
                   ? GEMM_AVX512_BF16
                   : GEMM_AVX512;
    }
#endif
    return GEMM_PORTABLE;
}

enum gemm_isa gemm_isa(bool simd)
{
    enum gemm_isa isa = simd ? gemm_isa_supported() : GEMM_PORTABLE;
    const char *want = getenv("SPYRE_ENGINE_ISA");

    for (int i = 0; want && i < (int)isa; i++) {
        if (!strcmp(want, isa_names[i])) {
            return (enum gemm_isa)i;
        }
    }
    return isa;
}

const char *gemm_isa_name(enum gemm_isa isa)
{
    return isa < GEMM_ISA_COUNT ? isa_names[isa] : "?";
}

unsigned gemm_mr(enum gemm_isa isa)
{
    return isa_mr[isa];
}

void gemm_pack_a(enum gemm_isa isa, const uint8_t *a, size_t a_row,
                 unsigned dtype, uint32_t rows, uint32_t k, uint32_t p0,
                 uint32_t p1, float *dst)
{
    unsigned mr = isa_mr[isa];

    for (uint32_t p = p0; p < p1; p++) {
        float *d = dst + (size_t)p * k * mr;

#ifdef X86_HAVE_SIMD
        if (isa == GEMM_AVX512_BF16 && dtype == SPK_DT_BF16) {
            uint32_t left = rows > p * mr ? rows - p * mr : 0;

            pack_bf16_pairs(a + (size_t)p * mr * a_row, a_row,
                            left < mr ? left : mr, k, d);
            continue;
        }
        if (isa != GEMM_PORTABLE && (p + 1) * mr <= rows) {
            pack_full_panel(isa, a + (size_t)p * mr * a_row, a_row, dtype, k,
                            d);
            continue;
        }
        if (isa != GEMM_PORTABLE && p * mr < rows) {
            pack_part_panel(a + (size_t)p * mr * a_row, a_row, dtype,
                            rows - p * mr, k, mr, d);
            continue;
        }
#endif
        pack_a_portable(a, a_row, dtype, rows, k, p, mr, d, 0);
    }
}

void gemm_tile(enum gemm_isa isa, const float *ap, const uint8_t *b,
               size_t b_row, unsigned dtype, uint32_t k, float *c, size_t ldc,
               uint32_t rows, uint32_t cols, bool zero, bool b_pairs)
{
#ifdef X86_HAVE_SIMD
    if (isa == GEMM_AVX512_BF16 && dtype == SPK_DT_BF16) {
        tile_bf16(ap, b, b_row, k, c, ldc, rows, cols, zero, b_pairs);
        return;
    }
    if (isa >= GEMM_AVX512) {
        tile_avx512(ap, b, b_row, dtype, k, c, ldc, rows, cols, zero);
        return;
    }
    if (isa == GEMM_AVX2) {
        tile_avx2(ap, b, b_row, dtype, k, c, ldc, rows, cols, zero);
        return;
    }
#endif
    tile_portable(ap, b, b_row, dtype, k, c, ldc, rows, cols, zero);
}

void gemm_tiles(enum gemm_isa isa, const float *ap, const uint8_t *b,
                size_t b_row, size_t b_panel, unsigned dtype, uint32_t k,
                float *c, size_t ldc, uint32_t rows, uint32_t panels,
                uint32_t cols, bool zero, bool b_pairs)
{
    uint32_t p = 0;

#ifdef X86_HAVE_SIMD
    if (isa >= GEMM_AVX512 && rows <= GEMM_WIDE_ROWS) {
        /* Full panels in groups of 8, 4 or 2 (as many as fit 16 registers). */
        uint32_t full = cols == GEMM_NR ? panels : panels - 1;

        while (full - p >= 2) {
            uint32_t group = rows <= 1 && full - p >= 8 ? 8
                             : full - p >= 4            ? 4
                                                        : 2;

            if (isa == GEMM_AVX512_BF16 && dtype == SPK_DT_BF16) {
                wide_bf16(ap, b + p * b_panel, b_row, b_panel, k,
                          c + p * GEMM_NR, ldc, rows, group, zero, b_pairs);
            } else {
                wide_avx512(ap, b + p * b_panel, b_row, b_panel, dtype, k,
                            c + p * GEMM_NR, ldc, rows, group, zero);
            }
            p += group;
        }
    }
    if (isa >= GEMM_AVX512 && rows > GEMM_WIDE_ROWS) {
        uint32_t full = cols == GEMM_NR ? panels : panels - 1;

        for (; full - p >= 2; p += 2) {
            if (isa == GEMM_AVX512_BF16 && dtype == SPK_DT_BF16) {
                halves_bf16(ap, b + p * b_panel, b_row, b_panel, k,
                            c + p * GEMM_NR, ldc, rows, zero, b_pairs);
            } else {
                halves_avx512(ap, b + p * b_panel, b_row, b_panel, dtype, k,
                              c + p * GEMM_NR, ldc, rows, zero);
            }
        }
    }
#endif
    for (; p < panels; p++) {
        gemm_tile(isa, ap, b + p * b_panel, b_row, dtype, k, c + p * GEMM_NR,
                  ldc, rows, p == panels - 1 ? cols : GEMM_NR, zero, b_pairs);
    }
}

void gemm_pack_b_pairs(const uint8_t *b, size_t b_row, uint32_t k,
                       uint32_t panels, uint32_t pair0, uint32_t pair1,
                       uint8_t *dst, size_t dst_panel)
{
#ifdef X86_HAVE_SIMD
    if (gemm_isa_supported() == GEMM_AVX512_BF16) {
        pack_b_pairs_bf16(b, b_row, k, panels, pair0, pair1, dst, dst_panel);
        return;
    }
#endif
    for (uint32_t i = pair0; i < pair1; i++) {
        for (uint32_t p = 0; p < panels; p++) {
            uint8_t *d = dst + p * dst_panel + (size_t)i * 64;

            for (uint32_t j = 0; j < GEMM_NR; j++) {
                const uint8_t *lo =
                    b + 2 * (size_t)i * b_row + (p * GEMM_NR + j) * 2;

                memcpy(d + 4 * j, lo, 2);
                if (2 * i + 1 < k) {
                    memcpy(d + 4 * j + 2, lo + b_row, 2);
                } else {
                    memset(d + 4 * j + 2, 0, 2);
                }
            }
        }
    }
}

bool simd_fp16_to_f32(const void *src, float *dst, size_t n)
{
#ifdef X86_HAVE_SIMD
    if (__builtin_cpu_supports("avx2")) {
        fp16_to_f32_f16c(src, dst, n);
        return true;
    }
#endif
    (void)src;
    (void)dst;
    (void)n;
    return false;
}
