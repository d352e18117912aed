// SPDX-License-Identifier: GPL-2.0-only
/*
 * Buffers: shmem GEM objects mapped into the address space of every file
 * that holds a handle to them.
 *
 * Copyright 2026 The Spyre emulation project
 */

#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/drm_utils.h>
#include <kunit/visibility.h>

#include "spyre_drv.h"
#include "spyre_gem.h"
#include "spyre_job.h"
#include "spyre_limits.h"
#include "uapi/drm/spyre_accel.h"

/* The card clears this much device memory per driver job. */
#define SPYRE_CLEAR_CHUNK	SZ_64M

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

/* Every buffer is on the device's list from creation to free, for debugfs. */
static void spyre_bo_track(struct spyre_drm_device *sdev, struct spyre_bo *bo)
{
	bo->creator_pid = task_tgid_vnr(current);
	get_task_comm(bo->creator_comm, current);
	mutex_lock(&sdev->bos_lock);
	list_add_tail(&bo->dev_link, &sdev->bos);
	mutex_unlock(&sdev->bos_lock);
}

static void spyre_bo_untrack(struct spyre_drm_device *sdev, struct spyre_bo *bo)
{
	mutex_lock(&sdev->bos_lock);
	list_del_init(&bo->dev_link);
	mutex_unlock(&sdev->bos_lock);
}

static int spyre_bo_backing(struct spyre_bo *bo, struct spyre_mmu_backing *backing)
{
	struct sg_table *sgt;

	backing->size = bo->base.base.size;
	backing->writable = !(bo->flags & DRM_SPYRE_BO_READ_ONLY);
	if (bo->flags & DRM_SPYRE_BO_DEVICE) {
		backing->addr = bo->vram.start;
		return 0;
	}
	sgt = drm_gem_shmem_get_pages_sgt(&bo->base);
	if (IS_ERR(sgt))
		return PTR_ERR(sgt);
	backing->sgt = sgt;
	return 0;
}

/* A new handle in @file: map the buffer into that file's address space. */
static int spyre_bo_open(struct drm_gem_object *obj, struct drm_file *file)
{
	struct spyre_file *sfile = file->driver_priv;
	struct spyre_bo *bo = to_spyre_bo(obj);
	struct spyre_mmu_backing backing = { };
	struct spyre_bo_mapping *m;
	int ret;

	ret = spyre_bo_backing(bo, &backing);
	if (ret)
		return ret;

	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return -ENOMEM;
	m->ctx = &sfile->ctx;

	mutex_lock(&bo->lock);
	if (spyre_bo_find_mapping(bo, m->ctx)) {
		/* One handle per buffer and file: PRIME returns the existing one. */
		ret = -EEXIST;
		goto err_unlock;
	}
	/* Device memory counts against the file's limit while it maps it. */
	if (bo->flags & DRM_SPYRE_BO_DEVICE) {
		ret = spyre_limits_charge_device_mem(sfile, obj->size, false);
		if (ret)
			goto err_unlock;
		m->device_bytes = obj->size;
	}
	ret = spyre_mmu_map(m->ctx, &m->va, &backing, 0);
	if (ret) {
		spyre_limits_uncharge_device_mem(sfile, m->device_bytes);
		goto err_unlock;
	}
	list_add(&m->link, &bo->mappings);
	mutex_unlock(&bo->lock);
	return 0;

err_unlock:
	mutex_unlock(&bo->lock);
	kfree(m);
	return ret;
}

/* A mapping the card no longer sees: let go of its buffer. */
static void spyre_bo_mapping_free(struct spyre_bo_mapping *m)
{
	spyre_limits_uncharge_device_mem(container_of(m->ctx, struct spyre_file, ctx),
					 m->device_bytes);
	if (m->retired_obj)
		drm_gem_object_put(m->retired_obj);
	kfree(m);
}

/* Clear a mapping's entries, wait for the card to drop them, free it. */
static void spyre_bo_mapping_unmap(struct spyre_bo_mapping *m)
{
	spyre_mmu_unmap(m->ctx, &m->va);
	spyre_bo_mapping_free(m);
}

/* Unmap the mappings on @list (struct spyre_bo_mapping). */
static void spyre_bo_mappings_unmap(struct list_head *list)
{
	struct spyre_bo_mapping *m, *tmp;

	list_for_each_entry_safe(m, tmp, list, link) {
		list_del(&m->link);
		spyre_bo_mapping_unmap(m);
	}
}

/*
 * Take every mapping spyre_bo_close() left to @sfile out of its address
 * space onto @list: the file is being released, none of its jobs can still
 * run, and its address space goes next.  They are freed with
 * spyre_file_free_retired() once spyre_mmu_ctx_fini() has made sure the
 * card dropped their translations: one wait for all of them, not one each.
 */
void spyre_file_unmap_retired(struct spyre_file *sfile, struct list_head *list)
{
	struct spyre_bo_mapping *m;

	spin_lock(&sfile->retired_lock);
	list_splice_init(&sfile->retired, list);
	spin_unlock(&sfile->retired_lock);
	list_for_each_entry(m, list, link)
		spyre_mmu_unmap_dying(m->ctx, &m->va);
}

void spyre_file_free_retired(struct list_head *list)
{
	struct spyre_bo_mapping *m, *tmp;

	list_for_each_entry_safe(m, tmp, list, link) {
		list_del(&m->link);
		spyre_bo_mapping_free(m);
	}
}

/*
 * The handle closed: take the buffer out of the file's address space.  Any
 * job of the file may use its addresses, listed or not (a listed buffer's
 * pages also stay while its jobs hold it, an unlisted one's would not):
 * wait for every job the file submitted so far, so none faults on it or
 * writes into the next buffer at those addresses.  Then the entries go and
 * the card confirms no command holds a translation of them (a job submitted
 * meanwhile faults); only then may the pages or device memory be freed.
 *
 * An exiting process never waits here, and a signal ends the wait: the
 * mapping, with a reference to the buffer, is left to the file, which
 * unmaps it once those jobs are done (at the next close whose wait
 * completes, or when the file is released).  Its addresses and pages stay
 * the file's until then, so nothing the card may still touch is freed.
 */
static void spyre_bo_close(struct drm_gem_object *obj, struct drm_file *file)
{
	struct spyre_file *sfile = file->driver_priv;
	struct spyre_bo *bo = to_spyre_bo(obj);
	struct spyre_bo_mapping *m;
	LIST_HEAD(earlier);

	mutex_lock(&bo->lock);
	m = spyre_bo_find_mapping(bo, &sfile->ctx);
	if (m)
		list_del(&m->link);
	mutex_unlock(&bo->lock);
	if (!m)
		return;

	if (!(current->flags & PF_EXITING)) {
		/* Left before the wait starts: its jobs are among those waited for. */
		spin_lock(&sfile->retired_lock);
		list_splice_init(&sfile->retired, &earlier);
		spin_unlock(&sfile->retired_lock);
		if (!spyre_file_wait_jobs(sfile, true)) {
			spyre_bo_mappings_unmap(&earlier);
			spyre_bo_mapping_unmap(m);
			return;
		}
	}
	drm_gem_object_get(obj);
	m->retired_obj = obj;
	list_add_tail(&m->link, &earlier);
	spin_lock(&sfile->retired_lock);
	list_splice_tail(&earlier, &sfile->retired);
	spin_unlock(&sfile->retired_lock);
}

static void spyre_bo_free(struct drm_gem_object *obj)
{
	struct spyre_bo *bo = to_spyre_bo(obj);

	spyre_bo_untrack(to_spyre_drm_device(obj->dev), bo);
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

static void spyre_bo_device_free(struct drm_gem_object *obj)
{
	struct spyre_drm_device *sdev = to_spyre_drm_device(obj->dev);
	struct spyre_bo *bo = to_spyre_bo(obj);

	spyre_bo_untrack(sdev, bo);
	WARN_ON(!list_empty(&bo->mappings));
	mutex_lock(&sdev->vram_lock);
	drm_mm_remove_node(&bo->vram);
	mutex_unlock(&sdev->vram_lock);
	drm_gem_object_release(obj);
	mutex_destroy(&bo->lock);
	kfree(bo);
}

/* Only MAPPABLE buffers lie in the BAR window; write-combined. */
static int spyre_bo_device_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	struct spyre_drm_device *sdev = to_spyre_drm_device(obj->dev);
	struct spyre_bo *bo = to_spyre_bo(obj);
	int ret, idx;

	if (!(bo->flags & DRM_SPYRE_BO_MAPPABLE))
		return -EINVAL;
	/* The card's memory has no pages to copy on write: shared mappings only. */
	if (is_cow_mapping(vma->vm_flags))
		return -EINVAL;
	/* Not while the card goes: drm_dev_unplug() zaps the mappings made before. */
	if (!drm_dev_enter(obj->dev, &idx))
		return -ENODEV;
	vm_flags_set(vma, VM_PFNMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_page_prot = pgprot_writecombine(vm_get_page_prot(vma->vm_flags));
	ret = io_remap_pfn_range(vma, vma->vm_start,
				 (sdev->aperture_phys + bo->vram.start) >> PAGE_SHIFT,
				 vma->vm_end - vma->vm_start, vma->vm_page_prot);
	drm_dev_exit(idx);
	return ret;
}

static const struct vm_operations_struct spyre_bo_device_vm_ops = {
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

/* Device memory has no pages to hand another device: not exportable. */
static struct dma_buf *spyre_bo_device_export(struct drm_gem_object *obj, int flags)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static const struct drm_gem_object_funcs spyre_bo_device_funcs = {
	.free = spyre_bo_device_free,
	.export = spyre_bo_device_export,
	.open = spyre_bo_open,
	.close = spyre_bo_close,
	.mmap = spyre_bo_device_mmap,
	.vm_ops = &spyre_bo_device_vm_ops,
};

/* Zero a new device buffer on the card, through the driver's context. */
static int spyre_bo_device_clear(struct spyre_drm_device *sdev, struct spyre_bo *bo)
{
	struct spyre_mmu_backing backing = {
		.addr = bo->vram.start,
		.size = bo->base.base.size,
		.writable = true,
	};
	struct drm_mm_node va = { };
	int ret;

	u64 off;

	ret = spyre_mmu_map(&sdev->driver_ctx, &va, &backing, 0);
	if (ret)
		return ret;
	/*
	 * In pieces, so no single driver job looks hung on a big buffer and a
	 * dying process stops after the piece in flight.
	 */
	for (off = 0; off < backing.size && !ret; off += SPYRE_CLEAR_CHUNK) {
		ret = spyre_driver_fill(sdev, va.start + off,
					min_t(u64, SPYRE_CLEAR_CHUNK, backing.size - off), 0);
		if (!ret && fatal_signal_pending(current))
			ret = -EINTR;
	}
	spyre_mmu_unmap(&sdev->driver_ctx, &va);
	return ret;
}

static struct spyre_bo *spyre_bo_device_create(struct spyre_drm_device *sdev, u64 size, u32 flags)
{
	u64 end = flags & DRM_SPYRE_BO_MAPPABLE ? sdev->info.aperture_bytes :
						sdev->info.mem_bytes;
	struct spyre_bo *bo;
	int ret;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->flags = flags;
	mutex_init(&bo->lock);
	INIT_LIST_HEAD(&bo->mappings);
	bo->base.base.funcs = &spyre_bo_device_funcs;
	INIT_LIST_HEAD(&bo->dev_link);
	drm_gem_private_object_init(&sdev->drm, &bo->base.base, size);

	/* CPU-visible memory is scarce: others take it from the top. */
	mutex_lock(&sdev->vram_lock);
	ret = drm_mm_insert_node_in_range(&sdev->vram, &bo->vram, size, spyre_mmu_alignment(size),
					  0, 0, end, flags & DRM_SPYRE_BO_MAPPABLE ?
					  DRM_MM_INSERT_LOW : DRM_MM_INSERT_HIGH);
	mutex_unlock(&sdev->vram_lock);
	if (ret) {
		drm_gem_private_object_fini(&bo->base.base);
		mutex_destroy(&bo->lock);
		kfree(bo);
		return ERR_PTR(ret == -ENOSPC ? -ENOMEM : ret);
	}
	spyre_bo_track(sdev, bo);
	ret = spyre_bo_device_clear(sdev, bo);
	if (ret) {
		drm_gem_object_put(&bo->base.base);
		return ERR_PTR(ret);
	}
	return bo;
}

/* PRIME: a host buffer from another device, as a shmem object on its pages. */
struct drm_gem_object *spyre_gem_prime_import_sg_table(struct drm_device *dev,
						       struct dma_buf_attachment *attach,
						       struct sg_table *sgt)
{
	struct drm_gem_object *obj = drm_gem_shmem_prime_import_sg_table(dev, attach, sgt);
	struct drm_gem_object *exported = attach->dmabuf->priv;

	if (IS_ERR(obj))
		return obj;
	/*
	 * A buffer of another Spyre card (dma-bufs this module exported hold
	 * their GEM object) keeps what its creator allowed the card to do.
	 */
	if (attach->dmabuf->owner == THIS_MODULE && exported->funcs == &spyre_bo_funcs)
		to_spyre_bo(obj)->flags |= to_spyre_bo(exported)->flags & DRM_SPYRE_BO_READ_ONLY;
	spyre_bo_track(to_spyre_drm_device(dev), to_spyre_bo(obj));
	return obj;
}

struct drm_gem_object *spyre_gem_create_object(struct drm_device *dev, size_t size)
{
	struct spyre_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->base.base.funcs = &spyre_bo_funcs;
	mutex_init(&bo->lock);
	INIT_LIST_HEAD(&bo->mappings);
	/* On the device's list once created: shmem frees failures itself. */
	INIT_LIST_HEAD(&bo->dev_link);
	return &bo->base.base;
}

/*
 * Argument checks that need no device; split out so KUnit can reach them.
 * A size the card could never hold is -EINVAL; one that does not fit now
 * is -ENOMEM later.
 */
int spyre_bo_check_create_args(u64 size, u32 flags, u64 mem_bytes, u64 aperture_bytes)
{
	if (flags & ~DRM_SPYRE_BO_FLAGS_ALL)
		return -EINVAL;
	if ((flags & DRM_SPYRE_BO_MAPPABLE) && !(flags & DRM_SPYRE_BO_DEVICE))
		return -EINVAL;
	if (!size || (!(flags & DRM_SPYRE_BO_DEVICE) && size > SPYRE_BO_MAX_HOST_SIZE))
		return -EINVAL;
	if ((flags & DRM_SPYRE_BO_MAPPABLE) && size > aperture_bytes)
		return -EINVAL;
	if ((flags & DRM_SPYRE_BO_DEVICE) && size > mem_bytes)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(spyre_bo_check_create_args);

int spyre_bo_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct spyre_drm_device *sdev = to_spyre_drm_device(dev);
	struct spyre_file *sfile = file->driver_priv;
	struct drm_spyre_bo_create *args = data;
	struct drm_gem_shmem_object *shmem;
	struct spyre_bo *bo;
	u32 handle;
	int ret;

	if (args->pad || args->reserved || args->handle || args->device_addr)
		return -EINVAL;
	ret = spyre_bo_check_create_args(args->size, args->flags, sdev->info.mem_bytes,
					 sdev->info.aperture_bytes);
	if (ret) {
		drm_dbg(dev, "bad buffer: size %llu flags 0x%x: %d\n", args->size, args->flags,
			ret);
		return ret;
	}

	if (args->flags & DRM_SPYRE_BO_DEVICE) {
		/* Before clearing memory it could not keep (bo_open charges it). */
		ret = spyre_limits_charge_device_mem(sfile, PAGE_ALIGN(args->size), true);
		if (ret) {
			drm_dbg(dev, "device buffer of %llu bytes: past max_device_mem_mib\n",
				args->size);
			return ret;
		}
		bo = spyre_bo_device_create(sdev, PAGE_ALIGN(args->size), args->flags);
		if (IS_ERR(bo))
			return PTR_ERR(bo);
	} else {
		shmem = drm_gem_shmem_create(dev, PAGE_ALIGN(args->size));
		if (IS_ERR(shmem))
			return PTR_ERR(shmem);
		bo = to_spyre_bo(&shmem->base);
		bo->flags = args->flags;
		spyre_bo_track(sdev, bo);
	}

	/*
	 * Once the handle exists another thread may close it: the creation
	 * reference keeps @bo alive until its address is read (an address
	 * the close already took back reads as 0).
	 */
	ret = drm_gem_handle_create(file, &bo->base.base, &handle);
	if (!ret) {
		args->handle = handle;
		args->device_addr = spyre_bo_device_addr(bo, &sfile->ctx);
	}
	drm_gem_object_put(&bo->base.base);
	return ret;
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
	/* Woken because the card went away: say so, as every later ioctl does. */
	if (drm_dev_is_unplugged(dev))
		return -ENODEV;
	return ret;
}
