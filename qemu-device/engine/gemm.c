// SPDX-License-Identifier: MIT
/*
 * GEMM kernels (gemm.h).  The x86 paths are compiled with target
 * attributes and picked at run time, so the library still builds with
 * plain -std=c11 for any x86-64 and runs on CPUs without AVX.
 *
 * Register blocking: 8 rows x 32 columns of C (AVX-512) or 4 x 16 (AVX2)
 * stay in registers across a block of k; C goes back to memory between k
 * blocks, which changes no result because each element still sees its
 * fused multiply-adds in ascending k.
 */
#include <math.h>
#include <string.h>

#include "gemm.h"

#define K_BLOCK	256	/* keeps a B panel in L2 */

/* Portable: one fused multiply-add per step (glibc uses the FMA unit if any). */
static void gemm_portable(const float *a, size_t lda, const float *b, size_t ldb, float *c,
			  size_t ldc, uint32_t rows, uint32_t k0, uint32_t k1, uint32_t j0,
			  uint32_t n)
{
	for (uint32_t i = 0; i < rows; i++)
		for (uint32_t kk = k0; kk < k1; kk++) {
			float av = a[i * lda + kk];

			for (uint32_t j = j0; j < n; j++)
				c[i * ldc + j] = fmaf(av, b[kk * ldb + j], c[i * ldc + j]);
		}
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define X86_HAVE_SIMD 1

__attribute__((target("avx512f")))
static void gemm_avx512_block(const float *a, size_t lda, const float *b, size_t ldb, float *c,
			      size_t ldc, uint32_t rows, uint32_t k0, uint32_t k1, uint32_t j,
			      __mmask16 m0, __mmask16 m1)
{
	__m512 acc[8][2];

	for (uint32_t r = 0; r < rows; r++) {
		acc[r][0] = _mm512_maskz_loadu_ps(m0, c + r * ldc + j);
		acc[r][1] = _mm512_maskz_loadu_ps(m1, c + r * ldc + j + 16);
	}
	if (rows == 8) {
		for (uint32_t kk = k0; kk < k1; kk++) {
			__m512 b0 = _mm512_maskz_loadu_ps(m0, b + kk * ldb + j);
			__m512 b1 = _mm512_maskz_loadu_ps(m1, b + kk * ldb + j + 16);

			for (uint32_t r = 0; r < 8; r++) {
				__m512 av = _mm512_set1_ps(a[r * lda + kk]);

				acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
				acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
			}
		}
	} else {
		for (uint32_t kk = k0; kk < k1; kk++) {
			__m512 b0 = _mm512_maskz_loadu_ps(m0, b + kk * ldb + j);
			__m512 b1 = _mm512_maskz_loadu_ps(m1, b + kk * ldb + j + 16);

			for (uint32_t r = 0; r < rows; r++) {
				__m512 av = _mm512_set1_ps(a[r * lda + kk]);

				acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
				acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
			}
		}
	}
	for (uint32_t r = 0; r < rows; r++) {
		_mm512_mask_storeu_ps(c + r * ldc + j, m0, acc[r][0]);
		_mm512_mask_storeu_ps(c + r * ldc + j + 16, m1, acc[r][1]);
	}
}

__attribute__((target("avx512f")))
static void gemm_avx512(const float *a, size_t lda, const float *b, size_t ldb, float *c,
			size_t ldc, uint32_t rows, uint32_t k0, uint32_t k1, uint32_t n)
{
	for (uint32_t i = 0; i < rows; i += 8) {
		uint32_t r = rows - i < 8 ? rows - i : 8;

		for (uint32_t j = 0; j < n; j += 32) {
			uint32_t left = n - j;
			__mmask16 m0 = left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1);
			__mmask16 m1 = left >= 32 ? 0xffff :
				       left <= 16 ? 0 : (__mmask16)((1u << (left - 16)) - 1);

			gemm_avx512_block(a + i * lda, lda, b, ldb, c + i * ldc, ldc, r, k0, k1, j,
					  m0, m1);
		}
	}
}

__attribute__((target("avx2,fma")))
static void gemm_avx2(const float *a, size_t lda, const float *b, size_t ldb, float *c,
		      size_t ldc, uint32_t rows, uint32_t k0, uint32_t k1, uint32_t n)
{
	uint32_t n16 = n & ~15u, i = 0;

	for (; i + 4 <= rows; i += 4) {
		for (uint32_t j = 0; j < n16; j += 16) {
			__m256 acc[4][2];

			for (uint32_t r = 0; r < 4; r++) {
				acc[r][0] = _mm256_loadu_ps(c + (i + r) * ldc + j);
				acc[r][1] = _mm256_loadu_ps(c + (i + r) * ldc + j + 8);
			}
			for (uint32_t kk = k0; kk < k1; kk++) {
				__m256 b0 = _mm256_loadu_ps(b + kk * ldb + j);
				__m256 b1 = _mm256_loadu_ps(b + kk * ldb + j + 8);

				for (uint32_t r = 0; r < 4; r++) {
					__m256 av = _mm256_set1_ps(a[(i + r) * lda + kk]);

					acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
					acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
				}
			}
			for (uint32_t r = 0; r < 4; r++) {
				_mm256_storeu_ps(c + (i + r) * ldc + j, acc[r][0]);
				_mm256_storeu_ps(c + (i + r) * ldc + j + 8, acc[r][1]);
			}
		}
	}
	/* Leftover rows and columns: the same operations, one at a time. */
	gemm_portable(a + i * lda, lda, b, ldb, c + i * ldc, ldc, rows - i, k0, k1, 0, n16);
	gemm_portable(a, lda, b, ldb, c, ldc, rows, k0, k1, n16, n);
}

__attribute__((target("f16c,avx")))
static void fp16_to_f32_f16c(const uint8_t *src, float *dst, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(dst + i,
				 _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + 2 * i))));
	for (; i < n; i++) {
		uint16_t h;

		memcpy(&h, src + 2 * i, 2);
		dst[i] = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
	}
}
#endif

void gemm_f32(const float *a, size_t lda, const float *b, size_t ldb, float *c, size_t ldc,
	      uint32_t rows, uint32_t k, uint32_t n, bool simd)
{
	for (uint32_t k0 = 0; k0 < k; k0 += K_BLOCK) {
		uint32_t k1 = k - k0 < K_BLOCK ? k : k0 + K_BLOCK;

#ifdef X86_HAVE_SIMD
		if (simd && __builtin_cpu_supports("avx512f")) {
			gemm_avx512(a, lda, b, ldb, c, ldc, rows, k0, k1, n);
			continue;
		}
		if (simd && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
			gemm_avx2(a, lda, b, ldb, c, ldc, rows, k0, k1, n);
			continue;
		}
#endif
		(void)simd;
		gemm_portable(a, lda, b, ldb, c, ldc, rows, k0, k1, 0, n);
	}
}

bool simd_fp16_to_f32(const void *src, float *dst, size_t n)
{
#ifdef X86_HAVE_SIMD
	/* Every AVX2 CPU has F16C (and clang 14 cannot test "f16c" here). */
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
