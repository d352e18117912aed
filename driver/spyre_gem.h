/* SPDX-License-Identifier: GPL-2.0-only */
/* Copyright 2026 The Spyre emulation project */

#ifndef __SPYRE_GEM_H__
#define __SPYRE_GEM_H__

#include <linux/sched.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_mm.h>

#include "spyre_mmu.h"

struct dma_buf_attachment;
struct drm_device;
struct drm_file;
struct spyre_file;

/*
 * A buffer.  Host buffers are shmem objects; device-memory buffers use only
 * the embedded drm_gem_object and a range of the card's memory.
 */
struct spyre_bo {
	struct drm_gem_shmem_object base;
	u32 flags;			/* DRM_SPYRE_BO_* */
	struct drm_mm_node vram;	/* device memory, if DEVICE */
	/* Protects mappings */
	struct mutex lock;
	struct list_head mappings;	/* struct spyre_bo_mapping, one per file */
	struct list_head dev_link;	/* in spyre_drm_device.bos */
	pid_t creator_pid;		/* who created or imported it, for debugfs */
	char creator_comm[TASK_COMM_LEN];
};

/* Where one file's address space sees a buffer. */
struct spyre_bo_mapping {
	struct list_head link;
	struct spyre_mmu_ctx *ctx;
	struct drm_mm_node va;
	/* Its handle closed while jobs ran: the buffer, until it is unmapped */
	struct drm_gem_object *retired_obj;
	u64 device_bytes;		/* device memory counted against the file */
};

static inline struct spyre_bo *to_spyre_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct spyre_bo, base.base);
}

struct drm_gem_object *spyre_gem_create_object(struct drm_device *dev, size_t size);
struct drm_gem_object *spyre_gem_prime_import_sg_table(struct drm_device *dev,
						       struct dma_buf_attachment *attach,
						       struct sg_table *sgt);
int spyre_bo_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int spyre_bo_info_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int spyre_bo_wait_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
u64 spyre_bo_device_addr(struct spyre_bo *bo, struct spyre_mmu_ctx *ctx);
void spyre_file_unmap_retired(struct spyre_file *sfile, struct list_head *list);
void spyre_file_free_retired(struct list_head *list);
int spyre_bo_check_create_args(u64 size, u32 flags, u64 mem_bytes, u64 aperture_bytes);

#endif /* __SPYRE_GEM_H__ */
