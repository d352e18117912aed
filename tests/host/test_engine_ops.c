// SPDX-License-Identifier: MIT
/*
 * Every engine op, in every data type and in odd shapes, run through real
 * programs (DRAM -> FIFO -> op -> FIFO -> DRAM) and compared with a plain
 * double-precision reference.  Input padding lanes hold NaNs, so a padding
 * lane that leaks into a result fails the comparison; output padding lanes
 * must read back as 0.
 *
 * Tolerances (docs/engine.md): |got - ref| <= rel * (|ref| + scale), with
 * rel 1e-5 for fp32, 1e-3 for fp16, 8e-3 for bf16 outputs, and scale the
 * magnitude of what the result was computed from (sum of |x| for sums,
 * |a|.|b| for dot products, 0 for elementwise ops), plus the type's smallest
 * subnormal (2^-24 fp16, 2^-133 bf16, 2^-149 fp32) for results near 0.
 */
#define _POSIX_C_SOURCE 200809L	/* setenv */

#include <float.h>
#include <math.h>
#include <stdbool.h>

#include "dtype.h"
#include "engine_testlib.h"
#include "gemm.h"
#include "tap.h"
#include "vmath.h"

#define MEM_BYTES	(64ull << 20)
#define ARG_STRIDE	(8ull << 20)	/* arguments 8 MiB apart */

static const unsigned all_dtypes[] = { SPK_DT_FP16, SPK_DT_BF16, SPK_DT_FP32 };
static const char *const dtype_names[] = { "fp16", "bf16", "fp32" };

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* Deterministic uniform values in [lo, hi). */
static float rnd(float lo, float hi)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return lo + (hi - lo) * (float)(rng_state >> 40) / (float)(1u << 24);
}

static uint32_t elems_per_stick(unsigned dt)
{
	return dt == SPK_DT_FP32 ? 32 : 64;
}

static uint32_t sticks(uint32_t n, unsigned dt)
{
	return (n + elems_per_stick(dt) - 1) / elems_per_stick(dt);
}

static double rel_tol(unsigned dt)
{
	return dt == SPK_DT_FP32 ? 1e-5 : dt == SPK_DT_FP16 ? 1e-3 : 8e-3;
}

/* The smallest subnormal of the type: rounding near 0 is absolute. */
static double abs_tol(unsigned dt)
{
	return ldexp(1, dt == SPK_DT_FP32 ? -149 : dt == SPK_DT_FP16 ? -24 : -133);
}

static float quantize(float x, unsigned dt)
{
	uint8_t b[4];

	dtype_store(b, dt, &x, 1, 0);
	dtype_load(b, dt, 1, &x);
	return x;
}

/* A rows x n tensor at addr: rows padded to whole sticks, padding all 0xff (NaN). */
static void write_tensor(struct test_mem *m, uint64_t addr, unsigned dt, uint32_t rows,
			 uint32_t n, const float *v)
{
	size_t row = (size_t)sticks(n, dt) * 128;

	for (uint32_t r = 0; r < rows; r++) {
		memset(m->bytes + addr + r * row, 0xff, row);
		dtype_store(m->bytes + addr + r * row, dt, v + (size_t)r * n, n, 0);
	}
}

/* Read it back; counts padding bytes that are not 0. */
static unsigned read_tensor(const struct test_mem *m, uint64_t addr, unsigned dt,
			    uint32_t rows, uint32_t n, float *v)
{
	size_t row = (size_t)sticks(n, dt) * 128, used = (size_t)n * (dt == SPK_DT_FP32 ? 4 : 2);
	unsigned dirty = 0;

	for (uint32_t r = 0; r < rows; r++) {
		const uint8_t *p = m->bytes + addr + r * row;

		dtype_load(p, dt, n, v + (size_t)r * n);
		for (size_t i = used; i < row; i++)
			dirty += p[i] != 0;
	}
	return dirty;
}

/* Compare count values; report the first few misses. */
static unsigned compare(const char *what, const float *got, const double *ref,
			const double *scale, size_t count, unsigned dt)
{
	unsigned bad = 0;

	for (size_t i = 0; i < count; i++) {
		double tol = rel_tol(dt) * (fabs(ref[i]) + (scale ? scale[i] : 0)) + abs_tol(dt);

		if (isnan(ref[i]) ? !isnan(got[i]) : !(fabs(got[i] - ref[i]) <= tol)) {
			if (bad++ < 3)
				printf("  # %s[%zu]: got %.9g, want %.9g (tol %.3g)\n", what, i,
				       got[i], ref[i], tol);
		}
	}
	return bad;
}

/* ---- data types --------------------------------------------------------- */

/* fp16 from its definition: sign, 5-bit exponent (bias 15), 10-bit mantissa. */
static double fp16_reference_decode(uint16_t h)
{
	int e = h >> 10 & 0x1f, mant = h & 0x3ff;
	double v = e ? ldexp(1024 + mant, e - 25) : ldexp(mant, -24);

	if (e == 0x1f)
		v = mant ? NAN : INFINITY;
	return h & 0x8000 ? -v : v;
}

/* Round x to the nearest value with `mant_bits` of mantissa, ties to even. */
static double reference_round(double x, int mant_bits, int min_exp, double overflow)
{
	int e;

	if (x == 0 || isnan(x) || isinf(x))
		return x;
	frexp(x, &e);
	if (e - 1 < min_exp)
		e = min_exp + 1;
	x = ldexp(nearbyint(ldexp(x, mant_bits - (e - 1))), (e - 1) - mant_bits);
	return fabs(x) >= overflow ? copysign(INFINITY, x) : x;
}

TEST(fp16_decode_every_pattern)
{
	unsigned bad = 0;

	for (uint32_t h = 0; h < 0x10000; h++) {
		double want = fp16_reference_decode((uint16_t)h);
		float got = fp16_to_f32((uint16_t)h);

		if (isnan(want) ? !isnan(got) : (double)got != want || !signbit(got) != !signbit(want))
			bad++;
	}
	EXPECT_EQ(bad, 0);
}

/* Encoding rounds to nearest even, saturates to inf past 65520, keeps NaN. */
TEST(fp16_and_bf16_encode_round_to_nearest_even)
{
	unsigned bad16 = 0, bad_bf = 0;
	float edges[] = { 0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 1e-8f, 5.96e-8f,
			  2.98e-8f, 2.9802326e-8f, 6.1035156e-5f, 1.0f + 1.0f / 2048,
			  1.0f + 3.0f / 2048, FLT_MAX, 1e-40f, INFINITY, -INFINITY };

	for (unsigned i = 0; i < 200000 + sizeof(edges) / sizeof(edges[0]); i++) {
		float x;
		double want16, want_bf;

		if (i < sizeof(edges) / sizeof(edges[0])) {
			x = edges[i];
		} else {
			uint32_t u = (uint32_t)(rnd(0, 1) * 4294967040.0f);

			memcpy(&x, &u, 4);
			if (isnan(x))
				continue;
		}
		want16 = reference_round(x, 10, -14, 65520.0);
		want_bf = reference_round(x, 7, -126, ldexp(2.0 - ldexp(1, -8), 127));
		bad16 += (double)fp16_to_f32(f32_to_fp16(x)) != want16;
		bad_bf += (double)bf16_to_f32(f32_to_bf16(x)) != want_bf;
	}
	EXPECT_EQ(bad16, 0);
	EXPECT_EQ(bad_bf, 0);
	EXPECT_TRUE(isnan(fp16_to_f32(f32_to_fp16(NAN))));
	EXPECT_TRUE(isnan(bf16_to_f32(f32_to_bf16(NAN))));
}

/*
 * dtype_store's fp16 (F16C 8 at a time where the CPU has it) gives
 * f32_to_fp16's bits for every float: 2^24 patterns spread over all 2^32
 * (every sign, exponent, NaN payloads), stored at every offset mod 8.
 */
TEST(fp16_store_same_bits_as_f32_to_fp16)
{
	enum { CHUNK = 4099 };
	static float src[CHUNK];
	static uint8_t dst[2 * CHUNK];
	unsigned bad = 0;
	uint32_t u = 0;

	for (uint32_t done = 0; done < (1u << 24); done += CHUNK) {
		unsigned skip = done / CHUNK % 8;	/* vary the alignment */

		for (unsigned i = 0; i < CHUNK; i++, u += 0x100 + 1)
			memcpy(&src[i], &u, 4);
		dtype_store(dst, SPK_DT_FP16, src + skip, CHUNK - skip, 0);
		for (unsigned i = 0; i < CHUNK - skip; i++) {
			uint16_t h;

			memcpy(&h, dst + 2 * i, 2);
			bad += h != f32_to_fp16(src[skip + i]);
		}
	}
	EXPECT_EQ(bad, 0);
}

/* ---- row ops ------------------------------------------------------------ */

struct row_case {
	uint8_t opcode, din, dout, flags;
	unsigned num_in;
	uint32_t rows, rows_per_firing, n;
	float imm;
};

/* Output rows and elements per row of a case. */
static void case_out_shape(const struct row_case *c, uint32_t *rows, uint32_t *n)
{
	uint32_t firings = c->rows / c->rows_per_firing;

	*rows = c->rows;
	*n = c->n;
	if (c->opcode == SPK_OPC_REDUCE_SUM || c->opcode == SPK_OPC_REDUCE_MAX) {
		if (c->flags & SPK_OPF_ACROSS)
			*rows = firings;
		else
			*n = 1;
	} else if (c->opcode == SPK_OPC_TRANSPOSE) {
		*rows = firings * c->n;
		*n = c->rows_per_firing;
	}
}

/*
 * Run c on inputs in[0..num_in) (rows x n, already quantized); results to
 * out.  Reduce-along results are one per row (one stick each in memory).
 */
static enum spyre_engine_status run_row_case(const struct row_case *c, float *const in[3],
					     float *out, unsigned *dirty)
{
	struct spyre_engine_config cfg;
	struct pb_program prog = { 0 };
	struct pb_core *core = pb_core(&prog, 0);
	struct test_mem mem;
	uint64_t args[4];
	uint32_t firings = c->rows / c->rows_per_firing, out_rows, out_n, out_sticks;
	uint32_t in_per_firing = c->rows_per_firing * sticks(c->n, c->din);
	struct pb_op *op;
	enum spyre_engine_status st;

	spyre_engine_config_default(&cfg);
	test_mem_init(&mem, MEM_BYTES);
	prog.num_args = 4;
	for (unsigned i = 0; i < 4; i++)
		args[i] = i * ARG_STRIDE;
	case_out_shape(c, &out_rows, &out_n);
	out_sticks = out_rows * sticks(out_n, c->dout);
	op = pb_op(core, c->opcode, c->din, c->dout, firings, c->rows_per_firing, c->n);
	op->flags = c->flags;
	op->imm0 = c->imm;
	for (unsigned i = 0; i < c->num_in; i++) {
		write_tensor(&mem, args[i], c->din, c->rows, c->n, in[i]);
		op->in[i] = pb_stream(core, pb_linear(SPK_EP_DRAM, (uint16_t)i, 0,
						      firings * in_per_firing),
				      pb_op_end(), firings * in_per_firing, 2 * in_per_firing);
	}
	op->out = pb_stream(core, pb_op_end(), pb_linear(SPK_EP_DRAM, 3, 0, out_sticks),
			    out_sticks, 2 * (out_sticks / firings));
	st = test_run(&cfg, &prog, &mem, args, 4, NULL, NULL);
	if (!st)
		*dirty = read_tensor(&mem, args[3], c->dout, out_rows, out_n, out);
	test_mem_fini(&mem);
	return st;
}

static double ref_unary(uint8_t opcode, double x, double imm)
{
	switch (opcode) {
	case SPK_OPC_SCALE:
		return x * imm;
	case SPK_OPC_RELU:
		return x > 0 ? x : 0;
	case SPK_OPC_GELU:
		return 0.5 * x * (1 + erf(x / sqrt(2.0)));
	case SPK_OPC_SILU:
		return x / (1 + exp(-x));
	case SPK_OPC_EXP:
		return exp(x);
	case SPK_OPC_RSQRT:
		return 1 / sqrt(x);
	case SPK_OPC_ADD:
	case SPK_OPC_SUB:
	case SPK_OPC_MUL:
	case SPK_OPC_MAX:
	default:
		return x;
	}
}

static double ref_binary(uint8_t opcode, double a, double b)
{
	switch (opcode) {
	case SPK_OPC_ADD:
		return a + b;
	case SPK_OPC_SUB:
		return a - b;
	case SPK_OPC_MUL:
		return a * b;
	default:
		return a > b ? a : b;
	}
}

/* Reference result and error scale of a row case. */
static void ref_row_case(const struct row_case *c, float *const in[3], double *ref,
			 double *scale)
{
	uint32_t n = c->n, m = c->rows_per_firing, firings = c->rows / m;
	bool across = c->flags & SPK_OPF_ACROSS;
	bool is_max = c->opcode == SPK_OPC_REDUCE_MAX;

	switch (c->opcode) {
	case SPK_OPC_REDUCE_SUM:
	case SPK_OPC_REDUCE_MAX:
		for (uint32_t f = 0; f < firings; f++) {
			for (uint32_t o = 0; o < (across ? n : m); o++) {
				double acc = is_max ? -INFINITY : 0, s = 0;

				for (uint32_t i = 0; i < (across ? m : n); i++) {
					double x = across ? in[0][(f * m + i) * (size_t)n + o]
							  : in[0][(f * m + o) * (size_t)n + i];
					acc = is_max ? (x > acc ? x : acc) : acc + x;
					s += fabs(x);
				}
				ref[f * (across ? n : m) + o] = acc;
				scale[f * (across ? n : m) + o] = is_max ? 0 : s;
			}
		}
		return;
	case SPK_OPC_SOFTMAX:
	case SPK_OPC_LOG_SOFTMAX:
		for (uint32_t f = 0; f < firings; f++) {
			uint32_t groups = across ? n : m, len = across ? m : n;

			for (uint32_t g = 0; g < groups; g++) {
				double max = -INFINITY, sum = 0;
#define AT(i) (across ? (f * m + (i)) * (size_t)n + g : (f * m + g) * (size_t)n + (i))
				for (uint32_t i = 0; i < len; i++)
					max = in[0][AT(i)] > max ? in[0][AT(i)] : max;
				for (uint32_t i = 0; i < len; i++)
					sum += exp(in[0][AT(i)] - max);
				for (uint32_t i = 0; i < len; i++) {
					bool log_sm = c->opcode == SPK_OPC_LOG_SOFTMAX;

					ref[AT(i)] = log_sm ? in[0][AT(i)] - max - log(sum) :
							      exp(in[0][AT(i)] - max) / sum;
					/* log-softmax subtracts max + log(sum) from x:
					 * their rounding is the error's scale */
					scale[AT(i)] = log_sm ? fabs(in[0][AT(i)]) + fabs(max) +
								fabs(log(sum)) : 0;
				}
#undef AT
			}
		}
		return;
	case SPK_OPC_LAYERNORM:
	case SPK_OPC_RMSNORM:
		for (uint32_t r = 0; r < c->rows; r++) {
			const float *x = in[0] + (size_t)r * n;
			double mean = 0, var = 0;

			if (c->opcode == SPK_OPC_LAYERNORM) {
				for (uint32_t i = 0; i < n; i++)
					mean += x[i];
				mean /= n;
			}
			for (uint32_t i = 0; i < n; i++)
				var += (x[i] - mean) * (x[i] - mean);
			for (uint32_t i = 0; i < n; i++) {
				double y = (x[i] - mean) / sqrt(var / n + c->imm);

				if (c->num_in > 1)
					y *= in[1][(size_t)r * n + i];
				if (c->num_in > 2)
					y += in[2][(size_t)r * n + i];
				ref[(size_t)r * n + i] = y;
				scale[(size_t)r * n + i] = 1;
			}
		}
		return;
	case SPK_OPC_TRANSPOSE:
		for (uint32_t f = 0; f < firings; f++)
			for (uint32_t r = 0; r < m; r++)
				for (uint32_t i = 0; i < n; i++) {
					ref[((size_t)f * n + i) * m + r] =
						in[0][((size_t)f * m + r) * n + i];
					scale[((size_t)f * n + i) * m + r] = 0;
				}
		return;
	}
	for (size_t i = 0; i < (size_t)c->rows * n; i++) {
		ref[i] = c->opcode == SPK_OPC_FILL ? c->imm :
			 c->num_in == 2 ? ref_binary(c->opcode, in[0][i], in[1][i]) :
					  ref_unary(c->opcode, in[0][i], c->imm);
		scale[i] = 0;
	}
}

/* Run one case against the reference; returns the number of failures. */
static unsigned check_row_case(const struct row_case *c, float lo, float hi)
{
	size_t count = (size_t)c->rows * c->n;
	uint32_t out_rows, out_n;
	float *in[3] = { NULL, NULL, NULL }, *out;
	double *ref, *scale;
	unsigned bad = 0, dirty = 0;
	char what[96];

	case_out_shape(c, &out_rows, &out_n);
	out = calloc((size_t)out_rows * out_n + 1, sizeof(float));
	ref = calloc((size_t)out_rows * out_n + 1, sizeof(double));
	scale = calloc((size_t)out_rows * out_n + 1, sizeof(double));
	for (unsigned i = 0; i < c->num_in; i++) {
		in[i] = malloc(count * sizeof(float));
		for (size_t j = 0; j < count; j++)
			in[i][j] = quantize(rnd(lo, hi), c->din);
	}
	snprintf(what, sizeof(what), "op 0x%02x %s->%s flags %u rows %u/%u n %u", c->opcode,
		 dtype_names[c->din], dtype_names[c->dout], c->flags, c->rows,
		 c->rows_per_firing, c->n);
	if (run_row_case(c, in, out, &dirty)) {
		printf("  # %s: run failed\n", what);
		bad = 1;
	} else {
		ref_row_case(c, in, ref, scale);
		bad = compare(what, out, ref, scale, (size_t)out_rows * out_n, c->dout);
		if (dirty) {
			printf("  # %s: %u output padding bytes not zero\n", what, dirty);
			bad++;
		}
	}
	for (unsigned i = 0; i < 3; i++)
		free(in[i]);
	free(out);
	free(ref);
	free(scale);
	return bad;
}

/* Shapes every row op is tried on: single element, around a stick, large. */
static const uint32_t shape_n[] = { 1, 31, 32, 33, 63, 64, 65, 100, 1000, 4099 };
static const uint32_t shape_rows[] = { 1, 3, 1, 2, 5, 4, 3, 7, 2, 1 };

/* Every shape, every data type (same in and out), rows_per_firing 1. */
static unsigned check_op_all(uint8_t opcode, unsigned num_in, float imm, float lo, float hi,
			     uint8_t flags, uint32_t rows_per_firing)
{
	unsigned bad = 0;

	for (unsigned d = 0; d < 3; d++) {
		for (unsigned s = 0; s < sizeof(shape_n) / sizeof(shape_n[0]); s++) {
			struct row_case c = { opcode, (uint8_t)all_dtypes[d],
					      (uint8_t)all_dtypes[d], flags, num_in,
					      shape_rows[s] * rows_per_firing, rows_per_firing,
					      shape_n[s], imm };

			bad += check_row_case(&c, lo, hi);
		}
	}
	return bad;
}

/*
 * vmath.c's exp: within 2 ulp of exp over every float of the range that
 * matters, exact at the edges (inf above 88.72, 0 below -103.97, NaN
 * kept), and the AVX2 path gives the scalar code's bits for exp, SILU and
 * softmax's exp-and-sum, whatever the array length.
 */
static double ulp_error(float got, double want)
{
	int e;

	if (want == 0 || !isfinite(want))
		return got == want ? 0 : INFINITY;
	frexp(want, &e);
	if (e - 24 < -149)
		e = -149 + 24;
	return fabs(got - want) / ldexp(1, e - 24);
}

TEST(exp_accuracy_and_edges)
{
	double worst = 0;
	float at = 0;

	/* Every 97th float of [-103.97, 88.72]: about 20 million values. */
	for (uint32_t u = 0; u < 0xff800000u; u += 97) {
		float x;

		memcpy(&x, &u, 4);
		if (!(x >= -103.97f && x <= 88.72f))
			continue;
		double err = ulp_error(vm_expf(x), exp((double)x));

		if (err > worst) {
			worst = err;
			at = x;
		}
	}
	printf("  # worst %.3f ulp at %a\n", worst, (double)at);
	EXPECT_TRUE(worst <= 2.0);
	EXPECT_TRUE(vm_expf(0.0f) == 1.0f);
	EXPECT_TRUE(vm_expf(89.0f) == INFINITY && vm_expf(INFINITY) == INFINITY);
	EXPECT_TRUE(vm_expf(-104.0f) == 0.0f && vm_expf(-INFINITY) == 0.0f);
	EXPECT_TRUE(isnan(vm_expf(NAN)));
	EXPECT_TRUE(vm_expf(-103.0f) > 0 && vm_expf(-103.0f) < FLT_MIN);	/* subnormal */
}

TEST(exp_silu_softmax_simd_same_bits_as_scalar)
{
	enum { N = 1037 };
	static float a[N], b[N], v[N];
	unsigned differ = 0;

	for (unsigned i = 0; i < N; i++)
		v[i] = i % 101 == 7 ? NAN : i % 89 == 3 ? INFINITY : i % 83 == 5 ? -INFINITY :
		       rnd(-110, 95);
	for (unsigned n = 1; n <= N; n += n < 40 ? 1 : 97) {
		memcpy(a, v, sizeof(float) * n);
		memcpy(b, v, sizeof(float) * n);
		vm_exp(a, n, false);
		vm_exp(b, n, true);
		differ += memcmp(a, b, sizeof(float) * n) != 0;
		memcpy(a, v, sizeof(float) * n);
		memcpy(b, v, sizeof(float) * n);
		vm_silu(a, n, false);
		vm_silu(b, n, true);
		differ += memcmp(a, b, sizeof(float) * n) != 0;
		memcpy(a, v, sizeof(float) * n);
		memcpy(b, v, sizeof(float) * n);
		float sa = vm_exp_sub_sum(a, n, 3.5f, false), sb = vm_exp_sub_sum(b, n, 3.5f, true);

		differ += memcmp(a, b, sizeof(float) * n) != 0 || memcmp(&sa, &sb, 4) != 0;
	}
	EXPECT_EQ(differ, 0);
}

TEST(op_add) { EXPECT_EQ(check_op_all(SPK_OPC_ADD, 2, 0, -4, 4, 0, 1), 0); }
TEST(op_sub) { EXPECT_EQ(check_op_all(SPK_OPC_SUB, 2, 0, -4, 4, 0, 1), 0); }
TEST(op_mul) { EXPECT_EQ(check_op_all(SPK_OPC_MUL, 2, 0, -4, 4, 0, 1), 0); }
TEST(op_max) { EXPECT_EQ(check_op_all(SPK_OPC_MAX, 2, 0, -4, 4, 0, 1), 0); }
TEST(op_scale) { EXPECT_EQ(check_op_all(SPK_OPC_SCALE, 1, -0.375f, -4, 4, 0, 1), 0); }
TEST(op_relu) { EXPECT_EQ(check_op_all(SPK_OPC_RELU, 1, 0, -4, 4, 0, 1), 0); }
TEST(op_gelu) { EXPECT_EQ(check_op_all(SPK_OPC_GELU, 1, 0, -6, 6, 0, 1), 0); }
TEST(op_silu) { EXPECT_EQ(check_op_all(SPK_OPC_SILU, 1, 0, -6, 6, 0, 1), 0); }
TEST(op_exp) { EXPECT_EQ(check_op_all(SPK_OPC_EXP, 1, 0, -8, 8, 0, 1), 0); }
TEST(op_rsqrt) { EXPECT_EQ(check_op_all(SPK_OPC_RSQRT, 1, 0, 0.01f, 100, 0, 1), 0); }
TEST(op_fill) { EXPECT_EQ(check_op_all(SPK_OPC_FILL, 0, 2.5f, 0, 1, 0, 1), 0); }
TEST(op_reduce_sum_along) { EXPECT_EQ(check_op_all(SPK_OPC_REDUCE_SUM, 1, 0, -4, 4, 0, 1), 0); }
TEST(op_reduce_max_along) { EXPECT_EQ(check_op_all(SPK_OPC_REDUCE_MAX, 1, 0, -4, 4, 0, 1), 0); }
TEST(op_reduce_sum_across)
{
	EXPECT_EQ(check_op_all(SPK_OPC_REDUCE_SUM, 1, 0, -4, 4, SPK_OPF_ACROSS, 3), 0);
}
TEST(op_reduce_max_across)
{
	EXPECT_EQ(check_op_all(SPK_OPC_REDUCE_MAX, 1, 0, -4, 4, SPK_OPF_ACROSS, 5), 0);
}
TEST(op_softmax_along) { EXPECT_EQ(check_op_all(SPK_OPC_SOFTMAX, 1, 0, -8, 8, 0, 1), 0); }
TEST(op_softmax_across)
{
	EXPECT_EQ(check_op_all(SPK_OPC_SOFTMAX, 1, 0, -8, 8, SPK_OPF_ACROSS, 4), 0);
}
TEST(op_log_softmax_along)
{
	EXPECT_EQ(check_op_all(SPK_OPC_LOG_SOFTMAX, 1, 0, -8, 8, 0, 1), 0);
}
TEST(op_log_softmax_across)
{
	EXPECT_EQ(check_op_all(SPK_OPC_LOG_SOFTMAX, 1, 0, -8, 8, SPK_OPF_ACROSS, 4), 0);
}
TEST(op_layernorm) { EXPECT_EQ(check_op_all(SPK_OPC_LAYERNORM, 1, 1e-5f, -3, 5, 0, 1), 0); }
TEST(op_layernorm_gamma_beta)
{
	EXPECT_EQ(check_op_all(SPK_OPC_LAYERNORM, 3, 1e-5f, -3, 5, 0, 1), 0);
}
TEST(op_rmsnorm) { EXPECT_EQ(check_op_all(SPK_OPC_RMSNORM, 1, 1e-6f, -3, 5, 0, 1), 0); }
TEST(op_rmsnorm_gamma) { EXPECT_EQ(check_op_all(SPK_OPC_RMSNORM, 2, 1e-6f, -3, 5, 0, 1), 0); }
TEST(op_transpose) { EXPECT_EQ(check_op_all(SPK_OPC_TRANSPOSE, 1, 0, -4, 4, 0, 3), 0); }

/* Several rows per firing go through the same code as one. */
TEST(op_rows_per_firing)
{
	struct row_case c = { SPK_OPC_GELU, SPK_DT_BF16, SPK_DT_BF16, 0, 1, 12, 4, 70, 0 };
	struct row_case s = { SPK_OPC_SOFTMAX, SPK_DT_FP16, SPK_DT_FP32, 0, 1, 9, 3, 130, 0 };

	EXPECT_EQ(check_row_case(&c, -3, 3), 0);
	EXPECT_EQ(check_row_case(&s, -3, 3), 0);
}

/* Type conversion: every pair, including the narrowing ones. */
TEST(op_copy_converts_every_pair)
{
	unsigned bad = 0;

	for (unsigned i = 0; i < 3; i++)
		for (unsigned o = 0; o < 3; o++)
			for (unsigned s = 0; s < sizeof(shape_n) / sizeof(shape_n[0]); s++) {
				struct row_case c = { SPK_OPC_COPY, (uint8_t)i, (uint8_t)o, 0, 1,
						      shape_rows[s], 1, shape_n[s], 0 };

				bad += check_row_case(&c, -300, 300);
			}
	EXPECT_EQ(bad, 0);
}

/* Mixed in/out types on compute ops (fp16 in, fp32 out and back). */
TEST(op_mixed_types)
{
	struct row_case cases[] = {
		{ SPK_OPC_ADD, SPK_DT_FP16, SPK_DT_FP32, 0, 2, 3, 1, 77, 0 },
		{ SPK_OPC_EXP, SPK_DT_FP32, SPK_DT_BF16, 0, 1, 2, 1, 300, 0 },
		{ SPK_OPC_REDUCE_SUM, SPK_DT_BF16, SPK_DT_FP32, 0, 1, 4, 1, 513, 0 },
		{ SPK_OPC_LAYERNORM, SPK_DT_FP32, SPK_DT_FP16, 0, 1, 2, 1, 1024, 1e-5f },
	};
	unsigned bad = 0;

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		bad += check_row_case(&cases[i], -2, 2);
	EXPECT_EQ(bad, 0);
}

/* ---- matmul ------------------------------------------------------------- */

/* check_matmul's host threads (0: every CPU), and where it copies C if not NULL. */
static unsigned mm_threads;
static float *mm_capture;

/*
 * C[M x N] = A[M x K] . B[K x N] over `tiles` row tiles of A (B reused),
 * each tile accumulated over k_steps firings of K/k_steps.  A is sticked on
 * K, B and C on N.  Returns failures.
 */
static unsigned check_matmul(unsigned din, unsigned dout, uint32_t M, uint32_t K, uint32_t N,
			     uint32_t k_steps, uint32_t tiles)
{
	struct spyre_engine_config cfg;
	struct pb_program prog = { 0 };
	struct pb_core *core = pb_core(&prog, 0);
	struct test_mem mem;
	uint64_t args[3] = { 0, ARG_STRIDE, 2 * ARG_STRIDE };
	uint32_t k = K / k_steps, ks = sticks(k, din), rows = M * tiles;
	uint32_t a_sticks = M * ks, b_sticks = k * sticks(N, din), c_sticks = M * sticks(N, dout);
	size_t a_row = (size_t)sticks(K, din) * 128;
	float *a = malloc(sizeof(float) * rows * K), *b = malloc(sizeof(float) * K * N);
	float *c = malloc(sizeof(float) * rows * N);
	double *ref = calloc((size_t)rows * N, sizeof(double));
	double *scale = calloc((size_t)rows * N, sizeof(double));
	struct pb_endpoint ea, eb;
	struct pb_op *op;
	unsigned bad = 0;
	char what[96];

	spyre_engine_config_default(&cfg);
	cfg.host_threads = mm_threads;
	cfg.pool_min_macs = 0;	/* small shapes on the pool too: every split tested */
	test_mem_init(&mem, MEM_BYTES);
	prog.num_args = 3;
	for (size_t i = 0; i < (size_t)rows * K; i++)
		a[i] = quantize(rnd(-1, 1), din);
	for (size_t i = 0; i < (size_t)K * N; i++)
		b[i] = quantize(rnd(-1, 1), din);
	write_tensor(&mem, args[0], din, rows, K, a);
	write_tensor(&mem, args[1], din, K, N, b);
	/* A: per tile, per k step, M rows of the step's ks sticks. */
	ea = (struct pb_endpoint){ SPK_EP_DRAM, 0, 0, 0, { ks, M, k_steps, tiles },
				   { 128, (int64_t)a_row, (int64_t)ks * 128,
				     (int64_t)(M * a_row) } };
	/* B: all of it per tile (stride 0 repeats it). */
	eb = (struct pb_endpoint){ SPK_EP_DRAM, 1, 0, 0, { k_steps * b_sticks, tiles, 1, 1 },
				   { 128, 0, 0, 0 } };
	op = pb_op(core, SPK_OPC_MATMUL, (uint8_t)din, (uint8_t)dout, tiles * k_steps, M, N);
	op->k = k;
	op->k_steps = k_steps;
	op->in[0] = pb_stream(core, ea, pb_op_end(), tiles * k_steps * a_sticks, 2 * a_sticks);
	op->in[1] = pb_stream(core, eb, pb_op_end(), tiles * k_steps * b_sticks, 2 * b_sticks);
	op->out = pb_stream(core, pb_op_end(), pb_linear(SPK_EP_DRAM, 2, 0, tiles * c_sticks),
			    tiles * c_sticks, c_sticks);
	op->acc_buffer = pb_buffer(core, M * sticks(N, SPK_DT_FP32) * 128);
	snprintf(what, sizeof(what), "matmul %s->%s %ux%ux%u k_steps %u tiles %u",
		 dtype_names[din], dtype_names[dout], M, K, N, k_steps, tiles);
	if (test_run(&cfg, &prog, &mem, args, 3, NULL, NULL)) {
		printf("  # %s: run failed\n", what);
		bad = 1;
	} else {
		unsigned dirty = read_tensor(&mem, args[2], dout, rows, N, c);

		if (mm_capture)
			memcpy(mm_capture, c, sizeof(float) * rows * N);

		for (uint32_t i = 0; i < rows; i++)
			for (uint32_t j = 0; j < N; j++)
				for (uint32_t kk = 0; kk < K; kk++) {
					ref[(size_t)i * N + j] +=
						(double)a[(size_t)i * K + kk] * b[(size_t)kk * N + j];
					scale[(size_t)i * N + j] +=
						fabs((double)a[(size_t)i * K + kk] * b[(size_t)kk * N + j]);
				}
		bad = compare(what, c, ref, scale, (size_t)rows * N, dout);
		if (dirty) {
			printf("  # %s: %u padding bytes not zero\n", what, dirty);
			bad++;
		}
	}
	test_mem_fini(&mem);
	free(a);
	free(b);
	free(c);
	free(ref);
	free(scale);
	return bad;
}

TEST(matmul_odd_shapes_every_dtype)
{
	static const uint32_t shapes[][3] = {
		{ 1, 1, 1 }, { 3, 5, 7 }, { 8, 64, 64 }, { 17, 100, 130 }, { 5, 33, 65 },
		{ 1, 1000, 3 }, { 64, 64, 200 },
	};
	unsigned bad = 0;

	for (unsigned d = 0; d < 3; d++)
		for (unsigned s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
			bad += check_matmul(all_dtypes[d], all_dtypes[d], shapes[s][0],
					    shapes[s][1], shapes[s][2], 1, 1);
	EXPECT_EQ(bad, 0);
}

/* Accumulation over several firings and several output tiles. */
TEST(matmul_k_steps_and_tiles)
{
	EXPECT_EQ(check_matmul(SPK_DT_FP16, SPK_DT_FP32, 16, 256, 64, 4, 3), 0);
	EXPECT_EQ(check_matmul(SPK_DT_BF16, SPK_DT_BF16, 7, 128, 33, 2, 2), 0);
	EXPECT_EQ(check_matmul(SPK_DT_FP32, SPK_DT_FP16, 9, 96, 50, 3, 2), 0);
	EXPECT_EQ(check_matmul(SPK_DT_FP16, SPK_DT_FP16, 64, 1024, 64, 16, 2), 0);
}

/*
 * Every kernel path this CPU has (SPYRE_ENGINE_ISA caps gemm.c's choice:
 * portable, AVX2, AVX-512, AVX512-BF16) on 1, 2 and 3 host threads: each
 * result within tolerance and bit-identical to the portable path on one
 * thread, for every input type, on shapes with partial row and column
 * tiles (each of the AVX-512 tile's row-count variants), several k steps,
 * odd k, and row panels fewer than threads (the column split).  bf16 on
 * the AVX512-BF16 path (pairs of products by VDPBF16PS, gemm.h) is within
 * tolerance and bit-identical to itself on one thread.
 */
TEST(matmul_every_simd_path_bit_identical)
{
	static const uint32_t shapes[][4] = {
		{ 70, 100, 130, 1 }, { 33, 128, 40, 2 }, { 2, 384, 17, 3 }, { 16, 48, 16, 1 },
		{ 3, 128, 20, 2 },	/* gemm.c's row-count variants: 6, 1, 2, 16, 3 rows */
		{ 1, 64, 200, 1 }, { 2, 128, 130, 2 },	/* gemm_tiles' groups of panels */
		{ 5, 33, 40, 1 }, { 1, 33, 70, 1 },	/* odd k: a pair with one element */
	};
	static const unsigned threads[] = { 1, 2, 3 };
	enum gemm_isa best = gemm_isa_supported();
	float *first = malloc(sizeof(float) * 70 * 130), *got = malloc(sizeof(float) * 70 * 130);
	float *first_pairs = malloc(sizeof(float) * 70 * 130);
	unsigned bad = 0, differ = 0, runs = 0;

	for (unsigned d = 0; d < 3; d++)
		for (unsigned s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
			const uint32_t *sh = shapes[s];
			size_t bytes = sizeof(float) * sh[0] * sh[2];

			for (unsigned isa = GEMM_PORTABLE; isa <= best; isa++)
				for (unsigned t = 0; t < 3; t++) {
					bool pairs = isa == GEMM_AVX512_BF16 &&
						     all_dtypes[d] == SPK_DT_BF16;
					bool ref_run = (isa == GEMM_PORTABLE || pairs) && t == 0;
					const float *ref = pairs ? first_pairs : first;

					setenv("SPYRE_ENGINE_ISA", gemm_isa_name(isa), 1);
					mm_threads = threads[t];
					mm_capture = !ref_run ? got : pairs ? first_pairs : first;
					rng_state = 0x243f6a8885a308d3ull;	/* same inputs */
					bad += check_matmul(all_dtypes[d], SPK_DT_FP32, sh[0], sh[1],
							    sh[2], sh[3], 1);
					if (!ref_run && memcmp(ref, got, bytes)) {
						printf("  # %s %ux%ux%u: %s on %u threads differs\n",
						       dtype_names[d], sh[0], sh[1], sh[2],
						       gemm_isa_name(isa), threads[t]);
						differ++;
					}
					runs++;
				}
		}
	unsetenv("SPYRE_ENGINE_ISA");
	mm_threads = 0;
	mm_capture = NULL;
	printf("  # %u runs, paths portable..%s\n", runs, gemm_isa_name(best));
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(differ, 0);
	free(first);
	free(first_pairs);
	free(got);
}

/*
 * Eight cores, two 48x64 fp32 tiles each (same rows, two column blocks) of
 * a 192x96x256 product, B's FIFO one tile deep: the scheduler lets a
 * firing compute on the pool while it moves other cores' sticks, and must
 * wait for it before refilling that core's FIFOs.  Every path and 1-3
 * threads (the 2-thread run repeated), with and without the map callback,
 * give the same bits, within tolerance of a double reference.
 */
TEST(matmul_many_cores_overlapped_identical)
{
	enum { CORES = 8, TM = 48, TN = 64, M = 192, K = 96, N = 256, KS = K / 32 };
	static const unsigned threads[] = { 1, 2, 3, 2, 2, 2 };
	struct spyre_engine_config cfg;
	struct pb_program prog = { 0 };
	struct test_mem mem;
	uint64_t args[3] = { 0, ARG_STRIDE, 2 * ARG_STRIDE };
	float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N);
	float *c = malloc(sizeof(float) * M * N), *first = malloc(sizeof(float) * M * N);
	double *ref = calloc((size_t)M * N, sizeof(double));
	double *scale = calloc((size_t)M * N, sizeof(double));
	enum gemm_isa best = gemm_isa_supported();
	unsigned bad = 0, differ = 0, dirty = 0, runs = 0;

	spyre_engine_config_default(&cfg);
	test_mem_init(&mem, MEM_BYTES);
	for (size_t i = 0; i < (size_t)M * K; i++)
		a[i] = rnd(-1, 1);
	for (size_t i = 0; i < (size_t)K * N; i++)
		b[i] = rnd(-1, 1);
	write_tensor(&mem, args[0], SPK_DT_FP32, M, K, a);
	write_tensor(&mem, args[1], SPK_DT_FP32, K, N, b);
	prog.num_args = 3;
	for (unsigned core = 0; core < CORES; core++) {
		struct pb_core *pc = pb_core(&prog, core);
		struct pb_op *op = pb_op(pc, SPK_OPC_MATMUL, SPK_DT_FP32, SPK_DT_FP32, 2, TM, TN);
		unsigned ti = core / 2, tj = core % 2 * 2;	/* tiles (ti, tj), (ti, tj + 1) */

		op->k = K;
		op->k_steps = 1;
		op->in[0] = pb_stream(pc, (struct pb_endpoint){ SPK_EP_DRAM, 0, 0,
								(uint64_t)ti * TM * KS * 128,
								{ TM * KS, 2, 1, 1 },
								{ 128, 0, 0, 0 } },
				      pb_op_end(), 2 * TM * KS, 2 * TM * KS);
		op->in[1] = pb_stream(pc, (struct pb_endpoint){ SPK_EP_DRAM, 1, 0,
								(uint64_t)tj * (TN / 32) * 128,
								{ TN / 32, K, 2, 1 },
								{ 128, N / 32 * 128, TN / 32 * 128, 0 } },
				      pb_op_end(), 2 * K * (TN / 32), K * (TN / 32));
		op->out = pb_stream(pc, pb_op_end(),
				    (struct pb_endpoint){ SPK_EP_DRAM, 2, 0,
							  ((uint64_t)ti * TM * (N / 32) +
							   tj * (TN / 32)) * 128,
							  { TN / 32, TM, 2, 1 },
							  { 128, N / 32 * 128, TN / 32 * 128, 0 } },
				    2 * TM * (TN / 32), 2 * TM * (TN / 32));
		op->acc_buffer = pb_buffer(pc, TM * (TN / 32) * 128);
	}
	for (uint32_t i = 0; i < M; i++)
		for (uint32_t j = 0; j < N; j++)
			for (uint32_t kk = 0; kk < K; kk++) {
				double p = (double)a[i * K + kk] * b[kk * N + j];

				ref[i * N + j] += p;
				scale[i * N + j] += fabs(p);
			}
	/*
	 * v = path x 2 + no map: with map, A and B are read in device memory;
	 * without, B's FIFO slots are refilled by copying (the slot test).
	 */
	for (unsigned v = 0; v <= best * 2 + 1; v++)
		for (unsigned t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
			setenv("SPYRE_ENGINE_ISA", gemm_isa_name((enum gemm_isa)(v / 2)), 1);
			mem.no_map = v % 2;
			cfg.host_threads = threads[t];
			cfg.pool_min_macs = 0;
			memset(mem.bytes + args[2], 0, (size_t)M * N * 4);
			if (test_run(&cfg, &prog, &mem, args, 3, NULL, NULL)) {
				bad++;
				continue;
			}
			dirty += read_tensor(&mem, args[2], SPK_DT_FP32, M, N, c);
			bad += compare("many cores", c, ref, scale, (size_t)M * N, SPK_DT_FP32);
			if (!runs++)
				memcpy(first, c, sizeof(float) * M * N);
			else if (memcmp(first, c, sizeof(float) * M * N))
				differ++;
		}
	unsetenv("SPYRE_ENGINE_ISA");
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(differ, 0);
	EXPECT_EQ(dirty, 0);
	test_mem_fini(&mem);
	free(a);
	free(b);
	free(c);
	free(first);
	free(ref);
	free(scale);
}

TAP_MAIN()
