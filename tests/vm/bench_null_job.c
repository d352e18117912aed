// SPDX-License-Identifier: MIT
/*
 * Driver overhead, measured in the guest: an empty job (one NOP command)
 * from SUBMIT to its syncobj signalling, and job throughput with 1, 4, 16
 * and 64 processes (more files than the card's 15 hardware contexts, so
 * contexts are handed between files under load), with 1 and 4 beside a bare
 * no-op ioctl (QUERY asking only for a size) measured the same way.
 * The latencies are measured in ROUNDS rounds, ioctl then job in turn, so a
 * busy moment slows both alike: each is the median over rounds, the ratio
 * the median of the rounds' ratios, with .min and .max rows beside them.
 * driver.null_job_submit_us is the part of a null job spent in SUBMIT.
 *
 * usage: bench_null_job [SECONDS_PER_CASE]   (default 2)
 * Prints a table row per result, then one line "SPYRE-BENCH-JSON [...]"
 * with the rows as {"name", "value", "unit"} for scripts/bench.sh.
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
#include "uapi/drm/spyre_accel.h"

#define BATCH	32	/* throughput: jobs submitted between waits */
#define ROUNDS	9	/* latency: ioctl and job measured in turn */
#define MAX_PROCS	64

static double seconds = 2.0;

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_null_job: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

struct ctx {
	int fd;
	struct bo cmd;
	uint32_t syncobj;
};

static void ctx_open(struct ctx *c)
{
	struct drm_syncobj_create sc = { 0 };
	int ret;

	c->fd = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);
	if (c->fd < 0)
		die("open /dev/accel/accel0", errno);
	ret = bo_new(c->fd, 4096, 0, &c->cmd);
	if (ret)
		die("command buffer", ret);
	cmd_put(c->cmd.map, 0, SPYRE_OP_NOP, 0, 0, 0);
	ret = xioctl(c->fd, DRM_IOCTL_SYNCOBJ_CREATE, &sc);
	if (ret)
		die("syncobj", ret);
	c->syncobj = sc.handle;
}

static void null_submit(struct ctx *c, uint32_t queue)
{
	int ret = submit(c->fd, queue, c->cmd.va, 1, &c->cmd.handle, 1, c->syncobj);

	if (ret)
		die("submit", ret);
}

static void null_wait(struct ctx *c)
{
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)&c->syncobj, .count_handles = 1, .timeout_nsec = INT64_MAX,
	};
	int ret = xioctl(c->fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);

	if (ret)
		die("syncobj wait", ret);
}

/* The no-op ioctl: QUERY with size 0 only reports the structure's size. */
static void noop_ioctl(struct ctx *c)
{
	struct drm_spyre_query q = { .param = DRM_SPYRE_QUERY_DEVICE_INFO };
	int ret = xioctl(c->fd, DRM_IOCTL_SPYRE_QUERY, &q);

	if (ret || !q.size)
		die("query", ret ? ret : EINVAL);
}

/*
 * Mean microseconds of one empty job, submit to signalled, one at a time;
 * *@submit_us the part spent in the SUBMIT ioctl (the rest is the wait).
 */
static double null_job_latency_us(struct ctx *c, double window, double *submit_us)
{
	double t0 = now_s(), t, in_submit = 0;
	long n = 0;

	do {
		double s0 = now_s();

		null_submit(c, 0);
		in_submit += now_s() - s0;
		null_wait(c);
		n++;
		t = now_s();
	} while (t - t0 < window);
	*submit_us = in_submit * 1e6 / n;
	return (t - t0) * 1e6 / n;
}

static double noop_ioctl_us(struct ctx *c, double window)
{
	double t0 = now_s(), t;
	long n = 0;

	do {
		for (int i = 0; i < 64; i++)
			noop_ioctl(c);
		n += 64;
		t = now_s();
	} while (t - t0 < window);
	return (t - t0) * 1e6 / n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Jobs (or ioctls) one process completes in @seconds, BATCH in flight. */
static long run_for(struct ctx *c, uint32_t queue, int jobs, double end)
{
	long n = 0;

	while (now_s() < end) {
		for (int i = 0; i < BATCH; i++) {
			if (jobs)
				null_submit(c, queue);
			else
				noop_ioctl(c);
		}
		if (jobs)
			null_wait(c);
		n += BATCH;
	}
	return n;
}

/* Per-second rate of @procs processes together, each on its own file. */
static double rate(int procs, int jobs)
{
	long *counts = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			    -1, 0);
	int pipefd[2], readyfd[2], status;
	pid_t pids[MAX_PROCS];
	double t0, end, total = 0;
	char byte;

	if (procs > MAX_PROCS || counts == MAP_FAILED || pipe(pipefd) || pipe(readyfd))
		die("setup", errno);
	fflush(stdout);
	for (int p = 0; p < procs; p++) {
		pids[p] = fork();
		if (pids[p] < 0)
			die("fork", errno);
		if (pids[p] == 0) {
			struct ctx c;
			double start;

			ctx_open(&c);
			close(pipefd[1]);
			close(readyfd[0]);
			/* Everyone starts together, once all are set up. */
			if (write(readyfd[1], "r", 1) != 1)
				_exit(1);
			close(readyfd[1]);
			if (read(pipefd[0], &start, sizeof(start)) != sizeof(start))
				_exit(1);
			counts[p] = run_for(&c, p % DRM_SPYRE_NUM_QUEUES, jobs, start + seconds);
			close(c.fd);
			_exit(0);
		}
	}
	close(pipefd[0]);
	close(readyfd[1]);
	for (int p = 0; p < procs; p++)
		if (read(readyfd[0], &byte, 1) != 1)
			die("a worker failed to set up", EIO);
	close(readyfd[0]);
	t0 = now_s();
	for (int p = 0; p < procs; p++)
		if (write(pipefd[1], &t0, sizeof(t0)) != sizeof(t0))
			die("start", errno);
	close(pipefd[1]);
	for (int p = 0; p < procs; p++) {
		if (waitpid(pids[p], &status, 0) != pids[p] || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			die("worker", EIO);
	}
	end = now_s();
	for (int p = 0; p < procs; p++)
		total += counts[p];
	munmap(counts, 4096);
	return total / (end - t0);
}

struct row {
	const char *name;
	double value;
	const char *unit;
	double min, max;	/* over rounds, when min < max or both set */
	int spread;
};

static struct row plain_row(const char *name, double value, const char *unit)
{
	return (struct row){ name, value, unit, 0, 0, 0 };
}

/* A row for the median of @v[ROUNDS] (sorted in place), with its min and max. */
static struct row spread_row(const char *name, double *v, const char *unit)
{
	qsort(v, ROUNDS, sizeof(*v), cmp_double);
	return (struct row){ name, v[ROUNDS / 2], unit, v[0], v[ROUNDS - 1], 1 };
}

int main(int argc, char **argv)
{
	struct row rows[12];
	int n = 0;
	struct ctx c;
	double job_us[ROUNDS], ioctl_us[ROUNDS], ratio[ROUNDS], submit_us[ROUNDS];

	if (argc > 1)
		seconds = atof(argv[1]);
	if (seconds <= 0)
		seconds = 2.0;
	ctx_open(&c);
	/* Warm up: first jobs page in the scheduler's and the card's paths. */
	for (int i = 0; i < 50; i++) {
		null_submit(&c, 0);
		null_wait(&c);
		noop_ioctl(&c);
	}
	for (int r = 0; r < ROUNDS; r++) {
		ioctl_us[r] = noop_ioctl_us(&c, seconds / ROUNDS);
		job_us[r] = null_job_latency_us(&c, seconds / ROUNDS, &submit_us[r]);
		ratio[r] = job_us[r] / ioctl_us[r];
	}
	close(c.fd);

	rows[n++] = spread_row("driver.null_job_us", job_us, "us");
	rows[n++] = spread_row("driver.noop_ioctl_us", ioctl_us, "us");
	rows[n++] = spread_row("driver.null_job_vs_ioctl_ratio", ratio, "ratio");
	rows[n++] = spread_row("driver.null_job_submit_us", submit_us, "us");
	rows[n++] = plain_row("driver.null_jobs_per_s_1p", rate(1, 1), "jobs/s");
	rows[n++] = plain_row("driver.noop_ioctls_per_s_1p", rate(1, 0), "ioctls/s");
	rows[n++] = plain_row("driver.null_jobs_per_s_4p", rate(4, 1), "jobs/s");
	rows[n++] = plain_row("driver.noop_ioctls_per_s_4p", rate(4, 0), "ioctls/s");
	rows[n++] = plain_row("driver.null_jobs_per_s_16p", rate(16, 1), "jobs/s");
	rows[n++] = plain_row("driver.null_jobs_per_s_64p", rate(64, 1), "jobs/s");

	for (int i = 0; i < n; i++) {
		printf("%-34s %12.3f  %s", rows[i].name, rows[i].value, rows[i].unit);
		if (rows[i].spread)
			printf(" (median of %d rounds; min %.3f, max %.3f)", ROUNDS, rows[i].min,
			       rows[i].max);
		printf("\n");
	}
	printf("SPYRE-BENCH-JSON [");
	for (int i = 0; i < n; i++) {
		printf("%s{\"name\": \"%s\", \"value\": %.4f, \"unit\": \"%s\"}", i ? ", " : "",
		       rows[i].name, rows[i].value, rows[i].unit);
		if (rows[i].spread)
			printf(", {\"name\": \"%s.min\", \"value\": %.4f, \"unit\": \"%s\"}, "
			       "{\"name\": \"%s.max\", \"value\": %.4f, \"unit\": \"%s\"}",
			       rows[i].name, rows[i].min, rows[i].unit, rows[i].name, rows[i].max,
			       rows[i].unit);
	}
	printf("]\n");
	return 0;
}
