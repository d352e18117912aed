// SPDX-License-Identifier: MIT
/*
 * Matmul tile: C[M x N] (+)= A[M x K] . B[K x N], fp32 accumulation in the
 * core's scratchpad.  A is sticked on K, B and C on N (docs/engine.md).  A
 * tile takes k_steps firings: the first clears the accumulator, the last
 * writes C in the output type.  Each accumulator element is updated by
 * fused multiply-adds in ascending k (gemm.h), whichever thread computes
 * it: results do not depend on the host.
 */
#include <string.h>

#include "dtype.h"
#include "gemm.h"
#include "ops.h"

struct matmul_job {
	const float *a, *b;
	float *acc;
	size_t acc_stride;
	uint32_t m, k, n;
	bool simd;
};

/*
 * Part p of the tile: a band of rows (multiples of 8) when there are enough,
 * else a band of columns (multiples of 32), so small-M tiles still spread.
 */
static void matmul_part(void *ctx, unsigned part, unsigned parts)
{
	const struct matmul_job *j = ctx;

	if (j->m >= 8 * parts) {
		uint32_t chunk = ((j->m + parts - 1) / parts + 7) & ~7u;
		uint32_t i0 = part * chunk, i1 = i0 + chunk < j->m ? i0 + chunk : j->m;

		if (i0 < i1)
			gemm_f32(j->a + (size_t)i0 * j->k, j->k, j->b, j->n,
				 j->acc + i0 * j->acc_stride, j->acc_stride, i1 - i0, j->k, j->n,
				 j->simd);
	} else {
		uint32_t chunk = ((j->n + parts - 1) / parts + 31) & ~31u;
		uint32_t c0 = part * chunk, c1 = c0 + chunk < j->n ? c0 + chunk : j->n;

		if (c0 < c1)
			gemm_f32(j->a, j->k, j->b + c0, j->n, j->acc + c0, j->acc_stride, j->m,
				 j->k, c1 - c0, j->simd);
	}
}

bool op_matmul_fire(const struct op_env *env, const struct op_desc *op, uint32_t firing,
		    const uint8_t *a, const uint8_t *b, uint8_t *out, float *acc, float *tmp)
{
	uint32_t m = op->rows, k = op->k, n = op->row_elems;
	size_t a_row = (size_t)sticks_for(k, op->dtype_in) * STICK_BYTES;
	size_t b_row = (size_t)sticks_for(n, op->dtype_in) * STICK_BYTES;
	size_t c_row = (size_t)sticks_for(n, op->dtype_out) * STICK_BYTES;
	struct matmul_job job = { tmp, tmp + (size_t)m * k, acc,
				  (size_t)sticks_for(n, SPK_DT_FP32) * 32, m, k, n, env->simd };
	uint32_t step = firing % op->k_steps;

	if (step == 0)
		for (uint32_t i = 0; i < m; i++)
			memset(acc + i * job.acc_stride, 0, n * sizeof(float));
	for (uint32_t i = 0; i < m; i++)
		dtype_load(a + i * a_row, op->dtype_in, k, tmp + (size_t)i * k);
	for (uint32_t kk = 0; kk < k; kk++)
		dtype_load(b + kk * b_row, op->dtype_in, n, tmp + (size_t)m * k + (size_t)kk * n);
	pool_run(env->pool, matmul_part, &job);
	if (step != op->k_steps - 1)
		return false;
	for (uint32_t i = 0; i < m; i++)
		dtype_store(out + i * c_row, op->dtype_out, acc + i * job.acc_stride, n, c_row);
	return true;
}
