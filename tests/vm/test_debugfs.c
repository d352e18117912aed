// SPDX-License-Identifier: MIT
/*
 * The driver's debugfs files against what this process did: its open
 * files in "contexts", its buffers in "buffers", device memory use in
 * "memory", and an MMU fault it caused, with the right address, access,
 * context and job, in "faults".
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "spyre_regs.h"
#include "spyre_vm.h"
#include "tap.h"
#include "uapi/drm/spyre_accel.h"

#define MIB (1ull << 20)
#define GUARD 4096u

static int open_card(void)
{
	return open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);
}

struct ctx_line {
	unsigned int ctx, banned, mappings, handles;
	int slot, pid;
	unsigned long long va_bytes;
};

/* This process's lines of "contexts", in open order; returns how many. */
static int my_contexts(int fd, struct ctx_line *out, int max)
{
	char *text = debugfs_read(fd, "contexts"), *line, *save = NULL;
	int n = 0;

	if (!text)
		return -1;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct ctx_line c;
		unsigned long long client;
		char comm[32];

		if (sscanf(line, "%u %d %llu %d %31s %u %llu %u %u", &c.ctx, &c.slot, &client,
			   &c.pid, comm, &c.banned, &c.va_bytes, &c.mappings, &c.handles) != 9)
			continue;
		if (c.pid == getpid() && n < max)
			out[n++] = c;
	}
	free(text);
	return n;
}

/* Each open file is a context of this process with its buffers counted. */
TEST(contexts_lists_each_open_file)
{
	int a = open_card(), b = open_card();
	struct ctx_line c[4];
	struct bo x, y, z;

	ASSERT_TRUE(a >= 0 && b >= 0);
	ASSERT_EQ(bo_new(a, 4096, 0, &x), 0);
	ASSERT_EQ(bo_new(a, 3 * 4096, 0, &y), 0);
	ASSERT_EQ(bo_new(a, MIB, DRM_SPYRE_BO_DEVICE, &z), 0);
	ASSERT_EQ(my_contexts(a, c, 4), 2);
	EXPECT_TRUE(c[0].ctx >= 1 && c[1].ctx >= 1);
	EXPECT_TRUE(c[0].ctx != c[1].ctx);
	/* No job ran yet: no hardware context is held. */
	EXPECT_EQ(c[0].slot, -1);
	EXPECT_EQ(c[1].slot, -1);
	EXPECT_EQ(c[0].banned, 0);
	EXPECT_EQ(c[0].handles, 3);
	EXPECT_EQ(c[0].mappings, 3);
	EXPECT_EQ(c[0].va_bytes, 4096 + 3 * 4096 + MIB + 3 * GUARD);
	EXPECT_EQ(c[1].handles, 0);
	EXPECT_EQ(c[1].mappings, 0);
	EXPECT_EQ(c[1].va_bytes, 0);
	close(b);
	EXPECT_EQ(my_contexts(a, c, 4), 1);
	munmap(x.map, x.size);
	munmap(y.map, y.size);
	close(a);
}

/* A line of "buffers" that starts with @prefix and names this process, or NULL. */
static char *find_buffer(const char *text, const char *prefix)
{
	static char line[512];
	char pid[16];

	snprintf(pid, sizeof(pid), " %d ", getpid());
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t len = strchr(l, '\n') ? (size_t)(strchr(l, '\n') - l) : strlen(l);

		snprintf(line, sizeof(line), "%.*s", (int)len, l);
		if (!strncmp(line, prefix, strlen(prefix)) && strstr(line, pid))
			return line;
	}
	return NULL;
}

/* Every buffer: size, placement, device offset, creator and its mappings. */
TEST(buffers_lists_placement_and_addresses)
{
	int fd = open_card(), other = open_card();
	struct drm_prime_handle exp = { 0 }, imp = { 0 };
	struct drm_spyre_bo_info info = { 0 };
	struct bo host, dev, win;
	char want[64], *text, *line;
	struct ctx_line c[2];

	ASSERT_TRUE(fd >= 0 && other >= 0);
	ASSERT_EQ(my_contexts(fd, c, 2), 2);
	ASSERT_EQ(bo_new(fd, 0x7000, 0, &host), 0);
	ASSERT_EQ(bo_new(fd, 0x13000, DRM_SPYRE_BO_DEVICE, &dev), 0);
	ASSERT_EQ(bo_new(fd, 0x5000, DRM_SPYRE_BO_DEVICE | DRM_SPYRE_BO_MAPPABLE, &win), 0);
	/* The host buffer goes to the second file too, through PRIME. */
	exp.handle = host.handle;
	exp.flags = DRM_CLOEXEC | DRM_RDWR;
	ASSERT_EQ(xioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp), 0);
	imp.fd = exp.fd;
	ASSERT_EQ(xioctl(other, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp), 0);
	info.handle = imp.handle;
	ASSERT_EQ(xioctl(other, DRM_IOCTL_SPYRE_BO_INFO, &info), 0);

	text = debugfs_read(fd, "buffers");
	ASSERT_TRUE(text != NULL);
	line = find_buffer(text, "0x7000 host - 1 ");
	EXPECT_TRUE(line != NULL);
	if (line) {
		printf("  # %s\n", line);
		snprintf(want, sizeof(want), " %u@0x%" PRIx64, c[0].ctx, host.va);
		EXPECT_TRUE(strstr(line, want) != NULL);
		snprintf(want, sizeof(want), " %u@0x%" PRIx64, c[1].ctx,
			 (uint64_t)info.device_addr);
		EXPECT_TRUE(strstr(line, want) != NULL);
	}
	line = find_buffer(text, "0x13000 device 0x");
	EXPECT_TRUE(line != NULL);
	if (line) {
		snprintf(want, sizeof(want), " %u@0x%" PRIx64, c[0].ctx, dev.va);
		EXPECT_TRUE(strstr(line, want) != NULL);
	}
	/* CPU-visible device memory comes from the bottom: offset 0 here. */
	line = find_buffer(text, "0x5000 device-mappable 0x");
	EXPECT_TRUE(line != NULL);
	free(text);

	/* Closed everywhere: gone from the list. */
	close(exp.fd);
	close(other);
	munmap(host.map, host.size);
	munmap(win.map, win.size);
	close(fd);
	fd = open_card();
	ASSERT_TRUE(fd >= 0);
	text = debugfs_read(fd, "buffers");
	ASSERT_TRUE(text != NULL);
	EXPECT_TRUE(find_buffer(text, "0x7000 host") == NULL);
	EXPECT_TRUE(find_buffer(text, "0x13000 device") == NULL);
	free(text);
	close(fd);
}

/* Device memory use follows allocations; free and the largest hole add up. */
TEST(memory_tracks_device_allocations)
{
	int fd = open_card();
	long long total, used0, used1, free1, largest1, used2;
	char *text;
	struct bo big;

	ASSERT_TRUE(fd >= 0);
	text = debugfs_read(fd, "memory");
	ASSERT_TRUE(text != NULL);
	for (char *l = text, *e; l && *l; l = e ? e + 1 : NULL) {
		e = strchr(l, '\n');
		printf("  # %.*s\n", e ? (int)(e - l) : (int)strlen(l), l);
	}
	total = keyed(text, "device_total");
	used0 = keyed(text, "device_used");
	EXPECT_EQ(total, (long long)mem_bytes(fd));
	EXPECT_EQ(keyed(text, "device_free"), total - used0);
	free(text);

	ASSERT_EQ(bo_new(fd, 64 * MIB, DRM_SPYRE_BO_DEVICE, &big), 0);
	text = debugfs_read(fd, "memory");
	ASSERT_TRUE(text != NULL);
	used1 = keyed(text, "device_used");
	free1 = keyed(text, "device_free");
	largest1 = keyed(text, "device_largest_free");
	EXPECT_EQ(used1, used0 + 64 * MIB);
	EXPECT_EQ(free1, total - used1);
	EXPECT_TRUE(largest1 > 0 && largest1 <= free1);
	EXPECT_TRUE(keyed(text, "mappable_total") > 0);
	EXPECT_TRUE(keyed(text, "mappable_free") <= keyed(text, "mappable_total"));
	free(text);

	close(fd);
	fd = open_card();
	text = debugfs_read(fd, "memory");
	ASSERT_TRUE(text != NULL);
	used2 = keyed(text, "device_used");
	EXPECT_EQ(used2, used0);
	free(text);
	close(fd);
}

struct fault_line {
	unsigned long long n, job;
	long long time;
	int ctx;
	unsigned int slot, queue;
	char access[8], reason[24], comm[32];
	unsigned long long va;
	int pid;
};

/* The newest fault in the log, and how many the card had in total. */
static int last_fault(int fd, struct fault_line *f, long long *count)
{
	char *text = debugfs_read(fd, "faults"), *line, *save = NULL;
	int found = 0;

	if (!text)
		return -1;
	*count = keyed(text, "faults");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%llu %lld %d %u %u %7s 0x%llx %23s %llu %d %31s", &f->n,
			   &f->time, &f->ctx, &f->slot, &f->queue, f->access, &f->va, f->reason,
			   &f->job, &f->pid, f->comm) == 11)
			found = 1;
	free(text);
	return found;
}

/* Submit one command and wait; returns SUBMIT's job id (0 on failure). */
static uint64_t run_one(int fd, uint32_t queue, struct bo *cmd, const uint32_t *bos, uint32_t n)
{
	struct drm_spyre_submit s = {
		.queue = queue, .commands = cmd->va, .command_count = 1,
		.bo_handles = (uintptr_t)bos, .bo_count = n,
	};
	struct drm_spyre_bo_wait w = { .handle = bos[0] };
	struct timespec ts;

	if (xioctl(fd, DRM_IOCTL_SPYRE_SUBMIT, &s))
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	w.timeout_ns = (ts.tv_sec + 30) * 1000000000ll + ts.tv_nsec;
	if (xioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w) ||
	    w.job_status != DRM_SPYRE_JOB_STATUS_MMU_FAULT)
		return 0;
	return s.job_id;
}

/* A read and a write fault show up with their address, access, context and job. */
TEST(fault_log_records_the_faulting_job)
{
	struct fault_line f = { 0 };
	long long before, after;
	struct ctx_line c;
	struct bo buf, cmd;
	uint64_t job, va;
	int fd;

	for (int access = 0; access < 2; access++) {
		fd = open_card();
		ASSERT_TRUE(fd >= 0);
		ASSERT_EQ(my_contexts(fd, &c, 1), 1);
		ASSERT_EQ(bo_new(fd, 8192, 0, &buf), 0);
		ASSERT_EQ(bo_new(fd, 4096, 0, &cmd), 0);
		ASSERT_TRUE(last_fault(fd, &f, &before) >= 0);
		/* Into the guard page after the buffer, at a telling offset. */
		va = buf.va + buf.size + 0x340;
		if (access == 0)
			cmd_put(cmd.map, 0, SPYRE_OP_DMA_COPY, va, buf.va, 64);
		else
			cmd_put(cmd.map, 0, SPYRE_OP_DMA_FILL, va, 64, 0x5a5a5a5a5a5a5a5aull);
		uint32_t bos[] = { buf.handle, cmd.handle };
		/* A job that works first, so the faulting one is not job 1. */
		cmd_put(cmd.map, 1, SPYRE_OP_NOP, 0, 0, 0);
		ASSERT_EQ(submit(fd, 2, cmd.va + SPYRE_CMD_SIZE, 1, bos, 2, 0), 0);
		job = run_one(fd, 2, &cmd, bos, 2);
		EXPECT_EQ(job, 2);
		ASSERT_EQ(last_fault(fd, &f, &after), 1);
		printf("  # fault %llu: ctx %d slot %u queue %u %s 0x%llx %s job %llu pid %d %s\n",
		       f.n, f.ctx, f.slot, f.queue, f.access, f.va, f.reason, f.job, f.pid, f.comm);
		EXPECT_EQ(after, before + 1);
		EXPECT_EQ(f.n, after - 1);
		EXPECT_EQ(f.ctx, (int)c.ctx);
		EXPECT_TRUE(f.slot >= 1 && f.slot < SPYRE_NUM_CONTEXTS);
		EXPECT_EQ(f.queue, 2);
		EXPECT_STREQ(f.access, access ? "write" : "read");
		EXPECT_EQ(f.va, va);
		EXPECT_STREQ(f.reason, "not-present");
		EXPECT_EQ(f.job, job);
		EXPECT_EQ(f.pid, getpid());
		EXPECT_STREQ(f.comm, "test_debugfs");
		/* The context shows as banned, in the hardware context that faulted. */
		ASSERT_EQ(my_contexts(fd, &c, 1), 1);
		EXPECT_EQ(c.banned, 1);
		EXPECT_EQ(c.slot, (int)f.slot);
		munmap(buf.map, buf.size);
		munmap(cmd.map, cmd.size);
		close(fd);
	}
}

TAP_MAIN()
