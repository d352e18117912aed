// SPDX-License-Identifier: MIT
/*
 * torch.dispatch_overhead_us's baseline (tests/torch/bench-in-guest.sh):
 * the libspyre launch a tiny spyre op makes from PyTorch (an fp32 add of
 * two 64-element rows through the op library) called straight from C, N
 * times queued, one synchronize.  Prints the microseconds per call.
 * usage: dispatch_bench N
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <spyre/spyre.h>
#include <spyre/spyre_ops.h>

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int fail(const char *what, spyre_status st)
{
	fprintf(stderr, "dispatch_bench: %s: %s: %s\n", what, spyre_status_name(st),
		spyre_last_error_detail());
	return 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	uint32_t shape[] = { 64 };
	spyre_device *dev;
	spyre_stream *s;
	spyre_buffer *buf;
	spyre_layout l;
	spyre_tensor x, y, z;
	spyre_status st;
	double t0;

	if (n < 1)
		n = 200;
	if ((st = spyre_device_open(0, &dev)) || (st = spyre_stream_create(dev, 1, &s)) ||
	    (st = spyre_buffer_alloc(dev, 4096, SPYRE_MEM_DEVICE, &buf)) ||
	    (st = spyre_tensor_layout(SPYRE_DTYPE_FP32, 1, shape, &l)) ||
	    (st = spyre_tensor_init(&x, buf, 0, &l)) || (st = spyre_tensor_init(&y, buf, 256, &l)) ||
	    (st = spyre_tensor_init(&z, buf, 512, &l)))
		return fail("setting up", st);
	/* Warm: the op's program generated and cached. */
	if ((st = spyre_op_binary(s, SPYRE_OP_ADD, &x, &y, &z)) || (st = spyre_stream_synchronize(s)))
		return fail("the first add", st);
	t0 = now_us();
	for (int i = 0; i < n; i++)
		if ((st = spyre_op_binary(s, SPYRE_OP_ADD, &x, &y, &z)))
			return fail("spyre_op_binary", st);
	if ((st = spyre_stream_synchronize(s)))
		return fail("synchronizing", st);
	printf("%.3f\n", (now_us() - t0) / n);
	spyre_device_close(dev);
	return 0;
}
