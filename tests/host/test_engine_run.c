// SPDX-License-Identifier: MIT
/*
 * The scheduler and the timing model: deadlocks are detected, not hung on;
 * back-pressure keeps results right with the smallest FIFOs; the ring
 * multicasts; scratchpad relayout; runs are deterministic; and the timing
 * model gives the rates its parameters promise (docs/engine.md); a run
 * its caller aborts stops soon and writes nothing more; concurrent runs
 * share a bounded set of arenas.
 */
#define _POSIX_C_SOURCE 200809L	/* setenv */

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "arena.h"
#include "compute_kernel.h"
#include "engine_testlib.h"
#include "gemm.h"
#include "tap.h"

#define MEM_BYTES	(16ull << 20)
#define MiB		(1ull << 20)

static struct pb_program prog;
static struct spyre_engine_config cfg;
static struct spyre_engine_stats stats;
static struct spyre_engine_error err;

static void fill_pattern(struct test_mem *m, uint64_t addr, uint64_t bytes, uint32_t seed)
{
	for (uint64_t i = 0; i < bytes; i++)
		m->bytes[addr + i] = (uint8_t)((i * 2654435761u + seed) >> 13);
}

/* a -> COPY -> b -> COPY -> a: each op waits for the other. */
TEST(deadlock_cyclic_ops)
{
	struct pb_core *c;
	struct pb_op *op0, *op1;
	struct test_mem mem;
	uint64_t args[2] = { 0, 4096 };
	uint16_t a, b, in, out;

	memset(&prog, 0, sizeof(prog));
	spyre_engine_config_default(&cfg);
	prog.num_args = 2;
	c = pb_core(&prog, 0);
	in = pb_stream(c, pb_linear(SPK_EP_DRAM, 0, 0, 4), pb_op_end(), 4, 4);
	a = pb_stream(c, pb_op_end(), pb_op_end(), 4, 4);
	b = pb_stream(c, pb_op_end(), pb_op_end(), 4, 4);
	out = pb_stream(c, pb_op_end(), pb_linear(SPK_EP_DRAM, 1, 0, 4), 4, 4);
	op0 = pb_op(c, SPK_OPC_ADD, SPK_DT_FP16, SPK_DT_FP16, 4, 1, 64);
	op0->in[0] = in;
	op0->in[1] = b;
	op0->out = a;
	op1 = pb_op(c, SPK_OPC_COPY, SPK_DT_FP16, SPK_DT_FP16, 4, 1, 64);
	op1->in[0] = a;
	op1->out = b;
	/* Nothing drains `out`: give it a producer so the program is well-formed. */
	c->streams[out].src = pb_linear(SPK_EP_DRAM, 0, 0, 4);
	test_mem_init(&mem, 1 << 16);
	EXPECT_EQ(test_run(&cfg, &prog, &mem, args, 2, &stats, &err), SPYRE_ENGINE_E_DEADLOCK);
	EXPECT_EQ(err.core, 0);
	/* The report names the op, the stream it waits on and how far that got. */
	EXPECT_EQ(err.at, SPYRE_ENGINE_AT_OP);
	EXPECT_EQ(err.index, 0);
	EXPECT_EQ(err.wait, SPYRE_ENGINE_WAIT_FIFO_EMPTY);
	EXPECT_EQ(err.stream, b);
	EXPECT_EQ(err.sticks_done, 0);
	EXPECT_EQ(err.sticks_total, 4);
	EXPECT_STREQ(err.detail, "op 0 waits on stream 2 (FIFO empty), 0 of 4 sticks delivered; "
				 "2 agents unfinished");
	test_mem_fini(&mem);
}

/* Stream 0 starts after stream 1, and stream 1 after stream 0. */
TEST(deadlock_stream_dependency_cycle)
{
	struct pb_core *c;
	struct test_mem mem;
	uint64_t args[2] = { 0, 4096 };

	memset(&prog, 0, sizeof(prog));
	spyre_engine_config_default(&cfg);
	prog.num_args = 2;
	c = pb_core(&prog, 0);
	pb_stream(c, pb_linear(SPK_EP_DRAM, 0, 0, 4), pb_linear(SPK_EP_DRAM, 1, 0, 4), 4, 4);
	pb_stream(c, pb_linear(SPK_EP_DRAM, 0, 0, 4), pb_linear(SPK_EP_DRAM, 1, 512, 4), 4, 4);
	c->streams[0].after = 1;
	c->streams[1].after = 0;
	test_mem_init(&mem, 1 << 16);
	EXPECT_EQ(test_run(&cfg, &prog, &mem, args, 2, &stats, &err), SPYRE_ENGINE_E_DEADLOCK);
	EXPECT_EQ(err.at, SPYRE_ENGINE_AT_STREAM);
	EXPECT_EQ(err.index, 0);
	EXPECT_EQ(err.wait, SPYRE_ENGINE_WAIT_AFTER);
	EXPECT_EQ(err.stream, 1);
	EXPECT_EQ(err.sticks_total, 4);
	/* Without the cycle it runs. */
	c->streams[0].after = SPK_NONE;
	EXPECT_EQ(test_run(&cfg, &prog, &mem, args, 2, &stats, &err), SPYRE_ENGINE_OK);
	test_mem_fini(&mem);
}

/* Two cores each waiting for the other's ring stream. */
TEST(deadlock_across_the_ring)
{
	struct test_mem mem;
	uint64_t args[1] = { 0 };

	memset(&prog, 0, sizeof(prog));
	spyre_engine_config_default(&cfg);
	prog.num_args = 1;
	for (unsigned core = 0; core < 2; core++) {
		struct pb_core *c = pb_core(&prog, core);
		struct pb_op *op = pb_op(c, SPK_OPC_COPY, SPK_DT_FP16, SPK_DT_FP16, 2, 1, 64);

		op->in[0] = pb_stream(c, pb_ring(1, 1 - core), pb_op_end(), 2, 2);
		op->out = pb_stream(c, pb_op_end(), pb_ring(0, 1u << (1 - core)), 2, 2);
	}
	test_mem_init(&mem, 1 << 16);
	EXPECT_EQ(test_run(&cfg, &prog, &mem, args, 1, &stats, &err), SPYRE_ENGINE_E_DEADLOCK);
	EXPECT_EQ(err.core, 0);
	EXPECT_EQ(err.at, SPYRE_ENGINE_AT_STREAM);
	EXPECT_EQ(err.wait, SPYRE_ENGINE_WAIT_FIFO_EMPTY);
	EXPECT_EQ(err.sticks_total, 2);
	test_mem_fini(&mem);
}

/* DRAM -> COPY -> DRAM, n sticks, both FIFOs of fifo_sticks. */
static uint64_t copy_through_op(uint32_t n, uint32_t fifo_sticks, unsigned *mismatches)
{
	struct pb_core *c;
	struct pb_op *op;
	struct test_mem mem;
	uint64_t args[2] = { 0, 4 * MiB };

	memset(&prog, 0, sizeof(prog));
	spyre_engine_config_default(&cfg);
	prog.num_args = 2;
	c = pb_core(&prog, 3);
	op = pb_op(c, SPK_OPC_COPY, SPK_DT_FP32, SPK_DT_FP32, n, 1, 32);
	op->in[0] = pb_stream(c, pb_linear(SPK_EP_DRAM, 0, 0, n), pb_op_end(), n, fifo_sticks);
	op->out = pb_stream(c, pb_op_end(), pb_linear(SPK_EP_DRAM, 1, 0, n), n, fifo_sticks);
	test_mem_init(&mem, MEM_BYTES);
	/* Finite fp32 values so the copy is exact. */
	for (uint32_t i = 0; i < n * 32; i++) {
		float f = (float)i * 0.5f - 1000;

		memcpy(mem.bytes + 4 * i, &f, 4);
	}
	*mismatches = 1;
	if (test_run(&cfg, &prog, &mem, args, 2, &stats, &err) == SPYRE_ENGINE_OK)
		*mismatches = (unsigned)!!memcmp(mem.bytes, mem.bytes + args[1], n * 128ull);
	test_mem_fini(&mem);
	return stats.device_cycles;
}

/* A FIFO of one stick: every stick waits for room, results still right. */
TEST(back_pressure_with_one_stick_fifos)
{
	unsigned bad;
	uint64_t slow = copy_through_op(1000, 1, &bad), fast;

	EXPECT_EQ(bad, 0);
	EXPECT_EQ(stats.busy_cycles[3] > 0, 1);
	EXPECT_EQ(stats.busy_cycles[0], 0);
	fast = copy_through_op(1000, 64, &bad);
	EXPECT_EQ(bad, 0);
	printf("  # 1000 sticks: %llu cycles with 1-stick FIFOs, %llu with 64\n",
	       (unsigned long long)slow, (unsigned long long)fast);
	EXPECT_TRUE(fast < slow);
}

/* Core 0 reads, multicasts to cores 1 and 31 (one hop each way), they store. */
TEST(ring_multicast)
{
	struct test_mem mem;
	uint64_t args[3] = { 0, MiB, 2 * MiB };
	const uint32_t n = 256;

	memset(&prog, 0, sizeof(prog));
	spyre_engine_config_default(&cfg);
	prog.num_args = 3;
	pb_stream(pb_core(&prog, 0), pb_linear(SPK_EP_DRAM, 0, 0, n),
		  pb_ring(0, 1u << 1 | 1u << 31), n, 32);
	pb_stream(pb_core(&prog, 1), pb_ring(0, 0), pb_linear(SPK_EP_DRAM, 1, 0, n), n, 16);
	pb_stream(pb_core(&prog, 31), pb_ring(0, 0), pb_linear(SPK_EP_DRAM, 2, 0, n), n, 8);
	test_mem_init(&mem, MEM_BYTES);
	fill_pattern(&mem, 0, n * 128ull, 7);
	ASSERT_EQ(test_run(&cfg, &prog, &mem, args, 3, &stats, &err), SPYRE_ENGINE_OK);
	EXPECT_EQ(memcmp(mem.bytes, mem.bytes + MiB, n * 128ull), 0);
	EXPECT_EQ(memcmp(mem.bytes, mem.bytes + 2 * MiB, n * 128ull), 0);
	EXPECT_EQ(stats.ring_bytes, n * 128ull);
	EXPECT_EQ(stats.ring_link_bytes, 2 * n * 128ull);
	EXPECT_EQ(stats.dram_read_bytes, n * 128ull);
	EXPECT_EQ(stats.dram_write_bytes, 2 * n * 128ull);
	test_mem_fini(&mem);
}

/* Farther destinations cross more links: core 0 to core 4 is 4 hops. */
TEST(ring_hops_count_links)
{
	struct test_mem mem;
	uint64_t args[2] = { 0, MiB };

	memset(&prog, 0, sizeof(prog));
	spyre_engine_config_default(&cfg);
	prog.num_args = 2;
	pb_stream(pb_core(&prog, 0), pb_linear(SPK_EP_DRAM, 0, 0, 64), pb_ring(0, 1u << 4), 64,
		  32);
	pb_stream(pb_core(&prog, 4), pb_ring(0, 0), pb_linear(SPK_EP_DRAM, 1, 0, 64), 64, 32);
	test_mem_init(&mem, MEM_BYTES);
	fill_pattern(&mem, 0, 64 * 128, 3);
	ASSERT_EQ(test_run(&cfg, &prog, &mem, args, 2, &stats, &err), SPYRE_ENGINE_OK);
	EXPECT_EQ(memcmp(mem.bytes, mem.bytes + MiB, 64 * 128), 0);
	EXPECT_EQ(stats.ring_link_bytes, 4 * 64 * 128ull);
	test_mem_fini(&mem);
}

/*
 * Relayout through the scratchpad: a 4 x 8 grid of sticks is stored into a
 * buffer column by column, then written back in order: a stick transpose.
 */
TEST(relayout_through_scratchpad)
{
	struct pb_core *c;
	struct test_mem mem;
	uint64_t args[2] = { 0, MiB };
	uint16_t grid;
	unsigned bad = 0;

	memset(&prog, 0, sizeof(prog));
	spyre_engine_config_default(&cfg);
	prog.num_args = 2;
	c = pb_core(&prog, 0);
	grid = pb_buffer(c, 32 * 128);
	/* Stick (r, col) of the source goes to scratch stick col * 4 + r. */
	pb_stream(c, pb_linear(SPK_EP_DRAM, 0, 0, 32),
		  (struct pb_endpoint){ SPK_EP_SCRATCH, grid, 0, 0, { 8, 4, 1, 1 },
					{ 4 * 128, 128, 0, 0 } },
		  32, 8);
	pb_stream(c, pb_linear(SPK_EP_SCRATCH, grid, 0, 32), pb_linear(SPK_EP_DRAM, 1, 0, 32),
		  32, 8);
	c->streams[1].after = 0;
	test_mem_init(&mem, MEM_BYTES);
	fill_pattern(&mem, 0, 32 * 128, 11);
	ASSERT_EQ(test_run(&cfg, &prog, &mem, args, 2, &stats, &err), SPYRE_ENGINE_OK);
	for (unsigned r = 0; r < 4; r++)
		for (unsigned col = 0; col < 8; col++)
			bad += !!memcmp(mem.bytes + (r * 8 + col) * 128,
					mem.bytes + MiB + (col * 4 + r) * 128, 128);
	EXPECT_EQ(bad, 0);
	test_mem_fini(&mem);
}

/* A strided gather straight from DRAM to DRAM: every other stick, backwards. */
TEST(dram_to_dram_strided_gather)
{
	struct test_mem mem;
	uint64_t args[2] = { 0, MiB };
	unsigned bad = 0;

	memset(&prog, 0, sizeof(prog));
	spyre_engine_config_default(&cfg);
	prog.num_args = 2;
	pb_stream(pb_core(&prog, 2),
		  (struct pb_endpoint){ SPK_EP_DRAM, 0, 0, 99 * 256, { 100, 1, 1, 1 },
					{ -256, 0, 0, 0 } },
		  pb_linear(SPK_EP_DRAM, 1, 0, 100), 100, 5);
	test_mem_init(&mem, MEM_BYTES);
	fill_pattern(&mem, 0, 200 * 128, 5);
	ASSERT_EQ(test_run(&cfg, &prog, &mem, args, 2, &stats, &err), SPYRE_ENGINE_OK);
	for (unsigned i = 0; i < 100; i++)
		bad += !!memcmp(mem.bytes + (99 - i) * 256, mem.bytes + MiB + i * 128, 128);
	EXPECT_EQ(bad, 0);
	test_mem_fini(&mem);
}

/*
 * A bus that refuses multi-stick accesses but takes single sticks: the
 * engine retries a refused run stick by stick and must still move every
 * stick of the transfer, not only the run it retried.
 */
TEST(refused_runs_are_moved_stick_by_stick)
{
	struct test_mem mem;
	uint64_t args[2] = { 0, MiB };
	unsigned bad = 0;

	memset(&prog, 0, sizeof(prog));
	spyre_engine_config_default(&cfg);
	prog.num_args = 2;
	/* Runs of 4 contiguous sticks, 1 KiB apart: several runs a transfer. */
	pb_stream(pb_core(&prog, 0),
		  (struct pb_endpoint){ SPK_EP_DRAM, 0, 0, 0, { 4, 25, 1, 1 },
					{ 128, 1024, 0, 0 } },
		  pb_linear(SPK_EP_DRAM, 1, 0, 100), 100, 16);
	test_mem_init(&mem, MEM_BYTES);
	mem.no_map = 1;
	mem.max_len = 128;
	fill_pattern(&mem, 0, 25 * 1024, 9);
	ASSERT_EQ(test_run(&cfg, &prog, &mem, args, 2, &stats, &err), SPYRE_ENGINE_OK);
	for (unsigned i = 0; i < 100; i++)
		bad += !!memcmp(mem.bytes + (i / 4) * 1024 + (i % 4) * 128,
				mem.bytes + MiB + i * 128, 128);
	EXPECT_EQ(bad, 0);
	test_mem_fini(&mem);
}

/* One matmul tile program, M x K x N fp16 on `cores` cores, each its own tiles. */
/* Data types of matmul_program. */
static unsigned mm_din = SPK_DT_FP16, mm_dout = SPK_DT_FP16;

static void matmul_program(unsigned cores, uint32_t M, uint32_t K, uint32_t N,
			   uint32_t tiles_per_core, uint32_t fifo_tiles)
{
	uint32_t in_elems = mm_din == SPK_DT_FP32 ? 32 : 64;
	uint32_t c_row = N / (mm_dout == SPK_DT_FP32 ? 32 : 64);
	uint32_t a_sticks = M * (K / in_elems), b_sticks = K * (N / in_elems);
	uint32_t c_sticks = M * c_row;

	memset(&prog, 0, sizeof(prog));
	spyre_engine_config_default(&cfg);
	prog.num_args = 3;
	for (unsigned core = 0; core < cores; core++) {
		struct pb_core *c = pb_core(&prog, core);
		struct pb_op *op = pb_op(c, SPK_OPC_MATMUL, (uint8_t)mm_din, (uint8_t)mm_dout,
					 tiles_per_core, M, N);
		uint64_t a_off = (uint64_t)core * tiles_per_core * a_sticks * 128;

		op->k = K;
		op->k_steps = 1;
		op->in[0] = pb_stream(c, pb_linear(SPK_EP_DRAM, 0, a_off, tiles_per_core * a_sticks),
				      pb_op_end(), tiles_per_core * a_sticks, fifo_tiles * a_sticks);
		/* B stays the same: read it again for every tile (stride 0). */
		op->in[1] = pb_stream(c, (struct pb_endpoint){ SPK_EP_DRAM, 1, 0, 0,
							       { b_sticks, tiles_per_core, 1, 1 },
							       { 128, 0, 0, 0 } },
				      pb_op_end(), tiles_per_core * b_sticks, fifo_tiles * b_sticks);
		op->out = pb_stream(c, pb_op_end(),
				    pb_linear(SPK_EP_DRAM, 2, a_off / (K / in_elems) * c_row,
					      tiles_per_core * c_sticks),
				    tiles_per_core * c_sticks, fifo_tiles * c_sticks);
		op->acc_buffer = pb_buffer(c, M * (N / 32) * 128);
	}
}

/* The same program twice: identical results and identical statistics. */
TEST(runs_are_deterministic)
{
	struct test_mem m1, m2;
	struct spyre_engine_stats s1, s2;
	uint64_t args[3] = { 0, 4 * MiB, 8 * MiB };

	matmul_program(4, 32, 128, 64, 3, 2);
	test_mem_init(&m1, MEM_BYTES);
	test_mem_init(&m2, MEM_BYTES);
	for (uint64_t i = 0; i < 8 * MiB; i += 2) {
		uint16_t h = (uint16_t)(0x3000 + (i * 7919 % 0x0c00));	/* finite fp16 */

		memcpy(m1.bytes + i, &h, 2);
	}
	memcpy(m2.bytes, m1.bytes, MEM_BYTES);
	ASSERT_EQ(test_run(&cfg, &prog, &m1, args, 3, &s1, &err), SPYRE_ENGINE_OK);
	ASSERT_EQ(test_run(&cfg, &prog, &m2, args, 3, &s2, &err), SPYRE_ENGINE_OK);
	EXPECT_EQ(memcmp(m1.bytes, m2.bytes, MEM_BYTES), 0);
	EXPECT_EQ(memcmp(&s1, &s2, sizeof(s1)), 0);
	EXPECT_EQ(s1.macs, 4ull * 3 * 32 * 128 * 64);
	EXPECT_EQ(s1.op_firings, 12);
	test_mem_fini(&m1);
	test_mem_fini(&m2);
}

/*
 * Host threads and SIMD change nothing: 1, 2, 3 and 7 threads, with and
 * without the vector kernels, give bit-identical results, on a tile wide
 * enough to split by rows and on one so short it splits by columns.
 */
TEST(results_identical_whatever_threads_and_simd)
{
	static const struct { unsigned threads; int portable; } runs[] = {
		{ 1, 0 }, { 2, 0 }, { 3, 0 }, { 7, 0 }, { 1, 1 }, { 3, 1 },
	};
	static const uint32_t shapes[][3] = { { 64, 320, 192 }, { 3, 128, 512 } };
	uint64_t args[3] = { 0, 4 * MiB, 8 * MiB };
	struct test_mem mem;
	uint8_t *first = malloc(4 * MiB);
	unsigned differ = 0;

	test_mem_init(&mem, MEM_BYTES);
	for (uint64_t i = 0; i < 8 * MiB; i += 4) {
		float f = (float)(i * 7919 % 4099) / 1731.0f - 1.1f;

		memcpy(mem.bytes + i, &f, 4);
	}
	/* fp32 in and out: fp16 products are exact, fp32 ones show any reordering. */
	mm_din = mm_dout = SPK_DT_FP32;
	for (unsigned s = 0; s < 2; s++) {
		for (unsigned i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
			matmul_program(2, shapes[s][0], shapes[s][1], shapes[s][2], 2, 2);
			cfg.host_threads = runs[i].threads;
			cfg.pool_min_macs = 0;	/* small firings on the pool too */
			cfg.host_portable = runs[i].portable;
			memset(mem.bytes + args[2], 0, 4 * MiB);
			ASSERT_EQ(test_run(&cfg, &prog, &mem, args, 3, &stats, &err),
				  SPYRE_ENGINE_OK);
			if (!i)
				memcpy(first, mem.bytes + args[2], 4 * MiB);
			else if (memcmp(first, mem.bytes + args[2], 4 * MiB))
				differ++;
		}
	}
	mm_din = mm_dout = SPK_DT_FP16;
	cfg.host_threads = 0;
	cfg.host_portable = 0;
	EXPECT_EQ(differ, 0);
	free(first);
	test_mem_fini(&mem);
}

/*
 * Timing: a 64x64x64 fp16 matmul stream on one core is compute-bound and
 * should sustain the published 1140 MAC/ns per core (within 10%).
 */
TEST(timing_matmul_rate_per_core)
{
	struct test_mem mem;
	uint64_t args[3] = { 0, 4 * MiB, 8 * MiB };
	double rate;

	matmul_program(1, 64, 64, 64, 64, 2);
	test_mem_init(&mem, MEM_BYTES);
	ASSERT_EQ(test_run(&cfg, &prog, &mem, args, 3, &stats, &err), SPYRE_ENGINE_OK);
	rate = (double)stats.macs / (double)stats.device_ns;
	printf("  # %.0f MAC/ns on one core (%llu ns, PE busy %llu of %llu cycles)\n", rate,
	       (unsigned long long)stats.device_ns, (unsigned long long)stats.pe_busy_cycles[0],
	       (unsigned long long)stats.device_cycles);
	EXPECT_TRUE(fabs(rate - 1140) <= 114);
	test_mem_fini(&mem);
}

/*
 * Timing: DRAM -> scratchpad alone streams at the read-only 150 GB/s, given
 * a FIFO that covers latency x bandwidth (100 ns x 150 GB/s = 15 KB).
 */
TEST(timing_dram_read_bandwidth)
{
	struct test_mem mem;
	uint64_t args[1] = { 0 };
	const uint32_t n = 8192;	/* 1 MiB */
	struct pb_core *c;
	uint16_t buf;
	double gbs;

	memset(&prog, 0, sizeof(prog));
	spyre_engine_config_default(&cfg);
	prog.num_args = 1;
	c = pb_core(&prog, 0);
	buf = pb_buffer(c, n * 128);
	pb_stream(c, pb_linear(SPK_EP_DRAM, 0, 0, n), pb_linear(SPK_EP_SCRATCH, buf, 0, n), n, 256);
	test_mem_init(&mem, MEM_BYTES);
	ASSERT_EQ(test_run(&cfg, &prog, &mem, args, 1, &stats, &err), SPYRE_ENGINE_OK);
	gbs = (double)n * 128 / (double)stats.device_ns;
	printf("  # DRAM read: %.1f GB/s\n", gbs);
	EXPECT_TRUE(fabs(gbs - 150) <= 15);
	test_mem_fini(&mem);
}

/* Timing: a DRAM -> DRAM copy mixes reads and writes: about 105 GB/s in total. */
TEST(timing_dram_mixed_bandwidth)
{
	struct test_mem mem;
	uint64_t args[2] = { 0, 4 * MiB };
	const uint32_t n = 8192;
	double gbs;

	memset(&prog, 0, sizeof(prog));
	spyre_engine_config_default(&cfg);
	prog.num_args = 2;
	pb_stream(pb_core(&prog, 0), pb_linear(SPK_EP_DRAM, 0, 0, n),
		  pb_linear(SPK_EP_DRAM, 1, 0, n), n, 256);
	test_mem_init(&mem, MEM_BYTES);
	ASSERT_EQ(test_run(&cfg, &prog, &mem, args, 2, &stats, &err), SPYRE_ENGINE_OK);
	gbs = 2.0 * n * 128 / (double)stats.device_ns;
	printf("  # DRAM copy: %.1f GB/s read+write\n", gbs);
	EXPECT_TRUE(fabs(gbs - 105) <= 10.5);
	test_mem_fini(&mem);
}

/* Double buffering: a FIFO of two firings lets load, compute and store overlap. */
TEST(timing_double_buffering_overlaps)
{
	struct test_mem mem;
	uint64_t args[3] = { 0, 4 * MiB, 8 * MiB };
	uint64_t single, dbl;

	test_mem_init(&mem, MEM_BYTES);
	matmul_program(1, 64, 256, 128, 16, 1);
	ASSERT_EQ(test_run(&cfg, &prog, &mem, args, 3, &stats, &err), SPYRE_ENGINE_OK);
	single = stats.device_cycles;
	matmul_program(1, 64, 256, 128, 16, 2);
	ASSERT_EQ(test_run(&cfg, &prog, &mem, args, 3, &stats, &err), SPYRE_ENGINE_OK);
	dbl = stats.device_cycles;
	printf("  # %llu cycles single-buffered, %llu double-buffered\n",
	       (unsigned long long)single, (unsigned long long)dbl);
	EXPECT_TRUE(dbl * 10 < single * 9);
	test_mem_fini(&mem);
}

/*
 * One core copies n sticks between scratchpad buffers `copies` times over
 * (one stream each, one FIFO of 64); the destination takes every
 * `dst_step`-th stick.  Returns device cycles.
 */
static uint64_t spad_copy_cycles(unsigned cores, unsigned copies, uint32_t n, uint32_t dst_step)
{
	struct test_mem mem;

	memset(&prog, 0, sizeof(prog));
	spyre_engine_config_default(&cfg);
	for (unsigned c = 0; c < cores; c++) {
		struct pb_core *pc = pb_core(&prog, c);

		for (unsigned k = 0; k < copies; k++) {
			uint16_t src = pb_buffer(pc, n * 128);
			uint16_t dst = pb_buffer(pc, n * dst_step * 128);
			struct pb_endpoint to = { SPK_EP_SCRATCH, dst, 0, 0, { n, 1, 1, 1 },
						  { (int64_t)dst_step * 128, 0, 0, 0 } };

			pb_stream(pc, pb_linear(SPK_EP_SCRATCH, src, 0, n), to, n, 64);
		}
	}
	test_mem_init(&mem, 1 << 16);
	EXPECT_EQ(test_run(&cfg, &prog, &mem, NULL, 0, &stats, &err), SPYRE_ENGINE_OK);
	test_mem_fini(&mem);
	return stats.device_cycles;
}

/*
 * Timing: a scratchpad copy moves a stick per cycle through the write port
 * (docs/engine.md "Scratchpad ports"); every contiguous run of a
 * scratchpad pattern costs spad_request_cycles more, so scattering every
 * stick costs (1 + request cycles) per stick.
 */
TEST(timing_scratchpad_port_requests)
{
	const uint32_t n = 2048;
	uint64_t linear = spad_copy_cycles(1, 1, n, 1), scatter = spad_copy_cycles(1, 1, n, 2);
	double per_stick = 128 / cfg.timing.spad_bytes_per_cycle;

	printf("  # %u sticks: %llu cycles contiguous, %llu scattered\n", n,
	       (unsigned long long)linear, (unsigned long long)scatter);
	EXPECT_TRUE(fabs((double)linear - n * per_stick) <= 0.05 * n * per_stick);
	EXPECT_TRUE(fabs((double)scatter - n * (per_stick + cfg.timing.spad_request_cycles)) <=
		    0.05 * n * (per_stick + cfg.timing.spad_request_cycles));
}

/* Timing: copies on one core share its ports; copies on two cores do not. */
TEST(timing_scratchpad_port_shared)
{
	const uint32_t n = 2048;
	uint64_t one = spad_copy_cycles(1, 1, n, 1), same_core = spad_copy_cycles(1, 2, n, 1);
	uint64_t two_cores = spad_copy_cycles(2, 1, n, 1);

	printf("  # one copy %llu cycles, two on one core %llu, one on each of two cores %llu\n",
	       (unsigned long long)one, (unsigned long long)same_core,
	       (unsigned long long)two_cores);
	EXPECT_TRUE(same_core >= 2 * one * 95 / 100);
	EXPECT_TRUE(two_cores <= one * 105 / 100);
}

/*
 * Lazy FIFOs (docs/engine.md "Host execution"): with a map callback, the
 * sticks a DRAM stream feeds a matmul are read where they lie in device
 * memory.  Everything a run gives must be what copying them gives.
 */
static void fill_fp16(struct test_mem *m, uint64_t addr, uint64_t bytes, uint32_t seed)
{
	for (uint64_t i = 0; i < bytes; i += 2) {
		uint16_t h = (uint16_t)(0x3000 + ((i + seed) * 7919 % 0x0c00));

		memcpy(m->bytes + addr + i, &h, 2);
	}
}

/*
 * A single-step fp32 matmul computes straight into its output when nothing
 * else names its accumulator (matmul.c).  Here a stream copies the
 * accumulator to device memory after the firing, so the program sees it:
 * it must hold C, as the output does.
 */
TEST(matmul_visible_accumulator_written)
{
	enum { M = 32, K = 128, N = 64, CS = M * N / 32 };
	uint64_t args[4] = { 0, 4 * MiB, 8 * MiB, 12 * MiB };
	struct test_mem mem;
	struct pb_core *c;
	uint16_t copy;
	float first;

	mm_din = SPK_DT_FP16;
	mm_dout = SPK_DT_FP32;
	matmul_program(1, M, K, N, 1, 1);
	prog.num_args = 4;
	c = pb_core(&prog, 0);
	copy = pb_stream(c, pb_linear(SPK_EP_SCRATCH, c->ops[0].acc_buffer, 0, CS),
			 pb_linear(SPK_EP_DRAM, 3, 0, CS), CS, CS);
	c->streams[copy].after = c->ops[0].out;
	test_mem_init(&mem, MEM_BYTES);
	fill_fp16(&mem, 0, 8 * MiB, 3);
	EXPECT_EQ(test_run(&cfg, &prog, &mem, args, 4, &stats, &err), SPYRE_ENGINE_OK);
	EXPECT_EQ(memcmp(mem.bytes + args[3], mem.bytes + args[2], CS * 128), 0);
	memcpy(&first, mem.bytes + args[2], sizeof(first));
	EXPECT_TRUE(first != 0);
	test_mem_fini(&mem);
	mm_dout = SPK_DT_FP16;
}

/* Run prog on two copies of mem, without and with map: same bytes and statistics. */
static unsigned same_with_and_without_map(struct test_mem *with, const uint64_t *args,
					  unsigned nargs)
{
	struct test_mem without;
	struct spyre_engine_stats s1, s2;
	unsigned differ = 0;

	test_mem_init(&without, with->size);
	memcpy(without.bytes, with->bytes, with->size);
	without.no_map = 1;
	if (test_run(&cfg, &prog, &without, args, nargs, &s1, &err) ||
	    test_run(&cfg, &prog, with, args, nargs, &s2, &err))
		differ++;
	differ += !!memcmp(without.bytes, with->bytes, with->size);
	differ += !!memcmp(&s1, &s2, sizeof(s1));
	if (without.maps)
		differ++;
	test_mem_fini(&without);
	return differ;
}

/* Matmul inputs in plain row order are never copied: read bytes stay 0. */
TEST(lazy_matmul_inputs_read_in_place)
{
	struct test_mem mem;
	uint64_t args[3] = { 0, 4 * MiB, 8 * MiB };

	matmul_program(4, 32, 128, 64, 3, 2);
	test_mem_init(&mem, MEM_BYTES);
	fill_fp16(&mem, 0, 8 * MiB, 1);
	for (unsigned threads = 1; threads <= 3; threads++) {
		cfg.host_threads = threads;
		cfg.pool_min_macs = 0;	/* small firings on the pool too */
		mem.maps = mem.read_bytes = 0;
		EXPECT_EQ(same_with_and_without_map(&mem, args, 3), 0);
		EXPECT_TRUE(mem.maps > 0);
		EXPECT_EQ(mem.read_bytes, 0);
	}
	cfg.host_threads = 0;
	test_mem_fini(&mem);
}

/*
 * Inputs that are not rows at one positive distance (A's rows all the
 * same row, B's rows backwards) are copied into their FIFO slots at the
 * firing; FIFOs that wrap in the middle of a firing are still read in
 * place (the sticks' addresses follow the FIFO's order): same results.
 */
TEST(lazy_matmul_irregular_inputs_copied)
{
	enum { M = 16, K = 128, N = 128, KS = K / 64, NS = N / 64 };
	struct test_mem mem;
	uint64_t args[3] = { 0, 4 * MiB, 8 * MiB };

	memset(&prog, 0, sizeof(prog));
	spyre_engine_config_default(&cfg);
	prog.num_args = 3;
	for (unsigned core = 0; core < 3; core++) {
		struct pb_core *c = pb_core(&prog, core);
		struct pb_op *op = pb_op(c, SPK_OPC_MATMUL, SPK_DT_FP16, SPK_DT_FP32, 3, M, N);
		/* core 0: A rows repeated; 1: B rows backwards; 2: FIFOs of 1.5 firings. */
		struct pb_endpoint a = { SPK_EP_DRAM, 0, 0, core * 4096,
					 { KS, M, 3, 1 }, { 128, core ? KS * 128 : 0, 0, 0 } };
		struct pb_endpoint b = { SPK_EP_DRAM, 1, 0, core == 1 ? (K - 1) * NS * 128 : 0,
					 { NS, K, 3, 1 },
					 { 128, core == 1 ? -NS * 128 : NS * 128, 0, 0 } };
		/* Halves of a firing: 1.5 firings wrap in the middle of the second. */
		uint32_t halves = core == 2 ? 3 : 2;

		op->k = K;
		op->k_steps = 1;
		op->in[0] = pb_stream(c, a, pb_op_end(), 3 * M * KS, halves * M * KS / 2);
		op->in[1] = pb_stream(c, b, pb_op_end(), 3 * K * NS, halves * K * NS / 2);
		op->out = pb_stream(c, pb_op_end(),
				    pb_linear(SPK_EP_DRAM, 2, core * 3 * M * (N / 32) * 128,
					      3 * M * (N / 32)),
				    3 * M * (N / 32), M * (N / 32));
		op->acc_buffer = pb_buffer(c, M * (N / 32) * 128);
	}
	test_mem_init(&mem, MEM_BYTES);
	fill_fp16(&mem, 0, 8 * MiB, 2);
	for (unsigned threads = 1; threads <= 2; threads++) {
		cfg.host_threads = threads;
		cfg.pool_min_macs = 0;	/* small firings on the pool too */
		mem.maps = mem.read_bytes = 0;
		EXPECT_EQ(same_with_and_without_map(&mem, args, 3), 0);
		EXPECT_TRUE(mem.maps > 0);
	}
	cfg.host_threads = 0;
	test_mem_fini(&mem);
}

/*
 * B read in device memory with rows at least 1 KiB apart is copied into
 * column panels by the firing's first parts when several row panels use
 * it (matmul.c); bf16 on the AVX512-BF16 path is packed into pairs, from
 * device memory or its FIFO.  In every input type, on every SIMD path and
 * 1-3 threads, with padding columns (N = 100), an odd K (301), one row
 * panel (M = 9, B in place) or several (M = 40), the bits are those of a
 * copying run.
 */
TEST(lazy_matmul_packed_b_identical)
{
	enum { K = 301, N = 100, BW = 10 };	/* B: K rows of BW sticks */
	static const uint8_t types[] = { SPK_DT_FP16, SPK_DT_BF16, SPK_DT_FP32 };
	static const uint32_t rows[] = { 40, 9 };
	uint64_t args[3] = { 0, MiB, 4 * MiB };
	enum gemm_isa best = gemm_isa_supported();
	struct test_mem mem;
	unsigned bad = 0;

	test_mem_init(&mem, MEM_BYTES);
	fill_fp16(&mem, 0, 4 * MiB, 5);
	for (unsigned v = 0; v < 6; v++) {
		uint8_t type = types[v % 3];
		uint32_t M = rows[v / 3];
		uint32_t per = type == SPK_DT_FP32 ? 32 : 64;
		uint32_t ks = (K + per - 1) / per, ns = (N + per - 1) / per;
		struct pb_core *c;
		struct pb_op *op;

		memset(&prog, 0, sizeof(prog));
		spyre_engine_config_default(&cfg);
		prog.num_args = 3;
		c = pb_core(&prog, 0);
		op = pb_op(c, SPK_OPC_MATMUL, type, SPK_DT_FP32, 2, M, N);
		op->k = K;
		op->k_steps = 1;
		/* A's rows 2 KiB apart; B's ns sticks of each of K rows BW sticks apart. */
		op->in[0] = pb_stream(c, (struct pb_endpoint){ SPK_EP_DRAM, 0, 0, 0,
							       { ks, M, 2, 1 },
							       { 128, 2048, M * 2048, 0 } },
				      pb_op_end(), 2 * M * ks, M * ks);
		op->in[1] = pb_stream(c, (struct pb_endpoint){ SPK_EP_DRAM, 1, 0, 3 * 128,
							       { ns, K, 2, 1 },
							       { 128, BW * 128, ns * 128, 0 } },
				      pb_op_end(), 2 * K * ns, K * ns);
		op->out = pb_stream(c, pb_op_end(), pb_linear(SPK_EP_DRAM, 2, 0, 2 * M * 4),
				    2 * M * 4, 2 * M * 4);
		op->acc_buffer = pb_buffer(c, M * 4 * 128);
		for (unsigned isa = GEMM_PORTABLE; isa <= best; isa++) {
			setenv("SPYRE_ENGINE_ISA", gemm_isa_name((enum gemm_isa)isa), 1);
			for (unsigned threads = 1; threads <= 3; threads++) {
				cfg.host_threads = threads;
				cfg.pool_min_macs = 0;	/* small firings on the pool too */
				bad += same_with_and_without_map(&mem, args, 3);
			}
		}
	}
	unsetenv("SPYRE_ENGINE_ISA");
	cfg.host_threads = 0;
	EXPECT_EQ(bad, 0);
	test_mem_fini(&mem);
}

/*
 * The packed-reuse tests' runs: arguments A, B, C, W's source, D's source
 * and destination; W's bytes differ from A's and B's.  On 1 and 2 threads,
 * the number of runs that differ from a copying run.
 */
static unsigned reuse_runs_differ(void)
{
	uint64_t args[6] = { 0, MiB, 2 * MiB, 3 * MiB, 4 * MiB, 6 * MiB };
	struct test_mem mem;
	unsigned bad = 0;

	test_mem_init(&mem, 8 * MiB);
	for (unsigned threads = 1; threads <= 2; threads++) {
		fill_fp16(&mem, 0, 6 * MiB, 6);
		fill_fp16(&mem, 3 * MiB, MiB, 1000);
		cfg.host_threads = threads;
		cfg.pool_min_macs = 0;	/* small firings on the pool too */
		bad += same_with_and_without_map(&mem, args, 6);
	}
	test_mem_fini(&mem);
	cfg.host_threads = 0;
	return bad;
}

/*
 * Cores 0, 1 and 2 multiply the same rows of A (in device memory) by
 * their own columns of B: a firing reuses the A panels the previous one
 * packed.  Core 2's A enters only after its stream W copied new bytes over
 * A (variant 0), or after core 1 ran a transpose that used the op scratch
 * holding the panels (variant 1): core 2 must not reuse them.  Same bytes
 * as a copying run.
 */
TEST(lazy_matmul_packed_a_reused_until_changed)
{
	/* B: 3 column blocks of N (arguments: reuse_runs_differ) */
	enum { M = 64, K = 128, N = 64, AS = M * K / 64, BS = K * N / 64, CS = M * N / 32 };
	unsigned bad = 0;

	for (unsigned variant = 0; variant < 2; variant++) {
		memset(&prog, 0, sizeof(prog));
		spyre_engine_config_default(&cfg);
		prog.num_args = 6;
		for (unsigned core = 0; core < 3; core++) {
			struct pb_core *c = pb_core(&prog, core);
			struct pb_op *op = pb_op(c, SPK_OPC_MATMUL, SPK_DT_FP16, SPK_DT_FP32, 1, M,
						 N);
			uint16_t d, w;

			op->k = K;
			op->k_steps = 1;
			op->in[0] = pb_stream(c, pb_linear(SPK_EP_DRAM, 0, 0, AS), pb_op_end(), AS,
					      AS);
			op->in[1] = pb_stream(c, (struct pb_endpoint){ SPK_EP_DRAM, 1, 0,
								       core * 128, { 1, K, 1, 1 },
								       { 128, 3 * 128, 0, 0 } },
					      pb_op_end(), BS, BS);
			op->out = pb_stream(c, pb_op_end(),
					    pb_linear(SPK_EP_DRAM, 2, core * CS * 128, CS), CS, CS);
			op->acc_buffer = pb_buffer(c, CS * 128);
			if (core == 1 && variant == 1) {
				/* A long copy, then a 64 x 64 fp32 transpose (op scratch). */
				struct pb_op *t = pb_op(c, SPK_OPC_TRANSPOSE, SPK_DT_FP32,
							SPK_DT_FP32, 1, 64, 64);

				d = pb_stream(c, pb_linear(SPK_EP_DRAM, 4, 0, 2048),
					      pb_linear(SPK_EP_DRAM, 5, 0, 2048), 2048, 256);
				t->in[0] = pb_stream(c, pb_linear(SPK_EP_DRAM, 3, 0, 128),
						     pb_op_end(), 128, 128);
				c->streams[t->in[0]].after = d;
				t->out = pb_stream(c, pb_op_end(),
						   pb_linear(SPK_EP_DRAM, 5, 2048 * 128, 128), 128,
						   128);
			}
			if (core == 2) {
				/* A longer copy, then (variant 0) W over A, then A. */
				d = pb_stream(c, pb_linear(SPK_EP_DRAM, 4, 0, 4096),
					      pb_linear(SPK_EP_DRAM, 5, MiB, 4096), 4096, 256);
				c->streams[op->in[0]].after = d;
				if (variant == 0) {
					w = pb_stream(c, pb_linear(SPK_EP_DRAM, 3, 0, AS),
						      pb_linear(SPK_EP_DRAM, 0, 0, AS), AS, AS);
					c->streams[w].after = d;
					c->streams[op->in[0]].after = w;
				}
			}
		}
		bad += reuse_runs_differ();
	}
	EXPECT_EQ(bad, 0);
}

/*
 * Cores 0, 1 and 2 multiply their own rows of A by the same B in device
 * memory, whose rows lie 1 KiB apart, so each firing packs B into column
 * panels (bf16 pairs on the AVX512-BF16 path) and a firing of the same B
 * takes the panels a previous one packed (matmul.c, the packed-B cache).
 * Core 2's B enters only after its stream W copied new bytes over B: it
 * must not take the panels packed from the old bytes.  In fp16 and bf16,
 * on 1 and 2 threads: the same bytes as a copying run.
 */
TEST(lazy_matmul_packed_b_reused_until_changed)
{
	/* A: 3 row blocks, B: rows BROW apart (arguments: reuse_runs_differ) */
	enum { M = 64, K = 128, N = 64, AS = M * K / 64, BS = K * N / 64, CS = M * N / 32,
	       BROW = 1024 };
	static const uint8_t types[] = { SPK_DT_FP16, SPK_DT_BF16 };
	unsigned bad = 0;

	for (unsigned v = 0; v < 2; v++) {
		memset(&prog, 0, sizeof(prog));
		spyre_engine_config_default(&cfg);
		prog.num_args = 6;
		for (unsigned core = 0; core < 3; core++) {
			struct pb_core *c = pb_core(&prog, core);
			struct pb_op *op = pb_op(c, SPK_OPC_MATMUL, types[v], SPK_DT_FP32, 1, M, N);

			op->k = K;
			op->k_steps = 1;
			op->in[0] = pb_stream(c, pb_linear(SPK_EP_DRAM, 0, core * AS * 128, AS),
					      pb_op_end(), AS, AS);
			op->in[1] = pb_stream(c, (struct pb_endpoint){ SPK_EP_DRAM, 1, 0, 0,
								       { 1, K, 1, 1 },
								       { 128, BROW, 0, 0 } },
					      pb_op_end(), BS, BS);
			op->out = pb_stream(c, pb_op_end(),
					    pb_linear(SPK_EP_DRAM, 2, core * CS * 128, CS), CS, CS);
			op->acc_buffer = pb_buffer(c, CS * 128);
			if (core == 2) {
				/* A long copy, then W over B's sticks, then B. */
				uint16_t d = pb_stream(c, pb_linear(SPK_EP_DRAM, 4, 0, 4096),
						       pb_linear(SPK_EP_DRAM, 5, 0, 4096), 4096,
						       256);
				uint16_t w = pb_stream(c, pb_linear(SPK_EP_DRAM, 3, 0, BS),
						       (struct pb_endpoint){ SPK_EP_DRAM, 1, 0, 0,
									     { 1, K, 1, 1 },
									     { 128, BROW, 0, 0 } },
						       BS, BS);

				c->streams[w].after = d;
				c->streams[op->in[1]].after = w;
			}
		}
		bad += reuse_runs_differ();
	}
	EXPECT_EQ(bad, 0);
}

/*
 * Device memory where [ALIAS, 2 ALIAS) is [0, ALIAS) again (two device
 * addresses of one page); map_alias: whether map gives a pointer there.
 */
#define ALIAS	(8 * MiB)

struct alias_mem {
	struct test_mem *m;
	int map_alias;
};

static int alias_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
	struct alias_mem *a = opaque;

	return test_mem_read(a->m, addr >= ALIAS ? addr - ALIAS : addr, buf, len);
}

static int alias_write(void *opaque, uint64_t addr, const void *buf, size_t len)
{
	struct alias_mem *a = opaque;

	return test_mem_write(a->m, addr >= ALIAS ? addr - ALIAS : addr, buf, len);
}

static const void *alias_map(void *opaque, uint64_t addr, size_t len)
{
	struct alias_mem *a = opaque;

	if (addr >= ALIAS && !a->map_alias)
		return NULL;
	return test_mem_map(a->m, addr >= ALIAS ? addr - ALIAS : addr, len);
}

/* Load prog, run it on ops (stoppable by ab, may be NULL), free it. */
static enum spyre_engine_status run_mem(const struct spyre_engine_mem *ops,
					const struct spyre_engine_abort *ab,
					const uint64_t *args, unsigned nargs)
{
	struct spyre_program *p;
	size_t len;
	uint8_t *img = pb_serialize(&prog, &len);
	enum spyre_engine_status st = spyre_program_load(&cfg, img, len, &p, &err);

	free(img);
	if (st)
		return st;
	st = spyre_program_run_abortable(p, args, nargs, ops, ab, &stats, &err);
	spyre_program_free(p);
	return st;
}

/*
 * One core: A (32 x 128) enters its FIFO, then stream W copies other bytes
 * over A in device memory, then B (which waits for W) and the matmul.  The
 * matmul must use A as it was when A's sticks entered (as a copying run
 * does), whether W writes A's addresses or an alias of them, and whether
 * or not the alias can be mapped.
 */
TEST(lazy_sticks_keep_their_bytes_when_overwritten)
{
	enum { M = 32, K = 128, N = 64, AS = M * K / 64, BS = K * N / 64, CS = M * N / 64 };
	struct test_mem mem, copy;
	unsigned bad = 0;

	for (unsigned variant = 0; variant < 3; variant++) {
		/* A, B, C, W's source, W's destination (A, or A's alias). */
		uint64_t args[5] = { 0, MiB, 2 * MiB, 3 * MiB, variant ? ALIAS : 0 };
		struct alias_mem am = { &mem, variant == 1 };
		struct spyre_engine_mem ops = { &am, alias_read, alias_write, alias_map };
		struct alias_mem cm = { &copy, 0 };
		struct spyre_engine_mem copy_ops = { &cm, alias_read, alias_write, NULL };
		struct pb_core *c;
		struct pb_op *op;
		uint16_t w;

		memset(&prog, 0, sizeof(prog));
		spyre_engine_config_default(&cfg);
		prog.num_args = 5;
		c = pb_core(&prog, 0);
		op = pb_op(c, SPK_OPC_MATMUL, SPK_DT_FP16, SPK_DT_FP16, 1, M, N);
		op->k = K;
		op->k_steps = 1;
		op->in[0] = pb_stream(c, pb_linear(SPK_EP_DRAM, 0, 0, AS), pb_op_end(), AS, AS);
		w = pb_stream(c, pb_linear(SPK_EP_DRAM, 3, 0, AS), pb_linear(SPK_EP_DRAM, 4, 0, AS),
			      AS, AS);
		op->in[1] = pb_stream(c, pb_linear(SPK_EP_DRAM, 1, 0, BS), pb_op_end(), BS, BS);
		c->streams[op->in[1]].after = w;
		op->out = pb_stream(c, pb_op_end(), pb_linear(SPK_EP_DRAM, 2, 0, CS), CS, CS);
		op->acc_buffer = pb_buffer(c, M * (N / 32) * 128);
		test_mem_init(&mem, ALIAS);
		test_mem_init(&copy, ALIAS);
		fill_fp16(&mem, 0, 4 * MiB, 3);
		fill_fp16(&mem, 3 * MiB, MiB, 1000);	/* W's bytes differ from A's */
		memcpy(copy.bytes, mem.bytes, ALIAS);
		ASSERT_EQ(run_mem(&copy_ops, NULL, args, 5), SPYRE_ENGINE_OK);
		ASSERT_EQ(run_mem(&ops, NULL, args, 5), SPYRE_ENGINE_OK);
		/* W did overwrite A, and the matmul used A from before. */
		bad += !!memcmp(mem.bytes, mem.bytes + 3 * MiB, AS * 128);
		bad += !!memcmp(mem.bytes, copy.bytes, ALIAS);
		EXPECT_TRUE(mem.maps > 0);
		test_mem_fini(&mem);
		test_mem_fini(&copy);
	}
	EXPECT_EQ(bad, 0);
}

/*
 * A ring multicast of B (core 0 to cores 1 and 2, whose streams feed
 * matmuls) passes along where B's sticks lie in device memory.  Then W, on
 * core 0 after B's sender, writes over B (or its alias) while the
 * receivers still hold B's sticks: their matmuls wait for A, which waits
 * for a long stream X.  They must use B as it was when it was sent.
 */
TEST(lazy_ring_sticks_keep_their_bytes_when_overwritten)
{
	enum { M = 16, K = 128, N = 64, AS = M * K / 64, BS = K * N / 64, CS = M * N / 64,
	       XS = 2048 };
	struct test_mem mem, copy;
	unsigned bad = 0;

	for (unsigned variant = 0; variant < 3; variant++) {
		/* A (two blocks), B, C (two blocks), W's source, W's destination, X's two ends. */
		uint64_t args[7] = { 0, MiB, 2 * MiB, 3 * MiB, variant ? ALIAS + MiB : MiB,
				     4 * MiB, 5 * MiB };
		struct alias_mem am = { &mem, variant == 1 };
		struct spyre_engine_mem ops = { &am, alias_read, alias_write, alias_map };
		struct alias_mem cm = { &copy, 0 };
		struct spyre_engine_mem copy_ops = { &cm, alias_read, alias_write, NULL };
		struct pb_core *c = NULL;
		uint16_t b;

		memset(&prog, 0, sizeof(prog));
		spyre_engine_config_default(&cfg);
		prog.num_args = 7;
		c = pb_core(&prog, 0);
		b = pb_stream(c, pb_linear(SPK_EP_DRAM, 1, 0, BS), pb_ring(1, 1u << 1 | 1u << 2),
			      BS, 32);
		c->streams[pb_stream(c, pb_linear(SPK_EP_DRAM, 3, 0, BS),
				     pb_linear(SPK_EP_DRAM, 4, 0, BS), BS, 32)].after = b;
		for (unsigned core = 1; core <= 2; core++) {
			struct pb_op *op;
			uint16_t x;

			c = pb_core(&prog, core);
			op = pb_op(c, SPK_OPC_MATMUL, SPK_DT_FP16, SPK_DT_FP16, 1, M, N);
			op->k = K;
			op->k_steps = 1;
			x = pb_stream(c, pb_linear(SPK_EP_DRAM, 5, (core - 1) * XS * 128ull, XS),
				      pb_linear(SPK_EP_DRAM, 6, (core - 1) * XS * 128ull, XS), XS,
				      256);
			op->in[1] = pb_stream(c, pb_ring(b, 0), pb_op_end(), BS, BS);
			op->in[0] = pb_stream(c, pb_linear(SPK_EP_DRAM, 0, (core - 1) * AS * 128ull,
							   AS), pb_op_end(), AS, AS);
			c->streams[op->in[0]].after = x;
			op->out = pb_stream(c, pb_op_end(),
					    pb_linear(SPK_EP_DRAM, 2, (core - 1) * CS * 128ull, CS),
					    CS, CS);
			op->acc_buffer = pb_buffer(c, M * (N / 32) * 128);
		}
		test_mem_init(&mem, ALIAS);
		test_mem_init(&copy, ALIAS);
		fill_fp16(&mem, 0, 2 * MiB, 5);
		fill_fp16(&mem, 3 * MiB, 3 * MiB, 2000);	/* W's bytes differ from B's */
		memcpy(copy.bytes, mem.bytes, ALIAS);
		ASSERT_EQ(run_mem(&copy_ops, NULL, args, 7), SPYRE_ENGINE_OK);
		ASSERT_EQ(run_mem(&ops, NULL, args, 7), SPYRE_ENGINE_OK);
		/* W did overwrite B, and the matmuls used B from before. */
		bad += !!memcmp(mem.bytes + MiB, mem.bytes + 3 * MiB, BS * 128);
		bad += !!memcmp(mem.bytes, copy.bytes, ALIAS);
		EXPECT_TRUE(mem.maps > 0);
		test_mem_fini(&mem);
		test_mem_fini(&copy);
	}
	EXPECT_EQ(bad, 0);
}

/*
 * A matmul on core 0 (128 x 512 x 256) computes on the pool, reading A in
 * device memory, while core 1's stream W writes over A's last rows: the
 * write must wait for the firing (its device time comes after the
 * firing's start), so C is what a copying run gives.  (The failure this
 * catches needs the write to land while the firing runs: likely, not
 * certain, on two threads.)
 */
TEST(lazy_deferred_matmul_finishes_before_overwrite)
{
	enum { M = 128, K = 512, N = 256, AS = M * K / 64, BS = K * N / 64, CS = M * N / 32 };
	uint64_t args[6] = { 0, MiB, 2 * MiB, 4 * MiB, (M - 16) * K * 2, 5 * MiB };
	struct test_mem mem;
	struct pb_core *c;
	struct pb_op *op;
	uint16_t d;
	unsigned bad = 0;

	memset(&prog, 0, sizeof(prog));
	spyre_engine_config_default(&cfg);
	prog.num_args = 6;
	c = pb_core(&prog, 0);
	op = pb_op(c, SPK_OPC_MATMUL, SPK_DT_FP16, SPK_DT_FP32, 1, M, N);
	op->k = K;
	op->k_steps = 1;
	op->in[0] = pb_stream(c, pb_linear(SPK_EP_DRAM, 0, 0, AS), pb_op_end(), AS, AS);
	op->in[1] = pb_stream(c, pb_linear(SPK_EP_DRAM, 1, 0, BS), pb_op_end(), BS, BS);
	op->out = pb_stream(c, pb_op_end(), pb_linear(SPK_EP_DRAM, 2, 0, CS), CS, CS);
	op->acc_buffer = pb_buffer(c, CS * 128);
	/* Core 1: D keeps the DRAM as busy as A and B, then W overwrites A's last 16 rows. */
	c = pb_core(&prog, 1);
	d = pb_stream(c, pb_linear(SPK_EP_DRAM, 3, 0, AS + BS),
		      pb_linear(SPK_EP_DRAM, 5, 0, AS + BS), AS + BS, 256);
	c->streams[pb_stream(c, pb_linear(SPK_EP_DRAM, 3, 0, 16 * K / 64),
			     pb_linear(SPK_EP_DRAM, 4, 0, 16 * K / 64), 16 * K / 64,
			     16 * K / 64)].after = d;
	test_mem_init(&mem, 8 * MiB);
	fill_fp16(&mem, 0, 2 * MiB, 4);
	fill_fp16(&mem, 4 * MiB, MiB, 77);
	for (unsigned rep = 0; rep < 4; rep++) {
		cfg.host_threads = 2;
		bad += same_with_and_without_map(&mem, args, 6);
		fill_fp16(&mem, 0, 2 * MiB, 4);
	}
	cfg.host_threads = 0;
	EXPECT_EQ(bad, 0);
	test_mem_fini(&mem);
}

/* Aborting a run, of the compute-bound kernel of tests/lib/compute_kernel.h. */
static void compute_kernel(unsigned firings)
{
	compute_kernel_build(&prog, firings);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Memory that counts what is done after the abort; the abort flag itself. */
struct abort_mem {
	struct test_mem m;
	atomic_bool aborted;
	atomic_uint polls;
	atomic_uint late_calls; /* read, write or map after the run saw it */
	atomic_bool seen;	/* aborted() returned true once */
	double set_at, seen_at;
};

static bool abort_poll(void *opaque)
{
	struct abort_mem *am = opaque;

	atomic_fetch_add(&am->polls, 1);
	if (!atomic_load(&am->aborted))
		return false;
	if (!atomic_exchange(&am->seen, true))
		am->seen_at = mono_s();
	return true;
}

static int abort_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
	struct abort_mem *am = opaque;

	if (atomic_load(&am->seen))
		atomic_fetch_add(&am->late_calls, 1);
	return test_mem_read(&am->m, addr, buf, len);
}

static int abort_write(void *opaque, uint64_t addr, const void *buf, size_t len)
{
	struct abort_mem *am = opaque;

	if (atomic_load(&am->seen))
		atomic_fetch_add(&am->late_calls, 1);
	return test_mem_write(&am->m, addr, buf, len);
}

static const void *abort_map(void *opaque, uint64_t addr, size_t len)
{
	struct abort_mem *am = opaque;

	if (atomic_load(&am->seen))
		atomic_fetch_add(&am->late_calls, 1);
	return test_mem_map(&am->m, addr, len);
}

static void *abort_later(void *opaque)
{
	struct abort_mem *am = opaque;

	sleep_ms(200);
	am->set_at = mono_s();
	atomic_store(&am->aborted, true);
	return NULL;
}

static enum spyre_engine_status run_abortable(struct abort_mem *am, const uint64_t *args,
					      unsigned nargs)
{
	struct spyre_engine_mem ops = { am, abort_read, abort_write, abort_map };
	struct spyre_engine_abort ab = { abort_poll, am };

	return run_mem(&ops, &ab, args, nargs);
}

static void abort_mem_init(struct abort_mem *am)
{
	memset(am, 0, sizeof(*am));
	test_mem_init(&am->m, 8 * MiB);
	memset(am->m.bytes + 4 * MiB, 0x5a, 64 * 1024);
}

/*
 * A run aborted while it computes (no memory access for seconds) stops
 * soon after, with SPYRE_ENGINE_E_ABORTED, and leaves C unwritten (the
 * only write is at the end: no callback at all once a poll saw it); on
 * one host thread and two (where pool threads poll too).
 */
TEST(abort_stops_a_compute_bound_run)
{
	uint64_t args[3] = { 0, MiB, 4 * MiB };

	for (unsigned threads = 1; threads <= 2; threads++) {
		struct abort_mem am;
		pthread_t t;
		double t0 = mono_s(), took, lag;

		abort_mem_init(&am);
		spyre_engine_config_default(&cfg);
		cfg.host_threads = threads;
		compute_kernel(25000);
		ASSERT_EQ(pthread_create(&t, NULL, abort_later, &am), 0);
		EXPECT_EQ(run_abortable(&am, args, 3), SPYRE_ENGINE_E_ABORTED);
		took = mono_s() - t0;
		pthread_join(t, NULL);
		lag = mono_s() - am.set_at;
		printf("  # %u thread(s): stopped %.1f ms after the abort (saw it after %.1f "
		       "ms), %u polls in %.2f s\n", threads, lag * 1e3,
		       (am.seen_at - am.set_at) * 1e3, atomic_load(&am.polls), took);
		EXPECT_EQ(err.status, SPYRE_ENGINE_E_ABORTED);
		EXPECT_TRUE(atomic_load(&am.seen));
		/* Well under the 25000 firings' seconds, on a loaded host too. */
		EXPECT_TRUE(lag < 0.5);
		EXPECT_EQ(atomic_load(&am.late_calls), 0);
		for (unsigned i = 0; i < 64 * 1024; i++) {
			if (am.m.bytes[4 * MiB + i] != 0x5a) {
				EXPECT_EQ(am.m.bytes[4 * MiB + i], 0x5a);
				break;
			}
		}
		test_mem_fini(&am.m);
	}
	cfg.host_threads = 0;
}

/* Aborted before it starts: no memory callback at all. */
TEST(abort_before_the_run_touches_nothing)
{
	uint64_t args[3] = { 0, MiB, 4 * MiB };
	struct abort_mem am;

	abort_mem_init(&am);
	spyre_engine_config_default(&cfg);
	compute_kernel(16);
	atomic_store(&am.aborted, true);
	EXPECT_EQ(run_abortable(&am, args, 3), SPYRE_ENGINE_E_ABORTED);
	EXPECT_EQ(atomic_load(&am.late_calls), 0);
	EXPECT_STREQ(spyre_engine_status_name(err.status), "SPYRE_ENGINE_E_ABORTED");
	test_mem_fini(&am.m);
}

/* An abort that never comes changes nothing: same C, same statistics. */
TEST(abort_not_set_same_results)
{
	uint64_t args[3] = { 0, MiB, 4 * MiB };
	struct spyre_engine_stats plain;
	struct abort_mem am;
	struct test_mem mem;

	spyre_engine_config_default(&cfg);
	compute_kernel(64);
	test_mem_init(&mem, 8 * MiB);
	fill_pattern(&mem, 0, 2 * MiB, 3);
	ASSERT_EQ(test_run(&cfg, &prog, &mem, args, 3, &plain, &err), SPYRE_ENGINE_OK);
	abort_mem_init(&am);
	fill_pattern(&am.m, 0, 2 * MiB, 3);
	ASSERT_EQ(run_abortable(&am, args, 3), SPYRE_ENGINE_OK);
	EXPECT_EQ(memcmp(am.m.bytes + 4 * MiB, mem.bytes + 4 * MiB, 64 * 1024), 0);
	EXPECT_EQ(memcmp(&stats, &plain, sizeof(stats)), 0);
	/* 64 firings of 2^23 multiply-adds: about 2^13 units each, a poll every 8. */
	EXPECT_TRUE(atomic_load(&am.polls) > 0);
	test_mem_fini(&mem);
	test_mem_fini(&am.m);
}

/* Arenas: a bounded set, a run waits for one, an abort ends the wait. */
static void *take_arena(void *opaque)
{
	return arena_get(opaque);
}

static bool always(void *opaque)
{
	(void)opaque;
	return true;
}

TEST(arenas_are_bounded)
{
	struct engine_arena *a[ARENA_COUNT], *got;
	struct spyre_engine_abort ab = { always, NULL };
	pthread_t t;
	double t0;

	for (unsigned i = 0; i < ARENA_COUNT; i++) {
		a[i] = arena_get(NULL);
		ASSERT_TRUE(a[i] != NULL);
		for (unsigned j = 0; j < i; j++)
			EXPECT_TRUE(a[i] != a[j]);
	}
	/* All taken: an aborted run gives up waiting at once. */
	t0 = mono_s();
	EXPECT_TRUE(arena_get(&ab) == NULL);
	EXPECT_TRUE(mono_s() - t0 < 0.1);
	/* Another waits until one is given back, then gets that one. */
	ASSERT_EQ(pthread_create(&t, NULL, take_arena, NULL), 0);
	sleep_ms(50);
	arena_put(a[2]);
	pthread_join(t, (void **)&got);
	EXPECT_TRUE(got == a[2]);
	arena_put(got);
	for (unsigned i = 0; i < ARENA_COUNT; i++) {
		if (i != 2)
			arena_put(a[i]);
	}
}

/* More concurrent runs than arenas: all finish, with the right results. */
struct concurrent_run {
	struct test_mem mem;
	struct spyre_engine_config cfg;
	struct pb_program *prog;
	enum spyre_engine_status st;
};

static void *run_one(void *opaque)
{
	struct concurrent_run *cr = opaque;
	uint64_t args[3] = { 0, MiB, 4 * MiB };
	struct spyre_engine_error e;

	cr->st = test_run(&cr->cfg, cr->prog, &cr->mem, args, 3, NULL, &e);
	return NULL;
}

TEST(runs_beyond_the_arenas_wait_and_finish)
{
	enum { RUNS = ARENA_COUNT + 3 };
	struct concurrent_run cr[RUNS];
	struct test_mem ref;
	uint64_t args[3] = { 0, MiB, 4 * MiB };
	pthread_t t[RUNS];

	spyre_engine_config_default(&cfg);
	cfg.host_threads = 2;
	compute_kernel(32);
	test_mem_init(&ref, 8 * MiB);
	fill_pattern(&ref, 0, 2 * MiB, 9);
	ASSERT_EQ(test_run(&cfg, &prog, &ref, args, 3, NULL, &err), SPYRE_ENGINE_OK);
	for (unsigned i = 0; i < RUNS; i++) {
		cr[i].cfg = cfg;
		cr[i].prog = &prog;
		test_mem_init(&cr[i].mem, 8 * MiB);
		fill_pattern(&cr[i].mem, 0, 2 * MiB, 9);
		ASSERT_EQ(pthread_create(&t[i], NULL, run_one, &cr[i]), 0);
	}
	for (unsigned i = 0; i < RUNS; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(cr[i].st, SPYRE_ENGINE_OK);
		EXPECT_EQ(memcmp(cr[i].mem.bytes + 4 * MiB, ref.bytes + 4 * MiB, 64 * 1024), 0);
		test_mem_fini(&cr[i].mem);
	}
	test_mem_fini(&ref);
	cfg.host_threads = 0;
}

TAP_MAIN()
