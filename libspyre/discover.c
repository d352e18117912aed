// SPDX-License-Identifier: MIT
/* Finding cards: accel-class devices whose PCI parent is a Spyre. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libudev.h>

#include "discover.h"
#include "error.h"
#include "spyre_regs.h"

/* Exactly @digits hex digits at *p, then @sep (or the end if sep is 0). */
static int take_hex(const char **p, int digits, char sep, unsigned int *val)
{
	*val = 0;
	for (int i = 0; i < digits; i++) {
		int c = (*p)[i];

		if (!isxdigit(c))
			return -1;
		*val = *val << 4 | (unsigned int)(isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10));
	}
	*p += digits;
	if (**p != sep)
		return -1;
	if (sep)
		(*p)++;
	return 0;
}

int spyre_pci_address_normalize(const char *in, char out[SPYRE_PCI_ADDRESS_LEN])
{
	unsigned int domain = 0, bus, dev, fn;
	const char *p = in;

	if (!in)
		return -1;
	/* "dddd:bb:dd.f" has its second ':' at offset 7; "bb:dd.f" has none. */
	if (strlen(in) == 12 && take_hex(&p, 4, ':', &domain))
		return -1;
	if (take_hex(&p, 2, ':', &bus) || take_hex(&p, 2, '.', &dev) ||
	    take_hex(&p, 1, 0, &fn))
		return -1;
	if (dev > 31 || fn > 7)
		return -1;
	snprintf(out, SPYRE_PCI_ADDRESS_LEN, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
	return 0;
}

static int sysattr_is(struct udev_device *dev, const char *attr, unsigned long want)
{
	const char *val = udev_device_get_sysattr_value(dev, attr);

	return val && strtoul(val, NULL, 16) == want;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct spyre_device_entry *ea = a, *eb = b;

	return strcmp(ea->pci_address, eb->pci_address);
}

int spyre_discover(struct spyre_device_entry *entries, int max)
{
	struct udev *udev;
	struct udev_enumerate *en;
	struct udev_list_entry *item;
	int n = 0;

	udev = udev_new();
	if (!udev)
		return -spyre_set_error(SPYRE_ERROR_SYSTEM, "udev_new failed");
	en = udev_enumerate_new(udev);
	if (!en || udev_enumerate_add_match_subsystem(en, "accel") < 0 ||
	    udev_enumerate_scan_devices(en) < 0) {
		udev_enumerate_unref(en);
		udev_unref(udev);
		return -spyre_set_error(SPYRE_ERROR_SYSTEM, "udev: cannot list accel devices");
	}

	udev_list_entry_foreach(item, udev_enumerate_get_list_entry(en)) {
		struct udev_device *dev, *pci;
		const char *node;

		dev = udev_device_new_from_syspath(udev, udev_list_entry_get_name(item));
		if (!dev)
			continue;
		pci = udev_device_get_parent_with_subsystem_devtype(dev, "pci", NULL);
		node = udev_device_get_devnode(dev);
		if (pci && node && n < max &&
		    sysattr_is(pci, "vendor", SPYRE_PCI_VENDOR_ID) &&
		    sysattr_is(pci, "device", SPYRE_PCI_DEVICE_ID)) {
			snprintf(entries[n].pci_address, sizeof(entries[n].pci_address), "%s",
				 udev_device_get_sysname(pci));
			snprintf(entries[n].devnode, sizeof(entries[n].devnode), "%s", node);
			n++;
		}
		udev_device_unref(dev);
	}
	udev_enumerate_unref(en);
	udev_unref(udev);

	qsort(entries, n, sizeof(*entries), entry_cmp);
	return n;
}

/* One SPYRE_VISIBLE_DEVICES entry: a decimal index or a PCI address. */
static int visible_lookup(const char *tok, const struct spyre_device_entry *all, int n)
{
	char want[SPYRE_PCI_ADDRESS_LEN];
	char *end;
	long idx;

	if (!*tok)
		return -1;
	idx = strtol(tok, &end, 10);
	if (!*end)
		return idx >= 0 && idx < n ? (int)idx : -1;
	if (spyre_pci_address_normalize(tok, want))
		return -1;
	for (int i = 0; i < n; i++)
		if (!strcmp(all[i].pci_address, want))
			return i;
	return -1;
}

int spyre_visible_filter(const char *spec, struct spyre_device_entry *entries, int n)
{
	struct spyre_device_entry all[SPYRE_MAX_DEVICES];
	char buf[1024], *tok, *save = NULL;
	int used[SPYRE_MAX_DEVICES] = { 0 };
	int out = 0;

	if (!spec)
		return n;
	memcpy(all, entries, sizeof(*entries) * (size_t)n);
	snprintf(buf, sizeof(buf), "%s", spec);
	/*
	 * Like CUDA_VISIBLE_DEVICES: entries in list order; an entry naming
	 * no card ends the list (everything after it is hidden too).
	 */
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		int i = visible_lookup(tok, all, n);

		if (i < 0) {
			spyre_log(SPYRE_LOG_WARN,
				  "SPYRE_VISIBLE_DEVICES: \"%s\" names no card; ignoring it and "
				  "the entries after it", tok);
			break;
		}
		if (used[i])
			continue;
		used[i] = 1;
		entries[out++] = all[i];
	}
	return out;
}

int spyre_discover_visible(struct spyre_device_entry *entries, int max)
{
	int n = spyre_discover(entries, max);

	if (n < 0)
		return n;
	return spyre_visible_filter(getenv("SPYRE_VISIBLE_DEVICES"), entries, n);
}
