// SPDX-License-Identifier: GPL-2.0-only
/* Copyright 2026 The Spyre emulation project */

#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/jiffies.h>

#include <kunit/visibility.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
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
	int ret;

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
	ret = spyre_hw_reset(sdev);
	/* The card's reset choice (its modelled-clock property) until sysfs changes it. */
	if (!ret && spyre_hw_has_clock(sdev))
		sdev->clock = spyre_rd32(sdev, SPYRE_REG_CLOCK);
	return ret;
}

/* Whether the card has the CLOCK register (interface 0.3). */
bool spyre_hw_has_clock(const struct spyre_drm_device *sdev)
{
	return (sdev->info.hw_version & SPYRE_VERSION_MINOR_MASK) >= SPYRE_HW_MINOR_CLOCK;
}

/* Whether the card confirms MMU_INVALIDATE (INV_REQUESTED/INV_DONE, interface 0.4). */
bool spyre_hw_has_inv_ack(const struct spyre_drm_device *sdev)
{
	return (sdev->info.hw_version & SPYRE_VERSION_MINOR_MASK) >= SPYRE_HW_MINOR_INV_ACK;
}

/* Whether a FENCE may name its interrupt vector (interface 0.5). */
bool spyre_hw_has_fence_vector(const struct spyre_drm_device *sdev)
{
	return (sdev->info.hw_version & SPYRE_VERSION_MINOR_MASK) >= SPYRE_HW_MINOR_FENCE_VECTOR;
}

/* Wait until the commands a reset aborted have stopped. */
int spyre_hw_wait_ready(struct spyre_drm_device *sdev)
{
	u32 status;
	int ret;

	ret = read_poll_timeout(spyre_rd32, status, status & SPYRE_DEV_STATUS_READY,
				100, SPYRE_RESET_TIMEOUT_US, false, sdev, SPYRE_REG_DEV_STATUS);
	if (ret)
		drm_err(&sdev->drm, "card did not finish resetting (status 0x%x)\n", status);
	return ret;
}

/* Abort all card work and return every register to its reset value. */
int spyre_hw_reset(struct spyre_drm_device *sdev)
{
	spyre_wr32(sdev, SPYRE_REG_DEV_CTRL, SPYRE_DEV_CTRL_RESET);
	return spyre_hw_wait_ready(sdev);
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
		queue_work(sdev->reset_wq, &sdev->error_work);
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

/* A completion vector: FENCEs on any queue may have named it. */
static irqreturn_t spyre_irq_completion(int irq, void *arg)
{
	struct spyre_drm_device *sdev = arg;
	int i;

	spyre_wr32(sdev, SPYRE_REG_INT_STATUS, SPYRE_INT_QUEUE_FENCE_ALL);
	for (i = 0; i < SPYRE_NUM_QUEUES; i++)
		spyre_queue_signal(&sdev->queues[i]);
	return IRQ_HANDLED;
}

/*
 * The vectors after the fixed ones (interface 0.5): one per possible CPU,
 * as many as the card has, each with its affinity on its CPU.  A job's
 * FENCE names the vector of the CPU that runs it, so its interrupt wakes
 * its submitter where it sleeps.  They are not managed interrupts: when a
 * CPU goes offline its vector moves to another CPU rather than shutting
 * down with fences still to signal, and moving one (irqbalance, /proc)
 * only costs a wake-up.
 */
static int spyre_hw_completion_vectors_init(struct spyre_drm_device *sdev)
{
	unsigned int first = SPYRE_MSIX_VECTORS_FIXED, count = sdev->info.num_vectors - first;
	struct pci_dev *pdev = sdev->pdev;
	unsigned int i = 0, cpu, v;
	int ret;

	if (!count)
		return 0;
	sdev->cpu_vector = drmm_kcalloc(&sdev->drm, nr_cpu_ids, sizeof(*sdev->cpu_vector),
					GFP_KERNEL);
	if (!sdev->cpu_vector)
		return -ENOMEM;
	for (v = first; v < first + count; v++) {
		ret = devm_request_irq(&pdev->dev, pci_irq_vector(pdev, v), spyre_irq_completion,
				       0, "spyre-completion", sdev);
		if (ret)
			return ret;
	}
	for_each_possible_cpu(cpu) {
		v = first + i % count;
		sdev->cpu_vector[cpu] = v;
		/* A CPU offline now keeps the default: its jobs still complete. */
		if (i++ < count)
			irq_set_affinity(pci_irq_vector(pdev, v), cpumask_of(cpu));
	}
	return 0;
}

int spyre_hw_irq_init(struct spyre_drm_device *sdev)
{
	struct pci_dev *pdev = sdev->pdev;
	unsigned int max = SPYRE_MSIX_VECTORS_FIXED;
	int i, ret;

	if (sdev->info.num_vectors < SPYRE_MSIX_VECTORS_FIXED) {
		drm_err(&sdev->drm, "card has %u MSI-X vectors, %d needed\n",
			sdev->info.num_vectors, SPYRE_MSIX_VECTORS_FIXED);
		return -ENODEV;
	}
	/* Completion vectors: one per possible CPU, if the card has them. */
	if (spyre_hw_has_fence_vector(sdev))
		max += min3(sdev->info.num_vectors, (u32)SPYRE_MSIX_VECTORS,
			    num_possible_cpus() + SPYRE_MSIX_VECTORS_FIXED) -
		       SPYRE_MSIX_VECTORS_FIXED;
	/* Freed by pcim when the device is released. */
	ret = pci_alloc_irq_vectors(pdev, SPYRE_MSIX_VECTORS_FIXED, max, PCI_IRQ_MSIX);
	if (ret < 0) {
		drm_err(&sdev->drm, "cannot allocate MSI-X vectors: %d\n", ret);
		return ret;
	}
	sdev->info.num_vectors = ret;

	ret = devm_request_irq(&pdev->dev, pci_irq_vector(pdev, SPYRE_MSIX_VECTOR_MISC),
			       spyre_irq_misc, 0, DRIVER_NAME, sdev);
	for (i = 0; i < SPYRE_NUM_QUEUES && !ret; i++)
		ret = devm_request_irq(&pdev->dev,
				       pci_irq_vector(pdev, SPYRE_MSIX_VECTOR_QUEUE(i)),
				       spyre_irq_queue, 0, sdev->queues[i].name, &sdev->queues[i]);
	if (!ret)
		ret = spyre_hw_completion_vectors_init(sdev);
	if (ret) {
		drm_err(&sdev->drm, "cannot request interrupts: %d\n", ret);
		return ret;
	}
	spyre_wr32(sdev, SPYRE_REG_INT_MASK, 0);
	return 0;
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
