// SPDX-License-Identifier: GPL-2.0-only
/* Copyright 2026 The Spyre emulation project */

#include <linux/build_bug.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <kunit/visibility.h>

#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>

#include "spyre_drv.h"
#include "spyre_fault.h"
#include "spyre_query.h"
#include "spyre_regs.h"
#include "uapi/drm/spyre_accel.h"

/* Argument checks that need no device; split out so KUnit can reach them. */
int spyre_query_check_args(u32 param, u32 size, u32 flags, u32 reserved)
{
	if (flags || reserved)
		return -EINVAL;
	switch (param) {
	case DRM_SPYRE_QUERY_DEVICE_INFO:
		if (size && size < DRM_SPYRE_DEVICE_INFO_SIZE_V1)
			return -EINVAL;
		return 0;
	case DRM_SPYRE_QUERY_FAULTS:
		if (size && size < DRM_SPYRE_FAULTS_SIZE_V1)
			return -EINVAL;
		return 0;
	case DRM_SPYRE_QUERY_JOB_ERRORS:
		if (size && size < DRM_SPYRE_JOB_ERRORS_SIZE_V1)
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}
EXPORT_SYMBOL_IF_KUNIT(spyre_query_check_args);

void spyre_query_fill_device_info(const struct spyre_drm_device *sdev,
				  struct drm_spyre_device_info *info)
{
	const struct pci_dev *pdev = sdev->pdev;

	memset(info, 0, sizeof(*info));
	info->vendor_id = pdev->vendor;
	info->device_id = pdev->device;
	info->revision = pdev->revision;
	info->hw_version = sdev->info.hw_version;
	info->num_cores = sdev->info.num_cores;
	info->stick_bytes = sdev->info.stick_bytes;
	info->scratchpad_bytes = sdev->info.scratchpad_bytes;
	info->num_irq_vectors = sdev->info.num_vectors;
	info->mem_bytes = sdev->info.mem_bytes;
	info->pci_domain = pci_domain_nr(pdev->bus);
	info->pci_bdf = PCI_DEVID(pdev->bus->number, pdev->devfn);
	if (sdev->irq_selftest_passed)
		info->flags |= DRM_SPYRE_DEVICE_IRQ_SELFTEST_PASSED;
	if (READ_ONCE(sdev->clock) & SPYRE_CLOCK_MODEL)
		info->flags |= DRM_SPYRE_DEVICE_MODELLED_CLOCK;
}

/* The uapi's codes are the card's (include/spyre_regs.h). */
static_assert(DRM_SPYRE_FAULT_ACCESS_READ == SPYRE_ACCESS_READ);
static_assert(DRM_SPYRE_FAULT_ACCESS_WRITE == SPYRE_ACCESS_WRITE);
static_assert(DRM_SPYRE_FAULT_REASON_NOT_PRESENT == SPYRE_FAULT_NOT_PRESENT);
static_assert(DRM_SPYRE_FAULT_REASON_PERMISSION == SPYRE_FAULT_PERMISSION);
static_assert(DRM_SPYRE_FAULT_REASON_BAD_ENTRY == SPYRE_FAULT_BAD_ENTRY);
static_assert(DRM_SPYRE_FAULT_REASON_TABLE_FETCH == SPYRE_FAULT_TABLE_FETCH);
static_assert(DRM_SPYRE_FAULT_REASON_NO_CONTEXT == SPYRE_FAULT_NO_CONTEXT);
static_assert(SPYRE_FILE_FAULT_LOG_SIZE >= DRM_SPYRE_MAX_FAULTS);

/*
 * A file's fault log (@log of @log_size records, @count ever added, the
 * next at count % log_size) as DRM_SPYRE_QUERY_FAULTS returns it: the last
 * DRM_SPYRE_MAX_FAULTS, oldest first.
 */
void spyre_query_fill_faults(const struct spyre_fault_record *log, u32 log_size, u64 count,
			     struct drm_spyre_faults *out)
{
	u64 kept = min_t(u64, count, min_t(u32, log_size, DRM_SPYRE_MAX_FAULTS));
	u64 i;

	memset(out, 0, sizeof(*out));
	out->count = count;
	out->num_faults = kept;
	for (i = 0; i < kept; i++) {
		const struct spyre_fault_record *f = &log[(count - kept + i) % log_size];
		struct drm_spyre_fault *o = &out->faults[i];

		o->device_addr = f->va;
		o->job_id = f->job_id;
		o->time_ns = ktime_to_ns(f->time);
		o->queue = f->queue;
		o->access = f->access;
		o->reason = f->reason;
		o->flags = f->more ? DRM_SPYRE_FAULT_MORE : 0;
	}
}
EXPORT_SYMBOL_IF_KUNIT(spyre_query_fill_faults);

/* The calling file's own faults: another file's are never in its log. */
static void spyre_query_file_faults(struct spyre_file *sfile, struct drm_spyre_faults *out)
{
	struct spyre_fault_record log[SPYRE_FILE_FAULT_LOG_SIZE];
	u64 count = spyre_file_fault_log_copy(sfile, log);

	spyre_query_fill_faults(log, SPYRE_FILE_FAULT_LOG_SIZE, count, out);
}

static_assert(SPYRE_FILE_JOB_ERROR_LOG_SIZE >= DRM_SPYRE_MAX_JOB_ERRORS);
static_assert(DRM_SPYRE_NONE == SPYRE_ENGINE_NONE);
static_assert(DRM_SPYRE_ENGINE_DETAIL_BYTES == SPYRE_ENGINE_DETAIL_BYTES);

/* A file's job error log as DRM_SPYRE_QUERY_JOB_ERRORS returns it, like faults. */
void spyre_query_fill_job_errors(const struct spyre_job_error_record *log, u32 log_size,
				 u64 count, struct drm_spyre_job_errors *out)
{
	u64 kept = min_t(u64, count, min_t(u32, log_size, DRM_SPYRE_MAX_JOB_ERRORS));
	u64 i;

	memset(out, 0, sizeof(*out));
	out->count = count;
	out->num_errors = kept;
	for (i = 0; i < kept; i++) {
		const struct spyre_job_error_record *r = &log[(count - kept + i) % log_size];
		struct drm_spyre_job_error *o = &out->errors[i];

		o->job_id = r->job_id;
		o->time_ns = ktime_to_ns(r->time);
		o->queue = r->queue;
		o->cmd_status = r->cmd_status;
		o->command = r->command;
		o->engine_status = r->engine_status;
		o->engine_core = r->engine_core;
		o->engine_site = r->engine_site;
		o->engine_index = r->engine_index;
		o->engine_wait = r->engine_wait;
		o->engine_stream = r->engine_stream;
		o->engine_sticks_done = r->engine_sticks_done;
		o->engine_sticks_total = r->engine_sticks_total;
		memcpy(o->engine_detail, r->engine_detail, sizeof(o->engine_detail));
	}
}
EXPORT_SYMBOL_IF_KUNIT(spyre_query_fill_job_errors);

static int spyre_query_file_job_errors(struct spyre_file *sfile,
				       struct drm_spyre_job_errors *out)
{
	struct spyre_job_error_record *log;
	u64 count;

	/* 4 x 200 bytes: too much for the stack beside the ioctl's frame. */
	log = kmalloc_array(SPYRE_FILE_JOB_ERROR_LOG_SIZE, sizeof(*log), GFP_KERNEL);
	if (!log)
		return -ENOMEM;
	count = spyre_file_job_error_log_copy(sfile, log);
	spyre_query_fill_job_errors(log, SPYRE_FILE_JOB_ERROR_LOG_SIZE, count, out);
	kfree(log);
	return 0;
}

int spyre_query_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct spyre_drm_device *sdev = to_spyre_drm_device(dev);
	struct drm_spyre_query *args = data;
	union {
		struct drm_spyre_device_info info;
		struct drm_spyre_faults faults;
		struct drm_spyre_job_errors job_errors;
	} *out;
	u32 size;
	int ret;

	ret = spyre_query_check_args(args->param, args->size, args->flags, args->reserved);
	if (ret) {
		drm_dbg(dev, "bad query: param %u size %u flags 0x%x\n",
			args->param, args->size, args->flags);
		return ret;
	}

	out = kzalloc(sizeof(*out), GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	ret = 0;
	if (args->param == DRM_SPYRE_QUERY_FAULTS) {
		spyre_query_file_faults(file->driver_priv, &out->faults);
		size = sizeof(out->faults);
	} else if (args->param == DRM_SPYRE_QUERY_JOB_ERRORS) {
		ret = spyre_query_file_job_errors(file->driver_priv, &out->job_errors);
		size = sizeof(out->job_errors);
	} else {
		spyre_query_fill_device_info(sdev, &out->info);
		size = sizeof(out->info);
	}
	if (!ret && args->size &&
	    copy_to_user(u64_to_user_ptr(args->data), out, min_t(u32, args->size, size)))
		ret = -EFAULT;
	kfree(out);
	if (!ret)
		args->size = size;
	return ret;
}
