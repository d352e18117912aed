// SPDX-License-Identifier: MIT
/*
 * libspyre's op library on the emulated card (guest): every op call against
 * a double-precision CPU reference within docs/engine.md's tolerances
 * (|got - ref| <= rel * (|ref| + scale) + tiny; rel 1e-5 fp32, 1e-3 fp16,
 * 8e-3 bf16), output padding written as 0, misuse returning
 * INVALID_ARGUMENT with a detail, ops captured into a graph and replayed,
 * and several threads sharing the program cache.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spyre/spyre.h"
#include "spyre/spyre_ops.h"
#include "tap.h"

TAP_MAIN()

static spyre_device *dev;
static spyre_stream *stream;

struct vt {
	spyre_tensor t;
	float *host;		/* dense values as on the card */
};

static uint32_t rng = 99;

static float frand(void)
{
	rng = rng * 1664525u + 1013904223u;
	return (float)((rng >> 8) & 0xffffff) / (float)(1 << 23) - 1.0f;
}

static int setup(void)
{
	if (dev)
		return 0;
	if (spyre_device_open(0, &dev) || spyre_stream_create(dev, 1, &stream)) {
		printf("  # setup: %s\n", spyre_last_error_detail());
		return -1;
	}
	return 0;
}

static spyre_layout lay(spyre_dtype dt, uint32_t ndim, uint32_t d0, uint32_t d1, uint32_t d2)
{
	uint32_t shape[3] = { d0, d1, d2 };
	spyre_layout l;

	spyre_tensor_layout(dt, ndim, shape, &l);
	return l;
}

static uint32_t last_dim(const spyre_layout *l)
{
	return l->shape[l->ndim - 1];
}

static uint64_t elems(const spyre_layout *l)
{
	return l->rows * l->shape[l->ndim - 1];
}

/* A device tensor; inputs get random values in [lo, hi), outputs NaN. */
static int vt_make(struct vt *v, spyre_layout l, int input, float lo, float hi)
{
	uint8_t *packed = malloc(l.bytes);
	float *src = malloc(elems(&l) * sizeof(float));
	spyre_buffer *buf;
	int rc = -1;

	memset(v, 0, sizeof(*v));
	v->host = malloc(elems(&l) * sizeof(float));
	if (!packed || !src || !v->host || spyre_buffer_alloc(dev, l.bytes, 0, &buf))
		goto out;
	if (spyre_tensor_init(&v->t, buf, 0, &l))
		goto out;
	if (input) {
		for (uint64_t i = 0; i < elems(&l); i++)
			src[i] = lo + (frand() + 1) * 0.5f * (hi - lo);
		spyre_tensor_pack(&l, src, SPYRE_DTYPE_FP32, packed);
		spyre_tensor_unpack(&l, packed, v->host, SPYRE_DTYPE_FP32);
		rc = spyre_memcpy_htod(buf, 0, packed, l.bytes) ? -1 : 0;
	} else {
		rc = spyre_memset64(buf, 0, ~0ull, l.bytes) ? -1 : 0;
	}
out:
	if (rc)
		printf("  # tensor setup: %s\n", spyre_last_error_detail());
	free(packed);
	free(src);
	return rc;
}

static void vt_free(struct vt *v)
{
	spyre_buffer_free(v->t.buf);
	free(v->host);
	memset(v, 0, sizeof(*v));
}

/* Copy back; count padding bytes that are not 0. */
static unsigned vt_fetch(struct vt *v)
{
	const spyre_layout *l = &v->t.layout;
	uint8_t *packed = malloc(l->bytes);
	uint64_t row = (uint64_t)l->row_sticks * 128, used = (uint64_t)last_dim(l) * l->elem_bytes;
	unsigned bad = 0;

	if (!packed || spyre_memcpy_dtoh(packed, v->t.buf, v->t.offset, l->bytes)) {
		free(packed);
		return 1;
	}
	spyre_tensor_unpack(l, packed, v->host, SPYRE_DTYPE_FP32);
	for (uint64_t r = 0; r < l->rows; r++)
		for (uint64_t b = used; b < row; b++)
			bad += packed[r * row + b] != 0;
	free(packed);
	if (bad)
		printf("  # %u padding bytes not 0\n", bad);
	return bad;
}

static double tol(spyre_dtype dt)
{
	return dt == SPYRE_DTYPE_FP32 ? 1e-5 : dt == SPYRE_DTYPE_FP16 ? 1e-3 : 8e-3;
}

/* got vs ref with per-element scale (or s0 if NULL); misses. */
static unsigned compare(const char *what, const struct vt *out, const double *ref,
			const double *scale, double s0)
{
	spyre_dtype dt = out->t.layout.dtype;
	double tiny = dt == SPYRE_DTYPE_FP32 ? 0x1p-149 : dt == SPYRE_DTYPE_FP16 ? 0x1p-24 : 0x1p-133;
	uint64_t n = elems(&out->t.layout);
	unsigned bad = 0;

	for (uint64_t i = 0; i < n; i++) {
		double lim = tol(dt) * (fabs(ref[i]) + (scale ? scale[i] : s0)) + tiny;

		if (!(fabs(out->host[i] - ref[i]) <= lim) && bad++ < 3)
			printf("  # %s [%llu]: got %.8g want %.8g\n", what, (unsigned long long)i,
			       out->host[i], ref[i]);
	}
	return bad;
}

static double act(spyre_act a, double x)
{
	return a == SPYRE_ACT_RELU ? (x > 0 ? x : 0) :
	       a == SPYRE_ACT_GELU ? 0.5 * x * erfc(-x / sqrt(2.0)) :
	       a == SPYRE_ACT_SILU ? x / (1 + exp(-x)) : x;
}

/* ref = act(a b), scale = sum |a b| (x 1.2 for the activation's slope). */
static void matmul_ref(const float *a, const float *b, uint32_t M, uint32_t K, uint32_t N,
		       spyre_act ac, double *ref, double *scale)
{
	for (uint32_t i = 0; i < M; i++)
		for (uint32_t j = 0; j < N; j++) {
			double s = 0, m = 0;

			for (uint32_t k = 0; k < K; k++) {
				s += (double)a[(size_t)i * K + k] * b[(size_t)k * N + j];
				m += fabs((double)a[(size_t)i * K + k] * b[(size_t)k * N + j]);
			}
			ref[(size_t)i * N + j] = act(ac, s);
			scale[(size_t)i * N + j] = 1.2 * m;
		}
}

static unsigned run_matmul(uint32_t M, uint32_t K, uint32_t N, spyre_dtype din,
			   spyre_dtype dout, spyre_act ac)
{
	struct vt a, b, c;
	double *ref = malloc((size_t)M * N * sizeof(double));
	double *scale = malloc((size_t)M * N * sizeof(double));
	unsigned bad = 1;

	if (vt_make(&a, lay(din, 2, M, K, 0), 1, -1, 1) || vt_make(&b, lay(din, 2, K, N, 0), 1, -1, 1) ||
	    vt_make(&c, lay(dout, 2, M, N, 0), 0, 0, 0))
		goto out;
	if (spyre_op_matmul(stream, &a.t, &b.t, ac, &c.t) || spyre_stream_synchronize(stream)) {
		printf("  # matmul: %s\n", spyre_last_error_detail());
		goto out;
	}
	bad = vt_fetch(&c);
	matmul_ref(a.host, b.host, M, K, N, ac, ref, scale);
	bad += compare("matmul", &c, ref, scale, 0);
out:
	vt_free(&a);
	vt_free(&b);
	vt_free(&c);
	free(ref);
	free(scale);
	return bad;
}

TEST(matmul_against_cpu)
{
	if (setup())
		SKIP("no device");
	EXPECT_EQ(run_matmul(100, 150, 70, SPYRE_DTYPE_FP16, SPYRE_DTYPE_FP32, SPYRE_ACT_NONE), 0);
	EXPECT_EQ(run_matmul(1, 300, 200, SPYRE_DTYPE_FP16, SPYRE_DTYPE_FP16, SPYRE_ACT_GELU), 0);
	EXPECT_EQ(run_matmul(65, 129, 63, SPYRE_DTYPE_FP32, SPYRE_DTYPE_FP32, SPYRE_ACT_RELU), 0);
	EXPECT_EQ(run_matmul(37, 64, 300, SPYRE_DTYPE_BF16, SPYRE_DTYPE_BF16, SPYRE_ACT_SILU), 0);
	/* K beyond one firing: k_steps chunks plus a remainder. */
	EXPECT_EQ(run_matmul(3, 9000, 70, SPYRE_DTYPE_FP32, SPYRE_DTYPE_FP32, SPYRE_ACT_NONE), 0);
}

TEST(eltwise_against_cpu)
{
	struct vt x, y, row, out;
	uint64_t n;
	double *ref;

	if (setup())
		SKIP("no device");
	ASSERT_EQ(vt_make(&x, lay(SPYRE_DTYPE_FP16, 3, 5, 100, 150), 1, -3, 3), 0);
	ASSERT_EQ(vt_make(&y, lay(SPYRE_DTYPE_FP16, 3, 5, 100, 150), 1, -3, 3), 0);
	ASSERT_EQ(vt_make(&row, lay(SPYRE_DTYPE_FP16, 1, 150, 0, 0), 1, -3, 3), 0);
	ASSERT_EQ(vt_make(&out, lay(SPYRE_DTYPE_FP32, 3, 5, 100, 150), 0, 0, 0), 0);
	n = elems(&x.t.layout);
	ref = malloc(n * sizeof(double));
	/* out = x * y; then out = x + row (broadcast); then gelu(x); then 0.5 x. */
	for (int step = 0; step < 4; step++) {
		spyre_status st;

		if (step == 0)
			st = spyre_op_binary(stream, SPYRE_OP_MUL, &x.t, &y.t, &out.t);
		else if (step == 1)
			st = spyre_op_binary(stream, SPYRE_OP_ADD, &x.t, &row.t, &out.t);
		else if (step == 2)
			st = spyre_op_unary(stream, SPYRE_OP_GELU, &x.t, 0, &out.t);
		else
			st = spyre_op_unary(stream, SPYRE_OP_SCALE, &x.t, 0.5f, &out.t);
		EXPECT_EQ(st, SPYRE_SUCCESS);
		EXPECT_EQ(spyre_stream_synchronize(stream), SPYRE_SUCCESS);
		EXPECT_EQ(vt_fetch(&out), 0);
		for (uint64_t i = 0; i < n; i++)
			ref[i] = step == 0 ? (double)x.host[i] * y.host[i] :
				 step == 1 ? (double)x.host[i] + row.host[i % 150] :
				 step == 2 ? act(SPYRE_ACT_GELU, x.host[i]) : 0.5 * x.host[i];
		EXPECT_EQ(compare("eltwise", &out, ref, NULL, 0), 0);
	}
	/* In place: x = relu(x). */
	EXPECT_EQ(spyre_op_unary(stream, SPYRE_OP_RELU, &x.t, 0, &x.t), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_stream_synchronize(stream), SPYRE_SUCCESS);
	for (uint64_t i = 0; i < n; i++)
		ref[i] = x.host[i] > 0 ? x.host[i] : 0;
	EXPECT_EQ(vt_fetch(&x), 0);
	EXPECT_EQ(compare("relu in place", &x, ref, NULL, 0), 0);
	free(ref);
	vt_free(&x);
	vt_free(&y);
	vt_free(&row);
	vt_free(&out);
}

TEST(softmax_layernorm_rmsnorm_log_softmax_against_cpu)
{
	const uint32_t R = 33, N = 150;
	struct vt x, g, b, y;
	double *ref = malloc((size_t)R * N * sizeof(double));
	double *scale = malloc((size_t)R * N * sizeof(double));

	if (setup())
		SKIP("no device");
	ASSERT_EQ(vt_make(&x, lay(SPYRE_DTYPE_BF16, 2, R, N, 0), 1, -3, 3), 0);
	ASSERT_EQ(vt_make(&g, lay(SPYRE_DTYPE_BF16, 1, N, 0, 0), 1, 0.5f, 1.5f), 0);
	ASSERT_EQ(vt_make(&b, lay(SPYRE_DTYPE_BF16, 1, N, 0, 0), 1, -1, 1), 0);
	ASSERT_EQ(vt_make(&y, lay(SPYRE_DTYPE_FP16, 2, R, N, 0), 0, 0, 0), 0);
	for (int kind = 0; kind < 4; kind++) {
		spyre_status st = kind == 0 ? spyre_op_softmax(stream, &x.t, &y.t) :
				  kind == 1 ? spyre_op_layernorm(stream, &x.t, &g.t, &b.t, 1e-5f, &y.t) :
				  kind == 2 ? spyre_op_rmsnorm(stream, &x.t, &g.t, 1e-5f, &y.t) :
					      spyre_op_log_softmax(stream, &x.t, &y.t);

		EXPECT_EQ(st, SPYRE_SUCCESS);
		EXPECT_EQ(spyre_stream_synchronize(stream), SPYRE_SUCCESS);
		EXPECT_EQ(vt_fetch(&y), 0);
		for (uint32_t r = 0; r < R; r++) {
			const float *xr = x.host + (size_t)r * N;
			double mx = -INFINITY, sum = 0, mean = 0, var = 0, ms = 0;

			for (uint32_t i = 0; i < N; i++) {
				mx = xr[i] > mx ? xr[i] : mx;
				mean += xr[i] / (double)N;
				ms += (double)xr[i] * xr[i] / N;
			}
			for (uint32_t i = 0; i < N; i++) {
				sum += exp(xr[i] - mx);
				var += (xr[i] - mean) * (xr[i] - mean) / N;
			}
			for (uint32_t i = 0; i < N; i++) {
				size_t k = (size_t)r * N + i;
				double v = kind == 0 ? exp(xr[i] - mx) / sum :
					   kind == 1 ? (xr[i] - mean) / sqrt(var + 1e-5) :
					   kind == 2 ? xr[i] / sqrt(ms + 1e-5) :
						       xr[i] - mx - log(sum);
				double gv = kind == 1 || kind == 2 ? g.host[i] : 1;
				double bv = kind == 1 ? b.host[i] : 0;

				ref[k] = v * gv + bv;
				scale[k] = kind == 0 ? 1 :
					   kind == 3 ? fabs(xr[i]) + fabs(mx) + fabs(log(sum)) :
						       (fabs(v) + 1) * fabs(gv) + fabs(bv);
			}
		}
		EXPECT_EQ(compare(kind == 0 ? "softmax" : kind == 1 ? "layernorm" :
				  kind == 2 ? "rmsnorm" : "log_softmax", &y, ref,
				  scale, 0), 0);
	}
	free(ref);
	free(scale);
	vt_free(&x);
	vt_free(&g);
	vt_free(&b);
	vt_free(&y);
}

static unsigned run_mlp(uint32_t M, uint32_t K, uint32_t F, uint32_t N)
{
	struct vt x, w1, w2, y;
	double *h = malloc((size_t)M * F * sizeof(double)), *hs = malloc((size_t)M * F * sizeof(double));
	double *ref = malloc((size_t)M * N * sizeof(double)), *scale = malloc((size_t)M * N * sizeof(double));
	float *hf = malloc((size_t)M * F * sizeof(float));
	unsigned bad = 1;

	if (vt_make(&x, lay(SPYRE_DTYPE_FP16, 2, M, K, 0), 1, -1, 1) ||
	    vt_make(&w1, lay(SPYRE_DTYPE_FP16, 2, K, F, 0), 1, -1, 1) ||
	    vt_make(&w2, lay(SPYRE_DTYPE_FP16, 2, F, N, 0), 1, -1, 1) ||
	    vt_make(&y, lay(SPYRE_DTYPE_FP32, 2, M, N, 0), 0, 0, 0))
		goto out;
	if (spyre_op_mlp(stream, &x.t, &w1.t, SPYRE_ACT_SILU, &w2.t, &y.t) ||
	    spyre_stream_synchronize(stream)) {
		printf("  # mlp: %s\n", spyre_last_error_detail());
		goto out;
	}
	bad = vt_fetch(&y);
	matmul_ref(x.host, w1.host, M, K, F, SPYRE_ACT_SILU, h, hs);
	/* h is rounded to fp16 on the card, as here. */
	for (size_t i = 0; i < (size_t)M * F; i++) {
		spyre_layout one = lay(SPYRE_DTYPE_FP16, 1, 1, 0, 0);
		uint8_t st[128];
		float f = (float)h[i];

		spyre_tensor_pack(&one, &f, SPYRE_DTYPE_FP32, st);
		spyre_tensor_unpack(&one, st, &hf[i], SPYRE_DTYPE_FP32);
		hs[i] = hs[i] * 1e-3 + fabs(hf[i]) * 1e-3;
	}
	for (uint32_t i = 0; i < M; i++)
		for (uint32_t j = 0; j < N; j++) {
			double s = 0, m = 0, e = 0;

			for (uint32_t f = 0; f < F; f++) {
				double w = w2.host[(size_t)f * N + j];

				s += hf[(size_t)i * F + f] * w;
				m += fabs(hf[(size_t)i * F + f] * w);
				e += hs[(size_t)i * F + f] * fabs(w);
			}
			ref[(size_t)i * N + j] = s;
			scale[(size_t)i * N + j] = m + e / 1e-5;
		}
	bad += compare("mlp", &y, ref, scale, 0);
out:
	vt_free(&x);
	vt_free(&w1);
	vt_free(&w2);
	vt_free(&y);
	free(h);
	free(hs);
	free(hf);
	free(ref);
	free(scale);
	return bad;
}

TEST(mlp_against_cpu)
{
	if (setup())
		SKIP("no device");
	EXPECT_EQ(run_mlp(3, 65, 130, 33), 0);		/* unfused */
	EXPECT_EQ(run_mlp(1, 256, 1024, 256), 0);	/* fused, one core */
	EXPECT_EQ(run_mlp(300, 64, 256, 70), 0);	/* fused, weights multicast */
}

/*
 * Two streams on different hardware queues (so their work overlaps on the
 * card) run the same unfused MLP (one cached plan, one device scratch
 * buffer for h) on different inputs, several times each, interleaved.
 * Both results must equal what each gets alone, bit for bit.
 */
TEST(two_streams_share_one_mlp_plan)
{
	spyre_stream *s2 = NULL;
	struct vt x[2], w1, w2, y[2];
	float *alone[2] = { NULL, NULL };
	const uint32_t M = 40, K = 96, F = 1000, N = 72;	/* F % 64 != 0: unfused */
	unsigned bad = 0;

	if (setup())
		SKIP("no device");
	ASSERT_EQ(spyre_stream_create(dev, 3, &s2), SPYRE_SUCCESS);
	ASSERT_EQ(vt_make(&x[0], lay(SPYRE_DTYPE_FP16, 2, M, K, 0), 1, -1, 1), 0);
	ASSERT_EQ(vt_make(&x[1], lay(SPYRE_DTYPE_FP16, 2, M, K, 0), 1, -1, 1), 0);
	ASSERT_EQ(vt_make(&w1, lay(SPYRE_DTYPE_FP16, 2, K, F, 0), 1, -1, 1), 0);
	ASSERT_EQ(vt_make(&w2, lay(SPYRE_DTYPE_FP16, 2, F, N, 0), 1, -1, 1), 0);
	ASSERT_EQ(vt_make(&y[0], lay(SPYRE_DTYPE_FP32, 2, M, N, 0), 0, 0, 0), 0);
	ASSERT_EQ(vt_make(&y[1], lay(SPYRE_DTYPE_FP32, 2, M, N, 0), 0, 0, 0), 0);
	for (int i = 0; i < 2; i++) {
		alone[i] = malloc((size_t)M * N * sizeof(float));
		ASSERT_TRUE(alone[i] != NULL);
		ASSERT_EQ(spyre_op_mlp(stream, &x[i].t, &w1.t, SPYRE_ACT_GELU, &w2.t, &y[i].t),
			  SPYRE_SUCCESS);
		ASSERT_EQ(spyre_stream_synchronize(stream), SPYRE_SUCCESS);
		ASSERT_EQ(vt_fetch(&y[i]), 0);
		memcpy(alone[i], y[i].host, (size_t)M * N * sizeof(float));
	}
	/* x[0] and x[1] differ, so their results do. */
	EXPECT_TRUE(memcmp(alone[0], alone[1], (size_t)M * N * sizeof(float)) != 0);
	for (int round = 0; round < 4; round++) {
		ASSERT_EQ(spyre_memset64(y[0].t.buf, 0, ~0ull, y[0].t.layout.bytes), SPYRE_SUCCESS);
		ASSERT_EQ(spyre_memset64(y[1].t.buf, 0, ~0ull, y[1].t.layout.bytes), SPYRE_SUCCESS);
		for (int rep = 0; rep < 3; rep++) {
			ASSERT_EQ(spyre_op_mlp(stream, &x[0].t, &w1.t, SPYRE_ACT_GELU, &w2.t,
					       &y[0].t), SPYRE_SUCCESS);
			ASSERT_EQ(spyre_op_mlp(s2, &x[1].t, &w1.t, SPYRE_ACT_GELU, &w2.t, &y[1].t),
				  SPYRE_SUCCESS);
		}
		ASSERT_EQ(spyre_stream_synchronize(stream), SPYRE_SUCCESS);
		ASSERT_EQ(spyre_stream_synchronize(s2), SPYRE_SUCCESS);
		for (int i = 0; i < 2; i++) {
			unsigned diff = 0;

			bad += vt_fetch(&y[i]);
			for (size_t e = 0; e < (size_t)M * N; e++)
				diff += memcmp(&y[i].host[e], &alone[i][e], sizeof(float)) != 0;
			if (diff)
				printf("  # round %d, stream %d: %u of %u values differ from its "
				       "run alone\n", round, i, diff, M * N);
			bad += diff;
		}
	}
	EXPECT_EQ(bad, 0);
	for (int i = 0; i < 2; i++) {
		vt_free(&x[i]);
		vt_free(&y[i]);
		free(alone[i]);
	}
	vt_free(&w1);
	vt_free(&w2);
	EXPECT_EQ(spyre_stream_destroy(s2), SPYRE_SUCCESS);
}

static uint64_t busy_sum(const spyre_launch_profile *p)
{
	uint64_t sum = 0;

	for (int c = 0; c < SPYRE_MAX_CORES; c++)
		sum += p->core_busy_cycles[c];
	return sum;
}

/*
 * Op profiles add up the op's launches: a matmul's one launch is the
 * kernel's own profile; the unfused MLP's two matmuls sum to its; the
 * call after is not profiled; a captured call writes nothing.
 */
TEST(op_profiles_add_up_their_launches)
{
	const uint32_t M = 24, K = 96, F = 200, N = 40;	/* F % 64 != 0: unfused MLP */
	struct vt x, w1, w2, h, y;
	spyre_op_profile mm1, mm2, mlp, again, cap;
	spyre_graph *g = NULL;

	if (setup())
		SKIP("no device");
	ASSERT_EQ(vt_make(&x, lay(SPYRE_DTYPE_FP16, 2, M, K, 0), 1, -1, 1), 0);
	ASSERT_EQ(vt_make(&w1, lay(SPYRE_DTYPE_FP16, 2, K, F, 0), 1, -1, 1), 0);
	ASSERT_EQ(vt_make(&w2, lay(SPYRE_DTYPE_FP16, 2, F, N, 0), 1, -1, 1), 0);
	ASSERT_EQ(vt_make(&h, lay(SPYRE_DTYPE_FP16, 2, M, F, 0), 0, 0, 0), 0);
	ASSERT_EQ(vt_make(&y, lay(SPYRE_DTYPE_FP32, 2, M, N, 0), 0, 0, 0), 0);
	memset(&mm1, 0xa5, sizeof(mm1));
	memset(&mm2, 0xa5, sizeof(mm2));
	memset(&mlp, 0xa5, sizeof(mlp));
	memset(&again, 0xa5, sizeof(again));
	memset(&cap, 0xa5, sizeof(cap));
	/* The MLP's two halves by hand, each profiled, then the MLP itself. */
	ASSERT_EQ(spyre_ops_profile_next(&mm1), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_op_matmul(stream, &x.t, &w1.t, SPYRE_ACT_SILU, &h.t), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_ops_profile_next(&mm2), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_op_matmul(stream, &h.t, &w2.t, SPYRE_ACT_NONE, &y.t), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_ops_profile_next(&mlp), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_op_mlp(stream, &x.t, &w1.t, SPYRE_ACT_SILU, &w2.t, &y.t), SPYRE_SUCCESS);
	/* One call only: this one is not profiled into anything. */
	ASSERT_EQ(spyre_op_mlp(stream, &x.t, &w1.t, SPYRE_ACT_SILU, &w2.t, &y.t), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_synchronize(stream), SPYRE_SUCCESS);
	printf("  # matmul 1: %u launches, %llu ns, %llu MACs, %llu B read; matmul 2: %u, %llu ns; "
	       "mlp: %u, %llu ns, %llu MACs, %llu B read, %llu B written, %llu busy cycles\n",
	       mm1.launches, (unsigned long long)mm1.total.device_ns,
	       (unsigned long long)mm1.total.macs, (unsigned long long)mm1.total.dram_bytes_read,
	       mm2.launches, (unsigned long long)mm2.total.device_ns, mlp.launches,
	       (unsigned long long)mlp.total.device_ns, (unsigned long long)mlp.total.macs,
	       (unsigned long long)mlp.total.dram_bytes_read,
	       (unsigned long long)mlp.total.dram_bytes_written,
	       (unsigned long long)busy_sum(&mlp.total));
	EXPECT_TRUE(mm1.launches >= 1);
	EXPECT_TRUE(mm2.launches >= 1);
	EXPECT_EQ(mlp.launches, mm1.launches + mm2.launches);
	/* Same programs, same data: the sums are the halves' sums. */
	EXPECT_EQ(mlp.total.macs, mm1.total.macs + mm2.total.macs);
	EXPECT_TRUE(mm1.total.macs >= (uint64_t)M * K * F);
	EXPECT_TRUE(mm2.total.macs >= (uint64_t)M * F * N);
	EXPECT_EQ(mlp.total.dram_bytes_read, mm1.total.dram_bytes_read + mm2.total.dram_bytes_read);
	EXPECT_EQ(mlp.total.dram_bytes_written,
		  mm1.total.dram_bytes_written + mm2.total.dram_bytes_written);
	EXPECT_TRUE(mlp.total.dram_bytes_read >= x.t.layout.bytes + w1.t.layout.bytes +
						 w2.t.layout.bytes);
	EXPECT_TRUE(mlp.total.dram_bytes_written >= y.t.layout.bytes);
	EXPECT_EQ(mlp.total.device_cycles, mm1.total.device_cycles + mm2.total.device_cycles);
	EXPECT_EQ(busy_sum(&mlp.total), busy_sum(&mm1.total) + busy_sum(&mm2.total));
	EXPECT_TRUE(busy_sum(&mlp.total) > 0);
	EXPECT_TRUE(mlp.total.device_ns > 0);
	EXPECT_TRUE(mlp.total.end_ns > mlp.total.start_ns);
	EXPECT_TRUE(mlp.total.end_ns - mlp.total.start_ns >= mlp.total.device_ns);
	EXPECT_TRUE(mm1.total.end_ns <= mm2.total.start_ns);
	EXPECT_TRUE(mm2.total.end_ns <= mlp.total.start_ns);
	/* Not asked for: untouched. */
	for (size_t i = 0; i < sizeof(again); i++)
		if (((uint8_t *)&again)[i] != 0xa5) {
			EXPECT_TRUE(!"an unrequested profile was written");
			break;
		}
	/* Captured into a graph: nothing written (the exec has the launches). */
	ASSERT_EQ(spyre_stream_begin_capture(stream), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_ops_profile_next(&cap), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_op_matmul(stream, &x.t, &w1.t, SPYRE_ACT_SILU, &h.t), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_end_capture(stream, &g), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_graph_destroy(g), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_synchronize(stream), SPYRE_SUCCESS);
	EXPECT_EQ(((uint8_t *)&cap)[0], 0xa5);
	/* A call that fails to queue takes the request and writes nothing. */
	ASSERT_EQ(spyre_ops_profile_next(&cap), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_op_matmul(stream, &x.t, &x.t, SPYRE_ACT_NONE, &h.t),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(spyre_op_matmul(stream, &x.t, &w1.t, SPYRE_ACT_SILU, &h.t), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_synchronize(stream), SPYRE_SUCCESS);
	EXPECT_EQ(((uint8_t *)&cap)[0], 0xa5);
	vt_free(&x);
	vt_free(&w1);
	vt_free(&w2);
	vt_free(&h);
	vt_free(&y);
}

/* A thread clearing the whole cache over and over while others run ops. */
static _Atomic int clearing;

static void *clear_main(void *arg)
{
	(void)arg;
	while (clearing)
		spyre_ops_cache_clear(NULL);
	return NULL;
}

/*
 * The cache's programs and scratch belong to their device: closing it drops
 * them (a new open of the card, often at the same address, builds its
 * own), and clearing the cache from another thread while calls run never
 * frees an entry under a call.
 */
TEST(op_cache_follows_its_device)
{
	pthread_t clearer;
	unsigned bad = 0;

	if (setup())
		SKIP("no device");
	/* The suite's device goes; three opens of the card in turn. */
	spyre_stream_destroy(stream);
	spyre_device_close(dev);
	stream = NULL;
	dev = NULL;
	for (int round = 0; round < 3; round++) {
		ASSERT_EQ(setup(), 0);
		bad += run_mlp(3, 65, 130, 33);		/* unfused: a scratch buffer */
		bad += run_matmul(17, 40, 9, SPYRE_DTYPE_FP32, SPYRE_DTYPE_FP32, SPYRE_ACT_NONE);
		if (round == 2) {
			clearing = 1;
			ASSERT_EQ(pthread_create(&clearer, NULL, clear_main, NULL), 0);
			for (int i = 0; i < 4; i++)
				bad += run_mlp(3, 65, 130, 33);
			clearing = 0;
			pthread_join(clearer, NULL);
		}
		EXPECT_EQ(spyre_stream_destroy(stream), SPYRE_SUCCESS);
		EXPECT_EQ(spyre_device_close(dev), SPYRE_SUCCESS);
		stream = NULL;
		dev = NULL;
	}
	EXPECT_EQ(bad, 0);
}

TEST(transpose_exact)
{
	struct vt x, y;

	if (setup())
		SKIP("no device");
	ASSERT_EQ(vt_make(&x, lay(SPYRE_DTYPE_FP32, 3, 5, 100, 150), 1, -100, 100), 0);
	ASSERT_EQ(vt_make(&y, lay(SPYRE_DTYPE_FP32, 3, 5, 150, 100), 0, 0, 0), 0);
	EXPECT_EQ(spyre_op_transpose(stream, &x.t, &y.t), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_stream_synchronize(stream), SPYRE_SUCCESS);
	EXPECT_EQ(vt_fetch(&y), 0);
	{
		unsigned bad = 0;

		for (uint32_t b = 0; b < 5; b++)
			for (uint32_t i = 0; i < 100; i++)
				for (uint32_t j = 0; j < 150; j++)
					bad += y.host[((size_t)b * 150 + j) * 100 + i] !=
					       x.host[((size_t)b * 100 + i) * 150 + j];
		EXPECT_EQ(bad, 0);
	}
	vt_free(&x);
	vt_free(&y);
}

TEST(permute_exact)
{
	struct vt x, y;
	static const uint32_t perm[3] = { 1, 0, 2 };
	unsigned bad = 0;

	if (setup())
		SKIP("no device");
	ASSERT_EQ(vt_make(&x, lay(SPYRE_DTYPE_FP16, 3, 5, 100, 150), 1, -100, 100), 0);
	ASSERT_EQ(vt_make(&y, lay(SPYRE_DTYPE_FP16, 3, 100, 5, 150), 0, 0, 0), 0);
	EXPECT_EQ(spyre_op_permute(stream, &x.t, perm, &y.t), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_stream_synchronize(stream), SPYRE_SUCCESS);
	EXPECT_EQ(vt_fetch(&y), 0);
	for (uint32_t a = 0; a < 5; a++)
		for (uint32_t b = 0; b < 100; b++)
			for (uint32_t c = 0; c < 150; c++)
				bad += y.host[((size_t)b * 5 + a) * 150 + c] !=
				       x.host[((size_t)a * 100 + b) * 150 + c];
	EXPECT_EQ(bad, 0);
	vt_free(&x);
	vt_free(&y);
}

/* Permutations that move the last dim: copy, transpose and copy on the card. */
static unsigned run_permute4(const uint32_t *xs, const uint32_t *perm, spyre_dtype dt,
			     spyre_dtype ydt)
{
	uint32_t ys[4], xst[4], yst[4];
	uint64_t n = (uint64_t)xs[0] * xs[1] * xs[2] * xs[3];
	spyre_layout xl, yl;
	struct vt x, y;
	unsigned bad = 1;

	for (int i = 0; i < 4; i++)
		ys[i] = xs[perm[i]];
	spyre_tensor_layout(dt, 4, xs, &xl);
	spyre_tensor_layout(ydt, 4, ys, &yl);
	xst[3] = yst[3] = 1;
	for (int i = 2; i >= 0; i--) {
		xst[i] = xst[i + 1] * xs[i + 1];
		yst[i] = yst[i + 1] * ys[i + 1];
	}
	if (vt_make(&x, xl, 1, -100, 100) || vt_make(&y, yl, 0, 0, 0))
		goto out;
	if (spyre_op_permute(stream, &x.t, perm, &y.t) || spyre_stream_synchronize(stream)) {
		printf("  # permute: %s\n", spyre_last_error_detail());
		goto out;
	}
	bad = vt_fetch(&y);
	for (uint64_t e = 0; e < n; e++) {
		uint64_t xi = 0, rest = e;
		spyre_layout one = lay(ydt, 1, 1, 0, 0);
		uint8_t st[128];
		float want;

		for (int i = 0; i < 4; i++) {
			xi += rest / yst[i] * xst[perm[i]];
			rest %= yst[i];
		}
		spyre_tensor_pack(&one, &x.host[xi], SPYRE_DTYPE_FP32, st);
		spyre_tensor_unpack(&one, st, &want, SPYRE_DTYPE_FP32);
		if (memcmp(&y.host[e], &want, 4) && bad++ < 3)
			printf("  # y[%llu] = %g, want %g\n", (unsigned long long)e, y.host[e], want);
	}
out:
	vt_free(&x);
	vt_free(&y);
	return bad;
}

TEST(permute_moving_the_last_dim_exact)
{
	static const uint32_t xs[4] = { 3, 5, 66, 130 };
	static const uint32_t p1[4] = { 3, 1, 0, 2 }, p2[4] = { 0, 1, 3, 2 };
	static const uint32_t p3[4] = { 2, 3, 1, 0 };

	if (setup())
		SKIP("no device");
	EXPECT_EQ(run_permute4(xs, p1, SPYRE_DTYPE_FP16, SPYRE_DTYPE_FP32), 0);	/* 3 steps */
	EXPECT_EQ(run_permute4(xs, p2, SPYRE_DTYPE_BF16, SPYRE_DTYPE_BF16), 0);	/* transpose */
	EXPECT_EQ(run_permute4(xs, p3, SPYRE_DTYPE_FP32, SPYRE_DTYPE_FP16), 0);
}

TEST(misuse_is_rejected_with_detail)
{
	struct vt a, b, c;
	spyre_tensor t;
	spyre_buffer *small;
	spyre_layout big = lay(SPYRE_DTYPE_FP16, 2, 64, 4096, 0);

	if (setup())
		SKIP("no device");
	ASSERT_EQ(vt_make(&a, lay(SPYRE_DTYPE_FP16, 2, 4, 8, 0), 1, -1, 1), 0);
	ASSERT_EQ(vt_make(&b, lay(SPYRE_DTYPE_FP16, 2, 9, 5, 0), 1, -1, 1), 0);
	ASSERT_EQ(vt_make(&c, lay(SPYRE_DTYPE_FP16, 2, 4, 5, 0), 0, 0, 0), 0);
	EXPECT_EQ(spyre_op_matmul(stream, &a.t, &b.t, SPYRE_ACT_NONE, &c.t),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "K = 8") != NULL);
	EXPECT_EQ(spyre_op_matmul(stream, &a.t, NULL, SPYRE_ACT_NONE, &c.t),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_op_softmax(NULL, &a.t, &a.t), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_op_binary(stream, SPYRE_OP_RELU, &a.t, &a.t, &a.t),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	/* A layout larger than its buffer. */
	t = a.t;
	t.layout = big;
	EXPECT_EQ(spyre_op_unary(stream, SPYRE_OP_EXP, &t, 0, &a.t), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "its buffer has") != NULL);
	ASSERT_EQ(spyre_buffer_alloc(dev, 4096, 0, &small), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_tensor_init(&t, small, 0, &big), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_tensor_init(&t, small, 64, &a.t.layout), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "multiple of 128") != NULL);
	/* A freed buffer. */
	EXPECT_EQ(spyre_tensor_init(&t, small, 0, &a.t.layout), SPYRE_SUCCESS);
	spyre_buffer_free(small);
	EXPECT_EQ(spyre_op_unary(stream, SPYRE_OP_EXP, &t, 0, &a.t), SPYRE_ERROR_INVALID_HANDLE);
	/* out's shape differs from x's; the stream still works after all this. */
	EXPECT_EQ(spyre_op_unary(stream, SPYRE_OP_EXP, &a.t, 0, &c.t), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_stream_synchronize(stream), SPYRE_SUCCESS);
	vt_free(&a);
	vt_free(&b);
	vt_free(&c);
}

/* Ops captured into a graph replay with the same results. */
TEST(ops_in_a_graph)
{
	struct vt x, w, h, y;
	spyre_graph *g = NULL;
	spyre_graph_exec *ge = NULL;
	double *ref = malloc(16 * 64 * sizeof(double)), *scale = malloc(16 * 64 * sizeof(double));
	double *hr = malloc(16 * 64 * sizeof(double));

	if (setup())
		SKIP("no device");
	ASSERT_EQ(vt_make(&x, lay(SPYRE_DTYPE_FP32, 2, 16, 64, 0), 1, -1, 1), 0);
	ASSERT_EQ(vt_make(&w, lay(SPYRE_DTYPE_FP32, 2, 64, 64, 0), 1, -1, 1), 0);
	ASSERT_EQ(vt_make(&h, lay(SPYRE_DTYPE_FP32, 2, 16, 64, 0), 0, 0, 0), 0);
	ASSERT_EQ(vt_make(&y, lay(SPYRE_DTYPE_FP32, 2, 16, 64, 0), 0, 0, 0), 0);
	ASSERT_EQ(spyre_stream_begin_capture(stream), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_op_matmul(stream, &x.t, &w.t, SPYRE_ACT_NONE, &h.t), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_op_softmax(stream, &h.t, &y.t), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_end_capture(stream, &g), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_graph_num_nodes(g), 2);
	ASSERT_EQ(spyre_graph_instantiate(g, &ge), SPYRE_SUCCESS);
	for (int replay = 0; replay < 2; replay++) {
		EXPECT_EQ(spyre_memset64(y.t.buf, 0, ~0ull, y.t.layout.bytes), SPYRE_SUCCESS);
		EXPECT_EQ(spyre_graph_launch(ge, stream), SPYRE_SUCCESS);
		EXPECT_EQ(spyre_stream_synchronize(stream), SPYRE_SUCCESS);
		EXPECT_EQ(vt_fetch(&y), 0);
		matmul_ref(x.host, w.host, 16, 64, 64, SPYRE_ACT_NONE, hr, scale);
		for (int r = 0; r < 16; r++) {
			double mx = -INFINITY, sum = 0;

			for (int i = 0; i < 64; i++)
				mx = hr[r * 64 + i] > mx ? hr[r * 64 + i] : mx;
			for (int i = 0; i < 64; i++)
				sum += exp(hr[r * 64 + i] - mx);
			for (int i = 0; i < 64; i++)
				ref[r * 64 + i] = exp(hr[r * 64 + i] - mx) / sum;
		}
		/* softmax of a matmul: the logits' error (1e-5 x scale) moves it. */
		for (int i = 0; i < 16 * 64; i++)
			scale[i] = 1 + scale[i];
		EXPECT_EQ(compare("graph", &y, ref, scale, 0), 0);
	}
	spyre_graph_exec_destroy(ge);
	spyre_graph_destroy(g);
	free(ref);
	free(scale);
	free(hr);
	vt_free(&x);
	vt_free(&w);
	vt_free(&h);
	vt_free(&y);
}

/* Threads with their own streams share the cache (same and new shapes). */
static void *thread_main(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	spyre_stream *s;
	struct vt a, b, c;
	uint32_t n = 32 + (uint32_t)(id % 2) * 32;
	uintptr_t bad = 1;

	if (spyre_stream_create(dev, 1, &s))
		return (void *)bad;
	if (!vt_make(&a, lay(SPYRE_DTYPE_FP32, 2, 8, n, 0), 1, 1, 1) &&
	    !vt_make(&b, lay(SPYRE_DTYPE_FP32, 2, n, 8, 0), 1, 1, 1) &&
	    !vt_make(&c, lay(SPYRE_DTYPE_FP32, 2, 8, 8, 0), 0, 0, 0)) {
		bad = 0;
		for (int i = 0; i < 4 && !bad; i++) {
			bad = spyre_op_matmul(s, &a.t, &b.t, SPYRE_ACT_NONE, &c.t) ||
			      spyre_stream_synchronize(s) || vt_fetch(&c);
			for (int k = 0; k < 64 && !bad; k++)
				bad = c.host[k] != (float)n;
		}
	}
	vt_free(&a);
	vt_free(&b);
	vt_free(&c);
	spyre_stream_destroy(s);
	return (void *)bad;
}

TEST(threads_share_the_program_cache)
{
	pthread_t th[8];
	unsigned bad = 0;

	if (setup())
		SKIP("no device");
	for (uintptr_t i = 0; i < 8; i++)
		ASSERT_EQ(pthread_create(&th[i], NULL, thread_main, (void *)i), 0);
	for (int i = 0; i < 8; i++) {
		void *r;

		pthread_join(th[i], &r);
		bad += r != NULL;
	}
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(spyre_ops_cache_clear(dev), SPYRE_SUCCESS);
	spyre_stream_destroy(stream);
	spyre_device_close(dev);
	stream = NULL;
	dev = NULL;
}
