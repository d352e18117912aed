// SPDX-License-Identifier: MIT
/*
 * vector_add: c = a + b over 256 Ki floats on all 32 cores, written with the
 * program builder, run eagerly and then as a graph, checked against the CPU.
 * Shows buffers, a stream, a kernel with arguments, a profiled launch,
 * events timed by the card and a graph replayed with fresh inputs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spyre/spyre.h"
#include "spyre_program_builder.h"

#define CORES 32
#define STICKS 256			/* per core; a stick is 32 fp32 */
#define N (CORES * STICKS * 32)
#define BYTES (N * sizeof(float))

#define CHECK(call)                                                              \
	do {                                                                     \
		spyre_status st_ = (call);                                       \
		if (st_ != SPYRE_SUCCESS) {                                      \
			fprintf(stderr, "%s: %s (%s)\n", #call, spyre_strerror(st_), \
				spyre_last_error_detail());                      \
			exit(1);                                                 \
		}                                                                \
	} while (0)

/* One ADD per core over its slice of the three arguments (a, b, c). */
static uint8_t *build(size_t *len)
{
	struct pb_program *prog = calloc(1, sizeof(*prog));
	uint8_t *img;

	if (!prog)
		return NULL;
	prog->num_args = 3;
	for (unsigned c = 0; c < CORES; c++) {
		struct pb_core *core = pb_core(prog, c);
		uint64_t off = (uint64_t)c * STICKS * 128;
		struct pb_op *op = pb_op(core, SPK_OPC_ADD, SPK_DT_FP32, SPK_DT_FP32, STICKS, 1, 32);

		op->in[0] = pb_stream(core, pb_linear(SPK_EP_DRAM, 0, off, STICKS), pb_op_end(),
				      STICKS, 32);
		op->in[1] = pb_stream(core, pb_linear(SPK_EP_DRAM, 1, off, STICKS), pb_op_end(),
				      STICKS, 32);
		op->out = pb_stream(core, pb_op_end(), pb_linear(SPK_EP_DRAM, 2, off, STICKS),
				    STICKS, 32);
	}
	img = pb_serialize(prog, len);
	free(prog);
	return img;
}

static int check(const float *a, const float *b, const float *c)
{
	for (int i = 0; i < N; i++) {
		if (c[i] != a[i] + b[i]) {
			printf("mismatch at %d: %g + %g != %g\n", i, a[i], b[i], c[i]);
			return 1;
		}
	}
	return 0;
}

int main(void)
{
	spyre_device *dev;
	spyre_stream *s;
	spyre_buffer *a, *b, *c, *pinned;
	spyre_kernel *k;
	spyre_event *start, *stop;
	spyre_graph *g;
	spyre_graph_exec *x;
	spyre_launch_profile prof;
	float *ha, *hb, *hc;
	uint64_t busy = 0;
	int cores = 0, bad = 0;
	size_t len;
	uint8_t *img;
	double ms;

	CHECK(spyre_device_open(0, &dev));
	CHECK(spyre_stream_create(dev, SPYRE_STREAM_PRIORITY_NORMAL, &s));
	CHECK(spyre_buffer_alloc(dev, BYTES, SPYRE_MEM_DEVICE, &a));
	CHECK(spyre_buffer_alloc(dev, BYTES, SPYRE_MEM_DEVICE, &b));
	CHECK(spyre_buffer_alloc(dev, BYTES, SPYRE_MEM_DEVICE, &c));
	/* Inputs and output in one pinned host buffer: the card DMAs it directly. */
	CHECK(spyre_buffer_alloc(dev, 3 * BYTES, SPYRE_MEM_HOST, &pinned));
	CHECK(spyre_buffer_map(pinned, (void **)&ha));
	hb = ha + N;
	hc = hb + N;
	img = build(&len);
	if (!img)
		return 1;
	CHECK(spyre_kernel_load(dev, img, len, &k));
	free(img);
	CHECK(spyre_kernel_set_arg(k, 0, a, 0));
	CHECK(spyre_kernel_set_arg(k, 1, b, 0));
	CHECK(spyre_kernel_set_arg(k, 2, c, 0));
	CHECK(spyre_event_create(dev, &start));
	CHECK(spyre_event_create(dev, &stop));

	for (int i = 0; i < N; i++) {
		ha[i] = (float)(i % 1000) * 0.5f;
		hb[i] = (float)(i % 333) * 0.25f;
	}
	/* Eager: each call is one job on the stream. */
	CHECK(spyre_event_record(start, s));
	CHECK(spyre_memcpy_htod_async(s, a, 0, ha, BYTES));
	CHECK(spyre_memcpy_htod_async(s, b, 0, hb, BYTES));
	CHECK(spyre_kernel_launch_profiled(s, k, &prof));
	CHECK(spyre_memcpy_dtoh_async(s, hc, c, 0, BYTES));
	CHECK(spyre_event_record(stop, s));
	CHECK(spyre_stream_synchronize(s));
	CHECK(spyre_event_elapsed_ms(start, stop, &ms));
	bad |= check(ha, hb, hc);
	for (int i = 0; i < SPYRE_MAX_CORES; i++) {
		busy += prof.core_busy_cycles[i];
		cores += prof.core_busy_cycles[i] != 0;
	}
	printf("eager: %d floats added %s; %.3f ms on the card for copies and launch\n", N,
	       bad ? "WRONG" : "correctly", ms);
	printf("launch: %llu ns modelled, %llu DRAM bytes read, %llu written, "
	       "%d cores busy for %llu cycles in all\n", (unsigned long long)prof.device_ns,
	       (unsigned long long)prof.dram_bytes_read,
	       (unsigned long long)prof.dram_bytes_written, cores, (unsigned long long)busy);

	/* The same work as a graph: captured once, replayed as one submission. */
	CHECK(spyre_stream_begin_capture(s));
	CHECK(spyre_memcpy_htod_async(s, a, 0, ha, BYTES));
	CHECK(spyre_memcpy_htod_async(s, b, 0, hb, BYTES));
	CHECK(spyre_kernel_launch(s, k));
	CHECK(spyre_memcpy_dtoh_async(s, hc, c, 0, BYTES));
	CHECK(spyre_stream_end_capture(s, &g));
	CHECK(spyre_graph_instantiate(g, &x));
	for (int r = 0; r < 3; r++) {
		for (int i = 0; i < N; i++)
			ha[i] = (float)((i + r) % 777);
		memset(hc, 0, BYTES);
		CHECK(spyre_event_record(start, s));
		CHECK(spyre_graph_launch(x, s));
		CHECK(spyre_event_record(stop, s));
		CHECK(spyre_stream_synchronize(s));
		CHECK(spyre_event_elapsed_ms(start, stop, &ms));
		bad |= check(ha, hb, hc);
		printf("graph replay %d (%u nodes, one submission): %s, %.3f ms on the card\n", r,
		       spyre_graph_num_nodes(g), bad ? "WRONG" : "correct", ms);
	}
	spyre_device_close(dev);	/* frees the buffers, kernel, events and graphs */
	return bad;
}
