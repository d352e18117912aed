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

#include "engine_testlib.h"

#define MiB		(1ull << 20)
#define MEM_BYTES	(64 * MiB)

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

int main(int argc, char **argv)
{
	double dram_us, ring_us, ratio;

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
	return 0;
}
