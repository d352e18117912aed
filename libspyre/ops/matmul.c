// SPDX-License-Identifier: MIT
/*
 * Matmul: C [M, N] = act(A [M, K] . B [K, N]), A sticked on K, B and C on
 * N (docs/engine.md "Data layout").  C is cut into tiles of tm rows x tn
 * columns (tn a multiple of 64 elements, so a tile starts on a stick in
 * every dtype); tiles of one shape form a region (full tiles, the column
 * tail, the row tail, the corner), and each region's tiles are split into
 * rectangles, one per core, streamed through one MATMUL op (then the
 * activation op).  A K that does not fit a core's scratchpad in one
 * firing is split into k_steps chunks of tk (a multiple of the stick),
 * with the remainder in a second MATMUL whose result is added.
 */
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "plan.h"

uint8_t ops_act_opcode(spyre_act act)
{
	switch (act) {
	case SPYRE_ACT_RELU:
		return SPK_OPC_RELU;
	case SPYRE_ACT_GELU:
		return SPK_OPC_GELU;
	case SPYRE_ACT_SILU:
		return SPK_OPC_SILU;
	default:
		return 0;
	}
}

static uint32_t div_up(uint64_t a, uint64_t b)
{
	return (uint32_t)((a + b - 1) / b);
}

static uint32_t sticks(uint32_t elems, spyre_dtype dt)
{
	return div_up(elems, SPYRE_STICK_BYTES / ops_dtype_bytes(dt));
}

/* B's stream: from device memory, or over the ring (recorded). */
static uint16_t b_stream(const struct mm_geom *g, struct pb_core *c, struct pb_endpoint eb,
			 uint32_t total, uint32_t fifo)
{
	uint16_t i;

	if (!g->ring_b)
		return pb_stream(c, eb, pb_op_end(), total, fifo);
	/* Peer stream index patched by the caller once the sender exists. */
	i = pb_stream(c, pb_ring(0, 0), pb_op_end(), total, fifo);
	g->ring_b[*g->num_ring_b] = (struct mm_ring_b){ i, eb, total, fifo };
	++*g->num_ring_b;
	return i;
}

/*
 * The op chain of one core: MATMUL(s) [+ ADD] [+ act] into C.  fifo is 1
 * or 2 firings per FIFO; A's streams start after stream a_after (or
 * SPK_NONE).  Builds into c (the caller checks the fit) and returns the
 * index of the stream that writes C.
 */
uint16_t ops_mm_core(const struct mm_geom *g, const struct mm_item *it, struct pb_core *c,
		     uint32_t fifo, uint16_t a_after)
{
	uint64_t arow = g->a.row_bytes, brow = g->b.row_bytes, crow = g->c.row_bytes;
	spyre_dtype din = g->a.dtype, dout = g->c.dtype;
	uint32_t tns = sticks(it->tn, din), tnso = sticks(it->tn, dout);
	uint32_t accs = div_up(it->tn, 32), tiles = it->ni * it->nj;
	uint32_t tks = sticks(g->tk, din);
	uint64_t a_off = g->a.base + (uint64_t)it->row0 * arow;
	uint64_t b_off = g->b.base + (uint64_t)sticks(it->col0, din) * SPYRE_STICK_BYTES;
	int chain = g->tail_k || g->act;	/* MATMUL feeds another op */
	int chunked = g->ks > 1 || g->tail_k;
	uint16_t mm_out = SPK_NONE, tail_out, last, sa;
	struct pb_endpoint ea, eb, ec;
	struct pb_op *op;

	/* Main MATMUL: k_steps chunks of tk. */
	op = pb_op(c, SPK_OPC_MATMUL, (uint8_t)din, chain ? SPK_DT_FP32 : (uint8_t)dout,
		   tiles * g->ks, it->tm, it->tn);
	op->k = g->tk;
	op->k_steps = g->ks;
	ea = (struct pb_endpoint){ g->a.kind, g->a.ref, 0, a_off, { tks, it->tm, g->ks, 1 },
				   { 128, (int64_t)arow, (int64_t)tks * 128, 0 } };
	eb = (struct pb_endpoint){ g->b.kind, g->b.ref, 0, b_off, { tns, g->tk, g->ks, 1 },
				   { 128, (int64_t)brow, (int64_t)(g->tk * brow), 0 } };
	if (!chunked) {
		/* No chunk loop: tiles j then i. */
		ea.count[2] = it->nj;
		ea.stride[2] = 0;
		ea.count[3] = it->ni;
		ea.stride[3] = (int64_t)(it->tm * arow);
		eb.count[2] = it->nj;
		eb.stride[2] = (int64_t)tns * 128;
		eb.count[3] = it->ni;
		eb.stride[3] = 0;
	} else {
		/* One row block (ni == 1): the chunk loop, then the tiles. */
		ea.count[3] = it->nj;
		eb.count[3] = it->nj;
		eb.stride[3] = (int64_t)tns * 128;
	}
	sa = pb_stream(c, ea, pb_op_end(), tiles * g->ks * it->tm * tks, fifo * it->tm * tks);
	c->streams[sa].after = a_after;
	op->in[0] = sa;
	op->in[1] = b_stream(g, c, eb, tiles * g->ks * g->tk * tns, fifo * g->tk * tns);
	op->acc_buffer = pb_buffer(c, it->tm * accs * 128);
	last = (uint16_t)(c->num_ops - 1);
	if (chain) {
		mm_out = pb_stream(c, pb_op_end(), pb_op_end(), tiles * it->tm * accs,
				   fifo * it->tm * accs);
		c->ops[last].out = mm_out;
	}
	if (g->tail_k) {
		uint32_t tails = sticks(g->tail_k, din);
		struct pb_endpoint ta = ea, tb = eb;
		struct pb_op *add;

		op = pb_op(c, SPK_OPC_MATMUL, (uint8_t)din, SPK_DT_FP32, tiles, it->tm, it->tn);
		op->k = g->tail_k;
		op->k_steps = 1;
		ta.offset += (uint64_t)g->ks * tks * 128;
		ta.count[0] = tails;
		ta.count[2] = 1;
		tb.offset += (uint64_t)g->ks * g->tk * brow;
		tb.count[1] = g->tail_k;
		tb.count[2] = 1;
		sa = pb_stream(c, ta, pb_op_end(), tiles * it->tm * tails, fifo * it->tm * tails);
		c->streams[sa].after = a_after;
		op->in[0] = sa;
		op->in[1] = b_stream(g, c, tb, tiles * g->tail_k * tns, fifo * g->tail_k * tns);
		op->acc_buffer = pb_buffer(c, it->tm * accs * 128);
		tail_out = pb_stream(c, pb_op_end(), pb_op_end(), tiles * it->tm * accs,
				     fifo * it->tm * accs);
		op->out = tail_out;
		add = pb_op(c, SPK_OPC_ADD, SPK_DT_FP32, g->act ? SPK_DT_FP32 : (uint8_t)dout, tiles,
			    it->tm, it->tn);
		add->in[0] = mm_out;
		add->in[1] = tail_out;
		last = (uint16_t)(c->num_ops - 1);
		if (g->act) {
			mm_out = pb_stream(c, pb_op_end(), pb_op_end(), tiles * it->tm * accs,
					   fifo * it->tm * accs);
			add->out = mm_out;
		}
	}
	if (g->act) {
		op = pb_op(c, ops_act_opcode(g->act), SPK_DT_FP32, (uint8_t)dout, tiles, it->tm,
			   it->tn);
		op->in[0] = mm_out;
		last = (uint16_t)(c->num_ops - 1);
	}
	ec = (struct pb_endpoint){ g->c.kind, g->c.ref, 0,
				   g->c.base + (uint64_t)it->row0 * crow +
					   (uint64_t)sticks(it->col0, dout) * SPYRE_STICK_BYTES,
				   { tnso, it->tm, it->nj, it->ni },
				   { 128, (int64_t)crow, (int64_t)tnso * 128,
				     (int64_t)(it->tm * crow) } };
	c->ops[last].out = pb_stream(c, pb_op_end(), ec, tiles * it->tm * tnso,
				     fifo * it->tm * tnso);
	return c->ops[last].out;
}

/* Does the item fit a core, and with which FIFO depth (2, 1; 0 = no)? */
uint32_t ops_mm_fit(const struct mm_geom *g, const struct mm_item *it)
{
	struct pb_core *c = malloc(sizeof(*c));
	uint32_t fifo, ok = 0;

	if (!c)
		return 0;
	for (fifo = 2; fifo >= 1 && !ok; fifo--) {
		memset(c, 0, sizeof(*c));
		ops_mm_core(g, it, c, fifo, SPK_NONE);
		if (ops_core_fits(c))
			ok = fifo;
	}
	free(c);
	return ok;
}

/*
 * The engine bounds a program's work by 2^30 (docs/engine.md): per op
 * firing the sticks it touches, per stream stick its non-op ends, and per
 * matmul firing rows x k x (row_elems / 4096 + 1) (loader.c).  An item
 * stays under 2^24 by that measure, so 32 of them fit one program.
 */
#define ITEM_WORK_MAX	(1ull << 24)

static uint64_t tile_work(const struct mm_geom *g, uint32_t tm, uint32_t tn)
{
	uint64_t tns = sticks(tn, g->a.dtype), out = sticks(tn, g->c.dtype) + div_up(tn, 32);
	uint64_t ks = sticks(g->K, g->a.dtype);

	return (uint64_t)tm * g->K * (tn / 4096 + 1) + 3 * ((uint64_t)tm * ks + g->K * tns) +
	       4 * tm * out + 8 * (uint64_t)(g->ks + 1);
}

static uint32_t parts_for(uint64_t work, uint32_t at_least, uint32_t at_most)
{
	uint64_t p = (work + ITEM_WORK_MAX - 1) / ITEM_WORK_MAX;

	if (p < at_least)
		p = at_least;
	return p > at_most ? at_most : (uint32_t)p;
}

/*
 * Split a region's ni x nj tiles into rectangles, at least `cores` of
 * them where there are enough tiles, each under ITEM_WORK_MAX.  Returns
 * the count; writes them to out unless it is NULL.
 */
static uint32_t mm_items(const struct mm_geom *g, uint32_t row0, uint32_t ni, uint32_t tm,
			 uint32_t col0, uint32_t nj, uint32_t tn, unsigned cores,
			 struct mm_item *out)
{
	uint64_t row_work = nj * tile_work(g, tm, tn);
	uint32_t n = 0;

	if (g->ks == 1 && !g->tail_k && ni >= cores && row_work <= ITEM_WORK_MAX) {
		uint32_t parts = parts_for(ni * row_work, cores, ni);

		for (uint32_t k = 0; k < parts; k++) {
			uint32_t i0 = (uint32_t)((uint64_t)ni * k / parts);
			uint32_t i1 = (uint32_t)((uint64_t)ni * (k + 1) / parts);

			if (i1 > i0 && out)
				out[n] = (struct mm_item){ row0 + i0 * tm, i1 - i0, tm,
							   col0, nj, tn };
			n += i1 > i0;
		}
		return n;
	}
	/* One row block per item; split each block's columns. */
	{
		uint32_t per_i = parts_for(row_work, cores / ni ? cores / ni : 1, nj);

		for (uint32_t i = 0; i < ni; i++)
			for (uint32_t k = 0; k < per_i; k++, n++) {
				uint32_t j0 = (uint32_t)((uint64_t)nj * k / per_i);
				uint32_t j1 = (uint32_t)((uint64_t)nj * (k + 1) / per_i);

				if (out)
					out[n] = (struct mm_item){ row0 + i * tm, 1, tm,
								   col0 + j0 * tn, j1 - j0, tn };
			}
	}
	return n;
}

static spyre_status mm_check(const spyre_layout *a, const spyre_layout *b, spyre_act act,
			     const spyre_layout *c)
{
	static const char fn[] = "spyre_op_matmul";
	spyre_status st;

	if ((st = ops_check_layout(fn, "a", a)) || (st = ops_check_layout(fn, "b", b)) ||
	    (st = ops_check_layout(fn, "c", c)))
		return st;
	if (a->dtype != b->dtype)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: a is %s, b is %s", fn,
				       ops_dtype_name(a->dtype), ops_dtype_name(b->dtype));
	if (b->rows != ops_last_dim(a))
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s: a has K = %u columns, b has %llu rows", fn,
				       ops_last_dim(a), (unsigned long long)b->rows);
	if (c->rows != a->rows || ops_last_dim(c) != ops_last_dim(b))
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s: c is %llu x %u, needs %llu x %u (a's rows x b's columns)",
				       fn, (unsigned long long)c->rows, ops_last_dim(c),
				       (unsigned long long)a->rows, ops_last_dim(b));
	if (a->rows > UINT32_MAX / 2)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: too many rows", fn);
	if ((unsigned)act > SPYRE_ACT_SILU)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: unknown activation %d",
				       fn, (int)act);
	return SPYRE_SUCCESS;
}

struct mm_operand ops_mm_dram(uint16_t arg, const spyre_layout *l)
{
	return (struct mm_operand){ SPK_EP_DRAM, arg, 0,
				    (uint64_t)l->row_sticks * SPYRE_STICK_BYTES, l->dtype };
}

/*
 * The device's ratio of DRAM bandwidth to PE-array throughput, in device
 * cycles (the engine's defaults, docs/engine.md: 150 bytes/ns at 1.5 GHz,
 * 1024 fp16 or bf16 MACs a cycle a core, a quarter of it in fp32, 89
 * cycles of fill and drain a firing, ~100 ns to a stream's first stick).
 */
#define MM_DRAM_BYTES_PER_CYCLE	100
#define MM_MACS_PER_CYCLE	1024
#define MM_FIRING_CYCLES	89
#define MM_LATENCY_CYCLES	150

/*
 * Modelled device cycles of the tiling in g for M x N: the DRAM traffic
 * (A read once per tile column, B once per tile row, C written once) or
 * the busiest core's PE work, whichever is longer, plus the work of one
 * firing that cannot overlap the loads (a core's last K chunk).  With
 * bound, a lower bound whatever the K chunking.
 */
static uint64_t mm_cost(const struct mm_geom *g, uint32_t M, uint32_t N, int bound)
{
	uint64_t tiles_m = div_up(M, g->tm), tiles_n = div_up(N, g->tn);
	uint64_t tiles = tiles_m * tiles_n, per_core = (tiles + OPS_CORES - 1) / OPS_CORES;
	uint64_t stick_in = SPYRE_STICK_BYTES / ops_dtype_bytes(g->a.dtype);
	uint64_t a = tiles_n * M * sticks(g->K, g->a.dtype) * SPYRE_STICK_BYTES;
	uint64_t b = tiles_m * g->K * sticks(N, g->b.dtype) * SPYRE_STICK_BYTES;
	uint64_t c = (uint64_t)M * sticks(N, g->c.dtype) * SPYRE_STICK_BYTES;
	uint64_t firings = g->ks + (g->tail_k ? 1 : 0);
	uint64_t rate = g->a.dtype == SPYRE_DTYPE_FP32 ? MM_MACS_PER_CYCLE / 4 : MM_MACS_PER_CYCLE;
	uint64_t tile = (uint64_t)g->tm * g->K * div_up(g->tn, stick_in) * stick_in / rate +
			firings * MM_FIRING_CYCLES;
	uint64_t dram = (a + b + c) / MM_DRAM_BYTES_PER_CYCLE, pe = per_core * tile;

	if (bound)	/* K chunks add firings and cut the last one short */
		return dram > pe ? dram : pe;
	return (dram > pe ? dram : pe) + tile / firings + MM_LATENCY_CYCLES;
}

/* Chunk K (whole sticks, shrinking by a quarter) until a tile fits a core. */
void ops_mm_chunk_k(struct mm_geom *g, uint32_t K, uint32_t tk)
{
	g->K = K;
	g->tk = tk;
	g->ks = K / tk;
	g->tail_k = K - g->ks * tk;
}

uint32_t ops_mm_smaller_tk(uint32_t tk, uint32_t ps)
{
	uint32_t t = (tk - tk / 4) / ps * ps;

	return t < ps ? ps : t;
}

static int mm_fit_k(struct mm_geom *g)
{
	uint32_t ps = SPYRE_STICK_BYTES / ops_dtype_bytes(g->a.dtype);
	struct mm_item it = { 0, 1, g->tm, 0, 1, g->tn };

	ops_mm_chunk_k(g, g->K, g->K);
	while (!ops_mm_fit(g, &it)) {
		if (g->tk <= ps)
			return 0;
		ops_mm_chunk_k(g, g->K, ops_mm_smaller_tk(g->tk, ps));
	}
	return 1;
}

/*
 * Choose tiles: tm rows (M itself up to 512, or a power of two from 8 to
 * 512), tn columns (a multiple of 64 up to 512), K in as few chunks as let
 * a tile fit a core; of those, the tiling of least modelled device time
 * (mm_cost).  Large products get large tiles (less DRAM traffic), small
 * ones enough tiles to occupy the cores.  A tile must stay under
 * ITEM_WORK_MAX (the smallest candidate is taken regardless, as before).
 */
spyre_status ops_mm_geometry(struct mm_geom *g, uint32_t M, uint32_t N)
{
	uint32_t n64 = div_up(N, 64) * 64;
	uint32_t tms[8], tns[6], ntm = 0, ntn = 0;
	uint64_t best = UINT64_MAX;
	struct mm_geom b = *g;

	if (M <= 512)
		tms[ntm++] = M;
	for (uint32_t tm = 512; tm >= 8; tm /= 2)
		if (tm < M)
			tms[ntm++] = tm;
	if (n64 <= 512)
		tns[ntn++] = n64;
	for (uint32_t tn = 512; tn >= 64; tn /= 2)
		if (tn < n64)
			tns[ntn++] = tn;
	for (uint32_t i = 0; i < ntm; i++)
		for (uint32_t j = 0; j < ntn; j++) {
			uint64_t cost;

			g->tm = tms[i];
			g->tn = tns[j];
			g->ks = 1;
			g->tk = g->K;
			g->tail_k = 0;
			if (mm_cost(g, M, N, 1) >= best || !mm_fit_k(g))
				continue;
			if (tile_work(g, g->tm, g->tn) > ITEM_WORK_MAX &&
			    (i < ntm - 1 || j < ntn - 1))
				continue;
			cost = mm_cost(g, M, N, 0);
			if (cost < best) {
				best = cost;
				b = *g;
			}
		}
	*g = b;
	if (best == UINT64_MAX)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "matmul: no tiling of K = %u fits a core", g->K);
	return SPYRE_SUCCESS;
}

spyre_status ops_gen_matmul(const spyre_layout *a, const spyre_layout *b, spyre_act act,
			    const spyre_layout *c, struct ops_plan *plan)
{
	struct mm_geom g;
	static const uint8_t args[3] = { 0, 1, 2 };
	uint32_t M, N, mfull, nfull, nreg = 0;
	struct { uint32_t row0, ni, tm, col0, nj, tn; uint64_t work; unsigned cores; } reg[4];
	uint64_t total = 0;
	struct mm_item *items;
	unsigned nitems = 0, given = 0;
	spyre_status st;

	if ((st = mm_check(a, b, act, c)))
		return st;
	memset(&g, 0, sizeof(g));
	g.a = ops_mm_dram(0, a);
	g.b = ops_mm_dram(1, b);
	g.c = ops_mm_dram(2, c);
	g.act = act;
	g.K = ops_last_dim(a);
	if ((st = ops_mm_geometry(&g, (uint32_t)a->rows, ops_last_dim(b))))
		return st;
	M = (uint32_t)a->rows;
	N = ops_last_dim(b);
	mfull = M / g.tm;
	nfull = N / g.tn;
	/* Regions of uniform tiles: full, column tail, row tail, corner. */
	for (int r = 0; r < 4; r++) {
		uint32_t ni = r < 2 ? mfull : (M % g.tm ? 1 : 0);
		uint32_t nj = r % 2 == 0 ? nfull : (N % g.tn ? 1 : 0);
		uint32_t tm = r < 2 ? g.tm : M % g.tm, tn = r % 2 == 0 ? g.tn : N % g.tn;

		if (!ni || !nj)
			continue;
		reg[nreg].row0 = r < 2 ? 0 : mfull * g.tm;
		reg[nreg].col0 = r % 2 == 0 ? 0 : nfull * g.tn;
		reg[nreg].ni = ni;
		reg[nreg].nj = nj;
		reg[nreg].tm = tm;
		reg[nreg].tn = tn;
		reg[nreg].work = (uint64_t)ni * nj * tm * div_up(tn, 64);
		total += reg[nreg].work;
		nreg++;
	}
	/* Cores in proportion to each region's work, at least one each. */
	for (uint32_t r = 0; r < nreg; r++) {
		reg[r].cores = (unsigned)(OPS_CORES * reg[r].work / total);
		if (!reg[r].cores)
			reg[r].cores = 1;
		if (r == nreg - 1 && given < OPS_CORES && reg[r].cores < OPS_CORES - given)
			reg[r].cores = OPS_CORES - given;
		given += reg[r].cores;
		nitems += mm_items(&g, reg[r].row0, reg[r].ni, reg[r].tm, reg[r].col0, reg[r].nj,
				   reg[r].tn, reg[r].cores, NULL);
	}
	items = calloc(nitems, sizeof(*items));
	if (!items)
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "spyre_op_matmul: out of memory");
	nitems = 0;
	for (uint32_t r = 0; r < nreg; r++)
		nitems += mm_items(&g, reg[r].row0, reg[r].ni, reg[r].tm, reg[r].col0, reg[r].nj,
				   reg[r].tn, reg[r].cores, items + nitems);
	/* Items to launches of up to 32 cores, one item per core. */
	for (unsigned first = 0; first < nitems && !st; first += OPS_CORES) {
		struct pb_program *prog = ops_prog_new(3);

		if (!prog) {
			st = spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY,
					     "spyre_op_matmul: out of memory");
			break;
		}
		for (unsigned k = first; k < nitems && k < first + OPS_CORES; k++) {
			struct pb_core *core = pb_core(prog, k - first);

			ops_mm_core(&g, &items[k], core, ops_mm_fit(&g, &items[k]), SPK_NONE);
			if (!ops_core_fits(core))
				st = spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
						     "spyre_op_matmul: tile does not fit a core");
		}
		if (!st)
			st = ops_plan_add(plan, prog, args);
		free(prog);
	}
	free(items);
	return st;
}
