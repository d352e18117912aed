// SPDX-License-Identifier: MIT
/*
 * Relayout.  Permutations that keep the last dimension innermost move
 * whole rows: per core, a stream whose source loop nest walks x in y's
 * order feeds a COPY op (which writes padding lanes as 0 and may convert
 * the dtype) into y.  One that moves the last dimension is up to three
 * plans through device temporaries: a row permute bringing y's last dim
 * second to last, a transpose, and a row permute into y's order.
 *
 * Transpose: y [.., C, R] = x [.., R, C] with the last two dims swapped.
 * Tiles of up to 64 x 64 elements (whole sticks on both sides, since 64
 * is a multiple of every dtype's stick) go through the TRANSPOSE op;
 * tiles of one shape form a region (full, column tail, row tail, corner).
 * Work items (one matrix of the batch, one region, a range of tile rows
 * with all their tile columns) are dealt to 32 cores, up to 16 per core
 * (two streams each), then to further launches.  (A single tile row with
 * more work than an item may hold is not split further: a row of 64 x
 * 65536 elements is far below it.)
 */
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "plan.h"

#define TILE		64
#define ITEMS_PER_CORE	16

struct tr_item {
	uint64_t batch;
	uint32_t i0, ni, tr;	/* tile rows of x: rows i0 * TILE .. */
	uint32_t col0, nj, tc;	/* x columns col0 .., nj tiles of tc */
};

static void tr_op(const spyre_layout *x, const spyre_layout *y, const struct tr_item *it,
		  struct pb_core *c, uint32_t fifo)
{
	uint32_t R = x->ndim >= 2 ? x->shape[x->ndim - 2] : 1, C = ops_last_dim(x);
	uint64_t xrow = (uint64_t)x->row_sticks * SPYRE_STICK_BYTES;
	uint64_t yrow = (uint64_t)y->row_sticks * SPYRE_STICK_BYTES;
	uint32_t tcs = (it->tc + x->stick_elems - 1) / x->stick_elems;
	uint32_t trs = (it->tr + y->stick_elems - 1) / y->stick_elems;
	uint32_t tiles = it->ni * it->nj;
	uint64_t xb = it->batch * R * xrow, yb = it->batch * C * yrow;
	struct pb_endpoint ex = { SPK_EP_DRAM, 0, 0,
				  xb + (uint64_t)it->i0 * TILE * xrow +
					  (uint64_t)it->col0 / x->stick_elems * SPYRE_STICK_BYTES,
				  { tcs, it->tr, it->nj, it->ni },
				  { 128, (int64_t)xrow, (int64_t)tcs * 128, (int64_t)(TILE * xrow) } };
	struct pb_endpoint ey = { SPK_EP_DRAM, 1, 0,
				  yb + (uint64_t)it->col0 * yrow +
					  (uint64_t)it->i0 * TILE / y->stick_elems *
						  SPYRE_STICK_BYTES,
				  { trs, it->tc, it->nj, it->ni },
				  { 128, (int64_t)yrow, (int64_t)(it->tc * yrow),
				    (int64_t)TILE / y->stick_elems * 128 } };
	struct pb_op *op = pb_op(c, SPK_OPC_TRANSPOSE, (uint8_t)x->dtype, (uint8_t)y->dtype, tiles,
				 it->tr, it->tc);

	op->in[0] = pb_stream(c, ex, pb_op_end(), tiles * it->tr * tcs, fifo * it->tr * tcs);
	op->out = pb_stream(c, pb_op_end(), ey, tiles * it->tc * trs, fifo * it->tc * trs);
}

/*
 * Tile-row ranges for one matrix's region: enough to spread a few matrices
 * over the cores, and each item under ITEM_WORK_MAX of the engine's work
 * measure (sticks each firing touches plus each stream stick's non-op
 * end, loader.c), so ITEMS_PER_CORE x 32 items stay under its 2^30.
 */
#define ITEM_WORK_MAX	(1ull << 21)

static uint32_t tr_parts(const spyre_layout *x, const spyre_layout *y, uint64_t batches,
			 uint32_t rni, uint32_t rnj, uint32_t tr, uint32_t tc)
{
	uint64_t in = (uint64_t)tr * ((tc + x->stick_elems - 1) / x->stick_elems);
	uint64_t out = (uint64_t)tc * ((tr + y->stick_elems - 1) / y->stick_elems);
	uint64_t work = (uint64_t)rni * rnj * (2 * (in + out) + 1);
	uint64_t parts = batches >= OPS_CORES ? 1 : (OPS_CORES + batches - 1) / batches;

	if ((work + ITEM_WORK_MAX - 1) / ITEM_WORK_MAX > parts)
		parts = (work + ITEM_WORK_MAX - 1) / ITEM_WORK_MAX;
	return parts > rni ? rni : (uint32_t)parts;
}

spyre_status ops_gen_transpose(const spyre_layout *x, const spyre_layout *y,
			       struct ops_plan *plan)
{
	static const char fn[] = "spyre_op_transpose";
	static const uint8_t args[2] = { 0, 1 };
	uint32_t R, C, ni, nj;
	uint64_t batches, nitems = 0;
	struct tr_item *items = NULL;
	spyre_status st;

	if ((st = ops_check_layout(fn, "x", x)) || (st = ops_check_layout(fn, "y", y)))
		return st;
	R = x->ndim >= 2 ? x->shape[x->ndim - 2] : 1;
	C = ops_last_dim(x);
	batches = x->rows / R;
	if (y->dtype != x->dtype)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: y is %s, x is %s", fn,
				       ops_dtype_name(y->dtype), ops_dtype_name(x->dtype));
	if (ops_last_dim(y) != R || y->rows != batches * C ||
	    (y->ndim >= 2 && y->shape[y->ndim - 2] != C))
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s: y must be x's shape with the last two dims swapped "
				       "(.. x %u x %u)", fn, C, R);
	ni = R / TILE;
	nj = C / TILE;
	if (batches > (1u << 20))
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: batch too large", fn);
	/* Items: per matrix, per region, ranges of tile rows (count, then fill). */
	for (int pass = 0; pass < 2; pass++) {
		if (pass) {
			items = calloc(nitems, sizeof(*items));
			if (!items)
				return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "%s: out of memory",
						       fn);
			nitems = 0;
		}
		for (uint64_t b = 0; b < batches; b++)
			for (int r = 0; r < 4; r++) {
				uint32_t rni = r < 2 ? ni : (R % TILE ? 1 : 0);
				uint32_t rnj = r % 2 == 0 ? nj : (C % TILE ? 1 : 0);
				uint32_t tr = r < 2 ? TILE : R % TILE, tc = r % 2 == 0 ? TILE : C % TILE;
				uint32_t i0 = r < 2 ? 0 : ni, col0 = r % 2 == 0 ? 0 : nj * TILE;
				uint32_t parts = tr_parts(x, y, batches, rni, rnj, tr, tc);

				if (!rni || !rnj)
					continue;
				for (uint32_t p = 0; p < parts; p++, nitems++) {
					uint32_t a = rni * p / parts, e = rni * (p + 1) / parts;

					if (pass)
						items[nitems] = (struct tr_item){ b, i0 + a, e - a, tr,
										  col0, rnj, tc };
				}
			}
	}
	/* Deal items to cores, ITEMS_PER_CORE each, then to more launches. */
	for (uint64_t first = 0; first < nitems && !st;
	     first += OPS_CORES * ITEMS_PER_CORE) {
		struct pb_program *prog = ops_prog_new(2);
		uint32_t last = nitems - first < OPS_CORES * ITEMS_PER_CORE ? (uint32_t)(nitems - first) :
					OPS_CORES * ITEMS_PER_CORE;

		if (!prog) {
			st = spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "%s: out of memory", fn);
			break;
		}
		for (uint32_t k = 0; k < last; k++)
			tr_op(x, y, &items[first + k], pb_core(prog, k % OPS_CORES), 2);
		for (unsigned core = 0; core < OPS_CORES; core++)
			if ((prog->core_mask >> core & 1) && !ops_core_fits(&prog->cores[core]))
				st = spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
						     "%s: program does not fit a core", fn);
		if (!st)
			st = ops_plan_add(plan, prog, args);
		free(prog);
	}
	free(items);
	return st;
}

/* Sticks a core streams at most per launch (with its COPY: ~2^26 of work). */
#define PERMUTE_CORE_STICKS	(1u << 24)

/* The last dim stays last: rows move whole (perm and shapes checked). */
static spyre_status permute_rows(const spyre_layout *x, const uint32_t *perm,
				 const spyre_layout *y, const uint8_t *args, struct ops_plan *plan)
{
	static const char fn[] = "spyre_op_permute";
	uint32_t n = x->ndim, rs, ors, outer, per_slice, rpf;
	uint64_t slice_rows;
	spyre_status st = SPYRE_SUCCESS;

	rs = x->row_sticks;
	ors = y->row_sticks;
	/* y's outermost dim is split over cores and launches; n == 1: one row. */
	outer = n > 1 ? y->shape[0] : 1;
	slice_rows = y->rows / outer;
	if (slice_rows * (rs > ors ? rs : ors) > PERMUTE_CORE_STICKS)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s: a slice of y's first dim is over %u sticks", fn,
				       PERMUTE_CORE_STICKS);
	per_slice = (uint32_t)(PERMUTE_CORE_STICKS / (slice_rows * (rs > ors ? rs : ors)));
	/* Rows per COPY firing: y's second-innermost dim when it divides every core's rows. */
	rpf = n >= 3 && (uint64_t)y->shape[n - 2] * (rs + ors) <= 512 ? y->shape[n - 2] : 1;
	for (uint32_t first = 0; first < outer && !st;) {
		struct pb_program *prog = ops_prog_new(2);
		uint32_t take = outer - first, cores;

		if (!prog)
			return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "%s: out of memory", fn);
		if (take > (uint64_t)per_slice * OPS_CORES)
			take = per_slice * OPS_CORES;
		cores = take < OPS_CORES ? take : OPS_CORES;
		for (uint32_t c = 0; c < cores; c++) {
			uint32_t j0 = first + (uint32_t)((uint64_t)take * c / cores);
			uint32_t j1 = first + (uint32_t)((uint64_t)take * (c + 1) / cores);
			uint32_t rows = (uint32_t)((j1 - j0) * slice_rows);
			struct pb_endpoint src = { SPK_EP_DRAM, 0, 0, 0, { rs, 1, 1, 1 },
						   { 128, 0, 0, 0 } };
			struct pb_core *pc = pb_core(prog, c);
			struct pb_op *op = pb_op(pc, SPK_OPC_COPY, (uint8_t)x->dtype, (uint8_t)y->dtype,
						 rows / rpf, rpf, ops_last_dim(x));
			unsigned d = 1;

			/* Loops: sticks, then y's dims n-2 .. 0 (dim 0 limited to j0..j1). */
			for (int i = (int)n - 2; i >= 0; i--, d++) {
				src.count[d] = i == 0 ? j1 - j0 : y->shape[i];
				src.stride[d] = (int64_t)x->strides[perm[i]];
			}
			if (n > 1)
				src.offset = (uint64_t)j0 * x->strides[perm[0]];
			op->in[0] = pb_stream(pc, src, pb_op_end(), rows * rs, 2 * rpf * rs);
			op->out = pb_stream(pc, pb_op_end(),
					    pb_linear(SPK_EP_DRAM, 1,
						      (uint64_t)j0 * slice_rows * ors * 128, rows * ors),
					    rows * ors, 2 * rpf * ors);
		}
		st = ops_plan_add(plan, prog, args);
		free(prog);
		first += take;
	}
	return st;
}

/*
 * The last dim moves: y's last dim is x's dim k.  Three steps, each left
 * out when it does nothing: a row permute bringing k next to the last
 * dim (t1: x's other dims in order, then k, then the last), a transpose
 * of the last two (t2: x's dims in y's order with x's last dim second to
 * last, k last), and a row permute into y's order.  t1 and t2 keep x's
 * dtype (the transpose does not convert); the last step converts.
 */
static spyre_status permute_moving_last(const spyre_layout *x, const uint32_t *perm,
					const spyre_layout *y, struct ops_plan *plan)
{
	uint32_t n = x->ndim, k = perm[n - 1], a[SPYRE_TENSOR_MAX_DIMS];
	uint32_t b[SPYRE_TENSOR_MAX_DIMS];
	uint32_t s1[SPYRE_TENSOR_MAX_DIMS], s2[SPYRE_TENSOR_MAX_DIMS];
	spyre_layout t1, t2;
	struct ops_plan p = { 0 };
	int need_a = 0, need_b = 0;
	uint8_t in_tr, out_tr;
	spyre_status st;
	uint32_t j = 0;

	/* t1's dims as x's: every dim but k and the last, in order; k; the last. */
	for (uint32_t i = 0; i < n - 1; i++)
		if (i != k)
			a[j++] = i;
	a[n - 2] = k;
	a[n - 1] = n - 1;
	for (uint32_t i = 0; i < n; i++) {
		need_a |= a[i] != i;
		s1[i] = x->shape[a[i]];
	}
	/* t2: t1 with the last two dims swapped. */
	for (uint32_t i = 0; i < n; i++)
		s2[i] = s1[i];
	s2[n - 2] = s1[n - 1];
	s2[n - 1] = s1[n - 2];
	/* t2's dims as x's: a[0..n-3], n-1, k.  B maps t2 to y: y's dim i is
	 * t2's dim b[i]. */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t want = perm[i], pos = 0;

		for (uint32_t q = 0; q < n; q++) {
			uint32_t xd = q < n - 2 ? a[q] : q == n - 2 ? n - 1 : k;

			if (xd == want)
				pos = q;
		}
		b[i] = pos;
		need_b |= b[i] != i;
	}
	need_b |= y->dtype != x->dtype;
	if ((st = spyre_tensor_layout(x->dtype, n, s1, &t1)) ||
	    (st = spyre_tensor_layout(x->dtype, n, s2, &t2)))
		return st;
	plan->temp_bytes = 0;
	if (need_a) {
		static const uint8_t map[2] = { 0, OPS_ARG_TEMP };

		plan->temp_bytes = t1.bytes;
		st = permute_rows(x, a, &t1, map, plan);
	}
	in_tr = need_a ? OPS_ARG_TEMP : 0;
	out_tr = need_b ? (need_a ? OPS_ARG_TEMP2 : OPS_ARG_TEMP) : 1;
	if (!st && need_b) {
		plan->temp2_offset = need_a ? plan->temp_bytes : 0;
		plan->temp_bytes += t2.bytes;
	}
	if (!st && !(st = ops_gen_transpose(&t1, &t2, &p))) {
		uint8_t map[2] = { in_tr, out_tr };

		st = ops_plan_append(plan, &p, map);
	}
	ops_plan_free(&p);
	if (!st && need_b) {
		uint8_t map[2] = { out_tr, 1 };

		st = permute_rows(&t2, b, y, map, plan);
	}
	return st;
}

spyre_status ops_gen_permute(const spyre_layout *x, const uint32_t *perm, const spyre_layout *y,
			     struct ops_plan *plan)
{
	static const char fn[] = "spyre_op_permute";
	static const uint8_t args[2] = { 0, 1 };
	uint32_t n, seen = 0;
	spyre_status st;

	if ((st = ops_check_layout(fn, "x", x)) || (st = ops_check_layout(fn, "y", y)))
		return st;
	if (!perm)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: perm is NULL", fn);
	n = x->ndim;
	for (uint32_t i = 0; i < n; i++) {
		if (perm[i] >= n || (seen >> perm[i] & 1))
			return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
					       "%s: perm is not a permutation of 0..%u", fn, n - 1);
		seen |= 1u << perm[i];
	}
	if (y->ndim != n)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: y must have x's rank",
				       fn);
	for (uint32_t i = 0; i < n; i++)
		if (y->shape[i] != x->shape[perm[i]])
			return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
					       "%s: y's dim %u is %u, x's dim %u is %u", fn, i,
					       y->shape[i], perm[i], x->shape[perm[i]]);
	if (perm[n - 1] == n - 1)
		return permute_rows(x, perm, y, args, plan);
	return permute_moving_last(x, perm, y, plan);
}
