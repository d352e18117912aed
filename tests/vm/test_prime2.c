// SPDX-License-Identifier: MIT
/*
 * PRIME between two cards (boot with scripts/vm-run.sh --cards 2): a host
 * buffer exported by one card is imported by the other, both cards DMA
 * through it, and each side sees the other's data; a READ_ONLY buffer
 * stays read-only on the other card.  Device-memory buffers are not
 * exportable: -EOPNOTSUPP (docs/uapi.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "spyre_regs.h"
#include "spyre_vm.h"
#include "tap.h"
#include "uapi/drm/spyre_accel.h"

#define SIZE	(1u << 20)
#define HALF	(SIZE / 2)

struct card {
	int fd;
	struct bo cmd, own;		/* commands, and a host buffer of its own */
	uint32_t syncobj;
};

static int card_open(const char *node, struct card *c)
{
	struct drm_syncobj_create sc = { 0 };

	c->fd = open(node, O_RDWR | O_CLOEXEC);
	if (c->fd < 0 || bo_new(c->fd, 4096, 0, &c->cmd) || bo_new(c->fd, SIZE, 0, &c->own) ||
	    xioctl(c->fd, DRM_IOCTL_SYNCOBJ_CREATE, &sc))
		return -1;
	c->syncobj = sc.handle;
	return 0;
}

/* Run the commands already in c->cmd with buffers @bos; the job's status. */
static int card_run(struct card *c, uint32_t n, const uint32_t *bos, uint32_t nbos)
{
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)&c->syncobj, .count_handles = 1,
	};
	struct drm_spyre_bo_wait bw = { .handle = c->cmd.handle };
	struct timespec ts;
	int ret = submit(c->fd, 0, c->cmd.va, n, bos, nbos, c->syncobj);

	if (ret)
		return ret;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	w.timeout_nsec = (ts.tv_sec + 30) * 1000000000ll + ts.tv_nsec;
	bw.timeout_ns = w.timeout_nsec;
	ret = xioctl(c->fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
	if (!ret)
		ret = xioctl(c->fd, DRM_IOCTL_SPYRE_BO_WAIT, &bw);
	return ret ? ret : (int)bw.job_status;
}

/* Export @handle of @from and import it into @to: the handle there. */
static int share(int from, uint32_t handle, int to, uint32_t *out)
{
	struct drm_prime_handle exp = { .handle = handle, .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_prime_handle imp = { 0 };
	int ret = xioctl(from, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp);

	if (ret)
		return ret;
	imp.fd = exp.fd;
	ret = xioctl(to, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp);
	close(exp.fd);
	*out = imp.handle;
	return ret;
}

static uint64_t device_addr(int fd, uint32_t handle)
{
	struct drm_spyre_bo_info i = { .handle = handle };

	return xioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &i) ? 0 : i.device_addr;
}

/* Two different devices, not one opened twice. */
static int distinct_cards(int a, int b)
{
	struct drm_spyre_device_info ia = { 0 }, ib = { 0 };
	struct drm_spyre_query q = { .param = DRM_SPYRE_QUERY_DEVICE_INFO, .size = sizeof(ia) };

	q.data = (uintptr_t)&ia;
	if (xioctl(a, DRM_IOCTL_SPYRE_QUERY, &q))
		return 0;
	q.data = (uintptr_t)&ib;
	q.size = sizeof(ib);
	if (xioctl(b, DRM_IOCTL_SPYRE_QUERY, &q))
		return 0;
	printf("  # cards at bdf %#x and %#x\n", ia.pci_bdf, ib.pci_bdf);
	return ia.pci_bdf != ib.pci_bdf || ia.pci_domain != ib.pci_domain;
}

TEST(host_buffer_shared_between_two_cards)
{
	struct card c0, c1;
	struct bo shared;
	uint32_t *s, *o, h1;
	uint64_t va1;

	if (access("/dev/accel/accel1", F_OK))
		SKIP("one card: boot with --cards 2");
	ASSERT_EQ(card_open("/dev/accel/accel0", &c0), 0);
	ASSERT_EQ(card_open("/dev/accel/accel1", &c1), 0);
	ASSERT_TRUE(distinct_cards(c0.fd, c1.fd));

	/* Card 0's host buffer, written by the CPU, imported by card 1. */
	ASSERT_EQ(bo_new(c0.fd, SIZE, 0, &shared), 0);
	s = shared.map;
	for (uint32_t i = 0; i < SIZE / 4; i++)
		s[i] = i * 2654435761u;
	ASSERT_EQ(share(c0.fd, shared.handle, c1.fd, &h1), 0);
	va1 = device_addr(c1.fd, h1);
	ASSERT_TRUE(va1 != 0);
	printf("  # shared buffer: card 0 va %#llx, card 1 va %#llx\n",
	       (unsigned long long)shared.va, (unsigned long long)va1);

	/* Card 1 reads the first half into its own buffer... */
	cmd_put(c1.cmd.map, 0, SPYRE_OP_DMA_COPY, va1, c1.own.va, HALF);
	/* ...and writes the second half with a pattern. */
	cmd_put(c1.cmd.map, 1, SPYRE_OP_DMA_FILL, va1 + HALF, HALF, 0xc0ffee00d00dfeedull);
	uint32_t bos1[] = { h1, c1.own.handle, c1.cmd.handle };
	EXPECT_EQ(card_run(&c1, 2, bos1, 3), DRM_SPYRE_JOB_STATUS_SUCCESS);
	EXPECT_EQ(memcmp(c1.own.map, shared.map, HALF), 0);

	/* Card 0 sees card 1's writes, on the CPU and through its own DMA. */
	const uint64_t *q = (const uint64_t *)((uint8_t *)shared.map + HALF);
	int good = 1;

	for (uint32_t i = 0; i < HALF / 8; i++)
		good &= q[i] == 0xc0ffee00d00dfeedull;
	EXPECT_TRUE(good);
	cmd_put(c0.cmd.map, 0, SPYRE_OP_DMA_COPY, shared.va + HALF, c0.own.va, HALF);
	uint32_t bos0[] = { shared.handle, c0.own.handle, c0.cmd.handle };
	EXPECT_EQ(card_run(&c0, 1, bos0, 3), DRM_SPYRE_JOB_STATUS_SUCCESS);
	EXPECT_EQ(memcmp(c0.own.map, q, HALF), 0);

	/* The other direction: card 1's own buffer into card 0. */
	uint32_t h0;

	o = c1.own.map;
	for (uint32_t i = 0; i < SIZE / 4; i++)
		o[i] = ~i;
	ASSERT_EQ(share(c1.fd, c1.own.handle, c0.fd, &h0), 0);
	cmd_put(c0.cmd.map, 0, SPYRE_OP_DMA_COPY, device_addr(c0.fd, h0), c0.own.va, SIZE);
	uint32_t bos2[] = { h0, c0.own.handle, c0.cmd.handle };
	EXPECT_EQ(card_run(&c0, 1, bos2, 3), DRM_SPYRE_JOB_STATUS_SUCCESS);
	EXPECT_EQ(memcmp(c0.own.map, c1.own.map, SIZE), 0);

	/* Closing the exporter's handle first leaves the importer's working. */
	struct drm_gem_close gc = { .handle = shared.handle };

	munmap(shared.map, SIZE);
	EXPECT_EQ(xioctl(c0.fd, DRM_IOCTL_GEM_CLOSE, &gc), 0);
	memset(c1.own.map, 0, SIZE);
	cmd_put(c1.cmd.map, 0, SPYRE_OP_DMA_COPY, va1 + HALF, c1.own.va, 8);
	EXPECT_EQ(card_run(&c1, 1, bos1, 3), DRM_SPYRE_JOB_STATUS_SUCCESS);
	EXPECT_EQ(*(uint64_t *)c1.own.map, 0xc0ffee00d00dfeedull);
	close(c0.fd);
	close(c1.fd);
}

/*
 * A READ_ONLY buffer of card 0 stays read-only on card 1: card 1's write
 * into it faults (and bans that file), its read works; the bytes are
 * untouched.  The importer once got it writable.
 */
TEST(read_only_stays_read_only_on_the_other_card)
{
	struct card c0, c1, reader;
	struct bo ro;
	uint32_t h1, hr;

	if (access("/dev/accel/accel1", F_OK))
		SKIP("one card: boot with --cards 2");
	ASSERT_EQ(card_open("/dev/accel/accel0", &c0), 0);
	ASSERT_EQ(card_open("/dev/accel/accel1", &c1), 0);
	ASSERT_EQ(card_open("/dev/accel/accel1", &reader), 0);
	ASSERT_EQ(bo_new(c0.fd, SIZE, DRM_SPYRE_BO_READ_ONLY, &ro), 0);
	memset(ro.map, 0x5c, SIZE);

	ASSERT_EQ(share(c0.fd, ro.handle, reader.fd, &hr), 0);
	memset(reader.own.map, 0, SIZE);
	cmd_put(reader.cmd.map, 0, SPYRE_OP_DMA_COPY, device_addr(reader.fd, hr), reader.own.va,
		SIZE);
	uint32_t rbos[] = { hr, reader.own.handle, reader.cmd.handle };
	EXPECT_EQ(card_run(&reader, 1, rbos, 3), DRM_SPYRE_JOB_STATUS_SUCCESS);
	EXPECT_EQ(memcmp(reader.own.map, ro.map, SIZE), 0);

	ASSERT_EQ(share(c0.fd, ro.handle, c1.fd, &h1), 0);
	cmd_put(c1.cmd.map, 0, SPYRE_OP_DMA_FILL, device_addr(c1.fd, h1), SIZE, 0);
	uint32_t wbos[] = { h1, c1.cmd.handle };
	EXPECT_EQ(card_run(&c1, 1, wbos, 2), DRM_SPYRE_JOB_STATUS_MMU_FAULT);
	for (uint32_t i = 0; i < SIZE; i++)
		if (((uint8_t *)ro.map)[i] != 0x5c) {
			EXPECT_EQ(((uint8_t *)ro.map)[i], 0x5c);
			break;
		}
	close(reader.fd);
	close(c1.fd);
	close(c0.fd);
}

/* Device memory has no pages another device could reach: not exportable. */
TEST(device_buffers_do_not_export)
{
	int fd = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC), other;
	struct drm_prime_handle exp = { .flags = DRM_CLOEXEC | DRM_RDWR };
	struct bo dev, win;
	uint32_t h;

	if (access("/dev/accel/accel1", F_OK))
		SKIP("one card: boot with --cards 2");
	other = open("/dev/accel/accel1", O_RDWR | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0 && other >= 0);
	ASSERT_EQ(bo_new(fd, SIZE, DRM_SPYRE_BO_DEVICE, &dev), 0);
	ASSERT_EQ(bo_new(fd, SIZE, DRM_SPYRE_BO_DEVICE | DRM_SPYRE_BO_MAPPABLE, &win), 0);
	exp.handle = dev.handle;
	EXPECT_EQ(xioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp), -EOPNOTSUPP);
	exp.handle = win.handle;
	EXPECT_EQ(xioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp), -EOPNOTSUPP);
	EXPECT_EQ(share(fd, dev.handle, other, &h), -EOPNOTSUPP);
	munmap(win.map, SIZE);
	close(fd);
	close(other);
}

TAP_MAIN()
