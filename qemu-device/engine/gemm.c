// SPDX-License-Identifier: MIT
/*
 * GEMM packing and tile kernels (gemm.h).  The x86 paths are compiled with
 * target attributes and picked at run time, so the library still builds
 * with plain -std=c11 for any x86-64 and runs on CPUs without AVX.
 *
 * Tiles: MR x NR = 8 x 32 of C.  AVX-512 keeps all of it in 16 registers
 * for the whole k block; AVX2+FMA works on it as four 4 x 16 quarters.
 */
#include <math.h>
#include <string.h>

#include "dtype.h"
#include "gemm.h"
#include "spyre_program.h"

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

static void pack_a_portable(const uint8_t *a, size_t a_row, unsigned dtype, uint32_t rows,
			    uint32_t k, uint32_t p, float *dst, uint32_t kk0)
{
	for (uint32_t kk = kk0; kk < k; kk++)
		for (uint32_t r = 0; r < GEMM_MR; r++) {
			uint32_t row = p * GEMM_MR + r;

			dst[(size_t)kk * GEMM_MR + r] =
				row < rows ? load_elem(a + row * a_row, dtype, kk) : 0.0f;
		}
}

static void pack_b_portable(const uint8_t *b, size_t b_row, unsigned dtype, uint32_t k0,
			    uint32_t k1, uint32_t j0, uint32_t n, float *dst)
{
	for (uint32_t kk = k0; kk < k1; kk++)
		for (uint32_t j = 0; j < GEMM_NR; j++)
			dst[(size_t)(kk - k0) * GEMM_NR + j] =
				j0 + j < n ? load_elem(b + kk * b_row, dtype, j0 + j) : 0.0f;
}

static void tile_portable(const float *ap, const float *bp, uint32_t kc, float *c, size_t ldc,
			  uint32_t rows, uint32_t cols)
{
	for (uint32_t r = 0; r < rows; r++)
		for (uint32_t j = 0; j < cols; j++) {
			float v = c[r * ldc + j];

			for (uint32_t kk = 0; kk < kc; kk++)
				v = fmaf(ap[(size_t)kk * GEMM_MR + r], bp[(size_t)kk * GEMM_NR + j], v);
			c[r * ldc + j] = v;
		}
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define X86_HAVE_SIMD 1

/* 8 elements of dtype from p as fp32, exactly. */
__attribute__((target("avx2,f16c")))
static inline __m256 load8(const uint8_t *p, unsigned dtype)
{
	if (dtype == SPK_DT_FP32)
		return _mm256_loadu_ps((const float *)(const void *)p);
	if (dtype == SPK_DT_FP16)
		return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p));
	return _mm256_castsi256_ps(_mm256_slli_epi32(
		_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)p)), 16));
}

/* A panel: 8 rows x 8 k at a time, transposed in registers. */
__attribute__((target("avx2,f16c")))
static void pack_a_avx2(const uint8_t *a, size_t a_row, unsigned dtype, uint32_t rows,
			uint32_t k, uint32_t p, float *dst)
{
	size_t esz = dtype == SPK_DT_FP32 ? 4 : 2;
	uint32_t k8 = k & ~7u;

	if (p * GEMM_MR + GEMM_MR > rows) {
		pack_a_portable(a, a_row, dtype, rows, k, p, dst, 0);
		return;
	}
	for (uint32_t kk = 0; kk < k8; kk += 8) {
		__m256 v[8], t[8];

		for (int r = 0; r < 8; r++)
			v[r] = load8(a + (size_t)(p * GEMM_MR + r) * a_row + kk * esz, dtype);
		for (int r = 0; r < 8; r += 2) {
			t[r] = _mm256_unpacklo_ps(v[r], v[r + 1]);
			t[r + 1] = _mm256_unpackhi_ps(v[r], v[r + 1]);
		}
		for (int r = 0; r < 8; r += 4) {
			v[r] = _mm256_shuffle_ps(t[r], t[r + 2], 0x44);
			v[r + 1] = _mm256_shuffle_ps(t[r], t[r + 2], 0xee);
			v[r + 2] = _mm256_shuffle_ps(t[r + 1], t[r + 3], 0x44);
			v[r + 3] = _mm256_shuffle_ps(t[r + 1], t[r + 3], 0xee);
		}
		for (int r = 0; r < 4; r++) {
			t[r] = _mm256_permute2f128_ps(v[r], v[r + 4], 0x20);
			t[r + 4] = _mm256_permute2f128_ps(v[r], v[r + 4], 0x31);
		}
		for (int r = 0; r < 8; r++)
			_mm256_storeu_ps(dst + (size_t)(kk + r) * GEMM_MR, t[r]);
	}
	pack_a_portable(a, a_row, dtype, rows, k, p, dst, k8);
}

__attribute__((target("avx2,f16c")))
static void pack_b_avx2(const uint8_t *b, size_t b_row, unsigned dtype, uint32_t k0,
			uint32_t k1, uint32_t j0, uint32_t n, float *dst)
{
	size_t esz = dtype == SPK_DT_FP32 ? 4 : 2;

	if (j0 + GEMM_NR > n) {
		pack_b_portable(b, b_row, dtype, k0, k1, j0, n, dst);
		return;
	}
	for (uint32_t kk = k0; kk < k1; kk++) {
		const uint8_t *row = b + kk * b_row + j0 * esz;
		float *d = dst + (size_t)(kk - k0) * GEMM_NR;

		for (int q = 0; q < 4; q++)
			_mm256_storeu_ps(d + 8 * q, load8(row + 8 * q * esz, dtype));
	}
}

__attribute__((target("avx512f")))
static void tile_avx512(const float *ap, const float *bp, uint32_t kc, float *c, size_t ldc,
			uint32_t rows, uint32_t cols)
{
	__mmask16 m0 = cols >= 16 ? 0xffff : (__mmask16)((1u << cols) - 1);
	__mmask16 m1 = cols >= 32 ? 0xffff : cols <= 16 ? 0 : (__mmask16)((1u << (cols - 16)) - 1);
	__m512 c0[8], c1[8];

#pragma GCC unroll 8
	for (uint32_t r = 0; r < 8; r++) {
		c0[r] = r < rows ? _mm512_maskz_loadu_ps(m0, c + r * ldc) : _mm512_setzero_ps();
		c1[r] = r < rows ? _mm512_maskz_loadu_ps(m1, c + r * ldc + 16) : _mm512_setzero_ps();
	}
	for (uint32_t kk = 0; kk < kc; kk++) {
		__m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);

#pragma GCC unroll 8
		for (uint32_t r = 0; r < 8; r++) {
			__m512 av = _mm512_set1_ps(ap[r]);

			c0[r] = _mm512_fmadd_ps(av, b0, c0[r]);
			c1[r] = _mm512_fmadd_ps(av, b1, c1[r]);
		}
		ap += GEMM_MR;
		bp += GEMM_NR;
	}
#pragma GCC unroll 8
	for (uint32_t r = 0; r < 8; r++) {
		if (r < rows) {
			_mm512_mask_storeu_ps(c + r * ldc, m0, c0[r]);
			_mm512_mask_storeu_ps(c + r * ldc + 16, m1, c1[r]);
		}
	}
}

/* A 4 x 16 quarter of the tile: rows r0.., columns j0.. */
__attribute__((target("avx2,fma")))
static void quarter_avx2(const float *ap, const float *bp, uint32_t kc, float *c, size_t ldc,
			 uint32_t r0, uint32_t rows, uint32_t j0, uint32_t cols)
{
	__m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	int left0 = (int)cols - (int)j0, left1 = left0 - 8;
	__m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(left0), lane);
	__m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(left1), lane);
	__m256 acc[4][2];

	if (left0 <= 0 || r0 >= rows)
		return;
#pragma GCC unroll 4
	for (uint32_t r = 0; r < 4; r++) {
		acc[r][0] = r0 + r < rows ? _mm256_maskload_ps(c + (r0 + r) * ldc + j0, m0) :
					    _mm256_setzero_ps();
		acc[r][1] = r0 + r < rows ? _mm256_maskload_ps(c + (r0 + r) * ldc + j0 + 8, m1) :
					    _mm256_setzero_ps();
	}
	ap += r0;
	bp += j0;
	for (uint32_t kk = 0; kk < kc; kk++) {
		__m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);

#pragma GCC unroll 4
		for (uint32_t r = 0; r < 4; r++) {
			__m256 av = _mm256_broadcast_ss(ap + r);

			acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
			acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
		}
		ap += GEMM_MR;
		bp += GEMM_NR;
	}
#pragma GCC unroll 4
	for (uint32_t r = 0; r < 4; r++) {
		if (r0 + r < rows) {
			_mm256_maskstore_ps(c + (r0 + r) * ldc + j0, m0, acc[r][0]);
			_mm256_maskstore_ps(c + (r0 + r) * ldc + j0 + 8, m1, acc[r][1]);
		}
	}
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

/* Every AVX2 CPU has F16C (and clang 14 cannot test "f16c" here). */
static bool have_avx2(void)
{
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

void gemm_pack_a(const uint8_t *a, size_t a_row, unsigned dtype, uint32_t rows, uint32_t k,
		 uint32_t p0, uint32_t p1, float *dst, bool simd)
{
	for (uint32_t p = p0; p < p1; p++) {
		float *d = dst + (size_t)p * k * GEMM_MR;

#ifdef X86_HAVE_SIMD
		if (simd && have_avx2()) {
			pack_a_avx2(a, a_row, dtype, rows, k, p, d);
			continue;
		}
#endif
		(void)simd;
		pack_a_portable(a, a_row, dtype, rows, k, p, d, 0);
	}
}

void gemm_pack_b(const uint8_t *b, size_t b_row, unsigned dtype, uint32_t k0, uint32_t k1,
		 uint32_t j0, uint32_t n, float *dst, bool simd)
{
#ifdef X86_HAVE_SIMD
	if (simd && have_avx2()) {
		pack_b_avx2(b, b_row, dtype, k0, k1, j0, n, dst);
		return;
	}
#endif
	(void)simd;
	pack_b_portable(b, b_row, dtype, k0, k1, j0, n, dst);
}

void gemm_tile(const float *ap, const float *bp, uint32_t kc, float *c, size_t ldc,
	       uint32_t rows, uint32_t cols, bool simd)
{
#ifdef X86_HAVE_SIMD
	if (simd && __builtin_cpu_supports("avx512f")) {
		tile_avx512(ap, bp, kc, c, ldc, rows, cols);
		return;
	}
	if (simd && have_avx2()) {
		for (uint32_t r0 = 0; r0 < GEMM_MR; r0 += 4)
			for (uint32_t j0 = 0; j0 < GEMM_NR; j0 += 16)
				quarter_avx2(ap, bp, kc, c, ldc, r0, rows, j0, cols);
		return;
	}
#endif
	(void)simd;
	tile_portable(ap, bp, kc, c, ldc, rows, cols);
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
