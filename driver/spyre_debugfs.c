// SPDX-License-Identifier: GPL-2.0-only
/*
 * debugfs: queue state, and test hooks to inject a hang and force a reset.
 *
 * Copyright 2026 The Spyre emulation project
 */

#include <linux/debugfs.h>
#include <linux/kstrtox.h>
#include <linux/seq_file.h>

#include <drm/drm_drv.h>

#include "spyre_debugfs.h"
#include "spyre_drv.h"
#include "spyre_hw.h"
#include "spyre_job.h"

static int spyre_queues_show(struct seq_file *m, void *unused)
{
	struct spyre_device *sdev = m->private;
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

/* "Q N": the N-th command queue Q starts from now on never finishes. */
static ssize_t spyre_inject_hang_write(struct file *file, const char __user *ubuf,
				       size_t len, loff_t *pos)
{
	struct spyre_device *sdev = file->private_data;
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
	spyre_wr32(sdev, SPYRE_REG_DBG_HANG,
		   SPYRE_INJECT_ARM | queue << SPYRE_INJECT_QUEUE_SHIFT | count);
	drm_dev_exit(idx);
	return len;
}

static const struct file_operations spyre_inject_hang_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = spyre_inject_hang_write,
};

static ssize_t spyre_reset_write(struct file *file, const char __user *ubuf, size_t len,
				 loff_t *pos)
{
	struct spyre_device *sdev = file->private_data;
	bool yes;
	int ret;

	ret = kstrtobool_from_user(ubuf, len, &yes);
	if (ret)
		return ret;
	if (yes)
		spyre_device_recover(sdev, NULL);
	return len;
}

static const struct file_operations spyre_reset_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = spyre_reset_write,
};

void spyre_debugfs_init(struct spyre_device *sdev)
{
	struct dentry *root = sdev->drm.debugfs_root;

	debugfs_create_file("queues", 0444, root, sdev, &spyre_queues_fops);
	debugfs_create_file("inject_hang", 0200, root, sdev, &spyre_inject_hang_fops);
	debugfs_create_file("reset", 0200, root, sdev, &spyre_reset_fops);
}
