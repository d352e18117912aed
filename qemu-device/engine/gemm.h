/* SPDX-License-Identifier: MIT */
/*
 * The matmul op's GEMM.  A is packed into fp32 panels of MR rows
 * (converting fp16/bf16 exactly at pack time); B is read where it lies (or
 * where the matmul op copied it, matmul.c), converted in registers (F16C
 * on x86); a register-blocked kernel updates MR x NR tiles of the fp32
 * accumulator:
 *   for every i, j of the tile, in ascending kk:
 *     c[i][j] = fma(a[i][kk], b[kk][j], c[i][j])
 * Every path (AVX-512 16x16 and 8x32, AVX2+FMA 6x16, portable fmaf 16x16)
 * performs exactly these fused operations in this order, and conversion is
 * exact (fp16 and bf16 are subsets of fp32), so results are bit-identical
 * whatever the CPU, the path, the blocking or the number of threads.
 *
 * One exception, for speed: bf16 on the AVX512-BF16 path.  There A is
 * packed as bf16 pairs (k, k + 1) and each VDPBF16PS adds a pair's two
 * products to c, the k + 1 one first, with denormal inputs and results
 * flushed to zero (the instruction's rules); each product is exact and
 * each addition rounded, as an FMA's, so a result differs from the other
 * paths' only by the order within pairs and by flushed denormals (within
 * the matmul tolerance, docs/engine.md "Host kernels").  fp16 and fp32 on
 * that path are the AVX-512 path's.
 */
#ifndef SPYRE_ENGINE_GEMM_H
#define SPYRE_ENGINE_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Kernel paths, slowest first. */
enum gemm_isa {
    GEMM_PORTABLE, /* C fmaf, any host */
    GEMM_AVX2,     /* AVX2 + FMA + F16C */
    GEMM_AVX512,   /* AVX-512F (+ F16C) */
    GEMM_AVX512_BF16, /* AVX-512F + AVX512_BF16: bf16 by VDPBF16PS */
    GEMM_ISA_COUNT
};

#define GEMM_MR_MAX 16 /* the largest MR of any path */
#define GEMM_NR 16     /* columns of a tile, every path */

/*
 * The path a firing uses: the best the CPU has, GEMM_PORTABLE when simd is
 * false, and no better than the environment variable SPYRE_ENGINE_ISA
 * ("portable", "avx2", "avx512" or "avx512bf16") asks for, so tests can run every path
 * on one machine.  Read at every call (once per matmul firing).
 */
enum gemm_isa gemm_isa(bool simd);

/* The best path this CPU supports. */
enum gemm_isa gemm_isa_supported(void);

/* Name of a path ("portable", "avx2", "avx512", "avx512bf16"). */
const char *gemm_isa_name(enum gemm_isa isa);

/* Rows of an A panel (and of a tile) on a path. */
unsigned gemm_mr(enum gemm_isa isa);

/*
 * Floats gemm_pack_a needs for a rows x k matrix on any path (panels round rows
 * up).
 */
static inline size_t gemm_pack_floats(uint32_t rows, uint32_t k)
{
    return ((size_t)rows + GEMM_MR_MAX - 1) * k;
}

/*
 * Pack A panels p0 .. p1 - 1 (MR = gemm_mr(isa) rows each) of a rows x k
 * matrix whose row r starts at a + r * a_row (dtype SPK_DT_*): panel p's
 * element (r, kk) goes to dst[p * k * MR + kk * MR + r]; rows past `rows`
 * are 0.  (bf16 on GEMM_AVX512_BF16: the 32-bit word
 * dst[p * k * MR + kk / 2 * MR + r] holds elements kk and kk + 1 as bf16,
 * the second 0 past k.)
 */
void gemm_pack_a(enum gemm_isa isa, const uint8_t *a, size_t a_row,
                 unsigned dtype, uint32_t rows, uint32_t k, uint32_t p0,
                 uint32_t p1, float *dst);

/*
 * One tile: c[r][j] for r < rows <= MR, j < cols <= NR (row stride ldc
 * floats) accumulates ap (a packed A panel, k x MR) times B, whose row kk
 * starts at b + kk * b_row (dtype SPK_DT_*; NR elements readable from b in
 * every row, as sticks pad rows).  zero: start from 0 instead of c.
 * b_pairs (bf16 on GEMM_AVX512_BF16 only): B is in gemm_pack_b_pairs'
 * layout, pair step i at b + i * b_row.
 */
void gemm_tile(enum gemm_isa isa, const float *ap, const uint8_t *b,
               size_t b_row, unsigned dtype, uint32_t k, float *c, size_t ldc,
               uint32_t rows, uint32_t cols, bool zero, bool b_pairs);

/*
 * bf16 B for GEMM_AVX512_BF16, packed once so that no tile interleaves it:
 * rows 2i and 2i + 1 of panels 0 .. panels - 1 (row kk at b + kk * b_row,
 * panel p's columns from p * NR) become, for pair steps i = pair0 ..
 * pair1 - 1, 16 32-bit words of (row 2i, row 2i + 1) elements at
 * dst + p * dst_panel + i * 64; a row 2i + 1 at or past k is 0.
 */
void gemm_pack_b_pairs(const uint8_t *b, size_t b_row, uint32_t k,
                       uint32_t panels, uint32_t pair0, uint32_t pair1,
                       uint8_t *dst, size_t dst_panel);

/*
 * gemm_tile over `panels` column panels of one A panel: panel p's B
 * starts at b + p * b_panel and its C at c + p * NR; the last panel has
 * cols (<= NR) columns, the others NR.  For rows <= GEMM_WIDE_ROWS the
 * AVX-512 path computes several panels at once (a tile of one or two rows
 * alone waits on the FMA latency); the operations on each element, so
 * the results, are gemm_tile's.
 */
#define GEMM_WIDE_ROWS 4
void gemm_tiles(enum gemm_isa isa, const float *ap, const uint8_t *b,
                size_t b_row, size_t b_panel, unsigned dtype, uint32_t k,
                float *c, size_t ldc, uint32_t rows, uint32_t panels,
                uint32_t cols, bool zero, bool b_pairs);

/*
 * fp16 -> fp32 of n values with F16C when the CPU has it; false if it does not.
 */
bool simd_fp16_to_f32(const void *src, float *dst, size_t n);

#endif /* SPYRE_ENGINE_GEMM_H */
