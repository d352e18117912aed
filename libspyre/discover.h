/* SPDX-License-Identifier: MIT */
/* Finding cards through udev, and SPYRE_VISIBLE_DEVICES (discover.c). */
#ifndef SPYRE_DISCOVER_H
#define SPYRE_DISCOVER_H

#include "spyre/spyre.h"

#define SPYRE_MAX_DEVICES 64

/* One discovered card: where it sits and which node opens it. */
struct spyre_device_entry {
	char pci_address[SPYRE_PCI_ADDRESS_LEN];
	char devnode[SPYRE_PATH_LEN];
};

/* Cards sorted by PCI address; returns the count or a negative status. */
int spyre_discover(struct spyre_device_entry *entries, int max);
/* The cards SPYRE_VISIBLE_DEVICES lets the process see, in its order. */
int spyre_discover_visible(struct spyre_device_entry *entries, int max);
/* Apply a SPYRE_VISIBLE_DEVICES value to @n discovered @entries in place;
 * returns the new count.  NULL @spec keeps them all. */
int spyre_visible_filter(const char *spec, struct spyre_device_entry *entries, int n);

/* Parse "dddd:bb:dd.f" or "bb:dd.f" into canonical "dddd:bb:dd.f". */
int spyre_pci_address_normalize(const char *in, char out[SPYRE_PCI_ADDRESS_LEN]);

#endif /* SPYRE_DISCOVER_H */
