// SPDX-License-Identifier: MIT
/*
 * One tenant cannot hurt another (issue 37): a second thread's GEM_CLOSE
 * racing BO_CREATE on one fd, hung jobs of one file costing one reset and
 * the rest of its queue cancelled, a SIGKILLed submitter reaped at once
 * with its memory back once the card is done, the limits on what a file
 * and a user may hold (files, queued jobs, device memory), kernel memory
 * charged to the memory cgroup, and private mappings of device memory
 * refused.
 *
 * Run as root with spyre loaded with job_timeout_ms=1000 (run-vm-tests.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spyre_regs.h"
#include "spyre_vm.h"
#include "tap.h"
#include "uapi/drm/spyre_accel.h"

/* The card's node: earlier suites may have rebound it to a new minor. */
static const char *card(void)
{
	static char node[64], addr[32];

	if (!node[0] && card_find(addr, sizeof(addr), node, sizeof(node)))
		snprintf(node, sizeof(node), "/dev/accel/accel0");
	return node;
}

#define CARD		card()
#define PARAM_DIR	"/sys/module/spyre/parameters/"

/* A module parameter's value as text (static buffer), NULL on error. */
static const char *param_get(const char *name)
{
	static char buf[64];
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static int param_set(const char *name, const char *value)
{
	char path[128];

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	return sysfs_write(path, value);
}

/* A command buffer of one command on @queue, listing @extra too. */
static int submit_one(int fd, uint32_t queue, struct bo *cmd, const struct bo *extra)
{
	uint32_t bos[] = { extra ? extra->handle : cmd->handle, cmd->handle };

	return submit(fd, queue, cmd->va, 1, bos, extra ? 2 : 1, 0);
}

/* ---------------------------------------------------------------- 1 */

struct create_race {
	int fd;
	atomic_bool stop;
	atomic_long created, closed, bad_addr;
};

static void *create_loop(void *arg)
{
	struct create_race *r = arg;

	while (!atomic_load(&r->stop)) {
		struct drm_spyre_bo_create c = { .size = 4096 };

		if (xioctl(r->fd, DRM_IOCTL_SPYRE_BO_CREATE, &c))
			continue;
		atomic_fetch_add(&r->created, 1);
		/* 0 when the other thread closed it first; else a real address. */
		if (c.device_addr && c.device_addr < (4ull << 30))
			atomic_fetch_add(&r->bad_addr, 1);
	}
	return NULL;
}

static void *close_loop(void *arg)
{
	struct create_race *r = arg;

	while (!atomic_load(&r->stop)) {
		/* Handles are allocated lowest-free: the next one is guessable. */
		for (uint32_t h = 1; h <= 4; h++) {
			struct drm_gem_close c = { .handle = h };

			if (!xioctl(r->fd, DRM_IOCTL_GEM_CLOSE, &c))
				atomic_fetch_add(&r->closed, 1);
		}
	}
	return NULL;
}

/*
 * BO_CREATE publishes the handle, then reads the buffer's address: a
 * GEM_CLOSE in between freed the buffer under it (KASAN: use after free in
 * spyre_bo_device_addr, found by the log check after the suite).
 */
TEST(bo_create_races_gem_close_on_one_fd)
{
	struct create_race r = { .fd = open(CARD, O_RDWR | O_CLOEXEC) };
	pthread_t t[3];
	double end;

	ASSERT_TRUE(r.fd >= 0);
	ASSERT_EQ(pthread_create(&t[0], NULL, create_loop, &r), 0);
	ASSERT_EQ(pthread_create(&t[1], NULL, create_loop, &r), 0);
	ASSERT_EQ(pthread_create(&t[2], NULL, close_loop, &r), 0);
	for (end = now_s() + 3; now_s() < end;)
		usleep(100000);
	atomic_store(&r.stop, true);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("  # %ld created, %ld closed by the other thread\n", atomic_load(&r.created),
	       atomic_load(&r.closed));
	EXPECT_TRUE(atomic_load(&r.created) > 100);
	EXPECT_TRUE(atomic_load(&r.closed) > 0);
	EXPECT_EQ(atomic_load(&r.bad_addr), 0);
	/* The file still works. */
	struct bo b;
	EXPECT_EQ(bo_new(r.fd, 4096, 0, &b), 0);
	munmap(b.map, 4096);
	close(r.fd);
}

/* ---------------------------------------------------------------- 2 */

static pid_t start_copier(uint32_t queue, int jobs)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(copies_check(CARD, queue, jobs, 0));
	return pid;
}

#define HANGING_JOBS	5

/*
 * Each job's own command buffer (its BO_WAIT tells that job's status), all
 * WAITing for a word nobody writes.
 */
static void submit_hanging_jobs(int fd, uint32_t queue, struct bo *word, struct bo *cmds)
{
	for (int i = 0; i < HANGING_JOBS; i++) {
		ASSERT_EQ(bo_new(fd, 4096, 0, &cmds[i]), 0);
		cmd_put(cmds[i].map, 0, SPYRE_OP_WAIT, word->va, 1, 0);
		ASSERT_EQ(submit_one(fd, queue, &cmds[i], word), 0);
	}
}

/*
 * Five jobs that each WAIT forever: the first is found hung, the card is
 * reset once, its file banned, and the four behind it are cancelled
 * (ABORTED), not replayed into four more resets.  A bystander's copies on
 * another queue all complete with the right data.
 */
TEST(hung_jobs_of_one_file_cost_one_reset)
{
	int fd = open(CARD, O_RDWR | O_CLOEXEC);
	struct bo word, cmds[HANGING_JOBS], after;
	long before = card_reset_count();
	pid_t bystander;

	ASSERT_TRUE(fd >= 0);
	ASSERT_TRUE(before >= 0);
	ASSERT_EQ(bo_new(fd, 4096, 0, &word), 0);
	bystander = start_copier(1, 20);
	ASSERT_TRUE(bystander > 0);
	submit_hanging_jobs(fd, 0, &word, cmds);
	EXPECT_EQ(bo_wait_status(fd, cmds[0].handle, 60), DRM_SPYRE_JOB_STATUS_TIMEOUT);
	for (int i = 1; i < HANGING_JOBS; i++)
		EXPECT_EQ(bo_wait_status(fd, cmds[i].handle, 60), DRM_SPYRE_JOB_STATUS_ABORTED);
	EXPECT_EQ(child_status(bystander), 0);
	EXPECT_EQ(card_reset_count(), before + 1);
	/* Banned: no more submits. */
	ASSERT_EQ(bo_new(fd, 4096, 0, &after), 0);
	cmd_put(after.map, 0, SPYRE_OP_NOP, 0, 0, 0);
	EXPECT_EQ(submit_one(fd, 0, &after, NULL), -ECANCELED);
	close(fd);
}

/* ---------------------------------------------------------------- 3 */

#define KILLED_DEVICE_BYTES	(64u << 20)
#define KILLED_QUEUED_JOBS	300

/*
 * The victim: device and host memory, five hanging jobs on queue 0 and many
 * queued behind them, then it waits to be killed.
 */
static int victim(int ready)
{
	int fd = open(CARD, O_RDWR | O_CLOEXEC);
	struct bo word, dev, nop, cmds[HANGING_JOBS];

	if (fd < 0 || bo_new(fd, 4096, 0, &word) ||
	    bo_new(fd, KILLED_DEVICE_BYTES, DRM_SPYRE_BO_DEVICE, &dev) || bo_new(fd, 4096, 0, &nop))
		return 20;
	submit_hanging_jobs(fd, 0, &word, cmds);
	cmd_put(nop.map, 0, SPYRE_OP_NOP, 0, 0, 0);
	for (int i = 0; i < KILLED_QUEUED_JOBS; i++)
		if (submit_one(fd, 0, &nop, &dev))
			return 21;
	if (write(ready, "r", 1) != 1)
		return 22;
	for (;;)
		pause();
}

/*
 * SIGKILL a process with hung jobs and hundreds queued: it is reaped within
 * a second (its close does not wait for the card), the card is reset once
 * for its hung jobs, and its device memory comes back after that, once the
 * card can no longer touch it.
 */
TEST(killed_submitter_is_reaped_within_a_second)
{
	int fd = open(CARD, O_RDWR | O_CLOEXEC), status;
	long long base;
	long before;
	double t0, reaped;
	pid_t pid;

	ASSERT_TRUE(fd >= 0);
	base = device_used_steady(fd);
	before = card_reset_count();
	ASSERT_TRUE(base >= 0 && before >= 0);
	pid = fork_when_ready(victim);
	ASSERT_TRUE(pid > 0);
	EXPECT_TRUE(device_used(fd) >= base + KILLED_DEVICE_BYTES);

	t0 = now_s();
	ASSERT_EQ(kill(pid, SIGKILL), 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	reaped = now_s() - t0;
	printf("  # reaped %.3f s after SIGKILL\n", reaped);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	EXPECT_TRUE(reaped < 1.0);

	/* Back after the one reset its hung job costs (1 s timeout). */
	EXPECT_EQ(used_settles_within(fd, base, 30), base);
	EXPECT_EQ(card_reset_count(), before + 1);
	close(fd);
}

/* ---------------------------------------------------------------- 6 */

/* The file and user limits (module parameters), each refused with its errno. */
TEST(per_file_and_per_user_limits)
{
	char saved_files[64], saved_mem[64], limit[32];
	int fds[8], fd, n = 0, err = 0, held = 0;
	struct bo a, b, c;
	const char *v;

	v = param_get("max_files_per_user");
	ASSERT_TRUE(v);
	snprintf(saved_files, sizeof(saved_files), "%s", v);
	v = param_get("max_device_mem_mib");
	ASSERT_TRUE(v);
	snprintf(saved_mem, sizeof(saved_mem), "%s", v);

	/*
	 * Open files per user: EMFILE past the limit; a close makes room.
	 * Root may hold files already (a file stays open while a buffer of
	 * it is mapped): the limit is set 4 above what debugfs "users" says.
	 */
	fd = open(CARD, O_RDWR | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0);
	{
		char *users = debugfs_read(fd, "users"), *line;
		unsigned int uid, files;

		ASSERT_TRUE(users);
		for (line = strchr(users, '\n'); line; line = strchr(line + 1, '\n'))
			if (sscanf(line + 1, "%u %u", &uid, &files) == 2 && uid == 0)
				held = files - 1;	/* not this one */
		free(users);
	}
	close(fd);
	snprintf(limit, sizeof(limit), "%d", held + 4);
	ASSERT_EQ(param_set("max_files_per_user", limit), 0);
	err = 0;
	for (n = 0; n < 8; n++) {
		fds[n] = open(CARD, O_RDWR | O_CLOEXEC);
		if (fds[n] < 0) {
			err = errno;
			break;
		}
	}
	if (n != 4)
		printf("  # %d files held before, %d opens, then errno %d\n", held, n, err);
	EXPECT_EQ(n, 4);
	EXPECT_EQ(err, EMFILE);
	if (n > 0) {
		close(fds[--n]);
		fds[n] = open(CARD, O_RDWR | O_CLOEXEC);
		EXPECT_TRUE(fds[n] >= 0);
		if (fds[n] >= 0)
			n++;
	}
	while (n > 0)
		close(fds[--n]);
	ASSERT_EQ(param_set("max_files_per_user", saved_files), 0);

	/* Device memory per file: EDQUOT past it, per file, back on close. */
	ASSERT_EQ(param_set("max_device_mem_mib", "8"), 0);
	fd = open(CARD, O_RDWR | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0);
	EXPECT_EQ(bo_new(fd, 16u << 20, DRM_SPYRE_BO_DEVICE, &a), -EDQUOT);
	EXPECT_EQ(bo_new(fd, 4u << 20, DRM_SPYRE_BO_DEVICE, &a), 0);
	EXPECT_EQ(bo_new(fd, 4u << 20, DRM_SPYRE_BO_DEVICE, &b), 0);
	EXPECT_EQ(bo_new(fd, 4096, DRM_SPYRE_BO_DEVICE, &c), -EDQUOT);
	/* Host buffers are the memory cgroup's business, not this limit's. */
	EXPECT_EQ(bo_new(fd, 16u << 20, 0, &c), 0);
	{
		struct drm_gem_close gc = { .handle = a.handle };

		EXPECT_EQ(xioctl(fd, DRM_IOCTL_GEM_CLOSE, &gc), 0);
	}
	EXPECT_EQ(bo_new(fd, 4u << 20, DRM_SPYRE_BO_DEVICE, &a), 0);
	/* Another file has its own. */
	{
		int fd2 = open(CARD, O_RDWR | O_CLOEXEC);

		EXPECT_TRUE(fd2 >= 0);
		EXPECT_EQ(bo_new(fd2, 8u << 20, DRM_SPYRE_BO_DEVICE, &c), 0);
		close(fd2);
	}
	close(fd);
	EXPECT_EQ(param_set("max_device_mem_mib", saved_mem), 0);
}

/*
 * Jobs queued per user, over all of that user's files: a word the test
 * writes holds the first job, the credit limit (64 jobs on the card per
 * queue) the next ones, and past max_queued_jobs_per_user waiting jobs
 * SUBMIT fails with EBUSY, in another file of the same user too.
 */
TEST(queued_jobs_per_user)
{
	char saved[64];
	int fd = open(CARD, O_RDWR | O_CLOEXEC), fd2 = open(CARD, O_RDWR | O_CLOEXEC);
	struct bo word, wait_cmd, nop, nop2;
	int i, busy, ret = 0;
	const char *v = param_get("max_queued_jobs_per_user");

	ASSERT_TRUE(v && fd >= 0 && fd2 >= 0);
	snprintf(saved, sizeof(saved), "%s", v);
	ASSERT_EQ(bo_new(fd, 4096, 0, &word), 0);
	ASSERT_EQ(bo_new(fd, 4096, 0, &wait_cmd), 0);
	ASSERT_EQ(bo_new(fd, 4096, 0, &nop), 0);
	ASSERT_EQ(bo_new(fd2, 4096, 0, &nop2), 0);
	cmd_put(wait_cmd.map, 0, SPYRE_OP_WAIT, word.va, 1, 0);
	cmd_put(nop.map, 0, SPYRE_OP_NOP, 0, 0, 0);
	cmd_put(nop2.map, 0, SPYRE_OP_NOP, 0, 0, 0);
	ASSERT_EQ(param_set("max_queued_jobs_per_user", "8"), 0);

	/*
	 * The held job and 63 more fill the card's queue, 8 wait; then SUBMIT
	 * is refused, and stays refused once the scheduler has taken what it
	 * can (all within the 1 s job timeout).
	 */
	ASSERT_EQ(submit_one(fd, 0, &wait_cmd, &word), 0);
	for (i = 1, busy = 0; i < 100 && busy < 5;) {
		ret = submit_one(fd, 0, &nop, &word);
		if (!ret) {
			i++;
			busy = 0;
		} else if (ret == -EBUSY) {
			busy++;
			usleep(20000);
		} else {
			break;
		}
	}
	EXPECT_EQ(ret, -EBUSY);
	EXPECT_EQ(i, 64 + 8);
	EXPECT_EQ(submit_one(fd2, 1, &nop2, NULL), -EBUSY);
	/* Let them run: room again. */
	((volatile uint64_t *)word.map)[0] = 1;
	EXPECT_EQ(bo_wait_status(fd, word.handle, 30), DRM_SPYRE_JOB_STATUS_SUCCESS);
	EXPECT_EQ(submit_one(fd2, 1, &nop2, NULL), 0);
	EXPECT_EQ(bo_wait_status(fd2, nop2.handle, 30), DRM_SPYRE_JOB_STATUS_SUCCESS);
	EXPECT_EQ(param_set("max_queued_jobs_per_user", saved), 0);
	close(fd);
	close(fd2);
}

/* Write @text into cgroup file @dir/@name; 0 or -1. */
static int cg_write(const char *dir, const char *name, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return sysfs_write(path, text);
}

#define CG_ROOT		"/sys/fs/cgroup"
#define CG_DIR		CG_ROOT "/spyre-isolation"
#define OPENS		10000
#define BIG_HOST_BYTES	(64u << 20)

/* The cgroup's memory.current, or -1. */
static long long cg_current(void)
{
	long long v = -1;
	FILE *f = fopen(CG_DIR "/memory.current", "r");

	if (f && fscanf(f, "%lld", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

/*
 * In its own memory cgroup: 10 000 opens, then a 64 MiB host buffer.  What
 * each open pins (its file, address space and root page table) and the
 * buffer's pages are charged to the cgroup: memory.current grows by at
 * least 6 KiB an open (8.4 KiB measured; c649c6c charged 198 bytes)
 * and by the buffer's size, and falls back once they are closed.  (A limit
 * that makes them fail is not used: the memory cgroup's OOM report would
 * fail the kernel-log check.)
 */
static int memcg_child(void)
{
	struct rlimit rl = { OPENS + 64, OPENS + 64 };
	long long base, opened, with_buffer, closed;
	int fds[OPENS], n;
	struct bo big;
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", getpid());
	if (setrlimit(RLIMIT_NOFILE, &rl) || cg_write(CG_DIR, "cgroup.procs", pid))
		return 30;
	base = cg_current();
	for (n = 0; n < OPENS; n++) {
		fds[n] = open(CARD, O_RDWR | O_CLOEXEC);
		if (fds[n] < 0) {
			printf("  # open %d: errno %d\n", n, errno);
			return 31;
		}
	}
	opened = cg_current();
	if (bo_new(fds[0], BIG_HOST_BYTES, 0, &big))
		return 32;
	with_buffer = cg_current();
	munmap(big.map, BIG_HOST_BYTES);
	while (n > 0)
		close(fds[--n]);
	closed = cg_current();
	printf("  # memory.current: %lld, %d opens %+lld (%lld an open), 64 MiB buffer %+lld, closed %lld\n",
	       base, OPENS, opened - base, (opened - base) / OPENS, with_buffer - opened, closed);
	if (base < 0 || (opened - base) / OPENS < 6144)
		return 33;
	if (with_buffer - opened < BIG_HOST_BYTES)
		return 34;
	/* Most of it back (slab pages may keep a little). */
	return closed - base < (opened - base) / 4 ? 0 : 35;
}

TEST(kernel_memory_is_charged_to_the_memory_cgroup)
{
	char saved[64] = "";
	const char *v = param_get("max_files_per_user");
	int st;
	pid_t pid;

	/* A driver without the limit (before issue 37) has nothing to lift. */
	if (v)
		snprintf(saved, sizeof(saved), "%s", v);
	if (access(CG_ROOT "/cgroup.controllers", F_OK)) {
		mkdir(CG_ROOT, 0755);
		if (system("mount -t cgroup2 none " CG_ROOT) != 0)
			SKIP("no cgroup2");
	}
	if (cg_write(CG_ROOT, "cgroup.subtree_control", "+memory"))
		SKIP("no memory controller");
	rmdir(CG_DIR);
	ASSERT_EQ(mkdir(CG_DIR, 0755), 0);
	/* The per-user file limit would stop it first: lift it for this test. */
	if (saved[0])
		ASSERT_EQ(param_set("max_files_per_user", "0"), 0);
	fflush(stdout);
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0)
		_exit(memcg_child());
	st = child_status(pid);
	EXPECT_EQ(st, 0);
	if (saved[0])
		EXPECT_EQ(param_set("max_files_per_user", saved), 0);
	for (int i = 0; i < 100 && rmdir(CG_DIR); i++)
		usleep(100000);
	EXPECT_EQ(access(CG_DIR, F_OK), -1);
}

/* ---------------------------------------------------------------- 7 */

/* Device memory has no pages to copy on write: MAP_PRIVATE is refused. */
TEST(private_mapping_of_device_memory_is_refused)
{
	int fd = open(CARD, O_RDWR | O_CLOEXEC);
	struct drm_spyre_bo_create c = { .size = 1 << 20,
		.flags = DRM_SPYRE_BO_DEVICE | DRM_SPYRE_BO_MAPPABLE };
	struct drm_spyre_bo_info i = { 0 };
	void *p;

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(xioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &c), 0);
	i.handle = c.handle;
	ASSERT_EQ(xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &i), 0);
	p = mmap(NULL, i.size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, i.mmap_offset);
	EXPECT_TRUE(p == MAP_FAILED && errno == EINVAL);
	p = mmap(NULL, i.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, i.mmap_offset);
	EXPECT_TRUE(p != MAP_FAILED);
	if (p != MAP_FAILED)
		munmap(p, i.size);
	close(fd);
}

TAP_MAIN()
