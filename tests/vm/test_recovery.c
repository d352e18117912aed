// SPDX-License-Identifier: MIT
/*
 * Hang recovery: a job hangs on queue 0 (injected through debugfs) while
 * three other processes keep submitting on queues 1-3.  The driver must
 * time the hung job out, reset the card, fail that job with TIMEOUT and ban
 * its file, and every other process's jobs must complete with correct data.
 * Run with spyre loaded with a short job_timeout_ms.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spyre_regs.h"
#include "spyre_vm.h"
#include "tap.h"
#include "uapi/drm/spyre_accel.h"

#define JOB_BYTES	(256u << 10)

/* The card's node; a rebind while old mappings live may give a new minor. */
static char card_path[64] = "/dev/accel/accel0";
#define WORKER_JOBS	20

/* Submit one copy and wait for it; returns the job status or -errno. */
static int run_copy(int fd, uint32_t queue, struct bo *src, struct bo *dst, struct bo *cmd)
{
	uint32_t bos[] = { src->handle, dst->handle, cmd->handle };
	struct drm_spyre_submit s = {
		.queue = queue, .commands = cmd->va, .command_count = 1,
		.bo_handles = (uintptr_t)bos, .bo_count = 3,
	};
	struct drm_spyre_bo_wait w = { .handle = dst->handle };
	struct timespec ts;
	int ret;

	cmd_put(cmd->map, 0, SPYRE_OP_DMA_COPY, src->va, dst->va, JOB_BYTES);
	ret = xioctl(fd, DRM_IOCTL_SPYRE_SUBMIT, &s);
	if (ret)
		return ret;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	w.timeout_ns = (ts.tv_sec + 60) * 1000000000ll + ts.tv_nsec;
	ret = xioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w);
	return ret ? ret : (int)w.job_status;
}

/* A bystander: WORKER_JOBS copies on its queue, each checked. */
static int worker(uint32_t queue)
{
	int fd = open(card_path, O_RDWR | O_CLOEXEC);
	struct bo src, dst, cmd;

	if (fd < 0 || bo_new(fd, JOB_BYTES, 0, &src) || bo_new(fd, JOB_BYTES, 0, &dst) ||
	    bo_new(fd, 4096, 0, &cmd))
		return 10;
	for (int j = 0; j < WORKER_JOBS; j++) {
		uint32_t *s = src.map;
		int st;

		for (uint32_t i = 0; i < JOB_BYTES / 4; i++)
			s[i] = i ^ (queue << 24) ^ (j << 16);
		memset(dst.map, 0, JOB_BYTES);
		st = run_copy(fd, queue, &src, &dst, &cmd);
		if (st != DRM_SPYRE_JOB_STATUS_SUCCESS) {
			printf("  # queue %u job %d: status %d\n", queue, j, st);
			return 11;
		}
		if (memcmp(src.map, dst.map, JOB_BYTES)) {
			printf("  # queue %u job %d: wrong data\n", queue, j);
			return 12;
		}
	}
	close(fd);
	return 0;
}

TEST(hung_job_is_recovered_while_others_complete)
{
	int fd = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC), status;
	struct bo src, dst, cmd;
	pid_t pids[3];

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(bo_new(fd, JOB_BYTES, 0, &src), 0);
	ASSERT_EQ(bo_new(fd, JOB_BYTES, 0, &dst), 0);
	ASSERT_EQ(bo_new(fd, 4096, 0, &cmd), 0);

	fflush(stdout);
	for (int i = 0; i < 3; i++) {
		pids[i] = fork();
		ASSERT_TRUE(pids[i] >= 0);
		if (pids[i] == 0)
			_exit(worker(1 + i));
	}
	ASSERT_EQ(debugfs_write("inject_hang", "0 0"), 0);
	EXPECT_EQ(run_copy(fd, 0, &src, &dst, &cmd), DRM_SPYRE_JOB_STATUS_TIMEOUT);
	EXPECT_EQ(run_copy(fd, 0, &src, &dst, &cmd), -ECANCELED);
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(waitpid(pids[i], &status, 0), pids[i]);
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(WEXITSTATUS(status), 0);
	}
	close(fd);

	/* The card works for everyone after the reset, queue 0 included. */
	EXPECT_EQ(worker(0), 0);
}

TEST(forced_reset_replays_nothing_lost)
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0)
		_exit(worker(2));
	usleep(200000);
	ASSERT_EQ(debugfs_write("reset", "1"), 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(WEXITSTATUS(status), 0);
}

/* A bystander that stops at the first error instead of failing on it. */
static int busy_until_gone(uint32_t queue)
{
	int fd = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC), n = 0;
	struct bo src, dst, cmd;

	if (fd < 0 || bo_new(fd, JOB_BYTES, 0, &src) || bo_new(fd, JOB_BYTES, 0, &dst) ||
	    bo_new(fd, 4096, 0, &cmd))
		return 10;
	while (run_copy(fd, queue, &src, &dst, &cmd) == DRM_SPYRE_JOB_STATUS_SUCCESS)
		n++;
	/* Unmap and close with jobs possibly still queued: must not oops. */
	close(fd);
	return n > 0 ? 0 : 11;
}

/* Unbinding the driver under load fails the work cleanly; rebinding works. */
TEST(unbind_under_load_then_rebind)
{
	char addr[32], link[256];
	ssize_t len;
	pid_t pids[3];
	int status;

	len = readlink("/sys/class/accel/accel0/device", link, sizeof(link) - 1);
	ASSERT_TRUE(len > 0);
	link[len] = '\0';
	snprintf(addr, sizeof(addr), "%s", strrchr(link, '/') + 1);

	fflush(stdout);
	for (int i = 0; i < 3; i++) {
		pids[i] = fork();
		ASSERT_TRUE(pids[i] >= 0);
		if (pids[i] == 0)
			_exit(busy_until_gone(i));
	}
	usleep(500000);
	ASSERT_EQ(sysfs_write("/sys/bus/pci/drivers/spyre/unbind", addr), 0);
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(waitpid(pids[i], &status, 0), pids[i]);
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(WEXITSTATUS(status), 0);
	}
	ASSERT_EQ(sysfs_write("/sys/bus/pci/drivers/spyre/bind", addr), 0);
	/* Earlier tests' mappings keep the old device's minor: find the new one. */
	EXPECT_EQ(card_node(addr, card_path, sizeof(card_path)), 0);
	EXPECT_EQ(worker(1), 0);
}

TAP_MAIN()
