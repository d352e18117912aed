// SPDX-License-Identifier: MIT
/*
 * libspyre's runtime against the card in the guest: every call's normal use
 * checked against CPU results, misuse returning its documented status,
 * graphs, events, profiles, 16 threads on one device, two processes, an
 * async fault surfacing at synchronize, and the SPYRE_TRACE file.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spyre/spyre.h"
#include "spyre_program_builder.h"
#include "tap.h"
#include "uapi/drm/spyre_accel.h"

/*
 * Every ioctl libspyre makes (through libdrm) lands here first: the test
 * counts SUBMITs to check that a graph replay is one job.
 */
static atomic_int submits;

int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (request == DRM_IOCTL_SPYRE_SUBMIT)
		atomic_fetch_add(&submits, 1);
	return (int)syscall(SYS_ioctl, fd, request, arg);
}

#define STICK 128
#define ADD_STICKS 64			/* per core */
#define ADD_CORES 2
#define ADD_FLOATS (ADD_STICKS * ADD_CORES * STICK / 4)
#define ADD_BYTES (ADD_FLOATS * 4)

/* out = a + b over fp32, ADD_STICKS sticks on each of ADD_CORES cores. */
static uint8_t *add_program(size_t *len)
{
	struct pb_program *prog = calloc(1, sizeof(*prog));	/* threads build their own */
	uint8_t *img;

	if (!prog)
		return NULL;
	prog->num_args = 3;
	for (unsigned c = 0; c < ADD_CORES; c++) {
		struct pb_core *core = pb_core(prog, c);
		uint64_t off = (uint64_t)c * ADD_STICKS * STICK;
		struct pb_op *op = pb_op(core, SPK_OPC_ADD, SPK_DT_FP32, SPK_DT_FP32, ADD_STICKS,
					 1, 32);

		op->in[0] = pb_stream(core, pb_linear(SPK_EP_DRAM, 0, off, ADD_STICKS), pb_op_end(),
				      ADD_STICKS, 16);
		op->in[1] = pb_stream(core, pb_linear(SPK_EP_DRAM, 1, off, ADD_STICKS), pb_op_end(),
				      ADD_STICKS, 16);
		op->out = pb_stream(core, pb_op_end(), pb_linear(SPK_EP_DRAM, 2, off, ADD_STICKS),
				    ADD_STICKS, 16);
	}
	img = pb_serialize(prog, len);
	free(prog);
	return img;
}

static spyre_device *open_dev(void)
{
	spyre_device *dev = NULL;

	if (spyre_device_open(0, &dev) != SPYRE_SUCCESS)
		printf("  # open: %s\n", spyre_last_error_detail());
	return dev;
}

static void fill_pattern(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + seed * 7 + (i >> 9));
}

static void fill_floats(float *a, float *b, unsigned seed)
{
	for (int i = 0; i < ADD_FLOATS; i++) {
		a[i] = (float)((i + (int)seed) % 97) * 0.5f;
		b[i] = (float)((i * 3 + (int)seed) % 89) * 0.25f;
	}
}

/* 0 if out == a + b exactly (small halves and quarters add exactly). */
static int check_sum(const float *a, const float *b, const float *out)
{
	for (int i = 0; i < ADD_FLOATS; i++) {
		if (out[i] != a[i] + b[i]) {
			printf("  # out[%d] = %g, want %g\n", i, out[i], a[i] + b[i]);
			return -1;
		}
	}
	return 0;
}

TEST(device_open_properties_and_visible_devices)
{
	spyre_device_properties props;
	spyre_device *dev;
	int count = -1;

	ASSERT_EQ(spyre_device_count(&count), SPYRE_SUCCESS);
	ASSERT_TRUE(count >= 1);
	dev = open_dev();
	ASSERT_TRUE(dev);
	ASSERT_EQ(spyre_device_get_properties(dev, &props), SPYRE_SUCCESS);
	EXPECT_EQ(props.num_cores, 32);
	EXPECT_EQ(props.stick_bytes, 128);
	{
		/* The same card by PCI address: a second, independent open. */
		spyre_device *again = NULL;
		spyre_device_properties p2;

		ASSERT_EQ(spyre_device_open_pci(props.pci_address, &again), SPYRE_SUCCESS);
		ASSERT_EQ(spyre_device_get_properties(again, &p2), SPYRE_SUCCESS);
		EXPECT_STREQ(p2.pci_address, props.pci_address);
		EXPECT_TRUE(again != dev);
		EXPECT_EQ(spyre_device_close(again), SPYRE_SUCCESS);
		EXPECT_EQ(spyre_device_get_properties(again, &p2), SPYRE_ERROR_INVALID_HANDLE);
	}

	setenv("SPYRE_VISIBLE_DEVICES", props.pci_address, 1);
	EXPECT_EQ(spyre_device_count(&count), SPYRE_SUCCESS);
	EXPECT_EQ(count, 1);
	setenv("SPYRE_VISIBLE_DEVICES", "7", 1);
	EXPECT_EQ(spyre_device_count(&count), SPYRE_SUCCESS);
	EXPECT_EQ(count, 0);
	EXPECT_EQ(spyre_device_open(0, &(spyre_device *){ NULL }), SPYRE_ERROR_NO_DEVICE);
	setenv("SPYRE_VISIBLE_DEVICES", "", 1);
	EXPECT_EQ(spyre_device_count(&count), SPYRE_SUCCESS);
	EXPECT_EQ(count, 0);
	unsetenv("SPYRE_VISIBLE_DEVICES");
	EXPECT_EQ(spyre_device_close(dev), SPYRE_SUCCESS);
}

TEST(buffers_alloc_map_free)
{
	spyre_device *dev = open_dev();
	spyre_buffer *d = NULL, *h = NULL, *m = NULL;
	void *p = NULL;

	ASSERT_TRUE(dev);
	ASSERT_EQ(spyre_buffer_alloc(dev, 5000, SPYRE_MEM_DEVICE, &d), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_buffer_size(d), 5000);
	EXPECT_EQ(spyre_buffer_flags(d), SPYRE_MEM_DEVICE);
	EXPECT_TRUE(spyre_buffer_device(d) == dev);
	EXPECT_TRUE(spyre_buffer_device_address(d) >= (4ULL << 30));
	EXPECT_EQ(spyre_buffer_map(d, &p), SPYRE_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(spyre_buffer_alloc(dev, 4096, SPYRE_MEM_HOST, &h), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_buffer_flags(h), SPYRE_MEM_HOST);
	ASSERT_EQ(spyre_buffer_map(h, &p), SPYRE_SUCCESS);
	memset(p, 0x5a, 4096);
	ASSERT_EQ(spyre_buffer_alloc(dev, 8192, SPYRE_MEM_MAPPABLE, &m), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_map(m, &p), SPYRE_SUCCESS);
	/* Device memory starts zeroed, and the CPU sees it through the BAR. */
	EXPECT_EQ(((volatile uint8_t *)p)[100], 0);
	EXPECT_EQ(spyre_buffer_alloc(dev, 0, 0, &d), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_buffer_alloc(dev, 64, SPYRE_MEM_HOST | SPYRE_MEM_MAPPABLE, &d),
		  SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_buffer_alloc(dev, 64, 0x80, &d), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_buffer_alloc(dev, 1ULL << 40, 0, &d), SPYRE_ERROR_INVALID_ARGUMENT);
	/* More than the card has is refused; two buffers of 60% each: the second
	 * runs out of device memory. */
	{
		spyre_device_properties props;
		spyre_buffer *big = NULL, *big2 = NULL;

		ASSERT_EQ(spyre_device_get_properties(dev, &props), SPYRE_SUCCESS);
		EXPECT_EQ(spyre_buffer_alloc(dev, props.mem_bytes + 4096, 0, &big2),
			  SPYRE_ERROR_INVALID_ARGUMENT);
		ASSERT_EQ(spyre_buffer_alloc(dev, props.mem_bytes / 10 * 6, 0, &big),
			  SPYRE_SUCCESS);
		EXPECT_EQ(spyre_buffer_alloc(dev, props.mem_bytes / 10 * 6, 0, &big2),
			  SPYRE_ERROR_OUT_OF_DEVICE_MEMORY);
		EXPECT_TRUE(big2 == NULL);
		EXPECT_EQ(spyre_buffer_free(big), SPYRE_SUCCESS);
	}
	EXPECT_EQ(spyre_buffer_free(h), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_buffer_free(m), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_buffer_free(NULL), SPYRE_SUCCESS);
	/* d (the 5000-byte one) is freed by closing the device. */
	EXPECT_EQ(spyre_device_close(dev), SPYRE_SUCCESS);
}

TEST(blocking_copies_fill_and_dtod)
{
	const size_t n = 5 * 1024 * 1024 + 3;	/* several staging chunks, odd tail */
	spyre_device *dev = open_dev();
	spyre_buffer *a = NULL, *b = NULL;
	uint8_t *src = malloc(n), *dst = malloc(n);
	uint64_t pat = 0x0123456789abcdefULL;

	ASSERT_TRUE(dev && src && dst);
	fill_pattern(src, n, 1);
	ASSERT_EQ(spyre_buffer_alloc(dev, n + 100, 0, &a), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, n + 100, 0, &b), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_htod(a, 7, src, n), SPYRE_SUCCESS);
	memset(dst, 0, n);
	ASSERT_EQ(spyre_memcpy_dtoh(dst, a, 7, n), SPYRE_SUCCESS);
	EXPECT_TRUE(!memcmp(src, dst, n));
	ASSERT_EQ(spyre_memcpy_dtod(b, 0, a, 7, n), SPYRE_SUCCESS);
	memset(dst, 0, n);
	ASSERT_EQ(spyre_memcpy_dtoh(dst, b, 0, n), SPYRE_SUCCESS);
	EXPECT_TRUE(!memcmp(src, dst, n));
	ASSERT_EQ(spyre_memset64(b, 8, pat, 4096), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_dtoh(dst, b, 0, 4096 + 16), SPYRE_SUCCESS);
	EXPECT_TRUE(!memcmp(dst, src, 8));
	for (int i = 0; i < 4096; i++)
		if (dst[8 + i] != (uint8_t)(pat >> (8 * (i % 8))))
			TAP_FAIL_("fill byte %d is 0x%02x", i, dst[8 + i]);
	EXPECT_TRUE(!memcmp(dst + 8 + 4096, src + 8 + 4096, 8));
	/* Zero bytes is allowed and does nothing. */
	EXPECT_EQ(spyre_memcpy_htod(a, 0, src, 0), SPYRE_SUCCESS);
	free(src);
	free(dst);
	spyre_device_close(dev);
}

/* The CPU's strided copy, element by element: what the card must do. */
static void cpu_strided(uint32_t ndim, const uint64_t *shape, uint32_t elem, uint8_t *dst,
			const uint64_t *dstr, const uint8_t *src, const uint64_t *sstr)
{
	uint64_t idx[SPYRE_COPY_MAX_DIMS] = { 0 }, total = 1;

	for (uint32_t i = 0; i < ndim; i++)
		total *= shape[i];
	for (uint64_t k = 0; k < total; k++) {
		uint64_t r = k, so = 0, d = 0;

		for (uint32_t i = ndim; i-- > 0;) {
			idx[i] = r % shape[i];
			r /= shape[i];
			so += idx[i] * sstr[i];
			d += idx[i] * dstr[i];
		}
		memcpy(dst + d, src + so, elem);
	}
}

/* One strided copy on the card against cpu_strided, over whole buffers. */
/* The copy queued on @s, or (@cap not NULL) captured on @cap into a graph
 * replayed on @s. */
static spyre_status strided_copy(spyre_stream *s, spyre_stream *cap, uint32_t ndim,
				 const uint64_t *shape, uint32_t elem, spyre_buffer *b, uint64_t doff,
				 const uint64_t *dstr, spyre_buffer *a, uint64_t soff,
				 const uint64_t *sstr)
{
	spyre_graph *g = NULL;
	spyre_graph_exec *e = NULL;
	spyre_status st;

	if (!cap)
		return spyre_memcpy_strided_async(s, ndim, shape, elem, b, doff, dstr, a, soff, sstr);
	st = spyre_stream_begin_capture(cap);
	if (st == SPYRE_SUCCESS) {
		spyre_status copy = spyre_memcpy_strided_async(cap, ndim, shape, elem, b, doff, dstr,
							       a, soff, sstr);

		st = spyre_stream_end_capture(cap, &g);
		st = copy ? copy : st;
	}
	if (st == SPYRE_SUCCESS)
		st = spyre_graph_instantiate(g, &e);
	spyre_graph_destroy(g);	/* the exec keeps what it needs */
	if (st == SPYRE_SUCCESS)
		st = spyre_graph_launch(e, s);
	if (st == SPYRE_SUCCESS)
		st = spyre_stream_synchronize(s);
	spyre_graph_exec_destroy(e);
	return st;
}

static int strided_case(spyre_stream *s, spyre_stream *cap, spyre_buffer *a, spyre_buffer *b,
			uint64_t bytes, uint32_t ndim, const uint64_t *shape, uint32_t elem,
			uint64_t doff, const uint64_t *dstr, uint64_t soff, const uint64_t *sstr)
{
	uint8_t *src = malloc(bytes), *want = malloc(bytes), *got = malloc(bytes);
	int bad = -1;

	if (!src || !want || !got)
		goto out;
	fill_pattern(src, bytes, 7);
	memset(want, 0x5a, bytes);
	if (spyre_memcpy_htod(a, 0, src, bytes) || spyre_memcpy_htod(b, 0, want, bytes))
		goto out;
	cpu_strided(ndim, shape, elem, want + doff, dstr, src + soff, sstr);
	if (strided_copy(s, cap, ndim, shape, elem, b, doff, dstr, a, soff, sstr) ||
	    spyre_stream_synchronize(s) || spyre_memcpy_dtoh(got, b, 0, bytes))
		goto out;
	bad = 0;
	for (uint64_t i = 0; i < bytes && !bad; i++)
		if (got[i] != want[i]) {
			printf("  # byte %llu is 0x%02x, not 0x%02x\n", (unsigned long long)i,
			       got[i], want[i]);
			bad = 1;
		}
out:
	free(src);
	free(want);
	free(got);
	return bad;
}

/* @call is refused as INVALID_ARGUMENT with @text in its detail message. */
#define EXPECT_REFUSED(call, text)						\
	do {									\
		EXPECT_EQ(call, SPYRE_ERROR_INVALID_ARGUMENT);			\
		EXPECT_TRUE(strstr(spyre_last_error_detail(), text) != NULL);	\
	} while (0)

/*
 * Strided copies: a dense fp16 matrix into the op library's padded rows
 * and back, a transposed view gathered element by element (more entries
 * than one scatter-gather list holds), a broadcast row, a 4-D permute, the
 * gather and the permute also captured into a graph and replayed; and every
 * refusal with its message.
 */
TEST(strided_copies_repack_gather_and_refuse)
{
	const uint64_t bytes = 1 << 20;
	spyre_device *dev = open_dev();
	spyre_stream *s = NULL, *cap = NULL;
	spyre_buffer *a = NULL, *b = NULL;
	spyre_graph *g = NULL;

	ASSERT_TRUE(dev);
	ASSERT_EQ(spyre_stream_create(dev, 1, &s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, bytes, 0, &a), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, bytes, 0, &b), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_create(dev, 1, &cap), SPYRE_SUCCESS);
	{	/* [37, 100] fp16 dense -> rows padded to 128 elements (2 sticks) */
		uint64_t shape[] = { 37, 100 }, d[] = { 256, 2 }, sr[] = { 200, 2 };

		EXPECT_EQ(strided_case(s, NULL, a, b, bytes, 2, shape, 2, 128, d, 6, sr), 0);
		EXPECT_EQ(strided_case(s, NULL, a, b, bytes, 2, shape, 2, 6, sr, 128, d), 0);
	}
	{	/* the transpose of a [90, 70] fp32 matrix: 6300 single elements */
		uint64_t shape[] = { 70, 90 }, d[] = { 360, 4 }, sr[] = { 4, 280 };

		EXPECT_EQ(strided_case(s, NULL, a, b, bytes, 2, shape, 4, 0, d, 0, sr), 0);
		/* and recorded into a graph (two lists), replayed as one job */
		EXPECT_EQ(strided_case(s, cap, a, b, bytes, 2, shape, 4, 0, d, 0, sr), 0);
	}
	{	/* one bf16 row broadcast over 9 rows; a [2, 3, 5, 64] -> [3, 2, 5, 64] permute */
		uint64_t shape[] = { 9, 33 }, d[] = { 66, 2 }, sr[] = { 0, 2 };
		uint64_t p[] = { 3, 2, 5, 64 }, pd[] = { 1280, 640, 128, 2 };
		uint64_t ps[] = { 640, 1920, 128, 2 };

		EXPECT_EQ(strided_case(s, NULL, a, b, bytes, 2, shape, 2, 0, d, 10, sr), 0);
		EXPECT_EQ(strided_case(s, NULL, a, b, bytes, 4, p, 2, 0, pd, 0, ps), 0);
		EXPECT_EQ(strided_case(s, cap, a, b, bytes, 4, p, 2, 0, pd, 0, ps), 0);
	}
	{
		uint64_t shape[] = { 4, 64 }, st[] = { 128, 2 }, z[] = { 0, 2 }, big[] = { 1 << 19, 2 };

		EXPECT_REFUSED(spyre_memcpy_strided_async(s, 0, shape, 2, b, 0, st, a, 0, st), "ndim 0");
		EXPECT_REFUSED(spyre_memcpy_strided_async(s, 2, shape, 3, b, 0, st, a, 0, st),
			       "element size 3");
		EXPECT_REFUSED(spyre_memcpy_strided_async(s, 2, shape, 2, b, 0, z, a, 0, st),
			       "destination stride 0");
		EXPECT_REFUSED(spyre_memcpy_strided_async(s, 2, shape, 2, b, 0, st, a, 0, big),
			       "source's elements reach past");
		EXPECT_REFUSED(spyre_memcpy_strided_async(s, 2, shape, 2, a, 256, st, a, 0, st),
			       "overlap");
		EXPECT_EQ(spyre_memcpy_strided_async(s, 2, shape, 2, NULL, 0, st, a, 0, st),
			  SPYRE_ERROR_INVALID_ARGUMENT);
		/* Refused on a capturing stream: refused the same, nothing recorded. */
		ASSERT_EQ(spyre_stream_begin_capture(cap), SPYRE_SUCCESS);
		EXPECT_REFUSED(spyre_memcpy_strided_async(cap, 2, shape, 2, b, 0, z, a, 0, st),
			       "destination stride 0");
		EXPECT_EQ(spyre_stream_end_capture(cap, &g), SPYRE_SUCCESS);
		EXPECT_EQ(spyre_graph_num_nodes(g), 0);
		spyre_graph_destroy(g);
	}
	spyre_stream_destroy(cap);
	spyre_stream_destroy(s);
	spyre_device_close(dev);
}

/*
 * Row gathers: rows picked out of order, repeated and consecutive (merged
 * into one run), queued and replayed from a graph, against the CPU; each
 * refusal with its message.
 */
TEST(row_gathers_pick_rows_and_refuse)
{
	enum { ROWS = 100, ROW = 96, N = 9 };
	const uint64_t rows[N] = { 5, 6, 7, 0, 99, 3, 3, 42, 43 };
	spyre_device *dev = open_dev();
	spyre_stream *s = NULL, *cap = NULL;
	spyre_buffer *a = NULL, *b = NULL;
	uint8_t *src = malloc(ROWS * ROW), *got = malloc(N * ROW);

	ASSERT_TRUE(dev && src && got);
	ASSERT_EQ(spyre_stream_create(dev, 1, &s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_create(dev, 1, &cap), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, 1 << 16, 0, &a), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, 1 << 16, 0, &b), SPYRE_SUCCESS);
	fill_pattern(src, ROWS * ROW, 3);
	ASSERT_EQ(spyre_memcpy_htod(a, 256, src, ROWS * ROW), SPYRE_SUCCESS);
	for (int replay = 0; replay < 2; replay++) {
		spyre_graph *g = NULL;
		spyre_graph_exec *e = NULL;
		int bad = 0;

		ASSERT_EQ(spyre_memset64(b, 0, 0x5a5a5a5a5a5a5a5aULL, 1 << 16), SPYRE_SUCCESS);
		if (replay) {
			ASSERT_EQ(spyre_stream_begin_capture(cap), SPYRE_SUCCESS);
			EXPECT_EQ(spyre_memcpy_gather_async(cap, b, 128, a, 256, ROWS, ROW, N, rows),
				  SPYRE_SUCCESS);
			ASSERT_EQ(spyre_stream_end_capture(cap, &g), SPYRE_SUCCESS);
			EXPECT_EQ(spyre_graph_num_nodes(g), 1);
			ASSERT_EQ(spyre_graph_instantiate(g, &e), SPYRE_SUCCESS);
			spyre_graph_destroy(g);
			EXPECT_EQ(spyre_graph_launch(e, s), SPYRE_SUCCESS);
		} else {
			EXPECT_EQ(spyre_memcpy_gather_async(s, b, 128, a, 256, ROWS, ROW, N, rows),
				  SPYRE_SUCCESS);
		}
		EXPECT_EQ(spyre_stream_synchronize(s), SPYRE_SUCCESS);
		spyre_graph_exec_destroy(e);
		ASSERT_EQ(spyre_memcpy_dtoh(got, b, 128, N * ROW), SPYRE_SUCCESS);
		for (int i = 0; i < N; i++)
			bad += memcmp(got + i * ROW, src + rows[i] * ROW, ROW) != 0;
		EXPECT_EQ(bad, 0);
	}
	{
		const uint64_t past[] = { 1, 100 };

		EXPECT_REFUSED(spyre_memcpy_gather_async(s, b, 0, a, 256, ROWS, ROW, 2, past),
			       "rows[1] is 100: the source has 100 rows");
		EXPECT_REFUSED(spyre_memcpy_gather_async(s, b, 0, a, 256, ROWS, 0, 2, rows),
			       "row_bytes is 0");
		EXPECT_REFUSED(spyre_memcpy_gather_async(s, b, 0, a, 256, 1000, ROW, 2, rows),
			       "source rows");
		EXPECT_REFUSED(spyre_memcpy_gather_async(s, b, (1 << 16) - ROW, a, 0, ROWS, ROW, 2,
							 rows), "destination buffer");
		EXPECT_REFUSED(spyre_memcpy_gather_async(s, a, 512, a, 256, ROWS, ROW, 2, rows),
			       "overlap");
		EXPECT_REFUSED(spyre_memcpy_gather_async(s, b, 0, a, 0, ROWS, ROW, 2, NULL), "rows");
	}
	free(src);
	free(got);
	spyre_stream_destroy(cap);
	spyre_stream_destroy(s);
	spyre_device_close(dev);
}

/*
 * A buffer freed while queued work still reads it: the free waits for that
 * work, so a buffer allocated right after (which may get the same device
 * addresses) is not what the queued copies read, and nothing faults.
 */
TEST(free_waits_for_queued_work_on_the_buffer)
{
	const uint64_t bytes = 8 << 20;
	spyre_device *dev = open_dev();
	spyre_buffer *src = NULL, *dst[4] = { NULL }, *next = NULL;
	spyre_stream *s = NULL;
	uint64_t *host = malloc(bytes);
	uint64_t src_va, bad = 0;

	ASSERT_TRUE(dev && host);
	ASSERT_EQ(spyre_stream_create(dev, 1, &s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, bytes, 0, &src), SPYRE_SUCCESS);
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(spyre_buffer_alloc(dev, bytes, 0, &dst[i]), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memset64(src, 0, 0x1111111111111111ULL, bytes), SPYRE_SUCCESS);
	src_va = spyre_buffer_device_address(src);
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(spyre_memcpy_dtod_async(s, dst[i], 0, src, 0, bytes), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_free(src), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, bytes, 0, &next), SPYRE_SUCCESS);
	printf("  # freed buffer at 0x%llx, next at 0x%llx\n", (unsigned long long)src_va,
	       (unsigned long long)spyre_buffer_device_address(next));
	ASSERT_EQ(spyre_memset64(next, 0, 0x2222222222222222ULL, bytes), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_stream_synchronize(s), SPYRE_SUCCESS);
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(spyre_memcpy_dtoh(host, dst[i], 0, bytes), SPYRE_SUCCESS);
		for (uint64_t k = 0; k < bytes / 8; k++)
			bad += host[k] != 0x1111111111111111ULL;
	}
	EXPECT_EQ(bad, 0);
	free(host);
	EXPECT_EQ(spyre_device_close(dev), SPYRE_SUCCESS);
}

TEST(async_copies_staging_rules_and_query)
{
	const size_t n = 3 * 1024 * 1024;
	spyre_device *dev = open_dev();
	spyre_stream *s = NULL;
	spyre_buffer *a = NULL;
	uint8_t *src = malloc(n), *keep = malloc(n), *dst = malloc(n);
	spyre_status st;

	ASSERT_TRUE(dev && src && keep && dst);
	ASSERT_EQ(spyre_stream_create(dev, SPYRE_STREAM_PRIORITY_NORMAL, &s), SPYRE_SUCCESS);
	EXPECT_TRUE(spyre_stream_device(s) == dev);
	EXPECT_EQ(spyre_stream_query(s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, n, 0, &a), SPYRE_SUCCESS);
	fill_pattern(src, n, 2);
	memcpy(keep, src, n);
	ASSERT_EQ(spyre_memcpy_htod_async(s, a, 0, src, n), SPYRE_SUCCESS);
	/* The source was read during the call: reusing it now is allowed. */
	memset(src, 0xee, n);
	memset(dst, 0, n);
	ASSERT_EQ(spyre_memcpy_dtoh_async(s, dst, a, 0, n), SPYRE_SUCCESS);
	st = spyre_stream_query(s);
	EXPECT_TRUE(st == SPYRE_SUCCESS || st == SPYRE_ERROR_NOT_READY);
	ASSERT_EQ(spyre_stream_synchronize(s), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_stream_query(s), SPYRE_SUCCESS);
	EXPECT_TRUE(!memcmp(dst, keep, n));
	EXPECT_EQ(spyre_stream_destroy(s), SPYRE_SUCCESS);
	free(src);
	free(keep);
	free(dst);
	spyre_device_close(dev);
}

TEST(pinned_host_buffers_are_dmaed_directly)
{
	const size_t n = 1 << 20;
	spyre_device *dev = open_dev();
	spyre_buffer *h = NULL, *d = NULL;
	spyre_stream *s = NULL;
	uint8_t *p = NULL;

	ASSERT_TRUE(dev);
	ASSERT_EQ(spyre_stream_create(dev, SPYRE_STREAM_PRIORITY_HIGH, &s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, 2 * n, SPYRE_MEM_HOST, &h), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, n, 0, &d), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_map(h, (void **)&p), SPYRE_SUCCESS);
	fill_pattern(p, n, 3);
	memset(p + n, 0, n);
	ASSERT_EQ(spyre_memcpy_htod_async(s, d, 0, p, n), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_dtoh_async(s, p + n, d, 0, n), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_synchronize(s), SPYRE_SUCCESS);
	EXPECT_TRUE(!memcmp(p, p + n, n));
	/* Host buffer to host buffer through dtod. */
	ASSERT_EQ(spyre_memset64_async(s, h, n, 0x1111111111111111ULL, 64), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_synchronize(s), SPYRE_SUCCESS);
	EXPECT_EQ(p[n + 63], 0x11);
	spyre_device_close(dev);
}

TEST(events_order_streams_and_time_the_card)
{
	const size_t n = 4 << 20;
	spyre_device *dev = open_dev();
	spyre_stream *s1 = NULL, *s2 = NULL;
	spyre_event *e0 = NULL, *e1 = NULL, *never = NULL;
	spyre_buffer *a = NULL, *b = NULL;
	uint8_t *src = malloc(n), *dst = malloc(n);
	double ms = -1;

	ASSERT_TRUE(dev && src && dst);
	ASSERT_EQ(spyre_stream_create(dev, 0, &s1), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_create(dev, 3, &s2), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_event_create(dev, &e0), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_event_create(dev, &e1), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_event_create(dev, &never), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, n, 0, &a), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, n, 0, &b), SPYRE_SUCCESS);
	fill_pattern(src, n, 4);
	EXPECT_EQ(spyre_event_query(never), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_event_synchronize(never), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_event_elapsed_ms(never, never, &ms), SPYRE_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(spyre_event_record(e0, s1), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_htod_async(s1, a, 0, src, n), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_event_record(e1, s1), SPYRE_SUCCESS);
	/* s2 copies a -> b only after s1's upload: the wait orders them. */
	ASSERT_EQ(spyre_stream_wait_event(s2, e1), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_stream_wait_event(s2, never), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_dtod_async(s2, b, 0, a, 0, n), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_dtoh_async(s2, dst, b, 0, n), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_event_synchronize(e1), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_event_query(e1), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_event_elapsed_ms(e0, e1, &ms), SPYRE_SUCCESS);
	/* Device time for 4 MiB of DMA: positive and below a minute. */
	EXPECT_TRUE(ms > 0 && ms < 60000);
	printf("  # 4 MiB htod between events: %.3f ms of device time\n", ms);
	ASSERT_EQ(spyre_stream_synchronize(s2), SPYRE_SUCCESS);
	EXPECT_TRUE(!memcmp(src, dst, n));
	{
		/*
		 * No buffer in common, different hardware queues: only the wait
		 * orders s2's record after s1's, so the card's clock must say so.
		 */
		spyre_event *after = NULL;
		spyre_buffer *c = NULL;

		ASSERT_EQ(spyre_event_create(dev, &after), SPYRE_SUCCESS);
		ASSERT_EQ(spyre_buffer_alloc(dev, n, 0, &c), SPYRE_SUCCESS);
		for (int round = 0; round < 3; round++) {
			ASSERT_EQ(spyre_memset64_async(s1, a, 0, 0x42, n), SPYRE_SUCCESS);
			ASSERT_EQ(spyre_memset64_async(s1, a, 0, 0x43, n), SPYRE_SUCCESS);
			ASSERT_EQ(spyre_event_record(e1, s1), SPYRE_SUCCESS);
			ASSERT_EQ(spyre_stream_wait_event(s2, e1), SPYRE_SUCCESS);
			ASSERT_EQ(spyre_event_record(after, s2), SPYRE_SUCCESS);
			ASSERT_EQ(spyre_memset64_async(s2, c, 0, 0x44, 4096), SPYRE_SUCCESS);
			ASSERT_EQ(spyre_stream_synchronize(s2), SPYRE_SUCCESS);
			ASSERT_EQ(spyre_stream_synchronize(s1), SPYRE_SUCCESS);
			ASSERT_EQ(spyre_event_elapsed_ms(e1, after, &ms), SPYRE_SUCCESS);
			EXPECT_TRUE(ms >= 0);
		}
		spyre_event_destroy(after);
	}
	EXPECT_EQ(spyre_event_destroy(e0), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_event_destroy(NULL), SPYRE_SUCCESS);
	free(src);
	free(dst);
	spyre_device_close(dev);
}

struct add_setup {
	spyre_device *dev;
	spyre_kernel *k;
	spyre_buffer *a, *b, *out;
	float ha[ADD_FLOATS], hb[ADD_FLOATS], hout[ADD_FLOATS];
};

static int add_setup(struct add_setup *t, spyre_device *dev, unsigned seed)
{
	uint8_t *img;
	size_t len;
	int ret = -1;

	memset(t, 0, sizeof(*t));
	t->dev = dev;
	img = add_program(&len);
	if (!img)
		return -1;
	if (spyre_kernel_load(dev, img, len, &t->k) == SPYRE_SUCCESS &&
	    spyre_buffer_alloc(dev, ADD_BYTES, 0, &t->a) == SPYRE_SUCCESS &&
	    spyre_buffer_alloc(dev, ADD_BYTES, 0, &t->b) == SPYRE_SUCCESS &&
	    spyre_buffer_alloc(dev, ADD_BYTES, 0, &t->out) == SPYRE_SUCCESS &&
	    spyre_kernel_set_arg(t->k, 0, t->a, 0) == SPYRE_SUCCESS &&
	    spyre_kernel_set_arg(t->k, 1, t->b, 0) == SPYRE_SUCCESS &&
	    spyre_kernel_set_arg(t->k, 2, t->out, 0) == SPYRE_SUCCESS)
		ret = 0;
	else
		printf("  # add setup: %s\n", spyre_last_error_detail());
	free(img);
	fill_floats(t->ha, t->hb, seed);
	return ret;
}

static void add_teardown(struct add_setup *t)
{
	spyre_kernel_destroy(t->k);
	spyre_buffer_free(t->a);
	spyre_buffer_free(t->b);
	spyre_buffer_free(t->out);
}

TEST(kernel_launch_matches_cpu_and_profiles)
{
	static struct add_setup t;
	spyre_launch_profile prof, last;
	spyre_device *dev = open_dev();
	spyre_stream *s = NULL;
	uint64_t busy = 0;

	ASSERT_TRUE(dev);
	ASSERT_EQ(add_setup(&t, dev, 5), 0);
	EXPECT_EQ(spyre_kernel_num_args(t.k), 3);
	EXPECT_EQ(spyre_kernel_last_profile(t.k, &last), SPYRE_ERROR_NOT_READY);
	ASSERT_EQ(spyre_stream_create(dev, 1, &s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_htod_async(s, t.a, 0, t.ha, ADD_BYTES), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_htod_async(s, t.b, 0, t.hb, ADD_BYTES), SPYRE_SUCCESS);
	memset(&prof, 0, sizeof(prof));
	ASSERT_EQ(spyre_kernel_launch_profiled(s, t.k, &prof), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_dtoh_async(s, t.hout, t.out, 0, ADD_BYTES), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_synchronize(s), SPYRE_SUCCESS);
	EXPECT_EQ(check_sum(t.ha, t.hb, t.hout), 0);
	/* The card's statistics: two inputs read, one output written. */
	EXPECT_TRUE(prof.device_ns > 0 && prof.device_cycles > 0);
	EXPECT_EQ(prof.dram_bytes_read, 2 * ADD_BYTES);
	EXPECT_EQ(prof.dram_bytes_written, ADD_BYTES);
	EXPECT_TRUE(prof.end_ns > prof.start_ns);
	for (int c = 0; c < ADD_CORES; c++) {
		EXPECT_TRUE(prof.core_busy_cycles[c] > 0);
		busy += prof.core_busy_cycles[c];
	}
	EXPECT_EQ(prof.core_busy_cycles[ADD_CORES], 0);
	printf("  # add: %llu device ns, %llu busy cycles on %d cores\n",
	       (unsigned long long)prof.device_ns, (unsigned long long)busy, ADD_CORES);
	ASSERT_EQ(spyre_kernel_last_profile(t.k, &last), SPYRE_SUCCESS);
	EXPECT_EQ(last.device_ns, prof.device_ns);
	/* Plain launch, new inputs, blocking read-back. */
	fill_floats(t.ha, t.hb, 6);
	ASSERT_EQ(spyre_memcpy_htod(t.a, 0, t.ha, ADD_BYTES), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_htod(t.b, 0, t.hb, ADD_BYTES), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_launch(s, t.k), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_synchronize(s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_dtoh(t.hout, t.out, 0, ADD_BYTES), SPYRE_SUCCESS);
	EXPECT_EQ(check_sum(t.ha, t.hb, t.hout), 0);
	/* Raw addresses work too: b + 0 as argument 0 gives out = b + b. */
	ASSERT_EQ(spyre_kernel_set_arg_u64(t.k, 0, spyre_buffer_device_address(t.b)),
		  SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_launch(s, t.k), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_dtoh_async(s, t.hout, t.out, 0, ADD_BYTES), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_synchronize(s), SPYRE_SUCCESS);
	EXPECT_EQ(check_sum(t.hb, t.hb, t.hout), 0);
	EXPECT_EQ(spyre_trace_flush(), SPYRE_SUCCESS);	/* no SPYRE_TRACE: nothing to do */
	add_teardown(&t);
	spyre_device_close(dev);
}

TEST(graph_replays_as_one_job_with_fresh_inputs)
{
	static struct add_setup t;
	spyre_device *dev = open_dev();
	spyre_stream *s = NULL;
	spyre_buffer *pin = NULL;
	spyre_graph *g = NULL;
	spyre_graph_exec *x = NULL;
	spyre_launch_profile prof;
	float *pa, *pb, *pout, tmp[4];

	ASSERT_TRUE(dev);
	ASSERT_EQ(add_setup(&t, dev, 7), 0);
	ASSERT_EQ(spyre_stream_create(dev, 2, &s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, 3 * ADD_BYTES, SPYRE_MEM_HOST, &pin), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_map(pin, (void **)&pa), SPYRE_SUCCESS);
	pb = pa + ADD_FLOATS;
	pout = pb + ADD_FLOATS;

	EXPECT_EQ(spyre_stream_end_capture(s, &g), SPYRE_ERROR_CAPTURE);
	ASSERT_EQ(spyre_stream_begin_capture(s), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_stream_begin_capture(s), SPYRE_ERROR_CAPTURE);
	ASSERT_EQ(spyre_memcpy_htod_async(s, t.a, 0, pa, ADD_BYTES), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_htod_async(s, t.b, 0, pb, ADD_BYTES), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_launch(s, t.k), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_dtoh_async(s, pout, t.out, 0, ADD_BYTES), SPYRE_SUCCESS);
	/* Pageable memory, synchronisation and events cannot be captured: the
	 * calls are refused and the capture goes on without them. */
	EXPECT_EQ(spyre_memcpy_htod_async(s, t.a, 0, tmp, sizeof(tmp)), SPYRE_ERROR_CAPTURE);
	EXPECT_EQ(spyre_memcpy_dtoh_async(s, tmp, t.a, 0, sizeof(tmp)), SPYRE_ERROR_CAPTURE);
	EXPECT_EQ(spyre_stream_synchronize(s), SPYRE_ERROR_CAPTURE);
	EXPECT_EQ(spyre_stream_query(s), SPYRE_ERROR_CAPTURE);
	ASSERT_EQ(spyre_stream_end_capture(s, &g), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_graph_num_nodes(g), 4);
	ASSERT_EQ(spyre_graph_instantiate(g, &x), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_graph_destroy(g), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_graph_exec_profile(x, 0, &prof), SPYRE_ERROR_NOT_READY);
	/* Nothing ran during the capture. */
	EXPECT_EQ(spyre_stream_query(s), SPYRE_SUCCESS);
	for (unsigned r = 0; r < 5; r++) {
		int before;

		fill_floats(pa, pb, 10 + r);
		memset(pout, 0, ADD_BYTES);
		before = atomic_load(&submits);
		ASSERT_EQ(spyre_graph_launch(x, s), SPYRE_SUCCESS);
		/* Two uploads, a launch and a download: one SUBMIT. */
		EXPECT_EQ(atomic_load(&submits) - before, 1);
		ASSERT_EQ(spyre_stream_synchronize(s), SPYRE_SUCCESS);
		EXPECT_EQ(check_sum(pa, pb, pout), 0);
	}
	ASSERT_EQ(spyre_graph_exec_profile(x, 0, &prof), SPYRE_SUCCESS);
	EXPECT_EQ(prof.dram_bytes_read, 2 * ADD_BYTES);
	EXPECT_EQ(spyre_graph_exec_profile(x, 1, &prof), SPYRE_ERROR_INVALID_ARGUMENT);
	/* Back-to-back replays, one synchronisation. */
	for (unsigned r = 0; r < 8; r++)
		ASSERT_EQ(spyre_graph_launch(x, s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_synchronize(s), SPYRE_SUCCESS);
	EXPECT_EQ(check_sum(pa, pb, pout), 0);
	/* A buffer the graph uses is gone: the replay is refused. */
	spyre_buffer_free(t.out);
	t.out = NULL;
	EXPECT_EQ(spyre_graph_launch(x, s), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_graph_exec_destroy(x), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_graph_launch(x, s), SPYRE_ERROR_INVALID_HANDLE);
	add_teardown(&t);
	spyre_device_close(dev);
}

TEST(misuse_returns_documented_errors)
{
	static struct add_setup t;
	spyre_device *dev = open_dev(), *dev2 = open_dev();
	spyre_stream *s = NULL, *s2 = NULL, *dead = NULL;
	spyre_buffer *buf = NULL, *freed = NULL, *other = NULL;
	spyre_kernel *k2 = NULL, *bad = NULL;
	uint8_t host[256] = { 0 };
	uint8_t *img;
	size_t len;

	ASSERT_TRUE(dev && dev2);
	ASSERT_EQ(add_setup(&t, dev, 8), 0);
	ASSERT_EQ(spyre_stream_create(dev, 0, &s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_create(dev2, 0, &s2), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_stream_create(dev, 4, &dead), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_stream_create(dev, -1, &dead), SPYRE_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(spyre_buffer_alloc(dev, 4096, 0, &buf), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, 4096, 0, &freed), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev2, 4096, 0, &other), SPYRE_SUCCESS);

	/* Freed buffer. */
	ASSERT_EQ(spyre_buffer_free(freed), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_memcpy_htod(freed, 0, host, 16), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_memcpy_htod_async(s, freed, 0, host, 16), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_memcpy_dtoh_async(s, host, freed, 0, 16), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_buffer_free(freed), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_kernel_set_arg(t.k, 0, freed, 0), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_buffer_size(freed), 0);
	EXPECT_TRUE(spyre_buffer_device(freed) == NULL);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "") != NULL);

	/* Wrong device. */
	EXPECT_EQ(spyre_memcpy_htod_async(s, other, 0, host, 16), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_memcpy_dtod_async(s, buf, 0, other, 0, 16), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_kernel_set_arg(t.k, 0, other, 0), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_kernel_launch(s2, t.k), SPYRE_ERROR_INVALID_ARGUMENT);

	/* Out of range. */
	EXPECT_EQ(spyre_memcpy_htod(buf, 4000, host, 200), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "outside") != NULL);
	EXPECT_EQ(spyre_memcpy_dtoh(host, buf, UINT64_MAX - 2, 8), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_memcpy_dtod(buf, 0, buf, 8, 16), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_memset64(buf, 4096, 0, 1), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_memcpy_htod(buf, 0, NULL, 8), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_kernel_set_arg(t.k, 3, buf, 0), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_kernel_set_arg(t.k, 0, buf, 4096), SPYRE_ERROR_INVALID_ARGUMENT);

	/* Missing arguments, bad images. */
	img = add_program(&len);
	ASSERT_TRUE(img);
	ASSERT_EQ(spyre_kernel_load(dev, img, len, &k2), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_set_arg(k2, 0, buf, 0), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_kernel_launch(s, k2), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "argument 1 is not set") != NULL);
	EXPECT_EQ(spyre_kernel_load(dev, img, len - 1, &bad), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(bad == NULL);
	img[0] ^= 0xff;
	EXPECT_EQ(spyre_kernel_load(dev, img, len, &bad), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "not a Spyre program") != NULL);
	free(img);
	/* A launch whose argument buffer was freed since set_arg. */
	EXPECT_EQ(spyre_kernel_set_arg(t.k, 2, buf, 0), SPYRE_SUCCESS);
	spyre_buffer_free(buf);
	EXPECT_EQ(spyre_kernel_launch(s, t.k), SPYRE_ERROR_INVALID_HANDLE);

	/* Destroyed stream. */
	ASSERT_EQ(spyre_stream_create(dev, 0, &dead), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_destroy(dead), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_stream_synchronize(dead), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_stream_query(dead), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_memcpy_htod_async(dead, t.a, 0, host, 16), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_kernel_launch(dead, t.k), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_stream_destroy(dead), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_TRUE(spyre_stream_device(dead) == NULL);
	/* Destroyed kernel. */
	ASSERT_EQ(spyre_kernel_destroy(k2), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_kernel_launch(s, k2), SPYRE_ERROR_INVALID_HANDLE);
	EXPECT_EQ(spyre_kernel_num_args(k2), 0);
	/* Nothing above reached the card in a bad state. */
	EXPECT_EQ(spyre_stream_synchronize(s), SPYRE_SUCCESS);
	add_teardown(&t);
	spyre_device_close(dev);
	spyre_device_close(dev2);
}

/*
 * Busy ns of each hardware queue for the one spyre file this process has
 * open, from the driver's fdinfo; -1 if there is not exactly one.
 */
static int queue_busy(uint64_t busy[4])
{
	char path[64], line[128];
	int found = 0;

	for (int fd = 3; fd < 1024; fd++) {
		int is_spyre = 0;
		uint64_t b[4] = { 0 };
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			int q;
			unsigned long long ns;

			if (strstr(line, "drm-driver:") && strstr(line, "spyre"))
				is_spyre = 1;
			if (sscanf(line, "drm-engine-queue%d: %llu", &q, &ns) == 2 && q >= 0 && q < 4)
				b[q] = ns;
		}
		fclose(f);
		if (is_spyre) {
			memcpy(busy, b, sizeof(b));
			found++;
		}
	}
	return found == 1 ? 0 : -1;
}

/* A stream's priority is the hardware queue its work runs on. */
TEST(priorities_map_to_hardware_queues)
{
	for (int p = 0; p < 4; p++) {
		spyre_device *dev = open_dev();
		spyre_stream *s = NULL;
		spyre_buffer *b = NULL;
		uint64_t busy[4];

		ASSERT_TRUE(dev);
		ASSERT_EQ(spyre_stream_create(dev, p, &s), SPYRE_SUCCESS);
		ASSERT_EQ(spyre_buffer_alloc(dev, 8 << 20, 0, &b), SPYRE_SUCCESS);
		ASSERT_EQ(spyre_memset64_async(s, b, 0, 7, 8 << 20), SPYRE_SUCCESS);
		ASSERT_EQ(spyre_stream_synchronize(s), SPYRE_SUCCESS);
		ASSERT_EQ(queue_busy(busy), 0);
		for (int q = 0; q < 4; q++)
			if ((busy[q] > 0) != (q == p))
				TAP_FAIL_("priority %d: queue %d busy %llu ns", p, q,
					  (unsigned long long)busy[q]);
		spyre_device_close(dev);
	}
}

/* More jobs than the command ring holds at once: slots are reused in order. */
TEST(command_ring_wraps_without_losing_work)
{
	enum { JOBS = 2500 };	/* 4 slots each: more than the 8192-slot ring */
	spyre_device *dev = open_dev();
	spyre_stream *s = NULL;
	spyre_buffer *b = NULL;
	static uint64_t out[JOBS];
	int bad = 0;

	ASSERT_TRUE(dev);
	ASSERT_EQ(spyre_stream_create(dev, 0, &s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, sizeof(out), 0, &b), SPYRE_SUCCESS);
	for (uint64_t i = 0; i < JOBS; i++)
		ASSERT_EQ(spyre_memset64_async(s, b, i * 8, 0x1000 + i * 3, 8), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_dtoh_async(s, out, b, 0, sizeof(out)), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_synchronize(s), SPYRE_SUCCESS);
	for (uint64_t i = 0; i < JOBS; i++)
		bad += out[i] != 0x1000 + i * 3;
	EXPECT_EQ(bad, 0);
	spyre_device_close(dev);
}

/* Every card at once (vm-run.sh --cards N gives the guest several). */
TEST(several_cards_at_once)
{
	spyre_device *devs[8] = { NULL };
	spyre_stream *s[8] = { NULL };
	spyre_buffer *b[8] = { NULL };
	static uint8_t src[8][65536], dst[8][65536];
	int count = 0;

	ASSERT_EQ(spyre_device_count(&count), SPYRE_SUCCESS);
	if (count < 2)
		SKIP("one card");
	if (count > 8)
		count = 8;
	for (int i = 0; i < count; i++) {
		ASSERT_EQ(spyre_device_open(i, &devs[i]), SPYRE_SUCCESS);
		ASSERT_EQ(spyre_stream_create(devs[i], 0, &s[i]), SPYRE_SUCCESS);
		ASSERT_EQ(spyre_buffer_alloc(devs[i], sizeof(src[i]), 0, &b[i]), SPYRE_SUCCESS);
		fill_pattern(src[i], sizeof(src[i]), 20 + (unsigned)i);
	}
	/* Queue on every card, then wait for all: the copies overlap. */
	for (int i = 0; i < count; i++) {
		ASSERT_EQ(spyre_memcpy_htod_async(s[i], b[i], 0, src[i], sizeof(src[i])),
			  SPYRE_SUCCESS);
		ASSERT_EQ(spyre_memcpy_dtoh_async(s[i], dst[i], b[i], 0, sizeof(dst[i])),
			  SPYRE_SUCCESS);
	}
	for (int i = 0; i < count; i++) {
		ASSERT_EQ(spyre_stream_synchronize(s[i]), SPYRE_SUCCESS);
		EXPECT_TRUE(!memcmp(src[i], dst[i], sizeof(src[i])));
	}
	/* A buffer of one card on another card's stream is refused. */
	EXPECT_EQ(spyre_memcpy_htod_async(s[0], b[1], 0, src[0], 64), SPYRE_ERROR_INVALID_ARGUMENT);
	for (int i = 0; i < count; i++)
		EXPECT_EQ(spyre_device_close(devs[i]), SPYRE_SUCCESS);
	printf("  # %d cards\n", count);
}

/* ---- 16 threads on one device ---- */

struct thread_arg {
	spyre_device *dev;
	spyre_stream *shared;
	spyre_kernel *shared_k;		/* launched by every thread, arguments fixed */
	unsigned id;
	int failures;
};

static void *worker(void *p)
{
	struct thread_arg *ta = p;
	static __thread struct add_setup t;
	spyre_stream *s = NULL;
	uint8_t src[8192], dst[8192];

	if (add_setup(&t, ta->dev, ta->id) ||
	    spyre_stream_create(ta->dev, (int)(ta->id % 4), &s) != SPYRE_SUCCESS) {
		ta->failures++;
		return NULL;
	}
	for (unsigned it = 0; it < 6; it++) {
		fill_floats(t.ha, t.hb, ta->id * 100 + it);
		memset(t.hout, 0, sizeof(t.hout));
		if (spyre_memcpy_htod_async(s, t.a, 0, t.ha, ADD_BYTES) ||
		    spyre_memcpy_htod_async(s, t.b, 0, t.hb, ADD_BYTES) ||
		    spyre_kernel_launch(s, t.k) ||
		    spyre_memcpy_dtoh_async(s, t.hout, t.out, 0, ADD_BYTES) ||
		    spyre_stream_synchronize(s) || check_sum(t.ha, t.hb, t.hout)) {
			printf("  # thread %u: %s\n", ta->id, spyre_last_error_detail());
			ta->failures++;
		}
		if (spyre_kernel_launch(s, ta->shared_k)) {
			printf("  # thread %u shared kernel: %s\n", ta->id,
			       spyre_last_error_detail());
			ta->failures++;
		}
		/* The shared stream and the blocking path, with this thread's data. */
		fill_pattern(src, sizeof(src), ta->id + it);
		memset(dst, 0, sizeof(dst));
		if (spyre_memcpy_htod_async(ta->shared, t.a, 0, src, sizeof(src)) ||
		    spyre_memcpy_dtoh_async(ta->shared, dst, t.a, 0, sizeof(src)) ||
		    spyre_stream_synchronize(ta->shared) || memcmp(src, dst, sizeof(src))) {
			printf("  # thread %u shared stream: %s\n", ta->id,
			       spyre_last_error_detail());
			ta->failures++;
		}
		memset(dst, 0, sizeof(dst));
		if (spyre_memcpy_htod(t.b, 0, src, sizeof(src)) ||
		    spyre_memcpy_dtoh(dst, t.b, 0, sizeof(src)) || memcmp(src, dst, sizeof(src))) {
			printf("  # thread %u blocking: %s\n", ta->id, spyre_last_error_detail());
			ta->failures++;
		}
	}
	spyre_stream_destroy(s);
	add_teardown(&t);
	return NULL;
}

TEST(sixteen_threads_share_a_device)
{
	static struct add_setup st;
	struct thread_arg args[16];
	pthread_t th[16];
	spyre_device *dev = open_dev();
	spyre_stream *shared = NULL;
	int failures = 0;

	ASSERT_TRUE(dev);
	ASSERT_EQ(spyre_stream_create(dev, 1, &shared), SPYRE_SUCCESS);
	ASSERT_EQ(add_setup(&st, dev, 99), 0);
	ASSERT_EQ(spyre_memcpy_htod(st.a, 0, st.ha, ADD_BYTES), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_htod(st.b, 0, st.hb, ADD_BYTES), SPYRE_SUCCESS);
	for (unsigned i = 0; i < 16; i++) {
		args[i] = (struct thread_arg){ dev, shared, st.k, i, 0 };
		ASSERT_EQ(pthread_create(&th[i], NULL, worker, &args[i]), 0);
	}
	for (unsigned i = 0; i < 16; i++) {
		pthread_join(th[i], NULL);
		failures += args[i].failures;
	}
	EXPECT_EQ(failures, 0);
	/* The kernel every thread launched: the buffer order makes it wait. */
	ASSERT_EQ(spyre_memcpy_dtoh(st.hout, st.out, 0, ADD_BYTES), SPYRE_SUCCESS);
	EXPECT_EQ(check_sum(st.ha, st.hb, st.hout), 0);
	EXPECT_EQ(spyre_device_close(dev), SPYRE_SUCCESS);
}

/* Runs the add kernel a few times; 0 if every result was right. */
static int add_rounds(unsigned seed)
{
	static struct add_setup t;
	spyre_device *dev = open_dev();
	spyre_stream *s = NULL;
	int bad = 0;

	if (!dev || add_setup(&t, dev, seed) || spyre_stream_create(dev, 0, &s))
		return 1;
	for (unsigned it = 0; it < 10; it++) {
		fill_floats(t.ha, t.hb, seed + it);
		bad |= spyre_memcpy_htod_async(s, t.a, 0, t.ha, ADD_BYTES) ||
		       spyre_memcpy_htod_async(s, t.b, 0, t.hb, ADD_BYTES) ||
		       spyre_kernel_launch(s, t.k) ||
		       spyre_memcpy_dtoh_async(s, t.hout, t.out, 0, ADD_BYTES) ||
		       spyre_stream_synchronize(s) || check_sum(t.ha, t.hb, t.hout);
	}
	add_teardown(&t);
	spyre_device_close(dev);
	return bad;
}

TEST(two_processes_at_once)
{
	int status = -1;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (!pid)
		_exit(add_rounds(40) ? 1 : 0);
	EXPECT_EQ(add_rounds(50), 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/*
 * The output buffer holds core 0's half of the sum only: core 1's first
 * write lands on the guard page right after it, the one address the card
 * can fault on.  The fault surfaces at synchronize with that exact address.
 */
TEST(async_fault_surfaces_at_synchronize)
{
	static struct add_setup t;
	spyre_device *dev = open_dev();
	spyre_stream *s = NULL, *other = NULL;
	spyre_buffer *b = NULL, *half = NULL;
	spyre_fault_info fi;
	uint64_t half_va, want;
	char want_text[128];

	ASSERT_TRUE(dev);
	ASSERT_EQ(add_setup(&t, dev, 9), 0);
	ASSERT_EQ(spyre_stream_create(dev, 0, &s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_create(dev, 1, &other), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, ADD_BYTES / 2, 0, &half), SPYRE_SUCCESS);
	half_va = spyre_buffer_device_address(half);
	ASSERT_TRUE(half_va != 0);
	ASSERT_EQ(spyre_kernel_set_arg(t.k, 2, half, 0), SPYRE_SUCCESS);
	/* No fault yet: get_fault says so. */
	ASSERT_EQ(spyre_stream_get_fault(s, &fi), SPYRE_SUCCESS);
	EXPECT_EQ(fi.status, SPYRE_SUCCESS);
	EXPECT_EQ(fi.address_known, 0);
	EXPECT_EQ(spyre_stream_get_fault(s, NULL), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_stream_get_fault(NULL, &fi), SPYRE_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(spyre_stream_get_fault((spyre_stream *)&fi, &fi), SPYRE_ERROR_INVALID_HANDLE);
	ASSERT_EQ(spyre_kernel_launch(s, t.k), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_stream_synchronize(s), SPYRE_ERROR_DEVICE_FAULT);
	printf("  # detail: %s\n", spyre_last_error_detail());
	want = half_va + ADD_BYTES / 2;
	/* Core 1's output stream (2) wrote past the buffer, as the card says. */
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "could not reach device memory (MMU fault): "
			   "core 1 stream 2: ") != NULL);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "kernel") != NULL);
	snprintf(want_text, sizeof(want_text), "write of 0x%llx (argument 2 = 0x%llx, +0x%x)",
		 (unsigned long long)want, (unsigned long long)half_va, ADD_BYTES / 2);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), want_text) != NULL);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "nothing mapped there") != NULL);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "no live buffer") == NULL);
	/* The same, field by field. */
	ASSERT_EQ(spyre_stream_get_fault(s, &fi), SPYRE_SUCCESS);
	EXPECT_EQ(fi.status, SPYRE_ERROR_DEVICE_FAULT);
	EXPECT_EQ(fi.job_status, 2u);
	EXPECT_EQ(fi.job, 1u);
	EXPECT_TRUE(fi.driver_job_id != 0);
	EXPECT_EQ(fi.queue, 0u);
	EXPECT_EQ(fi.address_known, 1);
	EXPECT_EQ(fi.address, want);
	EXPECT_EQ(fi.access, SPYRE_FAULT_ACCESS_WRITE);
	EXPECT_EQ(fi.reason, SPYRE_FAULT_REASON_NOT_PRESENT);
	EXPECT_EQ(fi.operand, 2);
	EXPECT_TRUE(strstr(fi.operation, "kernel") != NULL);
	/* Sticky on that stream; the device refuses new work. */
	EXPECT_EQ(spyre_stream_query(s), SPYRE_ERROR_DEVICE_FAULT);
	EXPECT_EQ(spyre_kernel_launch(other, t.k), SPYRE_ERROR_DEVICE_LOST);
	EXPECT_EQ(spyre_buffer_alloc(dev, 4096, 0, &b), SPYRE_ERROR_DEVICE_LOST);
	EXPECT_EQ(spyre_stream_synchronize(other), SPYRE_SUCCESS);
	/* The other stream has no fault of its own. */
	ASSERT_EQ(spyre_stream_get_fault(other, &fi), SPYRE_SUCCESS);
	EXPECT_EQ(fi.status, SPYRE_SUCCESS);
	EXPECT_EQ(fi.address_known, 0);
	EXPECT_EQ(spyre_stream_destroy(s), SPYRE_ERROR_DEVICE_FAULT);
	spyre_buffer_free(half);
	add_teardown(&t);
	EXPECT_EQ(spyre_device_close(dev), SPYRE_SUCCESS);
	/* A fresh open works. */
	EXPECT_EQ(add_rounds(60), 0);
}

/*
 * A raw argument address nothing maps, on a high-priority stream, while a
 * second open of the card (another address space) runs clean work: the
 * fault is named exactly and is the first one's only.
 */
TEST(fault_address_of_a_raw_argument_stays_in_its_open)
{
	static struct add_setup t, t2;
	spyre_device *dev = open_dev(), *dev2 = open_dev();
	spyre_stream *s = NULL, *s2 = NULL;
	spyre_fault_info fi;
	const uint64_t bad = 0x7f0000000000ULL;

	ASSERT_TRUE(dev && dev2);
	ASSERT_EQ(add_setup(&t, dev, 10), 0);
	ASSERT_EQ(add_setup(&t2, dev2, 11), 0);
	ASSERT_EQ(spyre_stream_create(dev, 3, &s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_create(dev2, 3, &s2), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_set_arg_u64(t.k, 0, bad), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_htod_async(s2, t2.a, 0, t2.ha, ADD_BYTES), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_htod_async(s2, t2.b, 0, t2.hb, ADD_BYTES), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_launch(s, t.k), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_kernel_launch(s2, t2.k), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_memcpy_dtoh_async(s2, t2.hout, t2.out, 0, ADD_BYTES), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_stream_synchronize(s), SPYRE_ERROR_DEVICE_FAULT);
	printf("  # detail: %s\n", spyre_last_error_detail());
	ASSERT_EQ(spyre_stream_get_fault(s, &fi), SPYRE_SUCCESS);
	EXPECT_EQ(fi.address_known, 1);
	/* Core 0 reads from bad, core 1 from bad + 8 KiB: the card records the first. */
	printf("  # fault at 0x%llx, access %d, reason %d, queue %u\n",
	       (unsigned long long)fi.address, fi.access, fi.reason, fi.queue);
	EXPECT_TRUE(fi.address == bad || fi.address == bad + ADD_BYTES / 2);
	EXPECT_EQ(fi.access, SPYRE_FAULT_ACCESS_READ);
	EXPECT_EQ(fi.reason, SPYRE_FAULT_REASON_NOT_PRESENT);
	EXPECT_EQ(fi.queue, 3u);
	EXPECT_EQ(fi.operand, 0);
	/* The other open saw nothing and computed its sum. */
	EXPECT_EQ(spyre_stream_synchronize(s2), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_get_fault(s2, &fi), SPYRE_SUCCESS);
	EXPECT_EQ(fi.status, SPYRE_SUCCESS);
	EXPECT_EQ(check_sum(t2.ha, t2.hb, t2.hout), 0);
	add_teardown(&t);
	add_teardown(&t2);
	EXPECT_EQ(spyre_stream_destroy(s), SPYRE_ERROR_DEVICE_FAULT);
	EXPECT_EQ(spyre_device_close(dev), SPYRE_SUCCESS);
	EXPECT_EQ(spyre_device_close(dev2), SPYRE_SUCCESS);
}

/* A job that hangs: the driver resets the card; synchronize says TIMEOUT. */
TEST(hung_job_surfaces_as_timeout)
{
	spyre_device_properties props;
	spyre_device *dev = open_dev();
	spyre_stream *s = NULL;
	spyre_buffer *b = NULL;
	spyre_status st;
	char path[128];
	FILE *f;

	ASSERT_TRUE(dev);
	ASSERT_EQ(spyre_device_get_properties(dev, &props), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_stream_create(dev, 3, &s), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_buffer_alloc(dev, 4096, 0, &b), SPYRE_SUCCESS);
	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/inject_hang", props.pci_address);
	f = fopen(path, "w");
	if (!f) {
		spyre_device_close(dev);
		SKIP("no debugfs inject_hang");
	}
	/* The next command queue 3 starts never finishes. */
	fprintf(f, "3 0\n");
	ASSERT_EQ(fclose(f), 0);
	ASSERT_EQ(spyre_memset64_async(s, b, 0, 1, 4096), SPYRE_SUCCESS);
	st = spyre_stream_synchronize(s);
	printf("  # %s: %s\n", spyre_status_name(st), spyre_last_error_detail());
	EXPECT_EQ(st, SPYRE_ERROR_TIMEOUT);
	EXPECT_TRUE(strstr(spyre_last_error_detail(), "hung") != NULL);
	EXPECT_EQ(spyre_memset64_async(s, b, 0, 1, 4096), SPYRE_ERROR_DEVICE_LOST);
	EXPECT_EQ(spyre_device_close(dev), SPYRE_SUCCESS);
	EXPECT_EQ(add_rounds(70), 0);
}

/* ---- SPYRE_TRACE: a child process writes it, this one checks it ---- */

/* A strict JSON syntax check; returns 0 if @p is one JSON value. */
static const char *json_value(const char *p);

static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p && *p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
						return NULL;
				p += 4;
			} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		}
		p++;
	}
	return *p == '"' ? p + 1 : NULL;
}

static const char *json_number(const char *p)
{
	const char *s = p;

	if (*p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return NULL;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return NULL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return p > s ? p : NULL;
}

static const char *json_value(const char *p)
{
	p = json_ws(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';

		p = json_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				p = json_string(json_ws(p));
				if (!p)
					return NULL;
				p = json_ws(p);
				if (*p++ != ':')
					return NULL;
			}
			p = json_value(p);
			if (!p)
				return NULL;
			p = json_ws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	if (*p == '"')
		return json_string(p);
	if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	return json_number(p);
}

__attribute__((constructor)) static void trace_child(void)
{
	static struct add_setup t;
	spyre_device *dev;
	spyre_stream *s = NULL;

	if (!getenv("TEST_RUNTIME_TRACE_CHILD"))
		return;
	dev = open_dev();
	if (!dev || add_setup(&t, dev, 1) || spyre_stream_create(dev, 2, &s))
		_exit(2);
	if (spyre_memcpy_htod_async(s, t.a, 0, t.ha, ADD_BYTES) ||
	    spyre_memcpy_htod_async(s, t.b, 0, t.hb, ADD_BYTES) || spyre_kernel_launch(s, t.k) ||
	    spyre_memcpy_dtoh_async(s, t.hout, t.out, 0, ADD_BYTES) || spyre_stream_synchronize(s))
		_exit(3);
	/* Not closed: the trace must be written at exit too. */
	exit(0);
}

TEST(trace_file_is_json_and_spyre_log_logs)
{
	const char *path = "/tmp/test_runtime_trace.json";
	const char *log_path = "/tmp/test_runtime_log.txt";
	char *buf = malloc(1 << 20);
	int status = -1;
	size_t n = 0;
	FILE *f;
	pid_t pid;

	ASSERT_TRUE(buf);
	unlink(path);
	fflush(stdout);
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (!pid) {
		int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (log < 0 || dup2(log, 2) < 0)
			_exit(126);
		setenv("TEST_RUNTIME_TRACE_CHILD", "1", 1);
		setenv("SPYRE_TRACE", path, 1);
		setenv("SPYRE_LOG", "debug", 1);
		execl("/proc/self/exe", "test_runtime", (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	f = fopen(path, "r");
	ASSERT_TRUE(f);
	n = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	buf[n] = '\0';
	{
		const char *end = json_value(buf);

		EXPECT_TRUE(end && !*json_ws(end));
	}
	EXPECT_TRUE(strstr(buf, "\"traceEvents\"") != NULL);
	EXPECT_TRUE(strstr(buf, "\"name\":\"htod\"") != NULL);
	EXPECT_TRUE(strstr(buf, "\"name\":\"dtoh\"") != NULL);
	EXPECT_TRUE(strstr(buf, "\"cat\":\"launch\"") != NULL);
	EXPECT_TRUE(strstr(buf, "\"cat\":\"core\"") != NULL);
	EXPECT_TRUE(strstr(buf, "\"name\":\"core 1\"") != NULL);
	EXPECT_TRUE(strstr(buf, "(queue 2)") != NULL);
	EXPECT_TRUE(strstr(buf, "\"process_name\"") != NULL);
	EXPECT_TRUE(strstr(buf, "/dev/accel/accel") != NULL);
	/* SPYRE_LOG=debug: the open, every job and the trace file, on stderr. */
	f = fopen(log_path, "r");
	ASSERT_TRUE(f);
	n = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	buf[n] = '\0';
	EXPECT_TRUE(strstr(buf, "libspyre info: opened /dev/accel/accel") != NULL);
	EXPECT_TRUE(strstr(buf, "libspyre debug: stream ") != NULL);
	EXPECT_TRUE(strstr(buf, "libspyre info: trace written to /tmp/test_runtime_trace.json") !=
		    NULL);
	free(buf);
}

TAP_MAIN()
