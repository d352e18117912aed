// SPDX-License-Identifier: GPL-2.0-only
/*
 * What one open file and one user may hold of a card, so that no process
 * pins unbounded kernel or device memory: open files and queued jobs per
 * user, queued jobs and device memory per file.  What can be charged to the
 * memory cgroup is charged where it is allocated (GFP_KERNEL_ACCOUNT); these
 * bound the rest.  docs/uapi.md "Limits".
 *
 * Copyright 2026 The Spyre emulation project
 */

#include <linux/cred.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include <drm/drm_print.h>

#include "spyre_drv.h"
#include "spyre_limits.h"

static unsigned int spyre_max_files_per_user = 1024;
module_param_named(max_files_per_user, spyre_max_files_per_user, uint, 0644);
MODULE_PARM_DESC(max_files_per_user,
		 "Open files one user may have on a card before open fails with EMFILE (0: no limit)");

static unsigned int spyre_max_queued_jobs = 65536;
module_param_named(max_queued_jobs, spyre_max_queued_jobs, uint, 0644);
MODULE_PARM_DESC(max_queued_jobs,
		 "Jobs one open file may have waiting for the card before SUBMIT fails with EBUSY");

static unsigned int spyre_max_queued_jobs_per_user = 262144;
module_param_named(max_queued_jobs_per_user, spyre_max_queued_jobs_per_user, uint, 0644);
MODULE_PARM_DESC(max_queued_jobs_per_user,
		 "Jobs one user's files may have waiting for a card before SUBMIT fails with EBUSY");

static unsigned int spyre_max_device_mem_mib;
module_param_named(max_device_mem_mib, spyre_max_device_mem_mib, uint, 0644);
MODULE_PARM_DESC(max_device_mem_mib,
		 "Device memory one open file may hold, in MiB, before BO_CREATE fails with EDQUOT (0: no limit)");

void spyre_limits_init(struct spyre_drm_device *sdev)
{
	mutex_init(&sdev->users_lock);
	xa_init(&sdev->users);
}

/* Every file is gone by now, and with it every user. */
void spyre_limits_fini(struct spyre_drm_device *sdev)
{
	WARN_ON(!xa_empty(&sdev->users));
	xa_destroy(&sdev->users);
	mutex_destroy(&sdev->users_lock);
}

/* The opener's user, one more file of theirs; -EMFILE past the limit. */
int spyre_user_get(struct spyre_drm_device *sdev, struct spyre_user **out)
{
	kuid_t uid = current_uid();
	unsigned long key = from_kuid(&init_user_ns, uid);
	unsigned int max = READ_ONCE(spyre_max_files_per_user);
	struct spyre_user *user;
	int ret = 0;

	mutex_lock(&sdev->users_lock);
	user = xa_load(&sdev->users, key);
	if (!user) {
		user = kzalloc(sizeof(*user), GFP_KERNEL_ACCOUNT);
		if (!user) {
			ret = -ENOMEM;
			goto out;
		}
		user->uid = uid;
		ret = xa_err(xa_store(&sdev->users, key, user, GFP_KERNEL_ACCOUNT));
		if (ret) {
			kfree(user);
			goto out;
		}
	}
	if (max && user->files >= max) {
		drm_dbg(&sdev->drm, "open: uid %lu has %u files, max_files_per_user %u\n", key,
			user->files, max);
		ret = -EMFILE;
		goto out;
	}
	user->files++;
	*out = user;
out:
	mutex_unlock(&sdev->users_lock);
	return ret;
}

/* A file of @user is freed (released, and none of its jobs is left). */
void spyre_user_put(struct spyre_drm_device *sdev, struct spyre_user *user)
{
	mutex_lock(&sdev->users_lock);
	if (!--user->files) {
		WARN_ON(atomic_read(&user->queued_jobs));
		xa_erase(&sdev->users, from_kuid(&init_user_ns, user->uid));
		kfree(user);
	}
	mutex_unlock(&sdev->users_lock);
}

/* Jobs of @sfile submitted but not yet taken by a scheduler onto the card. */
static u32 spyre_file_queued_jobs(struct spyre_file *sfile)
{
	u32 n = 0;
	int i;

	for (i = 0; i < SPYRE_NUM_QUEUES; i++)
		n += spsc_queue_count(&sfile->entities[i].job_queue);
	return n;
}

/*
 * One more job of @sfile waiting for the card, or -EBUSY when its file or
 * its user already has as many as allowed.  Undone by
 * spyre_limits_job_dequeued() when the job leaves the queue.
 */
int spyre_limits_queue_job(struct spyre_file *sfile)
{
	struct spyre_user *user = sfile->user;

	if (spyre_file_queued_jobs(sfile) >= READ_ONCE(spyre_max_queued_jobs))
		return -EBUSY;
	if (atomic_inc_return(&user->queued_jobs) > READ_ONCE(spyre_max_queued_jobs_per_user)) {
		atomic_dec(&user->queued_jobs);
		return -EBUSY;
	}
	return 0;
}

void spyre_limits_job_dequeued(struct spyre_file *sfile)
{
	atomic_dec(&sfile->user->queued_jobs);
}

/*
 * Count @bytes more device memory against @sfile (only check whether they
 * would fit with @check_only): -EDQUOT past max_device_mem_mib.
 */
int spyre_limits_charge_device_mem(struct spyre_file *sfile, u64 bytes, bool check_only)
{
	u64 max = (u64)READ_ONCE(spyre_max_device_mem_mib) << 20;
	u64 held;

	if (check_only) {
		held = atomic64_read(&sfile->device_mem_bytes);
		return max && bytes > max - min(held, max) ? -EDQUOT : 0;
	}
	held = atomic64_add_return(bytes, &sfile->device_mem_bytes);
	if (max && held > max) {
		atomic64_sub(bytes, &sfile->device_mem_bytes);
		return -EDQUOT;
	}
	return 0;
}

void spyre_limits_uncharge_device_mem(struct spyre_file *sfile, u64 bytes)
{
	atomic64_sub(bytes, &sfile->device_mem_bytes);
}
