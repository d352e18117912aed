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

#include "../spyre_gem.h"
#include "../spyre_hw.h"
#include "../spyre_job.h"
#include "../spyre_mmu.h"
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

/* Each level takes its 9 bits of the 48-bit address. */
static void mmu_pt_index_per_level(struct kunit *test)
{
	u64 va = (0x1aull << 39) | (0x2bull << 30) | (0x3cull << 21) | (0x4dull << 12) | 0x123;

	KUNIT_EXPECT_EQ(test, spyre_pt_index(va, 0), 0x1a);
	KUNIT_EXPECT_EQ(test, spyre_pt_index(va, 1), 0x2b);
	KUNIT_EXPECT_EQ(test, spyre_pt_index(va, 2), 0x3c);
	KUNIT_EXPECT_EQ(test, spyre_pt_index(va, 3), 0x4d);
	KUNIT_EXPECT_EQ(test, spyre_pt_index(SPYRE_VA_END - 1, 0), 255);
	KUNIT_EXPECT_EQ(test, spyre_pt_index(SPYRE_VA_END - 1, 3), 511);
}

/* Addresses share a table exactly when they share the bits above it. */
static void mmu_pt_key_identifies_tables(struct kunit *test)
{
	u64 a = SPYRE_VA_START, b = a + SPYRE_HUGE_PAGE_SIZE - 1, c = a + SPYRE_HUGE_PAGE_SIZE;

	KUNIT_EXPECT_EQ(test, spyre_pt_key(a, 3), spyre_pt_key(b, 3));
	KUNIT_EXPECT_NE(test, spyre_pt_key(a, 3), spyre_pt_key(c, 3));
	KUNIT_EXPECT_EQ(test, spyre_pt_key(a, 2), spyre_pt_key(c, 2));
	KUNIT_EXPECT_EQ(test, spyre_pt_key(a, 1), spyre_pt_key(a + (1ull << 38), 1));
	/* Different levels never collide, even for the same prefix value. */
	KUNIT_EXPECT_NE(test, spyre_pt_key(0, 1), spyre_pt_key(0, 2));
	KUNIT_EXPECT_NE(test, spyre_pt_key(SPYRE_VA_END - 1, 3), spyre_pt_key(0, 1));
}

static void mmu_pte_encoding(struct kunit *test)
{
	u64 pte = spyre_pte_encode(0x123456789000ull | 0xfff, true, false);

	KUNIT_EXPECT_EQ(test, pte & SPYRE_PTE_ADDR_MASK, 0x123456789000ull);
	KUNIT_EXPECT_TRUE(test, pte & SPYRE_PTE_VALID);
	KUNIT_EXPECT_TRUE(test, pte & SPYRE_PTE_SYSTEM);
	KUNIT_EXPECT_FALSE(test, pte & SPYRE_PTE_WRITE);
	KUNIT_EXPECT_EQ(test, pte & SPYRE_PTE_RESERVED_MASK, 0);
	pte = spyre_pte_encode(0x2000, false, true);
	KUNIT_EXPECT_EQ(test, pte, 0x2000ull | SPYRE_PTE_VALID | SPYRE_PTE_WRITE);
}

static struct kunit_case spyre_mmu_cases[] = {
	KUNIT_CASE(mmu_pt_index_per_level),
	KUNIT_CASE(mmu_pt_key_identifies_tables),
	KUNIT_CASE(mmu_pte_encoding),
	{}
};

static struct kunit_suite spyre_mmu_suite = {
	.name = "spyre_mmu",
	.test_cases = spyre_mmu_cases,
};

#define GOOD_SUBMIT(field, value) ({							\
	struct { u32 queue, flags; u64 commands; u32 count, bos, in; u32 out;		\
		 u64 point, reserved; } a = { 0, 0, SPYRE_VA_START, 1, 1, 0, 0, 0, 0 };	\
	a.field = value;								\
	spyre_submit_check_args(a.queue, a.flags, a.commands, a.count, a.bos, a.in,	\
				a.out, a.point, a.reserved); })

static void submit_args_accepts_the_limits(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(queue, 3), 0);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(count, DRM_SPYRE_MAX_SUBMIT_COMMANDS), 0);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(bos, DRM_SPYRE_MAX_SUBMIT_BOS), 0);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(in, DRM_SPYRE_MAX_SUBMIT_SYNCOBJS), 0);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(out, 7), 0);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(commands, SPYRE_VA_END - SPYRE_CMD_SIZE), 0);
}

static void submit_args_rejects_each_bad_field(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(queue, 4), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(flags, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(reserved, 1ull << 63), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(count, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(count, DRM_SPYRE_MAX_SUBMIT_COMMANDS + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(bos, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(bos, DRM_SPYRE_MAX_SUBMIT_BOS + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(in, DRM_SPYRE_MAX_SUBMIT_SYNCOBJS + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(point, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(commands, SPYRE_VA_START + 8), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(commands, 0), -EINVAL);
	/* The buffer would run past the end of the address space. */
	KUNIT_EXPECT_EQ(test, spyre_submit_check_args(0, 0, SPYRE_VA_END - SPYRE_CMD_SIZE, 2,
						      1, 0, 0, 0, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(commands, ~0ull & ~63ull), -EINVAL);
}

static void bo_args_sizes_and_flags(struct kunit *test)
{
	const u64 mem = SZ_1G, ap = SZ_256M;

	KUNIT_EXPECT_EQ(test, spyre_bo_check_create_args(1, 0, mem, ap), 0);
	KUNIT_EXPECT_EQ(test, spyre_bo_check_create_args(SZ_16G, 0, mem, ap), 0);
	KUNIT_EXPECT_EQ(test, spyre_bo_check_create_args(SZ_16G + 1, 0, mem, ap), -EINVAL);
	KUNIT_EXPECT_EQ(test, spyre_bo_check_create_args(0, 0, mem, ap), -EINVAL);
	KUNIT_EXPECT_EQ(test, spyre_bo_check_create_args(U64_MAX, 0, mem, ap), -EINVAL);
	KUNIT_EXPECT_EQ(test, spyre_bo_check_create_args(4096, 0x8, mem, ap), -EINVAL);
	KUNIT_EXPECT_EQ(test, spyre_bo_check_create_args(4096, DRM_SPYRE_BO_MAPPABLE, mem, ap),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, spyre_bo_check_create_args(mem, DRM_SPYRE_BO_DEVICE, mem, ap), 0);
	KUNIT_EXPECT_EQ(test, spyre_bo_check_create_args(mem + 1, DRM_SPYRE_BO_DEVICE, mem, ap),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, spyre_bo_check_create_args(ap + 1, DRM_SPYRE_BO_DEVICE |
							 DRM_SPYRE_BO_MAPPABLE, mem, ap), -EINVAL);
}

/* Fence errors reach user space as documented job statuses. */
static void job_status_from_fence_error(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, spyre_job_status_from_error(0), DRM_SPYRE_JOB_STATUS_SUCCESS);
	KUNIT_EXPECT_EQ(test, spyre_job_status_from_error(-EFAULT),
			DRM_SPYRE_JOB_STATUS_MMU_FAULT);
	KUNIT_EXPECT_EQ(test, spyre_job_status_from_error(-ETIMEDOUT),
			DRM_SPYRE_JOB_STATUS_TIMEOUT);
	KUNIT_EXPECT_EQ(test, spyre_job_status_from_error(-ECANCELED),
			DRM_SPYRE_JOB_STATUS_ABORTED);
	KUNIT_EXPECT_EQ(test, spyre_job_status_from_error(-EIO), DRM_SPYRE_JOB_STATUS_FAILED);
}

static struct kunit_case spyre_job_cases[] = {
	KUNIT_CASE(submit_args_accepts_the_limits),
	KUNIT_CASE(submit_args_rejects_each_bad_field),
	KUNIT_CASE(bo_args_sizes_and_flags),
	KUNIT_CASE(job_status_from_fence_error),
	{}
};

static struct kunit_suite spyre_job_suite = {
	.name = "spyre_job",
	.test_cases = spyre_job_cases,
};

kunit_test_suites(&spyre_query_suite, &spyre_hw_suite, &spyre_mmu_suite, &spyre_job_suite);

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
