/* SPDX-License-Identifier: GPL-2.0-only */
/* Copyright 2026 The Spyre emulation project */

#ifndef __SPYRE_DEBUGFS_H__
#define __SPYRE_DEBUGFS_H__

struct spyre_drm_device;

#if IS_ENABLED(CONFIG_DEBUG_FS)
void spyre_debugfs_init(struct spyre_drm_device *sdev);
#else
static inline void spyre_debugfs_init(struct spyre_drm_device *sdev) { }
#endif

#endif /* __SPYRE_DEBUGFS_H__ */
