// SPDX-License-Identifier: MIT
/*
 * Bad input to every spyre ioctl and the standard DRM ioctls used with them,
 * each expecting the errno docs/uapi.md documents.  Table-driven: every row
 * is a "case"; a failing row prints a "  # " diagnostic line with the input,
 * the expected and the observed result.  Then two processes try to reach
 * each other's buffers, PRIME is probed, and the device must still copy
 * data correctly at the end.  The last test reports the number of cases.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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

#define KIB		1024ull
#define MIB		(1024ull * KIB)
#define GIB		(1024ull * MIB)
#define VA_START	(4 * GIB)
#define VA_END		(128ull << 40)
#define KERNEL_PTR	0xffff800000000000ull
#define KERNEL_TEXT	0xffffffff81000000ull
#define BIT63		(1ull << 63)
#define PG		4096

static int cases, case_failures;

/* One row: the result must be @want (0 or -errno). */
#define CASE(want, got, ...)								\
	do {										\
		int w_ = (want), g_ = (got);						\
		cases++;								\
		if (w_ != g_) {								\
			case_failures++;						\
			tap_failed_checks++;						\
			printf("  # case %d (line %d): ", cases, __LINE__);		\
			printf(__VA_ARGS__);						\
			printf(": expected %s, got %s\n", errname(w_), errname(g_));	\
		}									\
	} while (0)

/* A row where the documentation allows either of two results. */
#define CASE2(want1, want2, got, ...)							\
	do {										\
		int g2_ = (got);							\
		CASE(g2_ == (want2) ? (want2) : (want1), g2_, __VA_ARGS__);		\
	} while (0)

static const char *errname(int e)
{
	static char buf[8][32];
	static int slot;
	char *b = buf[slot++ % 8];

	switch (-e) {
	case 0: return "0 (success)";
	case EINVAL: return "-EINVAL";
	case ENOENT: return "-ENOENT";
	case EFAULT: return "-EFAULT";
	case ENOMEM: return "-ENOMEM";
	case ECANCELED: return "-ECANCELED";
	case EBUSY: return "-EBUSY";
	case ETIME: return "-ETIME";
	case ETIMEDOUT: return "-ETIMEDOUT";
	case ENODEV: return "-ENODEV";
	case EOPNOTSUPP: return "-EOPNOTSUPP";
	case ENOTTY: return "-ENOTTY";
	case EACCES: return "-EACCES";
	case EPERM: return "-EPERM";
	case EEXIST: return "-EEXIST";
	case EALREADY: return "-EALREADY";
	case EIO: return "-EIO";
	}
	snprintf(b, 32, "%d", e);
	return b;
}

static int xioctl_at(int fd, unsigned long req, uint64_t addr)
{
	return xioctl(fd, req, (void *)(uintptr_t)addr);
}

static int open_card(void)
{
	return open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);
}

/*
 * A CPU mapping keeps its file (and its hardware context) alive: remember
 * every mapping so that closing a file unmaps its buffers first.
 */
static struct { int fd; void *p; size_t len; } maps[256];

static void map_note(int fd, void *p, size_t len)
{
	for (unsigned i = 0; i < 256; i++) {
		if (!maps[i].p) {
			maps[i].fd = fd;
			maps[i].p = p;
			maps[i].len = len;
			return;
		}
	}
	printf("  # too many mappings to track\n");
}

static void close_card(int fd)
{
	for (unsigned i = 0; i < 256; i++) {
		if (maps[i].p && maps[i].fd == fd) {
			munmap(maps[i].p, maps[i].len);
			maps[i].p = NULL;
		}
	}
	close(fd);
}

/* Memory with holes: bad user pointers of every kind. */
static uint8_t *ro_page;	/* PROT_READ */
static uint8_t *edge;		/* a readable-writable page followed by a PROT_NONE one */
static uint64_t unmapped;	/* a PROT_NONE reservation: nothing can be reached there */

static void setup_memory(void)
{
	void *p;

	if (ro_page)
		return;
	ro_page = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	edge = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (edge != MAP_FAILED)
		mprotect(edge + PG, PG, PROT_NONE);
	/*
	 * Reserved, never accessible: an address freed with munmap() would be
	 * reused by the next mmap() (a buffer mapping, say).
	 */
	p = mmap(NULL, PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	unmapped = (uintptr_t)p;
}

/* Address of an object of @size whose last byte is in the PROT_NONE page. */
static void *straddle(size_t size)
{
	memset(edge, 0, PG);
	return edge + PG - size + 1;
}

/* Buffers this test maps are noted so that they can be unmapped later. */
static int bo_new_noted(int fd, uint64_t size, uint32_t flags, struct bo *bo)
{
	int ret = bo_new(fd, size, flags, bo);

	if (!ret && bo->map)
		map_note(fd, bo->map, bo->size);
	return ret;
}

static int gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return xioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

/* A handle number free in @fd: create a buffer, close it. */
static uint32_t closed_handle(int fd)
{
	struct drm_spyre_bo_create c = { .size = PG };

	if (xioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &c))
		return 0;
	gem_close(fd, c.handle);
	return c.handle;
}

static uint32_t syncobj_new(int fd, uint32_t flags)
{
	struct drm_syncobj_create c = { .flags = flags };

	return xioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c) ? 0 : c.handle;
}

static int syncobj_destroy(int fd, uint32_t h)
{
	struct drm_syncobj_destroy d = { .handle = h };

	return xioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int syncobj_wait(int fd, uint32_t h)
{
	struct drm_syncobj_wait w = { 0 };

	w.handles = (uintptr_t)&h;
	w.count_handles = 1;
	w.timeout_nsec = now_ns() + 30 * 1000000000ll;
	return xioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
}

static int bo_wait(int fd, uint32_t handle, uint32_t *status)
{
	struct drm_spyre_bo_wait w = { .handle = handle };
	int ret;

	w.timeout_ns = now_ns() + 30 * 1000000000ll;
	ret = xioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w);
	if (status)
		*status = w.job_status;
	return ret;
}

static uint64_t g_mem_bytes;

/* The CPU-visible window: BAR2's length, no more than device memory. */
static uint64_t aperture_bytes(void)
{
	FILE *f = fopen("/sys/class/accel/accel0/device/resource", "r");
	unsigned long long start, end, fl;
	uint64_t len = 0;

	if (!f)
		return 0;
	for (int bar = 0; bar <= SPYRE_BAR_MEM; bar++) {
		if (fscanf(f, "%llx %llx %llx", &start, &end, &fl) != 3)
			break;
		if (bar == SPYRE_BAR_MEM && end > start)
			len = end - start + 1;
	}
	fclose(f);
	if (g_mem_bytes && len > g_mem_bytes)
		len = g_mem_bytes;
	return len;
}

/*
 * Copy a 64 KiB pattern between two fresh host buffers of a new file and
 * check it: the device still works.
 */
static int good_copy(uint32_t queue)
{
	int fd = open_card(), ret = 0;
	struct bo src, dst, cmd;
	uint32_t so, st = 99;

	if (fd < 0)
		return -errno;
	if ((ret = bo_new_noted(fd, 64 * KIB, 0, &src)) || (ret = bo_new_noted(fd, 64 * KIB, 0, &dst)) ||
	    (ret = bo_new_noted(fd, PG, 0, &cmd)))
		goto out;
	for (uint32_t i = 0; i < 64 * KIB / 4; i++)
		((uint32_t *)src.map)[i] = i * 2654435761u ^ queue;
	memset(dst.map, 0, 64 * KIB);
	cmd_put(cmd.map, 0, SPYRE_OP_DMA_COPY, src.va, dst.va, 64 * KIB);
	so = syncobj_new(fd, 0);
	uint32_t bos[] = { src.handle, dst.handle, cmd.handle };
	if ((ret = submit(fd, queue, cmd.va, 1, bos, 3, so)) || (ret = syncobj_wait(fd, so)) ||
	    (ret = bo_wait(fd, dst.handle, &st)))
		goto out;
	if (st != DRM_SPYRE_JOB_STATUS_SUCCESS)
		ret = 1000 + st;
	else if (memcmp(src.map, dst.map, 64 * KIB))
		ret = 2000;
out:
	close_card(fd);
	return ret;
}

/* ---------------------------------------------------------------- QUERY */

TEST(query_bad_input)
{
	int fd = open_card();
	struct drm_spyre_device_info info;
	struct drm_spyre_query q;

	ASSERT_TRUE(fd >= 0);
	setup_memory();
#define Q_RESET()									\
	do {										\
		memset(&q, 0, sizeof(q));						\
		q.param = DRM_SPYRE_QUERY_DEVICE_INFO;					\
		q.size = sizeof(info);							\
		q.data = (uintptr_t)&info;						\
	} while (0)
	for (int b = 0; b < 32; b++) {
		Q_RESET();
		q.flags = 1u << b;
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q), "QUERY flags bit %d", b);
	}
	const uint32_t resv[] = { 1, 0x8000, 0x80000000u, ~0u };
	for (unsigned i = 0; i < 4; i++) {
		Q_RESET();
		q.reserved = resv[i];
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q), "QUERY reserved 0x%x", resv[i]);
	}
	const uint32_t params[] = { 3, 4, 0xff, 0x80000000u, ~0u };	/* 0-2 are queries */
	for (unsigned i = 0; i < 5; i++) {
		Q_RESET();
		q.param = params[i];
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q), "QUERY param 0x%x", params[i]);
		q.size = 0;	/* unknown param even when only asking the size */
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q),
		     "QUERY param 0x%x size 0", params[i]);
	}
	const uint32_t small[] = { 1, 4, 8, 55 };
	for (unsigned i = 0; i < 4; i++) {
		Q_RESET();
		q.size = small[i];
		memset(&info, 0xcc, sizeof(info));
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q), "QUERY size %u", small[i]);
		CASE(0, ((uint8_t *)&info)[0] != 0xcc, "QUERY size %u wrote data", small[i]);
	}
	const uint64_t bad_data[] = { 0, 8, KERNEL_PTR, KERNEL_TEXT, BIT63, unmapped,
				      (uintptr_t)ro_page, (uintptr_t)straddle(56),
				      (uintptr_t)edge + PG };
	for (unsigned i = 0; i < 9; i++) {
		Q_RESET();
		q.data = bad_data[i];
		CASE(-EFAULT, xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q), "QUERY data 0x%llx",
		     (unsigned long long)bad_data[i]);
		/* size 0: data is not looked at. */
		Q_RESET();
		q.size = 0;
		q.data = bad_data[i];
		CASE(0, xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q), "QUERY size 0 data 0x%llx",
		     (unsigned long long)bad_data[i]);
		CASE(DRM_SPYRE_DEVICE_INFO_SIZE_V1, (int)q.size, "QUERY size 0 returned size");
	}
	/* Larger than the kernel's: filled to its size, the rest untouched. */
	const uint32_t big[] = { 57, 64, 4096, ~0u };
	for (unsigned i = 0; i < 4; i++) {
		uint8_t buf[128];

		memset(buf, 0xcc, sizeof(buf));
		Q_RESET();
		q.size = big[i];
		q.data = (uintptr_t)buf;
		CASE(0, xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q), "QUERY size %u", big[i]);
		CASE(DRM_SPYRE_DEVICE_INFO_SIZE_V1, (int)q.size, "QUERY size %u returned size",
		     big[i]);
		CASE(0xcc, buf[56], "QUERY size %u: byte 56 touched", big[i]);
		CASE(0x1014, (int)((struct drm_spyre_device_info *)buf)->vendor_id,
		     "QUERY size %u: vendor", big[i]);
	}
	/* The argument itself unreadable or unwritable. */
	const uint64_t bad_arg[] = { 0, KERNEL_PTR, unmapped, (uintptr_t)ro_page,
				     (uintptr_t)straddle(sizeof(q)) };
	memset(edge, 0, PG);
	for (unsigned i = 0; i < 5; i++)
		CASE(-EFAULT, xioctl_at(fd, DRM_IOCTL_SPYRE_QUERY, bad_arg[i]),
		     "QUERY argument at 0x%llx", (unsigned long long)bad_arg[i]);
	close_card(fd);
}

/* A file's own MMU faults (DRM_SPYRE_QUERY_FAULTS); -errno or 0. */
static int query_faults(int fd, struct drm_spyre_faults *f)
{
	struct drm_spyre_query q = { .param = DRM_SPYRE_QUERY_FAULTS, .size = sizeof(*f),
				     .data = (uintptr_t)f };

	memset(f, 0xcc, sizeof(*f));
	return xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q);
}

TEST(query_faults_bad_input)
{
	int fd = open_card();
	struct drm_spyre_faults fl;
	struct drm_spyre_query q;

	ASSERT_TRUE(fd >= 0);
	setup_memory();
#define QF_RESET()									\
	do {										\
		memset(&q, 0, sizeof(q));						\
		q.param = DRM_SPYRE_QUERY_FAULTS;					\
		q.size = sizeof(fl);							\
		q.data = (uintptr_t)&fl;						\
	} while (0)
	CASE(DRM_SPYRE_FAULTS_SIZE_V1, (int)sizeof(fl), "sizeof(struct drm_spyre_faults)");
	/* A fresh file has no fault: count 0, every entry zero. */
	QF_RESET();
	memset(&fl, 0xcc, sizeof(fl));
	CASE(0, xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q), "QUERY FAULTS of a fresh file");
	CASE(DRM_SPYRE_FAULTS_SIZE_V1, (int)q.size, "QUERY FAULTS returned size");
	CASE(0, (int)fl.count, "QUERY FAULTS fresh file: count");
	CASE(0, (int)fl.num_faults, "QUERY FAULTS fresh file: num_faults");
	CASE(0, (int)(fl.faults[0].device_addr | fl.faults[3].job_id | fl.pad),
	     "QUERY FAULTS fresh file: entries zeroed");
	for (int b = 0; b < 32; b++) {
		QF_RESET();
		q.flags = 1u << b;
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q), "QUERY FAULTS flags bit %d",
		     b);
	}
	const uint32_t resv[] = { 1, 0x8000, 0x80000000u, ~0u };
	for (unsigned i = 0; i < 4; i++) {
		QF_RESET();
		q.reserved = resv[i];
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q), "QUERY FAULTS reserved 0x%x",
		     resv[i]);
	}
	/* Below the first version's size: refused, nothing written. */
	const uint32_t small[] = { 1, 8, 16, 56, 175 };
	for (unsigned i = 0; i < 5; i++) {
		QF_RESET();
		q.size = small[i];
		memset(&fl, 0xcc, sizeof(fl));
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q), "QUERY FAULTS size %u",
		     small[i]);
		CASE(0, ((uint8_t *)&fl)[0] != 0xcc, "QUERY FAULTS size %u wrote data", small[i]);
	}
	const uint64_t bad_data[] = { 0, 8, KERNEL_PTR, KERNEL_TEXT, BIT63, unmapped,
				      (uintptr_t)ro_page, (uintptr_t)straddle(176),
				      (uintptr_t)edge + PG };
	for (unsigned i = 0; i < 9; i++) {
		QF_RESET();
		q.data = bad_data[i];
		CASE(-EFAULT, xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q), "QUERY FAULTS data 0x%llx",
		     (unsigned long long)bad_data[i]);
		QF_RESET();
		q.size = 0;
		q.data = bad_data[i];
		CASE(0, xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q), "QUERY FAULTS size 0 data 0x%llx",
		     (unsigned long long)bad_data[i]);
		CASE(DRM_SPYRE_FAULTS_SIZE_V1, (int)q.size, "QUERY FAULTS size 0 returned size");
	}
	/* Larger than the kernel's: filled to its size, the rest untouched. */
	const uint32_t big[] = { 177, 256, 4096, ~0u };
	for (unsigned i = 0; i < 4; i++) {
		uint8_t buf[256];

		memset(buf, 0xcc, sizeof(buf));
		QF_RESET();
		q.size = big[i];
		q.data = (uintptr_t)buf;
		CASE(0, xioctl(fd, DRM_IOCTL_SPYRE_QUERY, &q), "QUERY FAULTS size %u", big[i]);
		CASE(DRM_SPYRE_FAULTS_SIZE_V1, (int)q.size, "QUERY FAULTS size %u returned size",
		     big[i]);
		CASE(0xcc, buf[176], "QUERY FAULTS size %u: byte 176 touched", big[i]);
		CASE(0, buf[0], "QUERY FAULTS size %u: count", big[i]);
	}
	close_card(fd);
}

/* ------------------------------------------------------------ BO_CREATE */

TEST(bo_create_bad_input)
{
	int fd = open_card();
	struct drm_spyre_bo_create c;
	uint64_t mem, aper;

	ASSERT_TRUE(fd >= 0);
	setup_memory();
	mem = g_mem_bytes = mem_bytes(fd);
	aper = aperture_bytes();
	ASSERT_TRUE(mem >= 256 * MIB && aper >= MIB);
#define C_TRY(sz, fl) (memset(&c, 0, sizeof(c)), c.size = (sz), c.flags = (fl),	\
		       xioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &c))
	for (int b = 3; b < 32; b++)
		CASE(-EINVAL, C_TRY(PG, 1u << b), "BO_CREATE flags bit %d", b);
	CASE(-EINVAL, C_TRY(PG, DRM_SPYRE_BO_FLAGS_ALL | 0x8), "BO_CREATE flags 0xf");
	CASE(-EINVAL, C_TRY(PG, ~0u), "BO_CREATE flags ~0");
	CASE(-EINVAL, C_TRY(PG, DRM_SPYRE_BO_MAPPABLE), "BO_CREATE MAPPABLE without DEVICE");
	CASE(-EINVAL, C_TRY(PG, DRM_SPYRE_BO_MAPPABLE | DRM_SPYRE_BO_READ_ONLY),
	     "BO_CREATE MAPPABLE|READ_ONLY without DEVICE");

	const uint64_t bad_sizes[] = { 0, 16 * GIB + 1, 16 * GIB + PG, 32 * GIB, BIT63, ~0ull,
				       ~0ull - 4094, ~0ull & ~4095ull, 1ull << 44 };
	const uint32_t kinds[] = { 0, DRM_SPYRE_BO_DEVICE, DRM_SPYRE_BO_DEVICE | DRM_SPYRE_BO_MAPPABLE,
				   DRM_SPYRE_BO_READ_ONLY };
	for (unsigned k = 0; k < 4; k++)
		for (unsigned i = 0; i < 9; i++)
			CASE(-EINVAL, C_TRY(bad_sizes[i], kinds[k]), "BO_CREATE flags 0x%x size 0x%llx",
			     kinds[k], (unsigned long long)bad_sizes[i]);
	/* Bigger than the card's memory / the BAR window: can never fit. */
	CASE(-EINVAL, C_TRY(mem + 1, DRM_SPYRE_BO_DEVICE), "BO_CREATE DEVICE mem_bytes+1");
	CASE(-EINVAL, C_TRY(mem + PG, DRM_SPYRE_BO_DEVICE), "BO_CREATE DEVICE mem_bytes+4K");
	CASE(-EINVAL, C_TRY(2 * mem, DRM_SPYRE_BO_DEVICE | DRM_SPYRE_BO_READ_ONLY),
	     "BO_CREATE DEVICE|READ_ONLY 2*mem_bytes");
	CASE(-EINVAL, C_TRY(aper + 1, DRM_SPYRE_BO_DEVICE | DRM_SPYRE_BO_MAPPABLE),
	     "BO_CREATE MAPPABLE aperture+1 (aperture %llu)", (unsigned long long)aper);
	CASE(-EINVAL, C_TRY(aper + PG, DRM_SPYRE_BO_DEVICE | DRM_SPYRE_BO_MAPPABLE),
	     "BO_CREATE MAPPABLE aperture+4K");
	CASE(-EINVAL, C_TRY(mem, DRM_SPYRE_BO_DEVICE | DRM_SPYRE_BO_MAPPABLE),
	     "BO_CREATE MAPPABLE mem_bytes");

	/* Each input-only field non-zero, alone. */
	const uint32_t v32[] = { 1, 0x80000000u, ~0u };
	for (unsigned i = 0; i < 3; i++) {
		memset(&c, 0, sizeof(c));
		c.size = PG;
		c.pad = v32[i];
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &c), "BO_CREATE pad 0x%x", v32[i]);
		memset(&c, 0, sizeof(c));
		c.size = PG;
		c.reserved = v32[i];
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &c), "BO_CREATE reserved 0x%x",
		     v32[i]);
		memset(&c, 0, sizeof(c));
		c.size = PG;
		c.handle = v32[i];
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &c), "BO_CREATE handle 0x%x",
		     v32[i]);
	}
	const uint64_t v64[] = { 1, VA_START, BIT63, ~0ull };
	for (unsigned i = 0; i < 4; i++) {
		memset(&c, 0, sizeof(c));
		c.size = PG;
		c.device_addr = v64[i];
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &c), "BO_CREATE device_addr 0x%llx",
		     (unsigned long long)v64[i]);
	}
	/* Non-zero inputs on a device buffer too (checked before the card clears it). */
	memset(&c, 0, sizeof(c));
	c.size = PG;
	c.flags = DRM_SPYRE_BO_DEVICE;
	c.pad = 1;
	CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &c), "BO_CREATE DEVICE pad 1");

	/* The argument unreadable, or unwritable (the handle cannot be returned). */
	const uint64_t bad_arg[] = { 0, KERNEL_PTR, unmapped, (uintptr_t)ro_page,
				     (uintptr_t)straddle(sizeof(c)) };
	for (unsigned i = 0; i < 5; i++)
		CASE(-EFAULT, xioctl_at(fd, DRM_IOCTL_SPYRE_BO_CREATE, bad_arg[i]),
		     "BO_CREATE argument at 0x%llx", (unsigned long long)bad_arg[i]);
	/* A valid request in read-only memory: the kernel cannot write the result. */
	{
		uint8_t *rw = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct drm_spyre_bo_create *rc = (void *)rw;

		memset(rc, 0, sizeof(*rc));
		rc->size = PG;
		mprotect(rw, PG, PROT_READ);
		CASE(-EFAULT, xioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, rc),
		     "BO_CREATE valid request in read-only memory");
		munmap(rw, PG);
	}

	/* Boundaries that are valid: rounding, and the largest sizes. */
	struct drm_spyre_bo_info info;
	const uint64_t round[] = { 1, PG - 1, PG + 1 };
	for (unsigned i = 0; i < 3; i++) {
		CASE(0, C_TRY(round[i], 0), "BO_CREATE size %llu", (unsigned long long)round[i]);
		memset(&info, 0, sizeof(info));
		info.handle = c.handle;
		CASE(0, xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &info), "BO_INFO after size %llu",
		     (unsigned long long)round[i]);
		CASE((int)((round[i] + PG - 1) & ~(uint64_t)(PG - 1)), (int)info.size,
		     "BO_CREATE size %llu rounded", (unsigned long long)round[i]);
		CASE(0, (int)(c.device_addr & (PG - 1)), "device_addr page-aligned");
		CASE(1, c.device_addr >= VA_START && c.device_addr < VA_END, "device_addr in range");
		gem_close(fd, c.handle);
	}
	CASE(0, C_TRY(mem, DRM_SPYRE_BO_DEVICE), "BO_CREATE DEVICE of all %llu bytes",
	     (unsigned long long)mem);
	uint32_t whole = c.handle;
	/* With all of it taken: out of device memory. */
	CASE(-ENOMEM, C_TRY(PG, DRM_SPYRE_BO_DEVICE), "BO_CREATE DEVICE 4K when memory is full");
	gem_close(fd, whole);
	CASE(0, C_TRY(aper, DRM_SPYRE_BO_DEVICE | DRM_SPYRE_BO_MAPPABLE),
	     "BO_CREATE MAPPABLE of the whole window");
	whole = c.handle;
	CASE(-ENOMEM, C_TRY(PG, DRM_SPYRE_BO_DEVICE | DRM_SPYRE_BO_MAPPABLE),
	     "BO_CREATE MAPPABLE 4K when the window is full");
	CASE(0, C_TRY(PG, DRM_SPYRE_BO_DEVICE), "BO_CREATE DEVICE 4K beside a full window");
	gem_close(fd, c.handle);
	gem_close(fd, whole);
	/* Non-mappable device buffers cannot be mmap()ed. */
	CASE(0, C_TRY(PG, DRM_SPYRE_BO_DEVICE), "BO_CREATE DEVICE 4K");
	memset(&info, 0, sizeof(info));
	info.handle = c.handle;
	xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &info);
	errno = 0;
	void *m = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, info.mmap_offset);
	CASE(-EINVAL, m == MAP_FAILED ? -errno : 0, "mmap of a non-MAPPABLE device buffer");
	if (m != MAP_FAILED)
		munmap(m, PG);
	gem_close(fd, c.handle);
	close_card(fd);
}

/* -------------------------------------------------------------- BO_INFO */

TEST(bo_info_bad_input)
{
	int fd = open_card(), fd2 = open_card();
	struct drm_spyre_bo_info i;
	struct bo bo, other[3];

	ASSERT_TRUE(fd >= 0 && fd2 >= 0);
	setup_memory();
	ASSERT_EQ(bo_new_noted(fd, PG, 0, &bo), 0);
	for (int k = 0; k < 3; k++)
		ASSERT_EQ(bo_new_noted(fd2, PG, 0, &other[k]), 0);
	uint32_t closed = closed_handle(fd);
	const uint32_t bad_handles[] = { 0, 0x7fffffff, 0xffffffff, 0x10000, closed,
					 other[2].handle };
	const char *why[] = { "0", "0x7fffffff", "~0", "0x10000", "closed", "another file's" };
	for (unsigned k = 0; k < 6; k++) {
		memset(&i, 0, sizeof(i));
		i.handle = bad_handles[k];
		CASE(-ENOENT, xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &i), "BO_INFO handle %s (%u)",
		     why[k], bad_handles[k]);
	}
	const uint64_t v[] = { 1, BIT63, ~0ull };
	for (unsigned k = 0; k < 3; k++) {
		memset(&i, 0, sizeof(i));
		i.handle = bo.handle;
		i.flags = k == 0 ? 1 : k == 1 ? 0x80000000u : ~0u;
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &i), "BO_INFO flags 0x%x", i.flags);
		memset(&i, 0, sizeof(i));
		i.handle = bo.handle;
		i.size = v[k];
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &i), "BO_INFO size 0x%llx",
		     (unsigned long long)v[k]);
		memset(&i, 0, sizeof(i));
		i.handle = bo.handle;
		i.device_addr = v[k];
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &i), "BO_INFO device_addr 0x%llx",
		     (unsigned long long)v[k]);
		memset(&i, 0, sizeof(i));
		i.handle = bo.handle;
		i.mmap_offset = v[k];
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &i), "BO_INFO mmap_offset 0x%llx",
		     (unsigned long long)v[k]);
	}
	/* Output fields set and a bad handle: EINVAL or ENOENT, both documented. */
	const uint64_t bad_arg[] = { 0, KERNEL_PTR, unmapped, (uintptr_t)straddle(sizeof(i)) };
	for (unsigned k = 0; k < 4; k++)
		CASE(-EFAULT, xioctl_at(fd, DRM_IOCTL_SPYRE_BO_INFO, bad_arg[k]),
		     "BO_INFO argument at 0x%llx", (unsigned long long)bad_arg[k]);
	{	/* A valid request the kernel cannot write back. */
		uint8_t *rw = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		memset(rw, 0, PG);
		((struct drm_spyre_bo_info *)rw)->handle = bo.handle;
		mprotect(rw, PG, PROT_READ);
		CASE(-EFAULT, xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, rw),
		     "BO_INFO valid request in read-only memory");
		munmap(rw, PG);
	}
	/* Still fine afterwards. */
	memset(&i, 0, sizeof(i));
	i.handle = bo.handle;
	CASE(0, xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &i), "BO_INFO valid");
	CASE(1, i.device_addr == bo.va && i.size == PG, "BO_INFO valid: address and size");
	close_card(fd);
	close_card(fd2);
}

/* -------------------------------------------------------------- BO_WAIT */

/* A job that blocks on the card until *flag (in @flag's buffer) becomes 1. */
static int start_blocked_job(int fd, struct bo *flag, struct bo *cmd)
{
	uint32_t bos[] = { flag->handle, cmd->handle };

	*(volatile uint64_t *)flag->map = 0;
	/* The card gives up after 5 s, so a failed test cannot hang the queue. */
	cmd_put(cmd->map, 0, SPYRE_OP_WAIT, flag->va, 1, 5000000000ull);
	return submit(fd, 2, cmd->va, 1, bos, 2, 0);
}

TEST(bo_wait_bad_input)
{
	int fd = open_card(), fd2 = open_card();
	struct drm_spyre_bo_wait w;
	struct bo bo, flag, cmd, other[3];
	uint32_t st = 99;

	ASSERT_TRUE(fd >= 0 && fd2 >= 0);
	setup_memory();
	ASSERT_EQ(bo_new_noted(fd, PG, 0, &bo), 0);
	ASSERT_EQ(bo_new_noted(fd, PG, 0, &flag), 0);
	ASSERT_EQ(bo_new_noted(fd, PG, 0, &cmd), 0);
	for (int k = 0; k < 3; k++)
		ASSERT_EQ(bo_new_noted(fd2, PG, 0, &other[k]), 0);
	int64_t later = now_ns() + 10 * 1000000000ll;
#define W_RESET()									\
	do {										\
		memset(&w, 0, sizeof(w));						\
		w.handle = bo.handle;							\
		w.timeout_ns = later;							\
	} while (0)
	uint32_t closed = closed_handle(fd);
	const uint32_t bad_handles[] = { 0, 0x7fffffff, 0xffffffff, closed, 4 + other[2].handle };
	const char *why[] = { "0", "0x7fffffff", "~0", "closed", "another file's" };
	/* other[2] is handle 3 in fd2; make fd2 hold a handle fd does not. */
	struct bo extra[3];
	for (int k = 0; k < 3; k++)
		bo_new_noted(fd2, PG, 0, &extra[k]);
	for (unsigned k = 0; k < 5; k++) {
		W_RESET();
		w.handle = bad_handles[k];
		if (k == 4)
			w.handle = extra[2].handle;
		CASE(-ENOENT, xioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w), "BO_WAIT handle %s (%u)",
		     why[k], w.handle);
	}
	for (int b = 0; b < 32; b++) {
		W_RESET();
		w.flags = 1u << b;
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w), "BO_WAIT flags bit %d", b);
	}
	const uint32_t v32[] = { 1, 0x80000000u, ~0u };
	for (unsigned k = 0; k < 3; k++) {
		W_RESET();
		w.pad = v32[k];
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w), "BO_WAIT pad 0x%x", v32[k]);
	}
	const uint32_t stv[] = { 1, 2, 3, 4, 5, ~0u };
	for (unsigned k = 0; k < 6; k++) {
		W_RESET();
		w.job_status = stv[k];
		CASE(-EINVAL, xioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w), "BO_WAIT job_status %u on entry",
		     stv[k]);
	}
	const uint64_t bad_arg[] = { 0, KERNEL_PTR, unmapped, (uintptr_t)straddle(sizeof(w)) };
	for (unsigned k = 0; k < 4; k++)
		CASE(-EFAULT, xioctl_at(fd, DRM_IOCTL_SPYRE_BO_WAIT, bad_arg[k]),
		     "BO_WAIT argument at 0x%llx", (unsigned long long)bad_arg[k]);

	/* An idle buffer: any deadline, even long past, is met at once. */
	const int64_t past[] = { 0, 1, -1, INT64_MIN, INT64_MAX };
	for (unsigned k = 0; k < 5; k++) {
		W_RESET();
		w.timeout_ns = past[k];
		CASE(0, xioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w), "BO_WAIT idle, deadline %lld",
		     (long long)past[k]);
	}
	/* A busy buffer and a deadline that passes first: ETIME or ETIMEDOUT. */
	ASSERT_EQ(start_blocked_job(fd, &flag, &cmd), 0);
	const int64_t soon[] = { 0, -1, INT64_MIN, 1 };
	for (unsigned k = 0; k < 4; k++) {
		W_RESET();
		w.handle = flag.handle;
		w.timeout_ns = k == 3 ? now_ns() + 20000000 : soon[k];
		CASE2(-ETIME, -ETIMEDOUT, xioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w),
		      "BO_WAIT busy, deadline %s", k == 3 ? "now+20ms" : "in the past");
	}
	/* Let the job finish: it succeeds. */
	*(volatile uint64_t *)flag.map = 1;
	CASE(0, bo_wait(fd, flag.handle, &st), "BO_WAIT after release");
	CASE(DRM_SPYRE_JOB_STATUS_SUCCESS, (int)st, "released WAIT job status");
	close_card(fd);
	close_card(fd2);
}

/* --------------------------------------------------------------- SUBMIT */

TEST(submit_bad_input)
{
	int fd = open_card(), fd2 = open_card();
	struct drm_spyre_submit s;
	struct bo cmd, data, unlisted, other[4], big;
	uint32_t so, so_tl, h[2];

	ASSERT_TRUE(fd >= 0 && fd2 >= 0);
	setup_memory();
	ASSERT_EQ(bo_new_noted(fd, PG, 0, &cmd), 0);
	ASSERT_EQ(bo_new_noted(fd, PG, 0, &data), 0);
	ASSERT_EQ(bo_new_noted(fd, PG, 0, &unlisted), 0);
	for (int k = 0; k < 4; k++)	/* fd2's buffers: handles and addresses fd lacks */
		ASSERT_EQ(bo_new_noted(fd2, 2 * MIB, 0, &other[k]), 0);
	memset(cmd.map, 0, PG);		/* NOPs */
	so = syncobj_new(fd, 0);
	so_tl = syncobj_new(fd, 0);
	ASSERT_TRUE(so && so_tl);
	h[0] = cmd.handle;
	h[1] = data.handle;
#define S_RESET()									\
	do {										\
		memset(&s, 0, sizeof(s));						\
		s.commands = cmd.va;							\
		s.command_count = 1;							\
		s.bo_handles = (uintptr_t)h;						\
		s.bo_count = 2;								\
	} while (0)
#define S_RUN() xioctl(fd, DRM_IOCTL_SPYRE_SUBMIT, &s)
	for (int b = 0; b < 32; b++) {
		S_RESET();
		s.flags = 1u << b;
		CASE(-EINVAL, S_RUN(), "SUBMIT flags bit %d", b);
	}
	const uint64_t r64[] = { 1, 1ull << 32, BIT63, ~0ull };
	for (unsigned k = 0; k < 4; k++) {
		S_RESET();
		s.reserved = r64[k];
		CASE(-EINVAL, S_RUN(), "SUBMIT reserved 0x%llx", (unsigned long long)r64[k]);
	}
	const uint32_t queues[] = { 4, 5, 0x80000000u, ~0u };
	for (unsigned k = 0; k < 4; k++) {
		S_RESET();
		s.queue = queues[k];
		CASE(-EINVAL, S_RUN(), "SUBMIT queue %u", queues[k]);
	}
	const uint32_t counts[] = { 0, DRM_SPYRE_MAX_SUBMIT_COMMANDS + 1, 0x80000000u, ~0u,
				    PG / SPYRE_CMD_SIZE + 1 };
	for (unsigned k = 0; k < 5; k++) {
		S_RESET();
		s.command_count = counts[k];
		CASE(-EINVAL, S_RUN(), "SUBMIT command_count %u (buffer of 64)", counts[k]);
	}
	S_RESET();
	s.commands = cmd.va + PG - SPYRE_CMD_SIZE;
	s.command_count = 2;
	CASE(-EINVAL, S_RUN(), "SUBMIT last command slot, count 2 (runs past the buffer)");
	const struct { uint64_t a; const char *why; } cmds[] = {
		{ cmd.va + 1, "misaligned +1" }, { cmd.va + 8, "misaligned +8" },
		{ cmd.va + 32, "misaligned +32" }, { cmd.va + 63, "misaligned +63" },
		{ 0, "0" }, { 64, "64" }, { VA_START - 64, "4 GiB - 64" },
		{ VA_END, "128 TiB" }, { VA_END - 64, "128 TiB - 64" }, { BIT63, "1<<63" },
		{ ~0ull & ~63ull, "~0 & ~63" }, { KERNEL_PTR, "kernel address" },
		{ cmd.va + PG, "guard page after the buffer" },
		{ unlisted.va, "own buffer not listed" },
		{ other[3].va + MIB, "another file's buffer address" },
		{ cmd.va - PG, "page before the buffer" },
	};
	for (unsigned k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
		S_RESET();
		s.commands = cmds[k].a;
		CASE(-EINVAL, S_RUN(), "SUBMIT commands %s (0x%llx)", cmds[k].why,
		     (unsigned long long)cmds[k].a);
	}
	S_RESET();
	s.commands = VA_END - 64;
	s.command_count = DRM_SPYRE_MAX_SUBMIT_COMMANDS;
	CASE(-EINVAL, S_RUN(), "SUBMIT commands 128 TiB - 64, 65536 commands (end overflows)");
	const uint32_t bocounts[] = { 0, DRM_SPYRE_MAX_SUBMIT_BOS + 1, 0x80000000u, ~0u };
	for (unsigned k = 0; k < 4; k++) {
		S_RESET();
		s.bo_count = bocounts[k];
		CASE(-EINVAL, S_RUN(), "SUBMIT bo_count %u", bocounts[k]);
	}
	/* The command buffer only in the second listed buffer: fine; in neither: not. */
	S_RESET();
	s.bo_count = 1;
	s.bo_handles = (uintptr_t)&h[1];
	CASE(-EINVAL, S_RUN(), "SUBMIT commands in a buffer not in bo_handles");

	uint32_t *hs = (uint32_t *)straddle(8);
	const struct { uint64_t p; const char *why; } bad_ptrs[] = {
		{ 0, "NULL" }, { 8, "8" }, { KERNEL_PTR, "kernel" }, { KERNEL_TEXT, "kernel text" },
		{ unmapped, "unmapped" }, { BIT63, "1<<63" }, { (uintptr_t)hs, "straddling" },
	};
	for (unsigned k = 0; k < 7; k++) {
		S_RESET();
		hs[0] = cmd.handle;
		s.bo_handles = bad_ptrs[k].p;
		CASE(-EFAULT, S_RUN(), "SUBMIT bo_handles %s", bad_ptrs[k].why);
	}
	uint32_t closed = closed_handle(fd);
	const struct { uint32_t h; const char *why; } bad_h[] = {
		{ 0, "0" }, { 0x7fffffff, "0x7fffffff" }, { ~0u, "~0" }, { closed, "closed" },
		{ other[3].handle + 8, "unused" },
	};
	for (unsigned k = 0; k < 5; k++) {
		uint32_t hh[2] = { cmd.handle, bad_h[k].h };

		S_RESET();
		s.bo_handles = (uintptr_t)hh;
		CASE(-ENOENT, S_RUN(), "SUBMIT second bo handle %s", bad_h[k].why);
		hh[0] = bad_h[k].h;
		hh[1] = cmd.handle;
		CASE(-ENOENT, S_RUN(), "SUBMIT first bo handle %s", bad_h[k].why);
	}
	{	/* fd2 has handles 1..4; fd has 1..3 (4 was closed above and may be reused) */
		struct bo more;
		uint32_t hh[2];

		for (int k = 0; k < 4; k++)
			bo_new_noted(fd2, PG, 0, &more);
		hh[0] = cmd.handle;
		hh[1] = more.handle;
		S_RESET();
		s.bo_handles = (uintptr_t)hh;
		CASE(-ENOENT, S_RUN(), "SUBMIT another file's bo handle %u", more.handle);
	}

	/* In-syncobjs. */
	const uint32_t sc[] = { DRM_SPYRE_MAX_SUBMIT_SYNCOBJS + 1, 0x80000000u, ~0u };
	for (unsigned k = 0; k < 3; k++) {
		uint32_t ins[1] = { so };

		S_RESET();
		s.in_syncobjs = (uintptr_t)ins;
		s.in_syncobj_count = sc[k];
		CASE(-EINVAL, S_RUN(), "SUBMIT in_syncobj_count %u", sc[k]);
	}
	/* A signalled syncobj to wait for, so only the bad entry is wrong. */
	ASSERT_EQ(submit(fd, 0, cmd.va, 1, h, 2, so), 0);
	ASSERT_EQ(syncobj_wait(fd, so), 0);
	for (unsigned k = 0; k < 7; k++) {
		S_RESET();
		hs[0] = so;
		s.in_syncobjs = bad_ptrs[k].p;
		s.in_syncobj_count = 2;
		CASE(-EFAULT, S_RUN(), "SUBMIT in_syncobjs %s", bad_ptrs[k].why);
	}
	uint32_t dead_so = syncobj_new(fd, 0);
	syncobj_destroy(fd, dead_so);
	uint32_t so2[8];
	for (int k = 0; k < 8; k++)
		so2[k] = syncobj_new(fd2, 0);
	const struct { uint32_t h; const char *why; } bad_so[] = {
		{ 0, "0" }, { 0x7fffffff, "0x7fffffff" }, { ~0u, "~0" }, { dead_so, "destroyed" },
		{ so2[7], "another file's" },
	};
	for (unsigned k = 0; k < 5; k++) {
		uint32_t ins[2] = { so, bad_so[k].h };

		S_RESET();
		s.in_syncobjs = (uintptr_t)ins;
		s.in_syncobj_count = 2;
		CASE(-ENOENT, S_RUN(), "SUBMIT in_syncobj %s (%u)", bad_so[k].why, bad_so[k].h);
		S_RESET();
		s.out_syncobj = bad_so[k].h;
		if (bad_so[k].h)	/* out_syncobj 0 means none */
			CASE(-ENOENT, S_RUN(), "SUBMIT out_syncobj %s (%u)", bad_so[k].why,
			     bad_so[k].h);
		S_RESET();
		s.out_syncobj = bad_so[k].h;
		s.out_syncobj_point = 7;
		if (bad_so[k].h)
			CASE(-ENOENT, S_RUN(), "SUBMIT out_syncobj %s with point 7", bad_so[k].why);
	}
	const uint64_t points[] = { 1, 1ull << 32, ~0ull };
	for (unsigned k = 0; k < 3; k++) {
		S_RESET();
		s.out_syncobj_point = points[k];
		CASE(-EINVAL, S_RUN(), "SUBMIT out_syncobj_point 0x%llx without out_syncobj",
		     (unsigned long long)points[k]);
	}
	/* The argument itself. */
	const uint64_t bad_arg[] = { 0, KERNEL_PTR, unmapped, (uintptr_t)straddle(sizeof(s)) };
	for (unsigned k = 0; k < 4; k++)
		CASE(-EFAULT, xioctl_at(fd, DRM_IOCTL_SPYRE_SUBMIT, bad_arg[k]),
		     "SUBMIT argument at 0x%llx", (unsigned long long)bad_arg[k]);

	/* Limits that are valid: 65536 commands, 4096 buffers, 256 syncobjs. */
	ASSERT_EQ(bo_new_noted(fd, (uint64_t)DRM_SPYRE_MAX_SUBMIT_COMMANDS * SPYRE_CMD_SIZE, 0, &big), 0);
	memset(big.map, 0, big.size);
	S_RESET();
	s.commands = big.va;
	s.command_count = DRM_SPYRE_MAX_SUBMIT_COMMANDS;
	s.bo_handles = (uintptr_t)&big.handle;
	s.bo_count = 1;
	s.out_syncobj = so;
	CASE(0, S_RUN(), "SUBMIT 65536 NOPs");
	CASE(0, syncobj_wait(fd, so), "wait for 65536 NOPs");
	uint32_t *many = calloc(DRM_SPYRE_MAX_SUBMIT_BOS, sizeof(*many));
	int made = 0;
	many[made++] = cmd.handle;
	while (made < DRM_SPYRE_MAX_SUBMIT_BOS) {
		struct drm_spyre_bo_create c = { .size = PG };

		if (xioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &c))
			break;
		many[made++] = c.handle;
	}
	ASSERT_EQ(made, DRM_SPYRE_MAX_SUBMIT_BOS);
	S_RESET();
	s.bo_handles = (uintptr_t)many;
	s.bo_count = DRM_SPYRE_MAX_SUBMIT_BOS;
	s.out_syncobj = so;
	CASE(0, S_RUN(), "SUBMIT with 4096 buffers");
	CASE(0, syncobj_wait(fd, so), "wait for the 4096-buffer job");
	for (int k = 1; k < made; k++)
		gem_close(fd, many[k]);
	free(many);
	uint32_t ins[DRM_SPYRE_MAX_SUBMIT_SYNCOBJS];
	for (int k = 0; k < DRM_SPYRE_MAX_SUBMIT_SYNCOBJS; k++)
		ins[k] = so;
	S_RESET();
	s.in_syncobjs = (uintptr_t)ins;
	s.in_syncobj_count = DRM_SPYRE_MAX_SUBMIT_SYNCOBJS;
	s.out_syncobj = so_tl;
	s.out_syncobj_point = 5;
	CASE(0, S_RUN(), "SUBMIT waiting on 256 syncobjs, timeline point 5");
	{
		struct drm_syncobj_timeline_wait tw = { 0 };
		uint64_t pt = 5;

		tw.handles = (uintptr_t)&so_tl;
		tw.points = (uintptr_t)&pt;
		tw.count_handles = 1;
		tw.timeout_nsec = now_ns() + 30 * 1000000000ll;
		CASE(0, xioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &tw), "timeline wait point 5");
	}
	/* bo_handles not aligned to 4: just memory, read fine. */
	{
		uint8_t raw[16];
		uint32_t one = cmd.handle;

		memcpy(raw + 1, &one, 4);
		S_RESET();
		s.bo_handles = (uintptr_t)(raw + 1);
		s.bo_count = 1;
		CASE(0, S_RUN(), "SUBMIT bo_handles at an odd address");
	}
	/* The same buffer listed twice: EINVAL (docs/uapi.md, SUBMIT errors). */
	{
		uint32_t dup[3] = { cmd.handle, data.handle, cmd.handle };

		S_RESET();
		s.bo_handles = (uintptr_t)dup;
		s.bo_count = 3;
		CASE(-EINVAL, S_RUN(), "SUBMIT with a handle listed twice");
	}
	/* A job completes: still not banned; the struct in read-only memory. */
	{
		uint8_t *rw = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct drm_spyre_submit *rs = (void *)rw;

		memset(rs, 0, sizeof(*rs));
		rs->commands = cmd.va;
		rs->command_count = 1;
		rs->bo_handles = (uintptr_t)h;
		rs->bo_count = 1;
		mprotect(rw, PG, PROT_READ);
		CASE(-EFAULT, xioctl(fd, DRM_IOCTL_SPYRE_SUBMIT, rs),
		     "SUBMIT valid request in read-only memory (job_id cannot be written)");
		munmap(rw, PG);
	}
	CASE(0, bo_wait(fd, cmd.handle, NULL), "idle after the submits");
	CASE(0, submit(fd, 3, cmd.va, 1, h, 2, 0), "SUBMIT still accepted on queue 3");
	close_card(fd);
	close_card(fd2);
}

/* Jobs that fail on the card: the status is reported and the file is banned. */
TEST(failing_jobs_ban_the_file)
{
	const struct { const char *why; uint32_t status; } kinds[] = {
		{ "copy from the guard page", DRM_SPYRE_JOB_STATUS_MMU_FAULT },
		{ "write into a READ_ONLY buffer", DRM_SPYRE_JOB_STATUS_MMU_FAULT },
		{ "unknown opcode 0x7f", DRM_SPYRE_JOB_STATUS_FAILED },
		{ "CALL inside a job", DRM_SPYRE_JOB_STATUS_FAILED },
		{ "copy to device address 0", DRM_SPYRE_JOB_STATUS_MMU_FAULT },
		{ "non-zero command flags", DRM_SPYRE_JOB_STATUS_FAILED },
		{ "fence to an address outside the space", DRM_SPYRE_JOB_STATUS_MMU_FAULT },
		{ "second command faults", DRM_SPYRE_JOB_STATUS_MMU_FAULT },
	};

	for (unsigned k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		int fd = open_card();
		struct bo buf, ro, cmd;
		uint32_t st = 99, n = 1;

		ASSERT_TRUE(fd >= 0);
		ASSERT_EQ(bo_new_noted(fd, PG, 0, &buf), 0);
		ASSERT_EQ(bo_new_noted(fd, PG, DRM_SPYRE_BO_READ_ONLY, &ro), 0);
		ASSERT_EQ(bo_new_noted(fd, PG, 0, &cmd), 0);
		switch (k) {
		case 0: cmd_put(cmd.map, 0, SPYRE_OP_DMA_COPY, buf.va + PG, buf.va, 64); break;
		case 1: cmd_put(cmd.map, 0, SPYRE_OP_DMA_COPY, buf.va, ro.va, 64); break;
		case 2: cmd_put(cmd.map, 0, 0x7f, 0, 0, 0); break;
		case 3: cmd_put(cmd.map, 0, SPYRE_OP_CALL, 1, cmd.va + 64, 1); break;
		case 4: cmd_put(cmd.map, 0, SPYRE_OP_DMA_COPY, buf.va, 0, 64); break;
		case 5:
			cmd_put(cmd.map, 0, SPYRE_OP_NOP, 0, 0, 0);
			((uint8_t *)cmd.map)[1] = 1;
			break;
		case 6: cmd_put(cmd.map, 0, SPYRE_OP_FENCE, VA_END - 64, 1, 0); break;
		case 7:
			cmd_put(cmd.map, 0, SPYRE_OP_NOP, 0, 0, 0);
			cmd_put(cmd.map, 1, SPYRE_OP_DMA_FILL, buf.va + PG - 8, 64, 0);
			n = 2;
			break;
		}
		uint32_t bos[] = { buf.handle, ro.handle, cmd.handle };
		CASE(0, submit(fd, k % 4, cmd.va, n, bos, 3, 0), "SUBMIT job that fails: %s",
		     kinds[k].why);
		CASE(0, bo_wait(fd, buf.handle, &st), "BO_WAIT job that fails: %s", kinds[k].why);
		CASE((int)kinds[k].status, (int)st, "job status for: %s", kinds[k].why);
		CASE(-ECANCELED, submit(fd, 0, cmd.va + 128, 1, bos, 3, 0),
		     "SUBMIT after a failed job (%s)", kinds[k].why);
		/* Banned, not broken: other ioctls still work on the file. */
		struct drm_spyre_bo_create c = { .size = PG };
		CASE(0, xioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &c), "BO_CREATE on a banned file");
		/* Read-only buffer kept its content. */
		CASE(0, ((uint8_t *)ro.map)[0], "READ_ONLY buffer unchanged (%s)", kinds[k].why);
		close_card(fd);
	}
}

/* ------------------------------------------- standard DRM ioctls with them */

TEST(drm_core_ioctls_bad_input)
{
	int fd = open_card(), fd2 = open_card();
	struct bo bo, other[4];
	struct drm_gem_close gc;

	ASSERT_TRUE(fd >= 0 && fd2 >= 0);
	ASSERT_EQ(bo_new_noted(fd, PG, 0, &bo), 0);
	for (int k = 0; k < 4; k++)
		ASSERT_EQ(bo_new_noted(fd2, PG, 0, &other[k]), 0);
	uint32_t closed = closed_handle(fd);
	const struct { uint32_t h; const char *why; } bad_h[] = {
		{ 0, "0" }, { 0x7fffffff, "0x7fffffff" }, { ~0u, "~0" }, { closed, "closed" },
		{ other[3].handle, "another file's" },
	};
	/* DRM core: a handle that is not in the file is EINVAL for GEM_CLOSE. */
	for (unsigned k = 0; k < 5; k++)
		CASE(-EINVAL, gem_close(fd, bad_h[k].h), "GEM_CLOSE handle %s", bad_h[k].why);
	CASE(0, gem_close(fd2, other[3].handle), "GEM_CLOSE in the owner's file");
	memset(&gc, 0, sizeof(gc));
	CASE(-EFAULT, xioctl_at(fd, DRM_IOCTL_GEM_CLOSE, 0), "GEM_CLOSE argument NULL");
	/* The buffer is still fine after all that. */
	struct drm_spyre_bo_info i = { .handle = bo.handle };
	CASE(0, xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &i), "BO_INFO after bad GEM_CLOSEs");
	CASE(0, gem_close(fd, bo.handle), "GEM_CLOSE valid");
	CASE(-EINVAL, gem_close(fd, bo.handle), "GEM_CLOSE twice");
	i.handle = bo.handle;
	i.flags = i.size = i.device_addr = i.mmap_offset = 0;
	CASE(-ENOENT, xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &i), "BO_INFO after GEM_CLOSE");

	uint32_t so = syncobj_new(fd, 0);
	uint32_t so2 = 0;
	for (int k = 0; k < 4; k++)
		so2 = syncobj_new(fd2, 0);
	CASE(-EINVAL, syncobj_destroy(fd, 0), "SYNCOBJ_DESTROY 0");
	CASE(-EINVAL, syncobj_destroy(fd, 0x7fffffff), "SYNCOBJ_DESTROY 0x7fffffff");
	CASE(-EINVAL, syncobj_destroy(fd, so2), "SYNCOBJ_DESTROY another file's");
	{
		struct drm_syncobj_wait w = { 0 };
		uint32_t hh[2] = { so, 0x7fffffff };

		w.handles = (uintptr_t)hh;
		w.count_handles = 2;
		CASE(-ENOENT, xioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w), "SYNCOBJ_WAIT bad handle");
	}

	/* Ioctl numbers the driver does not have. */
	const unsigned nrs[] = { 0x05, 0x06, 0x10, 0x1f, 0x3f, 0x5f };
	for (unsigned k = 0; k < 6; k++) {
		uint8_t buf[64] = { 0 };

		CASE(-EINVAL, xioctl(fd, DRM_IOWR(DRM_COMMAND_BASE + nrs[k], uint8_t[64]), buf),
		     "unknown driver ioctl 0x%x", nrs[k]);
	}
	/* A spyre ioctl with a short structure: the rest is zero, as if zeroed. */
	{
		uint64_t size_only = PG;

		CASE(0, xioctl(fd, DRM_IOWR(DRM_COMMAND_BASE + DRM_SPYRE_BO_CREATE, uint64_t),
			       &size_only), "BO_CREATE with an 8-byte structure");
		struct drm_spyre_query q0 = { 0 };
		CASE(0, xioctl(fd, DRM_IO(DRM_COMMAND_BASE + DRM_SPYRE_QUERY), &q0),
		     "QUERY without a structure (all zero: size query)");
		CASE(-EINVAL, xioctl(fd, DRM_IO(DRM_COMMAND_BASE + DRM_SPYRE_SUBMIT), NULL),
		     "SUBMIT without a structure (all zero)");
		CASE(-ENOENT, xioctl(fd, DRM_IO(DRM_COMMAND_BASE + DRM_SPYRE_BO_WAIT), NULL),
		     "BO_WAIT without a structure (handle 0)");
	}
	close_card(fd);
	close_card(fd2);
}

/* The 16th open file: no hardware context left. */
/* More open files than the card's 15 client contexts: all open and work. */
TEST(many_files_beyond_hardware_contexts)
{
	int fds[40], n = 0, err = 0;

	for (; n < 40; n++) {
		fds[n] = open_card();
		if (fds[n] < 0) {
			err = -errno;
			break;
		}
	}
	CASE(40, n, "open files (error %d)", err);
	while (n > 0)
		close_card(fds[--n]);
}

/* --------------------------------------------------------- two processes */

struct secret_msg {
	uint32_t handle;
	uint32_t so;
	uint64_t va;
};

#define SECRET 0x5e

/* Process B: reach A's buffer by handle and by address. */
static int *b_checks;

static int process_b(struct secret_msg m)
{
	int fd = open_card(), fails = 0;
	struct bo mine, cmd;
	uint32_t st = 99;

#define B_CHECK(want, got, what)							\
	do {										\
		int g_ = (got);								\
		(*b_checks)++;								\
		if (g_ != (want)) {							\
			printf("  # process B: %s: expected %s, got %s\n", what,	\
			       errname(want), errname(g_));				\
			fails++;						\
		}									\
	} while (0)
	if (fd < 0)
		return 100;
	/* Before B has any buffer of its own, A's handle means nothing here. */
	struct drm_spyre_bo_info i = { .handle = m.handle };
	B_CHECK(-ENOENT, xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &i), "BO_INFO A's handle");
	struct drm_spyre_bo_wait w = { .handle = m.handle, .timeout_ns = now_ns() + 1000000000ll };
	B_CHECK(-ENOENT, xioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w), "BO_WAIT A's handle");
	B_CHECK(-EINVAL, gem_close(fd, m.handle), "GEM_CLOSE A's handle");
	struct drm_spyre_submit s = { .commands = m.va, .command_count = 1,
				      .bo_handles = (uintptr_t)&m.handle, .bo_count = 1 };
	B_CHECK(-ENOENT, xioctl(fd, DRM_IOCTL_SPYRE_SUBMIT, &s), "SUBMIT naming A's handle");

	/* Device addresses: each attempt faults and bans, so a new file each time. */
	for (int attempt = 0; attempt < 4; attempt++) {
		if (attempt) {
			close_card(fd);
			fd = open_card();
			if (fd < 0)
				return 101;
		}
		if (bo_new_noted(fd, PG, 0, &mine) || bo_new_noted(fd, PG, 0, &cmd))
			return 102;
		if ((m.va >= mine.va && m.va < mine.va + 2 * PG) ||
		    (m.va >= cmd.va && m.va < cmd.va + 2 * PG)) {
			printf("  # process B: its buffer sits at A's address; test invalid\n");
			return 103;
		}
		uint32_t bos[] = { mine.handle, cmd.handle };
		if (attempt == 0) {
			cmd_put(cmd.map, 0, SPYRE_OP_NOP, 0, 0, 0);
			struct drm_spyre_submit so = { .commands = cmd.va, .command_count = 1,
						       .bo_handles = (uintptr_t)bos, .bo_count = 2,
						       .out_syncobj = m.so };
			B_CHECK(-ENOENT, xioctl(fd, DRM_IOCTL_SPYRE_SUBMIT, &so),
				"SUBMIT with A's syncobj as out_syncobj");
			so.out_syncobj = 0;
			so.in_syncobjs = (uintptr_t)&m.so;
			so.in_syncobj_count = 1;
			B_CHECK(-ENOENT, xioctl(fd, DRM_IOCTL_SPYRE_SUBMIT, &so),
				"SUBMIT with A's syncobj as in_syncobj");
		}
		memset(mine.map, 0, PG);
		switch (attempt) {
		case 0:	/* read A's buffer into B's */
			cmd_put(cmd.map, 0, SPYRE_OP_DMA_COPY, m.va, mine.va, PG);
			break;
		case 1:	/* overwrite A's buffer */
			memset(mine.map, 0xbb, PG);
			cmd_put(cmd.map, 0, SPYRE_OP_DMA_COPY, mine.va, m.va, PG);
			break;
		case 2:
			cmd_put(cmd.map, 0, SPYRE_OP_DMA_FILL, m.va, PG, 0xbbbbbbbbbbbbbbbbull);
			break;
		case 3:
			cmd_put(cmd.map, 0, SPYRE_OP_FENCE, m.va, 0xbbbbbbbbbbbbbbbbull, 0);
			break;
		}
		B_CHECK(0, submit(fd, attempt, cmd.va, 1, bos, 2, 0), "SUBMIT naming A's address");
		B_CHECK(0, bo_wait(fd, mine.handle, &st), "BO_WAIT");
		(*b_checks)++;
		if (st != DRM_SPYRE_JOB_STATUS_MMU_FAULT) {
			printf("  # process B: attempt %d: job status %u, expected MMU_FAULT\n",
			       attempt, st);
			fails++;
		}
		/* B's file learns exactly where and how it faulted. */
		struct drm_spyre_faults fl;
		const uint32_t access = attempt == 0 ? DRM_SPYRE_FAULT_ACCESS_READ :
						       DRM_SPYRE_FAULT_ACCESS_WRITE;

		B_CHECK(0, query_faults(fd, &fl), "QUERY FAULTS after the fault");
		B_CHECK(1, (int)fl.count, "QUERY FAULTS count");
		B_CHECK(1, (int)fl.num_faults, "QUERY FAULTS num_faults");
		(*b_checks)++;
		if (fl.faults[0].device_addr != m.va || fl.faults[0].access != access ||
		    fl.faults[0].reason != DRM_SPYRE_FAULT_REASON_NOT_PRESENT ||
		    fl.faults[0].queue != (uint32_t)attempt || !fl.faults[0].job_id ||
		    !fl.faults[0].time_ns) {
			printf("  # process B: attempt %d: fault record addr 0x%llx access %u "
			       "reason %u queue %u job %llu; expected 0x%llx, %u, not-present, "
			       "queue %d\n", attempt,
			       (unsigned long long)fl.faults[0].device_addr, fl.faults[0].access,
			       fl.faults[0].reason, fl.faults[0].queue,
			       (unsigned long long)fl.faults[0].job_id,
			       (unsigned long long)m.va, access, attempt);
			fails++;
		}
		if (attempt == 0) {
			(*b_checks)++;
			for (int k = 0; k < PG; k++) {
				if (((uint8_t *)mine.map)[k] != 0) {
					printf("  # process B: A's data reached B's buffer: byte %d"
					       " is 0x%02x\n", k, ((uint8_t *)mine.map)[k]);
					fails++;
					break;
				}
			}
		}
		B_CHECK(-ECANCELED, submit(fd, 0, cmd.va, 1, bos, 2, 0), "SUBMIT after the fault");
	}
	close_card(fd);
	return fails;
}

TEST(two_processes_cannot_reach_each_other)
{
	int fd = open_card(), status = 0;
	struct bo pad, secret, cmd;
	int pipefd[2];

	ASSERT_TRUE(fd >= 0);
	b_checks = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(b_checks != MAP_FAILED);
	*b_checks = 0;
	/* Put A's secret above where B's few small buffers will go. */
	ASSERT_EQ(bo_new_noted(fd, 2 * MIB, 0, &pad), 0);
	ASSERT_EQ(bo_new_noted(fd, 4 * PG, 0, &pad), 0);
	ASSERT_EQ(bo_new_noted(fd, PG, 0, &secret), 0);
	ASSERT_EQ(bo_new_noted(fd, PG, 0, &cmd), 0);
	memset(secret.map, SECRET, PG);
	uint32_t so = syncobj_new(fd, 0);
	ASSERT_EQ(pipe(pipefd), 0);
	fflush(stdout);
	pid_t pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0) {
		struct secret_msg m;

		close_card(fd);	/* B uses only its own files */
		close(pipefd[1]);
		if (read(pipefd[0], &m, sizeof(m)) != sizeof(m))
			_exit(110);
		int r = process_b(m);
		fflush(stdout);
		_exit(r > 255 ? 255 : r);
	}
	close(pipefd[0]);
	struct secret_msg m = { .handle = secret.handle, .so = so, .va = secret.va };
	ASSERT_EQ(write(pipefd[1], &m, sizeof(m)), (ssize_t)sizeof(m));
	close(pipefd[1]);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	CASE(1, WIFEXITED(status), "process B exited normally");
	CASE(0, WIFEXITED(status) ? WEXITSTATUS(status) : -1, "process B's failed checks");
	cases += *b_checks;
	printf("  # process B ran %d checks\n", *b_checks);
	/* A's buffer was neither read into B's nor overwritten. */
	int intact = 1;
	for (int k = 0; k < PG; k++)
		intact &= ((uint8_t *)secret.map)[k] == SECRET;
	CASE(1, intact, "A's buffer unchanged after B's attempts");
	/* B's four faults are B's: A's file, which never faulted, sees none. */
	struct drm_spyre_faults fl;
	CASE(0, query_faults(fd, &fl), "A: QUERY FAULTS");
	CASE(0, (int)fl.count, "A: fault count after B's faults");
	CASE(0, (int)(fl.num_faults | fl.faults[0].device_addr), "A: no fault record");
	/* And A's file still works with it. */
	ASSERT_EQ(bo_new_noted(fd, PG, 0, &pad), 0);
	cmd_put(cmd.map, 0, SPYRE_OP_DMA_COPY, secret.va, pad.va, PG);
	uint32_t bos[] = { secret.handle, pad.handle, cmd.handle };
	CASE(0, submit(fd, 1, cmd.va, 1, bos, 3, so), "A: submit after B's attempts");
	CASE(0, syncobj_wait(fd, so), "A: wait");
	CASE(SECRET, ((uint8_t *)pad.map)[PG - 1], "A: copy of its own buffer");
	close_card(fd);
}

/* dma-buf: export, then import into another file (whatever the state of PRIME). */
TEST(prime_export_fails_cleanly_or_shares)
{
	int fd = open_card(), fd2 = open_card();
	struct bo a, dev;
	struct drm_prime_handle p;
	int ret;

	ASSERT_TRUE(fd >= 0 && fd2 >= 0);
	ASSERT_EQ(bo_new_noted(fd, PG, 0, &a), 0);
	ASSERT_EQ(bo_new_noted(fd, PG, DRM_SPYRE_BO_DEVICE, &dev), 0);
	memset(a.map, 0x77, PG);
	memset(&p, 0, sizeof(p));
	p.handle = a.handle;
	p.flags = DRM_CLOEXEC | DRM_RDWR;
	p.fd = -1;
	ret = xioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);
	printf("  # PRIME_HANDLE_TO_FD of a host buffer: %s (fd %d)\n", errname(ret), p.fd);
	if (ret) {
		CASE(-1, p.fd, "PRIME failure leaves no fd");
		CASE(1, ret == -EOPNOTSUPP || ret == -EINVAL || ret == -ENODEV || ret == -ENOSYS ||
			 ret == -ENOTTY, "PRIME fails with a plain errno (%s)", errname(ret));
	} else {
		struct drm_prime_handle imp = { .fd = p.fd };
		struct bo mine, cmd;
		uint32_t so = syncobj_new(fd2, 0);

		CASE(0, xioctl(fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp),
		     "PRIME_FD_TO_HANDLE into another file");
		struct drm_spyre_bo_info i = { .handle = imp.handle };
		CASE(0, xioctl(fd2, DRM_IOCTL_SPYRE_BO_INFO, &i), "BO_INFO of the imported buffer");
		ASSERT_EQ(bo_new_noted(fd2, PG, 0, &mine), 0);
		ASSERT_EQ(bo_new_noted(fd2, PG, 0, &cmd), 0);
		memset(mine.map, 0, PG);
		cmd_put(cmd.map, 0, SPYRE_OP_DMA_COPY, i.device_addr, mine.va, PG);
		uint32_t bos[] = { imp.handle, mine.handle, cmd.handle };
		CASE(0, submit(fd2, 0, cmd.va, 1, bos, 3, so), "SUBMIT reading the imported buffer");
		CASE(0, syncobj_wait(fd2, so), "wait");
		CASE(0x77, ((uint8_t *)mine.map)[PG - 1], "imported buffer's data");
		close(p.fd);
	}
	/* Bad handles and flags are refused whatever the state of PRIME. */
	memset(&p, 0, sizeof(p));
	p.handle = 0x7fffffff;
	p.fd = -1;
	ret = xioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);
	CASE(1, ret < 0, "PRIME_HANDLE_TO_FD bad handle fails (%s)", errname(ret));
	memset(&p, 0, sizeof(p));
	p.handle = dev.handle;
	p.fd = -1;
	ret = xioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);
	printf("  # PRIME_HANDLE_TO_FD of a device buffer: %s\n", errname(ret));
	if (!ret)
		close(p.fd);
	memset(&p, 0, sizeof(p));
	p.fd = 0;	/* stdin: not a dma-buf */
	ret = xioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);
	CASE(1, ret < 0, "PRIME_FD_TO_HANDLE of a non-dma-buf fd fails (%s)", errname(ret));
	close_card(fd);
	close_card(fd2);
	CASE(0, good_copy(0), "good copy after PRIME");
}

/* ------------------------------------------------------------------ end */

TEST(device_still_copies_data_correctly)
{
	for (uint32_t q = 0; q < DRM_SPYRE_NUM_QUEUES; q++)
		CASE(0, good_copy(q), "final good copy on queue %u", q);
}

TEST(case_count)
{
	printf("  # %d bad-input cases, %d failed\n", cases, case_failures);
	EXPECT_TRUE(cases >= 150);
}

TAP_MAIN()
