/* SPDX-License-Identifier: GPL-2.0-only */
/* Copyright 2026 The Spyre emulation project */

#ifndef __SPYRE_DRV_H__
#define __SPYRE_DRV_H__

#include <linux/completion.h>
#include <linux/pci.h>
#include <drm/drm_device.h>

#define DRIVER_NAME	"spyre"
#define DRIVER_DESC	"IBM Spyre AI accelerator"

/* Facts read from the card's capability registers at probe. */
struct spyre_hw_info {
	u32 hw_version;
	u32 num_cores;
	u32 stick_bytes;
	u32 scratchpad_bytes;
	u32 num_vectors;
	u64 mem_bytes;
};

struct spyre_device {
	struct drm_device drm;
	struct pci_dev *pdev;
	void __iomem *regs;
	struct spyre_hw_info info;
	bool irq_selftest_passed;
	/* Signalled by the interrupt handler on SPYRE_INT_SELFTEST. */
	struct completion irq_selftest_done;
};

#define to_spyre_device(dev) container_of(dev, struct spyre_device, drm)

#endif /* __SPYRE_DRV_H__ */
