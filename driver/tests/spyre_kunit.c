// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests of the driver's pure logic.  Built as spyre_kunit.ko when the
 * kernel has KUnit; the suites run when the module loads.
 *
 * Copyright 2026 The Spyre emulation project
 */

#include <kunit/test.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "../spyre_hw.h"
#include "../spyre_query.h"
#include "uapi/drm/spyre_accel.h"

/* The one valid query: device info with room for the v1 structure. */
static void query_args_accepts_device_info(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, spyre_query_check_args(DRM_SPYRE_QUERY_DEVICE_INFO,
						     DRM_SPYRE_DEVICE_INFO_SIZE_V1, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, spyre_query_check_args(DRM_SPYRE_QUERY_DEVICE_INFO,
						     U32_MAX, 0, 0), 0);
}

/* Size 0 asks for the size and is always accepted. */
static void query_args_size_zero_asks_size(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, spyre_query_check_args(DRM_SPYRE_QUERY_DEVICE_INFO, 0, 0, 0), 0);
}

static void query_args_rejects_short_size(struct kunit *test)
{
	u32 size;

	for (size = 1; size < DRM_SPYRE_DEVICE_INFO_SIZE_V1; size++)
		KUNIT_EXPECT_EQ(test, spyre_query_check_args(DRM_SPYRE_QUERY_DEVICE_INFO,
							     size, 0, 0), -EINVAL);
}

static void query_args_rejects_unknown_param(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, spyre_query_check_args(1, DRM_SPYRE_DEVICE_INFO_SIZE_V1, 0, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, spyre_query_check_args(U32_MAX, 0, 0, 0), -EINVAL);
}

/* Every flag bit and every reserved bit is refused on its own. */
static void query_args_rejects_flags_and_reserved(struct kunit *test)
{
	int bit;

	for (bit = 0; bit < 32; bit++) {
		KUNIT_EXPECT_EQ(test, spyre_query_check_args(DRM_SPYRE_QUERY_DEVICE_INFO,
							     DRM_SPYRE_DEVICE_INFO_SIZE_V1,
							     BIT(bit), 0), -EINVAL);
		KUNIT_EXPECT_EQ(test, spyre_query_check_args(DRM_SPYRE_QUERY_DEVICE_INFO,
							     DRM_SPYRE_DEVICE_INFO_SIZE_V1,
							     0, BIT(bit)), -EINVAL);
	}
}

/* The uapi struct's size is the documented v1 size: no hidden padding. */
static void query_device_info_layout(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_spyre_device_info),
			DRM_SPYRE_DEVICE_INFO_SIZE_V1);
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_spyre_query), 24);
	KUNIT_EXPECT_EQ(test, offsetof(struct drm_spyre_device_info, mem_bytes), 32);
}

static struct kunit_case spyre_query_cases[] = {
	KUNIT_CASE(query_args_accepts_device_info),
	KUNIT_CASE(query_args_size_zero_asks_size),
	KUNIT_CASE(query_args_rejects_short_size),
	KUNIT_CASE(query_args_rejects_unknown_param),
	KUNIT_CASE(query_args_rejects_flags_and_reserved),
	KUNIT_CASE(query_device_info_layout),
	{}
};

static struct kunit_suite spyre_query_suite = {
	.name = "spyre_query",
	.test_cases = spyre_query_cases,
};

/* The driver accepts every minor of its major and no other major. */
static void hw_version_same_major_supported(struct kunit *test)
{
	u32 major = SPYRE_HW_VERSION_MAJOR << SPYRE_VERSION_MAJOR_SHIFT;

	KUNIT_EXPECT_TRUE(test, spyre_hw_version_supported(major | SPYRE_HW_VERSION_MINOR));
	KUNIT_EXPECT_TRUE(test, spyre_hw_version_supported(major));
	KUNIT_EXPECT_TRUE(test, spyre_hw_version_supported(major | SPYRE_VERSION_MINOR_MASK));
}

static void hw_version_other_major_refused(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, spyre_hw_version_supported((SPYRE_HW_VERSION_MAJOR + 1)
							    << SPYRE_VERSION_MAJOR_SHIFT));
	KUNIT_EXPECT_FALSE(test, spyre_hw_version_supported(U32_MAX));
	/* A card that reads all-ones has fallen off the bus. */
	KUNIT_EXPECT_FALSE(test, spyre_hw_version_supported(~0u));
}

static struct kunit_case spyre_hw_cases[] = {
	KUNIT_CASE(hw_version_same_major_supported),
	KUNIT_CASE(hw_version_other_major_refused),
	{}
};

static struct kunit_suite spyre_hw_suite = {
	.name = "spyre_hw",
	.test_cases = spyre_hw_cases,
};

kunit_test_suites(&spyre_query_suite, &spyre_hw_suite);

/*
 * Test-only: proves that the vm-debug suite's kernel-log scanner catches a
 * real KASAN report.  Never set outside that negative test.
 */
static bool inject_use_after_free;
module_param(inject_use_after_free, bool, 0400);
MODULE_PARM_DESC(inject_use_after_free,
		 "Test only: read freed memory at load to trigger a KASAN report");

static int __init spyre_kunit_init(void)
{
	if (inject_use_after_free) {
		char *p = kmalloc(64, GFP_KERNEL);

		if (!p)
			return -ENOMEM;
		kfree(p);
		pr_info("spyre_kunit: injected use-after-free read: %d\n", READ_ONCE(p[8]));
	}
	return 0;
}
module_init(spyre_kunit_init);

static void __exit spyre_kunit_exit(void)
{
}
module_exit(spyre_kunit_exit);

MODULE_DESCRIPTION("KUnit tests for the Spyre accel driver");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
