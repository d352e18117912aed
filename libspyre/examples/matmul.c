// SPDX-License-Identifier: MIT
/*
 * C = A . B on the card with the op library, checked against a CPU
 * reference (docs/ops.md tolerances: fp16 output, |err| <= 1e-3 (|ref| +
 * sum |a b|)).  Prints the launch's device time and the achieved rate.
 *
 * usage: matmul [M K N]   (default 256 512 384)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "spyre/spyre.h"
#include "spyre/spyre_ops.h"

#define CHECK(call)								\
	do {									\
		spyre_status st_ = (call);					\
		if (st_) {							\
			fprintf(stderr, "%s: %s (%s)\n", #call, spyre_strerror(st_), \
				spyre_last_error_detail());			\
			return 1;						\
		}								\
	} while (0)

/* A host array in device layout, in a new device buffer. */
static spyre_status upload(spyre_device *dev, const spyre_layout *l, const float *host,
			   spyre_tensor *t)
{
	void *packed = malloc(l->bytes);
	spyre_buffer *buf;
	spyre_status st = packed ? SPYRE_SUCCESS : SPYRE_ERROR_OUT_OF_MEMORY;

	if (!st)
		st = spyre_buffer_alloc(dev, l->bytes, SPYRE_MEM_DEVICE, &buf);
	if (!st)
		st = spyre_tensor_init(t, buf, 0, l);
	if (!st && host) {
		spyre_tensor_pack(l, host, SPYRE_DTYPE_FP32, packed);
		st = spyre_memcpy_htod(buf, 0, packed, l->bytes);
	}
	free(packed);
	return st;
}

int main(int argc, char **argv)
{
	uint32_t M = argc > 3 ? (uint32_t)atoi(argv[1]) : 256;
	uint32_t K = argc > 3 ? (uint32_t)atoi(argv[2]) : 512;
	uint32_t N = argc > 3 ? (uint32_t)atoi(argv[3]) : 384;
	uint32_t sa[2] = { M, K }, sb[2] = { K, N }, sc[2] = { M, N };
	float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N);
	float *c = malloc(sizeof(float) * M * N), *ar = malloc(sizeof(float) * M * K);
	float *br = malloc(sizeof(float) * K * N);
	spyre_layout la, lb, lc;
	spyre_tensor ta, tb, tc;
	spyre_device *dev;
	spyre_stream *s;
	void *packed;
	unsigned bad = 0;
	double worst = 0;

	if (!a || !b || !c || !ar || !br || !M || !K || !N)
		return 1;
	srand(1);
	for (size_t i = 0; i < (size_t)M * K; i++)
		a[i] = (float)rand() / RAND_MAX * 2 - 1;
	for (size_t i = 0; i < (size_t)K * N; i++)
		b[i] = (float)rand() / RAND_MAX * 2 - 1;
	CHECK(spyre_device_open(0, &dev));
	CHECK(spyre_stream_create(dev, SPYRE_STREAM_PRIORITY_NORMAL, &s));
	CHECK(spyre_tensor_layout(SPYRE_DTYPE_FP16, 2, sa, &la));
	CHECK(spyre_tensor_layout(SPYRE_DTYPE_FP16, 2, sb, &lb));
	CHECK(spyre_tensor_layout(SPYRE_DTYPE_FP16, 2, sc, &lc));
	CHECK(upload(dev, &la, a, &ta));
	CHECK(upload(dev, &lb, b, &tb));
	CHECK(upload(dev, &lc, NULL, &tc));
	/* The values the card sees: a and b rounded to fp16. */
	packed = malloc(la.bytes > lb.bytes ? la.bytes : lb.bytes);
	if (!packed)
		return 1;
	spyre_tensor_pack(&la, a, SPYRE_DTYPE_FP32, packed);
	spyre_tensor_unpack(&la, packed, ar, SPYRE_DTYPE_FP32);
	spyre_tensor_pack(&lb, b, SPYRE_DTYPE_FP32, packed);
	spyre_tensor_unpack(&lb, packed, br, SPYRE_DTYPE_FP32);
	free(packed);

	CHECK(spyre_op_matmul(s, &ta, &tb, SPYRE_ACT_NONE, &tc));	/* first: generates */
	CHECK(spyre_stream_synchronize(s));
	CHECK(spyre_op_matmul(s, &ta, &tb, SPYRE_ACT_NONE, &tc));	/* cached */
	CHECK(spyre_stream_synchronize(s));
	packed = malloc(lc.bytes);
	if (!packed)
		return 1;
	CHECK(spyre_memcpy_dtoh(packed, tc.buf, 0, lc.bytes));
	spyre_tensor_unpack(&lc, packed, c, SPYRE_DTYPE_FP32);
	free(packed);
	for (uint32_t i = 0; i < M; i++)
		for (uint32_t j = 0; j < N; j++) {
			double ref = 0, mag = 0, err, lim;

			for (uint32_t k = 0; k < K; k++) {
				ref += (double)ar[(size_t)i * K + k] * br[(size_t)k * N + j];
				mag += fabs((double)ar[(size_t)i * K + k] * br[(size_t)k * N + j]);
			}
			err = fabs(c[(size_t)i * N + j] - ref);
			lim = 1e-3 * (fabs(ref) + mag) + 0x1p-24;
			bad += !(err <= lim);
			if (err / lim > worst)
				worst = err / lim;
		}
	printf("matmul %ux%ux%u fp16: %u of %u outside the tolerance (worst %.2f of it)\n", M, K,
	       N, bad, M * N, worst);
	/* Device time between two events around one more matmul. */
	{
		spyre_event *e0, *e1;
		double ms = 0;

		CHECK(spyre_event_create(dev, &e0));
		CHECK(spyre_event_create(dev, &e1));
		CHECK(spyre_event_record(e0, s));
		CHECK(spyre_op_matmul(s, &ta, &tb, SPYRE_ACT_NONE, &tc));
		CHECK(spyre_event_record(e1, s));
		CHECK(spyre_stream_synchronize(s));
		CHECK(spyre_event_elapsed_ms(e0, e1, &ms));
		printf("card clock between events around it: %.3f us (%.1f GFLOPS)\n", ms * 1e3,
		       ms > 0 ? 2.0 * M * K * N / (ms * 1e-3) / 1e9 : 0);
		spyre_event_destroy(e0);
		spyre_event_destroy(e1);
	}
	spyre_ops_cache_clear(dev);
	spyre_buffer_free(ta.buf);
	spyre_buffer_free(tb.buf);
	spyre_buffer_free(tc.buf);
	spyre_stream_destroy(s);
	spyre_device_close(dev);
	free(a);
	free(b);
	free(c);
	free(ar);
	free(br);
	return bad ? 1 : 0;
}
