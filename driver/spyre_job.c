// SPDX-License-Identifier: GPL-2.0-only
/*
 * Job submission: one drm_sched scheduler per hardware queue.  The driver
 * owns each queue's ring; a job becomes a CALL of the client's command
 * buffer in the client's MMU context followed by a FENCE that writes the
 * job's seqno to the driver's fence page and interrupts.
 *
 * Copyright 2026 The Spyre emulation project
 */

#include <linux/dma-fence-chain.h>
#include <linux/dma-resv.h>
#include <linux/interrupt.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <kunit/visibility.h>

#include "spyre_cmd.h"
#include "spyre_drv.h"
#include "spyre_fault.h"
#include "spyre_gem.h"
#include "spyre_hw.h"
#include "spyre_job.h"
#include "spyre_limits.h"
#include "uapi/drm/spyre_accel.h"

static unsigned int spyre_job_timeout_ms = 10000;
module_param_named(job_timeout_ms, spyre_job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms, "Time a job may run before the card is reset (ms)");

/* The job timeout, for waits that a hung job may hold up. */
unsigned int spyre_job_timeout_msecs(void)
{
	return spyre_job_timeout_ms;
}

static inline struct spyre_hw_fence *to_spyre_hw_fence(struct dma_fence *f)
{
	return container_of(f, struct spyre_hw_fence, base);
}

static const char *spyre_fence_driver_name(struct dma_fence *f)
{
	return DRIVER_NAME;
}

static const char *spyre_fence_timeline_name(struct dma_fence *f)
{
	return to_spyre_hw_fence(f)->queue->name;
}

/* Seqnos are the card's 64-bit fence values, compared as such. */
static const struct dma_fence_ops spyre_hw_fence_ops = {
	.use_64bit_seqno = true,
	.get_driver_name = spyre_fence_driver_name,
	.get_timeline_name = spyre_fence_timeline_name,
};

u32 spyre_job_status_from_error(int error)
{
	switch (error) {
	case 0:
		return DRM_SPYRE_JOB_STATUS_SUCCESS;
	case -EFAULT:
		return DRM_SPYRE_JOB_STATUS_MMU_FAULT;
	case -ETIMEDOUT:
		return DRM_SPYRE_JOB_STATUS_TIMEOUT;
	case -ECANCELED:
		return DRM_SPYRE_JOB_STATUS_ABORTED;
	default:
		return DRM_SPYRE_JOB_STATUS_FAILED;
	}
}
EXPORT_SYMBOL_IF_KUNIT(spyre_job_status_from_error);

/* The status of a buffer's failed job, if one failed (else SUCCESS). */
u32 spyre_job_status_of_resv(struct dma_resv *resv)
{
	struct dma_resv_iter cursor;
	struct dma_fence *fence;
	int error = 0;

	/* The unlocked iterator skips signalled fences: take the lock. */
	dma_resv_lock(resv, NULL);
	dma_resv_for_each_fence(&cursor, resv, DMA_RESV_USAGE_READ, fence) {
		if (dma_fence_is_signaled(fence) && fence->error)
			error = fence->error;
	}
	dma_resv_unlock(resv);
	return spyre_job_status_from_error(error);
}

/* The ring entry @n after @index. */
u32 spyre_ring_advance(u32 index, u32 n)
{
	return (index + n) & (SPYRE_RING_ENTRIES - 1);
}
EXPORT_SYMBOL_IF_KUNIT(spyre_ring_advance);

/* Entries the card has yet to run, from @head up to @tail. */
u32 spyre_ring_used(u32 head, u32 tail)
{
	return (tail - head) & (SPYRE_RING_ENTRIES - 1);
}
EXPORT_SYMBOL_IF_KUNIT(spyre_ring_used);

/* Entries free for new commands; one stays empty so full != empty. */
u32 spyre_ring_space(u32 head, u32 tail)
{
	return SPYRE_RING_ENTRIES - 1 - spyre_ring_used(head, tail);
}
EXPORT_SYMBOL_IF_KUNIT(spyre_ring_space);

/*
 * Has the card's fence value @done reached @seqno?  Compared through the
 * signed difference, so the answer stays right across a wrap of the counter.
 */
bool spyre_seqno_passed(u64 done, u64 seqno)
{
	return (s64)(done - seqno) >= 0;
}
EXPORT_SYMBOL_IF_KUNIT(spyre_seqno_passed);

/*
 * Has a job that reached the card at @started stalled for @limit_ns at
 * @now?  It runs from when it reached the card or from its queue's last
 * progress (a fence signalled, the card reset), whichever came later.
 */
bool spyre_job_stalled(ktime_t now, ktime_t started, ktime_t last_progress, u64 limit_ns)
{
	ktime_t since = ktime_after(last_progress, started) ? last_progress : started;

	return ktime_compare(ktime_sub(now, since), ns_to_ktime(limit_ns)) >= 0;
}
EXPORT_SYMBOL_IF_KUNIT(spyre_job_stalled);

/*
 * A job is hung once it stalled for half the timeout: the scheduler's
 * timer, which restarts when a job starts or finishes, says the timeout
 * passed; the half allows for a timer armed before the queue's last
 * progress.  At a reset for a hang, the job each other queue has stalled on
 * for as long is hung too: replaying it would only hang the card again.
 */
static u64 spyre_hang_ns(void)
{
	return (u64)spyre_job_timeout_ms * NSEC_PER_MSEC / 2;
}

static void spyre_ring_emit(struct spyre_queue *q, u8 opcode, u64 a0, u64 a1, u64 a2)
{
	spyre_cmd_encode3(q->ring + q->tail * SPYRE_CMD_SIZE, opcode, a0, a1, a2);
	q->tail = spyre_ring_advance(q->tail, 1);
}

/* A job that must not run (it hung before a reset): already failed. */
static struct dma_fence *spyre_hw_fence_failed(struct spyre_queue *q, int error)
{
	struct spyre_hw_fence *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return ERR_PTR(-ENOMEM);
	f->queue = q;
	dma_fence_init(&f->base, &spyre_hw_fence_ops, &q->fence_lock, q->fence_context,
		       ++q->seqno);
	dma_fence_set_error(&f->base, error);
	dma_fence_signal(&f->base);
	return &f->base;
}

/* A client job that will not reach the card gives its context back. */
static void spyre_job_slot_release(struct spyre_job *job)
{
	if (job->slot_reserved) {
		job->slot_reserved = false;
		spyre_mmu_slot_put(&job->sfile->ctx);
	}
}

/* A client job left its file's queue (run, or failed there). */
static void spyre_job_dequeued(struct spyre_job *job)
{
	if (job->queued) {
		job->queued = false;
		spyre_limits_job_dequeued(job->sfile);
	}
}

/*
 * A job cancelled by a reset kept its hardware context on its old fence
 * (spyre_queue_cancel_inflight()): the job holds it again.
 */
static void spyre_job_reclaim_slot(struct spyre_job *job)
{
	struct spyre_hw_fence *old;
	unsigned long flags;

	if (!job->hw_fence || job->hw_fence->ops != &spyre_hw_fence_ops)
		return;
	old = to_spyre_hw_fence(job->hw_fence);
	spin_lock_irqsave(&old->queue->fence_lock, flags);
	if (old->slot_ctx) {
		WARN_ON_ONCE(job->slot_reserved);
		old->slot_ctx = NULL;
		job->slot_reserved = true;
	}
	spin_unlock_irqrestore(&old->queue->fence_lock, flags);
}

/*
 * Why a job must not reach the card, as a fence error, or 0: it was failed
 * before (its hang, a dependency), its file is banned (the rest of its
 * jobs are cancelled, not run), or the card is wedged.
 */
static int spyre_job_refused(struct spyre_job *job)
{
	struct drm_sched_job *sched_job = &job->base;

	if (sched_job->s_fence->finished.error)
		return sched_job->s_fence->finished.error;
	if (job->sfile && READ_ONCE(job->sfile->banned))
		return -ECANCELED;
	if (READ_ONCE(job->queue->sdev->wedged))
		return -EIO;
	return 0;
}

/*
 * Before run_job: a client job needs one of the card's hardware contexts
 * for its address space.  When all are held by jobs in flight, wait for
 * the next to be given back.
 */
static struct dma_fence *spyre_job_prepare(struct drm_sched_job *sched_job,
					   struct drm_sched_entity *entity)
{
	struct spyre_job *job = to_spyre_job(sched_job);
	struct dma_fence *wait;
	int ret;

	if (!job->sfile || job->slot_reserved)
		return NULL;
	ret = spyre_mmu_slot_reserve(&job->sfile->ctx, &wait);
	if (ret == -EBUSY)
		return wait;
	/* Out of memory for the wait: run_job tries again without waiting. */
	job->slot_reserved = !ret;
	return NULL;
}

static struct dma_fence *spyre_job_run(struct drm_sched_job *sched_job)
{
	struct spyre_job *job = to_spyre_job(sched_job);
	struct spyre_queue *q = job->queue;
	struct spyre_drm_device *sdev = q->sdev;
	struct spyre_hw_fence *f;
	unsigned long flags;
	int idx;

	u32 ctx_id = job->ctx_id;
	int error;

	spyre_job_dequeued(job);
	spyre_job_reclaim_slot(job);
	/* It finished (or failed) before a reset stopped the card: not again. */
	if (job->hw_fence && dma_fence_is_signaled(job->hw_fence) &&
	    job->hw_fence->error != -ECANCELED) {
		spyre_job_slot_release(job);
		return dma_fence_get(job->hw_fence);
	}
	error = spyre_job_refused(job);
	if (unlikely(error)) {
		spyre_job_slot_release(job);
		return spyre_hw_fence_failed(q, error);
	}
	/* Replayed after a reset: take the context again (still bound). */
	if (job->sfile && !job->slot_reserved) {
		if (spyre_mmu_slot_try(&job->sfile->ctx))
			return ERR_PTR(-EBUSY);
		job->slot_reserved = true;
	}
	/* The credit limit keeps jobs in flight below the ring's size. */
	if (WARN_ON_ONCE(spyre_ring_space(READ_ONCE(q->head), q->tail) < SPYRE_RING_PER_JOB)) {
		spyre_job_slot_release(job);
		return ERR_PTR(-ENOSPC);
	}
	if (!drm_dev_enter(&sdev->drm, &idx)) {
		spyre_job_slot_release(job);
		return ERR_PTR(-ENODEV);
	}
	/* Resubmitted after a reset: the old hardware fence is done with. */
	dma_fence_put(job->hw_fence);
	job->hw_fence = NULL;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f) {
		drm_dev_exit(idx);
		spyre_job_slot_release(job);
		return ERR_PTR(-ENOMEM);
	}

	f->queue = q;
	f->sfile = job->sfile;
	f->call_index = q->tail;
	if (job->sfile) {
		f->job_id = sched_job->s_fence->finished.seqno;
		/* The hardware fence holds the context until it signals. */
		f->slot_ctx = &job->sfile->ctx;
		job->slot_reserved = false;
		ctx_id = spyre_mmu_slot(f->slot_ctx);
	}
	dma_fence_init(&f->base, &spyre_hw_fence_ops, &q->fence_lock, q->fence_context,
		       ++q->seqno);
	spyre_ring_emit(q, SPYRE_OP_CALL, ctx_id, job->commands, job->command_count);
	/* Run on the submitter's CPU (sched_wq): its interrupt is taken there. */
	spyre_ring_emit(q, SPYRE_OP_FENCE, SPYRE_DRIVER_FENCE_VA + q->index * sizeof(u64),
			q->seqno, sdev->cpu_vector ? sdev->cpu_vector[raw_smp_processor_id()] : 0);

	f->start = ktime_get();
	spin_lock_irqsave(&q->fence_lock, flags);
	list_add_tail(&f->link, &q->inflight);
	dma_fence_get(&f->base);	/* the inflight list's */
	spin_unlock_irqrestore(&q->fence_lock, flags);

	/* Ring entries must be in memory before the card reads them. */
	wmb();
	spyre_wr32(sdev, SPYRE_REG_QUEUE(q->index) + SPYRE_QREG_DOORBELL, q->tail);
	drm_dev_exit(idx);
	job->hw_fence = dma_fence_get(&f->base);
	return &f->base;
}

/* A job's hardware fence is done: its context may go to another file. */
static void spyre_hw_fence_release_slot(struct spyre_hw_fence *f)
{
	if (f->slot_ctx) {
		spyre_mmu_slot_put(f->slot_ctx);
		f->slot_ctx = NULL;
	}
}

/* Signal every fence whose seqno the card has written to the fence page. */
void spyre_queue_signal(struct spyre_queue *q)
{
	u64 done = READ_ONCE(q->sdev->fence_page[q->index]);
	struct spyre_hw_fence *f, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&q->fence_lock, flags);
	list_for_each_entry_safe(f, tmp, &q->inflight, link) {
		if (!spyre_seqno_passed(done, f->base.seqno))
			break;
		list_del(&f->link);
		q->last_progress = ktime_get();
		WRITE_ONCE(q->head, spyre_ring_advance(f->call_index, SPYRE_RING_PER_JOB));
		/* Before the slot goes: a file whose jobs are all done may be freed. */
		if (f->sfile)
			atomic64_add(ktime_to_ns(ktime_sub(ktime_get(), f->start)),
				     &f->sfile->busy_ns[q->index]);
		spyre_hw_fence_release_slot(f);
		dma_fence_signal_locked(&f->base);
		dma_fence_put(&f->base);
	}
	spin_unlock_irqrestore(&q->fence_lock, flags);
}

/*
 * After a reset for a hang, with the card stopped: blame the job @q is
 * stuck on, @bad or one stalled for half the timeout at @now.  Its fence
 * will fail with -ETIMEDOUT, its job is failed (not replayed) and its file
 * banned.  Returns the blamed hardware fence, or NULL.
 */
struct dma_fence *spyre_queue_blame(struct spyre_queue *q, ktime_t now, struct dma_fence *bad)
{
	struct spyre_hw_fence *f;
	struct drm_sched_job *s_job;
	unsigned long flags;

	spin_lock_irqsave(&q->fence_lock, flags);
	f = list_first_entry_or_null(&q->inflight, struct spyre_hw_fence, link);
	if (f && (&f->base == bad ||
		  spyre_job_stalled(now, f->start, q->last_progress, spyre_hang_ns())))
		f->hung = true;
	else
		f = NULL;
	spin_unlock_irqrestore(&q->fence_lock, flags);
	if (!f)
		return NULL;

	/* The scheduler is stopped: its pending jobs stay put. */
	spin_lock(&q->sched.job_list_lock);
	list_for_each_entry(s_job, &q->sched.pending_list, list) {
		struct spyre_job *job = to_spyre_job(s_job);

		if (job->hw_fence != &f->base || dma_fence_is_signaled(&s_job->s_fence->finished))
			continue;
		if (job->sfile)
			WRITE_ONCE(job->sfile->banned, true);
		/* run_job sees the error and completes it without running it. */
		dma_fence_set_error(&s_job->s_fence->finished, -ETIMEDOUT);
		break;
	}
	spin_unlock(&q->sched.job_list_lock);
	drm_err(&q->sdev->drm, "queue %u: job %llu hung\n", q->index, f->job_id);
	return &f->base;
}

/*
 * Fail and drop every fence still in flight (the card was reset); returns
 * how many were not blamed (their jobs run again).  A job that runs again
 * keeps its hardware context through its old fence (run_job takes it
 * back): its file's address space must not look idle in between.
 */
unsigned int spyre_queue_cancel_inflight(struct spyre_queue *q, int error)
{
	struct spyre_hw_fence *f, *tmp;
	unsigned int innocent = 0;
	unsigned long flags;

	spin_lock_irqsave(&q->fence_lock, flags);
	list_for_each_entry_safe(f, tmp, &q->inflight, link) {
		list_del(&f->link);
		if (f->hung)
			spyre_hw_fence_release_slot(f);
		innocent += !f->hung;
		dma_fence_set_error(&f->base, f->hung ? -ETIMEDOUT : error);
		dma_fence_signal_locked(&f->base);
		dma_fence_put(&f->base);
	}
	spin_unlock_irqrestore(&q->fence_lock, flags);
	return innocent;
}

/* Has @job, the oldest its queue has not finished, hung? */
static bool spyre_job_hung(struct spyre_job *job)
{
	struct spyre_queue *q = job->queue;
	unsigned long flags;
	bool hung;

	if (!job->hw_fence || dma_fence_is_signaled(job->hw_fence))
		return false;
	spin_lock_irqsave(&q->fence_lock, flags);
	hung = spyre_job_stalled(ktime_get(), to_spyre_hw_fence(job->hw_fence)->start,
				 q->last_progress, spyre_hang_ns());
	spin_unlock_irqrestore(&q->fence_lock, flags);
	return hung;
}

/*
 * The four schedulers share one ordered timeout workqueue with every other
 * reset, so this never runs beside another reset: a reset stops all four
 * schedulers, which cancels their pending timeouts.
 */
static enum drm_gpu_sched_stat spyre_job_timedout(struct drm_sched_job *sched_job)
{
	struct spyre_job *job = to_spyre_job(sched_job);
	struct drm_gpu_scheduler *sched = sched_job->sched;
	struct spyre_drm_device *sdev = job->queue->sdev;
	enum drm_gpu_sched_stat stat = DRM_GPU_SCHED_STAT_NOMINAL;
	int idx;

	/*
	 * The scheduler took the job off its list; a reset puts it back
	 * (drm_sched_stop()).  Without one it goes back here, or it would
	 * never be freed: the card is gone (remove fails what it had), a
	 * function reset is under way, it finished, or its queue still moves.
	 */
	if (!drm_dev_enter(&sdev->drm, &idx)) {
		stat = DRM_GPU_SCHED_STAT_ENODEV;
		goto requeue;
	}
	/* An interrupt that never came (its CPU went away): the card's word says. */
	spyre_queue_signal(job->queue);
	if (spyre_job_hung(job) && spyre_device_recover(sdev, sched_job)) {
		drm_dev_exit(idx);
		return stat;
	}
	drm_dev_exit(idx);
requeue:
	spin_lock(&sched->job_list_lock);
	list_add(&sched_job->list, &sched->pending_list);
	spin_unlock(&sched->job_list_lock);
	return stat;
}

/* Drop the job's references to its buffers (NULL entries from a failed lookup too). */
static void spyre_job_put_bos(struct spyre_job *job)
{
	u32 i;

	if (!job->bos)
		return;
	for (i = 0; i < job->bo_count; i++)
		drm_gem_object_put(job->bos[i]);
	kvfree(job->bos);
	job->bos = NULL;
}

static void spyre_job_free(struct drm_sched_job *sched_job)
{
	struct spyre_job *job = to_spyre_job(sched_job);

	struct spyre_file *sfile = job->sfile;

	drm_sched_job_cleanup(sched_job);
	/* Freed without running again after a reset (the card went away). */
	spyre_job_reclaim_slot(job);
	spyre_job_slot_release(job);
	/* Never ran: failed in the queue (its file was released, killed). */
	spyre_job_dequeued(job);
	spyre_job_put_bos(job);
	dma_fence_put(job->hw_fence);
	kfree(job);
	/* Last: the file's release may free it once this reads 0. */
	if (sfile && atomic_dec_and_test(&sfile->live_jobs))
		wake_up_var(&sfile->live_jobs);
}

static const struct drm_sched_backend_ops spyre_sched_ops = {
	.prepare_job = spyre_job_prepare,
	.run_job = spyre_job_run,
	.timedout_job = spyre_job_timedout,
	.free_job = spyre_job_free,
};

u32 spyre_queue_ctrl(struct spyre_queue *q)
{
	/* Queue N has priority N: the uapi's "queue 3 is the most urgent". */
	return SPYRE_QCTRL_ENABLE | q->index << SPYRE_QCTRL_PRIORITY_SHIFT;
}

/* Program the rings into the card (at probe and after a reset). */
int spyre_queues_hw_init(struct spyre_drm_device *sdev)
{
	int i;

	for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
		struct spyre_queue *q = &sdev->queues[i];
		u32 base = SPYRE_REG_QUEUE(i);

		q->tail = 0;
		WRITE_ONCE(q->head, 0);
		q->last_progress = ktime_get();
		spyre_wr32(sdev, base + SPYRE_QREG_BASE_LO, lower_32_bits(q->ring_dma));
		spyre_wr32(sdev, base + SPYRE_QREG_BASE_HI, upper_32_bits(q->ring_dma));
		spyre_wr32(sdev, base + SPYRE_QREG_SIZE, SPYRE_RING_ENTRIES);
		spyre_wr32(sdev, base + SPYRE_QREG_CONTEXT, SPYRE_DRIVER_CTX);
		spyre_wr32(sdev, base + SPYRE_QREG_CTRL, spyre_queue_ctrl(q));
		if (spyre_rd32(sdev, base + SPYRE_QREG_STATUS) != SPYRE_QSTATE_IDLE)
			return -EIO;
	}
	return 0;
}

int spyre_queues_init(struct spyre_drm_device *sdev)
{
	int i, ret;

	sdev->sched_wq = alloc_workqueue("spyre-sched-%s", WQ_MEM_RECLAIM, 0,
					 pci_name(sdev->pdev));
	if (!sdev->sched_wq)
		return -ENOMEM;

	for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
		struct spyre_queue *q = &sdev->queues[i];
		const struct drm_sched_init_args args = {
			.ops = &spyre_sched_ops,
			.submit_wq = sdev->sched_wq,
			.timeout_wq = sdev->reset_wq,
			.num_rqs = DRM_SCHED_PRIORITY_COUNT,
			.credit_limit = SPYRE_JOBS_IN_FLIGHT,
			.hang_limit = 0,
			.timeout = msecs_to_jiffies(spyre_job_timeout_ms),
			.name = q->name,
			.dev = sdev->drm.dev,
		};

		q->sdev = sdev;
		q->index = i;
		q->sched_list = &q->sched;
		snprintf(q->name, sizeof(q->name), "spyre-q%d", i);
		spin_lock_init(&q->fence_lock);
		INIT_LIST_HEAD(&q->inflight);
		q->fence_context = dma_fence_context_alloc(1);
		q->ring = dmam_alloc_coherent(sdev->drm.dev, SPYRE_RING_ENTRIES * SPYRE_CMD_SIZE,
					      &q->ring_dma, GFP_KERNEL);
		if (!q->ring) {
			ret = -ENOMEM;
			goto err_fini;
		}
		ret = drm_sched_init(&q->sched, &args);
		if (ret)
			goto err_fini;
	}
	/* The driver's jobs (clearing memory) go first on the top queue. */
	ret = drm_sched_entity_init(&sdev->driver_entity, DRM_SCHED_PRIORITY_KERNEL,
				    &sdev->queues[SPYRE_NUM_QUEUES - 1].sched_list, 1, NULL);
	if (ret)
		goto err_fini;
	return 0;

err_fini:
	while (i--)
		drm_sched_fini(&sdev->queues[i].sched);
	destroy_workqueue(sdev->sched_wq);
	return ret;
}

void spyre_queues_fini(struct spyre_drm_device *sdev)
{
	struct drm_sched_job *job, *tmp;
	int i;

	drm_sched_entity_destroy(&sdev->driver_entity);
	for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
		struct drm_gpu_scheduler *sched = &sdev->queues[i].sched;

		/*
		 * drm_sched_fini leaves behind finished jobs it had not freed
		 * yet, with their buffers: free them (all are done by now).
		 */
		drm_sched_wqueue_stop(sched);
		list_for_each_entry_safe(job, tmp, &sched->pending_list, list) {
			list_del_init(&job->list);
			spyre_job_free(job);
		}
		drm_sched_fini(sched);
	}
	destroy_workqueue(sdev->sched_wq);
}

/*
 * Stop the four schedulers for a reset: nothing reaches the card, and jobs
 * the card finishes from now on stay with their scheduler until
 * spyre_queues_start().  @bad is the job a timeout took off its list.
 */
void spyre_queues_stop(struct spyre_drm_device *sdev, struct drm_sched_job *bad)
{
	int i;

	for (i = 0; i < SPYRE_NUM_QUEUES; i++)
		drm_sched_stop(&sdev->queues[i].sched, bad);
}

/*
 * After a reset, with the rings programmed again: jobs that finished before
 * it complete, blamed ones fail, every other one runs again from the start.
 */
void spyre_queues_start(struct spyre_drm_device *sdev)
{
	int i;

	for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
		drm_sched_resubmit_jobs(&sdev->queues[i].sched);
		drm_sched_start(&sdev->queues[i].sched);
	}
}

int spyre_file_entities_init(struct spyre_file *sfile)
{
	int i, ret;

	for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
		ret = drm_sched_entity_init(&sfile->entities[i], DRM_SCHED_PRIORITY_NORMAL,
					    &sfile->sdev->queues[i].sched_list, 1, NULL);
		if (ret) {
			while (i--)
				drm_sched_entity_destroy(&sfile->entities[i]);
			return ret;
		}
	}
	return 0;
}

/*
 * No more jobs from @sfile.  A process that is exiting (killed, or exiting
 * with jobs queued) does not wait for its queued jobs to reach the card:
 * they are failed without running (drm_sched_entity_fini(), -ESRCH), so
 * its exit never waits on the card.  Any other close waits, killably, for
 * them to be taken by the schedulers first, as drm_sched_entity_destroy()
 * does.  Jobs already on the card still run: spyre_file_wait_jobs() waits
 * for them.
 */
void spyre_file_entities_fini(struct spyre_file *sfile)
{
	bool exiting = current->flags & PF_EXITING;
	int i;

	for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
		if (exiting)
			drm_sched_entity_fini(&sfile->entities[i]);
		else
			drm_sched_entity_destroy(&sfile->entities[i]);
	}
}

/*
 * Wait for @q's jobs of @sfile up to @last (that entity's last pushed job)
 * that are still pending: a job whose dependency failed finishes without
 * running, possibly before the ones ahead of it leave the card.
 */
static int spyre_queue_wait_file(struct spyre_queue *q, struct spyre_file *sfile,
				 struct dma_fence *last, bool intr)
{
	struct drm_sched_job *s_job;
	struct dma_fence *fence;
	long ret;

	for (;;) {
		fence = NULL;
		spin_lock(&q->sched.job_list_lock);
		list_for_each_entry(s_job, &q->sched.pending_list, list) {
			struct dma_fence *finished = &s_job->s_fence->finished;

			if (to_spyre_job(s_job)->sfile != sfile ||
			    dma_fence_is_signaled(finished) || dma_fence_is_later(finished, last))
				continue;
			fence = dma_fence_get(finished);
			break;
		}
		spin_unlock(&q->sched.job_list_lock);
		if (!fence)
			return 0;
		ret = dma_fence_wait(fence, intr);
		dma_fence_put(fence);
		if (ret)
			return ret;
	}
}

/*
 * Wait until every job @sfile submitted so far has finished or was failed,
 * queued or on the card, whatever buffers it listed: any of them could
 * use any address of the file.  Jobs submitted meanwhile are not waited
 * for.  A hung job ends at the job timeout's reset.  With @intr a signal
 * ends the wait early (-ERESTARTSYS); 0 once they are all done.
 */
int spyre_file_wait_jobs(struct spyre_file *sfile, bool intr)
{
	struct dma_fence *last[SPYRE_NUM_QUEUES];
	long ret = 0;
	int i;

	mutex_lock(&sfile->submit_lock);
	for (i = 0; i < SPYRE_NUM_QUEUES; i++)
		last[i] = dma_fence_get(sfile->last_fence[i]);
	mutex_unlock(&sfile->submit_lock);
	for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
		if (!last[i])
			continue;
		/* Every earlier job of the entity reached run_job by then. */
		if (!ret)
			ret = dma_fence_wait(last[i], intr);
		if (!ret)
			ret = spyre_queue_wait_file(&sfile->sdev->queues[i], sfile, last[i], intr);
		dma_fence_put(last[i]);
	}
	return ret;
}

/* The file is gone: drop what it kept of its last jobs. */
void spyre_file_jobs_fini(struct spyre_file *sfile)
{
	int i;

	for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
		dma_fence_put(sfile->last_fence[i]);
		sfile->last_fence[i] = NULL;
	}
}

/*
 * Argument checks that need no lookups; split out so KUnit can reach them
 * (with a NULL @dev).  Each failed check says which field it refused.
 */
int spyre_submit_check_args(struct drm_device *dev, const struct drm_spyre_submit *args)
{
	u64 commands = args->commands;

	if (args->flags) {
		drm_dbg(dev, "submit: flags 0x%x: must be 0\n", args->flags);
		return -EINVAL;
	}
	if (args->reserved) {
		drm_dbg(dev, "submit: reserved 0x%llx: must be 0\n", args->reserved);
		return -EINVAL;
	}
	if (args->queue >= DRM_SPYRE_NUM_QUEUES) {
		drm_dbg(dev, "submit: queue %u: the card has %u\n", args->queue,
			DRM_SPYRE_NUM_QUEUES);
		return -EINVAL;
	}
	if (!args->command_count || args->command_count > DRM_SPYRE_MAX_SUBMIT_COMMANDS) {
		drm_dbg(dev, "submit: command_count %u: not 1..%u\n", args->command_count,
			DRM_SPYRE_MAX_SUBMIT_COMMANDS);
		return -EINVAL;
	}
	if (!IS_ALIGNED(commands, SPYRE_CMD_SIZE)) {
		drm_dbg(dev, "submit: commands 0x%llx: not %d-byte aligned\n", commands,
			SPYRE_CMD_SIZE);
		return -EINVAL;
	}
	if (commands < SPYRE_VA_START || commands >= SPYRE_VA_END ||
	    (u64)args->command_count * SPYRE_CMD_SIZE > SPYRE_VA_END - commands) {
		drm_dbg(dev, "submit: commands 0x%llx (%u commands): outside the address space\n",
			commands, args->command_count);
		return -EINVAL;
	}
	if (!args->bo_count || args->bo_count > DRM_SPYRE_MAX_SUBMIT_BOS) {
		drm_dbg(dev, "submit: bo_count %u: not 1..%u\n", args->bo_count,
			DRM_SPYRE_MAX_SUBMIT_BOS);
		return -EINVAL;
	}
	if (args->in_syncobj_count > DRM_SPYRE_MAX_SUBMIT_SYNCOBJS) {
		drm_dbg(dev, "submit: in_syncobj_count %u: more than %u\n",
			args->in_syncobj_count, DRM_SPYRE_MAX_SUBMIT_SYNCOBJS);
		return -EINVAL;
	}
	if (!args->out_syncobj && args->out_syncobj_point) {
		drm_dbg(dev, "submit: out_syncobj_point %llu without an out_syncobj\n",
			args->out_syncobj_point);
		return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(spyre_submit_check_args);

/*
 * The command buffer must lie inside one of the job's buffers.  Searched
 * from the last: libspyre lists the buffer holding the commands last (as
 * i915's execbuffer does its batch), so a graph's SUBMIT of ~80 buffers
 * takes one mapping lookup, not one per buffer.
 */
static bool spyre_submit_commands_in_bos(struct spyre_job *job)
{
	u64 end = job->commands + (u64)job->command_count * SPYRE_CMD_SIZE;
	u32 i;

	for (i = job->bo_count; i-- > 0;) {
		struct spyre_bo *bo = to_spyre_bo(job->bos[i]);
		u64 start = spyre_bo_device_addr(bo, &job->sfile->ctx);

		if (start && job->commands >= start && end <= start + job->bos[i]->size)
			return true;
	}
	return false;
}

/*
 * The job's buffers, by handle, as drm_gem_objects_lookup() finds them but
 * with the array charged to the submitter's memory cgroup (queued jobs
 * hold it).  On failure job->bos holds the objects found so far (or NULL).
 */
static int spyre_submit_lookup_bos(struct spyre_job *job, struct drm_file *file, u64 user_ptr)
{
	u32 __user *handles = u64_to_user_ptr(user_ptr);
	u32 i, handle;

	job->bos = kvcalloc(job->bo_count, sizeof(*job->bos), GFP_KERNEL_ACCOUNT);
	if (!job->bos)
		return -ENOMEM;
	for (i = 0; i < job->bo_count; i++) {
		if (get_user(handle, handles + i))
			return -EFAULT;
		job->bos[i] = drm_gem_object_lookup(file, handle);
		if (!job->bos[i])
			return -ENOENT;
	}
	return 0;
}

static int spyre_submit_add_syncobjs(struct spyre_job *job, struct drm_file *file,
				     u64 user_ptr, u32 count)
{
	u32 __user *handles = u64_to_user_ptr(user_ptr);
	u32 i, handle;
	int ret;

	for (i = 0; i < count; i++) {
		if (get_user(handle, handles + i))
			return -EFAULT;
		ret = drm_sched_job_add_syncobj_dependency(&job->base, file, handle, 0);
		if (ret)
			return ret;
	}
	return 0;
}

/* Make the job wait for its buffers' users, then publish its fence on them. */
static int spyre_submit_attach(struct spyre_job *job, struct drm_syncobj *out,
			       struct dma_fence_chain *chain, u64 point, u64 *job_id)
{
	struct spyre_file *sfile = job->sfile;
	struct ww_acquire_ctx ticket;
	struct dma_fence *fence;
	u32 i;
	int ret;

	ret = drm_gem_lock_reservations(job->bos, job->bo_count, &ticket);
	if (ret)
		return ret == -EALREADY ? -EINVAL : ret;	/* a handle listed twice */
	for (i = 0; i < job->bo_count; i++) {
		ret = dma_resv_reserve_fences(job->bos[i]->resv, 1);
		if (ret)
			goto err_unlock;
		ret = drm_sched_job_add_implicit_dependencies(&job->base, job->bos[i], true);
		if (ret)
			goto err_unlock;
	}

	mutex_lock(&sfile->submit_lock);
	drm_sched_job_arm(&job->base);
	fence = &job->base.s_fence->finished;
	for (i = 0; i < job->bo_count; i++)
		dma_resv_add_fence(job->bos[i]->resv, fence, DMA_RESV_USAGE_WRITE);
	/* Once pushed the job may finish and be freed: unlock first. */
	drm_gem_unlock_reservations(job->bos, job->bo_count, &ticket);
	*job_id = fence->seqno;
	dma_fence_put(sfile->last_fence[job->queue->index]);
	sfile->last_fence[job->queue->index] = dma_fence_get(fence);
	if (out && point)
		drm_syncobj_add_point(out, chain, fence, point);
	else if (out)
		drm_syncobj_replace_fence(out, fence);
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&sfile->submit_lock);
	return 0;

err_unlock:
	drm_gem_unlock_reservations(job->bos, job->bo_count, &ticket);
	return ret;
}

/*
 * Fill @bytes at @va in the driver's context with @pattern on the card, and
 * wait for it: how device memory is cleared before a client gets it.
 */
int spyre_driver_fill(struct spyre_drm_device *sdev, u64 va, u64 bytes, u64 pattern)
{
	struct dma_fence *fence;
	struct spyre_job *job;
	int ret;

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job)
		return -ENOMEM;
	job->ctx_id = SPYRE_DRIVER_CTX;
	job->queue = &sdev->queues[SPYRE_NUM_QUEUES - 1];
	job->commands = SPYRE_DRIVER_CMDS_VA;
	job->command_count = 1;
	ret = drm_sched_job_init(&job->base, &sdev->driver_entity, 1, NULL, 0);
	if (ret) {
		kfree(job);
		return ret;
	}

	mutex_lock(&sdev->driver_job_lock);
	spyre_cmd_encode3(sdev->driver_cmds, SPYRE_OP_DMA_FILL, va, bytes, pattern);
	drm_sched_job_arm(&job->base);
	fence = dma_fence_get(&job->base.s_fence->finished);
	drm_sched_entity_push_job(&job->base);
	ret = dma_fence_wait(fence, false);
	if (!ret)
		ret = fence->error;
	dma_fence_put(fence);
	mutex_unlock(&sdev->driver_job_lock);
	return ret;
}

int spyre_submit_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct spyre_drm_device *sdev = to_spyre_drm_device(dev);
	struct spyre_file *sfile = file->driver_priv;
	struct drm_spyre_submit *args = data;
	struct dma_fence_chain *chain = NULL;
	struct drm_syncobj *out = NULL;
	struct spyre_job *job;
	int ret;

	ret = spyre_submit_check_args(dev, args);
	if (ret)
		return ret;
	if (READ_ONCE(sfile->banned))
		return -ECANCELED;
	if (READ_ONCE(sdev->wedged))
		return -EIO;
	/* No file or user pins unbounded kernel memory in queued jobs. */
	ret = spyre_limits_queue_job(sfile);
	if (ret)
		return ret;

	if (args->out_syncobj) {
		out = drm_syncobj_find(file, args->out_syncobj);
		if (!out) {
			ret = -ENOENT;
			goto err_dequeue;
		}
		if (args->out_syncobj_point) {
			chain = dma_fence_chain_alloc();
			if (!chain) {
				ret = -ENOMEM;
				goto err_put_syncobj;
			}
		}
	}

	job = kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT);
	if (!job) {
		ret = -ENOMEM;
		goto err_free_chain;
	}
	job->sfile = sfile;
	job->queue = &sdev->queues[args->queue];
	job->commands = args->commands;
	job->command_count = args->command_count;
	/* On failure the array holds the objects found so far (or NULL). */
	job->bo_count = args->bo_count;
	ret = spyre_submit_lookup_bos(job, file, args->bo_handles);
	if (ret)
		goto err_free_job;
	if (!spyre_submit_commands_in_bos(job)) {
		ret = -EINVAL;
		goto err_free_job;
	}

	ret = drm_sched_job_init(&job->base, &sfile->entities[args->queue], 1, sfile,
				 file->client_id);
	if (ret)
		goto err_free_job;
	ret = spyre_submit_add_syncobjs(job, file, args->in_syncobjs, args->in_syncobj_count);
	if (ret)
		goto err_cleanup_job;
	/* Counted before the push: once pushed it may run and be freed. */
	job->queued = true;
	atomic_inc(&sfile->live_jobs);
	ret = spyre_submit_attach(job, out, chain, args->out_syncobj_point, &args->job_id);
	if (ret) {
		job->queued = false;
		atomic_dec(&sfile->live_jobs);
		goto err_cleanup_job;
	}
	atomic64_inc(&sfile->jobs_submitted);

	if (out)
		drm_syncobj_put(out);
	return 0;

err_cleanup_job:
	drm_sched_job_cleanup(&job->base);
err_free_job:
	spyre_job_put_bos(job);
	kfree(job);
err_free_chain:
	dma_fence_chain_free(chain);
err_put_syncobj:
	if (out)
		drm_syncobj_put(out);
err_dequeue:
	spyre_limits_job_dequeued(sfile);
	return ret;
}

/*
 * Wait out every holder of a queue's fence lock: a reader that found one
 * of @sdev's hardware fences in flight under it is done with what it read.
 */
void spyre_queues_fence_barrier(struct spyre_drm_device *sdev)
{
	int i;

	for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
		spin_lock_irq(&sdev->queues[i].fence_lock);
		spin_unlock_irq(&sdev->queues[i].fence_lock);
	}
}
