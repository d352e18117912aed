// SPDX-License-Identifier: MIT
/*
 * runtime.h2d_gbps / runtime.d2h_gbps: blocking libspyre copies between
 * pageable host memory and a device buffer, in the guest, against a guest
 * memcpy of the same size (the ratio is what matters: under TCG every
 * absolute figure is the emulator's).  Bandwidths are the best of RUNS
 * runs; a run times memcpy and each copy in turn, and a ratio is the
 * median of the runs' ratios, with .min and .max rows beside it.  Prints table
 * rows and one "SPYRE-BENCH-JSON [...]" line for scripts/bench.sh.
 * With a second card (scripts/bench.sh boots two): runtime.peer_copy_gbps,
 * spyre_memcpy_peer from card 0's device memory to card 1's, beside
 * runtime.dtod_gbps, a dtod copy within card 0.
 *
 * usage: runtime_bench [MiB]   (default 64)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spyre/spyre.h"

#define RUNS 7

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fail(const char *what, spyre_status st)
{
	fprintf(stderr, "runtime_bench: %s: %s: %s\n", what, spyre_strerror(st),
		spyre_last_error_detail());
	return 1;
}

struct row {
	char name[48];
	double value;
	const char *unit;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* NAME (the median of @v[RUNS], sorted in place), NAME.min and NAME.max. */
static void spread_rows(const char *name, double *v, struct row *rows, int *nrows)
{
	qsort(v, RUNS, sizeof(*v), cmp_double);
	rows[*nrows] = (struct row){ "", v[RUNS / 2], "ratio" };
	snprintf(rows[(*nrows)++].name, sizeof(rows[0].name), "%s", name);
	rows[*nrows] = (struct row){ "", v[0], "ratio" };
	snprintf(rows[(*nrows)++].name, sizeof(rows[0].name), "%s.min", name);
	rows[*nrows] = (struct row){ "", v[RUNS - 1], "ratio" };
	snprintf(rows[(*nrows)++].name, sizeof(rows[0].name), "%s.max", name);
}

/* Blocking @what copies of @n bytes, best of RUNS after a warm-up: seconds. */
static double best_copy(int peer, spyre_buffer *to, spyre_buffer *from, size_t n)
{
	double best = 1e30;

	for (int r = 0; r <= RUNS; r++) {
		double t0 = now(), t;
		spyre_status st = peer ? spyre_memcpy_peer(to, 0, from, 0, n) :
					 spyre_memcpy_dtod(to, 0, from, 0, n);

		if (st) {
			fail(peer ? "peer copy" : "dtod", st);
			return 0;
		}
		t = now() - t0;
		if (r && t < best)
			best = t;
	}
	return best;
}

/* Card 0's @d (holding @src) to card 1 and within card 0; rows, or none
 * with one card.  0 or 1 on failure. */
static int peer_rows(spyre_buffer *d, const uint8_t *src, uint8_t *dst, size_t n,
		     struct row *rows, int *nrows)
{
	spyre_device *dev1;
	spyre_buffer *d1, *d0;
	double tp, td;
	int count;

	if (spyre_device_count(&count) || count < 2)
		return 0;
	if (spyre_device_open(1, &dev1) || spyre_buffer_alloc(dev1, n, 0, &d1) ||
	    spyre_buffer_alloc(spyre_buffer_device(d), n, 0, &d0))
		return fail("peer setup", SPYRE_ERROR_INVALID_ARGUMENT);
	tp = best_copy(1, d1, d, n);
	td = best_copy(0, d0, d, n);
	memset(dst, 0, n);
	if (!tp || !td || spyre_memcpy_dtoh(dst, d1, 0, n) || memcmp(src, dst, n)) {
		fprintf(stderr, "runtime_bench: peer copy data mismatch\n");
		return 1;
	}
	rows[(*nrows)++] = (struct row){ "runtime.peer_copy_gbps", (double)n / tp / 1e9, "GB/s" };
	rows[(*nrows)++] = (struct row){ "runtime.dtod_gbps", (double)n / td / 1e9, "GB/s" };
	spyre_buffer_free(d0);
	return spyre_device_close(dev1) ? 1 : 0;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64, n = mib << 20;
	double best_h2d = 1e30, best_d2h = 1e30, best_cpy = 1e30, best_ph2d = 1e30;
	double best_pd2h = 1e30, rh2d[RUNS], rd2h[RUNS];
	spyre_device *dev = NULL;
	spyre_buffer *d = NULL, *pin = NULL;
	spyre_stream *s = NULL;
	uint8_t *src, *dst, *p = NULL;
	struct row rows[16];
	spyre_status st;
	int nrows = 0;

	src = malloc(n);
	dst = malloc(n);
	if (!mib || !src || !dst)
		return 1;
	for (size_t i = 0; i < n; i++)
		src[i] = (uint8_t)(i * 7 + (i >> 12));
	memset(dst, 1, n);
	st = spyre_device_open(0, &dev);
	if (st)
		return fail("open", st);
	if ((st = spyre_buffer_alloc(dev, n, 0, &d)) ||
	    (st = spyre_buffer_alloc(dev, n, SPYRE_MEM_HOST, &pin)) ||
	    (st = spyre_buffer_map(pin, (void **)&p)) ||
	    (st = spyre_stream_create(dev, SPYRE_STREAM_PRIORITY_NORMAL, &s)))
		return fail("setup", st);
	memcpy(p, src, n);
	/* Run 0 warms up (first touches of guest and staging pages); not counted. */
	for (int r = 0; r <= RUNS; r++) {
		double t0 = now(), t1, t2, t3, t4, t5;

		memcpy(dst, src, n);
		t1 = now();
		st = spyre_memcpy_htod(d, 0, src, n);
		if (st)
			return fail("htod", st);
		t2 = now();
		st = spyre_memcpy_dtoh(dst, d, 0, n);
		if (st)
			return fail("dtoh", st);
		t3 = now();
		/* Pinned buffers: no staging, one DMA each way. */
		if ((st = spyre_memcpy_htod_async(s, d, 0, p, n)) ||
		    (st = spyre_stream_synchronize(s)))
			return fail("pinned htod", st);
		t4 = now();
		if ((st = spyre_memcpy_dtoh_async(s, p, d, 0, n)) ||
		    (st = spyre_stream_synchronize(s)))
			return fail("pinned dtoh", st);
		t5 = now();
		if (memcmp(src, dst, n) || memcmp(src, p, n)) {
			fprintf(stderr, "runtime_bench: data mismatch\n");
			return 1;
		}
		if (!r)
			continue;
		rh2d[r - 1] = (t1 - t0) / (t2 - t1);
		rd2h[r - 1] = (t1 - t0) / (t3 - t2);
		best_cpy = t1 - t0 < best_cpy ? t1 - t0 : best_cpy;
		best_h2d = t2 - t1 < best_h2d ? t2 - t1 : best_h2d;
		best_d2h = t3 - t2 < best_d2h ? t3 - t2 : best_d2h;
		best_ph2d = t4 - t3 < best_ph2d ? t4 - t3 : best_ph2d;
		best_pd2h = t5 - t4 < best_pd2h ? t5 - t4 : best_pd2h;
	}
#define GBPS(t) ((double)n / (t) / 1e9)
	rows[nrows++] = (struct row){ "runtime.h2d_gbps", GBPS(best_h2d), "GB/s" };
	rows[nrows++] = (struct row){ "runtime.d2h_gbps", GBPS(best_d2h), "GB/s" };
	rows[nrows++] = (struct row){ "runtime.guest_memcpy_gbps", GBPS(best_cpy), "GB/s" };
	spread_rows("runtime.h2d_vs_memcpy", rh2d, rows, &nrows);
	spread_rows("runtime.d2h_vs_memcpy", rd2h, rows, &nrows);
	rows[nrows++] = (struct row){ "runtime.h2d_pinned_gbps", GBPS(best_ph2d), "GB/s" };
	rows[nrows++] = (struct row){ "runtime.d2h_pinned_gbps", GBPS(best_pd2h), "GB/s" };
	if (peer_rows(d, src, dst, n, rows, &nrows))
		return 1;
	printf("libspyre copies of %zu MiB, best of %d (guest, TCG)\n", mib, RUNS);
	for (int i = 0; i < nrows; i++)
		printf("%-34s %12.3f  %s\n", rows[i].name, rows[i].value, rows[i].unit);
	printf("SPYRE-BENCH-JSON [");
	for (int i = 0; i < nrows; i++)
		printf("%s{\"name\": \"%s\", \"value\": %.4f, \"unit\": \"%s\"}", i ? ", " : "",
		       rows[i].name, rows[i].value, rows[i].unit);
	printf("]\n");
	spyre_device_close(dev);
	free(src);
	free(dst);
	return 0;
}
