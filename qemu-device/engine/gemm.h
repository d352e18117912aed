/* SPDX-License-Identifier: MIT */
/*
 * The fp32 GEMM inner kernel of the matmul op:
 *   for every i < rows, j < n, in ascending kk < k:
 *     c[i][j] = fma(a[i][kk], b[kk][j], c[i][j])
 * Every path (AVX-512, AVX2+FMA, portable fmaf) performs exactly these
 * fused operations in this order, so results are bit-identical whatever
 * the CPU, the vector width, the blocking or the number of threads.
 */
#ifndef SPYRE_ENGINE_GEMM_H
#define SPYRE_ENGINE_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Strides in floats.  simd = false forces the portable path (for tests). */
void gemm_f32(const float *a, size_t lda, const float *b, size_t ldb, float *c, size_t ldc,
	      uint32_t rows, uint32_t k, uint32_t n, bool simd);

/* fp16 -> fp32 of n values with F16C when the CPU has it; false if it does not. */
bool simd_fp16_to_f32(const void *src, float *dst, size_t n);

#endif /* SPYRE_ENGINE_GEMM_H */
