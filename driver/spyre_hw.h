/* SPDX-License-Identifier: GPL-2.0-only */
/* Copyright 2026 The Spyre emulation project */

#ifndef __SPYRE_HW_H__
#define __SPYRE_HW_H__

#include <linux/io.h>

#include "spyre_drv.h"
#include "spyre_regs.h"

static inline u32 spyre_rd32(struct spyre_drm_device *sdev, u32 reg)
{
	return readl(sdev->regs + reg);
}

static inline void spyre_wr32(struct spyre_drm_device *sdev, u32 reg, u32 val)
{
	writel(val, sdev->regs + reg);
}

bool spyre_hw_version_supported(u32 version);
int spyre_hw_init(struct spyre_drm_device *sdev);
int spyre_hw_reset(struct spyre_drm_device *sdev);
int spyre_hw_irq_init(struct spyre_drm_device *sdev);
int spyre_hw_irq_selftest(struct spyre_drm_device *sdev);
int spyre_hw_restore(struct spyre_drm_device *sdev);
void spyre_hw_fini(struct spyre_drm_device *sdev);
void spyre_fault_log_add(struct spyre_drm_device *sdev, const struct spyre_fault_record *fault);
bool spyre_fault_log_peek_unowned(struct spyre_drm_device *sdev, u32 queue,
				  struct spyre_fault_record *out);
void spyre_file_fault_add(struct spyre_file *sfile, const struct spyre_fault_record *fault);
void spyre_fault_log_set_owner(struct spyre_drm_device *sdev, u32 queue,
			       const struct spyre_fault_record *owner);

#endif /* __SPYRE_HW_H__ */
