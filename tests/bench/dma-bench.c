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
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spyre_regs.h"

#define SLOT		4
#define BAR0_ADDR	0xd0000000ull
#define BAR2_ADDR	0xc0000000ull
#define GUEST_RAM_MIB	1024
#define DEV_MEM_MIB	512

/* Guest-physical layout of the benchmark's own structures. */
#define PT_BASE		0x00100000ull	/* page tables, 4 KiB each */
#define RING_BASE	0x00200000ull
#define HOST_SRC	0x10000000ull	/* 256 MiB aligned host buffers */
#define HOST_DST	0x20000000ull
#define MAX_BYTES	(256ull << 20)
#define VA_HOST		0x0000100000000000ull
#define VA_DEV		0x0000200000000000ull
#define REPEAT		10

static FILE *qtx, *qrx;
static pid_t qemu_pid = -1;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "dma-bench: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	if (qemu_pid > 0)
		kill(qemu_pid, SIGKILL);
	exit(1);
}

/* One qtest command; returns the value after "OK" (0 if none). */
static uint64_t qtest(const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vfprintf(qtx, fmt, ap);
	va_end(ap);
	fputc('\n', qtx);
	fflush(qtx);
	do {
		if (!fgets(line, sizeof(line), qrx))
			die("qemu closed the qtest connection (see its log beside the results)");
	} while (!strncmp(line, "IRQ", 3));
	if (strncmp(line, "OK", 2))
		die("qtest command failed: %s", line);
	return line[2] == ' ' ? strtoull(line + 3, NULL, 0) : 0;
}

static uint32_t reg_rd(uint32_t off)
{
	return qtest("readl 0x%llx", BAR0_ADDR + off);
}

static void reg_wr(uint32_t off, uint32_t val)
{
	qtest("writel 0x%llx 0x%x", BAR0_ADDR + off, val);
}

static void cfg_wr(int reg, uint32_t val)
{
	qtest("outl 0xcf8 0x%x", 0x80000000u | SLOT << 11 | reg);
	qtest("outl 0xcfc 0x%x", val);
}

static uint32_t cfg_rd(int reg)
{
	qtest("outl 0xcf8 0x%x", 0x80000000u | SLOT << 11 | reg);
	return qtest("inl 0xcfc");
}

static void start_qemu(const char *qemu, const char *log, uint64_t mem_mib, char **extra,
		       int nextra)
{
	char path[] = "/tmp/spyre-bench-XXXXXX", sock[64], qtest_arg[80];
	char mem[64], ram[16];
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int lfd, fd;

	if (!mkdtemp(path))
		die("mkdtemp: %s", strerror(errno));
	snprintf(sock, sizeof(sock), "%s/qtest.sock", path);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) || listen(lfd, 1))
		die("qtest socket: %s", strerror(errno));
	snprintf(qtest_arg, sizeof(qtest_arg), "unix:%s", sock);
	snprintf(mem, sizeof(mem), "spyre,addr=%02x.0,mem-size=%" PRIu64 "M", SLOT, mem_mib);
	snprintf(ram, sizeof(ram), "%dM", GUEST_RAM_MIB);

	qemu_pid = fork();
	if (qemu_pid == 0) {
		const char *fixed[] = { qemu, "-machine", "q35", "-accel", "qtest", "-nodefaults",
					"-display", "none", "-m", ram, "-qtest", qtest_arg,
					"-qtest-log", "/dev/null", "-device", mem };
		int n = sizeof(fixed) / sizeof(fixed[0]);
		char **args = calloc(n + nextra + 1, sizeof(*args));

		if (!args || !freopen(log, "w", stderr))
			_exit(127);
		memcpy(args, fixed, sizeof(fixed));
		memcpy(args + n, extra, nextra * sizeof(*args));
		execv(qemu, args);
		_exit(127);
	}
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("qemu did not connect: %s", strerror(errno));
	close(lfd);
	unlink(sock);
	rmdir(path);
	qtx = fdopen(fd, "w");
	qrx = fdopen(dup(fd), "r");
}

static void wr64(uint64_t gpa, uint64_t val)
{
	qtest("writeq 0x%" PRIx64 " 0x%" PRIx64, gpa, val);
}

/*
 * One context: VA_HOST maps guest RAM from 0 (2 MiB system pages), VA_DEV
 * maps device memory from 0 (2 MiB pages), both writable.
 */
static void build_page_tables(uint64_t dev_bytes)
{
	const uint64_t l0 = PT_BASE, l1 = PT_BASE + 0x1000;
	const uint64_t l2_host = PT_BASE + 0x2000, l2_dev = PT_BASE + 0x3000;
	const uint64_t pte = SPYRE_PTE_VALID | SPYRE_PTE_WRITE;
	uint64_t i;

	qtest("memset 0x%llx 0x4000 0", PT_BASE);
	wr64(l0 + ((VA_HOST >> 39) & 511) * 8, l1 | SPYRE_PTE_VALID);
	wr64(l0 + ((VA_DEV >> 39) & 511) * 8, (l1 + 0x4000) | SPYRE_PTE_VALID);
	qtest("memset 0x%llx 0x1000 0", l1 + 0x4000);
	wr64(l1 + ((VA_HOST >> 30) & 511) * 8, l2_host | SPYRE_PTE_VALID);
	wr64(l1 + 0x4000 + ((VA_DEV >> 30) & 511) * 8, l2_dev | SPYRE_PTE_VALID);
	for (i = 0; i < GUEST_RAM_MIB / 2 && i < 512; i++)
		wr64(l2_host + i * 8, (i << 21) | pte | SPYRE_PTE_SYSTEM | SPYRE_PTE_LEAF);
	for (i = 0; i < dev_bytes >> 21 && i < 512; i++)
		wr64(l2_dev + i * 8, (i << 21) | pte | SPYRE_PTE_LEAF);
	reg_wr(SPYRE_REG_CTX(0) + SPYRE_CTXREG_ROOT_LO, (uint32_t)l0);
	reg_wr(SPYRE_REG_CTX(0) + SPYRE_CTXREG_ROOT_HI, 0);
	reg_wr(SPYRE_REG_CTX(0) + SPYRE_CTXREG_CTRL, SPYRE_CTX_VALID);
	reg_wr(SPYRE_REG_MMU_INVALIDATE, 0);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * Submit @count (< 64) DMA_COPYs from ring entry idx with one doorbell and
 * time them to completion; seconds per copy.  Several at once keep the
 * qtest round trip of the completion poll (about 0.1 ms) out of small
 * copies' figures.
 */
static double time_copies(uint32_t *idx, uint64_t src, uint64_t dst, uint64_t bytes,
			  int count)
{
	const uint32_t qreg = SPYRE_REG_QUEUE(0);
	uint64_t entry[64];
	double t0, t;

	for (int i = 0; i < count; i++) {
		entry[i] = RING_BASE + (uint64_t)*idx * SPYRE_CMD_SIZE;
		qtest("memset 0x%" PRIx64 " %d 0", entry[i], SPYRE_CMD_SIZE);
		qtest("writeb 0x%" PRIx64 " 0x%x", entry[i], SPYRE_OP_DMA_COPY);
		wr64(entry[i] + SPYRE_CMD_OFF_ARGS, src);
		wr64(entry[i] + SPYRE_CMD_OFF_ARGS + 8, dst);
		wr64(entry[i] + SPYRE_CMD_OFF_ARGS + 16, bytes);
		*idx = (*idx + 1) % 64;
	}
	t0 = now_s();
	reg_wr(qreg + SPYRE_QREG_DOORBELL, *idx);
	while (reg_rd(qreg + SPYRE_QREG_STATUS) == SPYRE_QSTATE_BUSY)
		if (now_s() - t0 > 60)
			die("copy did not finish in 60 s");
	t = now_s() - t0;
	for (int i = 0; i < count; i++) {
		uint32_t status = qtest("readl 0x%" PRIx64, entry[i] + SPYRE_CMD_OFF_STATUS);

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
	uint32_t idx = 0, id;
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
	start_qemu(argv[1], log, DEV_MEM_MIB, argv + first_extra, argc - first_extra);

	id = cfg_rd(0);
	if (id != (SPYRE_PCI_DEVICE_ID << 16 | SPYRE_PCI_VENDOR_ID))
		die("no Spyre card at slot %d (id 0x%08x)", SLOT, id);
	cfg_wr(0x10, (uint32_t)BAR0_ADDR);
	cfg_wr(0x14, 0);
	cfg_wr(0x18, (uint32_t)BAR2_ADDR);
	cfg_wr(0x1c, 0);
	cfg_wr(0x04, 0x6);	/* memory space, bus master */
	if (reg_rd(SPYRE_REG_ID) != SPYRE_ID_MAGIC)
		die("BAR0 does not answer");

	build_page_tables((uint64_t)DEV_MEM_MIB << 20);
	qtest("memset 0x%llx 0x%x 0", RING_BASE, 64 * SPYRE_CMD_SIZE);
	reg_wr(SPYRE_REG_QUEUE(0) + SPYRE_QREG_BASE_LO, (uint32_t)RING_BASE);
	reg_wr(SPYRE_REG_QUEUE(0) + SPYRE_QREG_BASE_HI, 0);
	reg_wr(SPYRE_REG_QUEUE(0) + SPYRE_QREG_SIZE, 64);
	reg_wr(SPYRE_REG_QUEUE(0) + SPYRE_QREG_CONTEXT, 0);
	reg_wr(SPYRE_REG_QUEUE(0) + SPYRE_QREG_CTRL, SPYRE_QCTRL_ENABLE);
	qtest("memset 0x%llx 0x%" PRIx64 " 0x5a", HOST_SRC, tsv ? MAX_BYTES : bytes);
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
	if (qtest("readb 0x%" PRIx64, HOST_DST + bytes - 1) != 0x5a)
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

	fclose(qtx);
	fclose(qrx);
	kill(qemu_pid, SIGTERM);
	waitpid(qemu_pid, NULL, 0);

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
