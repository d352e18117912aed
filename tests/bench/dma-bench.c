// SPDX-License-Identifier: MIT
/*
 * DMA throughput of the emulated card against a host memcpy of the same
 * size, measured in one run.  Drives QEMU through its qtest protocol (no
 * guest OS): programs the card's BARs, an MMU context and a queue, then
 * times DMA_COPY commands host->device, device->host and device->device
 * from doorbell to completion.  REPEAT rounds each time one copy of every
 * direction and one memcpy in turn, so a busy moment slows a whole round:
 * each figure is the median over rounds (a ratio the median of the rounds'
 * ratios), with NAME.min and NAME.max beside it.  With --scaling, also
 * host->device and device->device GB/s (best of a few) from 4 KiB to
 * 256 MiB beside memcpy, as rows device.dma.scaling.* and a table.
 *
 * usage: dma-bench QEMU_BINARY RESULTS_JSON MIB [--scaling TABLE_TSV] [QEMU ARGS...]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qtest-card.h"
#include "spyre_regs.h"

#define DEV_MEM_MIB	512
#define HOST_SRC	0x10000000ull	/* 256 MiB aligned host buffers */
#define HOST_DST	0x20000000ull
#define MAX_BYTES	(256ull << 20)
#define REPEAT		10

/*
 * Submit @count (< 64) DMA_COPYs from ring entry idx with one doorbell and
 * time them to completion; seconds per copy.  Several at once keep the
 * qtest round trip of the completion poll (about 0.1 ms) out of small
 * copies' figures.
 */
static double time_copies(uint32_t *idx, uint64_t src, uint64_t dst, uint64_t bytes,
			  int count)
{
	uint64_t entry[RING_ENTRIES];
	double t;

	for (int i = 0; i < count; i++)
		entry[i] = card_put(idx, SPYRE_OP_DMA_COPY, src, dst, bytes);
	t = card_go(*idx);
	for (int i = 0; i < count; i++) {
		uint32_t status = card_status(entry[i]);

		if (status != SPYRE_CMD_STATUS_SUCCESS)
			die("copy failed with status %u", status);
	}
	return t / count;
}

static double time_copy(uint32_t *idx, uint64_t src, uint64_t dst, uint64_t bytes)
{
	return time_copies(idx, src, dst, bytes, 1);
}

/* The host memcpy reference: @reps copies of @bytes between two buffers, best. */
static double best_memcpy(char *a, char *b, uint64_t bytes, int reps)
{
	double best = 1e9;

	for (int i = 0; i < reps; i++) {
		double t0 = now_s();

		memcpy(b, a, bytes);
		__asm__ volatile("" : : "r"(b) : "memory");
		t0 = now_s() - t0;
		best = t0 < best ? t0 : best;
	}
	return best;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct row {
	char name[64];
	double value;
	const char *unit;
};

static struct row rows[64];
static int nrows;

static void add_row(const char *name, double value, const char *unit)
{
	if (nrows == (int)(sizeof(rows) / sizeof(rows[0])))
		die("too many rows");
	snprintf(rows[nrows].name, sizeof(rows[nrows].name), "%s", name);
	rows[nrows].value = value;
	rows[nrows++].unit = unit;
}

/* NAME, the median of @v[REPEAT] (sorted in place), then NAME.min, NAME.max. */
static void add_spread(const char *name, double *v, const char *unit)
{
	char n[64];

	qsort(v, REPEAT, sizeof(*v), cmp_double);
	add_row(name, v[REPEAT / 2], unit);
	snprintf(n, sizeof(n), "%s.min", name);
	add_row(n, v[0], unit);
	snprintf(n, sizeof(n), "%s.max", name);
	add_row(n, v[REPEAT - 1], unit);
}

/* GB/s of copies from 4 KiB to 256 MiB: rows and a table for the plot. */
static void scaling(uint32_t *idx, char *a, char *b, const char *tsv_path)
{
	static const uint64_t sizes[] = { 4ull << 10, 64ull << 10, 1ull << 20, 16ull << 20,
					  MAX_BYTES };
	FILE *tsv = fopen(tsv_path, "w");

	if (!tsv)
		die("cannot write %s: %s", tsv_path, strerror(errno));
	fprintf(tsv, "# bytes\th2d_gbps\td2d_gbps\tmemcpy_gbps\n");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t n = sizes[i];
		int reps = n <= (1ull << 20) ? 20 : n <= (16ull << 20) ? 5 : 2;
		/* Small copies in batches, so the poll's round trip does not count. */
		int batch = n <= (64ull << 10) ? 32 : n <= (1ull << 20) ? 8 : 1;
		double h2d = 1e9, d2d = 1e9, cpy = best_memcpy(a, b, n, reps);
		char name[64];

		for (int r = 0; r < reps; r++) {
			double t = time_copies(idx, VA_HOST + HOST_SRC, VA_DEV, n, batch);

			h2d = t < h2d ? t : h2d;
			t = time_copies(idx, VA_DEV, VA_DEV + MAX_BYTES, n, batch);
			d2d = t < d2d ? t : d2d;
		}
		snprintf(name, sizeof(name), "device.dma.scaling.h2d_gbps.%" PRIu64, n);
		add_row(name, n / h2d / 1e9, "GB/s");
		snprintf(name, sizeof(name), "device.dma.scaling.d2d_gbps.%" PRIu64, n);
		add_row(name, n / d2d / 1e9, "GB/s");
		snprintf(name, sizeof(name), "host.memcpy.scaling_gbps.%" PRIu64, n);
		add_row(name, n / cpy / 1e9, "GB/s");
		fprintf(tsv, "%" PRIu64 "\t%.4f\t%.4f\t%.4f\n", n, n / h2d / 1e9, n / d2d / 1e9,
			n / cpy / 1e9);
	}
	fclose(tsv);
}

int main(int argc, char **argv)
{
	uint64_t mib = argc > 3 ? strtoull(argv[3], NULL, 0) : 0, bytes = mib << 20;
	double h2d[REPEAT], d2h[REPEAT], d2d[REPEAT], cpy[REPEAT];
	double r_h2d[REPEAT], r_d2h[REPEAT], r_d2d[REPEAT];
	const char *tsv = NULL;
	uint32_t idx = 0;
	char log[4096], *a, *b;
	FILE *json;
	int first_extra = 4;

	if (argc < 4 || !mib || mib > 64)
		die("usage: dma-bench QEMU RESULTS_JSON MIB(1-64) [--scaling TABLE_TSV] "
		    "[QEMU ARGS...]");
	if (argc > 5 && !strcmp(argv[4], "--scaling")) {
		tsv = argv[5];
		first_extra = 6;
	}
	snprintf(log, sizeof(log), "%s.qemu.log", argv[2]);
	card_start("dma-bench", argv[1], log, DEV_MEM_MIB, argv + first_extra, argc - first_extra);
	qtest("memset 0x%llx 0x%llx 0x5a", HOST_SRC, (unsigned long long)(tsv ? MAX_BYTES : bytes));
	a = malloc(tsv ? MAX_BYTES : bytes);
	b = malloc(tsv ? MAX_BYTES : bytes);
	if (!a || !b)
		die("no memory for the memcpy reference");
	memset(a, 1, tsv ? MAX_BYTES : bytes);
	memset(b, 2, tsv ? MAX_BYTES : bytes);

	/* A first copy each way pays for host pages: not counted. */
	time_copy(&idx, VA_HOST + HOST_SRC, VA_DEV, bytes);
	time_copy(&idx, VA_DEV, VA_HOST + HOST_DST, bytes);
	time_copy(&idx, VA_DEV, VA_DEV + MAX_BYTES, bytes);
	best_memcpy(a, b, bytes, 1);
	for (int r = 0; r < REPEAT; r++) {
		h2d[r] = time_copy(&idx, VA_HOST + HOST_SRC, VA_DEV, bytes);
		d2h[r] = time_copy(&idx, VA_DEV, VA_HOST + HOST_DST, bytes);
		d2d[r] = time_copy(&idx, VA_DEV, VA_DEV + MAX_BYTES, bytes);
		cpy[r] = best_memcpy(a, b, bytes, 1);
		r_h2d[r] = cpy[r] / h2d[r];
		r_d2h[r] = cpy[r] / d2h[r];
		r_d2d[r] = cpy[r] / d2d[r];
		h2d[r] = bytes / h2d[r] / 1e9;
		d2h[r] = bytes / d2h[r] / 1e9;
		d2d[r] = bytes / d2d[r] / 1e9;
		cpy[r] = bytes / cpy[r] / 1e9;
	}
	/* The data went all the way: the last bytes came back. */
	if (qtest("readb 0x%llx", HOST_DST + bytes - 1) != 0x5a)
		die("device->host copy returned wrong data");
	add_spread("device.dma.h2d_gbps", h2d, "GB/s");
	add_spread("device.dma.d2h_gbps", d2h, "GB/s");
	add_spread("device.dma.d2d_gbps", d2d, "GB/s");
	add_spread("host.memcpy_gbps", cpy, "GB/s");
	add_spread("device.dma.ratio_vs_memcpy", r_h2d, "ratio");
	add_spread("device.dma.d2h_ratio_vs_memcpy", r_d2h, "ratio");
	add_spread("device.dma.d2d_ratio_vs_memcpy", r_d2d, "ratio");
	if (tsv)
		scaling(&idx, a, b, tsv);
	free(a);
	free(b);

	card_stop();

	json = fopen(argv[2], "w");
	if (!json)
		die("cannot write %s: %s", argv[2], strerror(errno));
	printf("%-40s %12s  %s   (%" PRIu64 " MiB copies, median of %d rounds)\n", "benchmark",
	       "value", "unit", mib, REPEAT);
	fprintf(json, "[\n");
	for (int i = 0; i < nrows; i++) {
		printf("%-40s %12.3f  %s\n", rows[i].name, rows[i].value, rows[i].unit);
		fprintf(json, "  {\"name\": \"%s\", \"value\": %.4f, \"unit\": \"%s\"}%s\n",
			rows[i].name, rows[i].value, rows[i].unit, i + 1 < nrows ? "," : "");
	}
	fprintf(json, "]\n");
	fclose(json);
	return 0;
}
