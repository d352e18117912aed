// SPDX-License-Identifier: MIT
/*
 * Matmul tile: C[M x N] (+)= A[M x K] . B[K x N], fp32 accumulation in the
 * core's scratchpad.  A is sticked on K, B and C on N (docs/engine.md).  A
 * tile takes k_steps firings: the first clears the accumulator, the last
 * writes C in the output type.  Each accumulator element is updated by
 * fused multiply-adds in ascending k (gemm.h), whichever thread computes
 * it: results do not depend on the host.
 *
 * A firing packs A once (the pool's threads share the panels), then each
 * thread packs the B panels of its share of the columns, one GEMM_KC block
 * at a time, and runs the tile kernel over them.
 */
#include <string.h>

#include "dtype.h"
#include "gemm.h"
#include "ops.h"

struct matmul_job {
	const struct op_env *env;
	const uint8_t *a, *b;
	size_t a_row, b_row;
	unsigned dtype;
	float *apack, *acc;
	size_t ldc;
	uint32_t m, k, n, ipanels, jpanels;
};

static inline uint32_t share(uint32_t total, unsigned part, unsigned parts)
{
	return (uint32_t)((uint64_t)total * part / parts);
}

static void pack_a_part(void *ctx, unsigned part, unsigned parts)
{
	const struct matmul_job *j = ctx;

	gemm_pack_a(j->a, j->a_row, j->dtype, j->m, j->k, share(j->ipanels, part, parts),
		    share(j->ipanels, part + 1, parts), j->apack, j->env->simd);
}

/* Part p: a share of the column panels, or of the row panels when few. */
static void compute_part(void *ctx, unsigned part, unsigned parts)
{
	const struct matmul_job *j = ctx;
	bool by_cols = j->jpanels >= parts || j->jpanels >= j->ipanels;
	uint32_t j0 = by_cols ? share(j->jpanels, part, parts) : 0;
	uint32_t j1 = by_cols ? share(j->jpanels, part + 1, parts) : j->jpanels;
	uint32_t i0 = by_cols ? 0 : share(j->ipanels, part, parts);
	uint32_t i1 = by_cols ? j->ipanels : share(j->ipanels, part + 1, parts);
	float *bpack = j->env->thread_tmp[part];

	if (i0 >= i1 || j0 >= j1)
		return;
	for (uint32_t k0 = 0; k0 < j->k; k0 += GEMM_KC) {
		uint32_t kc = j->k - k0 < GEMM_KC ? j->k - k0 : GEMM_KC;

		for (uint32_t jp = j0; jp < j1; jp++) {
			uint32_t col = jp * GEMM_NR;
			uint32_t cols = j->n - col < GEMM_NR ? j->n - col : GEMM_NR;

			gemm_pack_b(j->b, j->b_row, j->dtype, k0, k0 + kc, col, j->n, bpack,
				    j->env->simd);
			for (uint32_t ip = i0; ip < i1; ip++) {
				uint32_t row = ip * GEMM_MR;
				uint32_t rows = j->m - row < GEMM_MR ? j->m - row : GEMM_MR;

				gemm_tile(j->apack + ((size_t)ip * j->k + k0) * GEMM_MR, bpack, kc,
					  j->acc + row * j->ldc + col, j->ldc, rows, cols,
					  j->env->simd);
			}
		}
	}
}

size_t op_matmul_tmp_floats(const struct op_desc *op)
{
	return ((size_t)op->rows + GEMM_MR - 1) / GEMM_MR * GEMM_MR * op->k;
}

size_t op_thread_floats(const struct op_desc *op)
{
	return op->opcode == SPK_OPC_MATMUL ? (size_t)GEMM_KC * GEMM_NR : 0;
}

bool op_matmul_fire(const struct op_env *env, const struct op_desc *op, uint32_t firing,
		    const uint8_t *a, const uint8_t *b, uint8_t *out, float *acc, float *tmp)
{
	uint32_t m = op->rows, k = op->k, n = op->row_elems;
	size_t c_row = (size_t)sticks_for(n, op->dtype_out) * STICK_BYTES;
	struct matmul_job job = {
		.env = env, .a = a, .b = b,
		.a_row = (size_t)sticks_for(k, op->dtype_in) * STICK_BYTES,
		.b_row = (size_t)sticks_for(n, op->dtype_in) * STICK_BYTES,
		.dtype = op->dtype_in, .apack = tmp, .acc = acc,
		.ldc = (size_t)sticks_for(n, SPK_DT_FP32) * 32,
		.m = m, .k = k, .n = n,
		.ipanels = (m + GEMM_MR - 1) / GEMM_MR, .jpanels = (n + GEMM_NR - 1) / GEMM_NR,
	};
	uint32_t step = firing % op->k_steps;

	if (step == 0)
		for (uint32_t i = 0; i < m; i++)
			memset(acc + i * job.ldc, 0, n * sizeof(float));
	pool_run(env->pool, pack_a_part, &job);
	pool_run(env->pool, compute_part, &job);
	if (step != op->k_steps - 1)
		return false;
	for (uint32_t i = 0; i < m; i++)
		dtype_store(out + i * c_row, op->dtype_out, acc + i * job.ldc, n, c_row);
	return true;
}
