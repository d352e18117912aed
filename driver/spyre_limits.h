/* SPDX-License-Identifier: GPL-2.0-only */
/* Copyright 2026 The Spyre emulation project */

#ifndef __SPYRE_LIMITS_H__
#define __SPYRE_LIMITS_H__

#include <linux/atomic.h>
#include <linux/types.h>
#include <linux/uidgid.h>

struct spyre_drm_device;
struct spyre_file;

/*
 * What one user (uid) holds of one card: its open files and the jobs they
 * have queued.  Kernel memory a file pins that the memory cgroup is not
 * charged for (DRM's own file and job structures) is bounded by these
 * counts (docs/uapi.md "Limits").
 */
struct spyre_user {
	kuid_t uid;
	unsigned int files;		/* under sdev->users_lock */
	atomic_t queued_jobs;
};

void spyre_limits_init(struct spyre_drm_device *sdev);
void spyre_limits_fini(struct spyre_drm_device *sdev);
int spyre_user_get(struct spyre_drm_device *sdev, struct spyre_user **user);
void spyre_user_put(struct spyre_drm_device *sdev, struct spyre_user *user);
int spyre_limits_queue_job(struct spyre_file *sfile);
void spyre_limits_job_dequeued(struct spyre_file *sfile);
int spyre_limits_charge_device_mem(struct spyre_file *sfile, u64 bytes, bool check_only);
void spyre_limits_uncharge_device_mem(struct spyre_file *sfile, u64 bytes);

#endif /* __SPYRE_LIMITS_H__ */
