// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device address spaces: a 4-level page table per context in coherent host
 * memory (docs/hardware.md, "MMU page tables"), a drm_mm of virtual
 * addresses, and the hardware context slot it is programmed into.
 *
 * Copyright 2026 The Spyre emulation project
 */

#include <linux/dma-mapping.h>
#include <linux/dma-fence.h>
#include <linux/delay.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_print.h>
#include <kunit/visibility.h>

#include "spyre_drv.h"
#include "spyre_fault.h"
#include "spyre_hw.h"
#include "spyre_job.h"
#include "spyre_mmu.h"

/* Unmapped page after every buffer, so an overrun faults. */
#define SPYRE_VA_GUARD		SPYRE_PAGE_SIZE

/* The entry of the table at @level (0 = root .. 3) that @va uses. */
unsigned int spyre_pt_index(u64 va, int level)
{
	return SPYRE_PT_INDEX(va, level);
}
EXPORT_SYMBOL_IF_KUNIT(spyre_pt_index);

/*
 * The table at @level (1..3) that covers @va, as an xarray index: the VA
 * bits above it are those its parent's entry is indexed by and above.
 */
unsigned long spyre_pt_key(u64 va, int level)
{
	return (unsigned long)level << 40 | (va >> SPYRE_PT_SHIFT(level - 1));
}
EXPORT_SYMBOL_IF_KUNIT(spyre_pt_key);

u64 spyre_pte_encode(u64 addr, bool system, bool writable)
{
	return (addr & SPYRE_PTE_ADDR_MASK) | SPYRE_PTE_VALID |
	       (system ? SPYRE_PTE_SYSTEM : 0) | (writable ? SPYRE_PTE_WRITE : 0);
}
EXPORT_SYMBOL_IF_KUNIT(spyre_pte_encode);

static int spyre_pt_alloc(struct spyre_drm_device *sdev, struct spyre_pt *pt)
{
	/* Charged to the memory cgroup of whoever maps (or opens) */
	pt->cpu = dma_alloc_coherent(&sdev->pdev->dev, SPYRE_PAGE_SIZE, &pt->dma,
				     GFP_KERNEL_ACCOUNT);
	return pt->cpu ? 0 : -ENOMEM;
}

static void spyre_pt_free(struct spyre_drm_device *sdev, struct spyre_pt *pt)
{
	dma_free_coherent(&sdev->pdev->dev, SPYRE_PAGE_SIZE, pt->cpu, pt->dma);
}

/*
 * The table at @depth (2 or 3) for @va, creating the path down to it.  A
 * parent entry is rewritten when it does not point at its table: a 2 MiB
 * page may have replaced the table's entry while the range was in use.
 */
static u64 *spyre_mmu_table(struct spyre_mmu_ctx *ctx, u64 va, int depth)
{
	struct spyre_pt *parent = &ctx->root, *pt;
	int level, ret;

	lockdep_assert_held(&ctx->lock);
	for (level = 1; level <= depth; level++) {
		unsigned long key = spyre_pt_key(va, level);
		u64 *entry = &parent->cpu[spyre_pt_index(va, level - 1)];

		pt = xa_load(&ctx->tables, key);
		if (!pt) {
			pt = kzalloc(sizeof(*pt), GFP_KERNEL_ACCOUNT);
			if (!pt)
				return NULL;
			if (spyre_pt_alloc(ctx->sdev, pt)) {
				kfree(pt);
				return NULL;
			}
			ret = xa_err(xa_store(&ctx->tables, key, pt, GFP_KERNEL_ACCOUNT));
			if (ret) {
				spyre_pt_free(ctx->sdev, pt);
				kfree(pt);
				return NULL;
			}
		}
		if (READ_ONCE(*entry) != spyre_pte_encode(pt->dma, false, false))
			WRITE_ONCE(*entry, spyre_pte_encode(pt->dma, false, false));
		parent = pt;
	}
	return parent->cpu;
}

/*
 * Where an invalidation stands: the card's INV_REQUESTED and INV_DONE of
 * its context against @target, the INV_REQUESTED value just after it was
 * written.  The counters only grow (modulo 2^32) until a reset returns
 * them to 0, so INV_REQUESTED below @target means the card was reset since:
 * the reset stops every command and drops every translation, once the card
 * is READY again.
 */
enum spyre_inv_state spyre_inv_state(u32 requested, u32 done, u32 target)
{
	if ((s32)(requested - target) < 0)
		return SPYRE_INV_RESET;
	return (s32)(done - target) >= 0 ? SPYRE_INV_DONE : SPYRE_INV_PENDING;
}
EXPORT_SYMBOL_IF_KUNIT(spyre_inv_state);

/*
 * Flush hardware context @slot's cached translations; @inv says what to
 * wait for with spyre_inv_wait(): nothing on a card before interface 0.4
 * (which has no completion) or when the card is gone.
 */
static void spyre_slot_invalidate(struct spyre_drm_device *sdev, u32 slot,
				  struct spyre_inv *inv)
{
	int idx;

	inv->pending = false;
	inv->after_reset = false;
	if (!drm_dev_enter(&sdev->drm, &idx))
		return;
	/* Table writes must reach memory before the card re-walks them. */
	wmb();
	spyre_wr32(sdev, SPYRE_REG_MMU_INVALIDATE, slot);
	inv->slot = slot;
	if (spyre_hw_has_inv_ack(sdev)) {
		inv->target = spyre_rd32(sdev, SPYRE_REG_INV_REQUESTED(slot));
		inv->pending = true;
	}
	/*
	 * A card that is resetting refuses the write, and its counters say
	 * nothing of it: what drops the translations is the reset, once the
	 * card is READY (read after the write, so a reset that began before
	 * it is seen).
	 */
	if (!(spyre_rd32(sdev, SPYRE_REG_DEV_STATUS) & SPYRE_DEV_STATUS_READY)) {
		inv->pending = true;
		inv->after_reset = true;
	}
	drm_dev_exit(idx);
}

/*
 * Where @inv stands on the card now: a card that is not READY is still
 * resetting (its commands may still run), and a wedged one has no bus
 * mastering, so it reaches no table.
 */
static enum spyre_inv_state spyre_inv_poll(struct spyre_drm_device *sdev,
					   const struct spyre_inv *inv)
{
	enum spyre_inv_state state;

	if (READ_ONCE(sdev->wedged))
		return SPYRE_INV_DONE;
	if (!(spyre_rd32(sdev, SPYRE_REG_DEV_STATUS) & SPYRE_DEV_STATUS_READY))
		return SPYRE_INV_PENDING;
	if (inv->after_reset || !spyre_hw_has_inv_ack(sdev))
		return SPYRE_INV_DONE;
	state = spyre_inv_state(spyre_rd32(sdev, SPYRE_REG_INV_REQUESTED(inv->slot)),
				spyre_rd32(sdev, SPYRE_REG_INV_DONE(inv->slot)), inv->target);
	/* READY since the reset: it dropped every translation. */
	return state == SPYRE_INV_RESET ? SPYRE_INV_DONE : state;
}

/*
 * Wait until the card confirms an invalidation: no command still holds a
 * translation from before it.  The commands that could are jobs, which end
 * by the job timeout (a reset kills a hung one); if the card says nothing
 * for twice that, reset it, which drops every translation.
 */
static void spyre_inv_wait(struct spyre_drm_device *sdev, const struct spyre_inv *inv)
{
	unsigned long deadline = jiffies + 2 * msecs_to_jiffies(spyre_job_timeout_msecs()) + HZ;
	unsigned int delay_us = 10;
	enum spyre_inv_state state;
	bool reset = false;
	int idx;

	/*
	 * After the reset only its outcome ends the wait: READY (every
	 * translation dropped) or wedged (the card reaches no memory).
	 */
	while (inv->pending) {
		if (!drm_dev_enter(&sdev->drm, &idx))
			return;	/* removed: the card was quiesced and reset */
		state = spyre_inv_poll(sdev, inv);
		drm_dev_exit(idx);
		if (state != SPYRE_INV_PENDING)
			return;
		if (!reset && time_after(jiffies, deadline)) {
			drm_err(&sdev->drm,
				"context %u: invalidation not confirmed; resetting the card\n",
				inv->slot);
			spyre_device_reset_request(sdev);
			reset = true;
			continue;
		}
		usleep_range(delay_us, 2 * delay_us);
		delay_us = min(2 * delay_us, 1000u);
	}
}

/*
 * Point hardware context @slot at @ctx's tables (or at none), then flush
 * it; @inv (may be NULL) for spyre_inv_wait().
 */
static void spyre_slot_program(struct spyre_drm_device *sdev, u32 slot, struct spyre_mmu_ctx *ctx,
			       struct spyre_inv *inv)
{
	u32 base = SPYRE_REG_CTX(slot);
	struct spyre_inv unused;
	int idx;

	lockdep_assert_held(&sdev->slot_lock);
	if (!inv)
		inv = &unused;
	inv->pending = false;
	if (!drm_dev_enter(&sdev->drm, &idx))
		return;
	spyre_wr32(sdev, base + SPYRE_CTXREG_ROOT_LO, ctx ? lower_32_bits(ctx->root.dma) : 0);
	spyre_wr32(sdev, base + SPYRE_CTXREG_ROOT_HI, ctx ? upper_32_bits(ctx->root.dma) : 0);
	spyre_wr32(sdev, base + SPYRE_CTXREG_CTRL, ctx ? SPYRE_CTX_VALID : 0);
	drm_dev_exit(idx);
	spyre_slot_invalidate(sdev, slot, inv);
}

static const char *spyre_slot_fence_name(struct dma_fence *f)
{
	return "spyre-context-slot";
}

static const struct dma_fence_ops spyre_slot_fence_ops = {
	.get_driver_name = spyre_slot_fence_name,
	.get_timeline_name = spyre_slot_fence_name,
};

void spyre_mmu_slots_init(struct spyre_drm_device *sdev)
{
	spin_lock_init(&sdev->slot_lock);
	init_waitqueue_head(&sdev->slot_idle);
	INIT_LIST_HEAD(&sdev->slot_lru);
	sdev->slot_fence_context = dma_fence_context_alloc(1);
}

/*
 * Give @ctx a hardware context for one more job: the one it has, a free
 * one, or the least recently used one whose jobs are all done.
 */
static int spyre_slot_get_locked(struct spyre_mmu_ctx *ctx)
{
	struct spyre_drm_device *sdev = ctx->sdev;
	struct spyre_mmu_ctx *victim;
	u32 slot;

	lockdep_assert_held(&sdev->slot_lock);
	if (ctx->slot >= 0)
		goto bound;
	for (slot = SPYRE_DRIVER_CTX + 1; slot < SPYRE_NUM_CONTEXTS; slot++)
		if (!sdev->slots[slot])
			goto bind;
	list_for_each_entry(victim, &sdev->slot_lru, lru) {
		if (victim->slot_users)
			continue;
		slot = victim->slot;
		victim->slot = -1;
		list_del_init(&victim->lru);
		goto bind;
	}
	return -EBUSY;

bind:
	sdev->slots[slot] = ctx;
	ctx->slot = slot;
	spyre_slot_program(sdev, slot, ctx, NULL);
bound:
	ctx->slot_users++;
	list_move_tail(&ctx->lru, &sdev->slot_lru);
	return 0;
}

/*
 * Reserve a hardware context for a job of @ctx.  Returns 0, or -EBUSY with
 * *@wait a fence that signals when one may have become free (every one
 * is in use by jobs in flight), or -ENOMEM.
 */
int spyre_mmu_slot_reserve(struct spyre_mmu_ctx *ctx, struct dma_fence **wait)
{
	struct spyre_drm_device *sdev = ctx->sdev;
	struct dma_fence *spare = NULL;
	unsigned long flags;
	int ret;

	*wait = NULL;
	for (;;) {
		spin_lock_irqsave(&sdev->slot_lock, flags);
		ret = spyre_slot_get_locked(ctx);
		if (ret && !sdev->slot_fence && spare) {
			dma_fence_init(spare, &spyre_slot_fence_ops, &sdev->slot_lock,
				       sdev->slot_fence_context, ++sdev->slot_fence_seqno);
			sdev->slot_fence = spare;
			spare = NULL;
		}
		if (ret && sdev->slot_fence)
			*wait = dma_fence_get(sdev->slot_fence);
		spin_unlock_irqrestore(&sdev->slot_lock, flags);
		if (!ret || *wait)
			break;
		spare = kzalloc(sizeof(*spare), GFP_KERNEL);
		if (!spare)
			return -ENOMEM;
	}
	kfree(spare);
	return ret;
}

/* Reserve without waiting: 0 or -EBUSY. */
int spyre_mmu_slot_try(struct spyre_mmu_ctx *ctx)
{
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&ctx->sdev->slot_lock, flags);
	ret = spyre_slot_get_locked(ctx);
	spin_unlock_irqrestore(&ctx->sdev->slot_lock, flags);
	return ret;
}

/* The hardware context of @ctx, which holds a reservation. */
u32 spyre_mmu_slot(struct spyre_mmu_ctx *ctx)
{
	return READ_ONCE(ctx->slot);
}

/* A job of @ctx is done with its hardware context (any context is fine). */
void spyre_mmu_slot_put(struct spyre_mmu_ctx *ctx)
{
	struct spyre_drm_device *sdev = ctx->sdev;
	unsigned long flags;

	spin_lock_irqsave(&sdev->slot_lock, flags);
	if (!WARN_ON_ONCE(!ctx->slot_users) && !--ctx->slot_users) {
		if (sdev->slot_fence) {
			dma_fence_signal_locked(sdev->slot_fence);
			dma_fence_put(sdev->slot_fence);
			sdev->slot_fence = NULL;
		}
		wake_up_all(&sdev->slot_idle);
	}
	spin_unlock_irqrestore(&sdev->slot_lock, flags);
}

static bool spyre_mmu_ctx_is_idle(struct spyre_mmu_ctx *ctx)
{
	unsigned long flags;
	bool idle;

	spin_lock_irqsave(&ctx->sdev->slot_lock, flags);
	idle = !ctx->slot_users;
	spin_unlock_irqrestore(&ctx->sdev->slot_lock, flags);
	return idle;
}

/*
 * Wait until no job of @ctx is on the card.  A file's last job can finish
 * before earlier ones (it fails at once when the card is being removed,
 * while those wait for removal to cancel them): its address space must
 * outlive them all.
 */
void spyre_mmu_ctx_wait_idle(struct spyre_mmu_ctx *ctx)
{
	wait_event(ctx->sdev->slot_idle, spyre_mmu_ctx_is_idle(ctx));
}

/* After a card reset: the tables are intact, the card forgot them. */
void spyre_mmu_slots_restore(struct spyre_drm_device *sdev)
{
	unsigned long flags;
	u32 slot;

	spin_lock_irqsave(&sdev->slot_lock, flags);
	for (slot = 0; slot < SPYRE_NUM_CONTEXTS; slot++)
		if (sdev->slots[slot])
			spyre_slot_program(sdev, slot, sdev->slots[slot], NULL);
	spin_unlock_irqrestore(&sdev->slot_lock, flags);
}

/* The card is gone: nothing will free a context, wake whoever waits. */
void spyre_mmu_slots_fini(struct spyre_drm_device *sdev)
{
	unsigned long flags;

	spin_lock_irqsave(&sdev->slot_lock, flags);
	if (sdev->slot_fence) {
		dma_fence_signal_locked(sdev->slot_fence);
		dma_fence_put(sdev->slot_fence);
		sdev->slot_fence = NULL;
	}
	spin_unlock_irqrestore(&sdev->slot_lock, flags);
}

/*
 * A new address space.  The driver's (@id 0) owns hardware context 0 for
 * good; a client's gets one of the others only while it has jobs to run.
 */
int spyre_mmu_ctx_init(struct spyre_drm_device *sdev, struct spyre_mmu_ctx *ctx, u32 id)
{
	unsigned long flags;
	int ret;

	ctx->sdev = sdev;
	ctx->id = id;
	ctx->slot = -1;
	ctx->slot_users = 0;
	INIT_LIST_HEAD(&ctx->lru);
	mutex_init(&ctx->lock);
	xa_init(&ctx->tables);
	drm_mm_init(&ctx->va, SPYRE_VA_START, SPYRE_VA_END - SPYRE_VA_START);
	ret = spyre_pt_alloc(sdev, &ctx->root);
	if (ret) {
		drm_mm_takedown(&ctx->va);
		mutex_destroy(&ctx->lock);
		return ret;
	}
	if (id == SPYRE_DRIVER_CTX) {
		spin_lock_irqsave(&sdev->slot_lock, flags);
		sdev->slots[SPYRE_DRIVER_CTX] = ctx;
		ctx->slot = SPYRE_DRIVER_CTX;
		spyre_slot_program(sdev, SPYRE_DRIVER_CTX, ctx, NULL);
		spin_unlock_irqrestore(&sdev->slot_lock, flags);
	}
	return 0;
}

void spyre_mmu_ctx_fini(struct spyre_mmu_ctx *ctx)
{
	struct spyre_drm_device *sdev = ctx->sdev;
	struct spyre_pt *pt;
	struct spyre_inv inv = { };
	unsigned long key, flags;

	spin_lock_irqsave(&sdev->slot_lock, flags);
	WARN_ON_ONCE(ctx->slot_users);
	if (ctx->slot >= 0) {
		sdev->slots[ctx->slot] = NULL;
		spyre_slot_program(sdev, ctx->slot, NULL, &inv);
		ctx->slot = -1;
		list_del_init(&ctx->lru);
	}
	spin_unlock_irqrestore(&sdev->slot_lock, flags);
	/* The card may walk the tables until it confirms: free them after. */
	spyre_inv_wait(sdev, &inv);
	xa_for_each(&ctx->tables, key, pt) {
		spyre_pt_free(ctx->sdev, pt);
		kfree(pt);
	}
	xa_destroy(&ctx->tables);
	spyre_pt_free(ctx->sdev, &ctx->root);
	drm_mm_takedown(&ctx->va);
	mutex_destroy(&ctx->lock);
}

/*
 * Flush the card's cached translations of @ctx, if it has a context now,
 * and with @wait until the card confirms that no command still holds one
 * from before.  Unbound, no command runs in @ctx, and binding it again
 * flushes its new context first.
 */
void spyre_mmu_invalidate(struct spyre_mmu_ctx *ctx, bool wait)
{
	struct spyre_drm_device *sdev = ctx->sdev;
	struct spyre_inv inv = { };
	unsigned long flags;

	spin_lock_irqsave(&sdev->slot_lock, flags);
	if (ctx->slot >= 0)
		spyre_slot_invalidate(sdev, ctx->slot, &inv);
	spin_unlock_irqrestore(&sdev->slot_lock, flags);
	if (wait)
		spyre_inv_wait(sdev, &inv);
}

/* Whether [@va, @va + @size) can start with a 2 MiB page for @addr. */
bool spyre_mmu_huge_fits(u64 va, u64 addr, u64 size)
{
	return IS_ALIGNED(va, SPYRE_HUGE_PAGE_SIZE) && IS_ALIGNED(addr, SPYRE_HUGE_PAGE_SIZE) &&
	       size >= SPYRE_HUGE_PAGE_SIZE;
}
EXPORT_SYMBOL_IF_KUNIT(spyre_mmu_huge_fits);

/*
 * Map [@va, @va + @size) to @addr: 2 MiB pages where both sides are
 * aligned, 4 KiB pages elsewhere.  A fatal signal stops it (-EINTR) every
 * 2 MiB, so a dying process does not finish a large mapping first.
 */
static int spyre_mmu_set_range(struct spyre_mmu_ctx *ctx, u64 va, u64 addr, u64 size,
			       bool system, bool writable)
{
	u64 off = 0, pte, step;
	int depth;

	while (off < size) {
		u64 *table;

		if (IS_ALIGNED(va + off, SPYRE_HUGE_PAGE_SIZE) && fatal_signal_pending(current))
			return -EINTR;
		pte = spyre_pte_encode(addr + off, system, writable);
		if (spyre_mmu_huge_fits(va + off, addr + off, size - off)) {
			depth = 2;
			step = SPYRE_HUGE_PAGE_SIZE;
			pte |= SPYRE_PTE_LEAF;
		} else {
			depth = 3;
			step = SPYRE_PAGE_SIZE;
		}
		table = spyre_mmu_table(ctx, va + off, depth);
		if (!table)
			return -ENOMEM;
		WRITE_ONCE(table[spyre_pt_index(va + off, depth)], pte);
		off += step;
	}
	return 0;
}

/*
 * Clear what spyre_mmu_set_range() wrote: a 2 MiB page is seen by its LEAF
 * bit.  Ranges without tables are skipped whole, so clearing a large range
 * a failed or interrupted mapping left half-written stays quick.
 */
static void spyre_mmu_clear_range(struct spyre_mmu_ctx *ctx, u64 va, u64 size)
{
	const u64 l2_span = 1ull << SPYRE_PT_SHIFT(1);
	u64 off = 0;

	while (off < size) {
		u64 cur = va + off;
		struct spyre_pt *pt = xa_load(&ctx->tables, spyre_pt_key(cur, 2));
		u64 *entry = pt ? &pt->cpu[spyre_pt_index(cur, 2)] : NULL;
		u64 pte = entry ? READ_ONCE(*entry) : 0;

		if (!entry) {
			off = ALIGN(cur + 1, l2_span) - va;
			continue;
		}
		if ((pte & SPYRE_PTE_LEAF) && spyre_mmu_huge_fits(cur, 0, size - off)) {
			WRITE_ONCE(*entry, 0);
			off += SPYRE_HUGE_PAGE_SIZE;
			continue;
		}
		if (!(pte & SPYRE_PTE_VALID)) {
			off = ALIGN(cur + 1, SPYRE_HUGE_PAGE_SIZE) - va;
			continue;
		}
		pt = xa_load(&ctx->tables, spyre_pt_key(cur, 3));
		if (pt)
			WRITE_ONCE(pt->cpu[spyre_pt_index(cur, 3)], 0);
		off += SPYRE_PAGE_SIZE;
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

		/*
		 * The card maps whole pages: an exporter's segment that starts
		 * or (before the last) ends inside one would map bytes that are
		 * not the buffer's.
		 */
		if (!IS_ALIGNED(sg_dma_address(sg), SPYRE_PAGE_SIZE) ||
		    !IS_ALIGNED(len, SPYRE_PAGE_SIZE))
			return -EINVAL;
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

/* Alignment that lets a buffer of @size use 2 MiB pages. */
u64 spyre_mmu_alignment(u64 size)
{
	return size >= SPYRE_HUGE_PAGE_SIZE ? SPYRE_HUGE_PAGE_SIZE : SPYRE_PAGE_SIZE;
}
EXPORT_SYMBOL_IF_KUNIT(spyre_mmu_alignment);

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
						  spyre_mmu_alignment(backing->size), 0,
						  SPYRE_VA_START, SPYRE_VA_END, DRM_MM_INSERT_BEST);
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
		spyre_mmu_invalidate(ctx, false);
	return ret;
}

/*
 * Take @node's range out of @ctx.  The caller made sure no job of @ctx it
 * knows of still uses it; the card may still run one that does (its
 * commands fault from now on).  The entries go first, then the card
 * confirms no command holds a translation from before; only then may the
 * range and what it mapped be used again.
 */
/*
 * Take @node's range out of @ctx, which is being destroyed, without waiting
 * for the card: spyre_mmu_ctx_fini() confirms that it dropped every
 * translation, and only after that may what the range mapped be freed.
 */
void spyre_mmu_unmap_dying(struct spyre_mmu_ctx *ctx, struct drm_mm_node *node)
{
	mutex_lock(&ctx->lock);
	spyre_mmu_clear_range(ctx, node->start, node->size);
	drm_mm_remove_node(node);
	mutex_unlock(&ctx->lock);
}

void spyre_mmu_unmap(struct spyre_mmu_ctx *ctx, struct drm_mm_node *node)
{
	mutex_lock(&ctx->lock);
	spyre_mmu_clear_range(ctx, node->start, node->size);
	mutex_unlock(&ctx->lock);
	spyre_mmu_invalidate(ctx, true);
	mutex_lock(&ctx->lock);
	drm_mm_remove_node(node);
	mutex_unlock(&ctx->lock);
}
