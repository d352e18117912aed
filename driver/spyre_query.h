/* SPDX-License-Identifier: GPL-2.0-only */
/* Copyright 2026 The Spyre emulation project */

#ifndef __SPYRE_QUERY_H__
#define __SPYRE_QUERY_H__

struct drm_device;
struct drm_file;
struct drm_spyre_device_info;
struct drm_spyre_faults;
struct drm_spyre_job_errors;
struct spyre_fault_record;
struct spyre_job_error_record;
struct spyre_drm_device;

int spyre_query_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
void spyre_query_fill_device_info(const struct spyre_drm_device *sdev,
				  struct drm_spyre_device_info *info);
void spyre_query_fill_faults(const struct spyre_fault_record *log, u32 log_size, u64 count,
			     struct drm_spyre_faults *out);
void spyre_query_fill_job_errors(const struct spyre_job_error_record *log, u32 log_size,
				 u64 count, struct drm_spyre_job_errors *out);
int spyre_query_check_args(u32 param, u32 size, u32 flags, u32 reserved);

#endif /* __SPYRE_QUERY_H__ */
