// SPDX-License-Identifier: GPL-2.0-only
/*
 * Buffers: shmem GEM objects mapped into the address space of every file
 * that holds a handle to them.
 *
 * Copyright 2026 The Spyre emulation project
 */

#include <linux/dma-resv.h>
#include <linux/sizes.h>

#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/drm_utils.h>
#include <kunit/visibility.h>

#include "spyre_drv.h"
#include "spyre_gem.h"
#include "spyre_job.h"
#include "uapi/drm/spyre_accel.h"

/* Host buffers: bounded so a size can never overflow page arithmetic. */
#define SPYRE_BO_MAX_HOST_SIZE	SZ_16G

static struct spyre_bo_mapping *spyre_bo_find_mapping(struct spyre_bo *bo,
						      struct spyre_mmu_ctx *ctx)
{
	struct spyre_bo_mapping *m;

	lockdep_assert_held(&bo->lock);
	list_for_each_entry(m, &bo->mappings, link)
		if (m->ctx == ctx)
			return m;
	return NULL;
}

u64 spyre_bo_device_addr(struct spyre_bo *bo, struct spyre_mmu_ctx *ctx)
{
	struct spyre_bo_mapping *m;
	u64 addr;

	mutex_lock(&bo->lock);
	m = spyre_bo_find_mapping(bo, ctx);
	addr = m ? m->va.start : 0;
	mutex_unlock(&bo->lock);
	return addr;
}

/* A new handle in @file: map the buffer into that file's address space. */
static int spyre_bo_open(struct drm_gem_object *obj, struct drm_file *file)
{
	struct spyre_file *sfile = file->driver_priv;
	struct spyre_bo *bo = to_spyre_bo(obj);
	struct spyre_mmu_backing backing = {
		.size = obj->size,
		.writable = !(bo->flags & DRM_SPYRE_BO_READ_ONLY),
	};
	struct spyre_bo_mapping *m;
	struct sg_table *sgt;
	int ret;

	sgt = drm_gem_shmem_get_pages_sgt(&bo->base);
	if (IS_ERR(sgt))
		return PTR_ERR(sgt);
	backing.sgt = sgt;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	m->ctx = &sfile->ctx;

	mutex_lock(&bo->lock);
	if (spyre_bo_find_mapping(bo, m->ctx)) {
		/* One handle per buffer and file: PRIME returns the existing one. */
		mutex_unlock(&bo->lock);
		kfree(m);
		return -EEXIST;
	}
	ret = spyre_mmu_map(m->ctx, &m->va, &backing, 0);
	if (ret) {
		mutex_unlock(&bo->lock);
		kfree(m);
		return ret;
	}
	list_add(&m->link, &bo->mappings);
	mutex_unlock(&bo->lock);
	return 0;
}

static void spyre_bo_close(struct drm_gem_object *obj, struct drm_file *file)
{
	struct spyre_file *sfile = file->driver_priv;
	struct spyre_bo *bo = to_spyre_bo(obj);
	struct spyre_bo_mapping *m;

	mutex_lock(&bo->lock);
	m = spyre_bo_find_mapping(bo, &sfile->ctx);
	if (m) {
		spyre_mmu_unmap(m->ctx, &m->va);
		list_del(&m->link);
		kfree(m);
	}
	mutex_unlock(&bo->lock);
}

static void spyre_bo_free(struct drm_gem_object *obj)
{
	struct spyre_bo *bo = to_spyre_bo(obj);

	WARN_ON(!list_empty(&bo->mappings));
	mutex_destroy(&bo->lock);
	drm_gem_shmem_free(&bo->base);
}

static const struct drm_gem_object_funcs spyre_bo_funcs = {
	.free = spyre_bo_free,
	.open = spyre_bo_open,
	.close = spyre_bo_close,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

struct drm_gem_object *spyre_gem_create_object(struct drm_device *dev, size_t size)
{
	struct spyre_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->base.base.funcs = &spyre_bo_funcs;
	mutex_init(&bo->lock);
	INIT_LIST_HEAD(&bo->mappings);
	return &bo->base.base;
}

/* Argument checks that need no device; split out so KUnit can reach them. */
int spyre_bo_check_create_args(u64 size, u32 flags, u64 mem_bytes)
{
	if (flags & ~DRM_SPYRE_BO_FLAGS_ALL)
		return -EINVAL;
	if ((flags & DRM_SPYRE_BO_MAPPABLE) && !(flags & DRM_SPYRE_BO_DEVICE))
		return -EINVAL;
	if (!size || size > SPYRE_BO_MAX_HOST_SIZE)
		return -EINVAL;
	if (flags & DRM_SPYRE_BO_DEVICE)
		return size > mem_bytes ? -EINVAL : -EOPNOTSUPP;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(spyre_bo_check_create_args);

int spyre_bo_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct spyre_device *sdev = to_spyre_device(dev);
	struct spyre_file *sfile = file->driver_priv;
	struct drm_spyre_bo_create *args = data;
	struct drm_gem_shmem_object *shmem;
	struct spyre_bo *bo;
	u32 handle;
	int ret;

	if (args->pad || args->reserved || args->handle || args->device_addr)
		return -EINVAL;
	ret = spyre_bo_check_create_args(args->size, args->flags, sdev->info.mem_bytes);
	if (ret) {
		drm_dbg(dev, "bad buffer: size %llu flags 0x%x: %d\n", args->size, args->flags,
			ret);
		return ret;
	}

	shmem = drm_gem_shmem_create(dev, PAGE_ALIGN(args->size));
	if (IS_ERR(shmem))
		return PTR_ERR(shmem);
	bo = to_spyre_bo(&shmem->base);
	bo->flags = args->flags;

	ret = drm_gem_handle_create(file, &shmem->base, &handle);
	drm_gem_object_put(&shmem->base);
	if (ret)
		return ret;
	args->handle = handle;
	args->device_addr = spyre_bo_device_addr(bo, &sfile->ctx);
	return 0;
}

int spyre_bo_info_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct spyre_file *sfile = file->driver_priv;
	struct drm_spyre_bo_info *args = data;
	struct drm_gem_object *obj;
	struct spyre_bo *bo;
	int ret;

	if (args->flags || args->size || args->device_addr || args->mmap_offset)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	bo = to_spyre_bo(obj);
	ret = drm_gem_create_mmap_offset(obj);
	if (!ret) {
		args->flags = bo->flags;
		args->size = obj->size;
		args->device_addr = spyre_bo_device_addr(bo, &sfile->ctx);
		args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
	}
	drm_gem_object_put(obj);
	return ret;
}

int spyre_bo_wait_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_spyre_bo_wait *args = data;
	struct drm_gem_object *obj;
	long timeout, ret;

	if (args->flags || args->pad || args->job_status)
		return -EINVAL;
	timeout = drm_timeout_abs_to_jiffies(args->timeout_ns);
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	ret = dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_READ, true, timeout);
	if (ret == 0)
		ret = -ETIMEDOUT;
	else if (ret > 0)
		ret = 0;
	if (!ret)
		args->job_status = spyre_job_status_of_resv(obj->resv);
	drm_gem_object_put(obj);
	return ret;
}
