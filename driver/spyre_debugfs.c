// SPDX-License-Identifier: GPL-2.0-only
/*
 * debugfs: contexts, buffers, device memory, the MMU fault log and queue
 * state, and test hooks to inject a hang or a DMA error and force a reset.
 *
 * Copyright 2026 The Spyre emulation project
 */

#include <linux/debugfs.h>
#include <linux/kstrtox.h>
#include <linux/pid.h>
#include <linux/seq_file.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>

#include "spyre_debugfs.h"
#include "spyre_drv.h"
#include "spyre_fault.h"
#include "spyre_gem.h"
#include "spyre_hw.h"
#include "spyre_job.h"
#include "uapi/drm/spyre_accel.h"

/* Bytes and ranges of an address space or of device memory. */
static void spyre_mm_use(struct drm_mm *mm, u64 *used, u32 *nodes)
{
	struct drm_mm_node *node;

	*used = 0;
	*nodes = 0;
	drm_mm_for_each_node(node, mm) {
		*used += node->size;
		(*nodes)++;
	}
}

/*
 * One line per open file, oldest first: its address space number and the
 * hardware context it holds now (-1: none), process, whether it is banned,
 * the device addresses its buffers take (each with its guard page) and its
 * handles.
 */
static int spyre_contexts_show(struct seq_file *m, void *unused)
{
	struct spyre_drm_device *sdev = m->private;
	struct drm_device *drm = &sdev->drm;
	struct drm_file *file;

	seq_puts(m, "ctx slot client pid comm banned va_bytes mappings handles\n");
	mutex_lock(&drm->filelist_mutex);
	list_for_each_entry_reverse(file, &drm->filelist, lhead) {
		struct spyre_file *sfile = file->driver_priv;
		struct drm_gem_object *obj;
		struct task_struct *task;
		char comm[TASK_COMM_LEN];
		u32 handles = 0, nodes;
		struct pid *pid;
		pid_t nr;
		u64 va;
		int id;

		if (!sfile)
			continue;
		rcu_read_lock();
		pid = rcu_dereference(file->pid);
		nr = pid_vnr(pid);
		task = pid_task(pid, PIDTYPE_TGID);
		strscpy(comm, task ? task->comm : "<unknown>");
		rcu_read_unlock();
		mutex_lock(&sfile->ctx.lock);
		spyre_mm_use(&sfile->ctx.va, &va, &nodes);
		mutex_unlock(&sfile->ctx.lock);
		spin_lock(&file->table_lock);
		idr_for_each_entry(&file->object_idr, obj, id)
			handles++;
		spin_unlock(&file->table_lock);
		seq_printf(m, "%u %d %llu %d %s %d %llu %u %u\n", sfile->ctx.id,
			   READ_ONCE(sfile->ctx.slot), file->client_id, nr, comm,
			   READ_ONCE(sfile->banned), va, nodes, handles);
	}
	mutex_unlock(&drm->filelist_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(spyre_contexts);

/*
 * One line per user with files on the card: uid, files (open, or released
 * and still waiting for their jobs) and jobs queued (spyre_limits.c).
 */
static int spyre_users_show(struct seq_file *m, void *unused)
{
	struct spyre_drm_device *sdev = m->private;
	struct spyre_user *user;
	unsigned long uid;

	seq_puts(m, "uid files queued_jobs\n");
	mutex_lock(&sdev->users_lock);
	xa_for_each(&sdev->users, uid, user)
		seq_printf(m, "%lu %u %d\n", uid, user->files, atomic_read(&user->queued_jobs));
	mutex_unlock(&sdev->users_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(spyre_users);

static const char *spyre_bo_placement(struct spyre_bo *bo)
{
	if (bo->flags & DRM_SPYRE_BO_MAPPABLE)
		return "device-mappable";
	if (bo->flags & DRM_SPYRE_BO_DEVICE)
		return "device";
	return bo->base.base.import_attach ? "host-imported" : "host";
}

/*
 * One line per buffer: size, placement, its device-memory offset (device
 * buffers), who created or imported it, and its address in every context
 * that maps it ("ctx@va").
 */
static int spyre_buffers_show(struct seq_file *m, void *unused)
{
	struct spyre_drm_device *sdev = m->private;
	struct spyre_bo *bo;

	seq_puts(m, "size placement device_offset exported creator_pid creator mappings\n");
	mutex_lock(&sdev->bos_lock);
	list_for_each_entry(bo, &sdev->bos, dev_link) {
		struct spyre_bo_mapping *map;

		seq_printf(m, "0x%zx %s ", bo->base.base.size, spyre_bo_placement(bo));
		if (bo->flags & DRM_SPYRE_BO_DEVICE)
			seq_printf(m, "0x%llx", bo->vram.start);
		else
			seq_putc(m, '-');
		seq_printf(m, " %d %d %s", !!bo->base.base.dma_buf, bo->creator_pid,
			   bo->creator_comm);
		mutex_lock(&bo->lock);
		list_for_each_entry(map, &bo->mappings, link)
			seq_printf(m, " %u@0x%llx", map->ctx->id, map->va.start);
		mutex_unlock(&bo->lock);
		seq_putc(m, '\n');
	}
	mutex_unlock(&sdev->bos_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(spyre_buffers);

/* Free bytes and the largest hole of @mm below @end. */
static void spyre_mm_holes(struct drm_mm *mm, u64 end, u64 *free, u64 *largest)
{
	struct drm_mm_node *pos;
	u64 start, hole_end;

	*free = 0;
	*largest = 0;
	drm_mm_for_each_hole(pos, mm, start, hole_end) {
		hole_end = min(hole_end, end);
		if (start >= hole_end)
			continue;
		*free += hole_end - start;
		*largest = max(*largest, hole_end - start);
	}
}

/* Device memory in use, free and its largest free range; all of it and the CPU window. */
static int spyre_memory_show(struct seq_file *m, void *unused)
{
	struct spyre_drm_device *sdev = m->private;
	u64 used, free, largest, host_bytes = 0;
	u32 nodes, host_bos = 0;
	struct spyre_bo *bo;

	mutex_lock(&sdev->vram_lock);
	spyre_mm_use(&sdev->vram, &used, &nodes);
	spyre_mm_holes(&sdev->vram, sdev->info.mem_bytes, &free, &largest);
	seq_printf(m, "device_total %llu\ndevice_used %llu\ndevice_buffers %u\n",
		   sdev->info.mem_bytes, used, nodes);
	seq_printf(m, "device_free %llu\ndevice_largest_free %llu\n", free, largest);
	spyre_mm_holes(&sdev->vram, sdev->info.aperture_bytes, &free, &largest);
	mutex_unlock(&sdev->vram_lock);
	seq_printf(m, "mappable_total %llu\nmappable_free %llu\nmappable_largest_free %llu\n",
		   sdev->info.aperture_bytes, free, largest);

	mutex_lock(&sdev->bos_lock);
	list_for_each_entry(bo, &sdev->bos, dev_link) {
		if (!(bo->flags & DRM_SPYRE_BO_DEVICE)) {
			host_bos++;
			host_bytes += bo->base.base.size;
		}
	}
	mutex_unlock(&sdev->bos_lock);
	seq_printf(m, "host_buffers %u\nhost_bytes %llu\n", host_bos, host_bytes);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(spyre_memory);

static const char * const spyre_fault_reasons[] = {
	[SPYRE_FAULT_NOT_PRESENT] = "not-present",
	[SPYRE_FAULT_PERMISSION] = "permission",
	[SPYRE_FAULT_BAD_ENTRY] = "bad-entry",
	[SPYRE_FAULT_TABLE_FETCH] = "table-fetch",
	[SPYRE_FAULT_NO_CONTEXT] = "no-context",
};

/* The last SPYRE_FAULT_LOG_SIZE MMU faults, oldest first. */
static int spyre_faults_show(struct seq_file *m, void *unused)
{
	struct spyre_drm_device *sdev = m->private;
	struct spyre_fault_record *log;
	u64 count, first, i;

	log = kmalloc_array(SPYRE_FAULT_LOG_SIZE, sizeof(*log), GFP_KERNEL);
	if (!log)
		return -ENOMEM;
	count = spyre_fault_log_copy(sdev, log);

	first = count > SPYRE_FAULT_LOG_SIZE ? count - SPYRE_FAULT_LOG_SIZE : 0;
	seq_printf(m, "faults %llu\n", count);
	seq_puts(m, "n time_ns ctx slot queue access va reason job pid comm\n");
	for (i = first; i < count; i++) {
		const struct spyre_fault_record *f = &log[i % SPYRE_FAULT_LOG_SIZE];
		const char *reason = f->reason < ARRAY_SIZE(spyre_fault_reasons) &&
				     spyre_fault_reasons[f->reason] ?
				     spyre_fault_reasons[f->reason] : "unknown";

		seq_printf(m, "%llu %lld %d %u %u %s 0x%llx %s%s %llu %d %s\n", i,
			   ktime_to_ns(f->time), f->ctx == U32_MAX ? -1 : (int)f->ctx, f->slot,
			   f->queue,
			   f->access == SPYRE_ACCESS_WRITE ? "write" : "read", f->va, reason,
			   f->more ? "+more" : "", f->job_id, f->pid,
			   f->comm[0] ? f->comm : "-");
	}
	kfree(log);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(spyre_faults);

static int spyre_queues_show(struct seq_file *m, void *unused)
{
	struct spyre_drm_device *sdev = m->private;
	int i, idx;

	if (!drm_dev_enter(&sdev->drm, &idx))
		return -ENODEV;
	for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
		u32 base = SPYRE_REG_QUEUE(i);

		seq_printf(m, "queue %d: state %u head %u tail %u completed %u last_status %u signalled %llu\n",
			   i, spyre_rd32(sdev, base + SPYRE_QREG_STATUS),
			   spyre_rd32(sdev, base + SPYRE_QREG_HEAD),
			   spyre_rd32(sdev, base + SPYRE_QREG_TAIL),
			   spyre_rd32(sdev, base + SPYRE_QREG_COMPLETED_LO),
			   spyre_rd32(sdev, base + SPYRE_QREG_LAST_STATUS),
			   READ_ONCE(sdev->fence_page[i]));
	}
	drm_dev_exit(idx);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(spyre_queues);

/* "Q N": arm fault injection register @reg for the N-th command queue Q starts from now on. */
static ssize_t spyre_inject_write(struct file *file, const char __user *ubuf, size_t len,
				  u32 reg)
{
	struct spyre_drm_device *sdev = file->private_data;
	unsigned int queue, count;
	char buf[32];
	int idx;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%u %u", &queue, &count) != 2 || queue >= SPYRE_NUM_QUEUES ||
	    count > SPYRE_INJECT_COUNT_MASK)
		return -EINVAL;
	if (!drm_dev_enter(&sdev->drm, &idx))
		return -ENODEV;
	spyre_wr32(sdev, reg, SPYRE_INJECT_ARM | queue << SPYRE_INJECT_QUEUE_SHIFT | count);
	drm_dev_exit(idx);
	return len;
}

/* That command never finishes (the job times out; recovery resets the card). */
static ssize_t spyre_inject_hang_write(struct file *file, const char __user *ubuf,
				       size_t len, loff_t *pos)
{
	return spyre_inject_write(file, ubuf, len, SPYRE_REG_DBG_HANG);
}

static const struct file_operations spyre_inject_hang_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = spyre_inject_hang_write,
};

/* That command fails with a DMA error (the job fails; nothing hangs). */
static ssize_t spyre_inject_dma_error_write(struct file *file, const char __user *ubuf,
					    size_t len, loff_t *pos)
{
	return spyre_inject_write(file, ubuf, len, SPYRE_REG_DBG_DMA_ERROR);
}

static const struct file_operations spyre_inject_dma_error_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = spyre_inject_dma_error_write,
};

/* "1" arms the card's on/off injection @reg (DBG_INV_STALL, DBG_RESET_STALL), "0" disarms it. */
static ssize_t spyre_inject_switch_write(struct file *file, const char __user *ubuf,
					 size_t len, u32 reg)
{
	struct spyre_drm_device *sdev = file->private_data;
	bool yes;
	int ret, idx;

	ret = kstrtobool_from_user(ubuf, len, &yes);
	if (ret)
		return ret;
	if (!drm_dev_enter(&sdev->drm, &idx))
		return -ENODEV;
	spyre_wr32(sdev, reg, yes ? SPYRE_INJECT_ARM : 0);
	drm_dev_exit(idx);
	return len;
}

/* "1": the card confirms no invalidation until it is reset. */
static ssize_t spyre_inject_inv_stall_write(struct file *file, const char __user *ubuf,
					    size_t len, loff_t *pos)
{
	return spyre_inject_switch_write(file, ubuf, len, SPYRE_REG_DBG_INV_STALL);
}

static const struct file_operations spyre_inject_inv_stall_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = spyre_inject_inv_stall_write,
};

/* "1": the card's next reset never finishes, until a function reset. */
static ssize_t spyre_inject_reset_stall_write(struct file *file, const char __user *ubuf,
					      size_t len, loff_t *pos)
{
	return spyre_inject_switch_write(file, ubuf, len, SPYRE_REG_DBG_RESET_STALL);
}

static const struct file_operations spyre_inject_reset_stall_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = spyre_inject_reset_stall_write,
};

/* "1": the next AER slot_reset finds no card there (a failed recovery). */
static ssize_t spyre_inject_slot_reset_failure_write(struct file *file, const char __user *ubuf,
						     size_t len, loff_t *pos)
{
	struct spyre_drm_device *sdev = file->private_data;
	bool yes;
	int ret;

	ret = kstrtobool_from_user(ubuf, len, &yes);
	if (ret)
		return ret;
	WRITE_ONCE(sdev->fail_slot_reset, yes);
	return len;
}

static const struct file_operations spyre_inject_slot_reset_failure_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = spyre_inject_slot_reset_failure_write,
};

static ssize_t spyre_reset_write(struct file *file, const char __user *ubuf, size_t len,
				 loff_t *pos)
{
	struct spyre_drm_device *sdev = file->private_data;
	bool yes;
	int ret;

	ret = kstrtobool_from_user(ubuf, len, &yes);
	if (ret)
		return ret;
	if (yes)
		spyre_device_reset_request(sdev);
	return len;
}

static const struct file_operations spyre_reset_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = spyre_reset_write,
};

void spyre_debugfs_init(struct spyre_drm_device *sdev)
{
	struct dentry *root = sdev->drm.debugfs_root;

	debugfs_create_file("contexts", 0444, root, sdev, &spyre_contexts_fops);
	debugfs_create_file("users", 0444, root, sdev, &spyre_users_fops);
	debugfs_create_file("buffers", 0444, root, sdev, &spyre_buffers_fops);
	debugfs_create_file("memory", 0444, root, sdev, &spyre_memory_fops);
	debugfs_create_file("faults", 0444, root, sdev, &spyre_faults_fops);
	debugfs_create_file("queues", 0444, root, sdev, &spyre_queues_fops);
	debugfs_create_file("inject_hang", 0200, root, sdev, &spyre_inject_hang_fops);
	debugfs_create_file("inject_dma_error", 0200, root, sdev, &spyre_inject_dma_error_fops);
	debugfs_create_file("inject_inv_stall", 0200, root, sdev, &spyre_inject_inv_stall_fops);
	debugfs_create_file("inject_reset_stall", 0200, root, sdev, &spyre_inject_reset_stall_fops);
	debugfs_create_file("inject_slot_reset_failure", 0200, root, sdev,
			    &spyre_inject_slot_reset_failure_fops);
	debugfs_create_file("reset", 0200, root, sdev, &spyre_reset_fops);
}
