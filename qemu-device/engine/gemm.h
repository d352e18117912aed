/* SPDX-License-Identifier: MIT */
/*
 * The matmul op's GEMM, BLIS style: A and B are packed into fp32 panels
 * (converting fp16/bf16 at pack time, with F16C where the CPU has it) and a
 * register-blocked kernel updates MR x NR tiles of the fp32 accumulator:
 *   for every i, j of the tile, in ascending kk:
 *     c[i][j] = fma(a[i][kk], b[kk][j], c[i][j])
 * Every path (AVX-512, AVX2+FMA, portable fmaf) performs exactly these
 * fused operations in this order, and packing converts exactly (fp16 and
 * bf16 are subsets of fp32), so results are bit-identical whatever the
 * CPU, the vector width, the blocking or the number of threads.
 */
#ifndef SPYRE_ENGINE_GEMM_H
#define SPYRE_ENGINE_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GEMM_MR	8	/* rows of a tile */
#define GEMM_NR	32	/* columns of a tile */
#define GEMM_KC	512	/* k per packed B panel: 64 KiB, stays in L2 */

/*
 * Pack A panels p0 .. p1 - 1 (MR rows each) of a rows x k matrix whose
 * row r starts at a + r * a_row (dtype SPK_DT_*): panel p's element
 * (r, kk) goes to dst[p * k * MR + kk * MR + r]; rows past `rows` are 0.
 */
void gemm_pack_a(const uint8_t *a, size_t a_row, unsigned dtype, uint32_t rows, uint32_t k,
		 uint32_t p0, uint32_t p1, float *dst, bool simd);

/*
 * Pack rows k0 .. k1 - 1 and columns j0 .. j0 + NR - 1 of B (row kk at
 * b + kk * b_row; rows padded to whole sticks, so NR columns from a j0
 * below n are readable) to dst[(kk - k0) * NR + j]; columns >= n are 0.
 */
void gemm_pack_b(const uint8_t *b, size_t b_row, unsigned dtype, uint32_t k0, uint32_t k1,
		 uint32_t j0, uint32_t n, float *dst, bool simd);

/*
 * c[r][j] for r < rows <= MR, j < cols <= NR (row stride ldc floats)
 * accumulates ap (kc x MR, a packed A panel from its k0) times bp (kc x NR).
 */
void gemm_tile(const float *ap, const float *bp, uint32_t kc, float *c, size_t ldc,
	       uint32_t rows, uint32_t cols, bool simd);

/* fp16 -> fp32 of n values with F16C when the CPU has it; false if it does not. */
bool simd_fp16_to_f32(const void *src, float *dst, size_t n);

#endif /* SPYRE_ENGINE_GEMM_H */
