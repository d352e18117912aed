/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the guest selftests: the ioctl wrapper, buffers and
 * the card's command encoding (spyre_cmd.h).  Header-only, like
 * tests/lib/tap.h.
 */
#ifndef SPYRE_VM_H
#define SPYRE_VM_H

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spyre_cmd.h"
#include "spyre_regs.h"
#include "uapi/drm/spyre_accel.h"

/* CLOCK_MONOTONIC in seconds. */
static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ioctl returning -errno, retrying on EINTR/EAGAIN as libdrm does. */
static inline int xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret ? -errno : 0;
}

struct bo {
	uint32_t handle;
	uint64_t va;		/* device address in the creating file */
	uint64_t size;
	void *map;		/* NULL for device memory the CPU cannot see */
};

/* Create a buffer, learn its address and map it when the CPU can. */
static inline int bo_new(int fd, uint64_t size, uint32_t flags, struct bo *bo)
{
	struct drm_spyre_bo_create c = { .size = size, .flags = flags };
	struct drm_spyre_bo_info i = { 0 };
	int ret = xioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &c);

	memset(bo, 0, sizeof(*bo));
	if (ret)
		return ret;
	i.handle = c.handle;
	ret = xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &i);
	if (ret)
		return ret;
	bo->handle = c.handle;
	bo->va = c.device_addr;
	bo->size = i.size;
	if ((flags & DRM_SPYRE_BO_DEVICE) && !(flags & DRM_SPYRE_BO_MAPPABLE))
		return 0;
	bo->map = mmap(NULL, i.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, i.mmap_offset);
	if (bo->map == MAP_FAILED) {
		bo->map = NULL;
		return -errno;
	}
	return 0;
}

/* Command idx of a command buffer: opcode and the first three arguments. */
static inline void cmd_put(void *buf, int idx, uint8_t op, uint64_t a0, uint64_t a1,
			   uint64_t a2)
{
	spyre_cmd_encode3((uint8_t *)buf + idx * SPYRE_CMD_SIZE, op, a0, a1, a2);
}

/* The card's device memory bytes, from the query ioctl (0 on failure). */
static inline uint64_t mem_bytes(int fd)
{
	struct drm_spyre_device_info info = { 0 };
	struct drm_spyre_query q = {
		.param = DRM_SPYRE_QUERY_DEVICE_INFO, .size = sizeof(info),
		.data = (uintptr_t)&info,
	};

	return xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q) ? 0 : info.mem_bytes;
}

/* Submit n commands at cmds on a queue, with its buffers and an out syncobj. */
static inline int submit(int fd, uint32_t queue, uint64_t cmds, uint32_t n,
			 const uint32_t *bos, uint32_t nbos, uint32_t out)
{
	struct drm_spyre_submit s = {
		.queue = queue, .commands = cmds, .command_count = n,
		.bo_handles = (uintptr_t)bos, .bo_count = nbos, .out_syncobj = out,
	};

	return xioctl(fd, DRM_IOCTL_SPYRE_SUBMIT, &s);
}

/* Write @text to a sysfs or debugfs file; 0 or -1. */
static inline int sysfs_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY), ret = -1;

	if (fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text))
		ret = 0;
	if (fd >= 0)
		close(fd);
	return ret;
}

/* Write @text to debugfs file @name of the only card; 0 or -1. */
static inline int debugfs_write(const char *name, const char *text)
{
	char pattern[128];
	glob_t g;
	int ret = -1;

	snprintf(pattern, sizeof(pattern), "/sys/kernel/debug/accel/*/%s", name);
	if (!glob(pattern, 0, NULL, &g) && g.gl_pathc == 1)
		ret = sysfs_write(g.gl_pathv[0], text);
	globfree(&g);
	return ret;
}

/*
 * The accel node of the card at PCI address @addr, once udev-less devtmpfs
 * has it (up to 5 s): after a rebind or reload it may have a new minor.
 */
static inline int card_node(const char *addr, char *path, size_t len)
{
	char pattern[128];

	snprintf(pattern, sizeof(pattern), "/sys/bus/pci/devices/%s/accel/accel*", addr);
	for (int i = 0; i < 50; i++) {
		glob_t g;

		if (!glob(pattern, 0, NULL, &g) && g.gl_pathc == 1) {
			snprintf(path, len, "/dev/accel/%s", strrchr(g.gl_pathv[0], '/') + 1);
			globfree(&g);
			if (!access(path, F_OK))
				return 0;
		} else {
			globfree(&g);
		}
		usleep(100000);
	}
	return -1;
}

/*
 * The PCI address (@addr) and accel node (@node) of the card spyre drives,
 * when it drives one: a rebind or reload may have given it a new minor.
 * 0, or -1.
 */
static inline int card_find(char *addr, size_t alen, char *node, size_t nlen)
{
	glob_t g;
	int ret = -1;

	if (!glob("/sys/bus/pci/drivers/spyre/0000:*", 0, NULL, &g) && g.gl_pathc == 1) {
		snprintf(addr, alen, "%s", strrchr(g.gl_pathv[0], '/') + 1);
		ret = card_node(addr, node, nlen);
	}
	globfree(&g);
	return ret;
}

/* A debugfs file of the card behind @fd, whole, NUL-terminated (free it). */
static inline char *debugfs_read(int fd, const char *name)
{
	char path[160], link[256], *buf;
	size_t len = 0, cap = 1 << 16;
	struct stat st;
	ssize_t n;
	int dfd;

	/* The card's debugfs directory is named after its PCI device. */
	if (fstat(fd, &st))
		return NULL;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device", major(st.st_rdev),
		 minor(st.st_rdev));
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return NULL;
	link[n] = '\0';
	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/%s", strrchr(link, '/') + 1,
		 name);
	dfd = open(path, O_RDONLY | O_CLOEXEC);
	if (dfd < 0)
		return NULL;
	buf = malloc(cap);
	while (buf && (n = read(dfd, buf + len, cap - len - 1)) > 0) {
		len += n;
		if (len + 1 == cap)
			buf = realloc(buf, cap *= 2);
	}
	close(dfd);
	if (buf)
		buf[len] = '\0';
	return buf;
}

/* The value of "key value" line @key in @text, or -1. */
static inline long long keyed(const char *text, const char *key)
{
	size_t klen = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, klen) && l[klen] == ' ')
			return strtoll(l + klen + 1, NULL, 0);
	return -1;
}

/* Device memory in use on the card behind @fd (debugfs "memory"), or -1. */
static inline long long device_used(int fd)
{
	char *text = debugfs_read(fd, "memory");
	long long used = text ? keyed(text, "device_used") : -1;

	free(text);
	return used;
}

/*
 * Device memory in use once it settles at @want (@seconds at most): a
 * closed buffer is freed when the last job that listed it is retired,
 * shortly after the job ends (used_settles: 5 s), or after the reset a
 * hung job costs.
 */
static inline long long used_settles_within(int fd, long long want, int seconds)
{
	long long used = device_used(fd);

	for (int i = 0; i < seconds * 20 && used != want; i++) {
		usleep(50000);
		used = device_used(fd);
	}
	return used;
}

static inline long long used_settles(int fd, long long want)
{
	return used_settles_within(fd, want, 5);
}

/*
 * Device memory in use once it stops changing (the same for half a second,
 * 10 s at most): a baseline taken right after another test's processes
 * exit would count buffers their last jobs still hold for a moment.
 */
static inline long long device_used_steady(int fd)
{
	long long used = device_used(fd), last = -2;

	for (int i = 0, same = 0; i < 200 && same < 10; i++) {
		usleep(50000);
		last = used;
		used = device_used(fd);
		same = used == last ? same + 1 : 0;
	}
	return used;
}

/* BO_WAIT on @handle for @seconds: its failed job's status (or SUCCESS), or -errno. */
static inline int bo_wait_status(int fd, uint32_t handle, int seconds)
{
	struct drm_spyre_bo_wait w = { .handle = handle };
	int ret;

	w.timeout_ns = (uint64_t)((now_s() + seconds) * 1e9);
	ret = xioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w);
	return ret ? ret : (int)w.job_status;
}

/* A child's exit status, 128 + the signal that ended it, or -1. */
static inline int child_status(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The reset_count (sysfs) of the only card spyre drives, or -1. */
static inline long card_reset_count(void)
{
	glob_t g;
	long n = -1;
	FILE *f;

	if (glob("/sys/bus/pci/drivers/spyre/0000:*/spyre/reset_count", 0, NULL, &g) ||
	    g.gl_pathc != 1) {
		globfree(&g);
		return -1;
	}
	f = fopen(g.gl_pathv[0], "r");
	if (f && fscanf(f, "%ld", &n) != 1)
		n = -1;
	if (f)
		fclose(f);
	globfree(&g);
	return n;
}

/*
 * A bystander, for a child process: @jobs copies of 256 KiB on @queue of
 * the card at @node, each waited for and checked, @pause_us apart.  0, or
 * why it failed.
 */
static inline int copies_check(const char *node, uint32_t queue, int jobs, unsigned int pause_us)
{
	const uint32_t bytes = 256u << 10;
	int fd = open(node, O_RDWR | O_CLOEXEC);
	struct bo src, dst, cmd;

	if (fd < 0 || bo_new(fd, bytes, 0, &src) || bo_new(fd, bytes, 0, &dst) ||
	    bo_new(fd, 4096, 0, &cmd))
		return 10;
	for (int j = 0; j < jobs; j++) {
		uint32_t bos[] = { src.handle, dst.handle, cmd.handle };
		int st;

		for (uint32_t i = 0; i < bytes / 4; i++)
			((uint32_t *)src.map)[i] = i * 2654435761u ^ (queue << 28) ^ j;
		memset(dst.map, 0, bytes);
		cmd_put(cmd.map, 0, SPYRE_OP_DMA_COPY, src.va, dst.va, bytes);
		if (submit(fd, queue, cmd.va, 1, bos, 3, 0))
			return 11;
		st = bo_wait_status(fd, dst.handle, 120);
		if (st != DRM_SPYRE_JOB_STATUS_SUCCESS) {
			printf("  # bystander queue %u job %d: status %d\n", queue, j, st);
			return 12;
		}
		if (memcmp(src.map, dst.map, bytes)) {
			printf("  # bystander queue %u job %d: wrong data\n", queue, j);
			return 13;
		}
		usleep(pause_us);
	}
	close(fd);
	return 0;
}

/*
 * Fork a child that runs @child(ready) and exits with what it returns;
 * @child writes a byte to the fd @ready once it is set up.  The child's pid
 * once it has, or -1 (the child failed first and was reaped).
 */
static inline pid_t fork_when_ready(int (*child)(int ready))
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe(fds))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		_exit(child(fds[1]));
	}
	close(fds[1]);
	if (pid > 0 && read(fds[0], &c, 1) != 1) {
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(fds[0]);
	return pid;
}

/* Linux's aer_inject interface (drivers/pci/pcie/aer_inject.c). */
struct aer_error_inj {
	uint8_t bus, dev, fn;
	uint32_t uncor_status, cor_status;
	uint32_t header_log[4];
	uint32_t domain;
};

/*
 * Report @uncor/@cor (PCI_ERR_*) as errors of the device at PCI address
 * @addr through its root port; 0 or -errno.
 */
static inline int aer_inject(const char *addr, uint32_t uncor, uint32_t cor)
{
	struct aer_error_inj e = { .uncor_status = uncor, .cor_status = cor };
	unsigned int domain, bus, dev, fn;
	int fd, ret = 0;

	if (sscanf(addr, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4)
		return -EINVAL;
	e.domain = domain;
	e.bus = bus;
	e.dev = dev;
	e.fn = fn;
	fd = open("/dev/aer_inject", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, &e, sizeof(e)) != sizeof(e))
		ret = -errno;
	close(fd);
	return ret;
}

#endif /* SPYRE_VM_H */
