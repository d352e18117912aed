/* SPDX-License-Identifier: GPL-2.0-only */
/* Copyright 2026 The Spyre emulation project */

#ifndef __SPYRE_JOB_H__
#define __SPYRE_JOB_H__

#include <linux/build_bug.h>
#include <linux/dma-fence.h>
#include <linux/ktime.h>
#include <drm/gpu_scheduler.h>

#include "spyre_regs.h"

struct dma_resv;
struct drm_device;
struct drm_file;
struct drm_spyre_submit;
struct spyre_drm_device;
struct spyre_file;
struct spyre_mmu_ctx;

/* Ring entries per hardware queue; each job takes two (CALL, FENCE). */
#define SPYRE_RING_ENTRIES	256
#define SPYRE_RING_PER_JOB	2
#define SPYRE_JOBS_IN_FLIGHT	64
/* One entry always stays free so that head == tail means empty. */
static_assert(SPYRE_JOBS_IN_FLIGHT * SPYRE_RING_PER_JOB <= SPYRE_RING_ENTRIES - 1);
static_assert((SPYRE_RING_ENTRIES & (SPYRE_RING_ENTRIES - 1)) == 0);

/* One hardware queue: a drm_sched scheduler feeding a ring in host memory. */
struct spyre_queue {
	struct spyre_drm_device *sdev;
	u32 index;
	char name[16];
	struct drm_gpu_scheduler sched;
	struct drm_gpu_scheduler *sched_list;	/* entities' one-element list */
	ktime_t last_progress;		/* a fence last signalled, or the card was reset */
	u8 *ring;			/* SPYRE_RING_ENTRIES commands */
	dma_addr_t ring_dma;
	u32 tail;			/* next free entry; run_job only */
	u32 head;			/* after the last signalled FENCE */
	u64 fence_context;
	u64 seqno;			/* last seqno emitted; run_job only */
	/* Protects inflight and is every hardware fence's lock */
	spinlock_t fence_lock;
	struct list_head inflight;	/* struct spyre_hw_fence, in seqno order */
};

/* Signalled when the queue's FENCE after the job's CALL has run. */
struct spyre_hw_fence {
	struct dma_fence base;
	struct list_head link;
	struct spyre_queue *queue;
	struct spyre_file *sfile;		/* banned if the job fails */
	struct spyre_mmu_ctx *slot_ctx;	/* holds a hardware context until done */
	u32 call_index;			/* ring entry of the job's CALL */
	u64 job_id;			/* SUBMIT's job_id, 0 for driver jobs */
	ktime_t start;			/* doorbell time, for fdinfo */
	bool hung;			/* blamed for a hang: fails with -ETIMEDOUT */
};

struct spyre_job {
	struct drm_sched_job base;
	struct spyre_file *sfile;	/* NULL for the driver's own jobs */
	u32 ctx_id;			/* driver jobs: the hardware context */
	bool slot_reserved;		/* client jobs: a hardware context is held */
	bool queued;			/* client jobs: counted as queued (spyre_limits.c) */
	struct spyre_queue *queue;
	u64 commands;
	u32 command_count;
	struct drm_gem_object **bos;
	u32 bo_count;
	struct dma_fence *hw_fence;
};

static inline struct spyre_job *to_spyre_job(struct drm_sched_job *job)
{
	return container_of(job, struct spyre_job, base);
}

int spyre_queues_init(struct spyre_drm_device *sdev);
void spyre_queues_fini(struct spyre_drm_device *sdev);
int spyre_queues_hw_init(struct spyre_drm_device *sdev);
u32 spyre_queue_ctrl(struct spyre_queue *q);
void spyre_queue_signal(struct spyre_queue *q);
unsigned int spyre_queue_cancel_inflight(struct spyre_queue *q, int error);
struct dma_fence *spyre_queue_blame(struct spyre_queue *q, ktime_t now, struct dma_fence *bad);
void spyre_queues_stop(struct spyre_drm_device *sdev, struct drm_sched_job *bad);
void spyre_queues_start(struct spyre_drm_device *sdev);
int spyre_file_entities_init(struct spyre_file *sfile);
void spyre_file_entities_fini(struct spyre_file *sfile);
int spyre_submit_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int spyre_driver_fill(struct spyre_drm_device *sdev, u64 va, u64 bytes, u64 pattern);
u32 spyre_job_status_of_resv(struct dma_resv *resv);
u32 spyre_job_status_from_error(int error);
unsigned int spyre_job_timeout_msecs(void);
int spyre_file_wait_jobs(struct spyre_file *sfile, bool intr);
void spyre_file_jobs_fini(struct spyre_file *sfile);
void spyre_queues_fence_barrier(struct spyre_drm_device *sdev);
/* Pure ring and seqno arithmetic, exported for KUnit. */
u32 spyre_ring_advance(u32 index, u32 n);
u32 spyre_ring_used(u32 head, u32 tail);
u32 spyre_ring_space(u32 head, u32 tail);
bool spyre_seqno_passed(u64 done, u64 seqno);
bool spyre_job_stalled(ktime_t now, ktime_t started, ktime_t last_progress, u64 limit_ns);

int spyre_submit_check_args(struct drm_device *dev, const struct drm_spyre_submit *args);

#endif /* __SPYRE_JOB_H__ */
