// SPDX-License-Identifier: MIT
/* The driver interface: ioctls, GEM buffers, SUBMIT lists, job records. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "driver.h"
#include "error.h"

int spyre_ioctl(int fd, unsigned long request, void *arg)
{
	return drmIoctl(fd, request, arg) ? -errno : 0;
}

static void gem_close(spyre_device *dev, uint32_t handle)
{
	struct drm_gem_close cl;

	memset(&cl, 0, sizeof(cl));
	cl.handle = handle;
	spyre_ioctl(dev->fd, DRM_IOCTL_GEM_CLOSE, &cl);
}

/* Size the new buffer and map it for the CPU if @mappable; 0 or -errno. */
static int gem_info_map(spyre_device *dev, struct spyre_gem *gem, uint32_t handle, int mappable)
{
	struct drm_spyre_bo_info i;
	int ret;

	memset(&i, 0, sizeof(i));
	i.handle = handle;
	ret = spyre_ioctl(dev->fd, DRM_IOCTL_SPYRE_BO_INFO, &i);
	if (ret)
		return ret;
	gem->size = i.size;
	if (!mappable)
		return 0;
	gem->map = mmap(NULL, i.size, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd,
			(off_t)i.mmap_offset);
	if (gem->map == MAP_FAILED) {
		gem->map = NULL;
		return -errno;
	}
	return 0;
}

spyre_status spyre_gem_create(spyre_device *dev, uint64_t size, uint32_t flags,
			      struct spyre_gem *gem)
{
	struct drm_spyre_bo_create c;
	spyre_status st;
	int ret;

	memset(gem, 0, sizeof(*gem));
	memset(&c, 0, sizeof(c));
	c.size = size;
	c.flags = flags;
	ret = spyre_ioctl(dev->fd, DRM_IOCTL_SPYRE_BO_CREATE, &c);
	if (ret) {
		st = ret == -ENOMEM && (flags & DRM_SPYRE_BO_DEVICE) ?
			SPYRE_ERROR_OUT_OF_DEVICE_MEMORY : spyre_status_from_errno(-ret);
		return spyre_set_error(st, "%s: creating a %llu-byte %s buffer: %s",
				       dev->props.devnode, (unsigned long long)size,
				       flags & DRM_SPYRE_BO_DEVICE ? "device" : "host",
				       strerror(-ret));
	}
	ret = gem_info_map(dev, gem, c.handle,
			   !(flags & DRM_SPYRE_BO_DEVICE) || (flags & DRM_SPYRE_BO_MAPPABLE));
	if (ret) {
		gem_close(dev, c.handle);
		memset(gem, 0, sizeof(*gem));
		return spyre_set_error(spyre_status_from_errno(-ret), "%s: mapping a buffer: %s",
				       dev->props.devnode, strerror(-ret));
	}
	gem->handle = c.handle;
	gem->va = c.device_addr;
	return SPYRE_SUCCESS;
}

void spyre_gem_destroy(spyre_device *dev, struct spyre_gem *gem)
{
	if (gem->map)
		munmap(gem->map, gem->size);
	if (gem->handle) {
		struct drm_spyre_bo_wait w;

		/*
		 * The driver unmaps a buffer from this open's address space when
		 * its handle closes, even under queued jobs, and may then give the
		 * addresses to a new buffer: let every job using it finish first.
		 */
		memset(&w, 0, sizeof(w));
		w.handle = gem->handle;
		w.timeout_ns = INT64_MAX;
		spyre_ioctl(dev->fd, DRM_IOCTL_SPYRE_BO_WAIT, &w);
		gem_close(dev, gem->handle);
	}
	memset(gem, 0, sizeof(*gem));
}

spyre_status spyre_gem_share(spyre_device *from, const struct spyre_gem *gem, spyre_device *to,
			     struct spyre_gem *out)
{
	struct drm_prime_handle exp, imp;
	struct drm_spyre_bo_info i;
	int ret;

	memset(out, 0, sizeof(*out));
	memset(&exp, 0, sizeof(exp));
	memset(&imp, 0, sizeof(imp));
	exp.handle = gem->handle;
	exp.flags = DRM_CLOEXEC | DRM_RDWR;
	ret = spyre_ioctl(from->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp);
	if (ret)
		return spyre_set_error(spyre_status_from_errno(-ret), "%s: exporting a buffer: %s",
				       from->props.devnode, strerror(-ret));
	imp.fd = exp.fd;
	ret = spyre_ioctl(to->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp);
	close(exp.fd);
	if (ret)
		return spyre_set_error(spyre_status_from_errno(-ret),
				       "%s: importing a buffer of %s: %s", to->props.devnode,
				       from->props.devnode, strerror(-ret));
	memset(&i, 0, sizeof(i));
	i.handle = imp.handle;
	ret = spyre_ioctl(to->fd, DRM_IOCTL_SPYRE_BO_INFO, &i);
	if (ret) {
		gem_close(to, imp.handle);
		return spyre_set_error(spyre_status_from_errno(-ret), "%s: BO_INFO: %s",
				       to->props.devnode, strerror(-ret));
	}
	out->handle = imp.handle;
	out->va = i.device_addr;
	out->size = i.size;
	return SPYRE_SUCCESS;
}

spyre_status spyre_driver_fence_move(spyre_device *from, uint32_t from_syncobj, spyre_device *to,
				     uint32_t to_syncobj)
{
	int fd = -1, ret;

	if (drmSyncobjExportSyncFile(from->fd, from_syncobj, &fd))
		return spyre_set_error(spyre_status_from_errno(errno),
				       "%s: exporting a fence as a sync file: %s",
				       from->props.devnode, strerror(errno));
	ret = drmSyncobjImportSyncFile(to->fd, to_syncobj, fd);
	if (ret)
		ret = errno;
	close(fd);
	if (ret)
		return spyre_set_error(spyre_status_from_errno(ret),
				       "%s: importing a fence of %s: %s", to->props.devnode,
				       from->props.devnode, strerror(ret));
	return SPYRE_SUCCESS;
}

void spyre_bo_list_add_reserved(struct spyre_bo_list *list, uint32_t handle)
{
	for (uint32_t i = 0; i < list->count; i++)
		if (list->handles[i] == handle)
			return;
	list->handles[list->count++] = handle;
}

spyre_status spyre_bo_list_add(struct spyre_bo_list *list, uint32_t handle, const char *what)
{
	for (uint32_t i = 0; i < list->count; i++)
		if (list->handles[i] == handle)
			return SPYRE_SUCCESS;
	if (list->count >= SPYRE_SUBMIT_USER_BOS)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "a %s may use at most %d buffers", what,
				       SPYRE_SUBMIT_USER_BOS);
	list->handles[list->count++] = handle;
	return SPYRE_SUCCESS;
}

uint32_t spyre_driver_job_status(spyre_device *dev, uint32_t handle)
{
	struct drm_spyre_bo_wait w;

	memset(&w, 0, sizeof(w));
	w.handle = handle;
	w.timeout_ns = 0;
	if (spyre_ioctl(dev->fd, DRM_IOCTL_SPYRE_BO_WAIT, &w))
		return DRM_SPYRE_JOB_STATUS_FAILED;
	return w.job_status;
}

/* DRM_SPYRE_QUERY @param into @out; false with an older driver that lacks it. */
static int driver_query(spyre_device *dev, uint32_t param, void *out, uint32_t size)
{
	struct drm_spyre_query q;

	memset(&q, 0, sizeof(q));
	memset(out, 0, size);
	q.param = param;
	q.size = size;
	q.data = (uintptr_t)out;
	return !spyre_ioctl(dev->fd, DRM_IOCTL_SPYRE_QUERY, &q);
}

int spyre_driver_fault_record(spyre_device *dev, uint32_t queue, uint64_t job_id,
			      struct drm_spyre_fault *out)
{
	struct drm_spyre_faults fl;

	if (!driver_query(dev, DRM_SPYRE_QUERY_FAULTS, &fl, sizeof(fl)))
		return 0;	/* a driver before 0.2 */
	for (uint32_t i = fl.num_faults; i > 0 && i <= DRM_SPYRE_MAX_FAULTS; i--) {
		if (fl.faults[i - 1].job_id == job_id && fl.faults[i - 1].queue == queue) {
			*out = fl.faults[i - 1];
			return 1;
		}
	}
	return 0;
}

int spyre_driver_job_error(spyre_device *dev, uint32_t queue, uint64_t job_id,
			   struct drm_spyre_job_error *out)
{
	struct drm_spyre_job_errors el;

	if (!driver_query(dev, DRM_SPYRE_QUERY_JOB_ERRORS, &el, sizeof(el)))
		return 0;	/* a driver before 0.3 */
	for (uint32_t i = el.num_errors; i > 0 && i <= DRM_SPYRE_MAX_JOB_ERRORS; i--) {
		const struct drm_spyre_job_error *e = &el.errors[i - 1];

		if (e->job_id == job_id && e->queue == queue) {
			*out = *e;
			out->engine_detail[sizeof(out->engine_detail) - 1] = '\0';
			return 1;
		}
	}
	return 0;
}
