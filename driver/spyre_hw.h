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
int spyre_hw_wait_ready(struct spyre_drm_device *sdev);
bool spyre_hw_has_clock(const struct spyre_drm_device *sdev);
bool spyre_hw_has_inv_ack(const struct spyre_drm_device *sdev);
bool spyre_hw_has_fence_vector(const struct spyre_drm_device *sdev);
int spyre_hw_irq_init(struct spyre_drm_device *sdev);
int spyre_hw_irq_selftest(struct spyre_drm_device *sdev);
void spyre_hw_fini(struct spyre_drm_device *sdev);

#endif /* __SPYRE_HW_H__ */
