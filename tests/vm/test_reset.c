// SPDX-License-Identifier: MIT
/*
 * Resets the driver did not start, and hangs on every queue at once.
 *
 * - A function reset through sysfs (echo 1 > /sys/bus/pci/devices/.../reset)
 *   while copies are queued and running on all four queues: every job
 *   completes with SUCCESS and correct data, no file is banned.
 * - Hangs on all four queues at the same moment, round after round, with
 *   innocent copies queued behind them on the same queues: one card reset
 *   per round, every hung job ends with TIMEOUT (its file banned), every
 *   innocent one completes with correct data.
 * - The same with a debugfs reset racing the hangs.
 * - PCIe errors reported through AER (Linux's aer_inject, on the card's
 *   AER capability) while copies run: a correctable one changes nothing; a
 *   non-fatal and a fatal uncorrectable one each go through the driver's
 *   error_detected/slot_reset/resume (the fatal one with a real link reset
 *   of the card): one card reset each, every copy completes correctly.
 *   Skipped on a kernel without AER (the debug kernel).
 * - A card that never confirms an invalidation (debugfs inject_inv_stall):
 *   closing a handle resets the card after twice the job timeout plus a
 *   second, and the close completes; the card works afterwards.
 *
 * Run with spyre loaded with a short job_timeout_ms (1000).
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <linux/pci_regs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spyre_regs.h"
#include "spyre_vm.h"
#include "tap.h"
#include "uapi/drm/spyre_accel.h"

#define NQ		DRM_SPYRE_NUM_QUEUES
#define COPY_BYTES	(1u << 20)
#define BIG_BYTES	(8u << 20)	/* device-to-device copies that keep the card busy */
#define BIG_COPIES	2
#define BATCH		6	/* copies in flight per queue per batch */
#define HANG_ROUNDS	8	/* 8 rounds x 4 queues = 32 hung jobs */
#define BEHIND		3	/* innocent copies queued behind each hang */

static char pci_dir[128];
/* The card's node: after test_recovery's rebind it may not be accel0. */
static char card_path[64] = "/dev/accel/accel0";

/* /sys/bus/pci/devices/<address> of the card spyre drives; its node in card_path. */
static const char *card_dir(void)
{
	const char *addr;
	glob_t g;

	if (pci_dir[0])
		return pci_dir;
	if (glob("/sys/bus/pci/drivers/spyre/0000:*", 0, NULL, &g) || g.gl_pathc < 1) {
		globfree(&g);
		return "/nonexistent";
	}
	addr = strrchr(g.gl_pathv[0], '/') + 1;
	snprintf(pci_dir, sizeof(pci_dir), "/sys/bus/pci/devices/%s", addr);
	if (card_node(addr, card_path, sizeof(card_path)))
		printf("  # no accel node for %s\n", addr);
	globfree(&g);
	return pci_dir;
}

static long reset_count(void)
{
	char path[192], buf[32] = "";
	int fd;

	snprintf(path, sizeof(path), "%s/spyre/reset_count", card_dir());
	fd = open(path, O_RDONLY);
	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0)
		buf[0] = '\0';
	if (fd >= 0)
		close(fd);
	return buf[0] ? atol(buf) : -1;
}

static int function_reset(void)
{
	char path[192];

	snprintf(path, sizeof(path), "%s/reset", card_dir());
	return sysfs_write(path, "1");
}

static int debugfs_reset(void)
{
	return debugfs_write("reset", "1");
}

/* Wait for every job using @bo; returns the job status or -errno. */
static int bo_wait(int fd, struct bo *bo, int seconds)
{
	struct drm_spyre_bo_wait w = { .handle = bo->handle };
	struct timespec ts;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	w.timeout_ns = (ts.tv_sec + seconds) * 1000000000ll + ts.tv_nsec;
	ret = xioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w);
	return ret ? ret : (int)w.job_status;
}

/* A file copying on one queue: a source, BATCH destinations, commands. */
struct copier {
	int fd;
	uint32_t queue;
	struct bo src, dst[BATCH], cmd;
	struct bo big[2], bigcmd;	/* device memory and its commands, with @busy */
	uint32_t seed;
};

static int copier_open(struct copier *c, uint32_t queue, bool busy)
{
	memset(c, 0, sizeof(*c));
	c->queue = queue;
	card_dir();
	c->fd = open(card_path, O_RDWR | O_CLOEXEC);
	if (c->fd < 0 || bo_new(c->fd, COPY_BYTES, 0, &c->src) ||
	    bo_new(c->fd, 4096, 0, &c->cmd))
		return -1;
	for (int i = 0; i < BATCH; i++)
		if (bo_new(c->fd, COPY_BYTES, 0, &c->dst[i]))
			return -1;
	for (int i = 0; busy && i < 2; i++)
		if (bo_new(c->fd, BIG_BYTES, DRM_SPYRE_BO_DEVICE, &c->big[i]))
			return -1;
	if (busy && bo_new(c->fd, 4096, 0, &c->bigcmd))
		return -1;
	return 0;
}

/* Copies between device buffers that keep the queue busy a while. */
static int copier_submit_busy(struct copier *c)
{
	uint32_t bos[] = { c->big[0].handle, c->big[1].handle, c->bigcmd.handle };

	for (int i = 0; i < BIG_COPIES; i++) {
		cmd_put(c->bigcmd.map, i, SPYRE_OP_DMA_COPY, c->big[i % 2].va,
			c->big[(i + 1) % 2].va, BIG_BYTES);
		if (submit(c->fd, c->queue, c->bigcmd.va + i * SPYRE_CMD_SIZE, 1, bos, 3, 0))
			return -1;
	}
	return 0;
}

static void copier_close(struct copier *c)
{
	if (c->fd >= 0)
		close(c->fd);
}

/* Fill the source and submit copy @i of it; 0 or -errno. */
static int copier_submit(struct copier *c, int i)
{
	uint32_t bos[] = { c->src.handle, c->dst[i].handle, c->cmd.handle };

	memset(c->dst[i].map, 0, COPY_BYTES);
	cmd_put(c->cmd.map, i, SPYRE_OP_DMA_COPY, c->src.va, c->dst[i].va, COPY_BYTES);
	return submit(c->fd, c->queue, c->cmd.va + i * SPYRE_CMD_SIZE, 1, bos, 3, 0);
}

static void copier_fill(struct copier *c)
{
	uint32_t *s = c->src.map;

	c->seed++;
	for (uint32_t k = 0; k < COPY_BYTES / 4; k++)
		s[k] = k * 2654435761u ^ c->queue << 28 ^ c->seed << 16;
}

/* Wait for copies 0..n-1: each must succeed with the source's data. */
static int copier_check(struct copier *c, int n)
{
	for (int i = 0; i < n; i++) {
		int st = bo_wait(c->fd, &c->dst[i], 120);

		if (st != DRM_SPYRE_JOB_STATUS_SUCCESS) {
			printf("  # queue %u copy %d: status %d\n", c->queue, i, st);
			return 1;
		}
		if (memcmp(c->src.map, c->dst[i].map, COPY_BYTES)) {
			printf("  # queue %u copy %d: wrong data\n", c->queue, i);
			return 2;
		}
	}
	return 0;
}

/*
 * A child process: batches of BATCH copies in flight on @queue, @batches of
 * them, or as many as fit in @seconds if @batches is 0.
 */
static int copy_batches(uint32_t queue, int batches, double seconds)
{
	double end = now_s() + seconds;
	struct copier c;
	int ret = 0, b;

	if (copier_open(&c, queue, !batches))
		return 10;
	for (b = 0; !ret && (batches ? b < batches : now_s() < end); b++) {
		copier_fill(&c);
		if (!batches && copier_submit_busy(&c))
			ret = 12;
		for (int i = 0; i < BATCH && !ret; i++)
			if (copier_submit(&c, i))
				ret = 11;
		if (!ret)
			ret = copier_check(&c, BATCH);
	}
	if (!batches)
		printf("  # queue %u: %d batches of %d copies\n", queue, b, BATCH);
	copier_close(&c);
	return ret;
}

/* One child per queue copying batches for @seconds (copy_batches); 0 or -1. */
static int start_copiers(pid_t *pids, double seconds)
{
	fflush(stdout);
	for (int q = 0; q < NQ; q++) {
		pids[q] = fork();
		if (pids[q] < 0)
			return -1;
		if (pids[q] == 0)
			_exit(copy_batches(q, 0, seconds));
	}
	return 0;
}

static void wait_children(pid_t *pids, int n)
{
	for (int i = 0; i < n; i++) {
		int status;

		ASSERT_EQ(waitpid(pids[i], &status, 0), pids[i]);
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(WEXITSTATUS(status), 0);
	}
}

TEST(function_reset_under_load_loses_nothing)
{
	long before = reset_count();
	pid_t pids[NQ];
	double t;

	ASSERT_TRUE(before >= 0);
	ASSERT_EQ(start_copiers(pids, 6), 0);
	/* Three function resets while copies are queued and running. */
	for (int r = 0; r < 3; r++) {
		usleep(1200000);
		t = now_s();
		EXPECT_EQ(function_reset(), 0);
		printf("  # function reset %d took %.0f ms\n", r, (now_s() - t) * 1e3);
	}
	wait_children(pids, NQ);
	EXPECT_EQ(reset_count(), before + 3);
	/* Nobody was banned: a fresh round on every queue works. */
	for (int q = 0; q < NQ; q++)
		EXPECT_EQ(copy_batches(q, 1, 0), 0);
}

/* A file whose one job WAITs forever on queue @q (for a value never written). */
static int hang_submit(uint32_t q, struct bo *cmd)
{
	uint32_t bos[1];
	int fd;

	card_dir();
	fd = open(card_path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || bo_new(fd, 4096, 0, cmd))
		return -1;
	bos[0] = cmd->handle;
	cmd_put(cmd->map, 0, SPYRE_OP_WAIT, cmd->va + 2048, 1, 0);
	if (submit(fd, q, cmd->va, 1, bos, 1, 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * One round: on each queue an innocent copy, a hang, then BEHIND innocent
 * copies queued behind the hang; optionally a debugfs reset while they
 * hang.  Returns the seconds until the last hung job ended.
 */
static double hang_round(struct copier *inn, bool race_debugfs)
{
	struct bo hcmd[NQ];
	int hfd[NQ];
	double t0 = now_s(), last = 0;

	for (int q = 0; q < NQ; q++) {
		copier_fill(&inn[q]);
		EXPECT_EQ(copier_submit(&inn[q], 0), 0);
	}
	for (int q = 0; q < NQ; q++) {
		hfd[q] = hang_submit(q, &hcmd[q]);
		EXPECT_TRUE(hfd[q] >= 0);
	}
	for (int q = 0; q < NQ; q++)
		for (int i = 1; i <= BEHIND; i++)
			EXPECT_EQ(copier_submit(&inn[q], i), 0);
	if (race_debugfs) {
		usleep(300000);
		EXPECT_EQ(debugfs_reset(), 0);
	}
	for (int q = 0; q < NQ; q++) {
		uint32_t bos[] = { hcmd[q].handle };

		if (hfd[q] < 0)
			continue;
		EXPECT_EQ(bo_wait(hfd[q], &hcmd[q], 120), DRM_SPYRE_JOB_STATUS_TIMEOUT);
		if (now_s() - t0 > last)
			last = now_s() - t0;
		/* Its file is banned. */
		EXPECT_EQ(submit(hfd[q], q, hcmd[q].va, 1, bos, 1, 0), -ECANCELED);
		close(hfd[q]);
	}
	for (int q = 0; q < NQ; q++)
		EXPECT_EQ(copier_check(&inn[q], 1 + BEHIND), 0);
	return last;
}

static void hang_rounds(int rounds, bool race_debugfs, int resets_per_round)
{
	struct copier inn[NQ];
	double worst = 0, sum = 0;

	for (int q = 0; q < NQ; q++)
		ASSERT_EQ(copier_open(&inn[q], q, false), 0);
	for (int r = 0; r < rounds; r++) {
		long before = reset_count();
		double t = hang_round(inn, race_debugfs);
		long resets = reset_count() - before;

		printf("  # round %d: %d hung jobs ended with TIMEOUT after %.2f s, %ld card resets\n",
		       r, NQ, t, resets);
		EXPECT_EQ(resets, resets_per_round);
		sum += t;
		if (t > worst)
			worst = t;
	}
	printf("  # %d hung and %d innocent jobs; hung jobs ended after %.2f s on average, %.2f s at worst\n",
	       rounds * NQ, rounds * NQ * (1 + BEHIND), sum / rounds, worst);
	for (int q = 0; q < NQ; q++)
		copier_close(&inn[q]);
}

TEST(hangs_on_all_queues_at_once_recover_once)
{
	hang_rounds(HANG_ROUNDS, false, 1);
}

TEST(debugfs_reset_racing_hangs)
{
	/* The debugfs reset replays the hangs; one more reset ends them. */
	hang_rounds(2, true, 2);
}

TEST(function_reset_racing_hangs)
{
	long before = reset_count();
	struct bo hcmd[NQ];
	int hfd[NQ];

	for (int q = 0; q < NQ; q++) {
		hfd[q] = hang_submit(q, &hcmd[q]);
		ASSERT_TRUE(hfd[q] >= 0);
	}
	usleep(300000);
	EXPECT_EQ(function_reset(), 0);
	for (int q = 0; q < NQ; q++) {
		EXPECT_EQ(bo_wait(hfd[q], &hcmd[q], 120), DRM_SPYRE_JOB_STATUS_TIMEOUT);
		close(hfd[q]);
	}
	EXPECT_EQ(reset_count(), before + 2);
	for (int q = 0; q < NQ; q++)
		EXPECT_EQ(copy_batches(q, 1, 0), 0);
}

/* Close @bo's handle; returns the seconds it took, or -1. */
static double timed_gem_close(int fd, struct bo *bo)
{
	struct drm_gem_close c = { .handle = bo->handle };
	double t = now_s();

	if (bo->map)
		munmap(bo->map, bo->size);
	return xioctl(fd, DRM_IOCTL_GEM_CLOSE, &c) ? -1 : now_s() - t;
}

TEST(invalidation_never_confirmed_resets_the_card)
{
	long before = reset_count();
	struct copier c;
	struct bo a, b;
	double t;

	ASSERT_TRUE(before >= 0);
	ASSERT_EQ(copier_open(&c, 0, false), 0);
	ASSERT_EQ(bo_new(c.fd, COPY_BYTES, 0, &a), 0);
	ASSERT_EQ(bo_new(c.fd, COPY_BYTES, 0, &b), 0);
	/* A job binds the file to a hardware context. */
	copier_fill(&c);
	ASSERT_EQ(copier_submit(&c, 0), 0);
	ASSERT_EQ(copier_check(&c, 1), 0);

	ASSERT_EQ(debugfs_write("inject_inv_stall", "1"), 0);
	t = timed_gem_close(c.fd, &a);
	printf("  # close with the confirmation stalled took %.2f s\n", t);
	/* job_timeout_ms=1000: the driver gives up after 2 x 1 s + 1 s. */
	EXPECT_TRUE(t >= 2.5 && t < 30);
	EXPECT_EQ(reset_count(), before + 1);

	/* The reset ended the stall: the next close is quick, the card works. */
	t = timed_gem_close(c.fd, &b);
	printf("  # the next close took %.3f s\n", t);
	EXPECT_TRUE(t >= 0 && t < 2);	/* well under the 3 s a stall costs */
	EXPECT_EQ(reset_count(), before + 1);
	copier_fill(&c);
	EXPECT_EQ(copier_submit(&c, 0), 0);
	EXPECT_EQ(copier_check(&c, 1), 0);
	copier_close(&c);
}

/* Wait up to 10 s for the card's reset count to reach @want. */
static long reset_count_reaches(long want)
{
	long n = reset_count();

	for (int i = 0; i < 200 && n < want; i++) {
		usleep(50000);
		n = reset_count();
	}
	return n;
}

TEST(aer_errors_under_load_lose_nothing)
{
	static const struct {
		const char *what;
		uint32_t uncor, cor;
		int resets;
	} errs[] = {
		{ "correctable (receiver error)", 0, PCI_ERR_COR_RCVR, 0 },
		{ "non-fatal (completion timeout)", PCI_ERR_UNC_COMP_TIME, 0, 1 },
		{ "fatal (data link protocol)", PCI_ERR_UNC_DLP, 0, 1 },
	};
	long before = reset_count(), want = before;
	pid_t pids[NQ];

	if (access("/dev/aer_inject", W_OK) && system("modprobe aer_inject 2>/dev/null"))
		SKIP("no aer_inject: this kernel has no AER (CONFIG_PCIEAER_INJECT)");
	ASSERT_TRUE(before >= 0);
	ASSERT_EQ(start_copiers(pids, 6), 0);
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		double t;

		usleep(1200000);
		t = now_s();
		EXPECT_EQ(aer_inject(strrchr(card_dir(), '/') + 1, errs[i].uncor, errs[i].cor), 0);
		want += errs[i].resets;
		EXPECT_EQ(reset_count_reaches(want), want);
		printf("  # %s: %ld card resets, recovered in %.0f ms\n", errs[i].what,
		       reset_count() - before, (now_s() - t) * 1e3);
	}
	wait_children(pids, NQ);
	EXPECT_EQ(reset_count(), want);
	/* Nobody was banned: a fresh round on every queue works. */
	for (int q = 0; q < NQ; q++)
		EXPECT_EQ(copy_batches(q, 1, 0), 0);
}

TAP_MAIN()
