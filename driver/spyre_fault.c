// SPDX-License-Identifier: GPL-2.0-only
/*
 * Faults and recovery: the card's failed commands and MMU faults (the
 * error work the misc interrupt hands off to), the fault logs they feed,
 * and the reset that brings a hung card back.  This file calls down into
 * the queue and hardware layers; they call into it only to hand off (the
 * interrupt schedules the error work, the scheduler's timeout recovers).
 *
 * Copyright 2026 The Spyre emulation project
 */

#include <linux/kobject.h>
#include <linux/pid.h>
#include <linux/sched/task.h>
#include <linux/spinlock.h>
#include <linux/unaligned.h>
#include <linux/workqueue.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "spyre_drv.h"
#include "spyre_fault.h"
#include "spyre_hw.h"
#include "spyre_job.h"

/* Keep @fault in the fault log, dropping the oldest when it is full. */
static void spyre_fault_log_add(struct spyre_drm_device *sdev,
				const struct spyre_fault_record *fault)
{
	spin_lock(&sdev->fault_lock);
	sdev->faults[sdev->fault_count % SPYRE_FAULT_LOG_SIZE] = *fault;
	sdev->fault_count++;
	spin_unlock(&sdev->fault_lock);
}

/*
 * The newest record on @queue if no job owns it yet (the card reported the
 * fault before the command that caused it stopped the queue), else NULL.
 */
static struct spyre_fault_record *
spyre_fault_log_unowned_locked(struct spyre_drm_device *sdev, u32 queue)
{
	u64 i;

	lockdep_assert_held(&sdev->fault_lock);
	for (i = sdev->fault_count; i > 0 && sdev->fault_count - i < SPYRE_FAULT_LOG_SIZE; i--) {
		struct spyre_fault_record *f = &sdev->faults[(i - 1) % SPYRE_FAULT_LOG_SIZE];

		if (f->queue == queue)
			return !f->job_id && !f->pid ? f : NULL;
	}
	return NULL;
}

/* A copy of the newest fault on @queue if it has no job yet; else false. */
static bool spyre_fault_log_peek_unowned(struct spyre_drm_device *sdev, u32 queue,
					 struct spyre_fault_record *out)
{
	struct spyre_fault_record *f;

	spin_lock(&sdev->fault_lock);
	f = spyre_fault_log_unowned_locked(sdev, queue);
	if (f)
		*out = *f;
	spin_unlock(&sdev->fault_lock);
	return f;
}

/*
 * The card reports a fault before the command that caused it stops its
 * queue: give the newest fault on @queue with no job yet its job and
 * submitter from @owner.
 */
static void spyre_fault_log_set_owner(struct spyre_drm_device *sdev, u32 queue,
				      const struct spyre_fault_record *owner)
{
	struct spyre_fault_record *f;

	spin_lock(&sdev->fault_lock);
	f = spyre_fault_log_unowned_locked(sdev, queue);
	if (f) {
		f->ctx = owner->ctx;
		f->job_id = owner->job_id;
		f->pid = owner->pid;
		memcpy(f->comm, owner->comm, sizeof(f->comm));
	}
	spin_unlock(&sdev->fault_lock);
}

/* Copy the fault log to @log (SPYRE_FAULT_LOG_SIZE records); faults ever logged. */
u64 spyre_fault_log_copy(struct spyre_drm_device *sdev, struct spyre_fault_record *log)
{
	u64 count;

	spin_lock(&sdev->fault_lock);
	memcpy(log, sdev->faults, sizeof(sdev->faults));
	count = sdev->fault_count;
	spin_unlock(&sdev->fault_lock);
	return count;
}

/*
 * Keep @fault in its file's own log (DRM_SPYRE_QUERY_FAULTS).  Called under
 * the queue's fence_lock, with the faulting job still in flight, so @sfile
 * is alive and interrupts are off.
 */
static void spyre_file_fault_add(struct spyre_file *sfile,
				 const struct spyre_fault_record *fault)
{
	spin_lock(&sfile->fault_lock);
	sfile->faults[sfile->fault_count % SPYRE_FILE_FAULT_LOG_SIZE] = *fault;
	sfile->fault_count++;
	spin_unlock(&sfile->fault_lock);
}

/* Copy a file's log to @log (SPYRE_FILE_FAULT_LOG_SIZE records); faults ever logged. */
u64 spyre_file_fault_log_copy(struct spyre_file *sfile, struct spyre_fault_record *log)
{
	unsigned long flags;
	u64 count;

	spin_lock_irqsave(&sfile->fault_lock, flags);
	memcpy(log, sfile->faults, sizeof(sfile->faults));
	count = sfile->fault_count;
	spin_unlock_irqrestore(&sfile->fault_lock, flags);
	return count;
}

/* Keep @rec in its file's job error log; like spyre_file_fault_add(). */
static void spyre_file_job_error_add(struct spyre_file *sfile,
				     const struct spyre_job_error_record *rec)
{
	spin_lock(&sfile->fault_lock);
	sfile->job_errors[sfile->job_error_count % SPYRE_FILE_JOB_ERROR_LOG_SIZE] = *rec;
	sfile->job_error_count++;
	spin_unlock(&sfile->fault_lock);
}

/* Copy a file's job error log to @log; failed jobs ever logged. */
u64 spyre_file_job_error_log_copy(struct spyre_file *sfile,
				  struct spyre_job_error_record *log)
{
	unsigned long flags;
	u64 count;

	spin_lock_irqsave(&sfile->fault_lock, flags);
	memcpy(log, sfile->job_errors, sizeof(sfile->job_errors));
	count = sfile->job_error_count;
	spin_unlock_irqrestore(&sfile->fault_lock, flags);
	return count;
}

/*
 * Why the command that stopped queue @q failed: its status, its index in
 * the CALLed command buffer and the engine's record of a failed LAUNCH.
 */
static void spyre_job_error_read(struct spyre_queue *q, u32 status,
				 struct spyre_job_error_record *rec)
{
	struct spyre_drm_device *sdev = q->sdev;
	u32 base = SPYRE_REG_QUEUE(q->index);
	u32 i;

	rec->time = ktime_get();
	rec->queue = q->index;
	rec->cmd_status = status;
	rec->command = spyre_rd32(sdev, base + SPYRE_QREG_ERROR_SUB_INDEX);
	rec->engine_status = spyre_rd32(sdev, base + SPYRE_QREG_ENGINE_STATUS);
	if (!rec->engine_status ||
	    (sdev->info.hw_version & SPYRE_VERSION_MINOR_MASK) < SPYRE_HW_MINOR_ENGINE_RECORD)
		return;
	rec->engine_core = spyre_rd32(sdev, base + SPYRE_QREG_ENGINE_CORE);
	rec->engine_site = spyre_rd32(sdev, base + SPYRE_QREG_ENGINE_SITE);
	rec->engine_index = spyre_rd32(sdev, base + SPYRE_QREG_ENGINE_INDEX);
	rec->engine_wait = spyre_rd32(sdev, base + SPYRE_QREG_ENGINE_WAIT);
	rec->engine_stream = spyre_rd32(sdev, base + SPYRE_QREG_ENGINE_STREAM);
	rec->engine_sticks_done = spyre_rd32(sdev, base + SPYRE_QREG_ENGINE_STICKS_DONE);
	rec->engine_sticks_total = spyre_rd32(sdev, base + SPYRE_QREG_ENGINE_STICKS_TOTAL);
	for (i = 0; i < SPYRE_ENGINE_DETAIL_BYTES; i += 4)
		put_unaligned_le32(spyre_rd32(sdev, base + SPYRE_QREG_ENGINE_DETAIL + i),
				   rec->engine_detail + i);
	/* The card pads with NULs; a card that did not is cut, not overrun. */
	rec->engine_detail[SPYRE_ENGINE_DETAIL_BYTES - 1] = '\0';
}

/*
 * The submitter of a failed job, for the fault log: its process is pinned
 * under the fence lock, its name read afterwards (task_lock must not nest
 * in an interrupt-safe lock).
 */
static struct pid *spyre_fault_owner_pid(struct spyre_hw_fence *f)
{
	struct drm_file *file = f->sfile ? READ_ONCE(f->sfile->file) : NULL;
	struct pid *pid = NULL;

	/* NULL once the file is released (spyre_file_detach()): unknown. */
	if (file) {
		rcu_read_lock();
		pid = get_pid(rcu_dereference(file->pid));
		rcu_read_unlock();
	}
	return pid;
}

static void spyre_fault_set_comm(struct spyre_fault_record *owner, struct pid *pid)
{
	struct task_struct *task;

	owner->pid = pid_vnr(pid);
	task = get_pid_task(pid, PIDTYPE_TGID);
	if (task) {
		get_task_comm(owner->comm, task);
		put_task_struct(task);
	}
	put_pid(pid);
}

/*
 * A command failed and stopped its queue: fail the job whose CALL it was,
 * ban its file, and let the queue go on (its FENCE then signals the job).
 * For an MMU fault, the fault log learns the job and its submitter before
 * the job can signal: @fault if the card reported it in this pass (then
 * logged here; returns true), else the record logged when it came.
 */
static bool spyre_queue_handle_error(struct spyre_queue *q, struct spyre_fault_record *fault)
{
	struct spyre_drm_device *sdev = q->sdev;
	u32 base = SPYRE_REG_QUEUE(q->index);
	u32 index = spyre_rd32(sdev, base + SPYRE_QREG_ERROR_INDEX);
	u32 status = spyre_rd32(sdev, base + SPYRE_QREG_LAST_STATUS);
	bool mmu = status == SPYRE_CMD_STATUS_MMU_FAULT;
	bool ours = fault && fault->queue == q->index;
	struct spyre_fault_record owner = { .ctx = U32_MAX };
	struct spyre_job_error_record job_error = { };
	struct spyre_fault_record rec = { };
	struct spyre_hw_fence *f;
	struct pid *pid = NULL;
	unsigned long flags;
	bool have_rec = false;

	/* The fault as the card reported it, for the job's own file. */
	if (mmu && ours) {
		rec = *fault;
		have_rec = true;
	} else if (mmu) {
		have_rec = spyre_fault_log_peek_unowned(sdev, q->index, &rec);
	}

	spyre_job_error_read(q, status, &job_error);
	spin_lock_irqsave(&q->fence_lock, flags);
	list_for_each_entry(f, &q->inflight, link) {
		if (f->call_index != index)
			continue;
		dma_fence_set_error(&f->base, mmu ? -EFAULT : -EIO);
		if (f->sfile) {
			WRITE_ONCE(f->sfile->banned, true);
			job_error.job_id = f->job_id;
			spyre_file_job_error_add(f->sfile, &job_error);
		}
		owner.job_id = f->job_id;
		owner.ctx = f->sfile ? f->sfile->ctx.id : SPYRE_DRIVER_CTX;
		if (mmu)
			pid = spyre_fault_owner_pid(f);
		/* The job holds its hardware context: slot cannot change here. */
		if (have_rec && f->sfile && rec.slot == READ_ONCE(f->sfile->ctx.slot)) {
			rec.ctx = owner.ctx;
			rec.job_id = owner.job_id;
			spyre_file_fault_add(f->sfile, &rec);
		}
		break;
	}
	spin_unlock_irqrestore(&q->fence_lock, flags);
	if (pid)
		spyre_fault_set_comm(&owner, pid);
	if (ours) {
		if (mmu) {
			fault->ctx = owner.ctx;
			fault->job_id = owner.job_id;
			fault->pid = owner.pid;
			memcpy(fault->comm, owner.comm, sizeof(fault->comm));
		}
		spyre_fault_log_add(sdev, fault);
	} else if (mmu) {
		spyre_fault_log_set_owner(sdev, q->index, &owner);
	}
	drm_dbg(&sdev->drm, "queue %u: command %u (%u inside it) failed with status %u, engine status %u: %s\n",
		q->index, index, job_error.command, status, job_error.engine_status,
		job_error.engine_detail);
	spyre_wr32(sdev, base + SPYRE_QREG_CTRL, spyre_queue_ctrl(q) | SPYRE_QCTRL_RESUME);
	return ours;
}

/* Handle every stopped queue; returns whether @fault was logged on the way. */
static bool spyre_queues_handle_errors(struct spyre_drm_device *sdev,
				       struct spyre_fault_record *fault)
{
	bool logged = false;
	int i;

	for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
		struct spyre_queue *q = &sdev->queues[i];
		u32 state = spyre_rd32(sdev, SPYRE_REG_QUEUE(i) + SPYRE_QREG_STATUS);

		if (state == SPYRE_QSTATE_STOPPED && spyre_queue_handle_error(q, fault))
			logged = true;
	}
	return logged;
}

/* Read and acknowledge the card's fault record; false if it has none. */
static bool spyre_fault_read(struct spyre_drm_device *sdev, struct spyre_fault_record *fault)
{
	u32 status = spyre_rd32(sdev, SPYRE_REG_FAULT_STATUS);

	if (!(status & SPYRE_FAULT_VALID))
		return false;
	fault->time = ktime_get();
	fault->va = spyre_rd32(sdev, SPYRE_REG_FAULT_ADDR_LO) |
		    (u64)spyre_rd32(sdev, SPYRE_REG_FAULT_ADDR_HI) << 32;
	fault->slot = spyre_rd32(sdev, SPYRE_REG_FAULT_CONTEXT);
	fault->ctx = U32_MAX;
	fault->queue = spyre_rd32(sdev, SPYRE_REG_FAULT_QUEUE);
	fault->access = spyre_rd32(sdev, SPYRE_REG_FAULT_ACCESS);
	fault->reason = spyre_rd32(sdev, SPYRE_REG_FAULT_REASON);
	fault->more = status & SPYRE_FAULT_OVERFLOW;
	drm_dbg(&sdev->drm, "MMU fault: context %u queue %u %s of 0x%llx, reason %u%s\n",
		fault->slot, fault->queue,
		fault->access == SPYRE_ACCESS_WRITE ? "write" : "read", fault->va,
		fault->reason, fault->more ? " (and more)" : "");
	spyre_wr32(sdev, SPYRE_REG_FAULT_STATUS, 0);
	return true;
}

/*
 * Failed commands and MMU faults, out of interrupt context, on the reset
 * workqueue: never beside a reset.  Between a function reset's prepare and
 * done the card is not there to ask; the reset clears what it reported,
 * and the replayed job fails again if it must.
 */
static void spyre_error_work(struct work_struct *work)
{
	struct spyre_drm_device *sdev = container_of(work, struct spyre_drm_device, error_work);
	struct spyre_fault_record fault = { };
	bool faulted;
	int idx;

	if (sdev->function_reset || !drm_dev_enter(&sdev->drm, &idx))
		return;
	faulted = spyre_fault_read(sdev, &fault);
	if (!spyre_queues_handle_errors(sdev, faulted ? &fault : NULL) && faulted)
		spyre_fault_log_add(sdev, &fault);
	drm_dev_exit(idx);
}

static void spyre_reset_wq_release(struct drm_device *dev, void *arg)
{
	struct spyre_drm_device *sdev = arg;

	destroy_workqueue(sdev->reset_wq);
}

/*
 * The fault log, the error work the misc interrupt schedules, resets.
 * Before the schedulers (their timeout workqueue) and released after them.
 */
int spyre_fault_init(struct spyre_drm_device *sdev)
{
	spin_lock_init(&sdev->fault_lock);
	mutex_init(&sdev->reset_lock);
	INIT_WORK(&sdev->error_work, spyre_error_work);
	sdev->reset_wq = alloc_ordered_workqueue("spyre-reset-%s", 0, pci_name(sdev->pdev));
	if (!sdev->reset_wq)
		return -ENOMEM;
	return drmm_add_action_or_reset(&sdev->drm, spyre_reset_wq_release, sdev);
}

/* After the card stopped interrupting: no error work runs past this. */
void spyre_fault_fini(struct spyre_drm_device *sdev)
{
	cancel_work_sync(&sdev->error_work);
}

/* After a reset: contexts, rings and interrupts as they were. */
static int spyre_device_restore(struct spyre_drm_device *sdev)
{
	if (spyre_hw_has_clock(sdev))
		spyre_wr32(sdev, SPYRE_REG_CLOCK, READ_ONCE(sdev->clock));
	spyre_mmu_slots_restore(sdev);
	spyre_wr32(sdev, SPYRE_REG_INT_MASK, 0);
	return spyre_queues_hw_init(sdev);
}

static char *spyre_reset_event[] = { "SPYRE_RESET=1", NULL };

/*
 * A reset the card did not finish: it may still be running what it had,
 * through page tables and into buffers the driver would free next.  Stop
 * its bus mastering, so nothing of it reaches host memory any more, and
 * wedge it: every job fails with -EIO (status FAILED), no file is blamed
 * for it, and SUBMIT and device buffers are refused with EIO until a later
 * reset completes (debugfs reset, a function reset) or the device is
 * unbound.
 */
static void spyre_device_wedge(struct spyre_drm_device *sdev)
{
	if (!sdev->wedged)
		drm_err(&sdev->drm,
			"card did not become ready after a reset: wedged (bus mastering off, jobs fail with EIO)\n");
	WRITE_ONCE(sdev->wedged, true);
	pci_clear_master(sdev->pdev);
}

/* A reset completed: a wedged card works again. */
static void spyre_device_unwedge(struct spyre_drm_device *sdev)
{
	if (!sdev->wedged)
		return;
	pci_set_master(sdev->pdev);
	WRITE_ONCE(sdev->wedged, false);
	drm_info(&sdev->drm, "card ready after a reset: no longer wedged\n");
}

/*
 * The card was reset and the schedulers are stopped: fail what was in
 * flight (blamed jobs with -ETIMEDOUT, the rest to be replayed), program
 * the card again if it finished resetting (@ready), else wedge it if it is
 * still @present, and restart the schedulers (on a wedged or removed card
 * replayed jobs fail).  Under reset_lock.
 */
static unsigned int spyre_device_reset_finish(struct spyre_drm_device *sdev, bool present,
					      bool ready)
{
	unsigned int replayed = 0;
	int i;

	lockdep_assert_held(&sdev->reset_lock);
	if (ready)
		spyre_device_unwedge(sdev);
	else if (present)
		spyre_device_wedge(sdev);
	for (i = 0; i < SPYRE_NUM_QUEUES; i++)
		replayed += spyre_queue_cancel_inflight(&sdev->queues[i],
							ready || !present ? -ECANCELED : -EIO);
	if (ready && spyre_device_restore(sdev)) {
		drm_err(&sdev->drm, "card refused its rings after a reset\n");
		spyre_device_wedge(sdev);
	}
	spyre_queues_start(sdev);
	sdev->reset_count++;
	return replayed;
}

/*
 * Reset the card and bring every queue back; on the reset workqueue (the
 * schedulers' timeout handler, or spyre_device_reset_request()).  For a
 * @bad job (one that hung), that job and the one every other queue stalled
 * on as long fail with -ETIMEDOUT and ban their files; every other job in
 * flight runs again from the start.  Jobs the card finished before the reset
 * are not run again.  Returns false when it could not reset (inside a
 * function reset, or the card is gone): then @bad is still the caller's.
 */
bool spyre_device_recover(struct spyre_drm_device *sdev, struct drm_sched_job *bad)
{
	struct dma_fence *bad_fence = bad ? to_spyre_job(bad)->hw_fence : NULL;
	ktime_t now = ktime_get();
	bool ready;
	int i, idx;

	/* Inside a function reset the schedulers are stopped: its done restarts them. */
	if (sdev->function_reset || !drm_dev_enter(&sdev->drm, &idx))
		return false;
	mutex_lock(&sdev->reset_lock);
	if (bad)
		drm_err(&sdev->drm, "queue %u: job hung; resetting the card\n",
			to_spyre_job(bad)->queue->index);
	else
		drm_info(&sdev->drm, "resetting the card on request\n");
	spyre_queues_stop(sdev, bad);
	ready = !spyre_hw_reset(sdev);
	/* What the card finished before it stopped is done, not replayed. */
	for (i = 0; i < SPYRE_NUM_QUEUES; i++)
		spyre_queue_signal(&sdev->queues[i]);
	for (i = 0; bad && i < SPYRE_NUM_QUEUES; i++)
		spyre_queue_blame(&sdev->queues[i], now,
				  bad->sched == &sdev->queues[i].sched ? bad_fence : NULL);
	spyre_device_reset_finish(sdev, true, ready);
	mutex_unlock(&sdev->reset_lock);
	kobject_uevent_env(&sdev->drm.dev->kobj, KOBJ_CHANGE, spyre_reset_event);
	drm_dev_exit(idx);
	return true;
}

struct spyre_reset_request {
	struct work_struct work;
	struct spyre_drm_device *sdev;
	void (*fn)(struct spyre_drm_device *sdev);
};

static void spyre_reset_request_work(struct work_struct *work)
{
	struct spyre_reset_request *r = container_of(work, struct spyre_reset_request, work);

	r->fn(r->sdev);
}

/* Run @fn on the reset workqueue and wait: resets never overlap. */
static void spyre_on_reset_wq(struct spyre_drm_device *sdev,
			      void (*fn)(struct spyre_drm_device *sdev))
{
	struct spyre_reset_request r = { .sdev = sdev, .fn = fn };

	INIT_WORK_ONSTACK(&r.work, spyre_reset_request_work);
	queue_work(sdev->reset_wq, &r.work);
	flush_work(&r.work);
	destroy_work_on_stack(&r.work);
}

static void spyre_device_reset_requested(struct spyre_drm_device *sdev)
{
	spyre_device_recover(sdev, NULL);
}

/* debugfs: reset the card, replaying every job. */
void spyre_device_reset_request(struct spyre_drm_device *sdev)
{
	spyre_on_reset_wq(sdev, spyre_device_reset_requested);
}

static void spyre_function_reset_stop(struct spyre_drm_device *sdev)
{
	mutex_lock(&sdev->reset_lock);
	sdev->function_reset = true;
	spyre_queues_stop(sdev, NULL);
	mutex_unlock(&sdev->reset_lock);
}

static void spyre_function_reset_restart(struct spyre_drm_device *sdev)
{
	unsigned int replayed;
	bool present, ready;
	int i, idx;

	if (!sdev->function_reset)
		return;
	/* Removed meanwhile: the replayed jobs fail, as at remove. */
	present = drm_dev_enter(&sdev->drm, &idx);
	mutex_lock(&sdev->reset_lock);
	/*
	 * An FLR or link reset left the card at its reset state; AER recovery
	 * of a non-fatal error reset nothing and the card may still be running
	 * what it had.  Reset it either way so the rings start from nothing.
	 */
	ready = present && !spyre_hw_reset(sdev);
	/* What the card finished before the reset is done, not replayed. */
	for (i = 0; i < SPYRE_NUM_QUEUES; i++)
		spyre_queue_signal(&sdev->queues[i]);
	replayed = spyre_device_reset_finish(sdev, present, ready);
	sdev->function_reset = false;
	mutex_unlock(&sdev->reset_lock);
	if (!present)
		return;
	if (ready)
		drm_info(&sdev->drm, "card restored after a function reset; %u jobs run again\n",
			 replayed);
	kobject_uevent_env(&sdev->drm.dev->kobj, KOBJ_CHANGE, spyre_reset_event);
	drm_dev_exit(idx);
}

/*
 * A reset of the PCI function from outside the driver (FLR through sysfs,
 * AER recovery): before it, stop the schedulers, so nothing reaches the
 * card; after it, program the card again and replay every job that was on
 * it.  No job fails and no file is banned.
 */
void spyre_function_reset_prepare(struct spyre_drm_device *sdev)
{
	spyre_on_reset_wq(sdev, spyre_function_reset_stop);
}

void spyre_function_reset_done(struct spyre_drm_device *sdev)
{
	spyre_on_reset_wq(sdev, spyre_function_reset_restart);
}
