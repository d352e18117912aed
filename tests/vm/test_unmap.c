// SPDX-License-Identifier: MIT
/*
 * Closing a buffer's handle while the card still uses it without the job
 * listing it: the kernel (a LAUNCH, which keeps its input's device memory
 * mapped for its whole run) reads its own data or faults, never what
 * another process writes into the memory given back (docs/uapi.md
 * "Address spaces").
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spyre_program_builder.h"
#include "spyre_vm.h"
#include "tap.h"

#define MIB (1u << 20)
#define IN_BYTES (64 * MIB)		/* the unlisted input */
#define JOB_BYTES (4 * MIB)		/* each of the jobs submitted during the close */
#define JOBS 24
#define MINE 0xa1
#define THEIRS 0xb2

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int open_card(void)
{
	return open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);
}

/* A one-core kernel copying @bytes of fp32 from argument 0 to argument 1. */
static uint8_t *copy_kernel(uint32_t bytes, size_t *len)
{
	static struct pb_program prog;
	uint32_t sticks = bytes / 128;
	struct pb_core *core;
	struct pb_op *op;

	memset(&prog, 0, sizeof(prog));
	prog.num_args = 2;
	core = pb_core(&prog, 0);
	op = pb_op(core, SPK_OPC_COPY, SPK_DT_FP32, SPK_DT_FP32, sticks, 1, 32);
	op->in[0] = pb_stream(core, pb_linear(SPK_EP_DRAM, 0, 0, sticks), pb_op_end(), sticks,
			      64);
	op->out = pb_stream(core, pb_op_end(), pb_linear(SPK_EP_DRAM, 1, 0, sticks), sticks, 64);
	return pb_serialize(&prog, len);
}

/* Job status of the buffer's jobs once they are done (30 s at most). */
static uint32_t done_status(int fd, uint32_t handle)
{
	struct timespec ts;
	struct drm_spyre_bo_wait w = { .handle = handle };

	clock_gettime(CLOCK_MONOTONIC, &ts);
	w.timeout_ns = (ts.tv_sec + 30) * 1000000000ll + ts.tv_nsec;
	return xioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w) ? 0xffffffffu : w.job_status;
}

/*
 * The other process: once told, it allocates device memory (the freed
 * range comes back first) and fills it with THEIRS until told to stop.
 */
struct other {
	pid_t pid;
	int go, stop;		/* pipes the test writes */
};

static void other_run(int go, int stop, uint64_t bytes)
{
	int fd = open_card();
	struct pollfd p = { .fd = stop, .events = POLLIN };
	struct bo b;
	char c;

	if (fd < 0 || read(go, &c, 1) != 1 || bo_new(fd, bytes, DRM_SPYRE_BO_DEVICE |
						       DRM_SPYRE_BO_MAPPABLE, &b))
		_exit(1);
	do
		memset(b.map, THEIRS, bytes);
	while (poll(&p, 1, 0) == 0);
	_exit(0);
}

static int other_start(struct other *o, uint64_t bytes)
{
	int go[2], stop[2];

	if (pipe(go) || pipe(stop))
		return -1;
	o->pid = fork();
	if (o->pid == 0) {
		close(go[1]);
		close(stop[1]);
		other_run(go[0], stop[0], bytes);
	}
	close(go[0]);
	close(stop[0]);
	o->go = go[1];
	o->stop = stop[1];
	return o->pid < 0 ? -1 : 0;
}

/* Stop it; its exit status (0: it got the memory and wrote it). */
static int other_finish(struct other *o)
{
	int st = 0;

	if (write(o->stop, "s", 1) != 1)
		kill(o->pid, SIGKILL);
	waitpid(o->pid, &st, 0);
	close(o->go);
	close(o->stop);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* What a job wrote to @out: only MINE (done) or MINE and zeros (faulted). */
static void expect_mine(const char *what, uint32_t status, const uint8_t *out, uint64_t bytes)
{
	uint64_t mine = 0, theirs = 0, zero = 0, i;

	for (i = 0; i < bytes; i++) {
		mine += out[i] == MINE;
		theirs += out[i] == THEIRS;
		zero += out[i] == 0;
	}
	printf("  # %s: status %u, %llu bytes its own, %llu zero, %llu the other process's\n", what,
	       status, (unsigned long long)mine, (unsigned long long)zero,
	       (unsigned long long)theirs);
	EXPECT_EQ(theirs, 0);
	EXPECT_EQ(mine + zero, bytes);
	if (status == DRM_SPYRE_JOB_STATUS_SUCCESS)
		EXPECT_EQ(mine, bytes);
	else
		EXPECT_TRUE(status == DRM_SPYRE_JOB_STATUS_MMU_FAULT ||
			    status == DRM_SPYRE_JOB_STATUS_ABORTED);
}

/* The file's input (unlisted), a kernel and its argument block per job. */
struct setup {
	int fd;
	struct bo in, img, args, cmd;
};

static int setup_new(struct setup *t, uint64_t in_bytes, uint32_t job_bytes)
{
	size_t len;
	uint8_t *image = copy_kernel(job_bytes, &len);

	t->fd = open_card();
	if (t->fd < 0 || !image ||
	    bo_new(t->fd, in_bytes, DRM_SPYRE_BO_DEVICE | DRM_SPYRE_BO_MAPPABLE, &t->in) ||
	    bo_new(t->fd, len, 0, &t->img) || bo_new(t->fd, 4096, 0, &t->args) ||
	    bo_new(t->fd, 4096, 0, &t->cmd))
		return -1;
	memcpy(t->img.map, image, len);
	free(image);
	memset(t->in.map, MINE, in_bytes);
	munmap(t->in.map, in_bytes);
	return 0;
}

/* Job @i: copy @bytes of the input to @out, listing all but the input. */
static int launch(struct setup *t, int i, const struct bo *out)
{
	uint64_t *args = (uint64_t *)t->args.map + 2 * i;
	uint32_t bos[] = { t->img.handle, t->args.handle, t->cmd.handle, out->handle };

	args[0] = t->in.va;
	args[1] = out->va;
	cmd_put(t->cmd.map, i, SPYRE_OP_LAUNCH, t->img.va, t->args.va + 16 * i, 16);
	return submit(t->fd, 0, t->cmd.va + i * SPYRE_CMD_SIZE, 1, bos, 4, 0);
}

static int close_handle(int fd, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return xioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

/*
 * A kernel reads 64 MiB of device memory its SUBMIT does not list; the
 * handle is closed while it runs and another process takes the memory
 * and fills it.  The close waits for the kernel, which reads its own data.
 */
TEST(unlisted_input_closed_under_a_running_kernel)
{
	struct setup t;
	struct other o;
	struct bo out;
	double t0, close_ms;
	uint32_t status;

	ASSERT_EQ(other_start(&o, IN_BYTES), 0);
	ASSERT_EQ(setup_new(&t, IN_BYTES, IN_BYTES), 0);
	ASSERT_EQ(bo_new(t.fd, IN_BYTES, 0, &out), 0);
	t0 = now_ms();
	ASSERT_EQ(launch(&t, 0, &out), 0);
	/* The kernel runs for 150-250 ms: close once it has its input mapped. */
	usleep(50 * 1000);
	EXPECT_EQ(close_handle(t.fd, t.in.handle), 0);
	close_ms = now_ms() - t0;
	EXPECT_EQ(write(o.go, "g", 1), 1);
	status = done_status(t.fd, out.handle);
	printf("  # GEM_CLOSE returned %.0f ms after the SUBMIT; job done %.0f ms after it\n",
	       close_ms, now_ms() - t0);
	expect_mine("kernel", status, out.map, IN_BYTES);
	EXPECT_EQ(status, DRM_SPYRE_JOB_STATUS_SUCCESS);
	EXPECT_EQ(other_finish(&o), 0);
	close(t.fd);
}

struct submitter {
	struct setup *t;
	struct bo *outs;
	int submitted;
	int closing;
};

/* Jobs back to back, each to its own output, until the file is banned. */
static void *submit_jobs(void *arg)
{
	struct submitter *s = arg;
	int i;

	for (i = 0; i < JOBS; i++) {
		/* A few before the close, the rest while it waits and after. */
		while (i == 3 && !__atomic_load_n(&s->closing, __ATOMIC_ACQUIRE))
			usleep(100);
		if (launch(s->t, i, &s->outs[i]))
			break;
		__atomic_store_n(&s->submitted, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * Jobs of the file keep coming while the handle closes and after: each
 * either reads the file's own data or faults (the card confirms the
 * invalidation before the memory goes to the other process).
 */
TEST(jobs_submitted_while_closing_read_their_own_or_fault)
{
	struct bo outs[JOBS];
	struct submitter s = { .outs = outs };
	struct setup t;
	struct other o;
	pthread_t th;
	int i, faulted = 0;

	ASSERT_EQ(other_start(&o, JOB_BYTES), 0);
	ASSERT_EQ(setup_new(&t, JOB_BYTES, JOB_BYTES), 0);
	for (i = 0; i < JOBS; i++)
		ASSERT_EQ(bo_new(t.fd, JOB_BYTES, 0, &outs[i]), 0);
	s.t = &t;
	ASSERT_EQ(pthread_create(&th, NULL, submit_jobs, &s), 0);
	while (__atomic_load_n(&s.submitted, __ATOMIC_ACQUIRE) < 3)
		usleep(100);
	__atomic_store_n(&s.closing, 1, __ATOMIC_RELEASE);
	EXPECT_EQ(close_handle(t.fd, t.in.handle), 0);
	EXPECT_EQ(write(o.go, "g", 1), 1);
	pthread_join(th, NULL);
	printf("  # %d jobs submitted before the file was banned or done\n", s.submitted);
	for (i = 0; i < s.submitted; i++) {
		char what[32];
		uint32_t status = done_status(t.fd, outs[i].handle);

		snprintf(what, sizeof(what), "job %d", i);
		expect_mine(what, status, outs[i].map, JOB_BYTES);
		faulted += status != DRM_SPYRE_JOB_STATUS_SUCCESS;
	}
	printf("  # %d of them faulted or were aborted\n", faulted);
	EXPECT_EQ(other_finish(&o), 0);
	close(t.fd);
}

TAP_MAIN()
