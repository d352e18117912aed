/* SPDX-License-Identifier: GPL-2.0-only */
/* Copyright 2026 The Spyre emulation project */

#ifndef __SPYRE_FAULT_H__
#define __SPYRE_FAULT_H__

#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/types.h>

struct drm_sched_job;
struct spyre_drm_device;
struct spyre_file;

/* The device's fault log keeps the card's last MMU faults, for debugfs. */
#define SPYRE_FAULT_LOG_SIZE		16
/* A file keeps its own last MMU faults, for DRM_SPYRE_QUERY_FAULTS. */
#define SPYRE_FILE_FAULT_LOG_SIZE	4

struct spyre_fault_record {
	ktime_t time;
	u64 va;
	u64 job_id;			/* SUBMIT's job_id; 0 if no job is known */
	u32 ctx;			/* the job's address space, U32_MAX if unknown */
	u32 slot;			/* the hardware context that faulted */
	u32 queue;
	u32 access;			/* SPYRE_ACCESS_* */
	u32 reason;			/* SPYRE_FAULT_NOT_PRESENT... */
	bool more;			/* the card dropped later faults */
	pid_t pid;			/* the job's submitter, 0 if unknown */
	char comm[TASK_COMM_LEN];
};

void spyre_fault_init(struct spyre_drm_device *sdev);
void spyre_fault_fini(struct spyre_drm_device *sdev);
u64 spyre_fault_log_copy(struct spyre_drm_device *sdev, struct spyre_fault_record *log);
u64 spyre_file_fault_log_copy(struct spyre_file *sfile, struct spyre_fault_record *log);
void spyre_device_recover(struct spyre_drm_device *sdev, struct drm_sched_job *bad);

#endif /* __SPYRE_FAULT_H__ */
