// SPDX-License-Identifier: MIT
/*
 * Matmul tile: C[M x N] (+)= A[M x K] . B[K x N], fp32 accumulation in the
 * core's scratchpad.  A is sticked on K, B and C on N (docs/engine.md).  A
 * tile takes k_steps firings: the first clears the accumulator, the last
 * writes C in the output type.  Fixed summation order: k ascending.
 */
#include <string.h>

#include "dtype.h"
#include "ops.h"

bool op_matmul_fire(const struct op_desc *op, uint32_t firing, const uint8_t *a,
		    const uint8_t *b, uint8_t *out, float *acc, float *tmp)
{
	uint32_t m = op->rows, k = op->k, n = op->row_elems;
	size_t a_row = (size_t)sticks_for(k, op->dtype_in) * STICK_BYTES;
	size_t b_row = (size_t)sticks_for(n, op->dtype_in) * STICK_BYTES;
	size_t c_row = (size_t)sticks_for(n, op->dtype_out) * STICK_BYTES;
	size_t acc_stride = (size_t)sticks_for(n, SPK_DT_FP32) * 32;
	uint32_t step = firing % op->k_steps;
	float *fa = tmp, *fb = tmp + (size_t)m * k;

	if (step == 0)
		for (uint32_t i = 0; i < m; i++)
			memset(acc + i * acc_stride, 0, n * sizeof(float));
	for (uint32_t i = 0; i < m; i++)
		dtype_load(a + i * a_row, op->dtype_in, k, fa + (size_t)i * k);
	for (uint32_t kk = 0; kk < k; kk++)
		dtype_load(b + kk * b_row, op->dtype_in, n, fb + (size_t)kk * n);
	for (uint32_t i = 0; i < m; i++) {
		float *c = acc + i * acc_stride;

		for (uint32_t kk = 0; kk < k; kk++) {
			float av = fa[(size_t)i * k + kk];
			const float *brow = fb + (size_t)kk * n;

			for (uint32_t j = 0; j < n; j++)
				c[j] += av * brow[j];
		}
	}
	if (step != op->k_steps - 1)
		return false;
	for (uint32_t i = 0; i < m; i++)
		dtype_store(out + i * c_row, op->dtype_out, acc + i * acc_stride, n, c_row);
	return true;
}
