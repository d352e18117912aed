// SPDX-License-Identifier: GPL-2.0-only
/*
 * sysfs: the card's facts and activity, on its PCI device; hwmon: its
 * temperature and power.
 *
 * Copyright 2026 The Spyre emulation project
 */

#include <linux/device.h>
#include <linux/hwmon.h>
#include <linux/sysfs.h>

#include <drm/drm_drv.h>

#include "spyre_drv.h"
#include "spyre_hw.h"
#include "spyre_sysfs.h"

static struct spyre_drm_device *dev_to_sdev(struct device *dev)
{
	return pci_get_drvdata(to_pci_dev(dev));
}

/* A 64-bit counter from a LO/HI pair; -ENODEV once the card is gone. */
static ssize_t spyre_show_counter(struct device *dev, char *buf, u32 lo)
{
	struct spyre_drm_device *sdev = dev_to_sdev(dev);
	u64 val;
	int idx;

	if (!drm_dev_enter(&sdev->drm, &idx))
		return -ENODEV;
	val = spyre_rd32(sdev, lo) | (u64)spyre_rd32(sdev, lo + 4) << 32;
	drm_dev_exit(idx);
	return sysfs_emit(buf, "%llu\n", val);
}

static ssize_t busy_time_ns_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return spyre_show_counter(dev, buf, SPYRE_REG_BUSY_NS_LO);
}
static DEVICE_ATTR_RO(busy_time_ns);

static ssize_t commands_completed_show(struct device *dev, struct device_attribute *attr,
				       char *buf)
{
	return spyre_show_counter(dev, buf, SPYRE_REG_CMD_COUNT_LO);
}
static DEVICE_ATTR_RO(commands_completed);

static ssize_t dma_bytes_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return spyre_show_counter(dev, buf, SPYRE_REG_BYTES_LO);
}
static DEVICE_ATTR_RO(dma_bytes);

static ssize_t num_cores_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", dev_to_sdev(dev)->info.num_cores);
}
static DEVICE_ATTR_RO(num_cores);

static ssize_t mem_bytes_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", dev_to_sdev(dev)->info.mem_bytes);
}
static DEVICE_ATTR_RO(mem_bytes);

static ssize_t reset_count_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(dev_to_sdev(dev)->reset_count));
}
static DEVICE_ATTR_RO(reset_count);

static const char *const spyre_clock_names[] = { "wall", "model" };

/* What the card's timestamps count: "wall" (the emulator's time) or "model". */
static ssize_t timestamp_clock_show(struct device *dev, struct device_attribute *attr,
				    char *buf)
{
	struct spyre_drm_device *sdev = dev_to_sdev(dev);

	if (!spyre_hw_has_clock(sdev))
		return sysfs_emit(buf, "wall\n");
	return sysfs_emit(buf, "%s\n",
			  spyre_clock_names[READ_ONCE(sdev->clock) & SPYRE_CLOCK_MODEL]);
}

static ssize_t timestamp_clock_store(struct device *dev, struct device_attribute *attr,
				     const char *buf, size_t count)
{
	struct spyre_drm_device *sdev = dev_to_sdev(dev);
	int idx, mode = sysfs_match_string(spyre_clock_names, buf);

	if (mode < 0)
		return -EINVAL;
	if (!spyre_hw_has_clock(sdev))
		return -EOPNOTSUPP;
	if (!drm_dev_enter(&sdev->drm, &idx))
		return -ENODEV;
	/* Under the reset lock: a recovery restores the mode it finds. */
	mutex_lock(&sdev->reset_lock);
	WRITE_ONCE(sdev->clock, mode ? SPYRE_CLOCK_MODEL : 0);
	spyre_wr32(sdev, SPYRE_REG_CLOCK, sdev->clock);
	mutex_unlock(&sdev->reset_lock);
	drm_dev_exit(idx);
	return count;
}
static DEVICE_ATTR_RW(timestamp_clock);

static struct attribute *spyre_attrs[] = {
	&dev_attr_busy_time_ns.attr,
	&dev_attr_commands_completed.attr,
	&dev_attr_dma_bytes.attr,
	&dev_attr_num_cores.attr,
	&dev_attr_mem_bytes.attr,
	&dev_attr_reset_count.attr,
	&dev_attr_timestamp_clock.attr,
	NULL,
};

static const struct attribute_group spyre_attr_group = {
	.name = "spyre",
	.attrs = spyre_attrs,
};

static umode_t spyre_hwmon_is_visible(const void *data, enum hwmon_sensor_types type,
				      u32 attr, int channel)
{
	if ((type == hwmon_temp && attr == hwmon_temp_input) ||
	    (type == hwmon_power && attr == hwmon_power_input))
		return 0444;
	return 0;
}

static int spyre_hwmon_read(struct device *dev, enum hwmon_sensor_types type, u32 attr,
			    int channel, long *val)
{
	struct spyre_drm_device *sdev = dev_get_drvdata(dev);
	int idx;

	if (!drm_dev_enter(&sdev->drm, &idx))
		return -ENODEV;
	if (type == hwmon_temp)
		*val = spyre_rd32(sdev, SPYRE_REG_TEMP_MC);		/* millidegrees */
	else
		*val = spyre_rd32(sdev, SPYRE_REG_POWER_MW) * 1000L;	/* microwatts */
	drm_dev_exit(idx);
	return 0;
}

static const struct hwmon_ops spyre_hwmon_ops = {
	.is_visible = spyre_hwmon_is_visible,
	.read = spyre_hwmon_read,
};

static const struct hwmon_channel_info *const spyre_hwmon_info[] = {
	HWMON_CHANNEL_INFO(temp, HWMON_T_INPUT),
	HWMON_CHANNEL_INFO(power, HWMON_P_INPUT),
	NULL,
};

static const struct hwmon_chip_info spyre_hwmon_chip = {
	.ops = &spyre_hwmon_ops,
	.info = spyre_hwmon_info,
};

int spyre_sysfs_init(struct spyre_drm_device *sdev)
{
	struct device *dev = &sdev->pdev->dev;
	struct device *hwmon;
	int ret;

	ret = devm_device_add_group(dev, &spyre_attr_group);
	if (ret)
		return ret;
	hwmon = devm_hwmon_device_register_with_info(dev, DRIVER_NAME, sdev, &spyre_hwmon_chip,
						     NULL);
	return PTR_ERR_OR_ZERO(hwmon);
}
