// SPDX-License-Identifier: MIT
/*
 * Engine host speed: a 1024x1024x1024 matmul, fp16 (and bf16) inputs,
 * fp32 accumulation and output, as a 32-core kernel (32 tiles of 256x128,
 * one per core), loaded once and run on the host with every CPU.
 * Reports GFLOPS (2 flops per MAC) next to OpenBLAS sgemm on the same
 * shape and thread count, measured in the same run by openblas-ref (a
 * child process whose environment lacks OPENBLAS_CORETYPE and
 * OPENBLAS_L2_SIZE).  ROUNDS rounds each measure fp16, bf16 and OpenBLAS
 * in turn (best of a few runs each), so a busy second slows one round of
 * all three; each figure is the median over rounds, with the min and max
 * beside it (NAME.min, NAME.max), and a ratio is the median of the
 * rounds' ratios.  Checks sampled results against a double reference.
 * With an output path, writes {"name", "value", "unit"} records as a JSON
 * array.
 *
 * usage: engine-bench [results.json]
 *        engine-bench --engine-only RUNS [THREADS [K_STEPS [TILE_M TILE_N]]]
 *   (the engine alone, RUNS runs, for profiling: prints each run's time,
 *   CPU time and modelled device time; K_STEPS > 1 splits K into
 *   double-buffered chunks; TILE_M TILE_N another tiling, e.g. 64 256)
 *        engine-bench --scaling RESULTS_JSON TABLE_TSV
 *   (how speed grows with size: fp16 and bf16 GFLOPS at 256^3 .. 4096^3,
 *   each the best of a few runs, as rows engine.matmul.scaling.* and a
 *   table for the plot)
 */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine_testlib.h"

#define CORES		32
#define WARMUP		4	/* engine runs before measuring */
#define ROUNDS		9	/* fp16, bf16, OpenBLAS, in turn */
#define ENGINE_REPS	3	/* engine runs a round: the best counts */
#define BLAS_REPS	3	/* the same for OpenBLAS */

/*
 * The tiles: TILE_M x TILE_N, dim^2 / CORES / (TILE_M TILE_N) of them a
 * core (1 or 2).  256 x 128, one a core, reads 24 MB of A and B from
 * device memory; 64 x 256, two a core (libspyre's choice before it chose
 * tiles by modelled device time, which now gives 512 x 256 with K in four
 * chunks), reads 40 MB (B 16 times over).
 */
static unsigned dim = 1024, TILE_M = 256, TILE_N = 128;

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
 * A: dim x dim fp16 (16 sticks a row), B the same, C fp32 (32 sticks a row).
 * Each core computes `tpc` (1 or 2) tiles (same rows, consecutive column
 * blocks) in k_steps firings each, K split into k_steps chunks that stream
 * through FIFOs holding two chunks (double-buffered).
 */
static void build_matmul(struct pb_program *prog, unsigned k_steps, unsigned dtype)
{
	const uint32_t kc = dim / k_steps, kc_sticks = kc / 64;
	const uint32_t a_sticks = TILE_M * kc_sticks, b_sticks = kc * (TILE_N / 64);
	const uint32_t c_sticks = TILE_M * (TILE_N / 32);
	const uint32_t tpc = dim / TILE_M * (dim / TILE_N) / CORES;
	unsigned tile = 0;

	memset(prog, 0, sizeof(*prog));
	prog->num_args = 3;
	for (unsigned core = 0; core < CORES; core++) {
		struct pb_core *c = pb_core(prog, core);
		struct pb_op *op = pb_op(c, SPK_OPC_MATMUL, dtype, SPK_DT_FP32,
					 tpc * k_steps, TILE_M, TILE_N);
		/* This core's tiles: same row block, consecutive column blocks. */
		unsigned ti = tile / (dim / TILE_N), tj = tile % (dim / TILE_N);

		tile += tpc;
		op->k = kc;
		op->k_steps = k_steps;
		/* A: per firing, TILE_M rows of one K chunk; the chunks; the tiles. */
		op->in[0] = pb_stream(c, (struct pb_endpoint){ SPK_EP_DRAM, 0, 0,
							       (uint64_t)ti * TILE_M * (dim / 64) * 128,
							       { kc_sticks, TILE_M, k_steps, tpc },
							       { 128, dim / 64 * 128, kc_sticks * 128,
								 0 } },
				      pb_op_end(), tpc * k_steps * a_sticks,
				      (tpc * k_steps > 1 ? 2 : 1) * a_sticks);
		/* B: the tile's sticks of each row, rows in K order; the tiles. */
		op->in[1] = pb_stream(c, (struct pb_endpoint){ SPK_EP_DRAM, 1, 0,
							       (uint64_t)tj * (TILE_N / 64) * 128,
							       { TILE_N / 64, dim, tpc, 1 },
							       { 128, dim / 64 * 128,
								 TILE_N / 64 * 128, 0 } },
				      pb_op_end(), tpc * k_steps * b_sticks,
				      k_steps == 1 ? b_sticks : 2 * b_sticks);
		op->out = pb_stream(c, pb_op_end(),
				    (struct pb_endpoint){ SPK_EP_DRAM, 2, 0,
							  ((uint64_t)ti * TILE_M * (dim / 32) +
							   tj * (TILE_N / 32)) * 128,
							  { TILE_N / 32, TILE_M, tpc, 1 },
							  { 128, dim / 32 * 128, TILE_N / 32 * 128,
							    0 } },
				    tpc * c_sticks, c_sticks);
		op->acc_buffer = pb_buffer(c, TILE_M * (TILE_N / 32) * 128);
	}
}

static float half_at(const struct test_mem *mem, uint64_t addr, unsigned dtype)
{
	uint16_t h;
	uint32_t sign, exp, man, w;
	float f;

	memcpy(&h, mem->bytes + addr, 2);
	if (dtype == SPK_DT_BF16) {
		w = (uint32_t)h << 16;
		memcpy(&f, &w, 4);
		return f;
	}
	sign = (uint32_t)(h >> 15) << 31;
	exp = (h >> 10) & 0x1f;
	man = h & 0x3ff;
	/* The bench's inputs are normal numbers. */
	w = sign | (exp + 112) << 23 | man << 13;
	memcpy(&f, &w, 4);
	return f;
}

/* Sampled C elements against a double-precision dot product. */
static int check_results(const struct test_mem *mem, const uint64_t *args, unsigned dtype)
{
	for (unsigned s = 0; s < 64; s++) {
		unsigned i = (s * 397) % dim, j = (s * 631 + 7) % dim;
		double ref = 0, mag = 0;
		float got;

		for (unsigned k = 0; k < dim; k++) {
			double p = (double)half_at(mem, args[0] + ((uint64_t)i * dim + k) * 2,
						   dtype) *
				   half_at(mem, args[1] + ((uint64_t)k * dim + j) * 2, dtype);

			ref += p;
			mag += fabs(p);
		}
		memcpy(&got, mem->bytes + args[2] + ((uint64_t)i * dim + j) * 4, 4);
		/* fp32 sums of dim positive terms: dim roundings of 2^-24 at worst. */
		if (fabs(got - ref) > fmax(1e-5, dim * 0x1p-24) * mag + 1e-30) {
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
	snprintf(arg_n, sizeof(arg_n), "%d", dim);
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median, min and max of n values (sorted in place). */
struct spread {
	double median, min, max;
};

static struct spread spread_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return (struct spread){ n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0],
				v[n - 1] };
}

static void print_row(const char *name, struct spread s, const char *unit, const char *note)
{
	printf("%-40s %10.3f %-6s (min %.3f, max %.3f)%s%s\n", name, s.median, unit, s.min,
	       s.max, note ? " " : "", note ? note : "");
}

static void json_row(FILE *f, const char *name, struct spread s, const char *unit)
{
	fprintf(f, "  {\"name\": \"%s\", \"value\": %.4f, \"unit\": \"%s\"},\n", name, s.median,
		unit);
	fprintf(f, "  {\"name\": \"%s.min\", \"value\": %.4f, \"unit\": \"%s\"},\n", name, s.min,
		unit);
	fprintf(f, "  {\"name\": \"%s.max\", \"value\": %.4f, \"unit\": \"%s\"},\n", name, s.max,
		unit);
}

/* The matmul for one input type: its program and where its operands lie. */
struct variant {
	unsigned dtype;
	const char *name;
	struct spyre_program *prog;
	uint64_t args[3];
};

static int load_variant(struct variant *v, const struct spyre_engine_config *cfg,
			unsigned k_steps)
{
	static struct pb_program prog;
	struct spyre_engine_error err;
	size_t len;
	uint8_t *img;

	build_matmul(&prog, k_steps, v->dtype);
	img = pb_serialize(&prog, &len);
	if (!img || spyre_program_load(cfg, img, len, &v->prog, &err)) {
		fprintf(stderr, "engine-bench: %s load failed: %s\n", v->name, err.detail);
		free(img);
		return -1;
	}
	free(img);
	return 0;
}

/* The variant's operands and result from @base: A, B (dim^2 halves), C (fp32). */
static uint64_t place(struct variant *v, uint64_t base)
{
	uint64_t half = 2ull * dim * dim;

	v->args[0] = base;
	v->args[1] = base + half;
	v->args[2] = base + 2 * half;
	return base + 4 * half;
}

/* Operands: A and B with values in [0.125, 0.5) in the variant's type. */
static void fill_inputs(struct test_mem *mem, const struct variant *v)
{
	for (uint64_t i = 0; i < 2ull * dim * dim; i++) {
		uint64_t at = (i < (uint64_t)dim * dim ? v->args[0] : v->args[1] - 2ull * dim * dim) +
			      2 * i;
		uint16_t h;

		if (v->dtype == SPK_DT_FP16) {
			h = (uint16_t)(0x3000 + (i * 7919 % 0x0c00));
		} else {
			/* bf16: 0x3e00.. is 0.125 .. 0.5, 7 mantissa bits. */
			h = (uint16_t)(0x3e00 + (i * 7919 % 0x100));
		}
		memcpy(mem->bytes + at, &h, 2);
	}
}

/*
 * A tiling per size that fits a core's 2 MB scratchpad: tiles of
 * tile_m x tile_n, one or more a core, K in k_steps double-buffered chunks.
 */
static const struct scale_case {
	unsigned dim, tile_m, tile_n, k_steps, runs;
} scale_cases[] = {
	{ 256, 32, 64, 1, 9 },
	{ 512, 128, 64, 1, 7 },
	{ 1024, 256, 128, 1, 5 },
	{ 2048, 256, 256, 4, 3 },
	{ 4096, 256, 256, 8, 2 },
};

static int scaling(const char *json_path, const char *tsv_path, unsigned threads)
{
	const int ncases = sizeof(scale_cases) / sizeof(scale_cases[0]);
	double gflops[2][sizeof(scale_cases) / sizeof(scale_cases[0])];
	struct spyre_engine_config cfg;
	struct spyre_engine_stats stats;
	FILE *json, *tsv;

	spyre_engine_config_default(&cfg);
	cfg.host_threads = threads;
	for (int i = 0; i < ncases; i++) {
		const struct scale_case *sc = &scale_cases[i];
		struct variant vars[2] = { { SPK_DT_FP16, "fp16", NULL, { 0 } },
					   { SPK_DT_BF16, "bf16", NULL, { 0 } } };
		struct test_mem mem;
		uint64_t end;

		dim = sc->dim;
		TILE_M = sc->tile_m;
		TILE_N = sc->tile_n;
		end = place(&vars[1], place(&vars[0], 0));
		test_mem_init(&mem, end);
		for (int v = 0; v < 2; v++) {
			double best = 1e30;

			fill_inputs(&mem, &vars[v]);
			if (load_variant(&vars[v], &cfg, sc->k_steps))
				return 1;
			/* A first run pays for host pages and threads: not counted. */
			if (time_engine(vars[v].prog, vars[v].args, &mem, &stats, 1, &best) ||
			    check_results(&mem, vars[v].args, vars[v].dtype))
				return 1;
			best = 1e30;
			if (time_engine(vars[v].prog, vars[v].args, &mem, &stats, sc->runs, &best))
				return 1;
			gflops[v][i] = 2.0 * dim * dim * dim / best / 1e9;
			spyre_program_free(vars[v].prog);
		}
		test_mem_fini(&mem);
		printf("engine.matmul.scaling %5u^3: fp16 %8.2f GFLOPS, bf16 %8.2f GFLOPS "
		       "(tiles %ux%u, K in %u, best of %u)\n", dim, gflops[0][i], gflops[1][i],
		       TILE_M, TILE_N, sc->k_steps, sc->runs);
	}
	json = fopen(json_path, "w");
	tsv = fopen(tsv_path, "w");
	if (!json || !tsv)
		return 1;
	fprintf(json, "[\n");
	fprintf(tsv, "# n\tfp16_gflops\tbf16_gflops\n");
	for (int i = 0; i < ncases; i++) {
		for (int v = 0; v < 2; v++)
			fprintf(json, "  {\"name\": \"engine.matmul.scaling.%s_gflops.%u\", "
				"\"value\": %.3f, \"unit\": \"GFLOPS\"}%s\n", v ? "bf16" : "fp16",
				scale_cases[i].dim, gflops[v][i],
				i == ncases - 1 && v ? "" : ",");
		fprintf(tsv, "%u\t%.3f\t%.3f\n", scale_cases[i].dim, gflops[0][i],
			gflops[1][i]);
	}
	fprintf(json, "]\n");
	fclose(json);
	fclose(tsv);
	return 0;
}

int main(int argc, char **argv)
{
	struct variant vars[2] = {
		{ SPK_DT_FP16, "fp16", NULL, { 0 } },
		{ SPK_DT_BF16, "bf16", NULL, { 0 } },
	};
	struct spyre_engine_config cfg;
	struct spyre_engine_stats stats;
	struct test_mem mem;
	double gf[2][ROUNDS], ratio[2][ROUNDS], blas[ROUNDS], first, t0;
	char self[4096], argv0[4096], info[400] = "none";
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned threads = cpus > 0 ? (unsigned)cpus : 1;
	int engine_only = 0, blas_ok = 1;
	unsigned k_steps = 1;
	const char *isa = getenv("SPYRE_ENGINE_ISA");

	if (argc == 4 && !strcmp(argv[1], "--scaling"))
		return scaling(argv[2], argv[3], threads);
	if (argc > 1 && argv[1][0] == '-') {
		if (strcmp(argv[1], "--engine-only") || argc < 3 || atoi(argv[2]) < 1) {
			fprintf(stderr, "usage: engine-bench [results.json]\n"
				"       engine-bench --engine-only RUNS [THREADS [K_STEPS "
				"[TILE_M TILE_N]]]\n"
				"       engine-bench --scaling RESULTS_JSON TABLE_TSV\n");
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
		if (!TILE_M || !TILE_N || dim % TILE_M || dim % TILE_N || TILE_N % 64 ||
		    (dim / TILE_M) * (dim / TILE_N) % CORES ||
		    (dim / TILE_M) * (dim / TILE_N) / CORES > dim / TILE_N || !k_steps ||
		    dim % (64 * k_steps)) {
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
	test_mem_init(&mem, place(&vars[1], place(&vars[0], 0)));
	for (int v = 0; v < 2; v++) {
		fill_inputs(&mem, &vars[v]);
		if (load_variant(&vars[v], &cfg, k_steps))
			return 1;
	}
	for (int v = 0; v < 2; v++) {
		for (int i = 0; i < engine_only; i++) {
			double once = 1e30, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID);

			if (time_engine(vars[v].prog, vars[v].args, &mem, &stats, 1, &once))
				return 1;
			cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu;
			if (check_results(&mem, vars[v].args, vars[v].dtype))
				return 1;
			/* CPU time counts every thread, spinning pool workers too. */
			printf("%s run %d: %.2f ms, %.2f GFLOPS, %.2f ms CPU, %.1f us device\n",
			       vars[v].name, i, once * 1e3, 2.0 * dim * dim * dim / once / 1e9,
			       cpu * 1e3, stats.device_ns / 1e3);
		}
	}
	if (engine_only)
		return 0;
	/* The first runs also pay for host memory and threads. */
	t0 = now_s();
	for (int v = 0; v < 2; v++) {
		double best = 1e30;

		if (time_engine(vars[v].prog, vars[v].args, &mem, &stats, WARMUP, &best) ||
		    check_results(&mem, vars[v].args, vars[v].dtype))
			return 1;
	}
	first = now_s() - t0;
	for (int r = 0; r < ROUNDS; r++) {
		for (int v = 0; v < 2; v++) {
			double best = 1e30;

			if (time_engine(vars[v].prog, vars[v].args, &mem, &stats, ENGINE_REPS,
					&best))
				return 1;
			gf[v][r] = 2.0 * dim * dim * dim / best / 1e9;
		}
		blas[r] = openblas_gflops(self, threads, info, sizeof(info));
		blas_ok &= blas[r] > 0;
		for (int v = 0; v < 2; v++)
			ratio[v][r] = blas[r] > 0 ? gf[v][r] / blas[r] : 0;
	}
	for (int v = 0; v < 2; v++)
		spyre_program_free(vars[v].prog);
	test_mem_fini(&mem);

	{
		struct spread g16 = spread_of(gf[0], ROUNDS), gbf = spread_of(gf[1], ROUNDS);
		struct spread r16 = spread_of(ratio[0], ROUNDS), rbf = spread_of(ratio[1], ROUNDS);
		struct spread ob = spread_of(blas, ROUNDS);
		char note[160], *core;

		snprintf(note, sizeof(note), "(%d rounds; warm-up %.1f ms; %u threads; kernel path %s)",
			 ROUNDS, first * 1e3, threads, isa ? isa : "best");
		print_row("engine.matmul.gflops", g16, "GFLOPS", note);
		print_row("engine.matmul.bf16.gflops", gbf, "GFLOPS", NULL);
		print_row("engine.matmul.openblas_gflops", ob, "GFLOPS", info);
		print_row("engine.matmul.ratio_vs_openblas", r16, "", "(goal >= 0.95)");
		print_row("engine.matmul.bf16.ratio_vs_openblas", rbf, "", "(goal >= 1.6)");
		printf("%-40s %10.3f us (modelled device time)\n", "engine.matmul.device_us",
		       stats.device_ns / 1e3);
		if (argc > 1) {
			FILE *f = fopen(argv[1], "w");

			if (!f)
				return 1;
			core = strtok(info, " |");
			snprintf(note, sizeof(note), "GFLOPS (OpenBLAS core %s)", core ? core : "?");
			fprintf(f, "[\n");
			json_row(f, "engine.matmul.gflops", g16, "GFLOPS");
			json_row(f, "engine.matmul.bf16.gflops", gbf, "GFLOPS");
			json_row(f, "engine.matmul.openblas_gflops", ob, note);
			json_row(f, "engine.matmul.ratio_vs_openblas", r16, "ratio");
			json_row(f, "engine.matmul.bf16.ratio_vs_openblas", rbf, "ratio");
			fprintf(f, "  {\"name\": \"engine.matmul.host_threads\", \"value\": %u, "
				   "\"unit\": \"threads\"},\n", threads);
			fprintf(f, "  {\"name\": \"engine.matmul.device_us\", \"value\": %.3f, "
				   "\"unit\": \"us\"}\n]\n", stats.device_ns / 1e3);
			fclose(f);
		}
	}
	return blas_ok ? 0 : 1;
}
