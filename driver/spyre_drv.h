/* SPDX-License-Identifier: GPL-2.0-only */
/* Copyright 2026 The Spyre emulation project */

#ifndef __SPYRE_DRV_H__
#define __SPYRE_DRV_H__

#include <linux/completion.h>
#include <linux/idr.h>
#include <linux/pci.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <drm/drm_device.h>
#include <drm/gpu_scheduler.h>

#include "spyre_fault.h"
#include "spyre_job.h"
#include "spyre_limits.h"
#include "spyre_mmu.h"

#define DRIVER_NAME	"spyre"
#define DRIVER_DESC	"IBM Spyre AI accelerator"

/* Hardware context 0 is the driver's: rings' FENCEs write its fence page. */
#define SPYRE_DRIVER_CTX	0

/* Facts read from the card's capability registers at probe. */
struct spyre_hw_info {
	u32 hw_version;
	u32 num_cores;
	u32 stick_bytes;
	u32 scratchpad_bytes;
	u32 num_vectors;
	u64 mem_bytes;
	u64 aperture_bytes;		/* CPU-visible device memory, from 0 */
};

struct spyre_drm_device {
	struct drm_device drm;
	struct pci_dev *pdev;
	void __iomem *regs;
	struct spyre_hw_info info;
	bool irq_selftest_passed;
	/* Signalled by the interrupt handler on SPYRE_INT_SELFTEST. */
	struct completion irq_selftest_done;

	struct spyre_mmu_ctx driver_ctx;
	u64 *fence_page;		/* a seqno per queue, written by the card */
	dma_addr_t fence_dma;
	struct drm_mm_node fence_node;
	u8 *driver_cmds;		/* the driver's own command buffer */
	dma_addr_t driver_cmds_dma;
	struct drm_mm_node driver_cmds_node;
	struct drm_sched_entity driver_entity;
	/* Serialises driver jobs (one command buffer) */
	struct mutex driver_job_lock;
	/* Protects vram */
	struct mutex vram_lock;
	struct drm_mm vram;		/* device memory given to buffers */
	resource_size_t aperture_phys;	/* BAR2: device memory from offset 0 */
	struct spyre_queue queues[SPYRE_NUM_QUEUES];
	/*
	 * Per CPU (not ordered): a job's run_job runs on the CPU that
	 * submitted it, beside its submitter, not after a wake-up elsewhere.
	 */
	struct workqueue_struct *sched_wq;
	/* The completion vector whose interrupt lands on each CPU (0: none) */
	u8 *cpu_vector;
	struct ida ctx_ida;		/* client address space numbers, from 1 */
	/* Protects users and each user's file count */
	struct mutex users_lock;
	struct xarray users;		/* struct spyre_user, by uid */
	/* Protects slots, slot_lru, slot_fence and every context's slot fields */
	spinlock_t slot_lock;
	struct spyre_mmu_ctx *slots[SPYRE_NUM_CONTEXTS];	/* hardware contexts */
	struct list_head slot_lru;	/* bound client contexts, least recent first */
	struct dma_fence *slot_fence;	/* signalled when a slot's jobs are done */
	wait_queue_head_t slot_idle;	/* woken when a context's jobs are all done */
	u64 slot_fence_context;
	u64 slot_fence_seqno;
	struct work_struct error_work;	/* stopped queues, MMU faults */
	/*
	 * Ordered: the schedulers' timeouts, the error work and every other
	 * reset run here, one at a time.
	 */
	struct workqueue_struct *reset_wq;
	/* Protects the card's registers against a reset (and clock) */
	struct mutex reset_lock;
	unsigned int reset_count;
	/* From a function reset's prepare to its done; reset_wq only */
	bool function_reset;
	/* A reset did not finish: bus mastering off, jobs fail (spyre_fault.c) */
	bool wedged;
	/* debugfs inject_slot_reset_failure: the next AER slot_reset fails */
	bool fail_slot_reset;
	/* SPYRE_CLOCK_* the card's timestamps count (sysfs timestamp_clock); a reset keeps it */
	u32 clock;
	/* Protects bos */
	struct mutex bos_lock;
	struct list_head bos;		/* every struct spyre_bo, for debugfs */
	/* Protects faults and fault_count */
	spinlock_t fault_lock;
	struct spyre_fault_record faults[SPYRE_FAULT_LOG_SIZE];
	u64 fault_count;		/* faults[fault_count % SIZE] is next */
};

/* Per open file: an address space and a scheduler entity per queue. */
struct spyre_file {
	struct spyre_drm_device *sdev;
	struct drm_file *file;		/* NULL once released (DRM frees it) */
	struct spyre_user *user;	/* the opener's uid, for its limits */
	struct spyre_mmu_ctx ctx;
	struct drm_sched_entity entities[SPYRE_NUM_QUEUES];
	bool banned;			/* a job faulted or hung: no more submits */
	/* Protects last_fence and the order of pushes */
	struct mutex submit_lock;
	struct dma_fence *last_fence[SPYRE_NUM_QUEUES];
	atomic64_t busy_ns[SPYRE_NUM_QUEUES];	/* for fdinfo */
	atomic64_t jobs_submitted;		/* for fdinfo */
	atomic_t live_jobs;			/* submitted and not yet freed */
	atomic64_t device_mem_bytes;		/* device buffers mapped, for its limit */
	/*
	 * Protects the fault and job error logs.  Taken under a queue's
	 * fence_lock, so always with interrupts off.
	 */
	spinlock_t fault_lock;
	struct spyre_fault_record faults[SPYRE_FILE_FAULT_LOG_SIZE];
	u64 fault_count;		/* faults[fault_count % SIZE] is next */
	struct spyre_job_error_record job_errors[SPYRE_FILE_JOB_ERROR_LOG_SIZE];
	u64 job_error_count;		/* job_errors[job_error_count % SIZE] is next */
	/* Protects retired */
	spinlock_t retired_lock;
	/* struct spyre_bo_mapping whose handles closed while the file's jobs ran */
	struct list_head retired;
	/* Finishes the release of a file whose jobs were still running */
	struct work_struct release_work;
};

#define to_spyre_drm_device(dev) container_of(dev, struct spyre_drm_device, drm)

#endif /* __SPYRE_DRV_H__ */
