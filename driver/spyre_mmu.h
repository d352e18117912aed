/* SPDX-License-Identifier: GPL-2.0-only */
/* Copyright 2026 The Spyre emulation project */

#ifndef __SPYRE_MMU_H__
#define __SPYRE_MMU_H__

#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/xarray.h>
#include <drm/drm_mm.h>

struct dma_fence;
struct spyre_drm_device;

/* Client buffers live in [SPYRE_VA_START, SPYRE_VA_END). */
#define SPYRE_VA_START		0x0000000100000000ull	/* 4 GiB: 0 stays unmapped */
#define SPYRE_VA_END		0x0000800000000000ull	/* 128 TiB */
/* The driver context maps its fence page and command buffer here. */
#define SPYRE_DRIVER_FENCE_VA	SPYRE_VA_START
#define SPYRE_DRIVER_CMDS_VA	(SPYRE_VA_START + 0x2000)

struct spyre_pt {
	u64 *cpu;
	dma_addr_t dma;
};

/*
 * One device address space.  The card has SPYRE_NUM_CONTEXTS hardware
 * contexts ("slots"); a client's address space is bound to one while it
 * has jobs on the card, and may lose it to another when it has none.
 */
struct spyre_mmu_ctx {
	struct spyre_drm_device *sdev;
	u32 id;				/* address space number, 0 = the driver's */
	/* slot, slot_users and lru are under sdev->slot_lock */
	int slot;			/* hardware context, -1 when unbound */
	u32 slot_users;			/* jobs holding the slot */
	struct list_head lru;		/* in sdev->slot_lru while bound */
	/* Protects tables and va */
	struct mutex lock;
	struct spyre_pt root;
	struct xarray tables;		/* lower tables, by spyre_pt_key() */
	struct drm_mm va;
};

/*
 * A buffer's pages for the card: a dma-mapped sg table of host pages, or
 * one contiguous range (host dma address if @system, else device memory).
 */
struct spyre_mmu_backing {
	struct sg_table *sgt;
	u64 addr;
	bool system;
	u64 size;
	bool writable;
};

int spyre_mmu_ctx_init(struct spyre_drm_device *sdev, struct spyre_mmu_ctx *ctx, u32 id);
void spyre_mmu_ctx_fini(struct spyre_mmu_ctx *ctx);
int spyre_mmu_map(struct spyre_mmu_ctx *ctx, struct drm_mm_node *node,
		  const struct spyre_mmu_backing *backing, u64 fixed_va);
void spyre_mmu_unmap(struct spyre_mmu_ctx *ctx, struct drm_mm_node *node);
void spyre_mmu_unmap_dying(struct spyre_mmu_ctx *ctx, struct drm_mm_node *node);
void spyre_mmu_invalidate(struct spyre_mmu_ctx *ctx, bool wait);
void spyre_mmu_slots_init(struct spyre_drm_device *sdev);
void spyre_mmu_slots_restore(struct spyre_drm_device *sdev);
void spyre_mmu_slots_fini(struct spyre_drm_device *sdev);
int spyre_mmu_slot_reserve(struct spyre_mmu_ctx *ctx, struct dma_fence **wait);
int spyre_mmu_slot_try(struct spyre_mmu_ctx *ctx);
u32 spyre_mmu_slot(struct spyre_mmu_ctx *ctx);
void spyre_mmu_slot_put(struct spyre_mmu_ctx *ctx);
void spyre_mmu_ctx_wait_idle(struct spyre_mmu_ctx *ctx);

/* Where an invalidation stands (spyre_inv_state()). */
enum spyre_inv_state {
	SPYRE_INV_PENDING,	/* a command may still hold a translation from before */
	SPYRE_INV_DONE,		/* the card confirmed it */
	SPYRE_INV_RESET,	/* the card was reset since: done once it is READY */
};

/* An invalidation the card has yet to confirm, if @pending. */
struct spyre_inv {
	bool pending;
	u32 slot;
	u32 target;			/* INV_REQUESTED just after the write */
	bool after_reset;		/* the card was resetting: done once it is READY */
};

/* Pure helpers, exported for KUnit. */
enum spyre_inv_state spyre_inv_state(u32 requested, u32 done, u32 target);
unsigned int spyre_pt_index(u64 va, int level);
unsigned long spyre_pt_key(u64 va, int level);
u64 spyre_pte_encode(u64 addr, bool system, bool writable);
bool spyre_mmu_huge_fits(u64 va, u64 addr, u64 size);
u64 spyre_mmu_alignment(u64 size);

#endif /* __SPYRE_MMU_H__ */
