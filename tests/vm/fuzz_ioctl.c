// SPDX-License-Identifier: MIT
/*
 * A seeded, time-bounded fuzzer for the spyre driver's ioctls, run in the
 * guest:
 *
 *	fuzz_ioctl SEED SECONDS [WORKERS [THREADS]]
 *
 * WORKERS processes (default 2, seeds SEED, SEED+1, ...) each keep twelve
 * open files with buffers and syncobjs (more files than the card has
 * hardware contexts, so contexts are handed between files under fire), and for SECONDS throw at the driver:
 * random and mutated-from-valid argument structures for every spyre ioctl,
 * random ioctl numbers in the driver range with random sizes and
 * directions, GEM_CLOSE / SYNCOBJ / PRIME with good and bad handles, and
 * valid submits whose command buffers hold random commands (random opcodes
 * and arguments, copies to random addresses: the MMU confines them).  A file
 * that gets banned (SUBMIT returns ECANCELED) is closed and reopened; files
 * are also closed with jobs in flight.  Pointers the kernel may write
 * through only ever point at a scratch area or at memory that faults, so the
 * fuzzer cannot corrupt itself.
 *
 * THREADS (default 0: the mode above) from 1 to 16 makes each worker a
 * threaded one instead: THREADS threads (per-thread seeds from SEED + worker
 * and the thread's number) share the worker's eight open files and race on
 * them: BO_CREATE of host and device buffers and GEM_CLOSE of the handles
 * other threads just got (and of the lowest free handles, which the next
 * create is given), valid small copies and NOPs and random commands through
 * SUBMIT, BO_WAIT, mmap / munmap and CPU access of the buffers (BO_INFO's
 * mmap_offset), PRIME export and import between the worker's files,
 * SYNCOBJ create / destroy / wait, and close() or dup2() of a shared file's
 * descriptor itself while the other threads use it (see "threads" below).
 * The interleaving is the scheduler's, so a threaded run is only as
 * repeatable as the races it provokes.
 *
 * Prints TAP: one test, "fuzz N seconds seed S: I ioctls, no crash" (with
 * ", T threads per worker" in the threaded mode), which passes when every
 * worker survived and the card still copies data correctly afterwards.  A
 * kernel crash ends the guest; KASAN/lockdep reports are found by the
 * kernel-log scan that follows (make fuzz-driver, which runs both modes, and
 * the vm and vm-debug suites).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spyre_cmd.h"
#include "spyre_regs.h"
#include "uapi/drm/spyre_accel.h"

#define PG		4096u
#define MIB		(1ull << 20)
#define VA_START	(4ull << 30)
#define VA_END		(128ull << 40)
/* Two workers hold more files than the card's 15 hardware contexts. */
#define MAX_FILES	12
#define MAX_BOS		32
#define MAX_SOS		16
#define MAX_MAPS	128
#define HOST_BUDGET	(96 * MIB)
#define SCRATCH_SIZE	(64 * 1024)
/* The threaded mode: files shared by a worker's threads, at these numbers. */
#define NSLOTS		8
#define MAX_THREADS	16
#define SLOT_FD_BASE	256
#define RING		32
#define LOOSE_MAPS	16

/*
 * Everything the fuzzing functions keep for themselves is per thread
 * (_Thread_local): the random state, the scratch memory, the mappings and
 * the counters.  The single-threaded mode has one thread per worker, so for
 * it nothing changed.
 */

/* ------------------------------------------------------------ random */

static _Thread_local uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static int chance(unsigned percent)
{
	return below(100) < percent;
}

/* Values that tend to find edge cases. */
static uint64_t interesting(void)
{
	static const uint64_t v[] = {
		0, 1, 2, 3, 4, 7, 8, 63, 64, 65, 255, 256, 4095, 4096, 4097, 65535, 65536,
		65537, 0x7fffffff, 0x80000000ull, 0xffffffffull, 0x100000000ull,
		1ull << 34, (1ull << 34) + 1, 1ull << 47, 1ull << 48, VA_START - 64, VA_END,
		VA_END - 64, 0x7fffffffffffffffull, 0x8000000000000000ull,
		0xffff800000000000ull, ~0ull, ~0ull - 1, ~0ull - 4094, ~0ull << 12,
	};

	return v[below(sizeof(v) / sizeof(v[0]))];
}

/* ------------------------------------------------------------ memory */

static _Thread_local uint8_t *scratch;	/* the kernel may write here */
static _Thread_local uint8_t *ro_page;	/* read-only */
static _Thread_local uint8_t *edge;	/* one page, then a PROT_NONE page */
static _Thread_local uint64_t unmapped;

static void setup_memory(void)
{
	void *p;

	scratch = mmap(NULL, SCRATCH_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	ro_page = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	edge = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (scratch == MAP_FAILED || ro_page == MAP_FAILED || edge == MAP_FAILED) {
		printf("Bail out! mmap failed\n");
		exit(1);
	}
	mprotect(edge + PG, PG, PROT_NONE);
	/* Reserved and inaccessible: a freed address would be reused. */
	p = mmap(NULL, PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	unmapped = (uintptr_t)p;
}

/*
 * A user pointer for the kernel to write @size bytes at (or fail to): the
 * scratch area, or memory that faults, never the fuzzer's own state.
 */
static uint64_t wptr(size_t size)
{
	switch (below(9)) {
	case 0: return 0;
	case 1: return 0xffff800000000000ull + below(1ull << 40);
	case 2: return unmapped + below(PG);
	case 3: return (uintptr_t)ro_page + below(PG);
	case 4: return (uintptr_t)edge + PG - (size ? below(size) : 0);	/* straddles */
	case 5: return rnd() | (1ull << 63);
	default:	/* room for the largest ioctl structure, 16 KiB */
		return (uintptr_t)scratch + below(SCRATCH_SIZE - (size < 16384 ? size : 16384));
	}
}

/* ------------------------------------------------------------ state */

struct fbo {
	uint32_t handle;
	uint32_t flags;
	uint64_t va, size;
	uint8_t *map;		/* host or MAPPABLE buffers */
};

struct ffile {
	int fd;
	int slot;		/* the threaded mode's shared file it views, or -1 */
	struct fbo bos[MAX_BOS];
	int nbos;
	uint32_t sos[MAX_SOS];
	int nsos;
	uint64_t host_bytes;
	int submits;
};

static struct ffile files[MAX_FILES];
/* A loose mapping is no buffer's 'map': the threaded mode's own mmaps. */
static _Thread_local struct { int fd; void *p; size_t len; int loose; } maps[MAX_MAPS];
static _Thread_local uint64_t n_ioctls, n_ok, n_submits, n_jobs_ok, n_reopens, n_banned;
static _Thread_local uint64_t n_maps, n_imports;
static _Thread_local uint64_t errs[160];
/* Per-file limits: a threaded worker's threads share their budget. */
static _Thread_local int max_bos = MAX_BOS;
static _Thread_local uint64_t host_budget = HOST_BUDGET;

static void note_bo(struct ffile *f, uint32_t handle, uint32_t flags, uint64_t va,
		    uint64_t size);
static void note_so(struct ffile *f, uint32_t handle);
static void slot_reopen(int k, int hard);

static int xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	n_ioctls++;
	do {
		ret = ioctl(fd, req, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	ret = ret ? -errno : 0;
	if (!ret)
		n_ok++;
	else if (-ret < 160)
		errs[-ret]++;
	return ret;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* Keep a mapping to unmap later; 0 if there was no room and it is gone. */
static int map_note(int fd, void *p, size_t len, int loose)
{
	for (int i = 0; i < MAX_MAPS; i++) {
		if (!maps[i].p) {
			maps[i].fd = fd;
			maps[i].p = p;
			maps[i].len = len;
			maps[i].loose = loose;
			return 1;
		}
	}
	munmap(p, len);	/* no room to track it: do without */
	return 0;
}

static void file_open(struct ffile *f)
{
	memset(f, 0, sizeof(*f));
	f->slot = -1;
	f->fd = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);
}

/* Close a file; its mappings go first (now, or for some, just after). */
static void file_close(struct ffile *f)
{
	int late = chance(30);

	if (f->fd < 0)
		return;
	for (int i = 0; i < MAX_MAPS; i++) {
		if (maps[i].p && maps[i].fd == f->fd && !late) {
			munmap(maps[i].p, maps[i].len);
			maps[i].p = NULL;
		}
	}
	close(f->fd);
	if (late) {	/* the mappings kept the file alive until now */
		for (int i = 0; i < MAX_MAPS; i++) {
			if (maps[i].p && maps[i].fd == f->fd) {
				munmap(maps[i].p, maps[i].len);
				maps[i].p = NULL;
			}
		}
	}
	f->fd = -1;
}

static void file_reopen(struct ffile *f)
{
	if (f->slot >= 0) {	/* a shared file: for every thread */
		slot_reopen(f->slot, chance(30));
		return;
	}
	file_close(f);
	file_open(f);
	n_reopens++;
}

static struct fbo *pick_bo(struct ffile *f)
{
	return f->nbos ? &f->bos[below(f->nbos)] : NULL;
}

static uint32_t pick_handle(struct ffile *f)
{
	switch (below(8)) {
	case 0: return 0;
	case 1: return (uint32_t)interesting();
	case 2: return (uint32_t)below(64);
	default: {
		struct fbo *b = pick_bo(f);

		return b ? b->handle : 1;
	}
	}
}

static uint32_t pick_so(struct ffile *f)
{
	if (f->nsos && !chance(15))
		return f->sos[below(f->nsos)];
	return chance(50) ? (uint32_t)below(32) : (uint32_t)interesting();
}

/* A size for a new buffer: mostly small, host ones bounded by a budget. */
static uint64_t bo_size(uint32_t flags)
{
	if (flags & DRM_SPYRE_BO_DEVICE) {
		switch (below(10)) {
		case 0: return below(256 * MIB) + 1;
		case 1: return 64 * MIB;
		default: return below(2 * MIB) + 1;
		}
	}
	return chance(5) ? below(8 * MIB) + 1 : below(256 * 1024) + 1;
}

/* A buffer of @flags and @size, tracked in @f and mapped if the CPU may. */
static struct fbo *bo_create_with(struct ffile *f, uint32_t flags, uint64_t size)
{
	struct drm_spyre_bo_create c = { .size = size, .flags = flags };
	struct drm_spyre_bo_info i = { 0 };
	struct fbo *b;

	if (f->nbos >= max_bos)
		return NULL;
	if (!(c.flags & DRM_SPYRE_BO_DEVICE) && f->host_bytes + c.size > host_budget)
		return NULL;
	if (xioctl(f->fd, DRM_IOCTL_SPYRE_BO_CREATE, &c))
		return NULL;
	b = &f->bos[f->nbos++];
	memset(b, 0, sizeof(*b));
	b->handle = c.handle;
	b->flags = c.flags;
	b->va = c.device_addr;
	b->size = (c.size + PG - 1) & ~(uint64_t)(PG - 1);
	note_bo(f, b->handle, b->flags, b->va, b->size);
	if (!(c.flags & DRM_SPYRE_BO_DEVICE))
		f->host_bytes += b->size;
	if ((c.flags & DRM_SPYRE_BO_DEVICE) && !(c.flags & DRM_SPYRE_BO_MAPPABLE))
		return b;
	i.handle = c.handle;
	if (xioctl(f->fd, DRM_IOCTL_SPYRE_BO_INFO, &i))
		return b;
	void *p = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, i.mmap_offset);
	if (p == MAP_FAILED)
		return b;
	/* Not kept if the table is full: then no 'map' may point at it. */
	if (!map_note(f->fd, p, b->size, 0))
		return b;
	b->map = p;
	if (chance(50))
		memset(p, (int)below(256), b->size < 65536 ? b->size : 65536);
	return b;
}

static void bo_create_valid(struct ffile *f)
{
	uint32_t flags;

	if (f->nbos >= max_bos)
		return;
	flags = below(4) == 0 ? 0 : (uint32_t)below(8);
	if ((flags & DRM_SPYRE_BO_MAPPABLE) && !(flags & DRM_SPYRE_BO_DEVICE))
		flags |= DRM_SPYRE_BO_DEVICE;
	bo_create_with(f, flags, bo_size(flags));
}

/* Flip bits / overwrite a field of @len bytes with something interesting. */
static void mutate(void *s, size_t len)
{
	uint8_t *p = s;
	int n = 1 + (int)below(3);

	while (n--) {
		switch (below(4)) {
		case 0:
			p[below(len)] ^= (uint8_t)(1u << below(8));
			break;
		case 1:
			p[below(len)] = (uint8_t)rnd();
			break;
		case 2: {	/* an aligned 32-bit field */
			uint32_t v = (uint32_t)interesting();

			memcpy(p + 4 * below(len / 4), &v, 4);
			break;
		}
		default: {	/* an aligned 64-bit field */
			uint64_t v = interesting();

			memcpy(p + 8 * below(len / 8), &v, 8);
			break;
		}
		}
	}
}

/* ------------------------------------------------------------ ioctls */

static void fz_query(struct ffile *f)
{
	struct drm_spyre_query q = { 0 };

	q.param = DRM_SPYRE_QUERY_DEVICE_INFO;
	q.size = sizeof(struct drm_spyre_device_info);
	if (chance(60))
		mutate(&q, sizeof(q));
	if (chance(20))
		q.size = (uint32_t)(chance(50) ? below(128) : interesting());
	/* Only the scratch area or faulting memory for the kernel to write. */
	q.data = wptr(sizeof(struct drm_spyre_device_info));
	xioctl(f->fd, DRM_IOCTL_SPYRE_QUERY, &q);
}

static void fz_bo_create(struct ffile *f)
{
	struct drm_spyre_bo_create c = { 0 };

	if (chance(60)) {
		bo_create_valid(f);
		return;
	}
	c.size = PG;
	mutate(&c, sizeof(c));
	if (chance(20))
		c.size = interesting();
	/* Never a real host allocation beyond a few MiB: the guest is small. */
	if (!(c.flags & DRM_SPYRE_BO_DEVICE) && c.size > 8 * MIB && c.size <= (16ull << 30))
		c.size &= 8 * MIB - 1;
	if ((c.flags & DRM_SPYRE_BO_DEVICE) && c.size > 512 * MIB && c.size <= (16ull << 30))
		c.size &= 512 * MIB - 1;
	if (!xioctl(f->fd, DRM_IOCTL_SPYRE_BO_CREATE, &c) && f->nbos < max_bos) {
		struct fbo *b = &f->bos[f->nbos++];

		memset(b, 0, sizeof(*b));
		b->handle = c.handle;
		b->flags = c.flags;
		b->va = c.device_addr;
		b->size = (c.size + PG - 1) & ~(uint64_t)(PG - 1);
		note_bo(f, b->handle, b->flags, b->va, b->size);
	}
}

static void fz_bo_info(struct ffile *f)
{
	struct drm_spyre_bo_info i = { 0 };

	i.handle = pick_handle(f);
	if (chance(40))
		mutate(&i, sizeof(i));
	xioctl(f->fd, DRM_IOCTL_SPYRE_BO_INFO, &i);
}

static void fz_bo_wait(struct ffile *f)
{
	struct drm_spyre_bo_wait w = { 0 };

	w.handle = pick_handle(f);
	w.timeout_ns = now_ns() + (int64_t)below(20 * 1000000);
	if (chance(40))
		mutate(&w, sizeof(w));
	/* A far deadline is fine: every job ends (WAIT commands time out). */
	xioctl(f->fd, DRM_IOCTL_SPYRE_BO_WAIT, &w);
}

static void fz_gem_close(struct ffile *f)
{
	struct drm_gem_close c = { 0 };

	if (f->nbos && chance(70)) {
		int k = (int)below(f->nbos);

		c.handle = f->bos[k].handle;
		if (!(f->bos[k].flags & DRM_SPYRE_BO_DEVICE))
			f->host_bytes -= f->bos[k].size;
		f->bos[k] = f->bos[--f->nbos];	/* its mapping, if any, stays */
	} else {
		c.handle = pick_handle(f);
		if (chance(30))
			mutate(&c, sizeof(c));
		for (int k = 0; k < f->nbos; k++) {
			if (f->bos[k].handle == c.handle) {
				if (!(f->bos[k].flags & DRM_SPYRE_BO_DEVICE))
					f->host_bytes -= f->bos[k].size;
				f->bos[k] = f->bos[--f->nbos];
				break;
			}
		}
	}
	xioctl(f->fd, DRM_IOCTL_GEM_CLOSE, &c);
}

/* SYNCOBJ_WAIT for 1-4 of the handles at @handles, for 10 ms at the most. */
static void syncobj_wait(struct ffile *f, uint64_t handles, unsigned all_percent)
{
	struct drm_syncobj_wait w = { 0 };

	w.handles = handles;
	w.count_handles = 1 + (uint32_t)below(4);
	w.timeout_nsec = now_ns() + (int64_t)below(10 * 1000000);
	w.flags = chance(50) ? DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT : 0;
	if (chance(all_percent))
		w.flags |= DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
	xioctl(f->fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
}

static void fz_syncobj(struct ffile *f)
{
	switch (below(4)) {
	case 0: {
		struct drm_syncobj_create c = { 0 };

		if (chance(20))
			c.flags = (uint32_t)rnd() & 3;
		if (xioctl(f->fd, DRM_IOCTL_SYNCOBJ_CREATE, &c))
			break;
		note_so(f, c.handle);
		if (f->nsos < MAX_SOS)
			f->sos[f->nsos++] = c.handle;
		break;
	}
	case 1: {
		struct drm_syncobj_destroy d = { .handle = pick_so(f) };

		for (int k = 0; k < f->nsos; k++)
			if (f->sos[k] == d.handle)
				f->sos[k] = f->sos[--f->nsos];
		xioctl(f->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
		break;
	}
	default: {
		uint32_t hs[4];

		for (int k = 0; k < 4; k++)
			hs[k] = pick_so(f);
		syncobj_wait(f, chance(90) ? (uintptr_t)hs : wptr(16), 20);
		break;
	}
	}
}

static void fz_prime(struct ffile *f, struct ffile *g)
{
	struct drm_prime_handle p = { 0 };

	p.handle = pick_handle(f);
	p.flags = chance(80) ? DRM_CLOEXEC | (chance(50) ? DRM_RDWR : 0) : (uint32_t)rnd();
	p.fd = -1;
	if (xioctl(f->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p) || p.fd < 0)
		return;
	if (g->fd >= 0) {
		struct drm_prime_handle i = { .fd = p.fd };

		xioctl(g->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &i);
		/* The import's handle is not tracked: it goes with the file. */
	}
	close(p.fd);
}

/* An address a command may name: mostly in the file's buffers, some not. */
static uint64_t cmd_addr(struct ffile *f, struct ffile *other)
{
	struct fbo *b;

	switch (below(10)) {
	case 0: return interesting();
	case 1: return VA_START + below(1ull << 36);
	case 2:
		b = other && other->fd >= 0 ? pick_bo(other) : NULL;
		return b ? b->va + below(b->size) : 0;
	case 3:
		b = pick_bo(f);
		return b ? b->va + b->size + below(PG) : 0;	/* guard page */
	default:
		b = pick_bo(f);
		if (!b)
			return rnd();
		return (b->va + below(b->size)) & (chance(70) ? ~7ull : ~0ull);
	}
}

static uint64_t cmd_len(void)
{
	switch (below(8)) {
	case 0: return interesting();
	case 1: return below(8 * MIB) + 1;
	default: return below(8192) + 1;
	}
}

/* Fill @n random commands at @p. */
static void random_commands(struct ffile *f, struct ffile *other, uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *c = p + (size_t)i * SPYRE_CMD_SIZE;
		uint64_t a[7] = { 0 };
		uint8_t op;

		memset(c, 0, SPYRE_CMD_SIZE);
		op = chance(90) ? (uint8_t)below(9) : (uint8_t)rnd();
		switch (op) {
		case SPYRE_OP_DMA_COPY:
			a[0] = cmd_addr(f, other);
			a[1] = cmd_addr(f, other);
			a[2] = cmd_len();
			break;
		case SPYRE_OP_DMA_COPY_SG:
			a[0] = cmd_addr(f, other);
			a[1] = chance(80) ? below(16) + 1 : interesting();
			break;
		case SPYRE_OP_LAUNCH:
			a[0] = cmd_addr(f, other);
			a[1] = cmd_addr(f, other);
			a[2] = 8 * below(10);
			a[3] = chance(50) ? 0 : cmd_addr(f, other);
			break;
		case SPYRE_OP_FENCE:
		case SPYRE_OP_TIMESTAMP:
			a[0] = cmd_addr(f, other);
			a[1] = rnd();
			break;
		case SPYRE_OP_WAIT:
			a[0] = cmd_addr(f, other);
			a[1] = chance(50) ? 0 : rnd();
			/* Always a short timeout: a job must never hang for good. */
			a[2] = 1 + below(1000000);
			break;
		case SPYRE_OP_CALL:
			a[0] = below(16);
			a[1] = cmd_addr(f, other);
			a[2] = 1 + below(4);
			break;
		case SPYRE_OP_DMA_FILL:
			a[0] = cmd_addr(f, other);
			a[1] = cmd_len();
			a[2] = rnd();
			break;
		default:
			if (op != SPYRE_OP_NOP)
				for (int k = 0; k < 7; k++)
					a[k] = chance(50) ? 0 : rnd();
			break;
		}
		c[0] = op;
		if (chance(3))
			c[1 + below(3)] = (uint8_t)rnd();
		if (chance(3))
			a[3 + below(4)] = rnd();	/* an unused argument set */
		memcpy(c + 8, a, sizeof(a));
	}
}

static void fz_submit(struct ffile *f, struct ffile *other)
{
	struct drm_spyre_submit s = { 0 };
	uint32_t handles[MAX_BOS + 4], ins[4];
	struct fbo *cmd = NULL;
	uint32_t nb = 0, maxcmds;
	int ret;

	/* A host command buffer the CPU can fill. */
	for (int tries = 0; tries < 8 && !cmd; tries++) {
		struct fbo *b = pick_bo(f);

		if (b && b->map && !(b->flags & DRM_SPYRE_BO_DEVICE))
			cmd = b;
	}
	if (!cmd) {
		bo_create_valid(f);
		return;
	}
	maxcmds = (uint32_t)(cmd->size / SPYRE_CMD_SIZE);
	s.command_count = 1 + (uint32_t)below(maxcmds < 16 ? maxcmds : 16);
	s.commands = cmd->va + SPYRE_CMD_SIZE * below(maxcmds - s.command_count + 1);
	random_commands(f, other, cmd->map + (s.commands - cmd->va), s.command_count);
	handles[nb++] = cmd->handle;
	for (int k = 0; k < f->nbos; k++)
		if (f->bos[k].handle != cmd->handle && chance(60))
			handles[nb++] = f->bos[k].handle;
	s.bo_handles = (uintptr_t)handles;
	s.bo_count = nb;
	s.queue = (uint32_t)below(DRM_SPYRE_NUM_QUEUES);
	if (f->nsos && chance(30)) {
		s.in_syncobj_count = 1 + (uint32_t)below(4);
		for (int k = 0; k < 4; k++)
			ins[k] = f->sos[below(f->nsos)];
		s.in_syncobjs = (uintptr_t)ins;
	}
	if (f->nsos && chance(50)) {
		s.out_syncobj = f->sos[below(f->nsos)];
		if (chance(30))
			s.out_syncobj_point = 1 + below(1000);
	}
	if (chance(25)) {
		mutate(&s, sizeof(s));
		/* Reads only through these pointers: any value is safe for us. */
	}
	if (chance(5))
		handles[below(nb)] = pick_handle(f);
	ret = xioctl(f->fd, DRM_IOCTL_SPYRE_SUBMIT, &s);
	n_submits++;
	if (ret == -ECANCELED) {
		n_banned++;
		file_reopen(f);
		return;
	}
	if (ret)
		return;
	n_jobs_ok++;
	/* Keep the queues from growing without bound. */
	if (++f->submits % 16 == 0) {
		struct drm_spyre_bo_wait w = { .handle = cmd->handle };

		w.timeout_ns = now_ns() + 2000000000ll;
		xioctl(f->fd, DRM_IOCTL_SPYRE_BO_WAIT, &w);
	}
}

/* Any ioctl number in the driver range, any direction and size. */
static void fz_raw(struct ffile *f)
{
	uint32_t nr = DRM_COMMAND_BASE + (uint32_t)(chance(60) ? below(8) : below(0x60));
	uint32_t size = chance(70) ? (uint32_t)below(96) : (uint32_t)below(_IOC_SIZEMASK + 1);
	uint32_t dir = (uint32_t)below(4);
	unsigned long req = _IOC(dir, DRM_IOCTL_BASE, nr, size);
	uint8_t *arg = scratch;

	for (uint32_t k = 0; k < size && k < SCRATCH_SIZE; k += 8) {
		uint64_t v = chance(50) ? interesting() : rnd();

		memcpy(arg + k, &v, 8);
	}
	/* What the kernel could act on in our memory: tame it. */
	if (nr == DRM_COMMAND_BASE + DRM_SPYRE_QUERY && size > 8) {
		uint64_t d = wptr(sizeof(struct drm_spyre_device_info));

		memset(arg + 8, 0, 8);
		memcpy(arg + 8, &d, size >= 16 ? 8 : size - 8);
	}
	if (nr == DRM_COMMAND_BASE + DRM_SPYRE_BO_CREATE) {
		uint64_t sz;
		uint32_t fl = 0;

		memcpy(&sz, arg, 8);
		if (size >= 12)
			memcpy(&fl, arg + 8, 4);
		if (size < 8)
			sz &= (1ull << (8 * size)) - 1;
		if (sz <= (16ull << 30) && sz > 4 * MIB) {
			sz &= 4 * MIB - 1;
			memcpy(arg, &sz, size < 8 ? size : 8);
		}
	}
	if (chance(5))
		arg = (uint8_t *)(uintptr_t)wptr(size);
	xioctl(f->fd, req, arg);
}

/* ------------------------------------------------------------ threads */

/*
 * The threaded mode.  A worker opens NSLOTS files, "slots", that all its
 * threads use at once.  Each thread has its own view of each slot (a struct
 * ffile with the buffers and syncobjs it made there, for the functions
 * above), and each slot keeps rings of the handles any thread made or
 * imported in it lately, for the other threads to submit with, wait on, map,
 * export and close under their maker.
 *
 * A slot's file is also closed and reopened while the other threads use it.
 * A descriptor number a thread passes must then never name an unrelated
 * file, so each slot's file lives at one fixed number, slot_fd_base + k, far
 * above any number the kernel hands out by itself: open() and a PRIME export
 * take the lowest free number, and a worker never holds more than a few
 * dozen descriptors besides its slots.  Only dup2() puts a file at a slot's
 * number, and only a fresh file of that slot.  A reopen either dup2()s the
 * fresh file over the old one (atomic: a racing call runs on the old file or
 * on the new one, and the old file's release runs when the last call holding
 * it returns), or first close()s the number for a moment, in which the other
 * threads' calls on it fail with EBADF.  So the number a thread passes names
 * its slot's file, old or new, or no file at all (EBADF is expected), never
 * another file, and no lock is held across a system call: the slots' mutexes
 * guard their rings only.
 *
 * A thread unmaps only its own mappings (a buffer's 'map', that it writes
 * commands into, or a loose one it made to touch), so no thread pulls memory
 * from under another.
 */
struct sbo {
	uint32_t handle, flags;
	uint64_t va, size;
};

struct slot {
	int fd;			/* slot_fd_base + its index, always */
	atomic_uint gen;	/* bumped by every reopen */
	pthread_mutex_t lock;	/* the rings; never held across a system call */
	struct sbo bos[RING];
	uint32_t sos[RING];
	unsigned nbos, nsos;	/* published since the reopen; the newest at n - 1 */
	uint32_t freed;		/* a handle just closed: the next create gets it back */
};

struct tctx {
	pthread_t tid;
	int id;
	uint64_t seed;
	int64_t end;
	int max_bos;
	uint64_t host_budget;
	struct ffile views[NSLOTS];
	unsigned gens[NSLOTS];
	uint64_t counts[136];
};

static struct slot slots[NSLOTS];
static int slot_fd_base = SLOT_FD_BASE;

static void note_bo(struct ffile *f, uint32_t handle, uint32_t flags, uint64_t va,
		    uint64_t size)
{
	struct slot *s;

	if (f->slot < 0)
		return;
	s = &slots[f->slot];
	pthread_mutex_lock(&s->lock);
	s->bos[s->nbos++ % RING] = (struct sbo){ handle, flags, va, size };
	pthread_mutex_unlock(&s->lock);
}

static void note_so(struct ffile *f, uint32_t handle)
{
	struct slot *s;

	if (f->slot < 0)
		return;
	s = &slots[f->slot];
	pthread_mutex_lock(&s->lock);
	s->sos[s->nsos++ % RING] = handle;
	pthread_mutex_unlock(&s->lock);
}

/* A buffer some thread made in slot @k lately: one of the newest three if @recent. */
static int ring_bo(int k, int recent, struct sbo *out)
{
	struct slot *s = &slots[k];
	unsigned n, span;
	int ok = 0;

	pthread_mutex_lock(&s->lock);
	n = s->nbos;
	if (n) {
		span = n < RING ? n : RING;
		if (recent && span > 3)
			span = 3;
		*out = s->bos[(n - 1 - (unsigned)below(span)) % RING];
		ok = 1;
	}
	pthread_mutex_unlock(&s->lock);
	return ok;
}

/* A syncobj some thread made in slot @k lately, or a small number. */
static uint32_t ring_so(int k, int recent)
{
	struct slot *s = &slots[k];
	uint32_t h = 1 + (uint32_t)below(8);
	unsigned n, span;

	pthread_mutex_lock(&s->lock);
	n = s->nsos;
	if (n && !chance(10)) {
		span = n < RING ? n : RING;
		if (recent && span > 3)
			span = 3;
		h = s->sos[(n - 1 - (unsigned)below(span)) % RING];
	}
	pthread_mutex_unlock(&s->lock);
	return h;
}

/* The handle a create in slot @k is about to get: handles are the lowest free. */
static uint32_t guess_handle(int k)
{
	struct slot *s = &slots[k];
	uint32_t freed, top = 0;

	pthread_mutex_lock(&s->lock);
	freed = s->freed;
	if (s->nbos)
		top = s->bos[(s->nbos - 1) % RING].handle;
	pthread_mutex_unlock(&s->lock);
	switch (below(3)) {
	case 0:
		if (freed)
			return freed;
		return 1 + (uint32_t)below(4);
	case 1:
		return top + 1 + (uint32_t)below(2);
	default:
		return 1 + (uint32_t)below(4);
	}
}

/*
 * A fresh file for slot @k, for every thread: dup2()ed over the old one, or
 * (@hard) after the number was closed for a moment (see above).
 */
static void slot_reopen(int k, int hard)
{
	struct slot *s = &slots[k];
	int fd;

	n_reopens++;
	pthread_mutex_lock(&s->lock);
	s->nbos = s->nsos = 0;
	s->freed = 0;
	pthread_mutex_unlock(&s->lock);
	atomic_fetch_add(&s->gen, 1);
	if (hard) {
		close(s->fd);
		if (chance(50))
			sched_yield();
		else
			usleep((useconds_t)below(500));
	}
	fd = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);
	if (fd < 0)	/* for a moment: EBADF (if @hard) until a thread reopens it */
		return;
	if (fd < slot_fd_base)	/* always so (see above); else never dup2 it */
		dup2(fd, s->fd);
	close(fd);
}

/* This thread's view of slot @k, forgotten if the slot was reopened. */
static struct ffile *view(struct tctx *t, int k)
{
	struct ffile *f = &t->views[k];
	unsigned g = atomic_load(&slots[k].gen);

	if (t->gens[k] != g) {
		/* Its buffers' mappings go with it (no 'map' points at them now). */
		for (int i = 0; i < MAX_MAPS; i++) {
			if (maps[i].p && !maps[i].loose && maps[i].fd == slots[k].fd) {
				munmap(maps[i].p, maps[i].len);
				maps[i].p = NULL;
			}
		}
		memset(f, 0, sizeof(*f));
		f->fd = slots[k].fd;
		f->slot = k;
		t->gens[k] = g;
	}
	return f;
}

/* The CPU at a mapping: a write and a read somewhere in its @len bytes. */
static void touch(uint8_t *p, uint64_t len)
{
	volatile uint8_t *v = p;

	if (!len)
		return;
	v[below(len)] = (uint8_t)rnd();
	(void)v[len - 1];
}

static int loose_count(void)
{
	int n = 0;

	for (int i = 0; i < MAX_MAPS; i++)
		n += maps[i].p && maps[i].loose;
	return n;
}

static void loose_unmap_one(void)
{
	int n = loose_count(), k;

	if (!n)
		return;
	k = (int)below(n);
	for (int i = 0; i < MAX_MAPS; i++) {
		if (maps[i].p && maps[i].loose && !k--) {
			munmap(maps[i].p, maps[i].len);
			maps[i].p = NULL;
			return;
		}
	}
}

static void tz_gem_close(struct ffile *f)
{
	struct slot *s = &slots[f->slot];
	struct drm_gem_close c = { 0 };
	struct sbo b;

	switch (below(5)) {
	case 0:
	case 1:	/* what another thread (or this one) just got */
		if (!ring_bo(f->slot, 1, &b))
			return;
		c.handle = b.handle;
		break;
	case 2:
		if (!ring_bo(f->slot, 0, &b))
			return;
		c.handle = b.handle;
		break;
	case 3:	/* what a create is being given right now */
		c.handle = guess_handle(f->slot);
		break;
	default:
		fz_gem_close(f);
		return;
	}
	if (!xioctl(f->fd, DRM_IOCTL_GEM_CLOSE, &c)) {
		pthread_mutex_lock(&s->lock);
		s->freed = c.handle;
		pthread_mutex_unlock(&s->lock);
	}
}

static void tz_wait(struct ffile *f)
{
	struct drm_spyre_bo_wait w = { 0 };
	struct sbo b;

	if (chance(20) || !ring_bo(f->slot, chance(50), &b))
		w.handle = guess_handle(f->slot);
	else
		w.handle = b.handle;
	w.timeout_ns = now_ns() + (int64_t)below(20 * 1000000);
	xioctl(f->fd, DRM_IOCTL_SPYRE_BO_WAIT, &w);
	if (chance(30)) {
		struct drm_spyre_bo_info i = { .handle = w.handle };

		xioctl(f->fd, DRM_IOCTL_SPYRE_BO_INFO, &i);
	}
}

/* mmap a buffer some thread made (BO_INFO's offset), touch it, keep it or not. */
static void tz_mmap(struct ffile *f)
{
	struct drm_spyre_bo_info i = { 0 };
	struct sbo b;
	uint64_t len;
	uint8_t *p;

	if (chance(25)) {
		loose_unmap_one();
		return;
	}
	if (!ring_bo(f->slot, chance(50), &b))
		return;
	i.handle = chance(10) ? guess_handle(f->slot) : b.handle;
	if (xioctl(f->fd, DRM_IOCTL_SPYRE_BO_INFO, &i) || !i.size)
		return;
	len = i.size < 64 * MIB ? i.size : 64 * MIB;
	if (chance(5))
		len = i.size + PG;	/* more than the buffer: refused */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, i.mmap_offset);
	if (p == MAP_FAILED)
		return;
	n_maps++;
	touch(p, len < i.size ? len : i.size);
	if (chance(40)) {
		munmap(p, len);
		return;
	}
	if (loose_count() >= LOOSE_MAPS)
		loose_unmap_one();
	map_note(f->fd, p, len, 1);
}

/* The CPU at one of this thread's mappings, whatever became of its buffer. */
static void tz_touch(void)
{
	int i = (int)below(MAX_MAPS);

	for (int n = 0; n < MAX_MAPS; n++, i = (i + 1) % MAX_MAPS) {
		if (maps[i].p) {
			touch(maps[i].p, maps[i].len < PG ? maps[i].len : PG);
			return;
		}
	}
}

/* Export a buffer of one slot, import it into another (or the same). */
static void tz_prime(struct ffile *f, struct ffile *g)
{
	struct drm_prime_handle p = { 0 };
	struct sbo b;

	if (!ring_bo(f->slot, chance(60), &b)) {
		fz_prime(f, g);
		return;
	}
	p.handle = chance(10) ? guess_handle(f->slot) : b.handle;
	p.flags = DRM_CLOEXEC | (chance(50) ? DRM_RDWR : 0);
	p.fd = -1;
	if (xioctl(f->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p) || p.fd < 0)
		return;
	if (p.fd >= slot_fd_base) {	/* cannot be (see above): never keep it there */
		close(p.fd);
		return;
	}
	for (int n = 1 + chance(20); n--;) {	/* twice: the same handle again */
		struct drm_prime_handle i = { .fd = p.fd };
		struct drm_spyre_bo_info bi = { 0 };

		if (xioctl(g->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &i))
			break;
		n_imports++;
		bi.handle = i.handle;
		if (!xioctl(g->fd, DRM_IOCTL_SPYRE_BO_INFO, &bi))
			note_bo(g, i.handle, bi.flags, bi.device_addr, bi.size);
		else
			note_bo(g, i.handle, b.flags, 0, 0);
	}
	if (chance(20) && b.size) {	/* the dma-buf's own mapping */
		uint64_t len = b.size < 16 * MIB ? b.size : 16 * MIB;
		uint8_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, p.fd, 0);

		if (m != MAP_FAILED) {
			n_maps++;
			/* The handle may have named another, smaller buffer by now. */
			touch(m, PG);
			munmap(m, len);
		}
	}
	close(p.fd);
}

static void tz_syncobj(struct ffile *f)
{
	switch (below(7)) {
	case 0:
	case 1: {
		struct drm_syncobj_create c = { 0 };

		if (chance(30))
			c.flags = DRM_SYNCOBJ_CREATE_SIGNALED;
		if (!xioctl(f->fd, DRM_IOCTL_SYNCOBJ_CREATE, &c))
			note_so(f, c.handle);
		break;
	}
	case 2: {
		struct drm_syncobj_destroy d = { .handle = ring_so(f->slot, chance(60)) };

		xioctl(f->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
		break;
	}
	case 3:
	case 4: {
		uint32_t hs[4];

		for (int k = 0; k < 4; k++)
			hs[k] = ring_so(f->slot, chance(30));
		syncobj_wait(f, (uintptr_t)hs, 30);
		break;
	}
	case 5: {	/* reset or signal under a job that is to signal it */
		uint32_t hs[2] = { ring_so(f->slot, 1), ring_so(f->slot, 0) };
		struct drm_syncobj_array a = {
			.handles = (uintptr_t)hs, .count_handles = 1 + (uint32_t)below(2),
		};

		xioctl(f->fd, chance(50) ? DRM_IOCTL_SYNCOBJ_RESET : DRM_IOCTL_SYNCOBJ_SIGNAL, &a);
		break;
	}
	default:
		fz_syncobj(f);
		break;
	}
}

static void add_handle(uint32_t *hs, uint32_t *n, uint32_t h)
{
	for (uint32_t i = 0; i < *n; i++)
		if (hs[i] == h)
			return;
	hs[(*n)++] = h;
}

/*
 * A valid small job: NOPs and copies between buffers any thread made in the
 * slot (which another thread may be closing), from a command buffer of this
 * thread's own.
 */
static void tz_submit(struct ffile *f)
{
	struct drm_spyre_submit s = { 0 };
	uint32_t handles[16], ins[2], nb = 0, dst = 0, maxcmds;
	struct fbo *cmd = NULL;
	uint64_t off;
	int k = f->slot, ret;

	for (int i = 0, j = (int)below(f->nbos + 1); i < f->nbos && !cmd; i++) {
		struct fbo *b = &f->bos[(i + j) % f->nbos];

		if (b->map && !(b->flags & DRM_SPYRE_BO_DEVICE))
			cmd = b;
	}
	if (!cmd)
		cmd = bo_create_with(f, 0, PG * (1 + below(4)));
	if (!cmd || !cmd->map)
		return;
	maxcmds = (uint32_t)(cmd->size / SPYRE_CMD_SIZE);
	s.command_count = 1 + (uint32_t)below(4);
	off = SPYRE_CMD_SIZE * below(maxcmds - s.command_count + 1);
	s.commands = cmd->va + off;
	handles[nb++] = cmd->handle;
	for (uint32_t i = 0; i < s.command_count; i++) {
		uint8_t *c = cmd->map + off + (size_t)i * SPYRE_CMD_SIZE;
		uint64_t len, from, to;
		struct sbo a, b;

		if (chance(30) || !ring_bo(k, chance(50), &a) || !ring_bo(k, 0, &b) ||
		    !a.size || !b.size || b.handle == cmd->handle) {
			spyre_cmd_encode3(c, SPYRE_OP_NOP, 0, 0, 0);
			continue;
		}
		len = a.size < b.size ? a.size : b.size;
		len = 1 + below(len < 65536 ? len : 65536);
		from = a.va + below(a.size - len + 1);
		to = b.va + below(b.size - len + 1);
		if (chance(80)) {
			from &= ~63ull;
			to &= ~63ull;
		}
		spyre_cmd_encode3(c, SPYRE_OP_DMA_COPY, from, to, len);
		add_handle(handles, &nb, a.handle);
		add_handle(handles, &nb, b.handle);
		dst = b.handle;
	}
	s.bo_handles = (uintptr_t)handles;
	s.bo_count = nb;
	s.queue = (uint32_t)below(DRM_SPYRE_NUM_QUEUES);
	if (chance(30))
		s.out_syncobj = ring_so(k, chance(50));
	if (chance(15)) {
		ins[0] = ring_so(k, 0);
		ins[1] = ring_so(k, 1);
		s.in_syncobjs = (uintptr_t)ins;
		s.in_syncobj_count = 1 + (uint32_t)below(2);
	}
	ret = xioctl(f->fd, DRM_IOCTL_SPYRE_SUBMIT, &s);
	n_submits++;
	if (ret == -ECANCELED) {
		n_banned++;
		slot_reopen(k, chance(30));
		return;
	}
	if (ret)
		return;
	n_jobs_ok++;
	if (++f->submits % 16 == 0) {	/* keep the queues from growing without bound */
		struct drm_spyre_bo_wait w = { .handle = cmd->handle };

		w.timeout_ns = now_ns() + 2000000000ll;
		xioctl(f->fd, DRM_IOCTL_SPYRE_BO_WAIT, &w);
	} else if (dst && chance(20)) {
		struct drm_spyre_bo_wait w = { .handle = dst };

		w.timeout_ns = now_ns() + (int64_t)below(20 * 1000000);
		xioctl(f->fd, DRM_IOCTL_SPYRE_BO_WAIT, &w);
	} else if (s.out_syncobj && chance(30)) {
		struct drm_syncobj_wait w = {
			.handles = (uintptr_t)&s.out_syncobj, .count_handles = 1,
			.timeout_nsec = now_ns() + (int64_t)below(20 * 1000000),
		};

		xioctl(f->fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
	}
}

static void save_counts(uint64_t *counts)
{
	counts[0] = n_ioctls;
	counts[1] = n_ok;
	counts[2] = n_submits;
	counts[3] = n_jobs_ok;
	counts[4] = n_reopens;
	counts[5] = n_banned;
	counts[6] = n_maps;
	counts[7] = n_imports;
	for (int e = 0; e < 128; e++)
		counts[8 + e] = errs[e];
}

static void *fuzz_thread(void *arg)
{
	struct tctx *t = arg;
	uint64_t iter = 0;

	rng_state = (t->seed * 0x2545f4914f6cdd1dull + 1) ^
		    ((uint64_t)(t->id + 1) * 0xd1342543de82ef95ull);
	max_bos = t->max_bos;
	host_budget = t->host_budget;
	setup_memory();
	for (int k = 0; k < NSLOTS; k++)
		t->gens[k] = ~0u;
	while ((iter++ & 15) || now_ns() < t->end) {
		int k = (int)below(NSLOTS);
		struct ffile *f = view(t, k), *g = view(t, (int)below(NSLOTS));

		/* A slot left closed (its reopen could not open): reopen it. */
		if (!(iter & 7) && fcntl(f->fd, F_GETFD) < 0 && chance(20)) {
			slot_reopen(k, 0);
			continue;
		}
		switch (below(100)) {
		case 0 ... 11:
			if (chance(70))
				bo_create_valid(f);
			else
				fz_bo_create(f);
			break;
		case 12 ... 21: tz_gem_close(f); break;
		case 22 ... 39: tz_submit(f); break;
		case 40 ... 45: fz_submit(f, g); break;	/* random commands */
		case 46 ... 53: tz_wait(f); break;
		case 54 ... 63: tz_mmap(f); break;
		case 64 ... 71: tz_prime(f, g); break;
		case 72 ... 81: tz_syncobj(f); break;
		case 82 ... 84: fz_query(f); break;
		case 85 ... 87: fz_bo_info(f); break;
		case 88 ... 93: fz_raw(f); break;
		case 94 ... 97: tz_touch(); break;
		default:	/* the shared file itself, under the others */
			slot_reopen(k, chance(40));
			break;
		}
	}
	for (int i = 0; i < MAX_MAPS; i++) {
		if (maps[i].p) {
			munmap(maps[i].p, maps[i].len);
			maps[i].p = NULL;
		}
	}
	save_counts(t->counts);
	return NULL;
}

/* A worker of @nthreads threads on NSLOTS shared files. */
static int worker_threaded(uint64_t seed, int seconds, int nthreads, uint64_t *counts)
{
	struct tctx *t = calloc((size_t)nthreads, sizeof(*t));
	int64_t end = now_ns() + (int64_t)seconds * 1000000000ll;
	struct rlimit rl;
	int started = 0;

	if (!t)
		return 1;
	/* Room for the slots' numbers above those open() hands out. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < (rlim_t)SLOT_FD_BASE + NSLOTS) {
		rl.rlim_cur = rl.rlim_max < (rlim_t)SLOT_FD_BASE + NSLOTS ? rl.rlim_max :
			      (rlim_t)SLOT_FD_BASE + NSLOTS;
		setrlimit(RLIMIT_NOFILE, &rl);
		slot_fd_base = (int)rl.rlim_cur - NSLOTS;
		if (slot_fd_base < 128) {
			printf("  # worker %" PRIu64 ": RLIMIT_NOFILE %ld is too low\n", seed,
			       (long)rl.rlim_cur);
			fflush(stdout);
			return 1;
		}
	}
	for (int k = 0; k < NSLOTS; k++) {
		int fd = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);

		slots[k].fd = slot_fd_base + k;
		pthread_mutex_init(&slots[k].lock, NULL);
		if (fd >= 0 && fd < slot_fd_base)
			dup2(fd, slots[k].fd);
		if (fd >= 0)
			close(fd);
	}
	for (int i = 0; i < nthreads; i++) {
		t[i].id = i;
		t[i].seed = seed;
		t[i].end = end;
		t[i].max_bos = MAX_BOS / nthreads < 4 ? 4 : MAX_BOS / nthreads;
		t[i].host_budget = HOST_BUDGET / (2 * (uint64_t)nthreads);
		if (pthread_create(&t[i].tid, NULL, fuzz_thread, &t[i]))
			break;
		started++;
	}
	for (int i = 0; i < started; i++)
		pthread_join(t[i].tid, NULL);
	for (int k = 0; k < NSLOTS; k++)
		close(slots[k].fd);
	memset(counts, 0, 136 * sizeof(*counts));
	for (int i = 0; i < started; i++)
		for (int j = 0; j < 136; j++)
			counts[j] += t[i].counts[j];
	free(t);
	if (started < nthreads) {
		printf("  # worker %" PRIu64 ": %d of %d threads started\n", seed, started,
		       nthreads);
		fflush(stdout);
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------ worker */

static int worker(uint64_t seed, int seconds, uint64_t *counts)
{
	int64_t end = now_ns() + (int64_t)seconds * 1000000000ll;
	uint64_t iter = 0;

	rng_state = seed * 0x2545f4914f6cdd1dull + 1;
	setup_memory();
	for (int i = 0; i < MAX_FILES; i++)
		file_open(&files[i]);
	while ((iter++ & 15) || now_ns() < end) {
		struct ffile *f = &files[below(MAX_FILES)];
		struct ffile *g = &files[below(MAX_FILES)];

		if (f->fd < 0) {
			file_open(f);
			if (f->fd < 0) {	/* out of memory or file descriptors for a moment */
				usleep(1000);
				continue;
			}
		}
		switch (below(100)) {
		case 0 ... 9: fz_query(f); break;
		case 10 ... 27: fz_bo_create(f); break;
		case 28 ... 34: fz_bo_info(f); break;
		case 35 ... 41: fz_bo_wait(f); break;
		case 42 ... 69: fz_submit(f, g); break;
		case 70 ... 75: fz_gem_close(f); break;
		case 76 ... 83: fz_syncobj(f); break;
		case 84 ... 85: fz_prime(f, g); break;
		case 86 ... 97: fz_raw(f); break;
		default:	/* close with whatever is in flight */
			file_reopen(f);
			break;
		}
	}
	for (int i = 0; i < MAX_FILES; i++)
		file_close(&files[i]);
	save_counts(counts);
	return 0;
}

/* ------------------------------------------------------------ check */

/* After the storm: a fresh file copies 1 MiB correctly on every queue. */
static int good_copy(void)
{
	int fd = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC), bad = 0;
	struct fbo b[3];

	if (fd < 0) {
		printf("  # open after fuzzing: %s\n", strerror(errno));
		return 1;
	}
	for (int k = 0; k < 3; k++) {
		struct drm_spyre_bo_create c = { .size = k < 2 ? MIB : PG };
		struct drm_spyre_bo_info i = { 0 };

		if (ioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &c))
			return printf("  # BO_CREATE after fuzzing: %s\n", strerror(errno)), 1;
		i.handle = c.handle;
		if (ioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &i))
			return 1;
		b[k].handle = c.handle;
		b[k].va = c.device_addr;
		b[k].size = i.size;
		b[k].map = mmap(NULL, i.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, i.mmap_offset);
		if (b[k].map == MAP_FAILED)
			return 1;
	}
	for (uint32_t q = 0; q < DRM_SPYRE_NUM_QUEUES; q++) {
		uint32_t bos[3] = { b[0].handle, b[1].handle, b[2].handle };
		struct drm_spyre_submit s = {
			.queue = q, .commands = b[2].va, .command_count = 1,
			.bo_handles = (uintptr_t)bos, .bo_count = 3,
		};
		struct drm_spyre_bo_wait w = { .handle = b[1].handle };

		for (uint32_t i = 0; i < MIB / 4; i++)
			((uint32_t *)b[0].map)[i] = i * 2654435761u + q;
		memset(b[1].map, 0, MIB);
		memset(b[2].map, 0, PG);
		spyre_cmd_encode3(b[2].map, SPYRE_OP_DMA_COPY, b[0].va, b[1].va, MIB);
		if (ioctl(fd, DRM_IOCTL_SPYRE_SUBMIT, &s)) {
			printf("  # queue %u: SUBMIT after fuzzing: %s\n", q, strerror(errno));
			bad = 1;
			continue;
		}
		w.timeout_ns = now_ns() + 30000000000ll;
		if (ioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w) || w.job_status) {
			printf("  # queue %u: BO_WAIT after fuzzing: %s, status %u\n", q,
			       strerror(errno), w.job_status);
			bad = 1;
		} else if (memcmp(b[0].map, b[1].map, MIB)) {
			printf("  # queue %u: copy after fuzzing moved the wrong data\n", q);
			bad = 1;
		}
	}
	for (int k = 0; k < 3; k++)
		munmap(b[k].map, b[k].size);
	close(fd);
	return bad;
}

int main(int argc, char **argv)
{
	uint64_t seed, total[136] = { 0 }, *shared;
	int seconds, workers = 2, threads = 0, failed = 0;
	char mode[48] = "";

	if (argc < 3) {
		fprintf(stderr, "usage: %s SEED SECONDS [WORKERS [THREADS]]\n", argv[0]);
		return 2;
	}
	seed = strtoull(argv[1], NULL, 0);
	seconds = atoi(argv[2]);
	if (argc > 3)
		workers = atoi(argv[3]);
	if (argc > 4)
		threads = atoi(argv[4]);
	if (workers < 1 || workers > 4 || seconds < 0 || threads < 0 || threads > MAX_THREADS) {
		fprintf(stderr, "fuzz_ioctl: 1-4 workers, 0-%d threads, seconds >= 0\n",
			MAX_THREADS);
		return 2;
	}
	if (threads)
		snprintf(mode, sizeof(mode), ", %d threads per worker", threads);
	printf("TAP version 13\n1..1\n");
	printf("# fuzz_ioctl seed %" PRIu64 ", %d seconds, %d workers%s\n", seed, seconds, workers,
	       mode);
	fflush(stdout);
	shared = mmap(NULL, workers * sizeof(total), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		printf("Bail out! mmap\n");
		return 1;
	}
	memset(shared, 0, workers * sizeof(total));
	pid_t pids[4];
	for (int w = 0; w < workers; w++) {
		pids[w] = fork();
		if (pids[w] == 0)
			_exit(threads ? worker_threaded(seed + (uint64_t)w, seconds, threads,
							shared + w * 136) :
					worker(seed + (uint64_t)w, seconds, shared + w * 136));
	}
	for (int w = 0; w < workers; w++) {
		int status = 0;

		if (pids[w] < 0 || waitpid(pids[w], &status, 0) != pids[w]) {
			printf("  # worker %d: could not start or wait\n", w);
			failed = 1;
			continue;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			if (WIFSIGNALED(status))
				printf("  # worker %d (seed %" PRIu64 ") killed by signal %d\n", w,
				       seed + w, WTERMSIG(status));
			else
				printf("  # worker %d exited with %d\n", w, WEXITSTATUS(status));
			failed = 1;
		}
		for (int k = 0; k < 136; k++)
			total[k] += shared[w * 136 + k];
	}
	printf("# %" PRIu64 " ioctls: %" PRIu64 " succeeded, %" PRIu64 " submits (%" PRIu64
	       " jobs queued), %" PRIu64 " bans, %" PRIu64 " reopens\n", total[0], total[1],
	       total[2], total[3], total[5], total[4]);
	if (threads)
		printf("# %" PRIu64 " mmaps, %" PRIu64 " PRIME imports\n", total[6], total[7]);
	printf("# errnos (number=count):");
	for (int e = 1; e < 128; e++)
		if (total[8 + e])
			printf(" %d=%" PRIu64, e, total[8 + e]);
	printf("\n");
	if (good_copy())
		failed = 1;
	printf("%s 1 - fuzz %d seconds seed %" PRIu64 "%s: %" PRIu64 " ioctls, no crash\n",
	       failed ? "not ok" : "ok", seconds, seed, mode, total[0]);
	return failed;
}
