/* SPDX-License-Identifier: MIT */
/*
 * The driver interface (driver.c): ioctls, GEM buffers and the lists a
 * SUBMIT carries, the driver's job status and fault records.  Nothing
 * above this file calls an ioctl by itself.
 */
#ifndef SPYRE_DRIVER_H
#define SPYRE_DRIVER_H

#include <stdint.h>

#include "gem.h"
#include "object.h"
#include "uapi/drm/spyre_accel.h"

/* Wraps drmIoctl (which retries EINTR/EAGAIN) to return -errno. */
int spyre_ioctl(int fd, unsigned long request, void *arg);


/* Create a GEM buffer (DRM_SPYRE_BO_* flags), mapped if the CPU can. */
spyre_status spyre_gem_create(spyre_device *dev, uint64_t size, uint32_t flags,
			      struct spyre_gem *gem);
/* Wait for the jobs using it, then close it; a zeroed @gem is a no-op. */
void spyre_gem_destroy(spyre_device *dev, struct spyre_gem *gem);

/*
 * Export @gem of @from as a dma-buf and import it into @to (PRIME): *@out is
 * the same memory in @to's address space (handle, va, size; not CPU-mapped).
 */
spyre_status spyre_gem_share(spyre_device *from, const struct spyre_gem *gem, spyre_device *to,
			     struct spyre_gem *out);
/* Put the fence of binary syncobj @from_syncobj of @from into binary syncobj
 * @to_syncobj of @to (through a sync file): jobs of @to can wait for it. */
spyre_status spyre_driver_fence_move(spyre_device *from, uint32_t from_syncobj, spyre_device *to,
				     uint32_t to_syncobj);

#define SPYRE_SUBMIT_MAX_BOS	1024
/* Room a caller's list leaves for the stream's own (ring, staging). */
#define SPYRE_SUBMIT_USER_BOS	(SPYRE_SUBMIT_MAX_BOS - 8)

/* The GEM handles one SUBMIT lists; the driver orders the job after
 * earlier jobs that listed one of them. */
struct spyre_bo_list {
	uint32_t handles[SPYRE_SUBMIT_MAX_BOS];
	uint32_t count;
};

/* Add @handle once; INVALID_ARGUMENT naming @what ("job", "graph") if
 * more than SPYRE_SUBMIT_USER_BOS. */
spyre_status spyre_bo_list_add(struct spyre_bo_list *list, uint32_t handle, const char *what);
/* The same past the user limit: for the stream's own buffers. */
void spyre_bo_list_add_reserved(struct spyre_bo_list *list, uint32_t handle);

/* DRM_SPYRE_JOB_STATUS_* of the last job that used @handle (no waiting). */
uint32_t spyre_driver_job_status(spyre_device *dev, uint32_t handle);
/* The driver's record of the MMU fault of job @job_id on @queue of this
 * open: 1 if found, 0 if not (or a driver without DRM_SPYRE_QUERY_FAULTS). */
int spyre_driver_fault_record(spyre_device *dev, uint32_t queue, uint64_t job_id,
			      struct drm_spyre_fault *out);
/* Why job @job_id on @queue of this open failed, as the card said: 1 if
 * found, 0 if not (or a driver before DRM_SPYRE_QUERY_JOB_ERRORS). */
int spyre_driver_job_error(spyre_device *dev, uint32_t queue, uint64_t job_id,
			   struct drm_spyre_job_error *out);

#endif /* SPYRE_DRIVER_H */
