// SPDX-License-Identifier: MIT
/*
 * rmmod during load: processes hold open files, CPU mappings of host and
 * device buffers, and jobs in flight.  rmmod must refuse while the files
 * are open, unbinding must fail the work cleanly, and once the processes
 * are gone rmmod must succeed and a reloaded driver must work.  The suite's
 * kmemleak and kernel-log scans afterwards catch leaks and oopses.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spyre_regs.h"
#include "spyre_vm.h"
#include "tap.h"
#include "uapi/drm/spyre_accel.h"

#define WORKERS		4
#define JOB_BYTES	(256u << 10)

/* The card's PCI address, from the accel node's parent. */
static int card_address(char *addr, size_t len)
{
	char link[256];
	glob_t g;
	ssize_t n = -1;

	if (glob("/sys/class/accel/accel*/device", 0, NULL, &g) == 0 && g.gl_pathc >= 1)
		n = readlink(g.gl_pathv[0], link, sizeof(link) - 1);
	globfree(&g);
	if (n <= 0)
		return -1;
	link[n] = '\0';
	snprintf(addr, len, "%s", strrchr(link, '/') + 1);
	return 0;
}

/*
 * A loaded process: host, device and CPU-visible device buffers, mapped;
 * copies submitted eight at a time so jobs are always queued.  Tells the
 * parent on @ready after its first job finished; stops when the card goes.
 */
static int loaded_process(const char *node, int ready)
{
	int fd = open(node, O_RDWR | O_CLOEXEC), ret;
	struct bo src, dst, dev, win, cmd;
	uint32_t so;
	struct drm_syncobj_create c = { 0 };
	uint64_t jobs = 0;

	if (fd < 0 || bo_new(fd, JOB_BYTES, 0, &src) || bo_new(fd, JOB_BYTES, 0, &dst) ||
	    bo_new(fd, JOB_BYTES, DRM_SPYRE_BO_DEVICE, &dev) ||
	    bo_new(fd, JOB_BYTES, DRM_SPYRE_BO_DEVICE | DRM_SPYRE_BO_MAPPABLE, &win) ||
	    bo_new(fd, 4096, 0, &cmd) || xioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c))
		return 10;
	so = c.handle;
	memset(src.map, 0x3c, JOB_BYTES);
	memset(win.map, 0x11, JOB_BYTES);
	cmd_put(cmd.map, 0, SPYRE_OP_DMA_COPY, src.va, dev.va, JOB_BYTES);
	cmd_put(cmd.map, 1, SPYRE_OP_DMA_COPY, dev.va, win.va, JOB_BYTES);
	cmd_put(cmd.map, 2, SPYRE_OP_DMA_COPY, win.va, dst.va, JOB_BYTES);
	uint32_t bos[] = { src.handle, dst.handle, dev.handle, win.handle, cmd.handle };
	for (;;) {
		ret = submit(fd, 0, cmd.va, 3, bos, 5, so);
		if (ret)
			break;
		if (++jobs % 8 == 1) {
			struct drm_syncobj_wait w = {
				.handles = (uintptr_t)&so, .count_handles = 1,
				.timeout_nsec = INT64_MAX,
			};

			ret = xioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
			if (ret)
				break;
			if (jobs == 1 && (((uint8_t *)dst.map)[JOB_BYTES - 1] != 0x3c ||
					  write(ready, "r", 1) != 1))
				return 12;
		}
	}
	/* The card went away under us: the documented error, then clean up. */
	if (ret != -ENODEV) {
		printf("  # after %llu jobs an ioctl gave %d, not -ENODEV\n",
		       (unsigned long long)jobs, ret);
		return 13;
	}
	/* Host pages stay the process's own after the device is gone. */
	if (((uint8_t *)src.map)[7] != 0x3c)
		return 14;
	munmap(src.map, JOB_BYTES);
	munmap(dst.map, JOB_BYTES);
	munmap(win.map, JOB_BYTES);
	munmap(cmd.map, 4096);
	close(fd);
	return 0;
}

static long delete_module(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK);
}

TEST(rmmod_during_load)
{
	char addr[32], node[64];
	int pipefd[2], status;
	pid_t pids[WORKERS];
	char c;

	ASSERT_EQ(card_address(addr, sizeof(addr)), 0);
	ASSERT_EQ(card_node(addr, node, sizeof(node)), 0);
	ASSERT_EQ(pipe(pipefd), 0);
	fflush(stdout);
	for (int i = 0; i < WORKERS; i++) {
		pids[i] = fork();
		ASSERT_TRUE(pids[i] >= 0);
		if (pids[i] == 0) {
			close(pipefd[0]);
			_exit(loaded_process(node, pipefd[1]));
		}
	}
	close(pipefd[1]);
	for (int i = 0; i < WORKERS; i++)
		ASSERT_EQ(read(pipefd[0], &c, 1), 1);
	close(pipefd[0]);

	/* In use: rmmod is refused and nothing changes. */
	EXPECT_EQ(delete_module("spyre"), -1);
	EXPECT_EQ(errno, EWOULDBLOCK);
	EXPECT_EQ(access(node, F_OK), 0);

	/* The device goes; the processes see -ENODEV, unmap and close. */
	ASSERT_EQ(sysfs_write("/sys/bus/pci/drivers/spyre/unbind", addr), 0);
	for (int i = 0; i < WORKERS; i++) {
		ASSERT_EQ(waitpid(pids[i], &status, 0), pids[i]);
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(WEXITSTATUS(status), 0);
	}

	/* Nothing holds the module now (deferred releases may take a moment). */
	long ret = -1;

	for (int i = 0; i < 50 && ret; i++) {
		ret = delete_module("spyre");
		if (ret)
			usleep(100000);
	}
	EXPECT_EQ(ret, 0);
	if (ret)
		printf("  # rmmod: %s\n", strerror(errno));

	/* And a fresh load drives the card again. */
	ASSERT_EQ(system("modprobe spyre"), 0);
	ASSERT_EQ(card_node(addr, node, sizeof(node)), 0);
	int fd = open(node, O_RDWR | O_CLOEXEC);
	struct bo src, dst, cmd;
	struct drm_syncobj_create sc = { 0 };

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(bo_new(fd, JOB_BYTES, 0, &src), 0);
	ASSERT_EQ(bo_new(fd, JOB_BYTES, 0, &dst), 0);
	ASSERT_EQ(bo_new(fd, 4096, 0, &cmd), 0);
	ASSERT_EQ(xioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &sc), 0);
	memset(src.map, 0x77, JOB_BYTES);
	cmd_put(cmd.map, 0, SPYRE_OP_DMA_COPY, src.va, dst.va, JOB_BYTES);
	uint32_t bos[] = { src.handle, dst.handle, cmd.handle };
	ASSERT_EQ(submit(fd, 1, cmd.va, 1, bos, 3, sc.handle), 0);
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)&sc.handle, .count_handles = 1, .timeout_nsec = INT64_MAX,
	};
	EXPECT_EQ(xioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w), 0);
	EXPECT_EQ(memcmp(src.map, dst.map, JOB_BYTES), 0);
	munmap(src.map, JOB_BYTES);
	munmap(dst.map, JOB_BYTES);
	munmap(cmd.map, 4096);
	close(fd);
}

TAP_MAIN()
