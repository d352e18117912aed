// SPDX-License-Identifier: MIT
/*
 * A seeded, time-bounded fuzzer for the spyre driver's ioctls, run in the
 * guest:
 *
 *	fuzz_ioctl SEED SECONDS [WORKERS]
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
 * Prints TAP: one test, "fuzz N seconds seed S: I ioctls, no crash", which
 * passes when every worker survived and the card still copies data correctly
 * afterwards.  A kernel crash ends the guest; KASAN/lockdep reports are found
 * by the kernel-log scan that follows (make fuzz-driver, the vm-debug suite).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
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

/* ------------------------------------------------------------ random */

static uint64_t rng_state;

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

static uint8_t *scratch;	/* the kernel may write here */
static uint8_t *ro_page;	/* read-only */
static uint8_t *edge;		/* one page, then a PROT_NONE page */
static uint64_t unmapped;

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
	struct fbo bos[MAX_BOS];
	int nbos;
	uint32_t sos[MAX_SOS];
	int nsos;
	uint64_t host_bytes;
	int submits;
};

static struct ffile files[MAX_FILES];
static struct { int fd; void *p; size_t len; } maps[MAX_MAPS];
static uint64_t n_ioctls, n_ok, n_submits, n_jobs_ok, n_reopens, n_banned;
static uint64_t errs[160];

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

static void map_note(int fd, void *p, size_t len)
{
	for (int i = 0; i < MAX_MAPS; i++) {
		if (!maps[i].p) {
			maps[i].fd = fd;
			maps[i].p = p;
			maps[i].len = len;
			return;
		}
	}
	munmap(p, len);	/* no room to track it: do without */
}

static void file_open(struct ffile *f)
{
	memset(f, 0, sizeof(*f));
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

static void bo_create_valid(struct ffile *f)
{
	struct drm_spyre_bo_create c = { 0 };
	struct drm_spyre_bo_info i = { 0 };
	struct fbo *b;

	if (f->nbos >= MAX_BOS)
		return;
	c.flags = below(4) == 0 ? 0 : (uint32_t)below(8);
	if ((c.flags & DRM_SPYRE_BO_MAPPABLE) && !(c.flags & DRM_SPYRE_BO_DEVICE))
		c.flags |= DRM_SPYRE_BO_DEVICE;
	c.size = bo_size(c.flags);
	if (!(c.flags & DRM_SPYRE_BO_DEVICE) && f->host_bytes + c.size > HOST_BUDGET)
		return;
	if (xioctl(f->fd, DRM_IOCTL_SPYRE_BO_CREATE, &c))
		return;
	b = &f->bos[f->nbos++];
	memset(b, 0, sizeof(*b));
	b->handle = c.handle;
	b->flags = c.flags;
	b->va = c.device_addr;
	b->size = (c.size + PG - 1) & ~(uint64_t)(PG - 1);
	if (!(c.flags & DRM_SPYRE_BO_DEVICE))
		f->host_bytes += b->size;
	if ((c.flags & DRM_SPYRE_BO_DEVICE) && !(c.flags & DRM_SPYRE_BO_MAPPABLE))
		return;
	i.handle = c.handle;
	if (xioctl(f->fd, DRM_IOCTL_SPYRE_BO_INFO, &i))
		return;
	void *p = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, i.mmap_offset);
	if (p == MAP_FAILED)
		return;
	b->map = p;
	map_note(f->fd, p, b->size);
	if (chance(50))
		memset(p, (int)below(256), b->size < 65536 ? b->size : 65536);
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
	if (!xioctl(f->fd, DRM_IOCTL_SPYRE_BO_CREATE, &c) && f->nbos < MAX_BOS) {
		struct fbo *b = &f->bos[f->nbos++];

		memset(b, 0, sizeof(*b));
		b->handle = c.handle;
		b->flags = c.flags;
		b->va = c.device_addr;
		b->size = (c.size + PG - 1) & ~(uint64_t)(PG - 1);
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

static void fz_syncobj(struct ffile *f)
{
	switch (below(4)) {
	case 0: {
		struct drm_syncobj_create c = { 0 };

		if (chance(20))
			c.flags = (uint32_t)rnd() & 3;
		if (!xioctl(f->fd, DRM_IOCTL_SYNCOBJ_CREATE, &c) && f->nsos < MAX_SOS)
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
		struct drm_syncobj_wait w = { 0 };
		uint32_t hs[4];

		for (int k = 0; k < 4; k++)
			hs[k] = pick_so(f);
		w.handles = chance(90) ? (uintptr_t)hs : wptr(16);
		w.count_handles = 1 + (uint32_t)below(4);
		w.timeout_nsec = now_ns() + (int64_t)below(10 * 1000000);
		w.flags = chance(50) ? DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT : 0;
		if (chance(20))
			w.flags |= DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
		xioctl(f->fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
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
	counts[0] = n_ioctls;
	counts[1] = n_ok;
	counts[2] = n_submits;
	counts[3] = n_jobs_ok;
	counts[4] = n_reopens;
	counts[5] = n_banned;
	for (int e = 0; e < 128; e++)
		counts[8 + e] = errs[e];
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
	int seconds, workers = 2, failed = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s SEED SECONDS [WORKERS]\n", argv[0]);
		return 2;
	}
	seed = strtoull(argv[1], NULL, 0);
	seconds = atoi(argv[2]);
	if (argc > 3)
		workers = atoi(argv[3]);
	if (workers < 1 || workers > 4 || seconds < 0) {
		fprintf(stderr, "fuzz_ioctl: 1-4 workers, seconds >= 0\n");
		return 2;
	}
	printf("TAP version 13\n1..1\n");
	printf("# fuzz_ioctl seed %" PRIu64 ", %d seconds, %d workers\n", seed, seconds, workers);
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
			_exit(worker(seed + (uint64_t)w, seconds, shared + w * 136));
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
	printf("# errnos (number=count):");
	for (int e = 1; e < 128; e++)
		if (total[8 + e])
			printf(" %d=%" PRIu64, e, total[8 + e]);
	printf("\n");
	if (good_copy())
		failed = 1;
	printf("%s 1 - fuzz %d seconds seed %" PRIu64 ": %" PRIu64 " ioctls, no crash\n",
	       failed ? "not ok" : "ok", seconds, seed, total[0]);
	return failed;
}
