// SPDX-License-Identifier: MIT
/*
 * The timing model against the published Spyre figures
 * (../shared/reference/spyre-hardware.md, "Published results to reproduce").
 * Every case is a real kernel built with spyre_program_builder.h and run through
 * the loader and scheduler with the default parameter set
 * (spyre_engine_config_default, docs/engine.md "Timing model"); the bench
 * prints each result next to its published figure and, with an output
 * path, writes {"name", "value", "unit"} records as a JSON array.
 *
 * usage: model-bench [results.json]
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "dtype.h"
#include "engine_testlib.h"

#define MiB		(1ull << 20)
#define MEM_BYTES	(128 * MiB)

static struct pb_program prog;
static struct test_mem mem;

struct result {
	const char *name, *unit;
	double value, published;
};

static struct result results[16];
static unsigned num_results;

static void report(const char *name, double value, double published, const char *unit)
{
	results[num_results++] = (struct result){ name, unit, value, published };
	printf("%-40s %10.3f %-8s published %8.3f  (%+.1f%%)\n", name, value, unit, published,
	       (value / published - 1) * 100);
}

/* Load and run prog; device cycles, or 0 on failure (the reason is printed). */
static uint64_t run(const uint64_t *args, unsigned nargs, struct spyre_engine_stats *stats)
{
	struct spyre_engine_config cfg;

	spyre_engine_config_default(&cfg);
	if (test_run(&cfg, &prog, &mem, args, nargs, stats, NULL))
		return 0;
	return stats->device_cycles;
}

static double cycles_to_us(uint64_t cycles)
{
	struct spyre_engine_config cfg;

	spyre_engine_config_default(&cfg);
	return (double)cycles / cfg.timing.clock_ghz / 1e3;
}

/*
 * Softmax of a 512x1024 fp16 tensor along dim 0 on one core: the tensor
 * is sticked on its 1024 columns in the card's device layout [16, 512, 64]
 * (stick column outermost, as **[hw]** lays out (5,100,150) as
 * [100,3,5,64]), so each firing reads one column of sticks of all 512
 * rows, 64 KiB contiguous (ACROSS: per lane over the rows); 16 firings,
 * FIFOs of two firings (double-buffered), in and out of DRAM.
 */
static double case_softmax(void)
{
	struct spyre_engine_stats st;
	uint64_t args[2] = { 0, 8 * MiB };
	struct pb_endpoint col = pb_linear(SPK_EP_DRAM, 0, 0, 16 * 512);
	struct pb_core *c;
	struct pb_op *op;

	memset(&prog, 0, sizeof(prog));
	prog.num_args = 2;
	c = pb_core(&prog, 0);
	op = pb_op(c, SPK_OPC_SOFTMAX, SPK_DT_FP16, SPK_DT_FP16, 16, 512, 64);
	op->flags = SPK_OPF_ACROSS;
	op->in[0] = pb_stream(c, col, pb_op_end(), 16 * 512, 2 * 512);
	col.ref = 1;
	op->out = pb_stream(c, pb_op_end(), col, 16 * 512, 2 * 512);
	return cycles_to_us(run(args, 2, &st));
}

/*
 * Sustained matmul on one core: 64 firings of 64x64x64 fp16 (fp32 out),
 * FIFOs of two tiles, A streamed, B re-read per tile.
 */
static double case_matmul_rate(void)
{
	struct spyre_engine_stats st;
	uint64_t args[3] = { 0, 4 * MiB, 8 * MiB };
	const uint32_t tiles = 64, a_st = 64, b_st = 64, c_st = 128;
	struct pb_core *c;
	struct pb_op *op;

	memset(&prog, 0, sizeof(prog));
	prog.num_args = 3;
	c = pb_core(&prog, 0);
	op = pb_op(c, SPK_OPC_MATMUL, SPK_DT_FP16, SPK_DT_FP32, tiles, 64, 64);
	op->k = 64;
	op->k_steps = 1;
	op->in[0] = pb_stream(c, pb_linear(SPK_EP_DRAM, 0, 0, tiles * a_st), pb_op_end(),
			      tiles * a_st, 2 * a_st);
	op->in[1] = pb_stream(c, (struct pb_endpoint){ SPK_EP_DRAM, 1, 0, 0, { b_st, tiles, 1, 1 },
						       { 128, 0, 0, 0 } },
			      pb_op_end(), tiles * b_st, 2 * b_st);
	op->out = pb_stream(c, pb_op_end(), pb_linear(SPK_EP_DRAM, 2, 0, tiles * c_st),
			    tiles * c_st, 2 * c_st);
	op->acc_buffer = pb_buffer(c, 64 * 2 * 128);
	if (!run(args, 3, &st))
		return 0;
	return (double)st.macs / (double)st.device_ns;
}

/*
 * 2.1 MB (2 MiB) shuffled all-to-all across 8 cores: a (8, 1024, 128) fp16
 * tensor in the card's device layout [1024, 2, 8, 64] (**[hw]** lays
 * (5,100,150) out as [100,3,5,64]) changes its core split from dim 0 to
 * dim 1, as when a batch-split op feeds a sequence-split one.  Core c holds
 * batch c, 2048 contiguous sticks in its scratchpad; core d receives
 * positions 128d .. 128d + 127 of every batch.  The eighth core c sends to
 * core d is 256 contiguous sticks; it lands at batch c of d's slice, every
 * 8th stick (1-stick runs).  Core c's stream d sends that part (a
 * scratchpad copy for d = c), its stream 8 + r receives from the r-th
 * other core; 64-stick FIFOs.  With `scatter` false the parts land
 * contiguously instead (the best slice shape).
 */
static uint16_t recv_index(unsigned self, unsigned from)
{
	return (uint16_t)(8 + (from < self ? from : from - 1));
}

static struct pb_endpoint shuffle_dst(uint16_t buf, unsigned from, uint32_t part, bool scatter)
{
	struct pb_endpoint e = pb_linear(SPK_EP_SCRATCH, buf, (uint64_t)from * part * 128, part);

	if (scatter)	/* (position, half) -> stick ((position * 2 + half) * 8 + from) */
		e = (struct pb_endpoint){ SPK_EP_SCRATCH, buf, 0, (uint64_t)from * 128,
					  { 2, part / 2, 1, 1 }, { 8 * 128, 16 * 128, 0, 0 } };
	return e;
}

static double case_shuffle(bool scatter)
{
	struct spyre_engine_stats st;
	const unsigned cores = 8;
	const uint32_t slice = 2048, part = slice / cores;	/* sticks */

	memset(&prog, 0, sizeof(prog));
	for (unsigned c = 0; c < cores; c++) {
		struct pb_core *pc = pb_core(&prog, c);
		uint16_t src = pb_buffer(pc, slice * 128), dst = pb_buffer(pc, slice * 128);

		for (unsigned d = 0; d < cores; d++) {
			struct pb_endpoint from = pb_linear(SPK_EP_SCRATCH, src,
							    (uint64_t)d * part * 128, part);

			if (d == c)
				pb_stream(pc, from, shuffle_dst(dst, c, part, scatter), part, 64);
			else
				pb_stream(pc, from, pb_ring(recv_index(d, c), 1u << d), part, 64);
		}
		for (unsigned s = 0; s < cores; s++)
			if (s != c)
				pb_stream(pc, pb_ring((uint16_t)c, s),
					  shuffle_dst(dst, s, part, scatter), part, 64);
	}
	return cycles_to_us(run(NULL, 0, &st));
}

/*
 * Relayout of data spread over 32 cores (64 KiB each): every core's slice
 * must move to the next core.  Through device memory it is two kernels,
 * one storing every slice, one loading each back on its new core (a launch
 * boundary orders them); on chip it is one kernel of ring streams from
 * each core's scratchpad to its neighbour's.  Returns DRAM time / ring time.
 */
static double case_relayout(double *dram_us, double *ring_us)
{
	struct spyre_engine_stats st;
	const unsigned cores = 32;
	const uint32_t slice = 512;	/* sticks */
	uint64_t args[1] = { 0 }, t_store = 0, t_load = 0, t_ring = 0;

	for (int phase = 0; phase < 3; phase++) {
		memset(&prog, 0, sizeof(prog));
		prog.num_args = phase < 2 ? 1 : 0;
		for (unsigned c = 0; c < cores; c++) {
			struct pb_core *pc = pb_core(&prog, c);
			uint16_t data = pb_buffer(pc, slice * 128);
			uint64_t mine = (uint64_t)c * slice * 128;
			uint64_t prev = (uint64_t)((c + cores - 1) % cores) * slice * 128;

			if (phase == 0)
				pb_stream(pc, pb_linear(SPK_EP_SCRATCH, data, 0, slice),
					  pb_linear(SPK_EP_DRAM, 0, mine, slice), slice, 256);
			else if (phase == 1)
				pb_stream(pc, pb_linear(SPK_EP_DRAM, 0, prev, slice),
					  pb_linear(SPK_EP_SCRATCH, data, 0, slice), slice, 256);
			else {
				uint16_t in = pb_buffer(pc, slice * 128);

				pb_stream(pc, pb_linear(SPK_EP_SCRATCH, data, 0, slice),
					  pb_ring(1, 1u << ((c + 1) % cores)), slice, 256);
				pb_stream(pc, pb_ring(0, (c + cores - 1) % cores),
					  pb_linear(SPK_EP_SCRATCH, in, 0, slice), slice, 256);
			}
		}
		if (phase == 0)
			t_store = run(args, 1, &st);
		else if (phase == 1)
			t_load = run(args, 1, &st);
		else
			t_ring = run(NULL, 0, &st);
	}
	*dram_us = cycles_to_us(t_store + t_load);
	*ring_us = cycles_to_us(t_ring);
	return t_ring ? (double)(t_store + t_load) / (double)t_ring : 0;
}

/*
 * A transformer MLP, Y = silu(X W1) W2, on the 32 cores, as torch-spyre's
 * fused MLP kernel (**[hw]** "fused MLP kernel, 32 cores"): Granite 3.3
 * 8B's hidden size H = 4096, its intermediate size (12800) truncated to
 * I = 4096 (a third; the host computes every MAC, so this keeps a run near
 * a second), and M = 992 tokens (a prefill of about 1000; 31 x 32 rows),
 * fp16.  Work division: cores 1-31 each own 32 rows of X (kept in their
 * scratchpad) and compute those rows of the whole MLP; core 0 streams the
 * weights from DRAM in 256 x 128 tiles and multicasts each to the 31 over
 * the ring (the weights leave DRAM once).  Matmul firings are 32 x 256 x
 * 128 (16 k steps per output tile of 32 x 128), FIFOs of two firings.
 *
 * Fused: one kernel; matmul 1's output tiles go through SILU into a
 * scratchpad buffer (32 x I), which matmul 2 then reads.  Unfused: three
 * kernels with the intermediate in device memory, as when the activation's
 * core split differs from the matmuls' and both its input and output spill
 * to DRAM: matmul 1 -> DRAM, SILU DRAM -> DRAM, DRAM -> matmul 2.
 */
#define MLP_H		4096u
#define MLP_I		4096u
#define MLP_ROWS	32u		/* per computing core */
#define MLP_CORES	31u		/* computing cores: 1 .. 31 */
#define MLP_M		(MLP_ROWS * MLP_CORES)
#define MLP_KT		256u
#define MLP_NT		128u

enum { MLP_X, MLP_W1, MLP_W2, MLP_Y, MLP_HPRE, MLP_HACT, MLP_ARGS };

static const uint64_t mlp_addr[MLP_ARGS] = { 0, 8 * MiB, 40 * MiB, 72 * MiB, 80 * MiB,
					     88 * MiB };

/* Core 0 streams weight matrix `arg` (k x n, sticked on n) tile by tile to cores 1-31. */
static void mlp_weights(struct pb_core *c, uint16_t arg, uint16_t peer, uint32_t k, uint32_t n)
{
	uint32_t row = n / 64, tile = MLP_KT * MLP_NT / 64;
	struct pb_endpoint w = { SPK_EP_DRAM, arg, 0, 0,
				 { MLP_NT / 64, MLP_KT, k / MLP_KT, n / MLP_NT },
				 { 128, row * 128, (int64_t)MLP_KT * row * 128,
				   MLP_NT / 64 * 128 } };

	pb_stream(c, w, pb_ring(peer, ((1u << MLP_CORES) - 1) << 1), k * row, 2 * tile);
}

/*
 * On a computing core: matmul of A (32 rows of k, from scratchpad buffer
 * a_buf, filled by stream a_after) and B (k x n, tiles from core 0's
 * stream `peer`), fp16 out.  Returns the op.
 */
static struct pb_op *mlp_matmul(struct pb_core *c, uint16_t a_buf, uint16_t a_after,
				uint16_t peer, uint32_t k, uint32_t n)
{
	uint32_t a_tile = MLP_ROWS * MLP_KT / 64, b_tile = MLP_KT * MLP_NT / 64;
	uint32_t firings = (k / MLP_KT) * (n / MLP_NT);
	struct pb_endpoint a = { SPK_EP_SCRATCH, a_buf, 0, 0,
				 { MLP_KT / 64, MLP_ROWS, k / MLP_KT, n / MLP_NT },
				 { 128, k / 64 * 128, MLP_KT / 64 * 128, 0 } };
	struct pb_op *op = pb_op(c, SPK_OPC_MATMUL, SPK_DT_FP16, SPK_DT_FP16, firings, MLP_ROWS,
				 MLP_NT);

	op->k = MLP_KT;
	op->k_steps = k / MLP_KT;
	op->in[0] = pb_stream(c, a, pb_op_end(), firings * a_tile, 2 * a_tile);
	c->streams[op->in[0]].after = a_after;
	op->in[1] = pb_stream(c, pb_ring(peer, 0), pb_op_end(), firings * b_tile, 2 * b_tile);
	op->acc_buffer = pb_buffer(c, MLP_ROWS * MLP_NT / 32 * 128);
	return op;
}

/* Output tiles (32 x 128) of a 32 x n result into rows `row0` of a matrix or buffer. */
static struct pb_endpoint mlp_tiles(uint8_t kind, uint16_t ref, uint64_t row0, uint32_t n)
{
	struct pb_endpoint e = { kind, ref, 0, row0 * n * 2,
				 { MLP_NT / 64, MLP_ROWS, n / MLP_NT, 1 },
				 { 128, n / 64 * 128, MLP_NT / 64 * 128, 0 } };
	return e;
}

/* This core's 32 rows of a DRAM matrix (n wide) into a new scratchpad buffer; its stream. */
static uint16_t mlp_load_rows(struct pb_core *c, uint16_t arg, unsigned core, uint32_t n,
			      uint16_t *buf)
{
	uint32_t sticks = MLP_ROWS * n / 64;
	uint64_t off = (uint64_t)(core - 1) * sticks * 128;

	*buf = pb_buffer(c, sticks * 128);
	return pb_stream(c, pb_linear(SPK_EP_DRAM, arg, off, sticks),
			 pb_linear(SPK_EP_SCRATCH, *buf, 0, sticks), sticks, 256);
}

static void mlp_fused(void)
{
	memset(&prog, 0, sizeof(prog));
	prog.num_args = MLP_ARGS;
	mlp_weights(pb_core(&prog, 0), MLP_W1, 2, MLP_H, MLP_I);
	mlp_weights(pb_core(&prog, 0), MLP_W2, 6, MLP_I, MLP_H);
	for (unsigned core = 1; core <= MLP_CORES; core++) {
		struct pb_core *c = pb_core(&prog, core);
		uint16_t xbuf, hbuf = pb_buffer(c, MLP_ROWS * MLP_I * 2), x_in, h_in;
		const uint32_t h_sticks = MLP_ROWS * MLP_I / 64, fifo = 2 * MLP_ROWS * MLP_NT / 64;
		struct pb_op *mm1, *act, *mm2;

		x_in = mlp_load_rows(c, MLP_X, core, MLP_H, &xbuf);		/* stream 0 */
		mm1 = mlp_matmul(c, xbuf, x_in, 0, MLP_H, MLP_I);		/* 1, 2 */
		act = pb_op(c, SPK_OPC_SILU, SPK_DT_FP16, SPK_DT_FP16, MLP_I / MLP_NT, MLP_ROWS,
			    MLP_NT);
		act->in[0] = mm1->out = pb_stream(c, pb_op_end(), pb_op_end(), h_sticks,
						  fifo);				/* 3 */
		act->out = h_in = pb_stream(c, pb_op_end(),
					    mlp_tiles(SPK_EP_SCRATCH, hbuf, 0, MLP_I), h_sticks,
					    fifo);				/* 4 */
		mm2 = mlp_matmul(c, hbuf, h_in, 1, MLP_I, MLP_H);		/* 5, 6 */
		mm2->out = pb_stream(c, pb_op_end(),
				     mlp_tiles(SPK_EP_DRAM, MLP_Y, (core - 1) * MLP_ROWS, MLP_H),
				     MLP_ROWS * MLP_H / 64, fifo);		/* 7 */
	}
}

/* Unfused kernel 1 (matmul 1 -> DRAM) or 3 (DRAM -> matmul 2). */
static void mlp_matmul_kernel(bool second)
{
	uint16_t in = second ? MLP_HACT : MLP_X, out = second ? MLP_Y : MLP_HPRE;
	uint32_t k = second ? MLP_I : MLP_H, n = second ? MLP_H : MLP_I;

	memset(&prog, 0, sizeof(prog));
	prog.num_args = MLP_ARGS;
	mlp_weights(pb_core(&prog, 0), second ? MLP_W2 : MLP_W1, 2, k, n);
	for (unsigned core = 1; core <= MLP_CORES; core++) {
		struct pb_core *c = pb_core(&prog, core);
		uint16_t buf, load = mlp_load_rows(c, in, core, k, &buf);
		struct pb_op *mm = mlp_matmul(c, buf, load, 0, k, n);

		mm->out = pb_stream(c, pb_op_end(),
				    mlp_tiles(SPK_EP_DRAM, out, (core - 1) * MLP_ROWS, n),
				    MLP_ROWS * n / 64, 2 * MLP_ROWS * MLP_NT / 64);
	}
}

/* Unfused kernel 2: SILU over the intermediate, DRAM to DRAM, split over the 32 cores. */
static void mlp_act_kernel(void)
{
	const uint32_t sticks = MLP_M * MLP_I / 64 / 32, firing = 32;

	memset(&prog, 0, sizeof(prog));
	prog.num_args = MLP_ARGS;
	for (unsigned core = 0; core < 32; core++) {
		struct pb_core *c = pb_core(&prog, core);
		uint64_t off = (uint64_t)core * sticks * 128;
		struct pb_op *act = pb_op(c, SPK_OPC_SILU, SPK_DT_FP16, SPK_DT_FP16,
					  sticks / firing, firing, 64);

		act->in[0] = pb_stream(c, pb_linear(SPK_EP_DRAM, MLP_HPRE, off, sticks),
				       pb_op_end(), sticks, 4 * firing);
		act->out = pb_stream(c, pb_op_end(), pb_linear(SPK_EP_DRAM, MLP_HACT, off, sticks),
				     sticks, 4 * firing);
	}
}

/* Fill a matrix with fp16 values in [-scale, scale]. */
static void fill_fp16(uint64_t addr, uint64_t elems, float scale, uint32_t seed)
{
	for (uint64_t i = 0; i < elems; i++) {
		uint16_t h = f32_to_fp16(scale * ((float)((i * 7919 + seed) % 2001) / 1000 - 1));

		memcpy(mem.bytes + addr + 2 * i, &h, 2);
	}
}

/* Device time and PE use of a fused or unfused MLP (all its kernels). */
struct mlp_result {
	uint64_t cycles, macs, pe_busy;
	double us;
	double util;		/* MACs / (32 cores x peak MACs per cycle x cycles) */
	double busy;		/* PE busy cycles, fill and drain included / (32 x cycles) */
};

/* Runs the current program, adding its device time, MACs and PE busy cycles. */
static int mlp_run(struct mlp_result *res)
{
	struct spyre_engine_stats st;
	uint64_t args[MLP_ARGS];

	memcpy(args, mlp_addr, sizeof(args));
	if (!run(args, MLP_ARGS, &st))
		return -1;
	res->cycles += st.device_cycles;
	res->macs += st.macs;
	for (unsigned c = 0; c < SPYRE_ENGINE_MAX_CORES; c++)
		res->pe_busy += st.pe_busy_cycles[c];
	return 0;
}

static void mlp_finish(struct mlp_result *res)
{
	struct spyre_engine_config cfg;

	spyre_engine_config_default(&cfg);
	res->us = cycles_to_us(res->cycles);
	res->util = (double)res->macs / (32.0 * cfg.timing.pe_macs_per_cycle * (double)res->cycles);
	res->busy = (double)res->pe_busy / (32.0 * (double)res->cycles);
}

/* Returns 0 when both versions ran and gave the same, finite Y. */
static int case_mlp(struct mlp_result *fused, struct mlp_result *unfused)
{
	uint64_t ycopy = (uint64_t)MLP_M * MLP_H * 2;
	uint8_t *y = malloc(ycopy);
	int rc = 0;

	if (!y)
		return -1;
	fill_fp16(mlp_addr[MLP_X], (uint64_t)MLP_M * MLP_H, 1, 1);
	fill_fp16(mlp_addr[MLP_W1], (uint64_t)MLP_H * MLP_I, 1.0f / 64, 2);
	fill_fp16(mlp_addr[MLP_W2], (uint64_t)MLP_I * MLP_H, 1.0f / 64, 3);
	memset(fused, 0, sizeof(*fused));
	memset(unfused, 0, sizeof(*unfused));
	mlp_fused();
	rc |= mlp_run(fused);
	mlp_finish(fused);
	memcpy(y, mem.bytes + mlp_addr[MLP_Y], ycopy);
	memset(mem.bytes + mlp_addr[MLP_Y], 0, ycopy);
	mlp_matmul_kernel(false);
	rc |= mlp_run(unfused);
	mlp_act_kernel();
	rc |= mlp_run(unfused);
	mlp_matmul_kernel(true);
	rc |= mlp_run(unfused);
	mlp_finish(unfused);
	if (!rc && memcmp(y, mem.bytes + mlp_addr[MLP_Y], ycopy)) {
		fprintf(stderr, "fused and unfused MLP results differ\n");
		rc = -1;
	}
	for (uint64_t i = 0, nonzero = 0; !rc && i < ycopy / 2; i++) {
		uint16_t h;

		memcpy(&h, y + 2 * i, 2);
		nonzero += (h & 0x7fff) != 0;
		if ((h & 0x7c00) == 0x7c00 || (i + 1 == ycopy / 2 && nonzero < i / 2)) {
			fprintf(stderr, "MLP result: not finite, or mostly zero\n");
			rc = -1;
		}
	}
	free(y);
	return rc;
}

int main(int argc, char **argv)
{
	double dram_us, ring_us, ratio;
	struct mlp_result fused, unfused;
	int rc = 0;

	test_mem_init(&mem, MEM_BYTES);
	for (uint64_t i = 0; i < MEM_BYTES; i += 2) {
		uint16_t h = (uint16_t)(0x3000 + (i * 7919 % 0x0c00));	/* finite fp16 */

		memcpy(mem.bytes + i, &h, 2);
	}
	report("model.softmax_512x1024_us", case_softmax(), 23.67, "us");
	report("model.matmul_mac_per_ns_per_core", case_matmul_rate(), 1140, "MAC/ns");
	report("model.shuffle_2p1MB_8cores_us", case_shuffle(true), 8.7, "us");
	printf("  (the same shuffle with contiguous parts: %.2f us; published range 2.3-24.2)\n",
	       case_shuffle(false));
	ratio = case_relayout(&dram_us, &ring_us);
	printf("  (relayout: %.2f us through DRAM, %.3f us over the ring)\n", dram_us, ring_us);
	report("model.relayout_ring_vs_dram_ratio", ratio, 80 / 1.1, "ratio");
	if (case_mlp(&fused, &unfused)) {
		rc = 1;
	} else {
		printf("  (MLP %ux%ux%u: %.1f us fused, %.1f us unfused, same Y;\n"
		       "   PE busy with fill and drain: %.3f fused, %.3f unfused)\n", MLP_M, MLP_H,
		       MLP_I, fused.us, unfused.us, fused.busy, unfused.busy);
		report("model.fused_mlp_utilization", fused.util, 0.79, "ratio");
		report("model.unfused_mlp_utilization", unfused.util, 0.66, "ratio");
		/* Published: kernel time about 17% lower fused. */
		report("model.fused_mlp_time_vs_unfused", fused.us / unfused.us, 0.83, "ratio");
	}
	test_mem_fini(&mem);
	if (argc > 1) {
		FILE *f = fopen(argv[1], "w");

		if (!f)
			return 1;
		fprintf(f, "[\n");
		for (unsigned i = 0; i < num_results; i++) {
			fprintf(f, "  {\"name\": \"%s\", \"value\": %.4f, \"unit\": \"%s\"},\n",
				results[i].name, results[i].value, results[i].unit);
			fprintf(f, "  {\"name\": \"%s.published\", \"value\": %.4f, \"unit\": \"%s\"}%s\n",
				results[i].name, results[i].published, results[i].unit,
				i + 1 < num_results ? "," : "");
		}
		fprintf(f, "]\n");
		fclose(f);
	}
	return rc;
}
