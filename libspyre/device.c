// SPDX-License-Identifier: MIT
/* Opening cards and asking them what they are. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xf86drm.h>

#include "device.h"
#include "discover.h"
#include "driver.h"
#include "error.h"
#include "spyre_regs.h"
#include "trace.h"

static spyre_status device_info(spyre_device *dev, struct drm_spyre_device_info *info)
{
	struct drm_spyre_query q;
	int ret;

	memset(info, 0, sizeof(*info));
	memset(&q, 0, sizeof(q));
	q.param = DRM_SPYRE_QUERY_DEVICE_INFO;
	q.size = sizeof(*info);
	q.data = (uintptr_t)info;
	ret = spyre_ioctl(dev->fd, DRM_IOCTL_SPYRE_QUERY, &q);
	if (ret)
		return spyre_set_error(spyre_status_from_errno(-ret), "%s: device info query: %s",
				       dev->props.devnode, strerror(-ret));
	return SPYRE_SUCCESS;
}

static spyre_status query_device_info(spyre_device *dev)
{
	struct drm_spyre_device_info info;
	spyre_device_properties *p = &dev->props;
	spyre_status st = device_info(dev, &info);

	if (st != SPYRE_SUCCESS)
		return st;

	p->vendor_id = info.vendor_id;
	p->device_id = info.device_id;
	p->revision = info.revision;
	p->hw_version_major = info.hw_version >> SPYRE_VERSION_MAJOR_SHIFT;
	p->hw_version_minor = info.hw_version & SPYRE_VERSION_MINOR_MASK;
	p->num_cores = info.num_cores;
	p->stick_bytes = info.stick_bytes;
	p->scratchpad_bytes = info.scratchpad_bytes;
	p->mem_bytes = info.mem_bytes;
	p->num_irq_vectors = info.num_irq_vectors;
	p->irq_selftest_passed = !!(info.flags & DRM_SPYRE_DEVICE_IRQ_SELFTEST_PASSED);
	return SPYRE_SUCCESS;
}

static spyre_status check_driver(spyre_device *dev)
{
	drmVersionPtr ver = drmGetVersion(dev->fd);
	spyre_device_properties *p = &dev->props;

	if (!ver)
		return spyre_set_error(SPYRE_ERROR_SYSTEM, "%s: cannot read the driver version: %s",
				       p->devnode, strerror(errno));
	snprintf(p->driver_name, sizeof(p->driver_name), "%.*s", ver->name_len, ver->name);
	p->driver_version_major = ver->version_major;
	p->driver_version_minor = ver->version_minor;
	drmFreeVersion(ver);
	if (strcmp(p->driver_name, "spyre"))
		return spyre_set_error(SPYRE_ERROR_VERSION_MISMATCH,
				       "%s is driven by \"%s\", not spyre", p->devnode,
				       p->driver_name);
	return SPYRE_SUCCESS;
}

static atomic_uint next_trace_pid = 1;

/*
 * The node refused this user: say which group may open it (the udev rule
 * gives Spyre nodes to group render, docs/packages.md) and how to join it.
 */
static spyre_status permission_error(const char *devnode, int err)
{
	struct stat sb;
	struct group *gr;

	if (stat(devnode, &sb) || !(gr = getgrgid(sb.st_gid)))
		return spyre_set_error(SPYRE_ERROR_PERMISSION, "open %s: %s", devnode,
				       strerror(err));
	return spyre_set_error(SPYRE_ERROR_PERMISSION,
			       "open %s: %s: the node belongs to group '%s' (mode %04o); add "
			       "the user to it ('adduser <user> %s') and log in again",
			       devnode, strerror(err), gr->gr_name, (unsigned)(sb.st_mode & 07777),
			       gr->gr_name);
}

static spyre_status open_entry(const struct spyre_device_entry *e, spyre_device **out)
{
	spyre_device *dev;
	spyre_status st;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a device");
	pthread_mutex_init(&dev->lock, NULL);
	dev->objects.next = dev->objects.prev = &dev->objects;
	memcpy(dev->props.pci_address, e->pci_address, sizeof(e->pci_address));
	memcpy(dev->props.devnode, e->devnode, sizeof(e->devnode));

	dev->fd = open(e->devnode, O_RDWR | O_CLOEXEC);
	if (dev->fd < 0) {
		int err = errno;

		st = err == EACCES || err == EPERM ?
			     permission_error(e->devnode, err) :
			     spyre_set_error(spyre_status_from_errno(err), "open %s: %s",
					     e->devnode, strerror(err));
		free(dev);
		return st;
	}
	st = check_driver(dev);
	if (st == SPYRE_SUCCESS)
		st = query_device_info(dev);
	if (st != SPYRE_SUCCESS) {
		close(dev->fd);
		free(dev);
		return st;
	}
	dev->trace_pid = (uint32_t)atomic_fetch_add(&next_trace_pid, 1);
	spyre_handle_add(&dev->objects, SPYRE_KIND_DEVICE, dev);
	spyre_log(SPYRE_LOG_INFO, "opened %s (%s)", e->devnode, e->pci_address);
	if (spyre_trace_enabled()) {
		spyre_clock clock = SPYRE_CLOCK_WALL;
		char name[128];

		/* Which clock the trace's card timestamps are on (spyre-prof says it). */
		spyre_device_get_clock(dev, &clock);
		snprintf(name, sizeof(name), "%s (%s, card clock: %s)", e->devnode, e->pci_address,
			 clock == SPYRE_CLOCK_MODELLED ? "model" : "wall");
		spyre_trace_name_track(dev->trace_pid, 0, name);
	}
	*out = dev;
	spyre_clear_error();
	return SPYRE_SUCCESS;
}

SPYRE_EXPORT spyre_status spyre_device_count(int *count)
{
	struct spyre_device_entry entries[SPYRE_MAX_DEVICES];
	int n;

	if (!count)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "count is NULL");
	n = spyre_discover_visible(entries, SPYRE_MAX_DEVICES);
	if (n < 0)
		return (spyre_status)-n;
	*count = n;
	spyre_clear_error();
	return SPYRE_SUCCESS;
}

SPYRE_EXPORT spyre_status spyre_device_open(int index, spyre_device **device)
{
	struct spyre_device_entry entries[SPYRE_MAX_DEVICES];
	int n;

	if (!device)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "device is NULL");
	*device = NULL;
	if (index < 0)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "negative index %d", index);
	n = spyre_discover_visible(entries, SPYRE_MAX_DEVICES);
	if (n < 0)
		return (spyre_status)-n;
	if (index >= n)
		return spyre_set_error(SPYRE_ERROR_NO_DEVICE, "device %d requested, %d present",
				       index, n);
	return open_entry(&entries[index], device);
}

SPYRE_EXPORT spyre_status spyre_device_open_pci(const char *pci_address, spyre_device **device)
{
	struct spyre_device_entry entries[SPYRE_MAX_DEVICES];
	char want[SPYRE_PCI_ADDRESS_LEN];
	int i, n;

	if (!device)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "device is NULL");
	*device = NULL;
	if (spyre_pci_address_normalize(pci_address, want))
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "malformed PCI address \"%s\"",
				       pci_address ? pci_address : "(null)");
	n = spyre_discover_visible(entries, SPYRE_MAX_DEVICES);
	if (n < 0)
		return (spyre_status)-n;
	for (i = 0; i < n; i++)
		if (!strcmp(entries[i].pci_address, want))
			return open_entry(&entries[i], device);
	return spyre_set_error(SPYRE_ERROR_NO_DEVICE, "no Spyre card at %s", want);
}

SPYRE_EXPORT spyre_status spyre_device_get_properties(spyre_device *device,
						      spyre_device_properties *props)
{
	spyre_status st = spyre_device_check(device);

	if (st != SPYRE_SUCCESS)
		return st;
	if (!props)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "props is NULL");
	*props = device->props;
	spyre_clear_error();
	return SPYRE_SUCCESS;
}

SPYRE_EXPORT spyre_status spyre_device_get_clock(spyre_device *device, spyre_clock *clock)
{
	struct drm_spyre_device_info info;
	spyre_status st = spyre_device_check(device);

	if (st != SPYRE_SUCCESS)
		return st;
	if (!clock)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "clock is NULL");
	/* Asked each time: an administrator may switch it (sysfs timestamp_clock). */
	st = device_info(device, &info);
	if (st != SPYRE_SUCCESS)
		return st;
	*clock = (info.flags & DRM_SPYRE_DEVICE_MODELLED_CLOCK) ? SPYRE_CLOCK_MODELLED :
								  SPYRE_CLOCK_WALL;
	spyre_clear_error();
	return SPYRE_SUCCESS;
}

spyre_status spyre_device_check_alive(spyre_device *dev)
{
	if (atomic_load(&dev->lost))
		return spyre_set_error(SPYRE_ERROR_DEVICE_LOST,
				       "%s: earlier work failed and the driver refuses new work "
				       "on this open; close and reopen the device",
				       dev->props.devnode);
	return SPYRE_SUCCESS;
}

/* The first object of @kind on @dev, or NULL. */
static struct spyre_obj *first_of(spyre_device *dev, enum spyre_kind kind)
{
	struct spyre_obj *o, *found = NULL;

	pthread_mutex_lock(&dev->lock);
	for (o = dev->objects.next; o != &dev->objects; o = o->next) {
		if (o->kind == kind) {
			found = o;
			break;
		}
	}
	pthread_mutex_unlock(&dev->lock);
	return found;
}

spyre_status spyre_device_on_close(spyre_device *dev, spyre_close_hook hook)
{
	spyre_status st = SPYRE_SUCCESS;
	int i;

	pthread_mutex_lock(&dev->lock);
	for (i = 0; i < dev->nclose_hooks && dev->close_hooks[i] != hook; i++)
		;
	if (i == dev->nclose_hooks) {
		if (i < SPYRE_MAX_CLOSE_HOOKS)
			dev->close_hooks[dev->nclose_hooks++] = hook;
		else
			st = spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY,
					     "more than %d close hooks on %s",
					     SPYRE_MAX_CLOSE_HOOKS, dev->props.devnode);
	}
	pthread_mutex_unlock(&dev->lock);
	return st;
}

/* Objects go in the order of their kinds (object.h); the clients' hooks
 * run once the streams have finished their work. */
SPYRE_EXPORT spyre_status spyre_device_close(spyre_device *device)
{
	struct spyre_obj *o;

	if (!device)
		return spyre_done(SPYRE_SUCCESS);
	if (!spyre_handle_live(&device->objects, SPYRE_KIND_DEVICE, 0))
		return spyre_set_error(SPYRE_ERROR_INVALID_HANDLE, "device %p is not open",
				       (void *)device);
	for (int kind = SPYRE_KIND_STREAM; kind < SPYRE_KIND_DEVICE; kind++) {
		while ((o = first_of(device, (enum spyre_kind)kind)))
			o->destroy(o);
		for (int i = 0; kind == SPYRE_KIND_STREAM && i < device->nclose_hooks; i++)
			device->close_hooks[i](device);
	}
	spyre_handle_remove(&device->objects);
	spyre_trace_flush();
	close(device->fd);
	pthread_mutex_destroy(&device->lock);
	free(device);
	spyre_clear_error();
	return SPYRE_SUCCESS;
}
