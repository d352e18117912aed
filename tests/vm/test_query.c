// SPDX-License-Identifier: MIT
/*
 * The query ioctl and libspyre against a real card in the guest.
 * SPYRE_EXPECT_MEM_BYTES: the mem-size QEMU was started with.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spyre/spyre.h"
#include "spyre_regs.h"
#include "tap.h"
#include "uapi/drm/spyre_accel.h"

static const char *node = "/dev/accel/accel0";

/* ioctl returning -errno, retrying on EINTR as libdrm does. */
static int query(int fd, struct drm_spyre_query *q)
{
	int ret;

	do {
		ret = ioctl(fd, DRM_IOCTL_SPYRE_QUERY, q);
	} while (ret == -1 && errno == EINTR);
	return ret ? -errno : 0;
}

static int open_node(void)
{
	return open(node, O_RDWR | O_CLOEXEC);
}

static struct drm_spyre_query info_query(struct drm_spyre_device_info *info)
{
	struct drm_spyre_query q;

	memset(&q, 0, sizeof(q));
	memset(info, 0, sizeof(*info));
	q.param = DRM_SPYRE_QUERY_DEVICE_INFO;
	q.size = sizeof(*info);
	q.data = (uintptr_t)info;
	return q;
}

/* CPUs the kernel could ever bring up: a list of ranges, "0-3,8-11". */
static unsigned int possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	unsigned int first, last, cpus = 0;
	char sep;

	if (!f)
		return 0;
	while (fscanf(f, "%u", &first) == 1) {
		last = first;
		sep = fgetc(f);
		if (sep == '-' && fscanf(f, "%u", &last) == 1)
			sep = fgetc(f);
		cpus += last - first + 1;
		if (sep != ',')
			break;
	}
	fclose(f);
	return cpus;
}

/* The misc and queue vectors, then one completion vector per CPU the card can serve. */
static unsigned int expected_vectors(void)
{
	unsigned int cpus = possible_cpus();
	unsigned int spare = SPYRE_MSIX_VECTORS - SPYRE_MSIX_VECTORS_FIXED;

	return SPYRE_MSIX_VECTORS_FIXED + (cpus < spare ? cpus : spare);
}

static unsigned long long expected_mem_bytes(void)
{
	const char *s = getenv("SPYRE_EXPECT_MEM_BYTES");

	return s ? strtoull(s, NULL, 0) : SPYRE_MEM_SIZE_DEFAULT;
}

TEST(device_info_matches_the_card)
{
	struct drm_spyre_device_info info;
	struct drm_spyre_query q = info_query(&info);
	int fd = open_node();

	ASSERT_TRUE(fd >= 0);
	EXPECT_EQ(query(fd, &q), 0);
	EXPECT_EQ(q.size, sizeof(info));
	EXPECT_EQ(info.vendor_id, SPYRE_PCI_VENDOR_ID);
	EXPECT_EQ(info.device_id, SPYRE_PCI_DEVICE_ID);
	EXPECT_EQ(info.revision, SPYRE_PCI_REVISION);
	EXPECT_EQ(info.hw_version, SPYRE_HW_VERSION_MAJOR << 16 | SPYRE_HW_VERSION_MINOR);
	EXPECT_EQ(info.num_cores, 32);
	EXPECT_EQ(info.stick_bytes, 128);
	EXPECT_EQ(info.scratchpad_bytes, 2 << 20);
	EXPECT_EQ(info.num_irq_vectors, expected_vectors());
	EXPECT_EQ(info.mem_bytes, expected_mem_bytes());
	EXPECT_EQ(info.flags, DRM_SPYRE_DEVICE_IRQ_SELFTEST_PASSED);
	close(fd);
}

TEST(size_zero_reports_size_only)
{
	struct drm_spyre_device_info info;
	struct drm_spyre_query q = info_query(&info);
	int fd = open_node();

	ASSERT_TRUE(fd >= 0);
	q.size = 0;
	q.data = 0;
	EXPECT_EQ(query(fd, &q), 0);
	EXPECT_EQ(q.size, DRM_SPYRE_DEVICE_INFO_SIZE_V1);
	close(fd);
}

/* A bigger buffer is filled up to the kernel's size and no further. */
TEST(larger_size_fills_only_kernel_size)
{
	unsigned char buf[sizeof(struct drm_spyre_device_info) + 16];
	struct drm_spyre_device_info info;
	struct drm_spyre_query q = info_query(&info);
	int fd = open_node();

	ASSERT_TRUE(fd >= 0);
	memset(buf, 0xa5, sizeof(buf));
	q.size = sizeof(buf);
	q.data = (uintptr_t)buf;
	EXPECT_EQ(query(fd, &q), 0);
	EXPECT_EQ(q.size, sizeof(info));
	for (size_t i = sizeof(info); i < sizeof(buf); i++)
		EXPECT_EQ(buf[i], 0xa5);
	memcpy(&info, buf, sizeof(info));
	EXPECT_EQ(info.num_cores, 32);
	close(fd);
}

TEST(unknown_param_is_einval)
{
	struct drm_spyre_device_info info;
	struct drm_spyre_query q = info_query(&info);
	int fd = open_node();

	ASSERT_TRUE(fd >= 0);
	q.param = 1;
	EXPECT_EQ(query(fd, &q), -EINVAL);
	q.param = 0xffffffff;
	EXPECT_EQ(query(fd, &q), -EINVAL);
	close(fd);
}

TEST(nonzero_flags_or_reserved_is_einval)
{
	struct drm_spyre_device_info info;
	struct drm_spyre_query q = info_query(&info);
	int fd = open_node();

	ASSERT_TRUE(fd >= 0);
	q.flags = 1;
	EXPECT_EQ(query(fd, &q), -EINVAL);
	q.flags = 0x80000000;
	EXPECT_EQ(query(fd, &q), -EINVAL);
	q.flags = 0;
	q.reserved = 1;
	EXPECT_EQ(query(fd, &q), -EINVAL);
	close(fd);
}

TEST(short_size_is_einval)
{
	struct drm_spyre_device_info info;
	struct drm_spyre_query q = info_query(&info);
	int fd = open_node();

	ASSERT_TRUE(fd >= 0);
	q.size = 1;
	EXPECT_EQ(query(fd, &q), -EINVAL);
	q.size = DRM_SPYRE_DEVICE_INFO_SIZE_V1 - 1;
	EXPECT_EQ(query(fd, &q), -EINVAL);
	close(fd);
}

TEST(bad_pointer_is_efault)
{
	struct drm_spyre_device_info info;
	struct drm_spyre_query q = info_query(&info);
	void *ro;
	int fd = open_node();

	ASSERT_TRUE(fd >= 0);
	q.data = 0;
	EXPECT_EQ(query(fd, &q), -EFAULT);
	q.data = 0xffff800000000000ull;	/* kernel address */
	EXPECT_EQ(query(fd, &q), -EFAULT);
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(ro != MAP_FAILED);
	q.data = (uintptr_t)ro;
	EXPECT_EQ(query(fd, &q), -EFAULT);
	munmap(ro, 4096);
	/* The ioctl argument itself unreadable. */
	EXPECT_EQ(ioctl(fd, DRM_IOCTL_SPYRE_QUERY, (void *)8) ? -errno : 0, -EFAULT);
	close(fd);
}

TEST(libspyre_sees_the_card)
{
	spyre_device_properties p;
	spyre_device *dev;
	int count = 0;

	ASSERT_EQ(spyre_device_count(&count), SPYRE_SUCCESS);
	EXPECT_EQ(count, 1);
	ASSERT_EQ(spyre_device_open(0, &dev), SPYRE_SUCCESS);
	ASSERT_EQ(spyre_device_get_properties(dev, &p), SPYRE_SUCCESS);
	EXPECT_STREQ(p.devnode, node);
	EXPECT_STREQ(p.driver_name, "spyre");
	EXPECT_EQ(p.num_cores, 32);
	EXPECT_EQ(p.mem_bytes, expected_mem_bytes());
	EXPECT_TRUE(p.irq_selftest_passed);
	spyre_device_close(dev);

	ASSERT_EQ(spyre_device_open_pci(p.pci_address, &dev), SPYRE_SUCCESS);
	spyre_device_close(dev);
	EXPECT_EQ(spyre_device_open(1, &dev), SPYRE_ERROR_NO_DEVICE);
}

TAP_MAIN()
