/* SPDX-License-Identifier: GPL-2.0-only */
/* Copyright 2026 The Spyre emulation project */

#ifndef __SPYRE_QUERY_H__
#define __SPYRE_QUERY_H__

struct drm_device;
struct drm_file;
struct drm_spyre_device_info;
struct spyre_device;

int spyre_query_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
void spyre_query_fill_device_info(const struct spyre_device *sdev,
				  struct drm_spyre_device_info *info);
int spyre_query_check_args(u32 param, u32 size, u32 flags, u32 reserved);

#endif /* __SPYRE_QUERY_H__ */
