// SPDX-License-Identifier: MIT
/*
 * DMA throughput of the emulated card against a host memcpy of the same
 * size, measured in one run.  Drives QEMU through its qtest protocol (no
 * guest OS): programs the card's BARs, an MMU context and a queue, then
 * times DMA_COPY commands host->device, device->host and device->device
 * from doorbell to completion.
 *
 * usage: dma-bench QEMU_BINARY RESULTS_JSON MIB [QEMU ARGS...]
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
#define GUEST_RAM_MIB	640

/* Guest-physical layout of the benchmark's own structures. */
#define PT_BASE		0x00100000ull	/* page tables, 4 KiB each */
#define RING_BASE	0x00200000ull
#define HOST_SRC	0x04000000ull	/* 64 MiB aligned host buffers */
#define HOST_DST	0x0c000000ull
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

/* Submit one DMA_COPY at ring entry idx and time it to completion. */
static double time_copy(uint32_t *idx, uint64_t src, uint64_t dst, uint64_t bytes)
{
	const uint32_t qreg = SPYRE_REG_QUEUE(0);
	uint64_t entry = RING_BASE + (uint64_t)*idx * SPYRE_CMD_SIZE;
	double t0, t;
	uint32_t status;

	qtest("memset 0x%" PRIx64 " %d 0", entry, SPYRE_CMD_SIZE);
	qtest("writeb 0x%" PRIx64 " 0x%x", entry, SPYRE_OP_DMA_COPY);
	wr64(entry + SPYRE_CMD_OFF_ARGS, src);
	wr64(entry + SPYRE_CMD_OFF_ARGS + 8, dst);
	wr64(entry + SPYRE_CMD_OFF_ARGS + 16, bytes);
	*idx = (*idx + 1) % 64;
	t0 = now_s();
	reg_wr(qreg + SPYRE_QREG_DOORBELL, *idx);
	while (reg_rd(qreg + SPYRE_QREG_STATUS) == SPYRE_QSTATE_BUSY)
		if (now_s() - t0 > 60)
			die("copy did not finish in 60 s");
	t = now_s() - t0;
	status = qtest("readl 0x%" PRIx64, entry + SPYRE_CMD_OFF_STATUS);
	if (status != SPYRE_CMD_STATUS_SUCCESS)
		die("copy failed with status %u", status);
	return t;
}

static double best_copy(uint32_t *idx, uint64_t src, uint64_t dst, uint64_t bytes)
{
	double best = 1e9;

	for (int i = 0; i < REPEAT; i++) {
		double t = time_copy(idx, src, dst, bytes);

		best = t < best ? t : best;
	}
	return best;
}

static double best_memcpy(uint64_t bytes)
{
	char *a = malloc(bytes), *b = malloc(bytes);
	double best = 1e9;

	if (!a || !b)
		die("no memory for the memcpy reference");
	memset(a, 1, bytes);
	memset(b, 2, bytes);
	for (int i = 0; i < REPEAT; i++) {
		double t0 = now_s();

		memcpy(b, a, bytes);
		__asm__ volatile("" : : "r"(b) : "memory");
		t0 = now_s() - t0;
		best = t0 < best ? t0 : best;
	}
	free(a);
	free(b);
	return best;
}

int main(int argc, char **argv)
{
	uint64_t mib = argc > 3 ? strtoull(argv[3], NULL, 0) : 0, bytes = mib << 20;
	double h2d, d2h, d2d, ref;
	uint32_t idx = 0, id;
	char log[4096];
	FILE *json;

	if (argc < 4 || !mib || mib > 64)
		die("usage: dma-bench QEMU RESULTS_JSON MIB(1-64) [QEMU ARGS...]");
	snprintf(log, sizeof(log), "%s.qemu.log", argv[2]);
	start_qemu(argv[1], log, 256, argv + 4, argc - 4);

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

	build_page_tables(256 << 20);
	qtest("memset 0x%llx 0x%x 0", RING_BASE, 64 * SPYRE_CMD_SIZE);
	reg_wr(SPYRE_REG_QUEUE(0) + SPYRE_QREG_BASE_LO, (uint32_t)RING_BASE);
	reg_wr(SPYRE_REG_QUEUE(0) + SPYRE_QREG_BASE_HI, 0);
	reg_wr(SPYRE_REG_QUEUE(0) + SPYRE_QREG_SIZE, 64);
	reg_wr(SPYRE_REG_QUEUE(0) + SPYRE_QREG_CONTEXT, 0);
	reg_wr(SPYRE_REG_QUEUE(0) + SPYRE_QREG_CTRL, SPYRE_QCTRL_ENABLE);
	qtest("memset 0x%llx 0x%" PRIx64 " 0x5a", HOST_SRC, bytes);

	h2d = best_copy(&idx, VA_HOST + HOST_SRC, VA_DEV, bytes);
	d2h = best_copy(&idx, VA_DEV, VA_HOST + HOST_DST, bytes);
	d2d = best_copy(&idx, VA_DEV, VA_DEV + (128ull << 20), bytes);
	/* The data went all the way: the last bytes came back. */
	if (qtest("readb 0x%" PRIx64, HOST_DST + bytes - 1) != 0x5a)
		die("device->host copy returned wrong data");
	ref = best_memcpy(bytes);

	fclose(qtx);
	fclose(qrx);
	kill(qemu_pid, SIGTERM);
	waitpid(qemu_pid, NULL, 0);

	struct {
		const char *name;
		double value;
		const char *unit;
	} rows[] = {
		{ "device.dma.h2d_gbps", bytes / h2d / 1e9, "GB/s" },
		{ "device.dma.d2h_gbps", bytes / d2h / 1e9, "GB/s" },
		{ "device.dma.d2d_gbps", bytes / d2d / 1e9, "GB/s" },
		{ "host.memcpy_gbps", bytes / ref / 1e9, "GB/s" },
		{ "device.dma.ratio_vs_memcpy", ref / h2d, "ratio" },
		{ "device.dma.d2h_ratio_vs_memcpy", ref / d2h, "ratio" },
		{ "device.dma.d2d_ratio_vs_memcpy", ref / d2d, "ratio" },
	};
	json = fopen(argv[2], "w");
	if (!json)
		die("cannot write %s: %s", argv[2], strerror(errno));
	printf("%-34s %12s  %s   (%" PRIu64 " MiB copies, best of %d)\n", "benchmark", "value",
	       "unit", mib, REPEAT);
	fprintf(json, "[\n");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		printf("%-34s %12.3f  %s\n", rows[i].name, rows[i].value, rows[i].unit);
		fprintf(json, "  {\"name\": \"%s\", \"value\": %.4f, \"unit\": \"%s\"}%s\n",
			rows[i].name, rows[i].value, rows[i].unit,
			i + 1 < sizeof(rows) / sizeof(rows[0]) ? "," : "");
	}
	fprintf(json, "]\n");
	fclose(json);
	return 0;
}
