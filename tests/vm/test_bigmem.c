// SPDX-License-Identifier: MIT
/*
 * A big card (run with mem-size of 128G): a 16 GiB device buffer created,
 * written at both ends and the middle, read back (never-written memory
 * reads zeros) and freed; many small buffers; exhaustion refused with
 * ENOMEM while the data already there stays intact; a process killed
 * while it creates big buffers is reaped and all its device memory comes
 * back (debugfs "memory" before and after).
 *
 * Times are printed as "# bench NAME VALUE UNIT" lines, which make bench
 * turns into rows (driver.device_buffer_16g_create_s,
 * driver.sigkill_reap_ms); the tests check behaviour, not times.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spyre_regs.h"
#include "spyre_vm.h"
#include "tap.h"
#include "uapi/drm/spyre_accel.h"

#define MIB		(1ull << 20)
#define GIB		(1ull << 30)
#define BIG		(16 * GIB)
#define PROBE		MIB		/* bytes read back at each probed offset */
#define SMALL_COUNT	2000
#define SMALL_BYTES	(64u << 10)

static int open_card(void)
{
	return open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);
}

/* A host buffer to read back into and a command buffer, on one file. */
struct io {
	int fd;
	struct bo host, cmd;
	uint32_t syncobj;
};

static int io_init(struct io *io, int fd)
{
	struct drm_syncobj_create c = { 0 };

	io->fd = fd;
	if (bo_new(fd, PROBE, 0, &io->host) || bo_new(fd, 4096, 0, &io->cmd) ||
	    xioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c))
		return -1;
	io->syncobj = c.handle;
	return 0;
}

/* A mapping keeps its file open: unmap before closing the file. */
static void io_fini(struct io *io)
{
	munmap(io->host.map, io->host.size);
	munmap(io->cmd.map, io->cmd.size);
}

/* Run one command touching @dev and wait; 0 if the job succeeded. */
static int io_run(struct io *io, const struct bo *dev, uint8_t op, uint64_t a0, uint64_t a1,
		  uint64_t a2)
{
	uint32_t bos[] = { dev->handle, io->host.handle, io->cmd.handle };
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)&io->syncobj, .count_handles = 1, .timeout_nsec = INT64_MAX,
	};
	struct drm_spyre_bo_wait bw = { .handle = io->host.handle, .timeout_ns = INT64_MAX };

	cmd_put(io->cmd.map, 0, op, a0, a1, a2);
	if (submit(io->fd, 0, io->cmd.va, 1, bos, 3, io->syncobj) ||
	    xioctl(io->fd, DRM_IOCTL_SYNCOBJ_WAIT, &w) ||
	    xioctl(io->fd, DRM_IOCTL_SPYRE_BO_WAIT, &bw))
		return -1;
	return bw.job_status == DRM_SPYRE_JOB_STATUS_SUCCESS ? 0 : -1;
}

/* Whether PROBE bytes at @off of @dev all hold @pattern (read by the card). */
static int probe_is(struct io *io, const struct bo *dev, uint64_t off, uint64_t pattern)
{
	const uint64_t *w = io->host.map;

	memset(io->host.map, 0xa5, PROBE);
	if (io_run(io, dev, SPYRE_OP_DMA_COPY, dev->va + off, io->host.va, PROBE))
		return 0;
	for (uint64_t i = 0; i < PROBE / 8; i++) {
		if (w[i] != pattern) {
			printf("  # offset %#llx word %llu: %#llx, not %#llx\n",
			       (unsigned long long)off, (unsigned long long)i,
			       (unsigned long long)w[i], (unsigned long long)pattern);
			return 0;
		}
	}
	return 1;
}

/* Whether the card holds the 16 GiB buffer with room to spare. */
static int card_is_big(int fd)
{
	return mem_bytes(fd) >= BIG + GIB;
}

TEST(sixteen_gib_buffer_written_read_and_freed)
{
	const uint64_t offs[] = { 0, BIG / 2 - PROBE / 2, BIG - PROBE };
	int fd = open_card();
	long long used0;
	struct bo big;
	struct io io;
	double t0;

	ASSERT_TRUE(fd >= 0);
	if (!card_is_big(fd))
		SKIP("the card has under 17 GiB (mem-size)");
	ASSERT_EQ(io_init(&io, fd), 0);
	used0 = device_used(fd);
	t0 = now_s();
	ASSERT_EQ(bo_new(fd, BIG, DRM_SPYRE_BO_DEVICE, &big), 0);
	printf("  # bench driver.device_buffer_16g_create_s %.3f s\n", now_s() - t0);
	EXPECT_EQ(device_used(fd), used0 + (long long)BIG);
	/* New device memory reads as zeros, end to end. */
	for (unsigned int i = 0; i < 3; i++)
		EXPECT_TRUE(probe_is(&io, &big, offs[i], 0));
	for (unsigned int i = 0; i < 3; i++)
		EXPECT_EQ(io_run(&io, &big, SPYRE_OP_DMA_FILL, big.va + offs[i], PROBE,
				 0x1111111111111111ull * (i + 1)), 0);
	for (unsigned int i = 0; i < 3; i++)
		EXPECT_TRUE(probe_is(&io, &big, offs[i], 0x1111111111111111ull * (i + 1)));
	EXPECT_TRUE(probe_is(&io, &big, 4 * GIB, 0));
	EXPECT_EQ(xioctl(fd, DRM_IOCTL_GEM_CLOSE, &(struct drm_gem_close){ .handle = big.handle }),
		  0);
	EXPECT_EQ(used_settles(fd, used0), used0);
	io_fini(&io);
	close(fd);
}

TEST(two_thousand_small_buffers)
{
	int fd = open_card();
	long long used0;
	struct bo *bos = calloc(SMALL_COUNT, sizeof(*bos));
	struct io io;
	int made = 0;

	ASSERT_TRUE(fd >= 0 && bos != NULL);
	ASSERT_EQ(io_init(&io, fd), 0);
	used0 = device_used(fd);
	while (made < SMALL_COUNT && !bo_new(fd, SMALL_BYTES, DRM_SPYRE_BO_DEVICE, &bos[made]))
		made++;
	EXPECT_EQ(made, SMALL_COUNT);
	EXPECT_EQ(device_used(fd), used0 + (long long)made * SMALL_BYTES);
	/* Distinct addresses, and each holds its own data. */
	for (int i = 1; i < made; i++)
		EXPECT_TRUE(bos[i].va != bos[i - 1].va);
	for (int i = 0; i < made; i += made / 8) {
		EXPECT_EQ(io_run(&io, &bos[i], SPYRE_OP_DMA_FILL, bos[i].va, SMALL_BYTES, 0x51 + i), 0);
		EXPECT_EQ(io_run(&io, &bos[i], SPYRE_OP_DMA_COPY, bos[i].va, io.host.va, SMALL_BYTES),
			  0);
		EXPECT_EQ(((uint64_t *)io.host.map)[SMALL_BYTES / 8 - 1], 0x51ull + i);
	}
	for (int i = 0; i < made; i++)
		xioctl(fd, DRM_IOCTL_GEM_CLOSE, &(struct drm_gem_close){ .handle = bos[i].handle });
	EXPECT_EQ(used_settles(fd, used0), used0);
	free(bos);
	io_fini(&io);
	close(fd);
}

TEST(exhaustion_is_enomem_and_nothing_is_corrupted)
{
	int fd = open_card();
	char *text;
	long long free_bytes, used0;
	struct bo big, extra;
	struct io io;

	ASSERT_TRUE(fd >= 0);
	if (!card_is_big(fd))
		SKIP("the card has under 17 GiB (mem-size)");
	ASSERT_EQ(io_init(&io, fd), 0);
	used0 = device_used(fd);
	ASSERT_EQ(bo_new(fd, BIG, DRM_SPYRE_BO_DEVICE, &big), 0);
	ASSERT_EQ(io_run(&io, &big, SPYRE_OP_DMA_FILL, big.va + BIG - PROBE, PROBE,
			 0x7777777777777777ull), 0);
	text = debugfs_read(fd, "memory");
	ASSERT_TRUE(text != NULL);
	free_bytes = keyed(text, "device_free");
	free(text);
	ASSERT_TRUE(free_bytes > 0);
	EXPECT_EQ(bo_new(fd, free_bytes + 2 * MIB, DRM_SPYRE_BO_DEVICE, &extra), -ENOMEM);
	EXPECT_TRUE(probe_is(&io, &big, BIG - PROBE, 0x7777777777777777ull));
	EXPECT_EQ(device_used(fd), used0 + (long long)BIG);
	/* Closing the file frees its buffers. */
	io_fini(&io);
	close(fd);
	fd = open_card();
	EXPECT_EQ(used_settles(fd, used0), used0);
	close(fd);
}

/* Print /proc/@pid/@name, each line prefixed for TAP. */
static void print_proc_file(pid_t pid, const char *name)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	f = fopen(path, "r");
	if (!f) {
		printf("  #   %s: %s\n", path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f))
		if (strcmp(name, "status") || !strncmp(line, "State:", 6))
			printf("  #   %s: %s%s", name, line, strchr(line, '\n') ? "" : "\n");
	fclose(f);
}

static void print_kernel_stack(pid_t pid)
{
	printf("  # process %d still alive 1 s after SIGKILL:\n", (int)pid);
	print_proc_file(pid, "status");
	print_proc_file(pid, "wchan");
	print_proc_file(pid, "stack");
}

/* The child: create 16 GiB buffers until killed (or the card is full). */
static void create_until_killed(void)
{
	int fd = open_card();
	struct bo bo;

	if (fd < 0)
		_exit(2);
	if (write(STDOUT_FILENO, "", 0) < 0)
		_exit(3);
	while (!bo_new(fd, BIG, DRM_SPYRE_BO_DEVICE, &bo))
		;
	pause();
	_exit(0);
}

TEST(sigkill_while_creating_gives_everything_back)
{
	int fd = open_card(), status;
	long long used0;
	double t0;
	pid_t pid;

	ASSERT_TRUE(fd >= 0);
	if (!card_is_big(fd))
		SKIP("the card has under 17 GiB (mem-size)");
	used0 = device_used(fd);
	fflush(stdout);
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0)
		create_until_killed();
	/* Let it create a few and be inside the next. */
	for (int i = 0; i < 200 && device_used(fd) < used0 + 2 * (long long)BIG; i++)
		usleep(50000);
	EXPECT_TRUE(device_used(fd) >= used0 + (long long)BIG);
	t0 = now_s();
	kill(pid, SIGKILL);
	/* If it lingers, show where the kernel holds it (once, after 1 s). */
	for (int i = 0; waitpid(pid, &status, WNOHANG) == 0; i++) {
		if (i == 100)
			print_kernel_stack(pid);
		usleep(10000);
	}
	printf("  # bench driver.sigkill_reap_ms %.1f ms\n", (now_s() - t0) * 1e3);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	EXPECT_EQ(used_settles(fd, used0), used0);
	close(fd);
}

TAP_MAIN()
