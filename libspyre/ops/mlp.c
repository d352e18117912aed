// SPDX-License-Identifier: MIT
/*
 * The MLP y = act(x . w1) . w2.
 *
 * Fused: each core takes a block of tm rows; stage 1 (MATMUL -> act)
 * writes the block's intermediate h (tm x F, x's dtype) into a scratchpad
 * buffer, and stage 2's MATMUL streams h from there (its streams start
 * `after` stage 1's output stream) against w2, so h never leaves the
 * core.  Core 0 streams the weight tiles from device memory and multicasts
 * them over the ring to the other cores of the launch (each link carries
 * them once), so the weights are read from device memory twice per
 * launch, not once per core.  One launch per 32 blocks.  When a
 * weight tile of the whole K (x's width for stage 1, F for stage 2) does
 * not fit a core, K is cut into chunks (the matmul's k_steps, the
 * remainder in a second MATMUL whose result is added), shrinking by a
 * quarter at a time: only when the form is asked for (OPS_MLP_FUSED),
 * AUTO fuses only shapes that fit whole.
 *
 * Unfused: two matmul plans through a temporary in device memory.
 *
 * AUTO fuses when F is a multiple of 64 (stage 1 then has one output
 * stream), a block fits a core, and M is 1 or at least
 * OPS_MLP_FUSED_MIN_ROWS, the form of fewer cycles on the timing model
 * (tests/host/test_ops.c prints it) for 256 x 1024 x 256 fp16 since
 * matmul tiles are chosen by modelled time (ops_mm_geometry): fused /
 * unfused cycles are 11046/11614 at M = 1, 23942/11862 at 2 (blocks of
 * one row wait on the multicast), 24513/15233 at 16, 26797/26656 at 64,
 * 27462/27621 at 68, 29938/41886 at 128, 51228/102513 at 512.  (With
 * the earlier fixed 64-row matmul tiles the crossover was below 16.)
 */
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "plan.h"

#define OPS_MLP_FUSED_MIN_ROWS	65

static spyre_status mlp_check(const spyre_layout *x, const spyre_layout *w1, spyre_act act,
			      const spyre_layout *w2, const spyre_layout *y)
{
	static const char fn[] = "spyre_op_mlp";
	spyre_status st;

	if ((st = ops_check_layout(fn, "x", x)) || (st = ops_check_layout(fn, "w1", w1)) ||
	    (st = ops_check_layout(fn, "w2", w2)) || (st = ops_check_layout(fn, "y", y)))
		return st;
	if (w1->dtype != x->dtype || w2->dtype != x->dtype)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s: x, w1 and w2 must share a dtype (%s, %s, %s)", fn,
				       ops_dtype_name(x->dtype), ops_dtype_name(w1->dtype),
				       ops_dtype_name(w2->dtype));
	if (w1->rows != ops_last_dim(x) || w2->rows != ops_last_dim(w1))
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s: x is .. x %u, w1 %llu x %u, w2 %llu x %u: inner sizes differ",
				       fn, ops_last_dim(x), (unsigned long long)w1->rows,
				       ops_last_dim(w1), (unsigned long long)w2->rows,
				       ops_last_dim(w2));
	if (y->rows != x->rows || ops_last_dim(y) != ops_last_dim(w2))
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s: y is %llu x %u, needs %llu x %u", fn,
				       (unsigned long long)y->rows, ops_last_dim(y),
				       (unsigned long long)x->rows, ops_last_dim(w2));
	if ((unsigned)act > SPYRE_ACT_SILU)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: unknown activation %d",
				       fn, (int)act);
	if (x->rows > UINT32_MAX / 2)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: too many rows", fn);
	return SPYRE_SUCCESS;
}

static spyre_status mlp_unfused(const spyre_layout *x, const spyre_layout *w1, spyre_act act,
				const spyre_layout *w2, const spyre_layout *y,
				struct ops_plan *plan)
{
	static const uint8_t map1[3] = { 0, 1, OPS_ARG_TEMP }, map2[3] = { OPS_ARG_TEMP, 2, 3 };
	uint32_t shape[2] = { (uint32_t)x->rows, ops_last_dim(w1) };
	struct ops_plan p = { 0 };
	spyre_layout h;
	spyre_status st;

	if ((st = spyre_tensor_layout(x->dtype, 2, shape, &h)))
		return st;
	plan->temp_bytes = h.bytes;
	if (!(st = ops_gen_matmul(x, w1, act, &h, &p)))
		st = ops_plan_append(plan, &p, map1);
	ops_plan_free(&p);
	if (!st && !(st = ops_gen_matmul(&h, w2, SPYRE_ACT_NONE, y, &p)))
		st = ops_plan_append(plan, &p, map2);
	ops_plan_free(&p);
	return st;
}

struct mlp_fused {
	const spyre_layout *x, *w1, *w2, *y;
	spyre_act act;
	uint32_t tn1, tn2, fifo;
	uint32_t tk1, tk2;	/* K chunk of stage 1 and 2 (the whole K: no chunks) */
};

/* Weight streams a core receives: stage 1, then stage 2's two column items, each main + K tail. */
#define MLP_MAX_RING_B	6

/*
 * One core's block of rows [r0, r0 + tm).  With ring_b, w1 and w2 arrive
 * over the ring (from core 0) and their streams are recorded there.
 */
static void mlp_core(const struct mlp_fused *f, struct pb_core *c, uint32_t r0, uint32_t tm,
		     struct mm_ring_b *ring_b, unsigned *num_ring_b)
{
	uint32_t F = ops_last_dim(f->w1), N = ops_last_dim(f->w2);
	uint32_t fs = f->w1->row_sticks;	/* h: x's dtype, F wide: w1's row */
	uint16_t h = pb_buffer(c, tm * fs * SPYRE_STICK_BYTES), s1;
	struct mm_geom g1 = { 0 }, g2 = { 0 };
	struct mm_item it;

	g1.a = ops_mm_dram(0, f->x);
	g1.a.base = (uint64_t)r0 * g1.a.row_bytes;
	g1.b = ops_mm_dram(1, f->w1);
	g1.c = (struct mm_operand){ SPK_EP_SCRATCH, h, 0, (uint64_t)fs * SPYRE_STICK_BYTES,
				    f->x->dtype };
	g1.act = f->act;
	ops_mm_chunk_k(&g1, ops_last_dim(f->x), f->tk1);
	g1.ring_b = ring_b;
	g1.num_ring_b = num_ring_b;
	it = (struct mm_item){ 0, 1, tm, 0, F / f->tn1, f->tn1 };
	s1 = ops_mm_core(&g1, &it, c, f->fifo, SPK_NONE);

	g2.a = g1.c;
	g2.b = ops_mm_dram(2, f->w2);
	g2.c = ops_mm_dram(3, f->y);
	g2.c.base = (uint64_t)r0 * g2.c.row_bytes;
	ops_mm_chunk_k(&g2, F, f->tk2);
	g2.ring_b = ring_b;
	g2.num_ring_b = num_ring_b;
	if (N / f->tn2) {
		it = (struct mm_item){ 0, 1, tm, 0, N / f->tn2, f->tn2 };
		ops_mm_core(&g2, &it, c, f->fifo, s1);
	}
	if (N % f->tn2) {
		it = (struct mm_item){ 0, 1, tm, N / f->tn2 * f->tn2, 1, N % f->tn2 };
		ops_mm_core(&g2, &it, c, f->fifo, s1);
	}
}

/*
 * Blocks first .. first + n - 1 (rows of tm) on cores 0 .. n - 1 of prog.
 * Core 0 streams w1 and w2 from device memory for itself and multicasts
 * them over the ring to the other cores, which then read no weights from
 * device memory.  Returns 1 if every core fits.
 */
static int mlp_launch(const struct mlp_fused *f, struct pb_program *prog, uint32_t first,
		      uint32_t n, uint32_t tm)
{
	uint32_t M = (uint32_t)f->x->rows, mask = 0;
	struct mm_ring_b rb[MLP_MAX_RING_B];
	uint16_t sender[MLP_MAX_RING_B];
	unsigned nrb = 0, k;
	struct pb_core *c0 = pb_core(prog, 0);
	int ok = 1;

	mlp_core(f, c0, first * tm, M - first * tm < tm ? M - first * tm : tm, NULL, NULL);
	for (uint32_t b = 1; b < n; b++) {
		uint32_t r0 = (first + b) * tm, rows = M - r0 < tm ? M - r0 : tm;

		nrb = 0;
		mlp_core(f, pb_core(prog, b), r0, rows, rb, &nrb);
		mask |= 1u << b;
	}
	/* Every receiver has the same streams: one sender each, on core 0. */
	for (k = 0; k < nrb && n > 1; k++)
		sender[k] = pb_stream(c0, rb[k].dram, pb_ring(rb[k].stream, mask), rb[k].total,
				      rb[k].fifo);
	for (uint32_t b = 1; b < n; b++)
		for (k = 0; k < nrb; k++)
			prog->cores[b].streams[rb[k].stream].src.ref = sender[k];
	for (uint32_t b = 0; b < n; b++)
		ok &= ops_core_fits(&prog->cores[b]);
	return ok;
}

static int mlp_fits(const struct mlp_fused *f, uint32_t tm)
{
	uint32_t M = (uint32_t)f->x->rows, blocks = (M + tm - 1) / tm;
	struct pb_program *p = ops_prog_new(4);
	int ok;

	if (!p)
		return 0;
	ok = mlp_launch(f, p, 0, blocks < OPS_CORES ? blocks : OPS_CORES, tm);
	free(p);
	return ok;
}

/*
 * Pick tm and the tiles, K whole; with chunks, then also K in chunks
 * (both stages' chunks shrinking together).  0 if no block fits a core.
 */
static uint32_t mlp_fused_geometry(struct mlp_fused *f, int chunks)
{
	uint32_t M = (uint32_t)f->x->rows, K = ops_last_dim(f->x), F = ops_last_dim(f->w1);
	uint32_t N64 = (ops_last_dim(f->w2) + 63) / 64 * 64;
	uint32_t ps = SPYRE_STICK_BYTES / ops_dtype_bytes(f->x->dtype);
	uint32_t tm0 = (M + OPS_CORES - 1) / OPS_CORES;

	if (tm0 > 64)
		tm0 = 64;
	for (int pass = 0; pass <= chunks; pass++)
		for (uint32_t tm = tm0; tm >= 1; tm /= 2)
			for (f->fifo = 2; f->fifo >= 1; f->fifo--)
				for (f->tn1 = 256; f->tn1 >= 64; f->tn1 /= 2) {
					if (F % f->tn1)
						continue;
					f->tn2 = f->tn1 < N64 ? f->tn1 : N64;
					f->tk1 = K;
					f->tk2 = F;
					if (!pass && mlp_fits(f, tm))
						return tm;
					while (pass && (f->tk1 > ps || f->tk2 > ps)) {
						/* a K of a stick or less stays whole */
						if (f->tk1 > ps)
							f->tk1 = ops_mm_smaller_tk(f->tk1, ps);
						if (f->tk2 > ps)
							f->tk2 = ops_mm_smaller_tk(f->tk2, ps);
						if (mlp_fits(f, tm))
							return tm;
					}
				}
	return 0;
}

static spyre_status mlp_fused_plan(struct mlp_fused *f, uint32_t tm, struct ops_plan *plan)
{
	static const uint8_t args[4] = { 0, 1, 2, 3 };
	uint32_t M = (uint32_t)f->x->rows, blocks = (M + tm - 1) / tm;
	spyre_status st = SPYRE_SUCCESS;

	for (uint32_t first = 0; first < blocks && !st; first += OPS_CORES) {
		struct pb_program *prog = ops_prog_new(4);

		if (!prog)
			return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY,
					       "spyre_op_mlp: out of memory");
		mlp_launch(f, prog, first,
			   blocks - first < OPS_CORES ? blocks - first : OPS_CORES, tm);
		st = ops_plan_add(plan, prog, args);
		free(prog);
	}
	return st;
}

spyre_status ops_gen_mlp(const spyre_layout *x, const spyre_layout *w1, spyre_act act,
			 const spyre_layout *w2, const spyre_layout *y, enum ops_mlp_mode mode,
			 struct ops_plan *plan)
{
	struct mlp_fused f = { x, w1, w2, y, act, 0, 0, 0, 0, 0 };
	spyre_status st = mlp_check(x, w1, act, w2, y);
	uint32_t tm = 0;

	if (st)
		return st;
	if (mode != OPS_MLP_UNFUSED && ops_last_dim(w1) % 64 == 0 &&
	    (mode == OPS_MLP_FUSED || x->rows == 1 || x->rows >= OPS_MLP_FUSED_MIN_ROWS))
		tm = mlp_fused_geometry(&f, mode == OPS_MLP_FUSED);
	if (tm)
		return mlp_fused_plan(&f, tm, plan);
	if (mode == OPS_MLP_FUSED)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "spyre_op_mlp: cannot fuse (F = %u must be a multiple of 64 "
				       "and a row's intermediate must fit a core)",
				       ops_last_dim(w1));
	return mlp_unfused(x, w1, act, w2, y, plan);
}
