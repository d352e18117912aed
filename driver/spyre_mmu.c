// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device address spaces: a 4-level page table per context in coherent host
 * memory (docs/hardware.md, "MMU page tables"), a drm_mm of virtual
 * addresses, and the hardware context slot it is programmed into.
 *
 * Copyright 2026 The Spyre emulation project
 */

#include <linux/dma-mapping.h>
#include <linux/io.h>

#include <drm/drm_drv.h>
#include <drm/drm_print.h>
#include <kunit/visibility.h>

#include "spyre_drv.h"
#include "spyre_hw.h"
#include "spyre_mmu.h"

/* Unmapped page after every buffer, so an overrun faults. */
#define SPYRE_VA_GUARD		SPYRE_PAGE_SIZE

unsigned int spyre_pt_index(u64 va, int level)
{
	return (va >> (39 - 9 * level)) & (SPYRE_PT_ENTRIES - 1);
}
EXPORT_SYMBOL_IF_KUNIT(spyre_pt_index);

/* The table at @level (1..3) that covers @va, as an xarray index. */
unsigned long spyre_pt_key(u64 va, int level)
{
	return (unsigned long)level << 40 | (va >> (48 - 9 * level));
}
EXPORT_SYMBOL_IF_KUNIT(spyre_pt_key);

u64 spyre_pte_encode(u64 addr, bool system, bool writable)
{
	return (addr & SPYRE_PTE_ADDR_MASK) | SPYRE_PTE_VALID |
	       (system ? SPYRE_PTE_SYSTEM : 0) | (writable ? SPYRE_PTE_WRITE : 0);
}
EXPORT_SYMBOL_IF_KUNIT(spyre_pte_encode);

static int spyre_pt_alloc(struct spyre_device *sdev, struct spyre_pt *pt)
{
	pt->cpu = dma_alloc_coherent(&sdev->pdev->dev, SPYRE_PAGE_SIZE, &pt->dma, GFP_KERNEL);
	return pt->cpu ? 0 : -ENOMEM;
}

static void spyre_pt_free(struct spyre_device *sdev, struct spyre_pt *pt)
{
	dma_free_coherent(&sdev->pdev->dev, SPYRE_PAGE_SIZE, pt->cpu, pt->dma);
}

/* The level-3 table for @va, creating the path down to it. */
static u64 *spyre_mmu_leaf_table(struct spyre_mmu_ctx *ctx, u64 va)
{
	struct spyre_pt *parent = &ctx->root, *pt;
	int level, ret;

	lockdep_assert_held(&ctx->lock);
	for (level = 1; level <= 3; level++) {
		unsigned long key = spyre_pt_key(va, level);

		pt = xa_load(&ctx->tables, key);
		if (!pt) {
			pt = kzalloc(sizeof(*pt), GFP_KERNEL);
			if (!pt)
				return NULL;
			if (spyre_pt_alloc(ctx->sdev, pt)) {
				kfree(pt);
				return NULL;
			}
			ret = xa_err(xa_store(&ctx->tables, key, pt, GFP_KERNEL));
			if (ret) {
				spyre_pt_free(ctx->sdev, pt);
				kfree(pt);
				return NULL;
			}
			WRITE_ONCE(parent->cpu[spyre_pt_index(va, level - 1)],
				   spyre_pte_encode(pt->dma, false, false));
		}
		parent = pt;
	}
	return parent->cpu;
}

static void spyre_mmu_program(struct spyre_mmu_ctx *ctx, bool valid)
{
	struct spyre_device *sdev = ctx->sdev;
	u32 base = SPYRE_REG_CTX(ctx->id);
	int idx;

	if (!drm_dev_enter(&sdev->drm, &idx))
		return;
	spyre_wr32(sdev, base + SPYRE_CTXREG_ROOT_LO, lower_32_bits(ctx->root.dma));
	spyre_wr32(sdev, base + SPYRE_CTXREG_ROOT_HI, upper_32_bits(ctx->root.dma));
	spyre_wr32(sdev, base + SPYRE_CTXREG_CTRL, valid ? SPYRE_CTX_VALID : 0);
	drm_dev_exit(idx);
	spyre_mmu_invalidate(ctx);
}

/* After a card reset: the tables are intact, the card forgot them. */
void spyre_mmu_ctx_restore(struct spyre_mmu_ctx *ctx)
{
	spyre_mmu_program(ctx, true);
}

int spyre_mmu_ctx_init(struct spyre_device *sdev, struct spyre_mmu_ctx *ctx, u32 id)
{
	int ret;

	ctx->sdev = sdev;
	ctx->id = id;
	mutex_init(&ctx->lock);
	xa_init(&ctx->tables);
	drm_mm_init(&ctx->va, SPYRE_VA_START, SPYRE_VA_END - SPYRE_VA_START);
	ret = spyre_pt_alloc(sdev, &ctx->root);
	if (ret) {
		drm_mm_takedown(&ctx->va);
		mutex_destroy(&ctx->lock);
		return ret;
	}
	spyre_mmu_program(ctx, true);
	return 0;
}

void spyre_mmu_ctx_fini(struct spyre_mmu_ctx *ctx)
{
	struct spyre_pt *pt;
	unsigned long key;

	spyre_mmu_program(ctx, false);
	xa_for_each(&ctx->tables, key, pt) {
		spyre_pt_free(ctx->sdev, pt);
		kfree(pt);
	}
	xa_destroy(&ctx->tables);
	spyre_pt_free(ctx->sdev, &ctx->root);
	drm_mm_takedown(&ctx->va);
	mutex_destroy(&ctx->lock);
}

void spyre_mmu_invalidate(struct spyre_mmu_ctx *ctx)
{
	int idx;

	/* Table writes must reach memory before the card re-walks them. */
	wmb();
	if (!drm_dev_enter(&ctx->sdev->drm, &idx))
		return;
	spyre_wr32(ctx->sdev, SPYRE_REG_MMU_INVALIDATE, ctx->id);
	drm_dev_exit(idx);
}

static int spyre_mmu_set_range(struct spyre_mmu_ctx *ctx, u64 va, u64 addr, u64 size,
			       bool system, bool writable)
{
	u64 off;

	for (off = 0; off < size; off += SPYRE_PAGE_SIZE) {
		u64 *table = spyre_mmu_leaf_table(ctx, va + off);

		if (!table)
			return -ENOMEM;
		WRITE_ONCE(table[spyre_pt_index(va + off, 3)],
			   spyre_pte_encode(addr + off, system, writable));
	}
	return 0;
}

static void spyre_mmu_clear_range(struct spyre_mmu_ctx *ctx, u64 va, u64 size)
{
	u64 off;

	for (off = 0; off < size; off += SPYRE_PAGE_SIZE) {
		struct spyre_pt *pt = xa_load(&ctx->tables, spyre_pt_key(va + off, 3));

		if (pt)
			WRITE_ONCE(pt->cpu[spyre_pt_index(va + off, 3)], 0);
	}
}

static int spyre_mmu_write_backing(struct spyre_mmu_ctx *ctx, u64 va,
				   const struct spyre_mmu_backing *b)
{
	struct scatterlist *sg;
	u64 done = 0;
	int i, ret;

	if (!b->sgt)
		return spyre_mmu_set_range(ctx, va, b->addr, b->size, b->system, b->writable);

	for_each_sgtable_dma_sg(b->sgt, sg, i) {
		u64 len = min_t(u64, sg_dma_len(sg), b->size - done);

		ret = spyre_mmu_set_range(ctx, va + done, sg_dma_address(sg), len, true,
					  b->writable);
		if (ret)
			return ret;
		done += len;
		if (done == b->size)
			break;
	}
	return done == b->size ? 0 : -EINVAL;
}

/*
 * Give @backing a device virtual address in @ctx (@fixed_va, or a free
 * range when 0) and write its page-table entries.
 */
int spyre_mmu_map(struct spyre_mmu_ctx *ctx, struct drm_mm_node *node,
		  const struct spyre_mmu_backing *backing, u64 fixed_va)
{
	int ret;

	if (!backing->size || !IS_ALIGNED(backing->size, SPYRE_PAGE_SIZE))
		return -EINVAL;

	mutex_lock(&ctx->lock);
	if (fixed_va) {
		node->start = fixed_va;
		node->size = backing->size;
		ret = drm_mm_reserve_node(&ctx->va, node);
	} else {
		ret = drm_mm_insert_node_in_range(&ctx->va, node, backing->size + SPYRE_VA_GUARD,
						  SPYRE_PAGE_SIZE, 0, SPYRE_VA_START, SPYRE_VA_END,
						  DRM_MM_INSERT_BEST);
	}
	if (ret)
		goto out_unlock;
	ret = spyre_mmu_write_backing(ctx, node->start, backing);
	if (ret) {
		spyre_mmu_clear_range(ctx, node->start, backing->size);
		drm_mm_remove_node(node);
	}
out_unlock:
	mutex_unlock(&ctx->lock);
	if (!ret)
		spyre_mmu_invalidate(ctx);
	return ret;
}

void spyre_mmu_unmap(struct spyre_mmu_ctx *ctx, struct drm_mm_node *node)
{
	mutex_lock(&ctx->lock);
	spyre_mmu_clear_range(ctx, node->start, node->size);
	drm_mm_remove_node(node);
	mutex_unlock(&ctx->lock);
	spyre_mmu_invalidate(ctx);
}
