/* SPDX-License-Identifier: GPL-2.0-only */
/* Copyright 2026 The Spyre emulation project */

#ifndef __SPYRE_SYSFS_H__
#define __SPYRE_SYSFS_H__

struct spyre_drm_device;

int spyre_sysfs_init(struct spyre_drm_device *sdev);

#endif /* __SPYRE_SYSFS_H__ */
