// SPDX-License-Identifier: GPL-2.0-only
/* Copyright 2026 The Spyre emulation project */

#include <linux/minmax.h>
#include <linux/uaccess.h>

#include <kunit/visibility.h>

#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>

#include "spyre_drv.h"
#include "spyre_query.h"
#include "uapi/drm/spyre_accel.h"

/* Argument checks that need no device; split out so KUnit can reach them. */
int spyre_query_check_args(u32 param, u32 size, u32 flags, u32 reserved)
{
	if (flags || reserved)
		return -EINVAL;
	switch (param) {
	case DRM_SPYRE_QUERY_DEVICE_INFO:
		if (size && size < DRM_SPYRE_DEVICE_INFO_SIZE_V1)
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}
EXPORT_SYMBOL_IF_KUNIT(spyre_query_check_args);

void spyre_query_fill_device_info(const struct spyre_device *sdev,
				  struct drm_spyre_device_info *info)
{
	const struct pci_dev *pdev = sdev->pdev;

	memset(info, 0, sizeof(*info));
	info->vendor_id = pdev->vendor;
	info->device_id = pdev->device;
	info->revision = pdev->revision;
	info->hw_version = sdev->info.hw_version;
	info->num_cores = sdev->info.num_cores;
	info->stick_bytes = sdev->info.stick_bytes;
	info->scratchpad_bytes = sdev->info.scratchpad_bytes;
	info->num_irq_vectors = sdev->info.num_vectors;
	info->mem_bytes = sdev->info.mem_bytes;
	info->pci_domain = pci_domain_nr(pdev->bus);
	info->pci_bdf = PCI_DEVID(pdev->bus->number, pdev->devfn);
	if (sdev->irq_selftest_passed)
		info->flags |= DRM_SPYRE_DEVICE_IRQ_SELFTEST_PASSED;
}

int spyre_query_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct spyre_device *sdev = to_spyre_device(dev);
	struct drm_spyre_query *args = data;
	struct drm_spyre_device_info info;
	int ret;

	ret = spyre_query_check_args(args->param, args->size, args->flags, args->reserved);
	if (ret) {
		drm_dbg(dev, "bad query: param %u size %u flags 0x%x\n",
			args->param, args->size, args->flags);
		return ret;
	}

	if (args->size) {
		spyre_query_fill_device_info(sdev, &info);
		if (copy_to_user(u64_to_user_ptr(args->data), &info,
				 min_t(u32, args->size, sizeof(info))))
			return -EFAULT;
	}
	args->size = sizeof(info);
	return 0;
}
