// SPDX-License-Identifier: GPL-2.0-only
/* Copyright 2026 The Spyre emulation project */

#include <linux/module.h>
#include <linux/pci.h>

#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_print.h>

#include "spyre_drv.h"
#include "spyre_hw.h"
#include "spyre_query.h"
#include "uapi/drm/spyre_accel.h"

static const struct drm_ioctl_desc spyre_drm_ioctls[] = {
	DRM_IOCTL_DEF_DRV(SPYRE_QUERY, spyre_query_ioctl, 0),
};

DEFINE_DRM_ACCEL_FOPS(spyre_accel_fops);

static const struct drm_driver spyre_drm_driver = {
	.driver_features = DRIVER_COMPUTE_ACCEL,
	.fops = &spyre_accel_fops,
	.ioctls = spyre_drm_ioctls,
	.num_ioctls = ARRAY_SIZE(spyre_drm_ioctls),
	.name = DRIVER_NAME,
	.desc = DRIVER_DESC,
	.date = "20261202",
	.major = 0,
	.minor = 1,
};

static int spyre_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct spyre_device *sdev;
	int ret;

	sdev = devm_drm_dev_alloc(&pdev->dev, &spyre_drm_driver, struct spyre_device, drm);
	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	sdev->pdev = pdev;
	init_completion(&sdev->irq_selftest_done);
	pci_set_drvdata(pdev, sdev);

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	sdev->regs = pcim_iomap_region(pdev, 0, DRIVER_NAME);
	if (IS_ERR(sdev->regs))
		return PTR_ERR(sdev->regs);
	pci_set_master(pdev);
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;

	ret = spyre_hw_init(sdev);
	if (ret)
		return ret;
	ret = spyre_hw_irq_init(sdev);
	if (ret)
		goto err_hw_fini;
	ret = spyre_hw_irq_selftest(sdev);
	if (ret)
		goto err_hw_fini;

	ret = drm_dev_register(&sdev->drm, 0);
	if (ret)
		goto err_hw_fini;

	drm_info(&sdev->drm, "%u cores, %llu MiB device memory, interface %u.%u\n",
		 sdev->info.num_cores, sdev->info.mem_bytes >> 20,
		 sdev->info.hw_version >> SPYRE_VERSION_MAJOR_SHIFT,
		 sdev->info.hw_version & SPYRE_VERSION_MINOR_MASK);
	return 0;

err_hw_fini:
	spyre_hw_fini(sdev);
	return ret;
}

static void spyre_remove(struct pci_dev *pdev)
{
	struct spyre_device *sdev = pci_get_drvdata(pdev);

	drm_dev_unplug(&sdev->drm);
	spyre_hw_fini(sdev);
}

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
};
module_pci_driver(spyre_pci_driver);

MODULE_DESCRIPTION(DRIVER_DESC);
MODULE_LICENSE("GPL");
