// SPDX-License-Identifier: MIT
/*
 * Engine host speed: a 1024x1024x1024 matmul, fp16 inputs, fp32
 * accumulation and output, as a 32-core kernel (64 tiles of 64x256, two per
 * core, double-buffered), run on the host.  Prints GFLOPS (2 flops per MAC,
 * best of 3) and the model's device time; with an output path, appends
 * {"name", "value", "unit"} records as a JSON array.
 *
 * usage: engine-bench [results.json]
 */
#include <stdio.h>
#include <time.h>

#include "engine_testlib.h"

#define DIM		1024
#define TILE_M		64
#define TILE_N		256
#define CORES		32

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A: DIM x DIM fp16 (16 sticks a row), B the same, C fp32 (32 sticks a row). */
static void build_matmul(struct pb_program *prog)
{
	const uint32_t a_sticks = TILE_M * (DIM / 64), b_sticks = DIM * (TILE_N / 64);
	const uint32_t c_sticks = TILE_M * (TILE_N / 32);
	unsigned tile = 0;

	memset(prog, 0, sizeof(*prog));
	prog->num_args = 3;
	for (unsigned core = 0; core < CORES; core++) {
		struct pb_core *c = pb_core(prog, core);
		struct pb_op *op = pb_op(c, SPK_OPC_MATMUL, SPK_DT_FP16, SPK_DT_FP32, 2, TILE_M,
					 TILE_N);
		/* This core's two tiles: same row block, two column blocks. */
		unsigned ti = tile / (DIM / TILE_N), tj = tile % (DIM / TILE_N);

		tile += 2;
		op->k = DIM;
		op->k_steps = 1;
		op->in[0] = pb_stream(c, (struct pb_endpoint){ SPK_EP_DRAM, 0, 0,
							       (uint64_t)ti * a_sticks * 128,
							       { a_sticks, 2, 1, 1 },
							       { 128, 0, 0, 0 } },
				      pb_op_end(), 2 * a_sticks, 2 * a_sticks);
		op->in[1] = pb_stream(c, (struct pb_endpoint){ SPK_EP_DRAM, 1, 0,
							       (uint64_t)tj * (TILE_N / 64) * 128,
							       { TILE_N / 64, DIM, 2, 1 },
							       { 128, DIM / 64 * 128,
								 TILE_N / 64 * 128, 0 } },
				      pb_op_end(), 2 * b_sticks, b_sticks);
		op->out = pb_stream(c, pb_op_end(),
				    (struct pb_endpoint){ SPK_EP_DRAM, 2, 0,
							  ((uint64_t)ti * TILE_M * (DIM / 32) +
							   tj * (TILE_N / 32)) * 128,
							  { TILE_N / 32, TILE_M, 2, 1 },
							  { 128, DIM / 32 * 128, TILE_N / 32 * 128,
							    0 } },
				    2 * c_sticks, 2 * c_sticks);
		op->acc_buffer = pb_buffer(c, TILE_M * (TILE_N / 32) * 128);
	}
}

int main(int argc, char **argv)
{
	static struct pb_program prog;
	struct spyre_engine_config cfg;
	struct spyre_engine_stats stats;
	struct test_mem mem;
	uint64_t args[3] = { 0, 8ull << 20, 16ull << 20 };
	double best = 1e30, gflops;

	spyre_engine_config_default(&cfg);
	test_mem_init(&mem, 32ull << 20);
	for (uint64_t i = 0; i < (16ull << 20); i += 2) {
		uint16_t h = (uint16_t)(0x3000 + (i * 7919 % 0x0c00));

		memcpy(mem.bytes + i, &h, 2);
	}
	build_matmul(&prog);
	for (int rep = 0; rep < 3; rep++) {
		double t0 = now_s();

		if (test_run(&cfg, &prog, &mem, args, 3, &stats, NULL))
			return 1;
		if (now_s() - t0 < best)
			best = now_s() - t0;
	}
	gflops = 2.0 * DIM * DIM * DIM / best / 1e9;
	printf("engine.matmul.gflops %.2f (%.3f s; device %llu ns, %llu MACs)\n", gflops, best,
	       (unsigned long long)stats.device_ns, (unsigned long long)stats.macs);
	if (argc > 1) {
		FILE *f = fopen(argv[1], "w");

		if (!f)
			return 1;
		fprintf(f, "[\n  {\"name\": \"engine.matmul.gflops\", \"value\": %.3f, "
			   "\"unit\": \"GFLOPS\"},\n  {\"name\": \"engine.matmul.device_us\", "
			   "\"value\": %.3f, \"unit\": \"us\"}\n]\n",
			gflops, stats.device_ns / 1e3);
		fclose(f);
	}
	test_mem_fini(&mem);
	return 0;
}
