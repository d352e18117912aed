/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * Spyre accel driver user-space interface: the contract between driver/ and
 * libspyre/.  docs/uapi.md documents every ioctl, field and errno.
 */
#ifndef __UAPI_SPYRE_ACCEL_H__
#define __UAPI_SPYRE_ACCEL_H__

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_SPYRE_QUERY			0x00
#define DRM_SPYRE_BO_CREATE		0x01
#define DRM_SPYRE_BO_INFO		0x02
#define DRM_SPYRE_SUBMIT		0x03
#define DRM_SPYRE_BO_WAIT		0x04

#define DRM_IOCTL_SPYRE_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_SPYRE_QUERY, struct drm_spyre_query)
#define DRM_IOCTL_SPYRE_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_SPYRE_BO_CREATE, struct drm_spyre_bo_create)
#define DRM_IOCTL_SPYRE_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_SPYRE_BO_INFO, struct drm_spyre_bo_info)
#define DRM_IOCTL_SPYRE_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_SPYRE_SUBMIT, struct drm_spyre_submit)
#define DRM_IOCTL_SPYRE_BO_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_SPYRE_BO_WAIT, struct drm_spyre_bo_wait)

/**
 * enum drm_spyre_query_param - what DRM_IOCTL_SPYRE_QUERY returns
 * @DRM_SPYRE_QUERY_DEVICE_INFO: &struct drm_spyre_device_info
 * @DRM_SPYRE_QUERY_FAULTS: &struct drm_spyre_faults, the calling file's own
 *	MMU faults (never another file's)
 * @DRM_SPYRE_QUERY_JOB_ERRORS: &struct drm_spyre_job_errors, why the calling
 *	file's own jobs failed on the card (driver 0.3 and later)
 */
enum drm_spyre_query_param {
	DRM_SPYRE_QUERY_DEVICE_INFO = 0,
	DRM_SPYRE_QUERY_FAULTS = 1,
	DRM_SPYRE_QUERY_JOB_ERRORS = 2,
};

/**
 * struct drm_spyre_query - argument of DRM_IOCTL_SPYRE_QUERY
 * @param: one of &enum drm_spyre_query_param
 * @size: in: bytes available at @data, or 0 to ask for the size only;
 *	out: the size of the kernel's structure for @param.  A non-zero size
 *	smaller than the first version of that structure is -EINVAL; a larger
 *	one is filled up to the kernel's size (structures only grow at the end).
 * @data: user pointer the structure is written to
 * @flags: must be 0
 * @reserved: must be 0
 */
struct drm_spyre_query {
	__u32 param;
	__u32 size;
	__u64 data;
	__u32 flags;
	__u32 reserved;
};

/* drm_spyre_device_info.flags */
#define DRM_SPYRE_DEVICE_IRQ_SELFTEST_PASSED	0x1ULL
#define DRM_SPYRE_DEVICE_MODELLED_CLOCK		0x2ULL	/* timestamps count modelled card time */

/**
 * struct drm_spyre_device_info - DRM_SPYRE_QUERY_DEVICE_INFO
 * @vendor_id: PCI vendor id
 * @device_id: PCI device id
 * @revision: PCI revision
 * @hw_version: card interface version, major << 16 | minor
 * @num_cores: AI cores
 * @stick_bytes: bytes in a stick, the unit of every transfer
 * @scratchpad_bytes: scratchpad bytes per core
 * @num_irq_vectors: MSI-X vectors the driver set up (misc, queues, one per CPU)
 * @mem_bytes: device memory bytes
 * @pci_domain: PCI domain of the card
 * @pci_bdf: bus << 8 | device << 3 | function
 * @flags: DRM_SPYRE_DEVICE_* bits
 */
struct drm_spyre_device_info {
	__u32 vendor_id;
	__u32 device_id;
	__u32 revision;
	__u32 hw_version;
	__u32 num_cores;
	__u32 stick_bytes;
	__u32 scratchpad_bytes;
	__u32 num_irq_vectors;
	__u64 mem_bytes;
	__u32 pci_domain;
	__u32 pci_bdf;
	__u64 flags;
};

#define DRM_SPYRE_DEVICE_INFO_SIZE_V1	56

/* drm_spyre_fault.access */
#define DRM_SPYRE_FAULT_ACCESS_READ		1
#define DRM_SPYRE_FAULT_ACCESS_WRITE		2

/* drm_spyre_fault.reason */
#define DRM_SPYRE_FAULT_REASON_NOT_PRESENT	1	/* nothing mapped at the address */
#define DRM_SPYRE_FAULT_REASON_PERMISSION	2	/* a write to a read-only buffer */
#define DRM_SPYRE_FAULT_REASON_BAD_ENTRY	3	/* a corrupt page table entry */
#define DRM_SPYRE_FAULT_REASON_TABLE_FETCH	4	/* a page table could not be read */
#define DRM_SPYRE_FAULT_REASON_NO_CONTEXT	5	/* the job ran with no valid context */

/* drm_spyre_fault.flags */
#define DRM_SPYRE_FAULT_MORE			0x1	/* the card dropped faults after it */

/**
 * struct drm_spyre_fault - one MMU fault of a job of this file
 * @device_addr: the device virtual address the card could not translate
 * @job_id: the job_id SUBMIT returned for the faulting job
 * @time_ns: when the driver saw the fault, CLOCK_MONOTONIC ns
 * @queue: the hardware queue the job ran on
 * @access: DRM_SPYRE_FAULT_ACCESS_READ or _WRITE
 * @reason: DRM_SPYRE_FAULT_REASON_*
 * @flags: DRM_SPYRE_FAULT_* bits
 */
struct drm_spyre_fault {
	__u64 device_addr;
	__u64 job_id;
	__u64 time_ns;
	__u32 queue;
	__u32 access;
	__u32 reason;
	__u32 flags;
};

#define DRM_SPYRE_MAX_FAULTS	4

/**
 * struct drm_spyre_faults - DRM_SPYRE_QUERY_FAULTS
 * @count: MMU faults of this file's jobs since the file was opened
 * @num_faults: entries of @faults filled, min(@count, DRM_SPYRE_MAX_FAULTS)
 * @pad: 0
 * @faults: the file's last @num_faults faults, oldest first; unused
 *	entries are zero
 */
struct drm_spyre_faults {
	__u64 count;
	__u32 num_faults;
	__u32 pad;
	struct drm_spyre_fault faults[DRM_SPYRE_MAX_FAULTS];
};

#define DRM_SPYRE_FAULTS_SIZE_V1	176

/* drm_spyre_job_error fields the card did not report */
#define DRM_SPYRE_NONE				0xffffffffu

#define DRM_SPYRE_ENGINE_DETAIL_BYTES		128

/**
 * struct drm_spyre_job_error - why one job of this file failed on the card
 *
 * Codes are the card's own, defined once in the card's headers:
 * SPYRE_CMD_STATUS_* in include/spyre_regs.h and SPYRE_ENGINE_* in
 * include/spyre_engine_status.h (docs/hardware.md, docs/engine.md).
 *
 * @job_id: the job_id SUBMIT returned for the failed job
 * @time_ns: when the driver saw the failure, CLOCK_MONOTONIC ns
 * @queue: the hardware queue the job ran on
 * @cmd_status: the card's status of the failing command (SPYRE_CMD_STATUS_*)
 * @command: index of the failing command in the job's command buffer
 * @engine_status: for a LAUNCH the engine refused or stopped,
 *	SPYRE_ENGINE_E_* (e.g. E_DEADLOCK, or the loader's rejection class);
 *	0 otherwise, and the engine fields below are then 0
 * @engine_core: the core the failure is about, or DRM_SPYRE_NONE
 * @engine_site: what @engine_index counts: SPYRE_ENGINE_AT_* (stream, op,
 *	buffer; NONE for the image, its header or a whole core)
 * @engine_index: the stream, op or buffer, or DRM_SPYRE_NONE
 * @engine_wait: a deadlock: what the stuck stream or op waits for
 *	(SPYRE_ENGINE_WAIT_*: FIFO empty, FIFO full, an earlier stream, a
 *	receiving core's full FIFO)
 * @engine_stream: a deadlock: the stream waited on, or DRM_SPYRE_NONE
 * @engine_sticks_done: a deadlock: sticks that entered that stream
 * @engine_sticks_total: a deadlock: sticks that stream carries in all
 * @pad: 0
 * @engine_detail: the engine's own words (the loader's field and reason, or
 *	the deadlock), NUL-terminated; empty if @engine_status is 0
 */
struct drm_spyre_job_error {
	__u64 job_id;
	__u64 time_ns;
	__u32 queue;
	__u32 cmd_status;
	__u32 command;
	__u32 engine_status;
	__u32 engine_core;
	__u32 engine_site;
	__u32 engine_index;
	__u32 engine_wait;
	__u32 engine_stream;
	__u32 engine_sticks_done;
	__u32 engine_sticks_total;
	__u32 pad;
	char engine_detail[DRM_SPYRE_ENGINE_DETAIL_BYTES];
};

#define DRM_SPYRE_MAX_JOB_ERRORS	4

/**
 * struct drm_spyre_job_errors - DRM_SPYRE_QUERY_JOB_ERRORS
 * @count: jobs of this file that failed on the card since it was opened
 *	(a hang or a reset is not a failure the card reports: see job_status)
 * @num_errors: entries of @errors filled, min(@count, DRM_SPYRE_MAX_JOB_ERRORS)
 * @pad: 0
 * @errors: the file's last @num_errors failures, oldest first; unused
 *	entries are zero
 */
struct drm_spyre_job_errors {
	__u64 count;
	__u32 num_errors;
	__u32 pad;
	struct drm_spyre_job_error errors[DRM_SPYRE_MAX_JOB_ERRORS];
};

#define DRM_SPYRE_JOB_ERRORS_SIZE_V1	784

/* drm_spyre_bo_create.flags */
#define DRM_SPYRE_BO_DEVICE		0x1	/* in device memory, else host memory */
#define DRM_SPYRE_BO_MAPPABLE		0x2	/* device memory the CPU can mmap */
#define DRM_SPYRE_BO_READ_ONLY		0x4	/* the card may only read it */
#define DRM_SPYRE_BO_FLAGS_ALL		0x7

/**
 * struct drm_spyre_bo_create - create a buffer and map it for the card
 * @size: bytes; rounded up to a 4 KiB page
 * @flags: DRM_SPYRE_BO_*; MAPPABLE requires DEVICE (host buffers always are)
 * @handle: out: GEM handle in this file
 * @pad: must be 0
 * @device_addr: out: the buffer's device virtual address in this file's
 *	address space
 */
struct drm_spyre_bo_create {
	__u64 size;
	__u32 flags;
	__u32 handle;
	__u32 pad;
	__u32 reserved;
	__u64 device_addr;
};

/**
 * struct drm_spyre_bo_info - what a buffer is, in this file
 * @handle: GEM handle
 * @flags: out: DRM_SPYRE_BO_* it was created with
 * @size: out: bytes
 * @device_addr: out: device virtual address in this file's address space
 * @mmap_offset: out: offset to mmap() the buffer at on this file
 */
struct drm_spyre_bo_info {
	__u32 handle;
	__u32 flags;
	__u64 size;
	__u64 device_addr;
	__u64 mmap_offset;
};

#define DRM_SPYRE_MAX_SUBMIT_BOS	1024
#define DRM_SPYRE_MAX_SUBMIT_SYNCOBJS	256
#define DRM_SPYRE_MAX_SUBMIT_COMMANDS	65536
#define DRM_SPYRE_NUM_QUEUES		4

/**
 * struct drm_spyre_submit - run a command buffer on the card
 * @queue: hardware queue, 0 .. DRM_SPYRE_NUM_QUEUES - 1 (queue 3 has the
 *	highest priority, 0 the lowest)
 * @flags: must be 0
 * @commands: device virtual address of the command buffer (64-byte aligned,
 *	inside a buffer of this file listed in @bo_handles)
 * @command_count: 64-byte commands in it, 1 .. DRM_SPYRE_MAX_SUBMIT_COMMANDS
 * @bo_count: entries at @bo_handles, 1 .. DRM_SPYRE_MAX_SUBMIT_BOS
 * @bo_handles: user pointer to __u32 GEM handles of every buffer the job uses
 * @in_syncobjs: user pointer to __u32 syncobj handles the job waits for
 * @in_syncobj_count: entries at @in_syncobjs, 0 .. DRM_SPYRE_MAX_SUBMIT_SYNCOBJS
 * @out_syncobj: syncobj signalled when the job finishes, or 0
 * @out_syncobj_point: timeline point for @out_syncobj; 0 for a binary syncobj
 * @job_id: out: the job's sequence number on its queue
 * @reserved: must be 0
 */
struct drm_spyre_submit {
	__u32 queue;
	__u32 flags;
	__u64 commands;
	__u32 command_count;
	__u32 bo_count;
	__u64 bo_handles;
	__u64 in_syncobjs;
	__u32 in_syncobj_count;
	__u32 out_syncobj;
	__u64 out_syncobj_point;
	__u64 job_id;
	__u64 reserved;
};

/* drm_spyre_bo_wait.job_status */
#define DRM_SPYRE_JOB_STATUS_SUCCESS	0
#define DRM_SPYRE_JOB_STATUS_FAILED	1	/* a command failed (see errno-like code) */
#define DRM_SPYRE_JOB_STATUS_MMU_FAULT	2
#define DRM_SPYRE_JOB_STATUS_TIMEOUT	3	/* hung; the card was reset */
#define DRM_SPYRE_JOB_STATUS_ABORTED	4	/* lost to a reset caused by another job */

/**
 * struct drm_spyre_bo_wait - wait for the jobs using a buffer
 * @handle: GEM handle
 * @flags: must be 0
 * @timeout_ns: absolute CLOCK_MONOTONIC deadline in ns
 * @job_status: out: DRM_SPYRE_JOB_STATUS_* of the buffer's last job
 * @pad: must be 0
 */
struct drm_spyre_bo_wait {
	__u32 handle;
	__u32 flags;
	__s64 timeout_ns;
	__u32 job_status;
	__u32 pad;
};

#if defined(__cplusplus)
}
#endif

#endif /* __UAPI_SPYRE_ACCEL_H__ */
