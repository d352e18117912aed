// SPDX-License-Identifier: GPL-2.0-only
/* Copyright 2026 The Spyre emulation project */

#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/jiffies.h>

#include <kunit/visibility.h>

#include <drm/drm_drv.h>
#include <drm/drm_print.h>

#include "spyre_hw.h"

#define SPYRE_IRQ_SELFTEST_TIMEOUT_MS	1000
/* Queues stop within one DMA chunk; allow for a slow emulation host. */
#define SPYRE_RESET_TIMEOUT_US		(2 * USEC_PER_SEC)

/* Same major: the register layout this driver knows; minors only add. */
bool spyre_hw_version_supported(u32 version)
{
	return (version >> SPYRE_VERSION_MAJOR_SHIFT) == SPYRE_HW_VERSION_MAJOR;
}
EXPORT_SYMBOL_IF_KUNIT(spyre_hw_version_supported);

/* Identify the card and read its capabilities; refuse what we do not know. */
int spyre_hw_init(struct spyre_drm_device *sdev)
{
	struct spyre_hw_info *info = &sdev->info;
	u32 id = spyre_rd32(sdev, SPYRE_REG_ID);

	if (id != SPYRE_ID_MAGIC) {
		drm_err(&sdev->drm, "bad ID register 0x%08x\n", id);
		return -ENODEV;
	}
	info->hw_version = spyre_rd32(sdev, SPYRE_REG_VERSION);
	if (!spyre_hw_version_supported(info->hw_version)) {
		drm_err(&sdev->drm, "unsupported interface version 0x%08x\n",
			info->hw_version);
		return -ENODEV;
	}
	info->num_cores = spyre_rd32(sdev, SPYRE_REG_NUM_CORES);
	info->stick_bytes = spyre_rd32(sdev, SPYRE_REG_STICK_BYTES);
	info->scratchpad_bytes = spyre_rd32(sdev, SPYRE_REG_SCRATCHPAD_BYTES);
	info->num_vectors = spyre_rd32(sdev, SPYRE_REG_NUM_VECTORS);
	info->mem_bytes = spyre_rd32(sdev, SPYRE_REG_MEM_SIZE_LO) |
			  (u64)spyre_rd32(sdev, SPYRE_REG_MEM_SIZE_HI) << 32;
	info->aperture_bytes = min_t(u64, spyre_rd32(sdev, SPYRE_REG_APERTURE_SIZE),
				     pci_resource_len(sdev->pdev, SPYRE_BAR_MEM));
	if (info->num_vectors < 1) {
		drm_err(&sdev->drm, "card reports no interrupt vectors\n");
		return -ENODEV;
	}

	/* Start from a quiet card whatever a previous owner left running. */
	return spyre_hw_reset(sdev);
}

/* Abort all card work and return every register to its reset value. */
int spyre_hw_reset(struct spyre_drm_device *sdev)
{
	u32 status;
	int ret;

	spyre_wr32(sdev, SPYRE_REG_DEV_CTRL, SPYRE_DEV_CTRL_RESET);
	ret = read_poll_timeout(spyre_rd32, status, status & SPYRE_DEV_STATUS_READY,
				100, SPYRE_RESET_TIMEOUT_US, false, sdev, SPYRE_REG_DEV_STATUS);
	if (ret) {
		drm_err(&sdev->drm, "card did not finish resetting (status 0x%x)\n", status);
		return ret;
	}
	return 0;
}

static irqreturn_t spyre_irq_misc(int irq, void *arg)
{
	struct spyre_drm_device *sdev = arg;
	u32 status = spyre_rd32(sdev, SPYRE_REG_INT_STATUS) & SPYRE_INT_MISC_ALL;

	if (!status)
		return IRQ_NONE;
	spyre_wr32(sdev, SPYRE_REG_INT_STATUS, status);

	if (status & SPYRE_INT_GUEST_ERROR) {
		drm_err_ratelimited(&sdev->drm,
				    "card rejected a register access: error %u at 0x%x\n",
				    spyre_rd32(sdev, SPYRE_REG_ERR_STATUS),
				    spyre_rd32(sdev, SPYRE_REG_ERR_ADDR));
		spyre_wr32(sdev, SPYRE_REG_ERR_STATUS, 0);
	}
	if (status & (SPYRE_INT_CMD_ERROR | SPYRE_INT_MMU_FAULT))
		schedule_work(&sdev->error_work);
	if (status & SPYRE_INT_SELFTEST)
		complete(&sdev->irq_selftest_done);
	return IRQ_HANDLED;
}

static irqreturn_t spyre_irq_queue(int irq, void *arg)
{
	struct spyre_queue *q = arg;

	spyre_wr32(q->sdev, SPYRE_REG_INT_STATUS, SPYRE_INT_QUEUE_FENCE(q->index));
	spyre_queue_signal(q);
	return IRQ_HANDLED;
}

/* Keep @fault in the fault log, dropping the oldest when it is full. */
void spyre_fault_log_add(struct spyre_drm_device *sdev, const struct spyre_fault_record *fault)
{
	spin_lock(&sdev->fault_lock);
	sdev->faults[sdev->fault_count % SPYRE_FAULT_LOG_SIZE] = *fault;
	sdev->fault_count++;
	spin_unlock(&sdev->fault_lock);
}

/*
 * A copy of the newest fault on @queue if it has no job yet (the card
 * reported it in an earlier pass); false if there is none.
 */
bool spyre_fault_log_peek_unowned(struct spyre_drm_device *sdev, u32 queue,
				  struct spyre_fault_record *out)
{
	bool found = false;
	u64 i;

	spin_lock(&sdev->fault_lock);
	for (i = sdev->fault_count; i > 0 && sdev->fault_count - i < SPYRE_FAULT_LOG_SIZE; i--) {
		const struct spyre_fault_record *f = &sdev->faults[(i - 1) % SPYRE_FAULT_LOG_SIZE];

		if (f->queue != queue)
			continue;
		if (!f->job_id && !f->pid) {
			*out = *f;
			found = true;
		}
		break;
	}
	spin_unlock(&sdev->fault_lock);
	return found;
}

/*
 * Keep @fault in its file's own log (DRM_SPYRE_QUERY_FAULTS).  Called under
 * the queue's fence_lock, with the faulting job still in flight, so @sfile
 * is alive and interrupts are off.
 */
void spyre_file_fault_add(struct spyre_file *sfile, const struct spyre_fault_record *fault)
{
	spin_lock(&sfile->fault_lock);
	sfile->faults[sfile->fault_count % SPYRE_FILE_FAULT_LOG_SIZE] = *fault;
	sfile->fault_count++;
	spin_unlock(&sfile->fault_lock);
}

/*
 * The card reports a fault before the command that caused it stops its
 * queue: give the newest fault on @queue with no job yet its job and
 * submitter from @owner.
 */
void spyre_fault_log_set_owner(struct spyre_drm_device *sdev, u32 queue,
			       const struct spyre_fault_record *owner)
{
	u64 i;

	spin_lock(&sdev->fault_lock);
	for (i = sdev->fault_count; i > 0 && sdev->fault_count - i < SPYRE_FAULT_LOG_SIZE; i--) {
		struct spyre_fault_record *f = &sdev->faults[(i - 1) % SPYRE_FAULT_LOG_SIZE];

		if (f->queue != queue)
			continue;
		if (!f->job_id && !f->pid) {
			f->ctx = owner->ctx;
			f->job_id = owner->job_id;
			f->pid = owner->pid;
			memcpy(f->comm, owner->comm, sizeof(f->comm));
		}
		break;
	}
	spin_unlock(&sdev->fault_lock);
}

/* Failed commands and MMU faults, out of interrupt context. */
static void spyre_error_work(struct work_struct *work)
{
	struct spyre_drm_device *sdev = container_of(work, struct spyre_drm_device, error_work);
	struct spyre_fault_record fault = { };
	bool faulted;
	u32 status;
	int idx;

	if (!drm_dev_enter(&sdev->drm, &idx))
		return;
	status = spyre_rd32(sdev, SPYRE_REG_FAULT_STATUS);
	faulted = status & SPYRE_FAULT_VALID;
	if (faulted) {
		fault.time = ktime_get();
		fault.va = spyre_rd32(sdev, SPYRE_REG_FAULT_ADDR_LO) |
			   (u64)spyre_rd32(sdev, SPYRE_REG_FAULT_ADDR_HI) << 32;
		fault.slot = spyre_rd32(sdev, SPYRE_REG_FAULT_CONTEXT);
		fault.ctx = U32_MAX;
		fault.queue = spyre_rd32(sdev, SPYRE_REG_FAULT_QUEUE);
		fault.access = spyre_rd32(sdev, SPYRE_REG_FAULT_ACCESS);
		fault.reason = spyre_rd32(sdev, SPYRE_REG_FAULT_REASON);
		fault.more = status & SPYRE_FAULT_OVERFLOW;
		drm_dbg(&sdev->drm, "MMU fault: context %u queue %u %s of 0x%llx, reason %u%s\n",
			fault.slot, fault.queue,
			fault.access == SPYRE_ACCESS_WRITE ? "write" : "read", fault.va,
			fault.reason, fault.more ? " (and more)" : "");
		spyre_wr32(sdev, SPYRE_REG_FAULT_STATUS, 0);
	}
	if (!spyre_queues_handle_errors(sdev, faulted ? &fault : NULL) && faulted)
		spyre_fault_log_add(sdev, &fault);
	drm_dev_exit(idx);
}

int spyre_hw_irq_init(struct spyre_drm_device *sdev)
{
	struct pci_dev *pdev = sdev->pdev;
	int i, ret;

	if (sdev->info.num_vectors < SPYRE_MSIX_VECTORS) {
		drm_err(&sdev->drm, "card has %u MSI-X vectors, %d needed\n",
			sdev->info.num_vectors, SPYRE_MSIX_VECTORS);
		return -ENODEV;
	}
	/* Freed by pcim when the device is released. */
	ret = pci_alloc_irq_vectors(pdev, SPYRE_MSIX_VECTORS, SPYRE_MSIX_VECTORS, PCI_IRQ_MSIX);
	if (ret < 0) {
		drm_err(&sdev->drm, "cannot allocate MSI-X vectors: %d\n", ret);
		return ret;
	}
	sdev->info.num_vectors = ret;
	INIT_WORK(&sdev->error_work, spyre_error_work);

	ret = devm_request_irq(&pdev->dev, pci_irq_vector(pdev, SPYRE_MSIX_VECTOR_MISC),
			       spyre_irq_misc, 0, DRIVER_NAME, sdev);
	for (i = 0; i < SPYRE_NUM_QUEUES && !ret; i++)
		ret = devm_request_irq(&pdev->dev,
				       pci_irq_vector(pdev, SPYRE_MSIX_VECTOR_QUEUE(i)),
				       spyre_irq_queue, 0, sdev->queues[i].name, &sdev->queues[i]);
	if (ret) {
		drm_err(&sdev->drm, "cannot request interrupts: %d\n", ret);
		return ret;
	}
	spyre_wr32(sdev, SPYRE_REG_INT_MASK, 0);
	return 0;
}

/* After a reset: contexts, rings and interrupts as they were. */
int spyre_hw_restore(struct spyre_drm_device *sdev)
{
	spyre_mmu_slots_restore(sdev);
	spyre_wr32(sdev, SPYRE_REG_INT_MASK, 0);
	return spyre_queues_hw_init(sdev);
}

/* Ask the card to raise its misc vector and wait for the handler to see it. */
int spyre_hw_irq_selftest(struct spyre_drm_device *sdev)
{
	unsigned long left;

	reinit_completion(&sdev->irq_selftest_done);
	spyre_wr32(sdev, SPYRE_REG_IRQ_TEST, SPYRE_MSIX_VECTOR_MISC);
	left = wait_for_completion_timeout(&sdev->irq_selftest_done,
					   msecs_to_jiffies(SPYRE_IRQ_SELFTEST_TIMEOUT_MS));
	if (!left) {
		drm_err(&sdev->drm, "interrupt self-test timed out (raised %u)\n",
			spyre_rd32(sdev, SPYRE_REG_IRQ_TEST_COUNT));
		return -EIO;
	}
	sdev->irq_selftest_passed = true;
	return 0;
}

/* Leave the card quiet before the driver lets go of it. */
void spyre_hw_fini(struct spyre_drm_device *sdev)
{
	spyre_hw_reset(sdev);
}
