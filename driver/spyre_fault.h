/* SPDX-License-Identifier: GPL-2.0-only */
/* Copyright 2026 The Spyre emulation project */

#ifndef __SPYRE_FAULT_H__
#define __SPYRE_FAULT_H__

#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/types.h>

#include "spyre_regs.h"

struct drm_sched_job;
struct spyre_drm_device;
struct spyre_file;

/* The device's fault log keeps the card's last MMU faults, for debugfs. */
#define SPYRE_FAULT_LOG_SIZE		16
/* A file keeps its own last MMU faults, for DRM_SPYRE_QUERY_FAULTS. */
#define SPYRE_FILE_FAULT_LOG_SIZE	4
/* ... and its last failed jobs, for DRM_SPYRE_QUERY_JOB_ERRORS. */
#define SPYRE_FILE_JOB_ERROR_LOG_SIZE	4

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

/*
 * Why a job failed, as the card's queue registers said: the failing
 * command and, for a LAUNCH, the engine's record (docs/hardware.md "Why a
 * LAUNCH failed").
 */
struct spyre_job_error_record {
	ktime_t time;
	u64 job_id;
	u32 queue;
	u32 cmd_status;			/* SPYRE_CMD_STATUS_* */
	u32 command;			/* in the job's command buffer (ERROR_SUB_INDEX) */
	u32 engine_status;		/* SPYRE_ENGINE_*, 0: not the engine */
	u32 engine_core;
	u32 engine_site;
	u32 engine_index;
	u32 engine_wait;
	u32 engine_stream;
	u32 engine_sticks_done;
	u32 engine_sticks_total;
	char engine_detail[SPYRE_ENGINE_DETAIL_BYTES];
};

int spyre_fault_init(struct spyre_drm_device *sdev);
void spyre_fault_fini(struct spyre_drm_device *sdev);
u64 spyre_fault_log_copy(struct spyre_drm_device *sdev, struct spyre_fault_record *log);
u64 spyre_file_fault_log_copy(struct spyre_file *sfile, struct spyre_fault_record *log);
u64 spyre_file_job_error_log_copy(struct spyre_file *sfile,
				  struct spyre_job_error_record *log);
bool spyre_device_recover(struct spyre_drm_device *sdev, struct drm_sched_job *bad);
void spyre_device_reset_request(struct spyre_drm_device *sdev);
void spyre_function_reset_prepare(struct spyre_drm_device *sdev);
void spyre_function_reset_done(struct spyre_drm_device *sdev);

#endif /* __SPYRE_FAULT_H__ */
