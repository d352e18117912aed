// SPDX-License-Identifier: MIT
/*
 * libspyre's op library without a device: layout math, pack/unpack round
 * trips, the fp16/bf16 conversions against the engine's, and every op's
 * generated program run on the host engine (qemu-device/engine) against a
 * double-precision CPU reference with docs/engine.md's tolerances:
 * |got - ref| <= rel * (|ref| + scale) + tiny.  Input padding lanes hold
 * NaN (ops must never read them) and outputs start as NaN everywhere
 * (ops must write every valid lane, and padding as 0).
 */
#include <math.h>

#include "dtype.h"
#include "engine_testlib.h"
#include "ops_internal.h"
#include "tap.h"

#define MEM_BYTES	(96ull << 20)

static struct test_mem mem;
static uint64_t mem_top;

static uint32_t rng_state = 12345;

static float frand(void)	/* uniform in [-1, 1) */
{
	rng_state = rng_state * 1664525u + 1013904223u;
	return (float)((rng_state >> 8) & 0xffffff) / (float)(1 << 23) - 1.0f;
}

static double rel_tol(spyre_dtype dt)
{
	return dt == SPYRE_DTYPE_FP32 ? 1e-5 : dt == SPYRE_DTYPE_FP16 ? 1e-3 : 8e-3;
}

static double tiny(spyre_dtype dt)
{
	return dt == SPYRE_DTYPE_FP32 ? 0x1p-149 : dt == SPYRE_DTYPE_FP16 ? 0x1p-24 : 0x1p-133;
}

static spyre_layout lay(spyre_dtype dt, uint32_t ndim, uint32_t d0, uint32_t d1, uint32_t d2)
{
	uint32_t shape[3] = { d0, d1, d2 };
	spyre_layout l;

	if (spyre_tensor_layout(dt, ndim, shape, &l))
		printf("  # layout failed: %s\n", spyre_last_error_detail());
	return l;
}

/* A tensor in the test's device memory. */
struct dt {
	spyre_layout l;
	uint64_t addr;
	float *host;		/* dense values as the device holds them (rounded) */
};

static uint64_t dev_alloc(uint64_t bytes)
{
	uint64_t a = mem_top;

	if (!mem.bytes)
		test_mem_init(&mem, MEM_BYTES);
	mem_top += (bytes + 4095) & ~4095ull;
	if (mem_top > MEM_BYTES) {
		printf("  # test memory exhausted\n");
		exit(1);
	}
	return a;
}

/* Every padding lane of a packed tensor set to NaN (0xff bytes). */
static void poison_padding(const struct dt *t)
{
	uint32_t n = t->l.shape[t->l.ndim - 1];
	uint64_t row = (uint64_t)t->l.row_sticks * 128, used = (uint64_t)n * t->l.elem_bytes;

	for (uint64_t r = 0; r < t->l.rows; r++)
		memset(mem.bytes + t->addr + r * row + used, 0xff, row - used);
}

/* An input: random values in [lo, hi), packed, with NaN padding. */
static struct dt input(spyre_layout l, float lo, float hi)
{
	struct dt t = { l, dev_alloc(l.bytes), NULL };
	uint64_t n = l.rows * l.shape[l.ndim - 1];
	float *src = malloc(n * sizeof(float));

	t.host = malloc(n * sizeof(float));
	for (uint64_t i = 0; i < n; i++)
		src[i] = lo + (frand() + 1) * 0.5f * (hi - lo);
	spyre_tensor_pack(&l, src, SPYRE_DTYPE_FP32, mem.bytes + t.addr);
	spyre_tensor_unpack(&l, mem.bytes + t.addr, t.host, SPYRE_DTYPE_FP32);
	poison_padding(&t);
	free(src);
	return t;
}

/* An output: NaN everywhere before the run. */
static struct dt output(spyre_layout l)
{
	struct dt t = { l, dev_alloc(l.bytes), NULL };

	memset(mem.bytes + t.addr, 0xff, l.bytes);
	t.host = malloc(l.rows * l.shape[l.ndim - 1] * sizeof(float));
	return t;
}

static void release(struct dt *t)
{
	free(t->host);
	t->host = NULL;
}

static struct spyre_engine_stats last_stats;

/* Run every launch of plan with operands ops[] (and a temporary). */
static int run_plan(const struct ops_plan *plan, struct dt **ops, unsigned nops)
{
	struct spyre_engine_config cfg;
	struct spyre_engine_mem mops = test_mem_ops(&mem);
	uint64_t temp = plan->temp_bytes ? dev_alloc(plan->temp_bytes) : 0;
	uint64_t addrs[SPK_MAX_ARGS];

	spyre_engine_config_default(&cfg);
	memset(&last_stats, 0, sizeof(last_stats));
	if (nops > SPK_MAX_ARGS) {
		printf("  # %u operands\n", nops);
		return -1;
	}
	for (unsigned i = 0; i < nops; i++)
		addrs[i] = ops[i]->addr;
	if (!plan->num_launches) {
		printf("  # empty plan\n");
		return -1;
	}
	for (unsigned i = 0; i < plan->num_launches; i++) {
		const struct ops_launch *l = &plan->launches[i];
		struct spyre_engine_error err;
		struct spyre_engine_stats st;
		struct spyre_program *p;
		uint64_t args[SPK_MAX_ARGS];
		enum spyre_engine_status s;

		for (unsigned a = 0; a < l->num_args; a++) {
			if (ops_launch_arg_addr(plan, l, a, addrs, nops, temp, &args[a])) {
				printf("  # launch %u argument %u names operand %u\n", i, a, l->arg[a]);
				return -1;
			}
		}
		s = spyre_program_load(&cfg, l->image, l->bytes, &p, &err);
		if (s) {
			printf("  # launch %u load: %s core %d index %d: %s\n", i,
			       spyre_engine_status_name(s), err.core, err.index, err.detail);
			return -1;
		}
		s = spyre_program_run(p, args, l->num_args, &mops, &st, &err);
		spyre_program_free(p);
		if (s) {
			printf("  # launch %u run: %s core %d index %d: %s\n", i,
			       spyre_engine_status_name(s), err.core, err.index, err.detail);
			return -1;
		}
		last_stats.device_cycles += st.device_cycles;
		last_stats.macs += st.macs;
	}
	return 0;
}

/* Unpack out; count padding lanes that are not 0. */
static unsigned fetch(struct dt *t)
{
	uint32_t n = t->l.shape[t->l.ndim - 1];
	uint64_t row = (uint64_t)t->l.row_sticks * 128, used = (uint64_t)n * t->l.elem_bytes;
	unsigned bad = 0;

	spyre_tensor_unpack(&t->l, mem.bytes + t->addr, t->host, SPYRE_DTYPE_FP32);
	for (uint64_t r = 0; r < t->l.rows; r++)
		for (uint64_t b = used; b < row; b++)
			bad += mem.bytes[t->addr + r * row + b] != 0;
	return bad;
}

/* Compare got with ref (scale per element or a constant); count misses. */
static unsigned compare(const char *what, const struct dt *out, const double *ref,
			const double *scale, double scale_const)
{
	uint64_t n = out->l.rows * out->l.shape[out->l.ndim - 1];
	unsigned bad = 0;
	double rel = rel_tol(out->l.dtype), worst = 0;

	for (uint64_t i = 0; i < n; i++) {
		double s = scale ? scale[i] : scale_const;
		double err = fabs(out->host[i] - ref[i]), lim = rel * (fabs(ref[i]) + s) +
								 tiny(out->l.dtype);

		if (!(err <= lim)) {
			if (bad < 3)
				printf("  # %s [%llu]: got %.9g want %.9g (limit %.3g)\n", what,
				       (unsigned long long)i, out->host[i], ref[i], lim);
			bad++;
		}
		if (lim > 0 && err / lim > worst)
			worst = err / lim;
	}
	if (bad)
		printf("  # %s: %u of %llu outside the tolerance\n", what, bad,
		       (unsigned long long)n);
	return bad;
}

static double act_ref(spyre_act act, double x)
{
	switch (act) {
	case SPYRE_ACT_RELU:
		return x > 0 ? x : 0;
	case SPYRE_ACT_GELU:
		return 0.5 * x * erfc(-x / sqrt(2.0));
	case SPYRE_ACT_SILU:
		return x / (1 + exp(-x));
	default:
		return x;
	}
}

static spyre_dtype round_to(spyre_dtype dt, double v, float *out)
{
	float f = (float)v;

	*out = dt == SPYRE_DTYPE_FP16 ? ops_fp16_to_f32(ops_f32_to_fp16(f)) :
	       dt == SPYRE_DTYPE_BF16 ? ops_bf16_to_f32(ops_f32_to_bf16(f)) : f;
	return dt;
}

/* ------------------------------------------------------------------------ */

TEST(layout_math)
{
	spyre_layout l;
	uint32_t s3[3] = { 5, 100, 150 }, s1[1];

	ASSERT_EQ(spyre_tensor_layout(SPYRE_DTYPE_FP16, 3, s3, &l), SPYRE_SUCCESS);
	EXPECT_EQ(l.padded_last, 192);
	EXPECT_EQ(l.row_sticks, 3);
	EXPECT_EQ(l.rows, 500);
	/* The card's [100,3,5,64] fp16 device size. */
	EXPECT_EQ(l.bytes, 100ull * 3 * 5 * 64 * 2);
	EXPECT_EQ(l.strides[2], 2);
	EXPECT_EQ(l.strides[1], 384);
	EXPECT_EQ(l.strides[0], 38400);
	for (unsigned i = 0; i < 4; i++) {
		static const uint32_t n[4] = { 1, 63, 64, 65 };
		static const uint32_t fp16_sticks[4] = { 1, 1, 1, 2 };
		static const uint32_t fp32_sticks[4] = { 1, 2, 2, 3 };

		s1[0] = n[i];
		ASSERT_EQ(spyre_tensor_layout(SPYRE_DTYPE_FP16, 1, s1, &l), SPYRE_SUCCESS);
		EXPECT_EQ(l.row_sticks, fp16_sticks[i]);
		EXPECT_EQ(l.bytes, fp16_sticks[i] * 128);
		ASSERT_EQ(spyre_tensor_layout(SPYRE_DTYPE_FP32, 1, s1, &l), SPYRE_SUCCESS);
		EXPECT_EQ(l.row_sticks, fp32_sticks[i]);
		EXPECT_EQ(l.padded_last, fp32_sticks[i] * 32);
	}
	s3[1] = 0;
	EXPECT_EQ(spyre_tensor_layout(SPYRE_DTYPE_FP16, 3, s3, &l), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "dimension 1 is 0") != NULL);
	s3[1] = 100;
	EXPECT_EQ(spyre_tensor_layout(SPYRE_DTYPE_FP16, 5, s3, &l), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_tensor_layout((spyre_dtype)7, 3, s3, &l), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_tensor_layout(SPYRE_DTYPE_FP16, 3, s3, NULL), SPYRE_ERROR_INVALID_ARGUMENT);
	{
		uint32_t huge[4] = { 65536, 65536, 65536, 64 };

		EXPECT_EQ(spyre_tensor_layout(SPYRE_DTYPE_FP32, 4, huge, &l),
			  SPYRE_ERROR_INVALID_ARGUMENT);
	}
}

TEST(pack_unpack_round_trips)
{
	static const uint32_t shapes[][3] = { { 1, 1, 1 }, { 1, 1, 63 }, { 1, 1, 64 },
					      { 1, 1, 65 }, { 1, 100, 150 }, { 5, 100, 150 } };

	for (unsigned s = 0; s < 6; s++)
		for (int dt = 0; dt <= SPK_DT_MAX; dt++)
			for (int hdt = 0; hdt <= SPK_DT_MAX; hdt++) {
				spyre_layout l = lay((spyre_dtype)dt, 3, shapes[s][0],
						     shapes[s][1], shapes[s][2]);
				uint64_t n = l.rows * shapes[s][2], hb = hdt == 2 ? 4 : 2;
				uint8_t *host = malloc(n * hb), *back = malloc(n * hb);
				uint8_t *dev = malloc(l.bytes);
				uint64_t row = (uint64_t)l.row_sticks * 128, nz = 0;
				int same;

				for (uint64_t i = 0; i < n; i++) {
					float f = frand() * 100;
					uint16_t h = hdt == 0 ? ops_f32_to_fp16(f) :
						     ops_f32_to_bf16(f);

					if (hdt == 2)
						memcpy(host + 4 * i, &f, 4);
					else
						memcpy(host + 2 * i, &h, 2);
				}
				memset(dev, 0xff, l.bytes);
				ASSERT_EQ(spyre_tensor_pack(&l, host, (spyre_dtype)hdt, dev), 0);
				for (uint64_t r = 0; r < l.rows; r++)
					for (uint64_t b = (uint64_t)shapes[s][2] * l.elem_bytes;
					     b < row; b++)
						nz += dev[r * row + b] != 0;
				EXPECT_EQ(nz, 0);
				ASSERT_EQ(spyre_tensor_unpack(&l, dev, back, (spyre_dtype)hdt), 0);
				/* Exact when the device type holds the host type's values. */
				same = hdt == dt || dt == SPYRE_DTYPE_FP32;
				if (same)
					EXPECT_EQ(memcmp(host, back, n * hb), 0);
				free(host);
				free(back);
				free(dev);
			}
	{
		spyre_layout l = lay(SPYRE_DTYPE_FP16, 1, 3, 1, 1);
		float f[3] = { 1, 2, 3 };
		uint8_t dev[128];

		EXPECT_EQ(spyre_tensor_pack(&l, NULL, SPYRE_DTYPE_FP32, dev),
			  SPYRE_ERROR_INVALID_ARGUMENT);
		EXPECT_EQ(spyre_tensor_pack(&l, f, (spyre_dtype)3, dev),
			  SPYRE_ERROR_INVALID_ARGUMENT);
	}
}

/* The library's conversions equal the engine's, bit for bit. */
TEST(conversions_match_the_engine)
{
	unsigned bad16 = 0, bad_enc = 0;

	for (uint32_t h = 0; h < 0x10000; h++) {
		float a = ops_fp16_to_f32((uint16_t)h), b = fp16_to_f32((uint16_t)h);

		if (memcmp(&a, &b, 4) && !(isnan(a) && isnan(b)))
			bad16++;
	}
	EXPECT_EQ(bad16, 0);
	for (uint32_t i = 0; i < 400000; i++) {
		uint32_t u = i < 200000 ? i * 21474u + (i >> 3) : (i - 200000) * 0x9e3779b9u;
		float f;

		if (i >= 200000)
			u ^= u >> 7;
		memcpy(&f, &u, 4);
		bad_enc += ops_f32_to_fp16(f) != f32_to_fp16(f);
		bad_enc += ops_f32_to_bf16(f) != f32_to_bf16(f);
	}
	{
		static const float edge[] = { 0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 1e9f,
					      0x1p-24f, 0x1p-25f, 0x1.8p-25f, 0x1p-26f, 6.1e-5f,
					      INFINITY, -INFINITY, NAN };

		for (unsigned i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
			bad_enc += ops_f32_to_fp16(edge[i]) != f32_to_fp16(edge[i]);
			bad_enc += ops_f32_to_bf16(edge[i]) != f32_to_bf16(edge[i]);
		}
	}
	EXPECT_EQ(bad_enc, 0);
}

/* C = act(A B) for one shape; returns mismatches (or 1 on a failed run). */
static unsigned check_matmul(uint32_t M, uint32_t K, uint32_t N, spyre_dtype din,
			     spyre_dtype dout, spyre_act act, unsigned *launches)
{
	struct ops_plan plan = { 0 };
	struct dt a = input(lay(din, 2, M, K, 0), -1, 1), b = input(lay(din, 2, K, N, 0), -1, 1);
	struct dt c = output(lay(dout, 2, M, N, 0));
	struct dt *ops[3] = { &a, &b, &c };
	double *ref = malloc((size_t)M * N * sizeof(double)), *scale;
	unsigned bad = 1;
	char what[96];

	scale = malloc((size_t)M * N * sizeof(double));
	if (ops_gen_matmul(&a.l, &b.l, act, &c.l, &plan)) {
		printf("  # generate: %s\n", spyre_last_error_detail());
		goto out;
	}
	*launches = plan.num_launches;
	if (run_plan(&plan, ops, 3))
		goto out;
	bad = fetch(&c);
	if (bad)
		printf("  # %u output padding bytes not 0\n", bad);
	for (uint32_t i = 0; i < M; i++)
		for (uint32_t j = 0; j < N; j++) {
			double s = 0, m = 0, v;

			for (uint32_t k = 0; k < K; k++) {
				s += (double)a.host[(size_t)i * K + k] * b.host[(size_t)k * N + j];
				m += fabs((double)a.host[(size_t)i * K + k] *
					  b.host[(size_t)k * N + j]);
			}
			v = act_ref(act, s);
			ref[(size_t)i * N + j] = v;
			/* The activation's slope is at most ~1.1: the sum's error carries. */
			scale[(size_t)i * N + j] = 1.2 * m;
		}
	snprintf(what, sizeof(what), "matmul %ux%ux%u %s->%s act %d", M, K, N,
		 ops_dtype_name(din), ops_dtype_name(dout), (int)act);
	bad += compare(what, &c, ref, scale, 0);
	printf("  # %s: %u launch(es), %llu MACs, %llu device cycles\n", what, plan.num_launches,
	       (unsigned long long)last_stats.macs, (unsigned long long)last_stats.device_cycles);
out:
	ops_plan_free(&plan);
	free(ref);
	free(scale);
	release(&a);
	release(&b);
	release(&c);
	mem_top = 0;
	return bad;
}

TEST(matmul_odd_shapes_on_the_engine)
{
	static const struct {
		uint32_t m, k, n;
		spyre_dtype din, dout;
		spyre_act act;
	} cases[] = {
		{ 1, 1, 1, SPYRE_DTYPE_FP16, SPYRE_DTYPE_FP16, SPYRE_ACT_NONE },
		{ 1, 300, 200, SPYRE_DTYPE_FP16, SPYRE_DTYPE_FP16, SPYRE_ACT_NONE },
		{ 100, 150, 70, SPYRE_DTYPE_FP16, SPYRE_DTYPE_FP32, SPYRE_ACT_NONE },
		{ 65, 129, 63, SPYRE_DTYPE_FP32, SPYRE_DTYPE_FP32, SPYRE_ACT_RELU },
		{ 37, 64, 300, SPYRE_DTYPE_BF16, SPYRE_DTYPE_BF16, SPYRE_ACT_GELU },
		{ 130, 200, 257, SPYRE_DTYPE_FP16, SPYRE_DTYPE_FP16, SPYRE_ACT_SILU },
		{ 64, 65, 64, SPYRE_DTYPE_FP32, SPYRE_DTYPE_FP16, SPYRE_ACT_NONE },
		{ 300, 33, 5, SPYRE_DTYPE_FP16, SPYRE_DTYPE_BF16, SPYRE_ACT_NONE },
		/* N = 192: halving the tile width must keep it a multiple of 64 */
		{ 40, 100, 192, SPYRE_DTYPE_FP16, SPYRE_DTYPE_FP16, SPYRE_ACT_GELU },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned launches = 0;

		EXPECT_EQ(check_matmul(cases[i].m, cases[i].k, cases[i].n, cases[i].din,
				       cases[i].dout, cases[i].act, &launches), 0);
	}
}

/* A K too large for one firing: k_steps chunks plus a remainder MATMUL. */
TEST(matmul_k_chunks_and_remainder)
{
	unsigned launches = 0;

	EXPECT_EQ(check_matmul(3, 9000, 70, SPYRE_DTYPE_FP32, SPYRE_DTYPE_FP32, SPYRE_ACT_NONE,
			       &launches), 0);
	EXPECT_EQ(check_matmul(2, 20000, 40, SPYRE_DTYPE_FP16, SPYRE_DTYPE_FP32, SPYRE_ACT_SILU,
			       &launches), 0);
}

/*
 * A matmul past the engine's work bound per program (2^30) is split into
 * several launches, each of which loads (checked, not run: 8.8e12 MACs).
 */
TEST(matmul_huge_splits_into_loadable_launches)
{
	struct ops_plan plan = { 0 };
	spyre_layout a = lay(SPYRE_DTYPE_FP16, 2, 131072, 8192, 0);
	spyre_layout b = lay(SPYRE_DTYPE_FP16, 2, 8192, 8192, 0);
	spyre_layout c = lay(SPYRE_DTYPE_FP16, 2, 131072, 8192, 0);
	struct spyre_engine_config cfg;
	unsigned loaded = 0;

	spyre_engine_config_default(&cfg);
	ASSERT_EQ(ops_gen_matmul(&a, &b, SPYRE_ACT_NONE, &c, &plan), SPYRE_SUCCESS);
	printf("  # %u launches\n", plan.num_launches);
	EXPECT_TRUE(plan.num_launches >= 9);	/* 2^43 MACs / 4096 / 2^30 = 2 at least */
	for (unsigned i = 0; i < plan.num_launches; i++) {
		struct spyre_engine_error err;
		struct spyre_program *p;
		enum spyre_engine_status st = spyre_program_load(&cfg, plan.launches[i].image,
								 plan.launches[i].bytes, &p, &err);

		if (st) {
			printf("  # launch %u: %s: %s\n", i, spyre_engine_status_name(st), err.detail);
			continue;
		}
		spyre_program_free(p);
		loaded++;
	}
	EXPECT_EQ(loaded, plan.num_launches);
	ops_plan_free(&plan);
}

TEST(matmul_rejects_bad_shapes)
{
	struct ops_plan plan = { 0 };
	spyre_layout a = lay(SPYRE_DTYPE_FP16, 2, 4, 8, 0), b = lay(SPYRE_DTYPE_FP16, 2, 9, 5, 0);
	spyre_layout c = lay(SPYRE_DTYPE_FP16, 2, 4, 5, 0), b32 = lay(SPYRE_DTYPE_FP32, 2, 8, 5, 0);
	spyre_layout b8 = lay(SPYRE_DTYPE_FP16, 2, 8, 5, 0), c6 = lay(SPYRE_DTYPE_FP16, 2, 4, 6, 0);

	EXPECT_EQ(ops_gen_matmul(&a, &b, SPYRE_ACT_NONE, &c, &plan), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "K = 8") != NULL);
	EXPECT_EQ(ops_gen_matmul(&a, &b32, SPYRE_ACT_NONE, &c, &plan),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "fp32") != NULL);
	EXPECT_EQ(ops_gen_matmul(&a, &b8, SPYRE_ACT_NONE, &c6, &plan),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(ops_gen_matmul(&a, &b8, (spyre_act)9, &c, &plan), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(ops_gen_matmul(&a, &b8, SPYRE_ACT_NONE, NULL, &plan),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(plan.num_launches, 0);
	EXPECT_EQ(ops_gen_matmul(&a, &b8, SPYRE_ACT_NONE, &c, &plan), SPYRE_SUCCESS);
	EXPECT_EQ(plan.num_launches, 1);
	ops_plan_free(&plan);
}

static double elt_ref(spyre_eltwise op, double x, double y, double scale)
{
	switch (op) {
	case SPYRE_OP_ADD:
		return x + y;
	case SPYRE_OP_SUB:
		return x - y;
	case SPYRE_OP_MUL:
		return x * y;
	case SPYRE_OP_MAX:
		return x > y ? x : y;
	case SPYRE_OP_SCALE:
		return x * scale;
	case SPYRE_OP_RELU:
		return act_ref(SPYRE_ACT_RELU, x);
	case SPYRE_OP_GELU:
		return act_ref(SPYRE_ACT_GELU, x);
	case SPYRE_OP_SILU:
		return act_ref(SPYRE_ACT_SILU, x);
	case SPYRE_OP_EXP:
		return exp(x);
	case SPYRE_OP_RSQRT:
		return 1 / sqrt(x);
	default:
		return x;
	}
}

TEST(eltwise_every_op_odd_shapes)
{
	static const uint32_t shapes[][3] = { { 1, 1, 1 }, { 1, 1, 63 }, { 1, 3, 65 },
					      { 5, 100, 150 }, { 1, 4099, 7 } };
	unsigned bad_total = 0;

	for (int op = SPYRE_OP_ADD; op <= SPYRE_OP_COPY; op++)
		for (unsigned s = 0; s < 5; s++)
			for (int bcast = 0; bcast <= ops_eltwise_binary((spyre_eltwise)op);
			     bcast++) {
				spyre_dtype din = (spyre_dtype)((op + s) % 3);
				spyre_dtype dout = (spyre_dtype)((op + 2 * s) % 3);
				float lo = op == SPYRE_OP_RSQRT ? 0.01f : -4, hi = 4;
				spyre_layout xl = lay(din, 3, shapes[s][0], shapes[s][1],
						      shapes[s][2]);
				struct dt x = input(xl, lo, hi), y = { 0 };
				struct dt out = output(lay(dout, 3, shapes[s][0], shapes[s][1],
							   shapes[s][2]));
				struct dt *ops[3] = { &x, &y, &out };
				struct ops_plan plan = { 0 };
				uint64_t n = xl.rows * shapes[s][2];
				double *ref = malloc(n * sizeof(double));
				unsigned bad = 1;
				char what[96];

				if (ops_eltwise_binary((spyre_eltwise)op))
					y = input(bcast ? lay(din, 1, shapes[s][2], 0, 0) : xl,
						  lo, hi);
				else
					ops[1] = &out;
				if (ops_gen_eltwise((spyre_eltwise)op, &x.l,
						    y.host ? &y.l : NULL, 0.37f, &out.l, &plan)) {
					printf("  # generate: %s\n", spyre_last_error_detail());
				} else if (!run_plan(&plan, ops, 3)) {
					bad = fetch(&out);
					for (uint64_t i = 0; i < n; i++) {
						double yv = 0;
						float r;

						if (y.host)
							yv = y.host[bcast ? i % shapes[s][2] : i];
						ref[i] = elt_ref((spyre_eltwise)op, x.host[i], yv,
								 0.37f);
						/* exp/rsqrt/gelu/silu: within fp32 libm of it */
						round_to(SPYRE_DTYPE_FP32, ref[i], &r);
					}
					snprintf(what, sizeof(what), "eltwise %d shape %u %s->%s%s",
						 op, s, ops_dtype_name(din), ops_dtype_name(dout),
						 bcast ? " broadcast" : "");
					bad += compare(what, &out, ref, NULL, 0);
				}
				bad_total += bad;
				ops_plan_free(&plan);
				free(ref);
				release(&x);
				release(&y);
				release(&out);
				mem_top = 0;
			}
	EXPECT_EQ(bad_total, 0);
}

TEST(eltwise_rejects_bad_operands)
{
	struct ops_plan plan = { 0 };
	spyre_layout x = lay(SPYRE_DTYPE_FP16, 2, 4, 8, 0), y = lay(SPYRE_DTYPE_FP16, 2, 4, 9, 0);
	spyre_layout y32 = lay(SPYRE_DTYPE_FP32, 2, 4, 8, 0), o = lay(SPYRE_DTYPE_FP16, 2, 5, 8, 0);

	EXPECT_EQ(ops_gen_eltwise(SPYRE_OP_ADD, &x, &y, 0, &x, &plan),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "4x9") != NULL);
	EXPECT_EQ(ops_gen_eltwise(SPYRE_OP_ADD, &x, &y32, 0, &x, &plan),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(ops_gen_eltwise(SPYRE_OP_ADD, &x, NULL, 0, &x, &plan),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(ops_gen_eltwise(SPYRE_OP_RELU, &x, NULL, 0, &o, &plan),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(ops_gen_eltwise(SPYRE_OP_SCALE, &x, NULL, INFINITY, &x, &plan),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(ops_gen_eltwise((spyre_eltwise)99, &x, NULL, 0, &x, &plan),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	{
		spyre_layout wide = lay(SPYRE_DTYPE_FP16, 1, 70000, 0, 0);

		EXPECT_EQ(ops_gen_eltwise(SPYRE_OP_RELU, &wide, NULL, 0, &wide, &plan),
			  SPYRE_ERROR_INVALID_ARGUMENT);
		EXPECT_TRUE(strstr(spyre_last_error_detail(), "70000") != NULL);
	}
	EXPECT_EQ(plan.num_launches, 0);
}

/* Softmax (kind 0), layernorm (1: gamma and beta; 2: none), rmsnorm (3, 4),
 * log-softmax (5). */
static unsigned check_rownorm(int kind, uint32_t rows, uint32_t n, spyre_dtype din,
			      spyre_dtype dout)
{
	spyre_layout xl = lay(din, 2, rows, n, 0), pl = lay(din, 1, n, 0, 0);
	struct dt x = input(xl, -3, 3), g = { 0 }, b = { 0 }, y = output(lay(dout, 2, rows, n, 0));
	struct dt *ops[4];
	unsigned nops = 0, bad = 1;
	struct ops_plan plan = { 0 };
	double *ref = malloc((size_t)rows * n * sizeof(double));
	double *scale = malloc((size_t)rows * n * sizeof(double));
	spyre_status st;
	char what[64];

	ops[nops++] = &x;
	if (kind == 1 || kind == 3) {
		g = input(pl, 0.5f, 1.5f);
		ops[nops++] = &g;
	}
	if (kind == 1) {
		b = input(pl, -1, 1);
		ops[nops++] = &b;
	}
	ops[nops++] = &y;
	if (kind == 0 || kind == 5)
		st = ops_gen_softmax(&x.l, &y.l, kind == 5, &plan);
	else
		st = ops_gen_norm(kind >= 3, &x.l, g.host ? &g.l : NULL, b.host ? &b.l : NULL,
				  1e-5f, &y.l, &plan);
	if (st) {
		printf("  # generate: %s\n", spyre_last_error_detail());
		goto out;
	}
	if (run_plan(&plan, ops, nops))
		goto out;
	bad = fetch(&y);
	for (uint32_t r = 0; r < rows; r++) {
		const float *xr = x.host + (size_t)r * n;
		double mx = -INFINITY, sum = 0, mean = 0, var = 0, ms = 0;

		for (uint32_t i = 0; i < n; i++) {
			mx = xr[i] > mx ? xr[i] : mx;
			mean += xr[i];
			ms += (double)xr[i] * xr[i];
		}
		mean /= n;
		ms /= n;
		for (uint32_t i = 0; i < n; i++) {
			sum += exp(xr[i] - mx);
			var += (xr[i] - mean) * (xr[i] - mean);
		}
		var /= n;
		for (uint32_t i = 0; i < n; i++) {
			size_t k = (size_t)r * n + i;
			double v, gv = g.host ? g.host[i] : 1, bv = b.host ? b.host[i] : 0;

			if (kind == 0)
				v = exp(xr[i] - mx) / sum;
			else if (kind == 5)
				v = xr[i] - mx - log(sum);
			else if (kind <= 2)
				v = (xr[i] - mean) / sqrt(var + 1e-5);
			else
				v = xr[i] / sqrt(ms + 1e-5);
			ref[k] = kind == 0 || kind == 5 ? v : v * gv + bv;
			/* Normalised values: scale 1 (times gamma, plus beta). */
			scale[k] = kind == 0 ? 1 : (fabs(v) + 1) * fabs(gv) + fabs(bv);
		}
	}
	snprintf(what, sizeof(what), "rownorm %d %ux%u %s->%s", kind, rows, n,
		 ops_dtype_name(din), ops_dtype_name(dout));
	bad += compare(what, &y, ref, scale, 0);
out:
	ops_plan_free(&plan);
	free(ref);
	free(scale);
	release(&x);
	release(&g);
	release(&b);
	release(&y);
	mem_top = 0;
	return bad;
}

TEST(softmax_and_norms_odd_shapes)
{
	static const uint32_t shapes[][2] = { { 1, 1 }, { 3, 63 }, { 100, 150 }, { 33, 65 },
					      { 4099, 7 }, { 2, 4099 } };

	for (int kind = 0; kind <= 5; kind++)
		for (unsigned s = 0; s < 6; s++) {
			spyre_dtype din = (spyre_dtype)((kind + s) % 3);
			spyre_dtype dout = (spyre_dtype)((kind + 2 * s + 1) % 3);

			EXPECT_EQ(check_rownorm(kind, shapes[s][0], shapes[s][1], din, dout), 0);
		}
}

TEST(norms_reject_bad_operands)
{
	struct ops_plan plan = { 0 };
	spyre_layout x = lay(SPYRE_DTYPE_FP16, 2, 4, 8, 0), g9 = lay(SPYRE_DTYPE_FP16, 1, 9, 0, 0);
	spyre_layout g = lay(SPYRE_DTYPE_FP16, 1, 8, 0, 0), g32 = lay(SPYRE_DTYPE_FP32, 1, 8, 0, 0);
	spyre_layout y = lay(SPYRE_DTYPE_FP16, 2, 8, 4, 0);

	EXPECT_EQ(ops_gen_norm(0, &x, &g9, NULL, 1e-5f, &x, &plan), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(ops_gen_norm(0, &x, &g32, NULL, 1e-5f, &x, &plan),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(ops_gen_norm(1, &x, &g, &g, 1e-5f, &x, &plan), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(ops_gen_norm(0, &x, NULL, &g, 1e-5f, &x, &plan), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(ops_gen_norm(0, &x, &g, NULL, NAN, &x, &plan), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(ops_gen_softmax(&x, &y, 0, &plan), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "8x4") != NULL);
	EXPECT_EQ(plan.num_launches, 0);
}

/* y = act(x w1) w2 in the given mode; mismatches (1 on failure). */
static unsigned check_mlp(uint32_t M, uint32_t K, uint32_t F, uint32_t N, spyre_dtype dt,
			  spyre_dtype dout, spyre_act act, enum ops_mlp_mode mode,
			  uint64_t *cycles)
{
	struct dt x = input(lay(dt, 2, M, K, 0), -1, 1), w1 = input(lay(dt, 2, K, F, 0), -1, 1);
	struct dt w2 = input(lay(dt, 2, F, N, 0), -1, 1), y = output(lay(dout, 2, M, N, 0));
	struct dt *ops[4] = { &x, &w1, &w2, &y };
	struct ops_plan plan = { 0 };
	double *ref = malloc((size_t)M * N * sizeof(double));
	double *scale = malloc((size_t)M * N * sizeof(double));
	double *h = malloc((size_t)F * sizeof(double)), *hs = malloc((size_t)F * sizeof(double));
	unsigned bad = 1;
	char what[96];

	if (ops_gen_mlp(&x.l, &w1.l, act, &w2.l, &y.l, mode, &plan)) {
		printf("  # generate: %s\n", spyre_last_error_detail());
		goto out;
	}
	if (run_plan(&plan, ops, 4))
		goto out;
	*cycles = last_stats.device_cycles;
	bad = fetch(&y);
	for (uint32_t i = 0; i < M; i++) {
		for (uint32_t f = 0; f < F; f++) {
			double s = 0, m = 0;
			float r;

			for (uint32_t k = 0; k < K; k++) {
				s += (double)x.host[(size_t)i * K + k] * w1.host[(size_t)k * F + f];
				m += fabs((double)x.host[(size_t)i * K + k] *
					  w1.host[(size_t)k * F + f]);
			}
			/* h is rounded to x's dtype on the card: the same here. */
			round_to(dt, act_ref(act, s), &r);
			h[f] = r;
			hs[f] = 1.2 * m * rel_tol(dt) + fabs(r) * rel_tol(dt);
		}
		for (uint32_t j = 0; j < N; j++) {
			double s = 0, m = 0, e = 0;

			for (uint32_t f = 0; f < F; f++) {
				s += h[f] * w2.host[(size_t)f * N + j];
				m += fabs(h[f] * w2.host[(size_t)f * N + j]);
				e += hs[f] * fabs(w2.host[(size_t)f * N + j]);
			}
			ref[(size_t)i * N + j] = s;
			/* The sum's rounding plus h's error carried through w2. */
			scale[(size_t)i * N + j] = m + e / rel_tol(dout);
		}
	}
	snprintf(what, sizeof(what), "mlp %ux%ux%ux%u %s->%s act %d mode %d", M, K, F, N,
		 ops_dtype_name(dt), ops_dtype_name(dout), (int)act, (int)mode);
	bad += compare(what, &y, ref, scale, 0);
	printf("  # %s: %u launch(es), %llu device cycles\n", what, plan.num_launches,
	       (unsigned long long)*cycles);
out:
	ops_plan_free(&plan);
	free(ref);
	free(scale);
	free(h);
	free(hs);
	release(&x);
	release(&w1);
	release(&w2);
	release(&y);
	mem_top = 0;
	return bad;
}

TEST(mlp_fused_and_unfused_on_the_engine)
{
	uint64_t fused = 0, unfused = 0;

	EXPECT_EQ(check_mlp(40, 100, 192, 70, SPYRE_DTYPE_FP16, SPYRE_DTYPE_FP16,
			    SPYRE_ACT_GELU, OPS_MLP_FUSED, &fused), 0);
	EXPECT_EQ(check_mlp(40, 100, 192, 70, SPYRE_DTYPE_FP16, SPYRE_DTYPE_FP16,
			    SPYRE_ACT_GELU, OPS_MLP_UNFUSED, &unfused), 0);
	EXPECT_EQ(check_mlp(3, 65, 130, 33, SPYRE_DTYPE_FP32, SPYRE_DTYPE_FP32, SPYRE_ACT_SILU,
			    OPS_MLP_AUTO, &unfused), 0);
	/* One row: fused on one core, no multicast. */
	EXPECT_EQ(check_mlp(1, 256, 1024, 256, SPYRE_DTYPE_FP16, SPYRE_DTYPE_FP16, SPYRE_ACT_SILU,
			    OPS_MLP_AUTO, &fused), 0);
	EXPECT_EQ(check_mlp(300, 64, 256, 64, SPYRE_DTYPE_BF16, SPYRE_DTYPE_FP32,
			    SPYRE_ACT_RELU, OPS_MLP_AUTO, &fused), 0);
	EXPECT_EQ(check_mlp(512, 256, 1024, 256, SPYRE_DTYPE_FP16, SPYRE_DTYPE_FP16,
			    SPYRE_ACT_SILU, OPS_MLP_FUSED, &fused), 0);
	EXPECT_EQ(check_mlp(512, 256, 1024, 256, SPYRE_DTYPE_FP16, SPYRE_DTYPE_FP16,
			    SPYRE_ACT_SILU, OPS_MLP_UNFUSED, &unfused), 0);
	printf("  # 512x256x1024x256 fp16: fused %llu cycles, unfused %llu\n",
	       (unsigned long long)fused, (unsigned long long)unfused);
	{
		struct ops_plan plan = { 0 };
		spyre_layout x = lay(SPYRE_DTYPE_FP16, 2, 4, 8, 0);
		spyre_layout w1 = lay(SPYRE_DTYPE_FP16, 2, 8, 100, 0);
		spyre_layout w2 = lay(SPYRE_DTYPE_FP16, 2, 100, 8, 0);
		spyre_layout w2b = lay(SPYRE_DTYPE_FP16, 2, 99, 8, 0);

		/* F = 100 is not a multiple of 64: no fused form. */
		EXPECT_EQ(ops_gen_mlp(&x, &w1, SPYRE_ACT_GELU, &w2, &x, OPS_MLP_FUSED, &plan),
			  SPYRE_ERROR_INVALID_ARGUMENT);
		EXPECT_EQ(ops_gen_mlp(&x, &w1, SPYRE_ACT_GELU, &w2b, &x, OPS_MLP_AUTO, &plan),
			  SPYRE_ERROR_INVALID_ARGUMENT);
		EXPECT_EQ(plan.num_launches, 0);
	}
}

/*
 * Fused with K in chunks: stage 1's weight tile of the whole K = 10000
 * (not a whole number of sticks either, so a tail chunk too) does not fit
 * a core, nor does stage 2's of F = 16384; asked for, the fused form cuts
 * K (one launch), AUTO keeps such shapes unfused.
 */
TEST(mlp_fused_chunks_k)
{
	/* The last: K = 40, under a stick, stays whole while F is cut. */
	static const uint32_t shapes[][4] = { { 8, 10000, 256, 64 }, { 4, 64, 16384, 72 },
					      { 2, 40, 16384, 64 } };
	uint64_t cycles = 0;

	for (unsigned i = 0; i < 3; i++) {
		const uint32_t *sh = shapes[i];
		spyre_layout x = lay(SPYRE_DTYPE_FP16, 2, sh[0], sh[1], 0);
		spyre_layout w1 = lay(SPYRE_DTYPE_FP16, 2, sh[1], sh[2], 0);
		spyre_layout w2 = lay(SPYRE_DTYPE_FP16, 2, sh[2], sh[3], 0);
		spyre_layout y = lay(SPYRE_DTYPE_FP16, 2, sh[0], sh[3], 0);
		struct ops_plan plan = { 0 };

		EXPECT_EQ(ops_gen_mlp(&x, &w1, SPYRE_ACT_SILU, &w2, &y, OPS_MLP_FUSED, &plan),
			  SPYRE_SUCCESS);
		EXPECT_EQ(plan.num_launches, 1);
		ops_plan_free(&plan);
		EXPECT_EQ(ops_gen_mlp(&x, &w1, SPYRE_ACT_SILU, &w2, &y, OPS_MLP_AUTO, &plan),
			  SPYRE_SUCCESS);
		EXPECT_EQ(plan.num_launches, 2);
		ops_plan_free(&plan);
		EXPECT_EQ(check_mlp(sh[0], sh[1], sh[2], sh[3], SPYRE_DTYPE_FP16, SPYRE_DTYPE_FP16,
				    SPYRE_ACT_SILU, OPS_MLP_FUSED, &cycles), 0);
	}
}

static unsigned check_transpose(uint32_t b, uint32_t r, uint32_t c, spyre_dtype dt)
{
	struct dt x = input(b > 1 ? lay(dt, 3, b, r, c) : lay(dt, 2, r, c, 0), -100, 100);
	struct dt y = output(b > 1 ? lay(dt, 3, b, c, r) : lay(dt, 2, c, r, 0));
	struct dt *ops[2] = { &x, &y };
	struct ops_plan plan = { 0 };
	unsigned bad = 1;

	if (ops_gen_transpose(&x.l, &y.l, &plan)) {
		printf("  # generate: %s\n", spyre_last_error_detail());
	} else if (!run_plan(&plan, ops, 2)) {
		bad = fetch(&y);
		for (uint32_t k = 0; k < b; k++)
			for (uint32_t i = 0; i < r; i++)
				for (uint32_t j = 0; j < c; j++) {
					float got = y.host[((size_t)k * c + j) * r + i];
					float want = x.host[((size_t)k * r + i) * c + j];

					if (memcmp(&got, &want, 4) && bad++ < 3)
						printf("  # transpose %ux%ux%u [%u,%u,%u]: %g != %g\n",
						       b, r, c, k, i, j, got, want);
				}
	}
	ops_plan_free(&plan);
	release(&x);
	release(&y);
	mem_top = 0;
	return bad;
}

/* Plans only: a lone matrix spreads over every core; a huge one splits
 * into launches that each load. */
TEST(transpose_spreads_and_splits)
{
	struct ops_plan plan = { 0 };
	spyre_layout x = lay(SPYRE_DTYPE_FP16, 2, 2048, 2048, 0);
	/* 64 matrices of 4096 x 65536: 2^34 elements, past one program's work. */
	spyre_layout hx = lay(SPYRE_DTYPE_FP16, 3, 64, 4096, 65536);
	spyre_layout hy = lay(SPYRE_DTYPE_FP16, 3, 64, 65536, 4096);
	struct spyre_engine_config cfg;
	unsigned loaded = 0;

	spyre_engine_config_default(&cfg);
	ASSERT_EQ(ops_gen_transpose(&x, &x, &plan), SPYRE_SUCCESS);
	ASSERT_EQ(plan.num_launches, 1);
	EXPECT_EQ(__builtin_popcount(plan.launches[0].image[SPK_HDR_CORE_MASK] |
				     plan.launches[0].image[SPK_HDR_CORE_MASK + 1] << 8 |
				     plan.launches[0].image[SPK_HDR_CORE_MASK + 2] << 16 |
				     (uint32_t)plan.launches[0].image[SPK_HDR_CORE_MASK + 3] << 24),
		  32);
	ops_plan_free(&plan);
	ASSERT_EQ(ops_gen_transpose(&hx, &hy, &plan), SPYRE_SUCCESS);
	printf("  # 64 x 4096 x 65536: %u launches\n", plan.num_launches);
	EXPECT_TRUE(plan.num_launches > 1);
	for (unsigned i = 0; i < plan.num_launches; i++) {
		struct spyre_engine_error err;
		struct spyre_program *p;

		if (spyre_program_load(&cfg, plan.launches[i].image, plan.launches[i].bytes, &p,
				       &err) == SPYRE_ENGINE_OK) {
			spyre_program_free(p);
			loaded++;
		} else if (i == 0) {
			printf("  # launch 0: %s\n", err.detail);
		}
	}
	EXPECT_EQ(loaded, plan.num_launches);
	ops_plan_free(&plan);
}

TEST(transpose_odd_shapes_exact)
{
	static const uint32_t shapes[][3] = { { 1, 1, 1 }, { 1, 1, 100 }, { 1, 100, 150 },
					      { 5, 100, 150 }, { 1, 64, 64 }, { 3, 65, 63 },
					      { 40, 7, 130 }, { 1, 3000, 65 } };

	for (unsigned s = 0; s < 8; s++)
		EXPECT_EQ(check_transpose(shapes[s][0], shapes[s][1], shapes[s][2],
					  (spyre_dtype)(s % 3)), 0);
	{
		struct ops_plan plan = { 0 };
		spyre_layout x = lay(SPYRE_DTYPE_FP16, 2, 4, 8, 0);
		spyre_layout y32 = lay(SPYRE_DTYPE_FP32, 2, 8, 4, 0);

		EXPECT_EQ(ops_gen_transpose(&x, &x, &plan), SPYRE_ERROR_INVALID_ARGUMENT);
		EXPECT_EQ(ops_gen_transpose(&x, &y32, &plan), SPYRE_ERROR_INVALID_ARGUMENT);
		EXPECT_EQ(plan.num_launches, 0);
	}
}

/*
 * Any permutation: y's dim i is x's dim perm[i]; y in @ydt (x's values
 * rounded to it, NaN stays NaN).  Exact against a plain index loop.
 */
static unsigned check_permute_to(uint32_t ndim, const uint32_t *xs, const uint32_t *perm,
				 spyre_dtype dt, spyre_dtype ydt)
{
	uint32_t ys[4], xst[4] = { 0 }, yst[4] = { 0 };
	spyre_layout xl, yl;
	struct dt x, y, *ops[2] = { &x, &y };
	struct ops_plan plan = { 0 };
	uint64_t n = 1;
	unsigned bad = 1;

	for (uint32_t i = 0; i < ndim; i++) {
		ys[i] = xs[perm[i]];
		n *= xs[i];
	}
	spyre_tensor_layout(dt, ndim, xs, &xl);
	spyre_tensor_layout(ydt, ndim, ys, &yl);
	x = input(xl, -50, 50);
	y = output(yl);
	xst[ndim - 1] = yst[ndim - 1] = 1;
	for (int i = (int)ndim - 2; i >= 0; i--) {
		xst[i] = xst[i + 1] * xs[i + 1];
		yst[i] = yst[i + 1] * ys[i + 1];
	}
	if (ops_gen_permute(&x.l, perm, &y.l, &plan)) {
		printf("  # generate: %s\n", spyre_last_error_detail());
	} else if (!run_plan(&plan, ops, 2)) {
		bad = fetch(&y);
		for (uint64_t e = 0; e < n; e++) {
			uint64_t xi = 0, rest = e;
			float want;

			for (uint32_t i = 0; i < ndim; i++) {
				xi += rest / yst[i] * xst[perm[i]];
				rest %= yst[i];
			}
			round_to(ydt, x.host[xi], &want);
			if (memcmp(&y.host[e], &want, 4) && bad++ < 3)
				printf("  # permute: y[%llu] %g != x[%llu] %g\n", (unsigned long long)e,
				       y.host[e], (unsigned long long)xi, want);
		}
	}
	if (bad)
		printf("  # ... shape %u dims, perm %u %u %u %u, %s -> %s, %u launches\n", ndim,
		       perm[0], ndim > 1 ? perm[1] : 0, ndim > 2 ? perm[2] : 0,
		       ndim > 3 ? perm[3] : 0, ops_dtype_name(dt), ops_dtype_name(ydt),
		       plan.num_launches);
	ops_plan_free(&plan);
	release(&x);
	release(&y);
	mem_top = 0;
	return bad;
}

/* Every permutation of 2..4 dims that moves the last dim, every dtype, and
 * each dtype conversion on a 3-dim one. */
TEST(permute_moving_the_last_dim_exact)
{
	static const uint32_t shapes[5][4] = { { 0 }, { 0 }, { 70, 45 }, { 5, 33, 70 },
					       { 3, 4, 33, 65 } };
	static const uint32_t p3[3] = { 2, 0, 1 };
	unsigned runs = 0, failed = 0;

	for (uint32_t nd = 2; nd <= 4; nd++) {
		uint32_t idx[4] = { 0, 1, 2, 3 }, total = 1;

		for (uint32_t i = 2; i <= nd; i++)
			total *= i;
		/* Permutations in lexicographic order (next_permutation). */
		for (uint32_t c = 0; c < total; c++) {
			if (idx[nd - 1] != nd - 1)
				for (int dt = 0; dt < 3; dt++, runs++)
					failed += check_permute_to(nd, shapes[nd], idx, (spyre_dtype)dt,
								   (spyre_dtype)dt) != 0;
			int i = (int)nd - 2;

			while (i >= 0 && idx[i] > idx[i + 1])
				i--;
			if (i < 0)
				break;
			int j = (int)nd - 1;

			while (idx[j] < idx[i])
				j--;
			uint32_t t = idx[i];

			idx[i] = idx[j];
			idx[j] = t;
			for (int l = i + 1, r = (int)nd - 1; l < r; l++, r--) {
				t = idx[l];
				idx[l] = idx[r];
				idx[r] = t;
			}
		}
	}
	for (int dt = 0; dt < 3; dt++)
		for (int yd = 0; yd < 3; yd++, runs++)
			if (yd != dt)
				failed += check_permute_to(3, shapes[3], p3, (spyre_dtype)dt,
							   (spyre_dtype)yd) != 0;
	printf("  # %u permutations, %u failed\n", runs, failed);
	EXPECT_EQ(failed, 0);
	EXPECT_EQ(runs, (1 + 4 + 18) * 3 + 9);
}

/* Permutations keeping the last dim: y's dim i is x's dim perm[i]. */
static unsigned check_permute(uint32_t ndim, const uint32_t *xs, const uint32_t *perm,
			      spyre_dtype dt)
{
	uint32_t ys[4], xst[4] = { 0 }, yst[4] = { 0 };
	spyre_layout xl, yl;
	struct dt x, y, *ops[2] = { &x, &y };
	struct ops_plan plan = { 0 };
	uint64_t n = 1;
	unsigned bad = 1;

	for (uint32_t i = 0; i < ndim; i++) {
		ys[i] = xs[perm[i]];
		n *= xs[i];
	}
	spyre_tensor_layout(dt, ndim, xs, &xl);
	spyre_tensor_layout(dt, ndim, ys, &yl);
	x = input(xl, -50, 50);
	y = output(yl);
	/* Dense element strides of the host arrays. */
	xst[ndim - 1] = yst[ndim - 1] = 1;
	for (int i = (int)ndim - 2; i >= 0; i--) {
		xst[i] = xst[i + 1] * xs[i + 1];
		yst[i] = yst[i + 1] * ys[i + 1];
	}
	if (ops_gen_permute(&x.l, perm, &y.l, &plan)) {
		printf("  # generate: %s\n", spyre_last_error_detail());
	} else if (!run_plan(&plan, ops, 2)) {
		bad = fetch(&y);
		for (uint64_t e = 0; e < n; e++) {
			uint64_t xi = 0, rest = e;

			/* e indexes y; its index in dim i is x's index in dim perm[i]. */
			for (uint32_t i = 0; i < ndim; i++) {
				xi += rest / yst[i] * xst[perm[i]];
				rest %= yst[i];
			}
			if (memcmp(&y.host[e], &x.host[xi], 4) && bad++ < 3)
				printf("  # permute: y[%llu] %g != x[%llu] %g\n", (unsigned long long)e,
				       y.host[e], (unsigned long long)xi, x.host[xi]);
		}
	}
	ops_plan_free(&plan);
	release(&x);
	release(&y);
	mem_top = 0;
	return bad;
}

TEST(permute_keeps_sticks_exact)
{
	static const uint32_t s3[3] = { 5, 100, 150 }, p3[3] = { 1, 0, 2 };
	static const uint32_t s4[4] = { 3, 7, 40, 65 }, p4[4] = { 2, 0, 1, 3 };
	static const uint32_t s4b[4] = { 2, 33, 4, 64 }, p4b[4] = { 1, 2, 0, 3 };
	static const uint32_t s1[1] = { 77 }, p1[1] = { 0 };
	static const uint32_t bad_last[3] = { 0, 2, 1 }, dup[3] = { 0, 0, 2 };
	struct ops_plan plan = { 0 };
	spyre_layout l;

	EXPECT_EQ(check_permute(3, s3, p3, SPYRE_DTYPE_FP16), 0);
	EXPECT_EQ(check_permute(4, s4, p4, SPYRE_DTYPE_FP32), 0);
	EXPECT_EQ(check_permute(4, s4b, p4b, SPYRE_DTYPE_BF16), 0);
	EXPECT_EQ(check_permute(1, s1, p1, SPYRE_DTYPE_FP16), 0);
	spyre_tensor_layout(SPYRE_DTYPE_FP16, 3, s3, &l);
	EXPECT_EQ(ops_gen_permute(&l, bad_last, &l, &plan), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "y's dim 1 is 100") != NULL);
	EXPECT_EQ(ops_gen_permute(&l, dup, &l, &plan), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(ops_gen_permute(&l, p3, &l, &plan), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(plan.num_launches, 0);
}

TAP_MAIN()
