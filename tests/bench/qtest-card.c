// SPDX-License-Identifier: MIT
/*
 * The benchmarks' card without a guest (qtest-card.h): QEMU started with
 * -accel qtest, its protocol on a socket, the card's BARs, one MMU context
 * and queue 0 programmed by hand.
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

#include "qtest-card.h"
#include "spyre_regs.h"

static FILE *qtx, *qrx;
static pid_t qemu_pid = -1;
static const char *prog_name = "bench";

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", prog_name);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	if (qemu_pid > 0)
		kill(qemu_pid, SIGKILL);
	exit(1);
}

/* One qtest command; returns the value after "OK" (0 if none). */
uint64_t qtest(const char *fmt, ...)
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

uint32_t reg_rd(uint32_t off)
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

void wr64(uint64_t gpa, uint64_t val)
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
	qtest("memset 0x%" PRIx64 " 0x1000 0", l1 + 0x4000);
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

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}


void card_start(const char *name, const char *qemu, const char *log, uint64_t dev_mem_mib,
		char **extra, int nextra)
{
	uint32_t id;

	prog_name = name;
	start_qemu(qemu, log, dev_mem_mib, extra, nextra);
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

	build_page_tables(dev_mem_mib << 20);
	qtest("memset 0x%llx 0x%x 0", RING_BASE, RING_ENTRIES * SPYRE_CMD_SIZE);
	reg_wr(SPYRE_REG_QUEUE(0) + SPYRE_QREG_BASE_LO, (uint32_t)RING_BASE);
	reg_wr(SPYRE_REG_QUEUE(0) + SPYRE_QREG_BASE_HI, 0);
	reg_wr(SPYRE_REG_QUEUE(0) + SPYRE_QREG_SIZE, RING_ENTRIES);
	reg_wr(SPYRE_REG_QUEUE(0) + SPYRE_QREG_CONTEXT, 0);
	reg_wr(SPYRE_REG_QUEUE(0) + SPYRE_QREG_CTRL, SPYRE_QCTRL_ENABLE);
}

void card_stop(void)
{
	fclose(qtx);
	fclose(qrx);
	kill(qemu_pid, SIGTERM);
	waitpid(qemu_pid, NULL, 0);
}

void card_write(uint64_t gpa, const void *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *b = buf;
	char *text = malloc(2 * len + 1);

	if (!text)
		die("no memory for a %zu-byte write", len);
	for (size_t i = 0; i < len; i++) {
		text[2 * i] = hex[b[i] >> 4];
		text[2 * i + 1] = hex[b[i] & 15];
	}
	text[2 * len] = 0;
	qtest("write 0x%" PRIx64 " 0x%zx 0x%s", gpa, len, text);
	free(text);
}

uint64_t card_put(uint32_t *idx, uint8_t opcode, uint64_t a0, uint64_t a1, uint64_t a2)
{
	uint64_t entry = RING_BASE + (uint64_t)*idx * SPYRE_CMD_SIZE;

	qtest("memset 0x%" PRIx64 " %d 0", entry, SPYRE_CMD_SIZE);
	qtest("writeb 0x%" PRIx64 " 0x%x", entry, opcode);
	wr64(entry + SPYRE_CMD_OFF_ARGS, a0);
	wr64(entry + SPYRE_CMD_OFF_ARGS + 8, a1);
	wr64(entry + SPYRE_CMD_OFF_ARGS + 16, a2);
	*idx = (*idx + 1) % RING_ENTRIES;
	return entry;
}

double card_go(uint32_t idx)
{
	return card_go_poll(idx, 0);
}

double card_go_poll(uint32_t idx, unsigned poll_us)
{
	const uint32_t qreg = SPYRE_REG_QUEUE(0);
	const struct timespec pause = { 0, (long)poll_us * 1000 };
	double t0 = now_s();

	reg_wr(qreg + SPYRE_QREG_DOORBELL, idx);
	while (reg_rd(qreg + SPYRE_QREG_STATUS) == SPYRE_QSTATE_BUSY) {
		if (now_s() - t0 > 60)
			die("the queue did not go idle in 60 s");
		if (poll_us)
			nanosleep(&pause, NULL);
	}
	return now_s() - t0;
}

uint32_t card_status(uint64_t entry)
{
	return (uint32_t)qtest("readl 0x%" PRIx64, entry + SPYRE_CMD_OFF_STATUS);
}
