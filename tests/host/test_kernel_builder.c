// SPDX-License-Identifier: MIT
/*
 * The kernel-authoring API (spyre/spyre_kernel_builder.h) on the host: a
 * program built with it loads in the card's own loader and computes
 * y = gelu(x + bias) as the CPU does, on the engine; and each kind of
 * mistake is refused with a detail that names the field (the table in
 * docs/kernels.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spyre/spyre_kernel_builder.h"
#include "engine.h"
#include "tap.h"

#define CORES 4
#define ROWS 8			/* per core */
#define N 256			/* fp32: 8 sticks a row */
#define ROW_STICKS (N * 4 / SPK_STICK_BYTES)

enum { ARG_X, ARG_BIAS, ARG_Y, NUM_ARGS };

/* What a test changes in the good program, before it is added. */
struct mutation {
	uint32_t core;
	uint32_t bias_count1;
	uint32_t gelu_firings;
	uint32_t fifo0;
	uint64_t x_offset;
	int drop_gelu;
};

static spyre_status add_core(spyre_kernel_builder *b, uint32_t core, const struct mutation *m)
{
	uint64_t first = (uint64_t)core * ROWS * ROW_STICKS * SPK_STICK_BYTES;
	uint32_t sticks = ROWS * ROW_STICKS;
	spyre_endpoint x = spyre_endpoint_dram(ARG_X, first + m->x_offset, sticks);
	spyre_endpoint y = spyre_endpoint_dram(ARG_Y, first, sticks);
	spyre_endpoint bias = spyre_endpoint_dram(ARG_BIAS, 0, ROW_STICKS);
	spyre_endpoint op = spyre_endpoint_op();
	spyre_op_desc add = spyre_op_desc_init(SPK_OPC_ADD, SPK_DT_FP32, SPK_DT_FP32, ROWS, 1, N);
	spyre_op_desc gelu = spyre_op_desc_init(SPK_OPC_GELU, SPK_DT_FP32, SPK_DT_FP32,
						m->gelu_firings, 1, N);
	spyre_status st;

	bias.count[1] = m->bias_count1;
	bias.stride[1] = 0;
	if ((st = spyre_kernel_builder_add_stream(b, core, &x, &op, sticks, m->fifo0, &add.in[0])) ||
	    (st = spyre_kernel_builder_add_stream(b, core, &bias, &op, sticks, 2 * ROW_STICKS,
						  &add.in[1])) ||
	    (st = spyre_kernel_builder_add_stream(b, core, &op, &op, sticks, 2 * ROW_STICKS,
						  &add.out)))
		return st;
	gelu.in[0] = add.out;
	if ((st = spyre_kernel_builder_add_stream(b, core, &op, &y, sticks, 2 * ROW_STICKS,
						  &gelu.out)) ||
	    (st = spyre_kernel_builder_add_op(b, core, &add, NULL)))
		return st;
	return m->drop_gelu ? SPYRE_SUCCESS : spyre_kernel_builder_add_op(b, core, &gelu, NULL);
}

static struct mutation good(void)
{
	struct mutation m = { 0, ROWS, ROWS, 2 * ROW_STICKS, 0, 0 };

	return m;
}

/* Build the program with @m; the status of the first call that failed,
 * its detail in @detail (destroy, a later call, clears the library's). */
static char detail[512];
static spyre_status build(const struct mutation *m, void **img, size_t *len)
{
	spyre_kernel_builder *b;
	spyre_status st = spyre_kernel_builder_create(NUM_ARGS, &b);

	for (uint32_t c = 0; !st && c < CORES; c++)
		st = add_core(b, c ? c : m->core, m);
	if (!st)
		st = spyre_kernel_builder_build(b, img, len);
	snprintf(detail, sizeof(detail), "%s", spyre_last_error_detail());
	spyre_kernel_builder_destroy(b);
	return st;
}

/* Device memory for the engine: one flat array. */
static uint8_t dram[3 << 20];
static int mem_read(void *o, uint64_t a, void *buf, size_t n)
{
	(void)o;
	if (a > sizeof(dram) || n > sizeof(dram) - a)
		return -1;
	memcpy(buf, dram + a, n);
	return 0;
}
static int mem_write(void *o, uint64_t a, const void *buf, size_t n)
{
	(void)o;
	if (a > sizeof(dram) || n > sizeof(dram) - a)
		return -1;
	memcpy(dram + a, buf, n);
	return 0;
}

TEST(builds_a_program_the_card_loads_and_runs)
{
	struct mutation m = good();
	struct spyre_engine_config cfg;
	struct spyre_engine_error err;
	struct spyre_engine_mem mem = { NULL, mem_read, mem_write, NULL };
	struct spyre_program *p = NULL;
	uint64_t args[NUM_ARGS] = { 0, 1 << 20, 2 << 20 };
	float *x = (float *)dram, *bias = (float *)(dram + (1 << 20)), *y = (float *)(dram + (2 << 20));
	double worst = 0;
	void *img;
	size_t len;

	ASSERT_EQ(build(&m, &img, &len), SPYRE_SUCCESS);
	for (int i = 0; i < CORES * ROWS * N; i++)
		x[i] = (float)((i * 37 % 401) - 200) / 64.0f;
	for (int c = 0; c < N; c++)
		bias[c] = (float)((c * 13 % 61) - 30) / 32.0f;
	spyre_engine_config_default(&cfg);
	ASSERT_EQ(spyre_program_load(&cfg, img, len, &p, &err), SPYRE_ENGINE_OK);
	free(img);
	ASSERT_EQ(spyre_program_run(p, args, NUM_ARGS, &mem, NULL, &err), SPYRE_ENGINE_OK);
	spyre_program_free(p);
	for (int i = 0; i < CORES * ROWS * N; i++) {
		double v = x[i] + bias[i % N];
		double want = 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
		double e = fabs(y[i] - want) / (fabs(want) * 1e-6 + 1e-6);

		if (e > worst)
			worst = e;
	}
	EXPECT_TRUE(worst <= 8);
}

/* @m fails at add or build time with a detail containing @want. */
static void expect_refused(const struct mutation *m, const char *want)
{
	void *img = NULL;
	size_t len;
	spyre_status st = build(m, &img, &len);

	EXPECT_EQ(st, SPYRE_ERROR_INVALID_ARGUMENT);
	if (!strstr(detail, want))
		TAP_FAIL_("detail \"%s\" lacks \"%s\"", detail, want);
	free(img);
}

/* The rows of docs/kernels.md's table, in this program's sizes. */
TEST(loop_counts_must_give_total_sticks)
{
	struct mutation m = good();

	m.bias_count1 = ROWS / 2;
	expect_refused(&m, "core 0 stream 1: src.count[0] x ... x count[3] = 32 sticks, "
			   "total_sticks is 64");
}

TEST(op_sticks_must_match_its_stream)
{
	struct mutation m = good();

	m.gelu_firings = 2 * ROWS;
	expect_refused(&m, "core 0 op 1: out moves 128 sticks (8 a firing), stream 3 has "
			   "total_sticks 64");
}

TEST(fifo_must_hold_a_firing)
{
	struct mutation m = good();

	m.fifo0 = ROW_STICKS / 2;
	expect_refused(&m, "core 0 op 0: a firing needs 8 sticks on in[0], stream 0's "
			   "fifo_sticks is 4");
}

TEST(op_ends_must_be_used)
{
	struct mutation m = good();

	m.drop_gelu = 1;
	expect_refused(&m, "core 0 stream 2: dst is an op end but no op has it in in[]");
}

TEST(offsets_are_stick_aligned)
{
	struct mutation m = good();

	m.x_offset = 64;
	expect_refused(&m, "core 0 stream 0: src.offset 64 is not a multiple of 128");
}

TEST(cores_are_0_to_31)
{
	struct mutation m = good();

	m.core = 32;
	expect_refused(&m, "core 32: the card has cores 0-31");
}

/* Hostile loops are refused without arithmetic overflow (UBSan build). */
TEST(huge_strides_and_offsets)
{
	spyre_kernel_builder *b;
	spyre_endpoint op = spyre_endpoint_op();
	spyre_endpoint src = spyre_endpoint_dram(0, 0, 1);
	spyre_op_desc relu = spyre_op_desc_init(SPK_OPC_RELU, SPK_DT_FP32, SPK_DT_FP32, 3, 1, 32);
	uint16_t buf;
	void *img;
	size_t len;

	ASSERT_EQ(spyre_kernel_builder_create(1, &b), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_builder_add_buffer(b, 0, 1024, &buf), SPYRE_SUCCESS);
	src.count[1] = 3;
	src.stride[1] = INT64_MAX - 127;
	ASSERT_EQ(spyre_kernel_builder_add_stream(b, 0, &src, &op, 3, 1, &relu.in[0]),
		  SPYRE_SUCCESS);
	src = spyre_endpoint_scratch(buf, UINT64_MAX - 127, 3);
	ASSERT_EQ(spyre_kernel_builder_add_stream(b, 0, &op, &src, 3, 1, &relu.out),
		  SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_builder_add_op(b, 0, &relu, NULL), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_kernel_builder_build(b, &img, &len), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "src.stride[1] x count[1] overflows") != NULL);
	EXPECT_EQ(spyre_kernel_builder_destroy(b), SPYRE_SUCCESS);

	ASSERT_EQ(spyre_kernel_builder_create(1, &b), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_builder_add_buffer(b, 0, 1024, &buf), SPYRE_SUCCESS);
	relu.in[0] = relu.out = SPK_NONE;
	src = spyre_endpoint_dram(0, 0, 3);
	ASSERT_EQ(spyre_kernel_builder_add_stream(b, 0, &src, &op, 3, 1, &relu.in[0]),
		  SPYRE_SUCCESS);
	src = spyre_endpoint_scratch(buf, UINT64_MAX - 127, 3);
	ASSERT_EQ(spyre_kernel_builder_add_stream(b, 0, &op, &src, 3, 1, &relu.out),
		  SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_builder_add_op(b, 0, &relu, NULL), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_kernel_builder_build(b, &img, &len), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "leaves buffer 0 of 1024 bytes") != NULL);
	EXPECT_EQ(spyre_kernel_builder_destroy(b), SPYRE_SUCCESS);
}

TEST(bad_handles_and_pointers)
{
	spyre_kernel_builder *b;
	spyre_endpoint op = spyre_endpoint_op();
	void *img;
	size_t len;

	EXPECT_EQ(spyre_kernel_builder_create(SPK_MAX_ARGS + 1, &b), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "num_args") != NULL);
	EXPECT_EQ(spyre_kernel_builder_create(1, NULL), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_kernel_builder_destroy(NULL), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_builder_create(1, &b), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_kernel_builder_build(b, &img, &len), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "no core") != NULL);
	EXPECT_EQ(spyre_kernel_builder_add_stream(b, 0, NULL, &op, 1, 1, NULL),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "src is NULL") != NULL);
	EXPECT_EQ(spyre_kernel_builder_add_buffer(b, 0, 100, NULL), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "100 bytes") != NULL);
	EXPECT_EQ(spyre_kernel_builder_add_buffer(b, 0, 4u << 20, NULL), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_kernel_builder_add_buffer(b, 0, 16u << 20, NULL),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	/* 4 MiB fits the largest scratchpad but not the default 2 MiB one. */
	EXPECT_EQ(spyre_kernel_builder_build(b, &img, &len), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "core 0: buffers take") != NULL);
	EXPECT_EQ(spyre_kernel_builder_destroy(b), SPYRE_SUCCESS);
}

TAP_MAIN()
