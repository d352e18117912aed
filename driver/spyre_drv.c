// SPDX-License-Identifier: GPL-2.0-only
/* Copyright 2026 The Spyre emulation project */

#include <linux/module.h>
#include <linux/pci.h>

#include <drm/drm_accel.h>
#include <drm/drm_file.h>
#include <drm/drm_managed.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_print.h>

#include "spyre_debugfs.h"
#include "spyre_drv.h"
#include "spyre_fault.h"
#include "spyre_gem.h"
#include "spyre_hw.h"
#include "spyre_job.h"
#include "spyre_query.h"
#include "spyre_sysfs.h"
#include "uapi/drm/spyre_accel.h"

static const struct drm_ioctl_desc spyre_drm_ioctls[] = {
	DRM_IOCTL_DEF_DRV(SPYRE_QUERY, spyre_query_ioctl, 0),
	DRM_IOCTL_DEF_DRV(SPYRE_BO_CREATE, spyre_bo_create_ioctl, 0),
	DRM_IOCTL_DEF_DRV(SPYRE_BO_INFO, spyre_bo_info_ioctl, 0),
	DRM_IOCTL_DEF_DRV(SPYRE_SUBMIT, spyre_submit_ioctl, 0),
	DRM_IOCTL_DEF_DRV(SPYRE_BO_WAIT, spyre_bo_wait_ioctl, 0),
};

/* Released files whose jobs were still running, waited for off the exiting task. */
static struct workqueue_struct *spyre_release_wq;

/* Each open file gets its own address space. */
static int spyre_open(struct drm_device *dev, struct drm_file *file)
{
	struct spyre_drm_device *sdev = to_spyre_drm_device(dev);
	struct spyre_file *sfile;
	int id, ret;

	sfile = kzalloc(sizeof(*sfile), GFP_KERNEL_ACCOUNT);
	if (!sfile)
		return -ENOMEM;
	sfile->sdev = sdev;
	sfile->file = file;
	mutex_init(&sfile->submit_lock);
	spin_lock_init(&sfile->fault_lock);
	spin_lock_init(&sfile->retired_lock);
	INIT_LIST_HEAD(&sfile->retired);

	ret = spyre_user_get(sdev, &sfile->user);
	if (ret)
		goto err_free;
	/* Any number of files: hardware contexts are bound at job run time. */
	id = ida_alloc_min(&sdev->ctx_ida, SPYRE_DRIVER_CTX + 1, GFP_KERNEL);
	if (id < 0) {
		ret = id;
		goto err_user;
	}
	ret = spyre_mmu_ctx_init(sdev, &sfile->ctx, id);
	if (ret)
		goto err_ida;
	ret = spyre_file_entities_init(sfile);
	if (ret)
		goto err_ctx;
	file->driver_priv = sfile;
	return 0;

err_ctx:
	spyre_mmu_ctx_fini(&sfile->ctx);
err_ida:
	ida_free(&sdev->ctx_ida, id);
err_user:
	spyre_user_put(sdev, sfile->user);
err_free:
	mutex_destroy(&sfile->submit_lock);
	kfree(sfile);
	return ret;
}

/*
 * The last of a released file, once none of its jobs can run: its handles'
 * mappings left to it and its address space, once no job holds it; the
 * buffers those mappings kept go back last.
 */
static void spyre_file_free(struct spyre_file *sfile)
{
	struct spyre_drm_device *sdev = sfile->sdev;
	LIST_HEAD(retired);

	/* Every job freed (killed ones signal before they are). */
	wait_var_event(&sfile->live_jobs, !atomic_read(&sfile->live_jobs));
	spyre_mmu_ctx_wait_idle(&sfile->ctx);
	spyre_file_unmap_retired(sfile, &retired);
	spyre_file_jobs_fini(sfile);
	/* The card has dropped every translation of the file once this returns. */
	spyre_mmu_ctx_fini(&sfile->ctx);
	spyre_file_free_retired(&retired);
	ida_free(&sdev->ctx_ida, sfile->ctx.id);
	spyre_user_put(sdev, sfile->user);
	mutex_destroy(&sfile->submit_lock);
	kfree(sfile);
}

static void spyre_file_release_work(struct work_struct *work)
{
	struct spyre_file *sfile = container_of(work, struct spyre_file, release_work);
	struct drm_device *drm = &sfile->sdev->drm;

	spyre_file_wait_jobs(sfile, false);
	spyre_file_free(sfile);
	drm_dev_put(drm);
}

/*
 * Handles are gone; the card may still run this file's jobs.  A close
 * waits for them, as before; an exiting process (a killed one above all)
 * or a close a signal interrupts does not: the rest is done on
 * spyre_release_wq, which keeps the address space and every buffer it maps
 * until the card is done with them, so the process is reaped at once.
 */
static void spyre_postclose(struct drm_device *dev, struct drm_file *file)
{
	struct spyre_file *sfile = file->driver_priv;

	spyre_file_entities_fini(sfile);
	/* DRM frees @file next: the fault path reaches it through in-flight jobs. */
	WRITE_ONCE(sfile->file, NULL);
	spyre_queues_fence_barrier(sfile->sdev);
	if (!(current->flags & PF_EXITING) && !spyre_file_wait_jobs(sfile, true)) {
		spyre_file_free(sfile);
		return;
	}
	drm_dev_get(dev);
	INIT_WORK(&sfile->release_work, spyre_file_release_work);
	queue_work(spyre_release_wq, &sfile->release_work);
}

/* Accel fops, plus fdinfo for the standard DRM usage statistics. */
static const struct file_operations spyre_accel_fops = {
	.owner = THIS_MODULE,
	DRM_ACCEL_FOPS,
	.show_fdinfo = drm_show_fdinfo,
};

/*
 * drm-engine-queueN: time the file's jobs ran on each hardware queue;
 * spyre-jobs-submitted: SUBMIT calls that queued a job (a graph replay is one).
 */
static void spyre_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct spyre_file *sfile = file->driver_priv;
	int i;

	for (i = 0; i < SPYRE_NUM_QUEUES; i++)
		drm_printf(p, "drm-engine-queue%d:\t%llu ns\n", i,
			   atomic64_read(&sfile->busy_ns[i]));
	drm_printf(p, "spyre-jobs-submitted:\t%llu\n",
		   (unsigned long long)atomic64_read(&sfile->jobs_submitted));
	drm_show_memory_stats(p, file);
}

static const struct drm_driver spyre_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_COMPUTE_ACCEL | DRIVER_SYNCOBJ |
			   DRIVER_SYNCOBJ_TIMELINE,
	.fops = &spyre_accel_fops,
	.open = spyre_open,
	.postclose = spyre_postclose,
	.gem_create_object = spyre_gem_create_object,
	/* PRIME: host buffers import as shmem objects backed by the dma-buf. */
	.gem_prime_import_sg_table = spyre_gem_prime_import_sg_table,
	.show_fdinfo = spyre_show_fdinfo,
	.ioctls = spyre_drm_ioctls,
	.num_ioctls = ARRAY_SIZE(spyre_drm_ioctls),
	.name = DRIVER_NAME,
	.desc = DRIVER_DESC,
	.date = "20261202",
	.major = 0,
	.minor = 3,
};

static void spyre_files_release(struct drm_device *dev, void *arg)
{
	struct spyre_drm_device *sdev = arg;

	spyre_limits_fini(sdev);
	ida_destroy(&sdev->ctx_ida);
}

/* The address space numbers open files take, and their users' limits. */
static int spyre_files_init(struct spyre_drm_device *sdev)
{
	ida_init(&sdev->ctx_ida);
	spyre_limits_init(sdev);
	return drmm_add_action_or_reset(&sdev->drm, spyre_files_release, sdev);
}

static void spyre_vram_release(struct drm_device *dev, void *arg)
{
	struct spyre_drm_device *sdev = arg;

	drm_mm_takedown(&sdev->vram);
}

/* The allocator of the card's memory, and where the CPU sees it. */
static int spyre_vram_init(struct spyre_drm_device *sdev)
{
	mutex_init(&sdev->vram_lock);
	drm_mm_init(&sdev->vram, 0, sdev->info.mem_bytes);
	sdev->aperture_phys = pci_resource_start(sdev->pdev, SPYRE_BAR_MEM);
	return drmm_add_action_or_reset(&sdev->drm, spyre_vram_release, sdev);
}

/* Every buffer, host or device, is listed for debugfs. */
static void spyre_bo_list_init(struct spyre_drm_device *sdev)
{
	mutex_init(&sdev->bos_lock);
	INIT_LIST_HEAD(&sdev->bos);
}

static void spyre_driver_ctx_release(struct drm_device *dev, void *arg)
{
	struct spyre_drm_device *sdev = arg;

	spyre_mmu_unmap(&sdev->driver_ctx, &sdev->driver_cmds_node);
	spyre_mmu_unmap(&sdev->driver_ctx, &sdev->fence_node);
	spyre_mmu_ctx_fini(&sdev->driver_ctx);
	dma_free_coherent(sdev->drm.dev, PAGE_SIZE, sdev->driver_cmds, sdev->driver_cmds_dma);
	dma_free_coherent(sdev->drm.dev, PAGE_SIZE, sdev->fence_page, sdev->fence_dma);
}

/*
 * Context 0 maps the page where the rings' FENCE commands write and the
 * driver's own command buffer; device buffers visit it to be cleared.
 */
static int spyre_driver_ctx_init(struct spyre_drm_device *sdev)
{
	struct spyre_mmu_backing page = {
		.system = true,
		.size = PAGE_SIZE,
		.writable = true,
	};
	int ret;

	mutex_init(&sdev->driver_job_lock);
	sdev->fence_page = dma_alloc_coherent(sdev->drm.dev, PAGE_SIZE, &sdev->fence_dma,
					      GFP_KERNEL);
	sdev->driver_cmds = dma_alloc_coherent(sdev->drm.dev, PAGE_SIZE, &sdev->driver_cmds_dma,
					       GFP_KERNEL);
	if (!sdev->fence_page || !sdev->driver_cmds) {
		ret = -ENOMEM;
		goto err_free_pages;
	}
	ret = spyre_mmu_ctx_init(sdev, &sdev->driver_ctx, SPYRE_DRIVER_CTX);
	if (ret)
		goto err_free_pages;
	page.addr = sdev->fence_dma;
	ret = spyre_mmu_map(&sdev->driver_ctx, &sdev->fence_node, &page, SPYRE_DRIVER_FENCE_VA);
	if (ret)
		goto err_ctx_fini;
	page.addr = sdev->driver_cmds_dma;
	page.writable = false;
	ret = spyre_mmu_map(&sdev->driver_ctx, &sdev->driver_cmds_node, &page,
			    SPYRE_DRIVER_CMDS_VA);
	if (ret)
		goto err_unmap_fence;
	return drmm_add_action_or_reset(&sdev->drm, spyre_driver_ctx_release, sdev);

err_unmap_fence:
	spyre_mmu_unmap(&sdev->driver_ctx, &sdev->fence_node);
err_ctx_fini:
	spyre_mmu_ctx_fini(&sdev->driver_ctx);
err_free_pages:
	if (sdev->driver_cmds)
		dma_free_coherent(sdev->drm.dev, PAGE_SIZE, sdev->driver_cmds,
				  sdev->driver_cmds_dma);
	if (sdev->fence_page)
		dma_free_coherent(sdev->drm.dev, PAGE_SIZE, sdev->fence_page, sdev->fence_dma);
	return ret;
}

static void spyre_queues_release(struct drm_device *dev, void *arg)
{
	spyre_queues_fini(arg);
}

/* Managed by pcim: undone when the device goes. */
static int spyre_pci_init(struct spyre_drm_device *sdev)
{
	struct pci_dev *pdev = sdev->pdev;
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	sdev->regs = pcim_iomap_region(pdev, 0, DRIVER_NAME);
	if (IS_ERR(sdev->regs))
		return PTR_ERR(sdev->regs);
	pci_set_master(pdev);
	return dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
}

static int spyre_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct spyre_drm_device *sdev;
	int ret;

	sdev = devm_drm_dev_alloc(&pdev->dev, &spyre_drm_driver, struct spyre_drm_device, drm);
	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	sdev->pdev = pdev;
	init_completion(&sdev->irq_selftest_done);
	pci_set_drvdata(pdev, sdev);

	ret = spyre_pci_init(sdev);
	if (ret)
		return ret;
	ret = spyre_hw_init(sdev);
	if (ret)
		return ret;

	ret = spyre_files_init(sdev);
	if (ret)
		return ret;
	ret = spyre_vram_init(sdev);
	if (ret)
		return ret;
	spyre_bo_list_init(sdev);
	spyre_mmu_slots_init(sdev);
	ret = spyre_fault_init(sdev);
	if (ret)
		return ret;
	ret = spyre_driver_ctx_init(sdev);
	if (ret)
		return ret;
	ret = spyre_queues_init(sdev);
	if (ret)
		return ret;
	ret = drmm_add_action_or_reset(&sdev->drm, spyre_queues_release, sdev);
	if (ret)
		return ret;
	ret = spyre_hw_irq_init(sdev);
	if (ret)
		goto err_hw_fini;
	ret = spyre_hw_irq_selftest(sdev);
	if (ret)
		goto err_hw_fini;
	ret = spyre_queues_hw_init(sdev);
	if (ret) {
		drm_err(&sdev->drm, "card refused the command rings\n");
		goto err_hw_fini;
	}

	/* AER's slot_reset restores this configuration. */
	pci_save_state(pdev);
	ret = drm_dev_register(&sdev->drm, 0);
	if (ret)
		goto err_hw_fini;
	spyre_debugfs_init(sdev);
	ret = spyre_sysfs_init(sdev);
	if (ret)
		drm_warn(&sdev->drm, "no sysfs/hwmon attributes: %d\n", ret);

	drm_info(&sdev->drm, "%u cores, %llu MiB device memory, interface %u.%u\n",
		 sdev->info.num_cores, sdev->info.mem_bytes >> 20,
		 sdev->info.hw_version >> SPYRE_VERSION_MAJOR_SHIFT,
		 sdev->info.hw_version & SPYRE_VERSION_MINOR_MASK);
	return 0;

err_hw_fini:
	spyre_hw_fini(sdev);
	return ret;
}

/*
 * The card is out of use for good (removed, or lost to a failed AER
 * recovery): every later ioctl fails with ENODEV and CPU mappings of its
 * memory go; a card that may still be running stops (a reset, then no bus
 * mastering); every job in flight or queued fails, so every waiter wakes.
 * Memory goes back as the files close.  Once only.
 */
static void spyre_device_gone(struct spyre_drm_device *sdev, bool reset)
{
	int i;

	if (drm_dev_is_unplugged(&sdev->drm))
		return;
	drm_dev_unplug(&sdev->drm);
	if (reset)
		spyre_hw_fini(sdev);
	pci_clear_master(sdev->pdev);
	spyre_fault_fini(sdev);
	/* Gone inside AER recovery: restart the schedulers it stopped. */
	spyre_function_reset_done(sdev);
	/* Nothing in flight will signal now: fail it so waiters wake. */
	for (i = 0; i < SPYRE_NUM_QUEUES; i++)
		spyre_queue_cancel_inflight(&sdev->queues[i], -ECANCELED);
	spyre_mmu_slots_fini(sdev);
}

static void spyre_remove(struct pci_dev *pdev)
{
	spyre_device_gone(pci_get_drvdata(pdev), true);
}

/* A function reset from outside (sysfs reset, VFIO): docs/uapi.md "Recovery". */
static void spyre_pci_reset_prepare(struct pci_dev *pdev)
{
	spyre_function_reset_prepare(pci_get_drvdata(pdev));
}

static void spyre_pci_reset_done(struct pci_dev *pdev)
{
	spyre_function_reset_done(pci_get_drvdata(pdev));
}

/*
 * AER: stop before the link is reset, replay once the card is back.  A
 * card that is not coming back (a permanent failure, or not there after
 * the link reset) is gone: the PCI core then leaves it bound but never
 * calls resume, so nothing else would restart the schedulers or wake a
 * waiter.
 */
static pci_ers_result_t spyre_pci_error_detected(struct pci_dev *pdev,
						 pci_channel_state_t state)
{
	struct spyre_drm_device *sdev = pci_get_drvdata(pdev);

	drm_err(&sdev->drm, "PCI error, channel state %u\n", state);
	if (state == pci_channel_io_perm_failure) {
		drm_err(&sdev->drm, "card lost (permanent failure): its jobs fail, ioctls fail with ENODEV\n");
		spyre_device_gone(sdev, false);
		return PCI_ERS_RESULT_DISCONNECT;
	}
	spyre_function_reset_prepare(sdev);
	return PCI_ERS_RESULT_NEED_RESET;
}

static pci_ers_result_t spyre_pci_slot_reset(struct pci_dev *pdev)
{
	struct spyre_drm_device *sdev = pci_get_drvdata(pdev);
	u32 id;

	pci_restore_state(pdev);
	pci_save_state(pdev);
	/* debugfs inject_slot_reset_failure: the card reads as absent, once. */
	id = xchg(&sdev->fail_slot_reset, false) ? ~0u : spyre_rd32(sdev, SPYRE_REG_ID);
	if (id != SPYRE_ID_MAGIC) {
		drm_err(&sdev->drm,
			"card not back after the link reset (ID 0x%08x): its jobs fail, ioctls fail with ENODEV\n",
			id);
		spyre_device_gone(sdev, false);
		return PCI_ERS_RESULT_DISCONNECT;
	}
	return PCI_ERS_RESULT_RECOVERED;
}

static void spyre_pci_resume(struct pci_dev *pdev)
{
	spyre_function_reset_done(pci_get_drvdata(pdev));
}

static const struct pci_error_handlers spyre_pci_err_handlers = {
	.error_detected = spyre_pci_error_detected,
	.slot_reset = spyre_pci_slot_reset,
	.resume = spyre_pci_resume,
	.reset_prepare = spyre_pci_reset_prepare,
	.reset_done = spyre_pci_reset_done,
};

static const struct pci_device_id spyre_pci_ids[] = {
	{ PCI_DEVICE(SPYRE_PCI_VENDOR_ID, SPYRE_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, spyre_pci_ids);

static struct pci_driver spyre_pci_driver = {
	.name = DRIVER_NAME,
	.id_table = spyre_pci_ids,
	.probe = spyre_probe,
	.remove = spyre_remove,
	.err_handler = &spyre_pci_err_handlers,
};

static int __init spyre_init(void)
{
	int ret;

	spyre_release_wq = alloc_workqueue("spyre-release", WQ_UNBOUND, 0);
	if (!spyre_release_wq)
		return -ENOMEM;
	ret = pci_register_driver(&spyre_pci_driver);
	if (ret)
		destroy_workqueue(spyre_release_wq);
	return ret;
}

/* Files released with jobs running finish before the code goes. */
static void __exit spyre_exit(void)
{
	pci_unregister_driver(&spyre_pci_driver);
	destroy_workqueue(spyre_release_wq);
}

module_init(spyre_init);
module_exit(spyre_exit);

MODULE_DESCRIPTION(DRIVER_DESC);
MODULE_LICENSE("GPL");
