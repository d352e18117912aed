// SPDX-License-Identifier: MIT
/*
 * Eight processes, then sixty-four, submit at once for a bounded time, each
 * on its own file with its own buffers, spread over the four queues, and
 * check every job's result: the card fills a device buffer with the
 * process's and the job's pattern, copies it out to a host buffer, and
 * copies a host buffer the CPU wrote to another.  Several jobs stay in
 * flight per process.  Sixty-four files are more than the card's 15
 * hardware contexts: contexts are evicted and rebound under load.
 *
 * SPYRE_STRESS_SECONDS sets the time (default 15).  With more than one card
 * (the eight-card guest runs TAP_ONLY=eight_processes_on_every_card), that
 * test runs eight processes on each card at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spyre_regs.h"
#include "spyre_vm.h"
#include "tap.h"
#include "uapi/drm/spyre_accel.h"

#define PROCS		8		/* per card */
#define MAX_CARDS	8
#define MAX_PROCS	(PROCS * MAX_CARDS)
#define DEPTH		3		/* jobs in flight per process */
#define JOB_BYTES	(64u << 10)

static int seconds = 15;	/* the eight-process test; the others half */

/*
 * Shared between the processes of one run: how many have set up, so that
 * all start submitting together, and each one's checked job count.
 */
struct run {
	int procs;
	int cards;		/* process p uses card p % cards */
	int ready;
	uint64_t counts[MAX_PROCS];
};

static int open_card(int card)
{
	char path[32];

	snprintf(path, sizeof(path), "/dev/accel/accel%d", card);
	return open(path, O_RDWR | O_CLOEXEC);
}

/* How many cards the guest has: /dev/accel/accel0, 1, ... */
static int count_cards(void)
{
	int n = 0;

	while (n < MAX_CARDS) {
		int fd = open_card(n);

		if (fd < 0)
			break;
		close(fd);
		n++;
	}
	return n;
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

/* Wait until every process of @run has set up (2 minutes at most). */
static int start_together(struct run *run)
{
	double give_up = now_s() + 120;

	__atomic_add_fetch(&run->ready, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&run->ready, __ATOMIC_SEQ_CST) < run->procs) {
		if (now_s() > give_up)
			return -1;
		usleep(1000);
	}
	return 0;
}

/* A process's run; writes its checked job count to @run->counts[@proc]. */
static int worker(int proc, struct run *run)
{
	int fd = open_card(run->cards ? proc % run->cards : 0);
	uint32_t queue = proc / (run->cards ? run->cards : 1) % DRM_SPYRE_NUM_QUEUES;
	struct slot slots[DEPTH];
	double end;
	uint64_t job = 0, checked = 0;
	int ret;

	if (fd < 0)
		return 10;
	for (int i = 0; i < DEPTH; i++)
		if (slot_init(fd, &slots[i]))
			return 11;
	if (start_together(run))
		return 15;
	end = now_s() + (run->procs > PROCS * (run->cards ? run->cards : 1) ? seconds / 2.0 :
			 seconds);
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
	run->counts[proc] = checked;
	return checked == job && checked > 0 ? 0 : 14;
}

/*
 * Run @fn in @procs processes at once; each writes its checked job count
 * to @run->counts[p].  Returns how many processes failed.
 */
static int run_processes(int procs, int cards, int (*fn)(int, struct run *),
			 struct run *run)
{
	pid_t pids[MAX_PROCS];
	int status, failed = 0;

	if (procs > MAX_PROCS)
		return procs;
	memset(run, 0, sizeof(*run));
	run->procs = procs;
	run->cards = cards;
	if (getenv("SPYRE_STRESS_SECONDS") && atoi(getenv("SPYRE_STRESS_SECONDS")) > 0)
		seconds = atoi(getenv("SPYRE_STRESS_SECONDS"));
	fflush(stdout);
	for (int p = 0; p < procs; p++) {
		pids[p] = fork();
		if (pids[p] < 0)
			return procs - p;
		if (pids[p] == 0)
			_exit(fn(p, run));
	}
	for (int p = 0; p < procs; p++) {
		if (waitpid(pids[p], &status, 0) != pids[p] || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			printf("  # process %d: status %#x\n", p, status);
			failed++;
		}
	}
	return failed;
}

static struct run *run_map(void)
{
	struct run *run = mmap(NULL, sizeof(*run), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return run == MAP_FAILED ? NULL : run;
}

/*
 * @procs processes at once spread over @cards cards, every result checked;
 * every card's device memory comes back.
 */
static void processes_at_once(int procs, int cards)
{
	struct run *run = run_map();
	uint64_t total = 0, least = UINT64_MAX;
	long long used0[MAX_CARDS];
	int fds[MAX_CARDS];
	double t0;

	ASSERT_TRUE(run != NULL && cards > 0 && cards <= MAX_CARDS);
	for (int c = 0; c < cards; c++) {
		fds[c] = open_card(c);
		ASSERT_TRUE(fds[c] >= 0);
		used0[c] = device_used_steady(fds[c]);
		ASSERT_TRUE(used0[c] >= 0);
	}
	t0 = now_s();
	EXPECT_EQ(run_processes(procs, cards, worker, run), 0);
	for (int p = 0; p < procs; p++) {
		EXPECT_TRUE(run->counts[p] > 0);
		total += run->counts[p];
		least = run->counts[p] < least ? run->counts[p] : least;
	}
	printf("  # %d processes on %d card%s, %.1f s with set-up: %llu jobs checked, the fewest %llu",
	       procs, cards, cards > 1 ? "s" : "", now_s() - t0, (unsigned long long)total,
	       (unsigned long long)least);
	if (procs <= PROCS)
		for (int p = 0; p < procs; p++)
			printf("%s%llu", p ? " " : " (", (unsigned long long)run->counts[p]);
	printf("%s\n", procs <= PROCS ? ")" : "");
	for (int c = 0; c < cards; c++) {
		EXPECT_EQ(used_settles(fds[c], used0[c]), used0[c]);
		close(fds[c]);
	}
	munmap(run, sizeof(*run));
}

TEST(eight_processes_on_every_card)
{
	int cards = count_cards();

	processes_at_once(PROCS * cards, cards);
}

TEST(sixty_four_processes_share_fifteen_hardware_contexts)
{
	processes_at_once(MAX_PROCS, 1);
}

/*
 * Processes killed with SIGKILL at random moments while they submit and
 * hold device buffers and host mappings: the others' results stay
 * correct, and all device memory comes back.
 */
#define SURVIVORS	4

static pid_t spawn_victim(int n)
{
	pid_t pid = fork();

	if (pid == 0) {
		/* Alone in its run: no barrier, runs until killed. */
		struct run *own = mmap(NULL, sizeof(*own), PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		if (own == MAP_FAILED)
			_exit(20);
		own->procs = 1;
		own->cards = 1;
		seconds = 3600;
		_exit(worker(PROCS + n, own));
	}
	return pid;
}

TEST(killed_processes_spare_the_others)
{
	struct run *run = run_map();
	int fd = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC), status, kills = 0;
	long long used0;
	pid_t pids[SURVIVORS];
	double end;

	ASSERT_TRUE(run != NULL && fd >= 0);
	used0 = device_used_steady(fd);
	ASSERT_TRUE(used0 >= 0);
	memset(run, 0, sizeof(*run));
	run->procs = SURVIVORS;
	run->cards = 1;
	fflush(stdout);
	for (int p = 0; p < SURVIVORS; p++) {
		pids[p] = fork();
		ASSERT_TRUE(pids[p] >= 0);
		if (pids[p] == 0)
			_exit(worker(p, run));
	}
	srand(1);
	end = now_s() + seconds / 2.0;
	while (now_s() < end) {
		pid_t victim = spawn_victim(kills);

		ASSERT_TRUE(victim > 0);
		usleep(50000 + rand() % 400000);
		kill(victim, SIGKILL);
		EXPECT_EQ(waitpid(victim, &status, 0), victim);
		EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		kills++;
	}
	for (int p = 0; p < SURVIVORS; p++) {
		EXPECT_EQ(waitpid(pids[p], &status, 0), pids[p]);
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		EXPECT_TRUE(run->counts[p] > 0);
	}
	printf("  # %d processes killed mid-submission; survivors checked %llu %llu %llu %llu jobs\n",
	       kills, (unsigned long long)run->counts[0], (unsigned long long)run->counts[1],
	       (unsigned long long)run->counts[2], (unsigned long long)run->counts[3]);
	EXPECT_TRUE(kills > 0);
	EXPECT_EQ(used_settles(fd, used0), used0);
	close(fd);
	munmap(run, sizeof(*run));
}

/*
 * More open files than the card has client contexts (15), all with jobs in
 * flight at once: contexts are bound at run time and handed from file to
 * file, and every job still runs in its own address space.
 */
#define FILES_PER_PROC	10
#define FILE_PROCS	4

static int many_files(int proc, struct run *run)
{
	struct { int fd; struct bo src, dst, cmd; uint32_t so; } f[FILES_PER_PROC];
	double end = now_s() + seconds / 2.0;
	uint64_t rounds = 0;

	for (int i = 0; i < FILES_PER_PROC; i++) {
		struct drm_syncobj_create c = { 0 };

		f[i].fd = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);
		if (f[i].fd < 0 || bo_new(f[i].fd, JOB_BYTES, 0, &f[i].src) ||
		    bo_new(f[i].fd, JOB_BYTES, 0, &f[i].dst) || bo_new(f[i].fd, 4096, 0, &f[i].cmd) ||
		    xioctl(f[i].fd, DRM_IOCTL_SYNCOBJ_CREATE, &c))
			return 20;
		f[i].so = c.handle;
		cmd_put(f[i].cmd.map, 0, SPYRE_OP_DMA_COPY, f[i].src.va, f[i].dst.va, JOB_BYTES);
	}
	do {
		for (int i = 0; i < FILES_PER_PROC; i++) {
			uint64_t *src = f[i].src.map, p = pattern_of(proc * FILES_PER_PROC + i, rounds);
			uint32_t bos[] = { f[i].src.handle, f[i].dst.handle, f[i].cmd.handle };

			for (uint32_t w = 0; w < JOB_BYTES / 8; w++)
				src[w] = p + w;
			memset(f[i].dst.map, 0, JOB_BYTES);
			if (submit(f[i].fd, i % DRM_SPYRE_NUM_QUEUES, f[i].cmd.va, 1, bos, 3, f[i].so))
				return 21;
		}
		for (int i = 0; i < FILES_PER_PROC; i++) {
			struct drm_spyre_bo_wait w = { .handle = f[i].dst.handle };
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			w.timeout_ns = (ts.tv_sec + 60) * 1000000000ll + ts.tv_nsec;
			if (xioctl(f[i].fd, DRM_IOCTL_SPYRE_BO_WAIT, &w) ||
			    w.job_status != DRM_SPYRE_JOB_STATUS_SUCCESS) {
				printf("  # proc %d file %d: status %u\n", proc, i, w.job_status);
				return 22;
			}
			if (memcmp(f[i].src.map, f[i].dst.map, JOB_BYTES)) {
				printf("  # proc %d file %d round %llu: wrong data\n", proc, i,
				       (unsigned long long)rounds);
				return 23;
			}
		}
		rounds++;
	} while (now_s() < end);
	for (int i = 0; i < FILES_PER_PROC; i++)
		close(f[i].fd);
	run->counts[proc] = rounds * FILES_PER_PROC;
	return 0;
}

TEST(forty_files_share_fifteen_hardware_contexts)
{
	struct run *run = run_map();
	uint64_t total = 0;

	ASSERT_TRUE(run != NULL);
	EXPECT_EQ(run_processes(FILE_PROCS, 1, many_files, run), 0);
	for (int p = 0; p < FILE_PROCS; p++)
		total += run->counts[p];
	printf("  # %d files: %llu jobs checked\n", FILE_PROCS * FILES_PER_PROC,
	       (unsigned long long)total);
	EXPECT_TRUE(total >= FILE_PROCS * FILES_PER_PROC);
	munmap(run, sizeof(*run));
}

TAP_MAIN()
