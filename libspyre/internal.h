/* SPDX-License-Identifier: MIT */
/* Private state and helpers shared by libspyre's source files. */
#ifndef SPYRE_INTERNAL_H
#define SPYRE_INTERNAL_H

#include "spyre/spyre.h"

#define SPYRE_EXPORT __attribute__((visibility("default")))

#define SPYRE_MAX_DEVICES 64

struct spyre_device {
	int fd;
	spyre_device_properties props;
};

/* One discovered card: where it sits and which node opens it. */
struct spyre_device_entry {
	char pci_address[SPYRE_PCI_ADDRESS_LEN];
	char devnode[SPYRE_PATH_LEN];
};

/* Record a failure for spyre_last_error_detail() and return it. */
spyre_status spyre_set_error(spyre_status status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void spyre_clear_error(void);

/* Map an errno from open()/ioctl() to a status. */
spyre_status spyre_status_from_errno(int err);

/* Cards sorted by PCI address; returns the count or a negative status. */
int spyre_discover(struct spyre_device_entry *entries, int max);

/* Parse "dddd:bb:dd.f" or "bb:dd.f" into canonical "dddd:bb:dd.f". */
int spyre_pci_address_normalize(const char *in, char out[SPYRE_PCI_ADDRESS_LEN]);

#endif /* SPYRE_INTERNAL_H */
