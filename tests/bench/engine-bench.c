// SPDX-License-Identifier: MIT
/*
 * Engine host speed: a 1024x1024x1024 matmul, fp16 inputs, fp32
 * accumulation and output, as a 32-core kernel (32 tiles of 256x128, one
 * per core), loaded once and run on the host with every CPU.
 * Reports GFLOPS (2 flops per MAC, best run) next to OpenBLAS sgemm on the
 * same shape and thread count, measured in the same run by openblas-ref
 * (a child process whose environment lacks OPENBLAS_CORETYPE and
 * OPENBLAS_L2_SIZE); engine and OpenBLAS runs alternate so a busy host
 * slows both alike.  Checks sampled results against a double reference.
 * With an output path, writes {"name", "value", "unit"} records as a JSON
 * array.
 *
 * usage: engine-bench [results.json]
 *        engine-bench --engine-only RUNS [THREADS [K_STEPS [TILE_M TILE_N]]]
 *   (the engine alone, RUNS runs, for profiling: prints each run's time,
 *   CPU time and modelled device time; K_STEPS > 1 splits K into
 *   double-buffered chunks; TILE_M TILE_N another tiling, e.g. 64 256)
 */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine_testlib.h"

#define DIM		1024
#define CORES		32
#define ROUNDS		4	/* engine runs between OpenBLAS measurements */
#define BLAS_REPS	4

/*
 * The tiles: TILE_M x TILE_N, DIM^2 / CORES / (TILE_M TILE_N) of them a
 * core (1 or 2).  256 x 128, one a core, reads 24 MB of A and B from
 * device memory; 64 x 256, two a core (libspyre's choice before it chose
 * tiles by modelled device time, which now gives 512 x 256 with K in four
 * chunks), reads 40 MB (B 16 times over).
 */
static unsigned TILE_M = 256, TILE_N = 128;

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/*
 * A: DIM x DIM fp16 (16 sticks a row), B the same, C fp32 (32 sticks a row).
 * Each core computes `tpc` (1 or 2) tiles (same rows, consecutive column
 * blocks) in k_steps firings each, K split into k_steps chunks that stream
 * through FIFOs holding two chunks (double-buffered).
 */
static void build_matmul(struct pb_program *prog, unsigned k_steps)
{
	const uint32_t kc = DIM / k_steps, kc_sticks = kc / 64;
	const uint32_t a_sticks = TILE_M * kc_sticks, b_sticks = kc * (TILE_N / 64);
	const uint32_t c_sticks = TILE_M * (TILE_N / 32);
	const uint32_t tpc = DIM / TILE_M * (DIM / TILE_N) / CORES;
	unsigned tile = 0;

	memset(prog, 0, sizeof(*prog));
	prog->num_args = 3;
	for (unsigned core = 0; core < CORES; core++) {
		struct pb_core *c = pb_core(prog, core);
		struct pb_op *op = pb_op(c, SPK_OPC_MATMUL, SPK_DT_FP16, SPK_DT_FP32,
					 tpc * k_steps, TILE_M, TILE_N);
		/* This core's tiles: same row block, consecutive column blocks. */
		unsigned ti = tile / (DIM / TILE_N), tj = tile % (DIM / TILE_N);

		tile += tpc;
		op->k = kc;
		op->k_steps = k_steps;
		/* A: per firing, TILE_M rows of one K chunk; the chunks; the tiles. */
		op->in[0] = pb_stream(c, (struct pb_endpoint){ SPK_EP_DRAM, 0, 0,
							       (uint64_t)ti * TILE_M * (DIM / 64) * 128,
							       { kc_sticks, TILE_M, k_steps, tpc },
							       { 128, DIM / 64 * 128, kc_sticks * 128,
								 0 } },
				      pb_op_end(), tpc * k_steps * a_sticks,
				      (tpc * k_steps > 1 ? 2 : 1) * a_sticks);
		/* B: the tile's sticks of each row, rows in K order; the tiles. */
		op->in[1] = pb_stream(c, (struct pb_endpoint){ SPK_EP_DRAM, 1, 0,
							       (uint64_t)tj * (TILE_N / 64) * 128,
							       { TILE_N / 64, DIM, tpc, 1 },
							       { 128, DIM / 64 * 128,
								 TILE_N / 64 * 128, 0 } },
				      pb_op_end(), tpc * k_steps * b_sticks,
				      k_steps == 1 ? b_sticks : 2 * b_sticks);
		op->out = pb_stream(c, pb_op_end(),
				    (struct pb_endpoint){ SPK_EP_DRAM, 2, 0,
							  ((uint64_t)ti * TILE_M * (DIM / 32) +
							   tj * (TILE_N / 32)) * 128,
							  { TILE_N / 32, TILE_M, tpc, 1 },
							  { 128, DIM / 32 * 128, TILE_N / 32 * 128,
							    0 } },
				    tpc * c_sticks, tpc * c_sticks);
		op->acc_buffer = pb_buffer(c, TILE_M * (TILE_N / 32) * 128);
	}
}

static float fp16_at(const struct test_mem *mem, uint64_t addr)
{
	uint16_t h;
	uint32_t sign, exp, man, w;
	float f;

	memcpy(&h, mem->bytes + addr, 2);
	sign = (uint32_t)(h >> 15) << 31;
	exp = (h >> 10) & 0x1f;
	man = h & 0x3ff;
	/* The bench's inputs are normal numbers. */
	w = sign | (exp + 112) << 23 | man << 13;
	memcpy(&f, &w, 4);
	return f;
}

/* Sampled C elements against a double-precision dot product. */
static int check_results(const struct test_mem *mem, const uint64_t *args)
{
	for (unsigned s = 0; s < 64; s++) {
		unsigned i = (s * 397) % DIM, j = (s * 631 + 7) % DIM;
		double ref = 0, mag = 0;
		float got;

		for (unsigned k = 0; k < DIM; k++) {
			double p = (double)fp16_at(mem, args[0] + ((uint64_t)i * DIM + k) * 2) *
				   fp16_at(mem, args[1] + ((uint64_t)k * DIM + j) * 2);

			ref += p;
			mag += fabs(p);
		}
		memcpy(&got, mem->bytes + args[2] + ((uint64_t)i * DIM + j) * 4, 4);
		if (fabs(got - ref) > 1e-5 * mag + 1e-30) {
			fprintf(stderr, "engine-bench: C[%u][%u] = %g, expected %g\n", i, j, got,
				ref);
			return -1;
		}
	}
	return 0;
}

/*
 * OpenBLAS in a child whose environment lacks the variables that slow it.
 * Returns GFLOPS (0 on failure) and its core name / configuration.
 */
static double openblas_gflops(const char *self, unsigned threads, char *info, size_t info_len)
{
	char path[4200], arg_n[16], arg_t[16], arg_r[16], line[512];
	int fds[2], status;
	pid_t pid;
	FILE *f;
	double gflops = 0;

	snprintf(path, sizeof(path), "%s/openblas-ref", self);
	snprintf(arg_n, sizeof(arg_n), "%d", DIM);
	snprintf(arg_t, sizeof(arg_t), "%u", threads);
	snprintf(arg_r, sizeof(arg_r), "%d", BLAS_REPS);
	if (pipe(fds))
		return 0;
	pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		unsetenv("OPENBLAS_CORETYPE");
		unsetenv("OPENBLAS_L2_SIZE");
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl(path, path, arg_n, arg_t, arg_r, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (f && fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');

		gflops = atof(line);
		line[strcspn(line, "\n")] = 0;
		snprintf(info, info_len, "%s", sp ? sp + 1 : "?");
	}
	if (f)
		fclose(f);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		gflops = 0;
	return gflops;
}

static int time_engine(struct spyre_program *p, const uint64_t *args, struct test_mem *mem,
		       struct spyre_engine_stats *stats, int rounds, double *best)
{
	struct spyre_engine_mem ops = test_mem_ops(mem);
	struct spyre_engine_error err;

	for (int rep = 0; rep < rounds; rep++) {
		double t0 = now_s(), dt;
		enum spyre_engine_status st = spyre_program_run(p, args, 3, &ops, stats, &err);

		dt = now_s() - t0;
		if (st) {
			fprintf(stderr, "engine-bench: %s: %s\n", spyre_engine_status_name(st),
				err.detail);
			return -1;
		}
		if (dt < *best)
			*best = dt;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct pb_program prog;
	struct spyre_engine_config cfg;
	struct spyre_engine_stats stats;
	struct spyre_engine_error err;
	struct spyre_program *p;
	struct test_mem mem;
	uint64_t args[3] = { 0, 8ull << 20, 16ull << 20 };
	double best = 1e30, first, t0, gflops, blas = 0, b;
	char self[4096], argv0[4096], info[400] = "none";
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned threads = cpus > 0 ? (unsigned)cpus : 1;
	size_t len;
	uint8_t *img;
	int engine_only = 0;
	unsigned k_steps = 1;

	if (argc > 1 && argv[1][0] == '-') {
		if (strcmp(argv[1], "--engine-only") || argc < 3 || atoi(argv[2]) < 1) {
			fprintf(stderr, "usage: engine-bench [results.json]\n"
				"       engine-bench --engine-only RUNS [THREADS [K_STEPS "
				"[TILE_M TILE_N]]]\n");
			return 2;
		}
		engine_only = atoi(argv[2]);
		if (argc > 3)
			threads = (unsigned)atoi(argv[3]);
		if (argc > 4)
			k_steps = (unsigned)atoi(argv[4]);
		if (argc > 6) {
			TILE_M = (unsigned)atoi(argv[5]);
			TILE_N = (unsigned)atoi(argv[6]);
		}
		/* Whole tiles, whole sticks, the same number a core, in one row block. */
		if (!TILE_M || !TILE_N || DIM % TILE_M || DIM % TILE_N || TILE_N % 64 ||
		    (DIM / TILE_M) * (DIM / TILE_N) % CORES ||
		    (DIM / TILE_M) * (DIM / TILE_N) / CORES > DIM / TILE_N || !k_steps ||
		    DIM % (64 * k_steps)) {
			fprintf(stderr, "engine-bench: no such kernel (tiles %ux%u, k_steps %u)\n",
				TILE_M, TILE_N, k_steps);
			return 2;
		}
		argc = 1;
	}
	snprintf(argv0, sizeof(argv0), "%s", argv[0]);
	snprintf(self, sizeof(self), "%s", dirname(argv0));
	spyre_engine_config_default(&cfg);
	cfg.host_threads = threads;
	test_mem_init(&mem, 32ull << 20);
	for (uint64_t i = 0; i < (16ull << 20); i += 2) {
		uint16_t h = (uint16_t)(0x3000 + (i * 7919 % 0x0c00));

		memcpy(mem.bytes + i, &h, 2);
	}
	build_matmul(&prog, k_steps);
	img = pb_serialize(&prog, &len);
	if (!img || spyre_program_load(&cfg, img, len, &p, &err)) {
		fprintf(stderr, "engine-bench: load failed: %s\n", err.detail);
		return 1;
	}
	free(img);
	for (int i = 0; i < engine_only; i++) {
		double once = 1e30, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID);

		if (time_engine(p, args, &mem, &stats, 1, &once))
			return 1;
		cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu;
		if (check_results(&mem, args))
			return 1;
		/* CPU time counts every thread, spinning pool workers too. */
		printf("run %d: %.2f ms, %.2f GFLOPS, %.2f ms CPU, %.1f us device\n", i, once * 1e3,
		       2.0 * DIM * DIM * DIM / once / 1e9, cpu * 1e3, stats.device_ns / 1e3);
	}
	if (engine_only)
		return 0;
	/* The first run also pays for host memory and threads. */
	t0 = now_s();
	if (time_engine(p, args, &mem, &stats, ROUNDS, &best))
		return 1;
	first = now_s() - t0;
	if (check_results(&mem, args))
		return 1;
	/* Alternate OpenBLAS and engine measurements; keep the best of each. */
	for (int round = 0; round < 3; round++) {
		b = openblas_gflops(self, threads, info, sizeof(info));
		if (b > blas)
			blas = b;
		if (time_engine(p, args, &mem, &stats, ROUNDS, &best))
			return 1;
	}
	spyre_program_free(p);
	gflops = 2.0 * DIM * DIM * DIM / best / 1e9;
	printf("%-40s %10.2f GFLOPS (%.2f ms best; first %d runs %.1f ms; %u threads)\n",
	       "engine.matmul.gflops", gflops, best * 1e3, ROUNDS, first * 1e3, threads);
	printf("%-40s %10.2f GFLOPS (%s)\n", "engine.matmul.openblas_gflops", blas, info);
	printf("%-40s %10.3f\n", "engine.matmul.ratio_vs_openblas", blas > 0 ? gflops / blas : 0);
	printf("%-40s %10.3f us (modelled device time)\n", "engine.matmul.device_us",
	       stats.device_ns / 1e3);
	if (argc > 1) {
		FILE *f = fopen(argv[1], "w");
		char *core = strtok(info, " |");

		if (!f)
			return 1;
		fprintf(f, "[\n  {\"name\": \"engine.matmul.gflops\", \"value\": %.3f, "
			   "\"unit\": \"GFLOPS\"},\n", gflops);
		fprintf(f, "  {\"name\": \"engine.matmul.openblas_gflops\", \"value\": %.3f, "
			   "\"unit\": \"GFLOPS (OpenBLAS core %s)\"},\n", blas, core ? core : "?");
		fprintf(f, "  {\"name\": \"engine.matmul.ratio_vs_openblas\", \"value\": %.4f, "
			   "\"unit\": \"ratio\"},\n", blas > 0 ? gflops / blas : 0);
		fprintf(f, "  {\"name\": \"engine.matmul.host_threads\", \"value\": %u, "
			   "\"unit\": \"threads\"},\n", threads);
		fprintf(f, "  {\"name\": \"engine.matmul.device_us\", \"value\": %.3f, "
			   "\"unit\": \"us\"}\n]\n", stats.device_ns / 1e3);
		fclose(f);
	}
	test_mem_fini(&mem);
	return blas > 0 ? 0 : 1;
}
