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

#include "../spyre_fault.h"
#include "../spyre_gem.h"
#include "../spyre_hw.h"
#include "../spyre_job.h"
#include "../spyre_mmu.h"
#include "../spyre_query.h"
#include "spyre_regs.h"
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
	KUNIT_EXPECT_EQ(test, spyre_query_check_args(3, DRM_SPYRE_DEVICE_INFO_SIZE_V1, 0, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, spyre_query_check_args(3, DRM_SPYRE_JOB_ERRORS_SIZE_V1, 0, 0),
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

/* The faults query: size 0 or at least v1; flags and reserved refused. */
static void query_args_faults(struct kunit *test)
{
	u32 size;
	int bit;

	KUNIT_EXPECT_EQ(test, spyre_query_check_args(DRM_SPYRE_QUERY_FAULTS, 0, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, spyre_query_check_args(DRM_SPYRE_QUERY_FAULTS,
						     DRM_SPYRE_FAULTS_SIZE_V1, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, spyre_query_check_args(DRM_SPYRE_QUERY_FAULTS, U32_MAX, 0, 0), 0);
	for (size = 1; size < DRM_SPYRE_FAULTS_SIZE_V1; size++)
		KUNIT_EXPECT_EQ(test, spyre_query_check_args(DRM_SPYRE_QUERY_FAULTS, size, 0, 0),
				-EINVAL);
	for (bit = 0; bit < 32; bit++) {
		KUNIT_EXPECT_EQ(test, spyre_query_check_args(DRM_SPYRE_QUERY_FAULTS,
							     DRM_SPYRE_FAULTS_SIZE_V1,
							     BIT(bit), 0), -EINVAL);
		KUNIT_EXPECT_EQ(test, spyre_query_check_args(DRM_SPYRE_QUERY_FAULTS,
							     DRM_SPYRE_FAULTS_SIZE_V1,
							     0, BIT(bit)), -EINVAL);
	}
}

static void query_faults_layout(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_spyre_fault), 40);
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_spyre_faults), DRM_SPYRE_FAULTS_SIZE_V1);
	KUNIT_EXPECT_EQ(test, offsetof(struct drm_spyre_faults, faults), 16);
}

static void fault_record_init(struct spyre_fault_record *f, u64 n)
{
	memset(f, 0, sizeof(*f));
	f->va = 0x100000000ull + n * 0x1000;
	f->job_id = n + 1;
	f->time = ns_to_ktime(1000 * (n + 1));
	f->queue = n % 4;
	f->access = n % 2 ? SPYRE_ACCESS_WRITE : SPYRE_ACCESS_READ;
	f->reason = SPYRE_FAULT_NOT_PRESENT + n % 5;
	f->more = n == 2;
	f->ctx = 7;
	f->pid = 1234;
}

/* No fault: count 0, nothing filled, every entry zero. */
static void query_faults_empty(struct kunit *test)
{
	struct spyre_fault_record log[SPYRE_FILE_FAULT_LOG_SIZE] = { };
	struct drm_spyre_faults out, zero = { };

	memset(&out, 0xff, sizeof(out));
	spyre_query_fill_faults(log, SPYRE_FILE_FAULT_LOG_SIZE, 0, &out);
	KUNIT_EXPECT_EQ(test, memcmp(&out, &zero, sizeof(out)), 0);
}

/* Every count from 1 to 3 logs: the last ones, oldest first, fields kept. */
static void query_faults_last_oldest_first(struct kunit *test)
{
	struct spyre_fault_record log[SPYRE_FILE_FAULT_LOG_SIZE];
	struct drm_spyre_faults out;
	u64 count, n, i;

	for (count = 1; count <= 3 * SPYRE_FILE_FAULT_LOG_SIZE; count++) {
		for (n = 0; n < count; n++)
			fault_record_init(&log[n % SPYRE_FILE_FAULT_LOG_SIZE], n);
		spyre_query_fill_faults(log, SPYRE_FILE_FAULT_LOG_SIZE, count, &out);
		KUNIT_EXPECT_EQ(test, out.count, count);
		KUNIT_EXPECT_EQ(test, out.num_faults,
				min_t(u64, count, DRM_SPYRE_MAX_FAULTS));
		KUNIT_EXPECT_EQ(test, out.pad, 0);
		for (i = 0; i < out.num_faults; i++) {
			const struct drm_spyre_fault *o = &out.faults[i];

			n = count - out.num_faults + i;
			KUNIT_EXPECT_EQ(test, o->device_addr, 0x100000000ull + n * 0x1000);
			KUNIT_EXPECT_EQ(test, o->job_id, n + 1);
			KUNIT_EXPECT_EQ(test, o->time_ns, 1000 * (n + 1));
			KUNIT_EXPECT_EQ(test, o->queue, n % 4);
			KUNIT_EXPECT_EQ(test, o->access, n % 2 ? DRM_SPYRE_FAULT_ACCESS_WRITE :
							  DRM_SPYRE_FAULT_ACCESS_READ);
			KUNIT_EXPECT_EQ(test, o->reason,
					DRM_SPYRE_FAULT_REASON_NOT_PRESENT + n % 5);
			KUNIT_EXPECT_EQ(test, o->flags, n == 2 ? DRM_SPYRE_FAULT_MORE : 0);
		}
		for (; i < DRM_SPYRE_MAX_FAULTS; i++)
			KUNIT_EXPECT_EQ(test, out.faults[i].device_addr, 0);
	}
}

/* The job errors query: size 0 or at least v1; the struct is the v1 size. */
static void query_args_job_errors(struct kunit *test)
{
	u32 size;

	KUNIT_EXPECT_EQ(test, spyre_query_check_args(DRM_SPYRE_QUERY_JOB_ERRORS, 0, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, spyre_query_check_args(DRM_SPYRE_QUERY_JOB_ERRORS,
						     DRM_SPYRE_JOB_ERRORS_SIZE_V1, 0, 0), 0);
	for (size = 1; size < DRM_SPYRE_JOB_ERRORS_SIZE_V1; size++)
		KUNIT_EXPECT_EQ(test, spyre_query_check_args(DRM_SPYRE_QUERY_JOB_ERRORS,
							     size, 0, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, spyre_query_check_args(DRM_SPYRE_QUERY_JOB_ERRORS,
						     DRM_SPYRE_JOB_ERRORS_SIZE_V1, 1, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_spyre_job_error), 192);
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_spyre_job_errors), DRM_SPYRE_JOB_ERRORS_SIZE_V1);
	KUNIT_EXPECT_EQ(test, offsetof(struct drm_spyre_job_error, engine_detail), 64);
}

/* Every count up to three logs' worth: the last ones, oldest first, every field. */
static void query_job_errors_last_oldest_first(struct kunit *test)
{
	struct spyre_job_error_record *log;
	struct drm_spyre_job_errors *out;
	u64 count, n, i;

	log = kunit_kcalloc(test, SPYRE_FILE_JOB_ERROR_LOG_SIZE, sizeof(*log), GFP_KERNEL);
	out = kunit_kzalloc(test, sizeof(*out), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, log);
	KUNIT_ASSERT_NOT_NULL(test, out);
	for (count = 1; count <= 3 * SPYRE_FILE_JOB_ERROR_LOG_SIZE; count++) {
		for (n = 0; n < count; n++) {
			struct spyre_job_error_record *r = &log[n % SPYRE_FILE_JOB_ERROR_LOG_SIZE];

			memset(r, 0, sizeof(*r));
			r->job_id = n + 1;
			r->time = ns_to_ktime(1000 * (n + 1));
			r->queue = n % 4;
			r->cmd_status = SPYRE_CMD_STATUS_DEADLOCK;
			r->command = n + 2;
			r->engine_status = 23;
			r->engine_core = n % 32;
			r->engine_site = 2;
			r->engine_index = n + 3;
			r->engine_wait = 1;
			r->engine_stream = n + 4;
			r->engine_sticks_done = n * 10;
			r->engine_sticks_total = 4096;
			snprintf(r->engine_detail, sizeof(r->engine_detail), "error %llu", n);
		}
		spyre_query_fill_job_errors(log, SPYRE_FILE_JOB_ERROR_LOG_SIZE, count, out);
		KUNIT_EXPECT_EQ(test, out->count, count);
		KUNIT_EXPECT_EQ(test, out->num_errors, min_t(u64, count, DRM_SPYRE_MAX_JOB_ERRORS));
		for (i = 0; i < out->num_errors; i++) {
			const struct drm_spyre_job_error *o = &out->errors[i];
			char want[32];

			n = count - out->num_errors + i;
			snprintf(want, sizeof(want), "error %llu", n);
			KUNIT_EXPECT_EQ(test, o->job_id, n + 1);
			KUNIT_EXPECT_EQ(test, o->time_ns, 1000 * (n + 1));
			KUNIT_EXPECT_EQ(test, o->queue, n % 4);
			KUNIT_EXPECT_EQ(test, o->cmd_status, SPYRE_CMD_STATUS_DEADLOCK);
			KUNIT_EXPECT_EQ(test, o->command, n + 2);
			KUNIT_EXPECT_EQ(test, o->engine_status, 23);
			KUNIT_EXPECT_EQ(test, o->engine_core, n % 32);
			KUNIT_EXPECT_EQ(test, o->engine_site, 2);
			KUNIT_EXPECT_EQ(test, o->engine_index, n + 3);
			KUNIT_EXPECT_EQ(test, o->engine_wait, 1);
			KUNIT_EXPECT_EQ(test, o->engine_stream, n + 4);
			KUNIT_EXPECT_EQ(test, o->engine_sticks_done, n * 10);
			KUNIT_EXPECT_EQ(test, o->engine_sticks_total, 4096);
			KUNIT_EXPECT_STREQ(test, o->engine_detail, want);
		}
		for (; i < DRM_SPYRE_MAX_JOB_ERRORS; i++)
			KUNIT_EXPECT_EQ(test, out->errors[i].job_id, 0);
	}
}

static struct kunit_case spyre_query_cases[] = {
	KUNIT_CASE(query_args_job_errors),
	KUNIT_CASE(query_job_errors_last_oldest_first),
	KUNIT_CASE(query_args_faults),
	KUNIT_CASE(query_faults_layout),
	KUNIT_CASE(query_faults_empty),
	KUNIT_CASE(query_faults_last_oldest_first),
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

/* A 2 MiB page only where both addresses are aligned and 2 MiB remain. */
static void mmu_huge_pages_where_aligned(struct kunit *test)
{
	const u64 huge = SPYRE_HUGE_PAGE_SIZE, va = SPYRE_VA_START;

	KUNIT_EXPECT_TRUE(test, spyre_mmu_huge_fits(va, 0, huge));
	KUNIT_EXPECT_TRUE(test, spyre_mmu_huge_fits(va + huge, 16 * huge, 8 * huge));
	KUNIT_EXPECT_FALSE(test, spyre_mmu_huge_fits(va, 0, huge - SPYRE_PAGE_SIZE));
	KUNIT_EXPECT_FALSE(test, spyre_mmu_huge_fits(va + SPYRE_PAGE_SIZE, 0, 4 * huge));
	KUNIT_EXPECT_FALSE(test, spyre_mmu_huge_fits(va, SPYRE_PAGE_SIZE, 4 * huge));
	/* Buffers of 2 MiB or more get 2 MiB aligned addresses, smaller ones 4 KiB. */
	KUNIT_EXPECT_EQ(test, spyre_mmu_alignment(huge), huge);
	KUNIT_EXPECT_EQ(test, spyre_mmu_alignment(16ull << 30), huge);
	KUNIT_EXPECT_EQ(test, spyre_mmu_alignment(huge - SPYRE_PAGE_SIZE), SPYRE_PAGE_SIZE);
}

/* An invalidation is done once INV_DONE reaches the INV_REQUESTED it got. */
static void mmu_invalidation_done_when_card_catches_up(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, spyre_inv_state(5, 4, 5), SPYRE_INV_PENDING);
	KUNIT_EXPECT_EQ(test, spyre_inv_state(5, 5, 5), SPYRE_INV_DONE);
	/* Later invalidations of the context, pending or done, include it. */
	KUNIT_EXPECT_EQ(test, spyre_inv_state(9, 4, 5), SPYRE_INV_PENDING);
	KUNIT_EXPECT_EQ(test, spyre_inv_state(9, 7, 5), SPYRE_INV_DONE);
	/* Across the counters' wrap. */
	KUNIT_EXPECT_EQ(test, spyre_inv_state(2, 0xffffffff, 0xffffffff), SPYRE_INV_DONE);
	KUNIT_EXPECT_EQ(test, spyre_inv_state(2, 0xfffffffe, 0xffffffff), SPYRE_INV_PENDING);
	KUNIT_EXPECT_EQ(test, spyre_inv_state(0, 0, 0xffffffff), SPYRE_INV_DONE);
}

/* Counters behind the target: the card was reset since (done once READY). */
static void mmu_invalidation_across_a_reset(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, spyre_inv_state(0, 0, 5), SPYRE_INV_RESET);
	KUNIT_EXPECT_EQ(test, spyre_inv_state(3, 1, 5), SPYRE_INV_RESET);
	/* Invalidations since the reset passed it: the card's word again. */
	KUNIT_EXPECT_EQ(test, spyre_inv_state(6, 4, 5), SPYRE_INV_PENDING);
	KUNIT_EXPECT_EQ(test, spyre_inv_state(6, 6, 5), SPYRE_INV_DONE);
}

static struct kunit_case spyre_mmu_cases[] = {
	KUNIT_CASE(mmu_pt_index_per_level),
	KUNIT_CASE(mmu_pt_key_identifies_tables),
	KUNIT_CASE(mmu_pte_encoding),
	KUNIT_CASE(mmu_huge_pages_where_aligned),
	KUNIT_CASE(mmu_invalidation_done_when_card_catches_up),
	KUNIT_CASE(mmu_invalidation_across_a_reset),
	{}
};

static struct kunit_suite spyre_mmu_suite = {
	.name = "spyre_mmu",
	.test_cases = spyre_mmu_cases,
};

/* A valid SUBMIT with one field changed, through the argument checks. */
#define GOOD_SUBMIT(field, value) ({						\
	struct drm_spyre_submit a = {						\
		.commands = SPYRE_VA_START, .command_count = 1, .bo_count = 1,	\
	};									\
	a.field = value;							\
	spyre_submit_check_args(NULL, &a); })

static void submit_args_accepts_the_limits(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(queue, 3), 0);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(command_count, DRM_SPYRE_MAX_SUBMIT_COMMANDS), 0);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(bo_count, DRM_SPYRE_MAX_SUBMIT_BOS), 0);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(in_syncobj_count, DRM_SPYRE_MAX_SUBMIT_SYNCOBJS), 0);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(out_syncobj, 7), 0);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(commands, SPYRE_VA_END - SPYRE_CMD_SIZE), 0);
}

static void submit_args_rejects_each_bad_field(struct kunit *test)
{
	const struct drm_spyre_submit past_end = {
		.commands = SPYRE_VA_END - SPYRE_CMD_SIZE, .command_count = 2, .bo_count = 1,
	};

	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(queue, 4), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(flags, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(reserved, 1ull << 63), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(command_count, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(command_count, DRM_SPYRE_MAX_SUBMIT_COMMANDS + 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(bo_count, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(bo_count, DRM_SPYRE_MAX_SUBMIT_BOS + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(in_syncobj_count, DRM_SPYRE_MAX_SUBMIT_SYNCOBJS + 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(out_syncobj_point, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(commands, SPYRE_VA_START + 8), -EINVAL);
	KUNIT_EXPECT_EQ(test, GOOD_SUBMIT(commands, 0), -EINVAL);
	/* The buffer would run past the end of the address space. */
	KUNIT_EXPECT_EQ(test, spyre_submit_check_args(NULL, &past_end), -EINVAL);
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
	/* Device buffers are bounded by the card's memory, not the host limit. */
	KUNIT_EXPECT_EQ(test, spyre_bo_check_create_args(SZ_64G, DRM_SPYRE_BO_DEVICE, SZ_128G, ap),
			0);
	KUNIT_EXPECT_EQ(test, spyre_bo_check_create_args(U64_MAX, DRM_SPYRE_BO_DEVICE, SZ_128G, ap),
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

/* Ring indices wrap at the ring's end and nowhere else. */
static void ring_advance_wraps(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, spyre_ring_advance(0, 1), 1u);
	KUNIT_EXPECT_EQ(test, spyre_ring_advance(SPYRE_RING_ENTRIES - 2, 1),
			SPYRE_RING_ENTRIES - 1);
	KUNIT_EXPECT_EQ(test, spyre_ring_advance(SPYRE_RING_ENTRIES - 1, 1), 0u);
	KUNIT_EXPECT_EQ(test, spyre_ring_advance(SPYRE_RING_ENTRIES - 1, SPYRE_RING_PER_JOB),
			SPYRE_RING_PER_JOB - 1);
	KUNIT_EXPECT_EQ(test, spyre_ring_advance(5, SPYRE_RING_ENTRIES), 5u);
}

/* Empty, full, and used/free counts on both sides of a wrap. */
static void ring_space_and_use(struct kunit *test)
{
	u32 head;

	for (head = 0; head < SPYRE_RING_ENTRIES; head += 37) {
		u32 tail = head, n;

		KUNIT_EXPECT_EQ(test, spyre_ring_used(head, tail), 0u);
		KUNIT_EXPECT_EQ(test, spyre_ring_space(head, tail), SPYRE_RING_ENTRIES - 1);
		for (n = 1; n < SPYRE_RING_ENTRIES; n++) {
			tail = spyre_ring_advance(tail, 1);
			KUNIT_EXPECT_EQ(test, spyre_ring_used(head, tail), n);
			KUNIT_EXPECT_EQ(test, spyre_ring_space(head, tail),
					SPYRE_RING_ENTRIES - 1 - n);
		}
		/* Full: one more entry would make tail == head, i.e. empty. */
		KUNIT_EXPECT_EQ(test, spyre_ring_space(head, tail), 0u);
		KUNIT_EXPECT_EQ(test, spyre_ring_advance(tail, 1), head);
	}
	/* Tail wrapped past the end, head not yet. */
	KUNIT_EXPECT_EQ(test, spyre_ring_used(SPYRE_RING_ENTRIES - 4, 2), 6u);
	KUNIT_EXPECT_EQ(test, spyre_ring_space(SPYRE_RING_ENTRIES - 4, 2),
			SPYRE_RING_ENTRIES - 7);
}

/*
 * The driver's job accounting: SPYRE_JOBS_IN_FLIGHT jobs at their ring
 * cost always fit, from any starting point, and the head that signalling
 * computes (after a job's FENCE) frees exactly that job's entries.
 */
static void ring_holds_every_job_in_flight(struct kunit *test)
{
	u32 start;

	for (start = 0; start < SPYRE_RING_ENTRIES; start++) {
		u32 head = start, tail = start, call = 0, j;

		for (j = 0; j < SPYRE_JOBS_IN_FLIGHT; j++) {
			KUNIT_ASSERT_GE(test, spyre_ring_space(head, tail), SPYRE_RING_PER_JOB);
			if (j == 0)
				call = tail;
			tail = spyre_ring_advance(tail, SPYRE_RING_PER_JOB);
		}
		KUNIT_EXPECT_EQ(test, spyre_ring_used(head, tail),
				SPYRE_JOBS_IN_FLIGHT * SPYRE_RING_PER_JOB);
		/* The first job signals: head moves past its CALL and FENCE. */
		head = spyre_ring_advance(call, SPYRE_RING_PER_JOB);
		KUNIT_EXPECT_EQ(test, spyre_ring_used(head, tail),
				(SPYRE_JOBS_IN_FLIGHT - 1) * SPYRE_RING_PER_JOB);
	}
}

/* 64-bit fence values: reached or not, including across the wrap. */
static void seqno_passed_across_wrap(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, spyre_seqno_passed(0, 1));
	KUNIT_EXPECT_TRUE(test, spyre_seqno_passed(1, 1));
	KUNIT_EXPECT_TRUE(test, spyre_seqno_passed(2, 1));
	KUNIT_EXPECT_FALSE(test, spyre_seqno_passed(U64_MAX - 1, U64_MAX));
	KUNIT_EXPECT_TRUE(test, spyre_seqno_passed(U64_MAX, U64_MAX));
	/* The card wrote 0, then 1, after U64_MAX: both pass U64_MAX. */
	KUNIT_EXPECT_TRUE(test, spyre_seqno_passed(0, U64_MAX));
	KUNIT_EXPECT_TRUE(test, spyre_seqno_passed(1, U64_MAX - 5));
	KUNIT_EXPECT_FALSE(test, spyre_seqno_passed(U64_MAX, 0));
	KUNIT_EXPECT_FALSE(test, spyre_seqno_passed(U64_MAX - 5, 1));
}

/*
 * The signalling loop's walk: fences in seqno order, wrapping mid-list,
 * signal exactly up to the value the card wrote.
 */
static void seqno_signals_in_order_across_wrap(struct kunit *test)
{
	u64 base = U64_MAX - 3, done, i;

	for (done = base - 1; done != base + 8; done++) {
		u64 signalled = 0;

		for (i = 0; i < 8; i++) {
			if (!spyre_seqno_passed(done, base + i))
				break;
			signalled++;
		}
		KUNIT_EXPECT_EQ(test, signalled, done - (base - 1));
	}
}

/* A job's stall runs from its start or its queue's last progress, the later. */
static void job_stalled_from_later_of_start_and_progress(struct kunit *test)
{
	u64 limit = 500 * NSEC_PER_MSEC;
	ktime_t t0 = ms_to_ktime(10000);

	/* Started on an idle queue whose last progress was long ago. */
	KUNIT_EXPECT_FALSE(test, spyre_job_stalled(ktime_add_ms(t0, 499), t0,
						   ktime_sub_ms(t0, 9000), limit));
	KUNIT_EXPECT_TRUE(test, spyre_job_stalled(ktime_add_ms(t0, 500), t0,
						  ktime_sub_ms(t0, 9000), limit));
	/* Queued behind others: it runs from the last one's completion. */
	KUNIT_EXPECT_FALSE(test, spyre_job_stalled(ktime_add_ms(t0, 900), t0,
						   ktime_add_ms(t0, 600), limit));
	KUNIT_EXPECT_TRUE(test, spyre_job_stalled(ktime_add_ms(t0, 1100), t0,
						  ktime_add_ms(t0, 600), limit));
	/* A reset (progress) after the start restarts the count. */
	KUNIT_EXPECT_FALSE(test, spyre_job_stalled(ktime_add_ms(t0, 800), t0,
						   ktime_add_ms(t0, 700), limit));
}

/* Concurrent hangs: what a reset for one queue's hang blames on the others. */
static void job_stalled_blames_hangs_started_together(struct kunit *test)
{
	u64 half = 5 * NSEC_PER_SEC;		/* half the default 10 s timeout */
	ktime_t now = ms_to_ktime(100000);

	/* Four hangs started within 100 ms: the first timed out, all are hung. */
	KUNIT_EXPECT_TRUE(test, spyre_job_stalled(now, ktime_sub_ms(now, 10000), 0, half));
	KUNIT_EXPECT_TRUE(test, spyre_job_stalled(now, ktime_sub_ms(now, 9900), 0, half));
	/* A job that reached the card a second ago is innocent and replayed. */
	KUNIT_EXPECT_FALSE(test, spyre_job_stalled(now, ktime_sub_ms(now, 1000), 0, half));
	/* Clock readings never go backwards, but a start after now is not stalled. */
	KUNIT_EXPECT_FALSE(test, spyre_job_stalled(now, ktime_add_ms(now, 1), 0, half));
}

static struct kunit_case spyre_job_cases[] = {
	KUNIT_CASE(ring_advance_wraps),
	KUNIT_CASE(ring_space_and_use),
	KUNIT_CASE(ring_holds_every_job_in_flight),
	KUNIT_CASE(seqno_passed_across_wrap),
	KUNIT_CASE(seqno_signals_in_order_across_wrap),
	KUNIT_CASE(job_stalled_from_later_of_start_and_progress),
	KUNIT_CASE(job_stalled_blames_hangs_started_together),
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
