// SPDX-License-Identifier: MIT
/*
 * Buffers, address spaces and job submission through the driver, against
 * the real card in the guest: data really moves, faults are reported and
 * ban the file, files cannot reach each other's buffers, bad arguments get
 * their documented errno.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
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

#define MIB (1u << 20)

static int open_card(void)
{
	return open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);
}

static uint32_t syncobj_new(int fd)
{
	struct drm_syncobj_create c = { 0 };

	return xioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c) ? 0 : c.handle;
}

static int syncobj_wait(int fd, uint32_t h)
{
	struct timespec ts;
	struct drm_syncobj_wait w = { 0 };

	clock_gettime(CLOCK_MONOTONIC, &ts);
	w.handles = (uintptr_t)&h;
	w.count_handles = 1;
	w.timeout_nsec = (ts.tv_sec + 30) * 1000000000ll + ts.tv_nsec;
	return xioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
}

/* A DMA copy between two host buffers, on every queue, moves the data. */
TEST(copy_between_host_buffers_on_each_queue)
{
	int fd = open_card();
	struct bo src, dst, cmd;
	uint32_t so;

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(bo_new(fd, MIB, 0, &src), 0);
	ASSERT_EQ(bo_new(fd, MIB, 0, &dst), 0);
	ASSERT_EQ(bo_new(fd, 4096, 0, &cmd), 0);
	EXPECT_TRUE(src.va && dst.va && src.va != dst.va);
	so = syncobj_new(fd);
	ASSERT_TRUE(so);
	for (uint32_t q = 0; q < DRM_SPYRE_NUM_QUEUES; q++) {
		uint32_t bos[] = { src.handle, dst.handle, cmd.handle };

		for (uint32_t i = 0; i < MIB / 4; i++)
			((uint32_t *)src.map)[i] = i * 2654435761u + q;
		memset(dst.map, 0, MIB);
		cmd_put(cmd.map, 0, SPYRE_OP_DMA_COPY, src.va, dst.va, MIB);
		ASSERT_EQ(submit(fd, q, cmd.va, 1, bos, 3, so), 0);
		ASSERT_EQ(syncobj_wait(fd, so), 0);
		EXPECT_EQ(memcmp(src.map, dst.map, MIB), 0);
		EXPECT_EQ(bo_wait_status(fd, dst.handle, 30), DRM_SPYRE_JOB_STATUS_SUCCESS);
	}
	close(fd);
}

/*
 * Interrupts of the card's completion vectors taken on each CPU so far
 * (/proc/interrupts has a column per online CPU, named in its first line);
 * returns how many such vectors there are.
 */
static int completion_irqs(long long *per_cpu, int ncpu)
{
	FILE *f = fopen("/proc/interrupts", "r");
	int cols = 0, lines = 0, col_cpu[1024];
	char *line = NULL, *p, *end;
	size_t cap = 0;

	if (!f)
		return -errno;
	memset(per_cpu, 0, ncpu * sizeof(*per_cpu));
	if (getline(&line, &cap, f) > 0)
		for (p = line; (p = strstr(p, "CPU")) && cols < 1024; p = end)
			col_cpu[cols++] = strtol(p + 3, &end, 10);
	while (getline(&line, &cap, f) > 0) {
		p = strchr(line, ':');
		if (!p || !strstr(line, "spyre-completion"))
			continue;
		p++;
		for (int c = 0; c < cols; c++) {
			long long n = strtoll(p, &p, 10);

			if (col_cpu[c] >= 0 && col_cpu[c] < ncpu)
				per_cpu[col_cpu[c]] += n;
		}
		lines++;
	}
	free(line);
	fclose(f);
	return lines;
}

/*
 * A job's completion interrupt is taken on the CPU that submitted it (its
 * FENCE names that CPU's vector), where its submitter waits; checked on
 * each online CPU that has a vector of its own (the card has 27).
 */
TEST(job_interrupt_is_taken_on_the_submitting_cpu)
{
	enum { JOBS = 40, WARM_UP = 5, MAX_CPUS = 1024 };
	static long long before[MAX_CPUS], after[MAX_CPUS];
	int ncpu = sysconf(_SC_NPROCESSORS_CONF), vectors;
	int fd = open_card();
	struct bo cmd;
	cpu_set_t old;
	uint32_t so;

	ASSERT_TRUE(fd >= 0);
	ASSERT_TRUE(ncpu >= 1 && ncpu <= MAX_CPUS);
	vectors = completion_irqs(before, ncpu);
	ASSERT_TRUE(vectors >= 1);
	ASSERT_EQ(sched_getaffinity(0, sizeof(old), &old), 0);
	ASSERT_EQ(bo_new(fd, 4096, 0, &cmd), 0);
	cmd_put(cmd.map, 0, SPYRE_OP_NOP, 0, 0, 0);
	so = syncobj_new(fd);
	ASSERT_TRUE(so);
	for (int cpu = 0; cpu < ncpu && cpu < vectors; cpu++) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			continue;	/* offline */
		/*
		 * The scheduler's work item may still be queued on the CPU
		 * before: a few jobs bring it over first.
		 */
		for (int i = 0; i < JOBS + WARM_UP; i++) {
			if (i == WARM_UP)
				ASSERT_EQ(completion_irqs(before, ncpu), vectors);
			ASSERT_EQ(submit(fd, 1, cmd.va, 1, &cmd.handle, 1, so), 0);
			ASSERT_EQ(syncobj_wait(fd, so), 0);
		}
		ASSERT_EQ(completion_irqs(after, ncpu), vectors);
		/* A job run from a wake-up elsewhere is allowed, not many. */
		EXPECT_TRUE(after[cpu] - before[cpu] >= JOBS * 9 / 10);
		if (after[cpu] - before[cpu] < JOBS)
			printf("# CPU %d took %lld of %d job interrupts\n", cpu,
			     after[cpu] - before[cpu], JOBS);
	}
	ASSERT_EQ(sched_setaffinity(0, sizeof(old), &old), 0);
	close(fd);
}

/* Jobs on one queue run in order: a chain of copies ends with the first data. */
TEST(jobs_run_in_order_and_wait_implicitly)
{
	int fd = open_card();
	struct bo a, b, c, cmd;
	uint32_t so = 0;

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(bo_new(fd, MIB, 0, &a), 0);
	ASSERT_EQ(bo_new(fd, MIB, 0, &b), 0);
	ASSERT_EQ(bo_new(fd, MIB, 0, &c), 0);
	ASSERT_EQ(bo_new(fd, 4096, 0, &cmd), 0);
	memset(a.map, 0x11, MIB);
	cmd_put(cmd.map, 0, SPYRE_OP_DMA_COPY, a.va, b.va, MIB);
	cmd_put(cmd.map, 1, SPYRE_OP_DMA_COPY, b.va, c.va, MIB);
	so = syncobj_new(fd);
	uint32_t bos[] = { a.handle, b.handle, c.handle, cmd.handle };
	ASSERT_EQ(submit(fd, 1, cmd.va, 1, bos, 4, 0), 0);
	/* Different queue: ordered only by the buffers' implicit fences. */
	ASSERT_EQ(submit(fd, 2, cmd.va + SPYRE_CMD_SIZE, 1, bos, 4, so), 0);
	ASSERT_EQ(syncobj_wait(fd, so), 0);
	EXPECT_EQ(((uint8_t *)c.map)[MIB - 1], 0x11);
	EXPECT_EQ(((uint8_t *)c.map)[0], 0x11);
	close(fd);
}

/*
 * Closing a buffer's handle while a job still writes it: the job finishes
 * into that buffer, and a buffer created right after (which may be given
 * the same device addresses) is not written by it.
 */
TEST(close_with_a_job_in_flight_keeps_its_addresses)
{
	enum { CHUNK = 16 * MIB, COPIES = 48 };
	int fd = open_card();
	struct bo src, dst, cmd, next;
	struct drm_gem_close gc = { 0 };
	uint64_t old_va;
	size_t nonzero = 0;
	uint32_t so;

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(bo_new(fd, CHUNK, 0, &src), 0);
	ASSERT_EQ(bo_new(fd, CHUNK, 0, &dst), 0);
	ASSERT_EQ(bo_new(fd, 4096, 0, &cmd), 0);
	memset(src.map, 0x5a, CHUNK);
	/* Long enough (768 MiB of copies) that the close comes while it runs. */
	for (int i = 0; i < COPIES; i++)
		cmd_put(cmd.map, i, SPYRE_OP_DMA_COPY, src.va, dst.va, CHUNK);
	so = syncobj_new(fd);
	ASSERT_TRUE(so);
	uint32_t bos[] = { src.handle, dst.handle, cmd.handle };
	ASSERT_EQ(submit(fd, 0, cmd.va, COPIES, bos, 3, so), 0);
	old_va = dst.va;
	munmap(dst.map, CHUNK);
	gc.handle = dst.handle;
	ASSERT_EQ(xioctl(fd, DRM_IOCTL_GEM_CLOSE, &gc), 0);
	ASSERT_EQ(bo_new(fd, CHUNK, 0, &next), 0);
	printf("  # closed buffer at 0x%llx, next buffer at 0x%llx\n",
	       (unsigned long long)old_va, (unsigned long long)next.va);
	ASSERT_EQ(syncobj_wait(fd, so), 0);
	EXPECT_EQ(bo_wait_status(fd, src.handle, 30), DRM_SPYRE_JOB_STATUS_SUCCESS);
	for (size_t i = 0; i < CHUNK; i++)
		nonzero += ((uint8_t *)next.map)[i] != 0;
	EXPECT_EQ(nonzero, 0);
	/* The file was not banned by a fault on the closed buffer. */
	cmd_put(cmd.map, 0, SPYRE_OP_NOP, 0, 0, 0);
	EXPECT_EQ(submit(fd, 0, cmd.va, 1, &cmd.handle, 1, so), 0);
	EXPECT_EQ(syncobj_wait(fd, so), 0);
	close(fd);
}

/* An access outside the file's buffers faults, is reported, and bans the file. */
TEST(mmu_fault_is_reported_and_bans)
{
	int fd = open_card();
	struct bo dst, cmd;
	uint32_t so;

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(bo_new(fd, 4096, 0, &dst), 0);
	ASSERT_EQ(bo_new(fd, 4096, 0, &cmd), 0);
	so = syncobj_new(fd);
	/* Just past the buffer: the guard page. */
	cmd_put(cmd.map, 0, SPYRE_OP_DMA_COPY, dst.va + 4096, dst.va, 64);
	uint32_t bos[] = { dst.handle, cmd.handle };
	ASSERT_EQ(submit(fd, 0, cmd.va, 1, bos, 2, so), 0);
	ASSERT_EQ(syncobj_wait(fd, so), 0);
	EXPECT_EQ(bo_wait_status(fd, dst.handle, 30), DRM_SPYRE_JOB_STATUS_MMU_FAULT);
	EXPECT_EQ(submit(fd, 0, cmd.va, 1, bos, 2, 0), -ECANCELED);
	close(fd);

	/* A new file is not banned. */
	fd = open_card();
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(bo_new(fd, 4096, 0, &cmd), 0);
	cmd_put(cmd.map, 0, SPYRE_OP_NOP, 0, 0, 0);
	so = syncobj_new(fd);
	EXPECT_EQ(submit(fd, 0, cmd.va, 1, &cmd.handle, 1, so), 0);
	EXPECT_EQ(syncobj_wait(fd, so), 0);
	close(fd);
}

/* Another file's handles do not exist here, and its addresses are unmapped. */
TEST(files_cannot_reach_each_other)
{
	int a = open_card(), b = open_card();
	struct bo secret, mine, cmd;
	uint32_t so;

	ASSERT_TRUE(a >= 0 && b >= 0);
	ASSERT_EQ(bo_new(a, 4096, 0, &secret), 0);
	memset(secret.map, 0x5e, 4096);
	ASSERT_EQ(bo_new(b, 4096, 0, &mine), 0);
	ASSERT_EQ(bo_new(b, 4096, 0, &cmd), 0);

	struct drm_spyre_bo_info info = { .handle = secret.handle };
	if (secret.handle != mine.handle && secret.handle != cmd.handle)
		EXPECT_EQ(xioctl(b, DRM_IOCTL_SPYRE_BO_INFO, &info), -ENOENT);
	uint32_t foreign[] = { 999 };
	EXPECT_EQ(submit(b, 0, cmd.va, 1, foreign, 1, 0), -ENOENT);

	/* B names A's device address: B's address space has nothing there. */
	so = syncobj_new(b);
	memset(mine.map, 0, 4096);
	cmd_put(cmd.map, 0, SPYRE_OP_DMA_COPY, secret.va, mine.va, 4096);
	uint32_t bos[] = { mine.handle, cmd.handle };
	ASSERT_EQ(submit(b, 3, cmd.va, 1, bos, 2, so), 0);
	ASSERT_EQ(syncobj_wait(b, so), 0);
	if (secret.va != mine.va && secret.va != cmd.va)
		EXPECT_EQ(bo_wait_status(b, mine.handle, 30), DRM_SPYRE_JOB_STATUS_MMU_FAULT);
	EXPECT_EQ(((uint8_t *)mine.map)[0], 0);
	close(a);
	close(b);
}

/* Device memory: CPU-visible buffers through the BAR, others by DMA only. */
TEST(device_buffers_round_trip)
{
	int fd = open_card();
	struct bo vis, hidden, host, cmd;
	struct drm_spyre_bo_info info;
	uint32_t so;

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(bo_new(fd, MIB, DRM_SPYRE_BO_DEVICE | DRM_SPYRE_BO_MAPPABLE, &vis), 0);
	ASSERT_EQ(bo_new(fd, MIB, 0, &host), 0);
	ASSERT_EQ(bo_new(fd, 4096, 0, &cmd), 0);
	/* Not CPU-visible: no mapping, but a device address. */
	struct drm_spyre_bo_create c = { .size = MIB, .flags = DRM_SPYRE_BO_DEVICE };
	ASSERT_EQ(xioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &c), 0);
	hidden.handle = c.handle;
	hidden.va = c.device_addr;
	memset(&info, 0, sizeof(info));
	info.handle = hidden.handle;
	ASSERT_EQ(xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &info), 0);
	EXPECT_EQ(info.flags, DRM_SPYRE_BO_DEVICE);
	EXPECT_TRUE(mmap(NULL, MIB, PROT_READ, MAP_SHARED, fd, info.mmap_offset) == MAP_FAILED);

	for (uint32_t i = 0; i < MIB / 4; i++)
		((volatile uint32_t *)vis.map)[i] = i * 40503u;
	memset(host.map, 0, MIB);
	/* visible -> hidden -> host, then compare through the CPU. */
	cmd_put(cmd.map, 0, SPYRE_OP_DMA_COPY, vis.va, hidden.va, MIB);
	cmd_put(cmd.map, 1, SPYRE_OP_DMA_COPY, hidden.va, host.va, MIB);
	so = syncobj_new(fd);
	uint32_t bos[] = { vis.handle, hidden.handle, host.handle, cmd.handle };
	ASSERT_EQ(submit(fd, 1, cmd.va, 2, bos, 4, so), 0);
	ASSERT_EQ(syncobj_wait(fd, so), 0);
	EXPECT_EQ(bo_wait_status(fd, host.handle, 30), DRM_SPYRE_JOB_STATUS_SUCCESS);
	for (uint32_t i = 0; i < MIB / 4; i++) {
		if (((uint32_t *)host.map)[i] != i * 40503u) {
			EXPECT_EQ(((uint32_t *)host.map)[i], i * 40503u);
			break;
		}
	}
	close(fd);
}

/* A new device buffer never shows what an earlier one held. */
TEST(device_buffers_are_cleared)
{
	int fd = open_card();
	struct bo a, b;
	struct drm_gem_close cl = { 0 };

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(bo_new(fd, 2 * MIB, DRM_SPYRE_BO_DEVICE | DRM_SPYRE_BO_MAPPABLE, &a), 0);
	memset(a.map, 0xab, 2 * MIB);
	munmap(a.map, 2 * MIB);
	cl.handle = a.handle;
	ASSERT_EQ(xioctl(fd, DRM_IOCTL_GEM_CLOSE, &cl), 0);
	ASSERT_EQ(bo_new(fd, 2 * MIB, DRM_SPYRE_BO_DEVICE | DRM_SPYRE_BO_MAPPABLE, &b), 0);
	for (uint32_t i = 0; i < 2 * MIB; i += 4096) {
		if (((volatile uint8_t *)b.map)[i] != 0) {
			EXPECT_EQ(((uint8_t *)b.map)[i], 0);
			break;
		}
	}
	close(fd);
}

/* Running out of device memory is ENOMEM, and what was given stays intact. */
TEST(device_memory_exhaustion)
{
	int fd = open_card();
	uint64_t total = mem_bytes(fd), got = 0;
	struct bo first;
	uint32_t n = 0;

	ASSERT_TRUE(fd >= 0 && total >= 256 * MIB);
	ASSERT_EQ(bo_new(fd, MIB, DRM_SPYRE_BO_DEVICE | DRM_SPYRE_BO_MAPPABLE, &first), 0);
	memset(first.map, 0x42, MIB);
	for (;;) {
		struct drm_spyre_bo_create c = { .size = 256 * MIB, .flags = DRM_SPYRE_BO_DEVICE };
		int ret = xioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &c);

		if (ret) {
			EXPECT_EQ(ret, -ENOMEM);
			break;
		}
		got += 256 * MIB;
		if (++n > 1024)
			break;
	}
	EXPECT_TRUE(got + 256 * MIB > total - MIB);
	EXPECT_TRUE(got <= total);
	EXPECT_EQ(((uint8_t *)first.map)[0], 0x42);
	EXPECT_EQ(((uint8_t *)first.map)[MIB - 1], 0x42);
	/* Bigger than the card, or than the CPU window: never, so EINVAL. */
	struct drm_spyre_bo_create big = { .size = total + 4096, .flags = DRM_SPYRE_BO_DEVICE };
	EXPECT_EQ(xioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &big), -EINVAL);
	/* A mapping holds the file open: unmap, then closing frees it all. */
	munmap(first.map, MIB);
	close(fd);

	fd = open_card();
	struct drm_spyre_bo_create again = { .size = 256 * MIB, .flags = DRM_SPYRE_BO_DEVICE };
	EXPECT_EQ(xioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &again), 0);
	close(fd);
}

/* A dma-buf hands a buffer to another process, which the card then reads. */
TEST(prime_shares_a_buffer_between_processes)
{
	int fd = open_card(), status;
	struct drm_prime_handle exp = { 0 };
	struct bo src;
	pid_t pid;

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(bo_new(fd, MIB, 0, &src), 0);
	for (uint32_t i = 0; i < MIB / 4; i++)
		((uint32_t *)src.map)[i] = ~i;
	exp.handle = src.handle;
	exp.flags = DRM_CLOEXEC | DRM_RDWR;
	ASSERT_EQ(xioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp), 0);

	fflush(stdout);
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0) {
		int cfd = open_card();
		struct drm_prime_handle imp = { .fd = exp.fd };
		struct drm_spyre_bo_info info = { 0 };
		struct bo dst, cmd;
		uint32_t so;

		if (cfd < 0 || xioctl(cfd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp) ||
		    bo_new(cfd, MIB, 0, &dst) || bo_new(cfd, 4096, 0, &cmd))
			_exit(10);
		info.handle = imp.handle;
		if (xioctl(cfd, DRM_IOCTL_SPYRE_BO_INFO, &info) || !info.device_addr)
			_exit(11);
		cmd_put(cmd.map, 0, SPYRE_OP_DMA_COPY, info.device_addr, dst.va, MIB);
		so = syncobj_new(cfd);
		uint32_t bos[] = { imp.handle, dst.handle, cmd.handle };
		if (submit(cfd, 0, cmd.va, 1, bos, 3, so) || syncobj_wait(cfd, so))
			_exit(12);
		for (uint32_t i = 0; i < MIB / 4; i++)
			if (((uint32_t *)dst.map)[i] != ~i)
				_exit(13);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(WEXITSTATUS(status), 0);

	/* Device memory cannot be exported. */
	struct bo dev;
	ASSERT_EQ(bo_new(fd, MIB, DRM_SPYRE_BO_DEVICE | DRM_SPYRE_BO_MAPPABLE, &dev), 0);
	exp.handle = dev.handle;
	EXPECT_EQ(xioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp), -EOPNOTSUPP);
	close(fd);
}

TEST(bo_create_bad_arguments)
{
	int fd = open_card();
	struct drm_spyre_bo_create c;

	ASSERT_TRUE(fd >= 0);
#define BAD_CREATE(field, value, err)							\
	do {										\
		memset(&c, 0, sizeof(c));						\
		c.size = 4096;								\
		c.field = value;							\
		EXPECT_EQ(xioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &c), err);		\
	} while (0)
	BAD_CREATE(size, 0, -EINVAL);
	BAD_CREATE(size, ~0ull, -EINVAL);
	BAD_CREATE(size, (64ull << 30), -EINVAL);
	BAD_CREATE(flags, 0x8, -EINVAL);
	BAD_CREATE(flags, 0x80000000, -EINVAL);
	BAD_CREATE(flags, DRM_SPYRE_BO_MAPPABLE, -EINVAL);
	BAD_CREATE(pad, 1, -EINVAL);
	BAD_CREATE(reserved, 1, -EINVAL);
	BAD_CREATE(handle, 1, -EINVAL);
	BAD_CREATE(device_addr, 1, -EINVAL);
	EXPECT_EQ(xioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, (void *)8), -EFAULT);
	close(fd);
}

TEST(bo_info_and_wait_bad_arguments)
{
	int fd = open_card();
	struct drm_spyre_bo_info i;
	struct drm_spyre_bo_wait w;
	struct bo bo;

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(bo_new(fd, 4096, 0, &bo), 0);
	memset(&i, 0, sizeof(i));
	i.handle = 0;
	EXPECT_EQ(xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &i), -ENOENT);
	i.handle = 0xdeadbeef;
	EXPECT_EQ(xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &i), -ENOENT);
	i.handle = bo.handle;
	i.flags = 1;
	EXPECT_EQ(xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &i), -EINVAL);
	memset(&w, 0, sizeof(w));
	w.handle = 12345;
	EXPECT_EQ(xioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w), -ENOENT);
	w.handle = bo.handle;
	w.flags = 1;
	EXPECT_EQ(xioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w), -EINVAL);
	w.flags = 0;
	w.pad = 1;
	EXPECT_EQ(xioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w), -EINVAL);
	close(fd);
}

TEST(submit_bad_arguments)
{
	int fd = open_card();
	struct drm_spyre_submit s;
	struct bo cmd;
	uint32_t h;

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(bo_new(fd, 4096, 0, &cmd), 0);
	h = cmd.handle;
#define BAD_SUBMIT(field, value, err)							\
	do {										\
		memset(&s, 0, sizeof(s));						\
		s.commands = cmd.va;							\
		s.command_count = 1;							\
		s.bo_handles = (uintptr_t)&h;						\
		s.bo_count = 1;								\
		s.field = value;							\
		EXPECT_EQ(xioctl(fd, DRM_IOCTL_SPYRE_SUBMIT, &s), err);		\
	} while (0)
	BAD_SUBMIT(queue, 4, -EINVAL);
	BAD_SUBMIT(queue, ~0u, -EINVAL);
	BAD_SUBMIT(flags, 1, -EINVAL);
	BAD_SUBMIT(reserved, 1, -EINVAL);
	BAD_SUBMIT(command_count, 0, -EINVAL);
	BAD_SUBMIT(command_count, DRM_SPYRE_MAX_SUBMIT_COMMANDS + 1, -EINVAL);
	BAD_SUBMIT(command_count, 65, -EINVAL);		/* runs past the buffer */
	BAD_SUBMIT(commands, cmd.va + 8, -EINVAL);		/* misaligned */
	BAD_SUBMIT(commands, 0, -EINVAL);
	BAD_SUBMIT(commands, ~0ull & ~63ull, -EINVAL);
	BAD_SUBMIT(commands, cmd.va + 4096, -EINVAL);	/* outside the buffers */
	BAD_SUBMIT(bo_count, 0, -EINVAL);
	BAD_SUBMIT(bo_count, DRM_SPYRE_MAX_SUBMIT_BOS + 1, -EINVAL);
	BAD_SUBMIT(bo_handles, 0, -EFAULT);
	BAD_SUBMIT(bo_handles, 0xffff800000000000ull, -EFAULT);
	BAD_SUBMIT(in_syncobj_count, DRM_SPYRE_MAX_SUBMIT_SYNCOBJS + 1, -EINVAL);
	BAD_SUBMIT(in_syncobj_count, 1, -EFAULT);		/* in_syncobjs is NULL */
	BAD_SUBMIT(out_syncobj, 777, -ENOENT);
	BAD_SUBMIT(out_syncobj_point, 5, -EINVAL);		/* point without syncobj */
	close(fd);
}

#define QUEUE_LIMIT	256
#define LIMIT_PARAM	"/sys/module/spyre/parameters/max_queued_jobs"

/*
 * A file may have max_queued_jobs jobs waiting for the card; the next
 * SUBMIT fails with EBUSY until some reach it, and other files are not
 * held back.  Queue 0 is held by a WAIT on a host flag meanwhile.
 */
TEST(queued_jobs_per_file_are_bounded)
{
	int fd = open_card(), other = open_card(), ret = 0, n;
	char old[32] = "";
	struct bo flag, cmd, ocmd;
	uint32_t so, oso;
	FILE *f = fopen(LIMIT_PARAM, "r");

	ASSERT_TRUE(fd >= 0 && other >= 0);
	ASSERT_TRUE(f != NULL);
	ASSERT_TRUE(fgets(old, sizeof(old), f) != NULL);
	fclose(f);
	EXPECT_EQ(atoi(old), 65536);
	ASSERT_EQ(sysfs_write(LIMIT_PARAM, "256"), 0);
	ASSERT_EQ(bo_new(fd, 4096, 0, &flag), 0);
	ASSERT_EQ(bo_new(fd, 4096, 0, &cmd), 0);
	ASSERT_EQ(bo_new(other, 4096, 0, &ocmd), 0);
	so = syncobj_new(fd);
	oso = syncobj_new(other);
	memset(flag.map, 0, 4096);
	cmd_put(cmd.map, 0, SPYRE_OP_WAIT, flag.va, 1, 0);
	cmd_put(cmd.map, 1, SPYRE_OP_NOP, 0, 0, 0);
	cmd_put(ocmd.map, 0, SPYRE_OP_NOP, 0, 0, 0);
	{
		uint32_t bos[] = { flag.handle, cmd.handle };

		ASSERT_EQ(submit(fd, 0, cmd.va, 1, bos, 2, 0), 0);
		/* NOPs behind it: the ring takes some, the rest wait queued. */
		for (n = 0; n < 4 * QUEUE_LIMIT; n++) {
			ret = submit(fd, 0, cmd.va + SPYRE_CMD_SIZE, 1, &cmd.handle, 1, so);
			if (ret)
				break;
		}
	}
	printf("  # %d jobs accepted behind the WAIT, then %s\n", n, strerror(-ret));
	EXPECT_EQ(ret, -EBUSY);
	/* The limit, plus those the scheduler had moved onto the card. */
	EXPECT_TRUE(n + 1 >= QUEUE_LIMIT && n + 1 <= QUEUE_LIMIT + 64);
	/* Another file is not held back, even on the same queue. */
	EXPECT_EQ(submit(other, 0, ocmd.va, 1, &ocmd.handle, 1, oso), 0);
	/* Release the WAIT: every queued job runs, and SUBMIT works again. */
	((volatile uint64_t *)flag.map)[0] = 1;
	EXPECT_EQ(syncobj_wait(fd, so), 0);
	EXPECT_EQ(syncobj_wait(other, oso), 0);
	EXPECT_EQ(submit(fd, 0, cmd.va + SPYRE_CMD_SIZE, 1, &cmd.handle, 1, so), 0);
	EXPECT_EQ(syncobj_wait(fd, so), 0);
	EXPECT_EQ(sysfs_write(LIMIT_PARAM, old), 0);
	close(other);
	close(fd);
}

TAP_MAIN()
