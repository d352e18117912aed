// SPDX-License-Identifier: MIT
/*
 * Eight processes submit at once for a bounded time, each on its own file
 * with its own buffers, spread over the four queues, and check every job's
 * result: the card fills a device buffer with the process's and the job's
 * pattern, copies it out to a host buffer, and copies a host buffer the CPU
 * wrote to another.  Several jobs stay in flight per process.
 *
 * SPYRE_STRESS_SECONDS sets the time (default 15).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spyre_regs.h"
#include "spyre_vm.h"
#include "tap.h"
#include "uapi/drm/spyre_accel.h"

#define PROCS		8
#define DEPTH		3		/* jobs in flight per process */
#define JOB_BYTES	(64u << 10)

static int seconds = 15;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One job's buffers: a device buffer, the host copies and its commands. */
struct slot {
	struct bo dev, fill_out, src, copy_out, cmd;
	uint32_t syncobj;
	uint64_t pattern;
	int busy;
};

static uint64_t pattern_of(int proc, uint64_t job)
{
	return 0x9e3779b97f4a7c15ull * (job + 1) ^ (uint64_t)proc << 56 ^ job;
}

static int slot_init(int fd, struct slot *s)
{
	struct drm_syncobj_create c = { 0 };

	memset(s, 0, sizeof(*s));
	if (bo_new(fd, JOB_BYTES, DRM_SPYRE_BO_DEVICE, &s->dev) ||
	    bo_new(fd, JOB_BYTES, 0, &s->fill_out) || bo_new(fd, JOB_BYTES, 0, &s->src) ||
	    bo_new(fd, JOB_BYTES, 0, &s->copy_out) || bo_new(fd, 4096, 0, &s->cmd) ||
	    xioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c))
		return -1;
	s->syncobj = c.handle;
	return 0;
}

static int slot_submit(int fd, int proc, uint32_t queue, uint64_t job, struct slot *s)
{
	uint32_t bos[] = { s->dev.handle, s->fill_out.handle, s->src.handle,
			   s->copy_out.handle, s->cmd.handle };
	uint64_t *src = s->src.map;

	s->pattern = pattern_of(proc, job);
	for (uint32_t i = 0; i < JOB_BYTES / 8; i++)
		src[i] = s->pattern * (i + 1);
	memset(s->fill_out.map, 0, JOB_BYTES);
	memset(s->copy_out.map, 0, JOB_BYTES);
	cmd_put(s->cmd.map, 0, SPYRE_OP_DMA_FILL, s->dev.va, JOB_BYTES, s->pattern);
	cmd_put(s->cmd.map, 1, SPYRE_OP_DMA_COPY, s->dev.va, s->fill_out.va, JOB_BYTES);
	cmd_put(s->cmd.map, 2, SPYRE_OP_DMA_COPY, s->src.va, s->copy_out.va, JOB_BYTES);
	s->busy = 1;
	return submit(fd, queue, s->cmd.va, 3, bos, 5, s->syncobj);
}

/* Wait for a slot's job and check both of its results. */
static int slot_check(int fd, int proc, struct slot *s)
{
	struct drm_spyre_bo_wait w = { .handle = s->copy_out.handle };
	struct drm_syncobj_wait sw = { 0 };
	const uint64_t *fill = s->fill_out.map;
	struct timespec ts;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	sw.handles = (uintptr_t)&s->syncobj;
	sw.count_handles = 1;
	sw.timeout_nsec = (ts.tv_sec + 60) * 1000000000ll + ts.tv_nsec;
	w.timeout_ns = sw.timeout_nsec;
	s->busy = 0;
	ret = xioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &sw);
	if (!ret)
		ret = xioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w);
	if (ret) {
		printf("  # proc %d: wait: %s\n", proc, strerror(-ret));
		return -1;
	}
	if (w.job_status != DRM_SPYRE_JOB_STATUS_SUCCESS) {
		printf("  # proc %d: job status %u\n", proc, w.job_status);
		return -1;
	}
	for (uint32_t i = 0; i < JOB_BYTES / 8; i++) {
		if (fill[i] != s->pattern) {
			printf("  # proc %d: fill word %u is %#llx, not %#llx\n", proc, i,
			       (unsigned long long)fill[i], (unsigned long long)s->pattern);
			return -1;
		}
	}
	if (memcmp(s->src.map, s->copy_out.map, JOB_BYTES)) {
		printf("  # proc %d: copy differs\n", proc);
		return -1;
	}
	return 0;
}

/* A process's run; writes its checked job count to @result. */
static int worker(int proc, uint64_t *result)
{
	int fd = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);
	uint32_t queue = proc % DRM_SPYRE_NUM_QUEUES;
	struct slot slots[DEPTH];
	double end = now_s() + seconds;
	uint64_t job = 0, checked = 0;
	int ret;

	if (fd < 0)
		return 10;
	for (int i = 0; i < DEPTH; i++)
		if (slot_init(fd, &slots[i]))
			return 11;
	while (now_s() < end) {
		struct slot *s = &slots[job % DEPTH];

		if (s->busy) {
			if (slot_check(fd, proc, s))
				return 12;
			checked++;
		}
		ret = slot_submit(fd, proc, queue, job, s);
		if (ret) {
			printf("  # proc %d: submit: %s\n", proc, strerror(-ret));
			return 13;
		}
		job++;
	}
	for (int i = 0; i < DEPTH; i++) {
		if (slots[i].busy) {
			if (slot_check(fd, proc, &slots[i]))
				return 12;
			checked++;
		}
	}
	close(fd);
	*result = checked;
	return checked == job && checked > 0 ? 0 : 14;
}

TEST(eight_processes_every_result_checked)
{
	uint64_t *counts = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				-1, 0);
	uint64_t total = 0;
	pid_t pids[PROCS];
	double t0 = now_s();
	int status;

	ASSERT_TRUE(counts != MAP_FAILED);
	if (getenv("SPYRE_STRESS_SECONDS") && atoi(getenv("SPYRE_STRESS_SECONDS")) > 0)
		seconds = atoi(getenv("SPYRE_STRESS_SECONDS"));
	fflush(stdout);
	for (int p = 0; p < PROCS; p++) {
		pids[p] = fork();
		ASSERT_TRUE(pids[p] >= 0);
		if (pids[p] == 0)
			_exit(worker(p, &counts[p]));
	}
	for (int p = 0; p < PROCS; p++) {
		ASSERT_EQ(waitpid(pids[p], &status, 0), pids[p]);
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(WEXITSTATUS(status), 0);
		EXPECT_TRUE(counts[p] > 0);
		total += counts[p];
	}
	printf("  # %d processes, %.1f s: %llu jobs checked (", PROCS, now_s() - t0,
	       (unsigned long long)total);
	for (int p = 0; p < PROCS; p++)
		printf("%s%llu", p ? " " : "", (unsigned long long)counts[p]);
	printf(")\n");
	munmap(counts, 4096);
}

TAP_MAIN()
