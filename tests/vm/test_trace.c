// SPDX-License-Identifier: MIT
/*
 * Traces people can read (guest): with SPYRE_TRACE set, op-library
 * launches are named after the op, shape and dtype ("matmul 64x256x64
 * fp16", "softmax 64x256 fp16"), user kernels after the name given to
 * spyre_kernel_set_name() or the builder (a rename leaves queued launches
 * their old name), launch slices carry the LAUNCH statistics, and
 * spyre-prof summarises the file: both op kernels with their counts, the
 * copies by direction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spyre/spyre.h"
#include "spyre/spyre_kernel_builder.h"
#include "spyre/spyre_ops.h"
#include "tap.h"

TAP_MAIN()

#define TRACE "/tmp/test_trace.json"

static spyre_device *dev;
static spyre_stream *stream;

/* SPYRE_TRACE is read once, at the library's first use: set it first. */
static int setup(void)
{
	if (dev)
		return 0;
	unlink(TRACE);
	setenv("SPYRE_TRACE", TRACE, 1);
	if (spyre_device_open(0, &dev) || spyre_stream_create(dev, 1, &stream)) {
		printf("  # setup: %s\n", spyre_last_error_detail());
		return -1;
	}
	return 0;
}

/* A zeroed device tensor of @dt [d0, d1]. */
static int tensor(spyre_tensor *t, spyre_dtype dt, uint32_t d0, uint32_t d1)
{
	uint32_t shape[2] = { d0, d1 };
	spyre_layout l;
	spyre_buffer *b;

	if (spyre_tensor_layout(dt, 2, shape, &l) || spyre_buffer_alloc(dev, l.bytes, 0, &b) ||
	    spyre_memset64(b, 0, 0, l.bytes) || spyre_tensor_init(t, b, 0, &l)) {
		printf("  # tensor: %s\n", spyre_last_error_detail());
		return -1;
	}
	return 0;
}

/* The trace file as a string (malloc'd), after writing it. */
static char *read_trace(void)
{
	char *buf = malloc(1 << 22);
	size_t n;
	FILE *f;

	if (!buf || spyre_trace_flush() || !(f = fopen(TRACE, "r"))) {
		free(buf);
		return NULL;
	}
	n = fread(buf, 1, (1 << 22) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static unsigned count(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

TEST(op_launches_are_named_by_op_shape_and_dtype)
{
	spyre_tensor a, b, c, x, y;
	char *json;
	const char *mm;

	ASSERT_EQ(setup(), 0);
	ASSERT_EQ(tensor(&a, SPYRE_DTYPE_FP16, 64, 256) | tensor(&b, SPYRE_DTYPE_FP16, 256, 64) |
		  tensor(&c, SPYRE_DTYPE_FP16, 64, 64) | tensor(&x, SPYRE_DTYPE_FP16, 64, 256) |
		  tensor(&y, SPYRE_DTYPE_FP16, 64, 256), 0);
	ASSERT_EQ(spyre_op_matmul(stream, &a, &b, SPYRE_ACT_NONE, &c), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_op_softmax(stream, &x, &y), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_op_matmul(stream, &a, &b, SPYRE_ACT_NONE, &c), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_synchronize(stream), SPYRE_SUCCESS);
	json = read_trace();
	ASSERT_TRUE(json);
	EXPECT_EQ(count(json, "{\"name\":\"matmul 64x256x64 fp16\",\"cat\":\"launch\""), 2);
	EXPECT_EQ(count(json, "{\"name\":\"softmax 64x256 fp16\",\"cat\":\"launch\""), 1);
	EXPECT_EQ(count(json, "\"name\":\"kernel "), 0);	/* no anonymous op launch */
	/* The launch's statistics: 64 x 256 x 64 MACs, modelled time, DRAM bytes. */
	mm = strstr(json, "{\"name\":\"matmul 64x256x64 fp16\",\"cat\":\"launch\"");
	ASSERT_TRUE(mm);
	{
		char args[512];
		const char *end = strchr(mm, '}');

		ASSERT_TRUE(end && (size_t)(end - mm) < sizeof(args));
		memcpy(args, mm, (size_t)(end - mm));
		args[end - mm] = '\0';
		printf("  # %s}}\n", args);
		EXPECT_TRUE(strstr(args, "\"macs\":1048576,") != NULL);
		EXPECT_TRUE(strstr(args, "\"device_ns\":") && !strstr(args, "\"device_ns\":0,"));
		EXPECT_TRUE(strstr(args, "\"dram_bytes_read\":") &&
			    !strstr(args, "\"dram_bytes_read\":0,"));
	}
	/* Core tracks are named, and the op's busy cores carry its name. */
	EXPECT_TRUE(strstr(json, "\"args\":{\"name\":\"core 31\"}") != NULL);
	EXPECT_TRUE(strstr(json, "{\"name\":\"softmax 64x256 fp16\",\"cat\":\"core\"") != NULL);
	free(json);
}

/* An fp32 relu over 3 sticks (DRAM argument 0 to argument 1), from the builder. */
static spyre_status relu_kernel(const char *name, spyre_kernel **k)
{
	spyre_endpoint op = spyre_endpoint_op();
	spyre_endpoint src = spyre_endpoint_dram(0, 0, 3), dst = spyre_endpoint_dram(1, 0, 3);
	spyre_op_desc relu = spyre_op_desc_init(SPK_OPC_RELU, SPK_DT_FP32, SPK_DT_FP32, 3, 1, 32);
	spyre_kernel_builder *b;
	spyre_status st = spyre_kernel_builder_create(2, &b);

	if (!st)
		st = spyre_kernel_builder_add_stream(b, 0, &src, &op, 3, 1, &relu.in[0]);
	if (!st)
		st = spyre_kernel_builder_add_stream(b, 0, &op, &dst, 3, 1, &relu.out);
	if (!st)
		st = spyre_kernel_builder_add_op(b, 0, &relu, NULL);
	if (!st && name)
		st = spyre_kernel_builder_set_name(b, name);
	if (!st)
		st = spyre_kernel_builder_load(b, dev, k);
	spyre_kernel_builder_destroy(b);
	return st;
}

TEST(user_kernels_carry_the_name_they_were_launched_with)
{
	spyre_kernel *k, *anon;
	spyre_buffer *in, *out;
	char *json;

	ASSERT_EQ(setup(), 0);
	ASSERT_EQ(spyre_buffer_alloc(dev, 384, 0, &in), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, 384, 0, &out), SPYRE_SUCCESS);
	ASSERT_EQ(relu_kernel("my_relu", &k), SPYRE_SUCCESS);
	EXPECT_STREQ(spyre_kernel_get_name(k), "my_relu");
	ASSERT_EQ(relu_kernel(NULL, &anon), SPYRE_SUCCESS);
	EXPECT_TRUE(!strncmp(spyre_kernel_get_name(anon), "kernel ", 7));
	/* A launch refused for its arguments names the kernel. */
	EXPECT_EQ(spyre_kernel_launch(stream, k), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(), "my_relu: argument 0 is not set");
	ASSERT_EQ(spyre_kernel_set_arg(k, 0, in, 0) | spyre_kernel_set_arg(k, 1, out, 0),
		  SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_launch(stream, k), SPYRE_SUCCESS);
	/* Renamed while that launch is queued: it keeps "my_relu". */
	ASSERT_EQ(spyre_kernel_set_name(k, "relu \"v2\""), SPYRE_SUCCESS);
	EXPECT_STREQ(spyre_kernel_get_name(k), "relu \"v2\"");
	ASSERT_EQ(spyre_kernel_launch(stream, k), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_kernel_set_name(k, ""), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_kernel_get_name(k), "relu \"v2\"");
	ASSERT_EQ(spyre_stream_synchronize(stream), SPYRE_SUCCESS);
	json = read_trace();
	ASSERT_TRUE(json);
	EXPECT_EQ(count(json, "{\"name\":\"my_relu\",\"cat\":\"launch\""), 1);
	EXPECT_EQ(count(json, "{\"name\":\"relu \\\"v2\\\"\",\"cat\":\"launch\""), 1);
	free(json);
	EXPECT_EQ(spyre_kernel_destroy(k), SPYRE_SUCCESS);
	EXPECT_TRUE(spyre_kernel_get_name(k) == NULL);
	EXPECT_EQ(spyre_kernel_destroy(anon), SPYRE_SUCCESS);
}

/* The Count column of spyre-prof's row for kernel @name, or -1. */
static int row_count(const char *out, const char *name)
{
	char key[96];
	const char *p, *line;
	unsigned n;

	snprintf(key, sizeof(key), "  %s\n", name);
	p = strstr(out, key);
	if (!p)
		return -1;
	for (line = p; line > out && line[-1] != '\n'; line--)
		;
	return sscanf(line, "%*f %*f %u", &n) == 1 ? (int)n : -1;
}

/* spyre-prof's output for the trace (the guest's /usr/bin has it). */
static char *prof(const char *args, int *status)
{
	static char out[1 << 16];
	char cmd[256];
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "spyre-prof %s " TRACE " 2>&1", args);
	f = popen(cmd, "r");
	if (!f)
		return NULL;
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	*status = pclose(f);
	return out;
}

TEST(spyre_prof_summarises_the_trace)
{
	spyre_tensor h;
	char *out;
	int status;

	ASSERT_EQ(setup(), 0);
	/* A copy each way, for the copies table. */
	ASSERT_EQ(tensor(&h, SPYRE_DTYPE_FP32, 16, 64), 0);
	{
		static float host[16 * 64];

		ASSERT_EQ(spyre_memcpy_htod_async(stream, h.buf, 0, host, sizeof(host)),
			  SPYRE_SUCCESS);
		ASSERT_EQ(spyre_memcpy_dtoh_async(stream, host, h.buf, 0, sizeof(host)),
			  SPYRE_SUCCESS);
		ASSERT_EQ(spyre_stream_synchronize(stream), SPYRE_SUCCESS);
	}
	free(read_trace());
	out = prof("", &status);
	ASSERT_TRUE(out);
	printf("%s", out);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_TRUE(strstr(out, "Kernels (time: slices on the card's clock)") != NULL);
	/* Two matmuls, one softmax, one launch under each user name: distinct rows. */
	EXPECT_EQ(row_count(out, "matmul 64x256x64 fp16"), 2);
	EXPECT_EQ(row_count(out, "softmax 64x256 fp16"), 1);
	EXPECT_EQ(row_count(out, "my_relu"), 1);
	EXPECT_EQ(row_count(out, "relu \"v2\""), 1);
	EXPECT_TRUE(strstr(out, "\n htod ") != NULL);
	EXPECT_TRUE(strstr(out, "\n dtoh ") != NULL);
	out = prof("--json", &status);
	ASSERT_TRUE(out);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_TRUE(strstr(out, "{\"name\": \"matmul 64x256x64 fp16\", \"count\": 2,") != NULL);
	EXPECT_TRUE(strstr(out, "{\"name\": \"softmax 64x256 fp16\", \"count\": 1,") != NULL);
	EXPECT_TRUE(strstr(out, "{\"direction\": \"htod\", \"count\": ") != NULL);
	EXPECT_TRUE(strstr(out, "\"model_total_ns\": 0,") == NULL);	/* every kernel modelled */
	EXPECT_EQ(spyre_device_close(dev), SPYRE_SUCCESS);
	dev = NULL;
}
