// SPDX-License-Identifier: MIT
/*
 * Matmul tile: C[M x N] (+)= A[M x K] . B[K x N], fp32 accumulation in the
 * core's scratchpad.  A is sticked on K, B and C on N (docs/engine.md).  A
 * tile takes k_steps firings: the first starts the accumulator from 0, the
 * last writes C in the output type.  Each accumulator element is updated by
 * fused multiply-adds in ascending k (gemm.h), whichever thread computes
 * it: results do not depend on the host.
 *
 * A firing is one pool job when there are at least as many A panels as
 * threads: a part is one row panel, which its thread packs, runs the tile
 * kernel over for every column (B is read in place from the input FIFO,
 * shared read-only) and writes out as rows of C, so threads never wait for
 * each other inside a firing.  When the scheduler allows it (env->defer),
 * the job is only started: the workers compute while the scheduler moves
 * other cores' sticks, and the scheduler finishes it (pool_finish) before
 * touching this core again.  With fewer panels than threads (small M), the
 * threads first pack A together, then split the columns.
 */
#include <string.h>

#include "dtype.h"
#include "gemm.h"
#include "ops.h"

struct matmul_job {
	enum gemm_isa isa;
	const uint8_t *a, *b;
	uint8_t *out;			/* C in the output type, on the last k step only */
	size_t a_row, b_row, c_row, ldc, b_elem;
	unsigned dtype, dtype_out;
	float *apack, *acc;
	bool zero;			/* the first k step: start from 0 */
	uint32_t m, k, n, mr, ipanels, jpanels;
};

_Static_assert(sizeof(struct matmul_job) <= POOL_CTX_MAX, "pool_start copies the job");

static inline uint32_t share(uint32_t total, unsigned part, unsigned parts)
{
	return (uint32_t)((uint64_t)total * part / parts);
}

static inline uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* Row panels i0 .. i1 - 1 times column panels j0 .. j1 - 1 (A packed). */
static void run_tiles(const struct matmul_job *j, uint32_t i0, uint32_t i1, uint32_t j0,
		      uint32_t j1)
{
	for (uint32_t jp = j0; jp < j1; jp++) {
		uint32_t col = jp * GEMM_NR;

		for (uint32_t ip = i0; ip < i1; ip++) {
			uint32_t row = ip * j->mr;

			gemm_tile(j->isa, j->apack + (size_t)ip * j->k * j->mr,
				  j->b + col * j->b_elem, j->b_row, j->dtype, j->k,
				  j->acc + row * j->ldc + col, j->ldc, min_u32(j->mr, j->m - row),
				  min_u32(GEMM_NR, j->n - col), j->zero);
		}
	}
}

static void store_rows(const struct matmul_job *j, uint32_t r0, uint32_t r1)
{
	for (uint32_t i = r0; i < r1; i++)
		dtype_store(j->out + i * j->c_row, j->dtype_out, j->acc + i * j->ldc, j->n,
			    j->c_row);
}

/* Row panel `part`, start to finish. */
static void panel_part(void *ctx, unsigned part, unsigned parts)
{
	const struct matmul_job *j = ctx;

	(void)parts;
	gemm_pack_a(j->isa, j->a, j->a_row, j->dtype, j->m, j->k, part, part + 1, j->apack);
	run_tiles(j, part, part + 1, 0, j->jpanels);
	if (j->out)
		store_rows(j, part * j->mr, min_u32(j->m, (part + 1) * j->mr));
}

static void pack_part(void *ctx, unsigned part, unsigned parts)
{
	const struct matmul_job *j = ctx;

	gemm_pack_a(j->isa, j->a, j->a_row, j->dtype, j->m, j->k, share(j->ipanels, part, parts),
		    share(j->ipanels, part + 1, parts), j->apack);
}

static void cols_part(void *ctx, unsigned part, unsigned parts)
{
	const struct matmul_job *j = ctx;

	run_tiles(j, 0, j->ipanels, share(j->jpanels, part, parts),
		  share(j->jpanels, part + 1, parts));
}

size_t op_matmul_tmp_floats(const struct op_desc *op)
{
	return gemm_pack_floats(op->rows, op->k);
}

size_t op_thread_floats(const struct op_desc *op)
{
	(void)op;
	return 0;
}

bool op_matmul_fire(const struct op_env *env, const struct op_desc *op, uint32_t firing,
		    const uint8_t *a, const uint8_t *b, uint8_t *out, float *acc, float *tmp)
{
	uint32_t m = op->rows, k = op->k, n = op->row_elems;
	uint32_t step = firing % op->k_steps;
	bool emit = step == op->k_steps - 1;
	struct matmul_job job = {
		.isa = gemm_isa(env->simd), .a = a, .b = b,
		.out = emit ? out : NULL,
		.a_row = (size_t)sticks_for(k, op->dtype_in) * STICK_BYTES,
		.b_row = (size_t)sticks_for(n, op->dtype_in) * STICK_BYTES,
		.c_row = (size_t)sticks_for(n, op->dtype_out) * STICK_BYTES,
		.ldc = (size_t)sticks_for(n, SPK_DT_FP32) * 32,
		.b_elem = op->dtype_in == SPK_DT_FP32 ? 4 : 2,
		.dtype = op->dtype_in, .dtype_out = op->dtype_out,
		.apack = tmp, .acc = acc, .zero = step == 0,
		.m = m, .k = k, .n = n, .jpanels = (n + GEMM_NR - 1) / GEMM_NR,
	};

	job.mr = gemm_mr(job.isa);
	job.ipanels = (m + job.mr - 1) / job.mr;
	if (job.ipanels >= pool_threads(env->pool)) {
		pool_start(env->pool, panel_part, &job, sizeof(job), job.ipanels);
		if (!env->defer)
			pool_finish(env->pool);
	} else {
		pool_run(env->pool, pack_part, &job);
		pool_run(env->pool, cols_part, &job);
		if (job.out)
			store_rows(&job, 0, m);
	}
	return emit;
}
