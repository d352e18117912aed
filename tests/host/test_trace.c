// SPDX-License-Identifier: MIT
/*
 * Kernel names and traces on a host without cards, against the library's
 * objects (ASan, UBSan): spyre_kernel_set_name()'s and the builder's name
 * checks, the op library's kernel names (ops/name.c), a launch's slices in
 * the trace JSON (trace.c), and that trace read back by spyre-prof.
 */
#include <limits.h>
#include <unistd.h>

#include "kernel.h"
#include "ops_internal.h"
#include "spyre/spyre.h"
#include "spyre/spyre_kernel_builder.h"
#include "tap.h"
#include "trace.h"

/* A kernel pointer the registry has never seen. */
static spyre_kernel *bogus_kernel(void)
{
	static char junk[256];

	return (spyre_kernel *)junk;
}

TEST(kernel_set_name_checks_the_name_first)
{
	char longest[SPYRE_KERNEL_NAME_MAX + 2];

	EXPECT_EQ(spyre_kernel_set_name(NULL, NULL), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(), "the kernel name is NULL");
	EXPECT_EQ(spyre_kernel_set_name(NULL, ""), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(), "the kernel name is empty");
	memset(longest, 'k', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	EXPECT_EQ(spyre_kernel_set_name(NULL, longest), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(),
		     "the kernel name is 64 bytes; at most 63 (SPYRE_KERNEL_NAME_MAX)");
	EXPECT_EQ(spyre_kernel_set_name(NULL, "my\ngelu"), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(),
		     "the kernel name has a control character (0x0a) at byte 2");
	EXPECT_EQ(spyre_kernel_set_name(NULL, "tab\there"), SPYRE_ERROR_INVALID_ARGUMENT);
	/* A good name reaches the handle check. */
	longest[SPYRE_KERNEL_NAME_MAX] = '\0';
	EXPECT_EQ(spyre_kernel_set_name(NULL, longest), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(), "kernel is NULL");
	EXPECT_EQ(spyre_kernel_set_name(bogus_kernel(), "my_gelu"), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_kernel_set_name(bogus_kernel(), "gélu, ünïcode"),
		  SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_TRUE(spyre_kernel_get_name(NULL) == NULL);
	EXPECT_TRUE(spyre_kernel_get_name(bogus_kernel()) == NULL);
}

TEST(builder_set_name_checks_the_name)
{
	char name[SPYRE_KERNEL_NAME_MAX + 2];
	spyre_kernel_builder *b;

	EXPECT_EQ(spyre_kernel_builder_set_name(NULL, "x"), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(), "builder is NULL");
	ASSERT_EQ(spyre_kernel_builder_create(2, &b), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_kernel_builder_set_name(b, "my_gelu"), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_kernel_builder_set_name(b, NULL), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(), "the kernel name is NULL");
	memset(name, 'b', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	EXPECT_EQ(spyre_kernel_builder_set_name(b, name), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_STREQ(spyre_last_error_detail(),
		     "the kernel name is 64 bytes; at most 63 (SPYRE_KERNEL_NAME_MAX)");
	name[SPYRE_KERNEL_NAME_MAX] = '\0';
	EXPECT_EQ(spyre_kernel_builder_set_name(b, name), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_kernel_builder_destroy(b), SPYRE_SUCCESS);
}

/* ---- the op library's names ---- */

static void layout(struct ops_name_args *a, unsigned slot, spyre_dtype dt, uint32_t ndim,
		   uint32_t d0, uint32_t d1, uint32_t d2)
{
	uint32_t shape[3] = { d0, d1, d2 };

	if (spyre_tensor_layout(dt, ndim, shape, &a->l[slot]) != SPYRE_SUCCESS)
		TAP_FAIL_("layout of slot %u: %s", slot, spyre_last_error_detail());
	a->present |= 1u << slot;
}

/* The name of launch @i of @n, which must also pass spyre_kernel_set_name(). */
static const char *op_name(const struct ops_name_args *a, unsigned i, unsigned n)
{
	static char buf[SPYRE_KERNEL_NAME_MAX + 1];

	ops_kernel_name(a, i, n, buf, sizeof(buf));
	if (spyre_kernel_name_check(buf) != SPYRE_SUCCESS)
		TAP_FAIL_("\"%s\" is not a valid name: %s", buf, spyre_last_error_detail());
	return buf;
}

TEST(op_kernels_are_named_by_op_shape_and_dtype)
{
	struct ops_name_args a;

	memset(&a, 0, sizeof(a));
	a.kind = OPS_K_MATMUL;
	layout(&a, 0, SPYRE_DTYPE_FP16, 2, 64, 256, 0);
	layout(&a, 1, SPYRE_DTYPE_FP16, 2, 256, 64, 0);
	layout(&a, 2, SPYRE_DTYPE_FP16, 2, 64, 64, 0);
	EXPECT_STREQ(op_name(&a, 0, 1), "matmul 64x256x64 fp16");
	a.act = SPYRE_ACT_GELU;
	layout(&a, 2, SPYRE_DTYPE_FP32, 2, 64, 64, 0);
	EXPECT_STREQ(op_name(&a, 1, 3), "matmul 64x256x64 fp16->fp32 gelu (2/3)");
	/* A batched a: M counts its rows. */
	a.act = SPYRE_ACT_NONE;
	layout(&a, 0, SPYRE_DTYPE_FP16, 3, 2, 32, 256);
	layout(&a, 2, SPYRE_DTYPE_FP16, 3, 2, 32, 64);
	EXPECT_STREQ(op_name(&a, 0, 1), "matmul 64x256x64 fp16");

	memset(&a, 0, sizeof(a));
	a.kind = OPS_K_SOFTMAX;
	layout(&a, 0, SPYRE_DTYPE_FP16, 2, 64, 256, 0);
	layout(&a, 1, SPYRE_DTYPE_FP16, 2, 64, 256, 0);
	EXPECT_STREQ(op_name(&a, 0, 1), "softmax 64x256 fp16");
	a.kind = OPS_K_TRANSPOSE;
	layout(&a, 1, SPYRE_DTYPE_FP16, 2, 256, 64, 0);
	EXPECT_STREQ(op_name(&a, 0, 1), "transpose 64x256 fp16");
	a.kind = OPS_K_PERMUTE;
	a.sub = 1 | 0 << 2 | 2 << 4;
	layout(&a, 0, SPYRE_DTYPE_BF16, 3, 8, 16, 64);
	layout(&a, 1, SPYRE_DTYPE_BF16, 3, 16, 8, 64);
	EXPECT_STREQ(op_name(&a, 0, 1), "permute 8x16x64 bf16 [1,0,2]");

	memset(&a, 0, sizeof(a));
	a.kind = OPS_K_ELTWISE;
	a.sub = SPYRE_OP_ADD;
	layout(&a, 0, SPYRE_DTYPE_FP16, 2, 64, 256, 0);
	layout(&a, 1, SPYRE_DTYPE_FP16, 1, 256, 0, 0);
	layout(&a, 2, SPYRE_DTYPE_FP16, 2, 64, 256, 0);
	EXPECT_STREQ(op_name(&a, 0, 1), "add 64x256 fp16 bcast");
	a.sub = SPYRE_OP_COPY;
	a.present &= ~2u;
	layout(&a, 2, SPYRE_DTYPE_FP32, 2, 64, 256, 0);
	EXPECT_STREQ(op_name(&a, 0, 1), "copy 64x256 fp16->fp32");

	memset(&a, 0, sizeof(a));
	a.kind = OPS_K_NORM;
	a.sub = 1;
	layout(&a, 0, SPYRE_DTYPE_FP16, 2, 1, 4096, 0);
	layout(&a, 3, SPYRE_DTYPE_FP16, 2, 1, 4096, 0);
	EXPECT_STREQ(op_name(&a, 0, 1), "rmsnorm 1x4096 fp16");
	a.sub = 0;
	EXPECT_STREQ(op_name(&a, 0, 1), "layernorm 1x4096 fp16");

	memset(&a, 0, sizeof(a));
	a.kind = OPS_K_MLP;
	a.act = SPYRE_ACT_GELU;
	a.mlp_unfused = 1;
	layout(&a, 0, SPYRE_DTYPE_FP16, 2, 64, 256, 0);
	layout(&a, 1, SPYRE_DTYPE_FP16, 2, 256, 1024, 0);
	layout(&a, 2, SPYRE_DTYPE_FP16, 2, 1024, 256, 0);
	layout(&a, 3, SPYRE_DTYPE_FP16, 2, 64, 256, 0);
	EXPECT_STREQ(op_name(&a, 0, 2), "mlp 64x256x1024x256 fp16 gelu unfused (1/2)");
	a.mlp_unfused = 0;
	EXPECT_STREQ(op_name(&a, 0, 1), "mlp 64x256x1024x256 fp16 gelu fused");
	/* A name past 63 bytes is cut to a valid one, not overflowed. */
	ASSERT_EQ(spyre_tensor_layout(SPYRE_DTYPE_FP16, 4, (const uint32_t[]){ 65536, 65536, 256, 64 },
				      &a.l[0]), SPYRE_SUCCESS);
	layout(&a, 1, SPYRE_DTYPE_FP16, 2, 64, 65536, 0);
	layout(&a, 2, SPYRE_DTYPE_FP16, 2, 65536, 65536, 0);
	layout(&a, 3, SPYRE_DTYPE_BF16, 2, 1, 65536, 0);
	a.act = SPYRE_ACT_SILU;
	a.mlp_unfused = 1;
	EXPECT_STREQ(op_name(&a, 11, 12),
		     "mlp 1099511627776x64x65536x65536 fp16->bf16 silu unfused (12/12");
}

/* ---- the trace ---- */

static spyre_launch_profile matmul_profile(uint64_t start_ns, uint64_t end_ns)
{
	spyre_launch_profile p;

	memset(&p, 0, sizeof(p));
	p.device_cycles = 2000;
	p.device_ns = 1000;
	p.dram_bytes_read = 40960;
	p.dram_bytes_written = 8192;
	p.ring_bytes = 256;
	p.ring_byte_hops = 512;
	p.op_firings = 32;
	p.macs = 1048576;
	p.core_busy_cycles[0] = 1000;
	p.core_busy_cycles[5] = 2000;
	p.start_ns = start_ns;
	p.end_ns = end_ns;
	return p;
}

static int contains(const char *hay, const char *needle)
{
	if (strstr(hay, needle))
		return 1;
	printf("  # the trace lacks %s\n", needle);
	return 0;
}

/* Run spyre-prof (next to this test in the build tree) on @path. */
static char *run_prof(const char *args, const char *path)
{
	char exe[PATH_MAX], cmd[2 * PATH_MAX];
	static char out[8192];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t len = 0;
	FILE *f;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(cmd, sizeof(cmd), "%s/../../bin/spyre-prof %s %s", exe, args, path);
	f = popen(cmd, "r");
	if (!f)
		return NULL;
	len = fread(out, 1, sizeof(out) - 1, f);
	out[len] = '\0';
	if (pclose(f) != 0)
		return NULL;
	return out;
}

TEST(launch_slices_carry_names_and_statistics_and_spyre_prof_reads_them)
{
	spyre_launch_profile p1 = matmul_profile(10000, 12000), p2 = matmul_profile(20000, 26000);
	spyre_launch_profile p3 = matmul_profile(30000, 31000);
	char path[] = "/tmp/spyre-trace-test-XXXXXX";
	char *json, *out;
	FILE *f;
	int fd;

	p3.device_ns = 500;
	spyre_trace_name_track(7, 0, "/dev/accel/accel0 (0000:00:03.0)");
	spyre_trace_name_track(7, 3, "stream 3 (queue 1)");
	spyre_trace_launch(7, 3, "matmul 64x256x64 fp16", &p1);
	spyre_trace_launch(7, 3, "matmul 64x256x64 fp16", &p2);
	spyre_trace_launch(7, 3, "softmax 64x256 fp16", &p3);
	spyre_trace_slice(7, 3, "htod", "copy", 1000, 3000, 65536);
	spyre_trace_slice(7, 3, "dtoh", "copy", 40000, 41000, 32768);
	json = spyre_trace_json();
	ASSERT_TRUE(json);
	EXPECT_TRUE(contains(json, "{\"name\":\"matmul 64x256x64 fp16\",\"cat\":\"launch\",\"ph\":\"X\","
			     "\"pid\":7,\"tid\":3,\"ts\":10.000,\"dur\":2.000,\"args\":{"
			     "\"device_ns\":1000,\"device_cycles\":2000,\"dram_bytes_read\":40960,"
			     "\"dram_bytes_written\":8192,\"ring_bytes\":256,\"ring_byte_hops\":512,"
			     "\"op_firings\":32,\"macs\":1048576,\"cores\":2}}"));
	/* Core tracks are named once per device open, busy slices name the stream. */
	EXPECT_TRUE(contains(json, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":7,\"tid\":100005,"
			     "\"args\":{\"name\":\"core 5\"}}"));
	EXPECT_TRUE(contains(json, "{\"name\":\"matmul 64x256x64 fp16\",\"cat\":\"core\",\"ph\":\"X\","
			     "\"pid\":7,\"tid\":100005,\"ts\":10.000,\"dur\":1.000,"
			     "\"args\":{\"busy_cycles\":2000,\"stream\":3}}"));
	EXPECT_TRUE(strstr(json, "\"tid\":100001,\"ts\"") == NULL);	/* core 1 did nothing */
	EXPECT_TRUE(strstr(strstr(json, "core 31") ? strstr(json, "core 31") + 1 : json,
			   "\"name\":\"core 31\"") == NULL);	/* named once */
	EXPECT_TRUE(contains(json, "{\"name\":\"htod\",\"cat\":\"copy\",\"ph\":\"X\",\"pid\":7,"
			     "\"tid\":3,\"ts\":1.000,\"dur\":2.000,\"args\":{\"bytes\":65536}}"));

	fd = mkstemp(path);
	ASSERT_TRUE(fd >= 0);
	f = fdopen(fd, "w");
	ASSERT_TRUE(f);
	fputs(json, f);
	fclose(f);
	free(json);
	out = run_prof("", path);
	EXPECT_TRUE(out != NULL);
	if (out) {
		EXPECT_TRUE(contains(out, "3 launches of 2 kernels, 1 device open, 1 stream"));
		EXPECT_TRUE(contains(out, "    88.9        8.000       2       4.000       2.000"
				     "       6.000       2.000  matmul 64x256x64 fp16\n"));
		EXPECT_TRUE(contains(out, "    11.1        1.000       1       1.000       1.000"
				     "       1.000       0.500  softmax 64x256 fp16\n"));
		EXPECT_TRUE(contains(out, " htod            1          65536        2.000     32.768\n"));
		EXPECT_TRUE(contains(out, " dtoh            1          32768        1.000     32.768\n"));
	}
	out = run_prof("--json", path);
	EXPECT_TRUE(out != NULL);
	if (out)
		EXPECT_TRUE(contains(out, "{\"name\": \"softmax 64x256 fp16\", \"count\": 1, "
				     "\"total_ns\": 1000"));
	unlink(path);
}

TAP_MAIN()
