/* SPDX-License-Identifier: MIT */
/*
 * libspyre: the runtime for IBM Spyre AI accelerator cards.
 *
 * Every call returns a spyre_status.  On failure, spyre_strerror() names the
 * code and spyre_last_error_detail() holds a message about the failing call
 * made on the calling thread.
 *
 * Thread safety: spyre_strerror(), spyre_last_error_detail(),
 * spyre_version() and the device discovery calls (spyre_device_count(),
 * spyre_device_open*()) may be called from any thread at any time.  A
 * spyre_device may be queried from several threads at once;
 * spyre_device_close() must not race with any other use of that device.
 */
#ifndef SPYRE_SPYRE_H
#define SPYRE_SPYRE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this header; spyre_version() gives the library's. */
#define SPYRE_VERSION_MAJOR 0
#define SPYRE_VERSION_MINOR 1
#define SPYRE_VERSION_PATCH 0

typedef enum spyre_status {
	SPYRE_SUCCESS = 0,
	SPYRE_ERROR_INVALID_ARGUMENT = 1,	/* a NULL, out-of-range or malformed argument */
	SPYRE_ERROR_NO_DEVICE = 2,		/* no such card, or it went away */
	SPYRE_ERROR_PERMISSION = 3,		/* the device node cannot be opened by this user */
	SPYRE_ERROR_OUT_OF_MEMORY = 4,		/* host memory ran out */
	SPYRE_ERROR_DRIVER = 5,			/* the driver refused a request */
	SPYRE_ERROR_VERSION_MISMATCH = 6,	/* driver or card interface this library does not know */
	SPYRE_ERROR_SYSTEM = 7,			/* the OS failed (udev, sysfs, file descriptors) */
} spyre_status;

/* Human-readable text for a status; never NULL, also for unknown codes. */
const char *spyre_strerror(spyre_status status);

/* The status' enumerator name ("SPYRE_ERROR_NO_DEVICE"); never NULL. */
const char *spyre_status_name(spyre_status status);

/*
 * Detail about the last failing call on this thread ("open /dev/accel/accel0:
 * Permission denied"); "" if none failed.  Valid until the next libspyre
 * call on this thread.
 */
const char *spyre_last_error_detail(void);

/* Library version, as major << 16 | minor << 8 | patch. */
uint32_t spyre_version(void);

typedef struct spyre_device spyre_device;

#define SPYRE_PCI_ADDRESS_LEN	16	/* "dddd:bb:dd.f" and NUL */
#define SPYRE_PATH_LEN		64

/* What a card is; filled by spyre_device_get_properties(). */
typedef struct spyre_device_properties {
	char pci_address[SPYRE_PCI_ADDRESS_LEN];
	char devnode[SPYRE_PATH_LEN];		/* "/dev/accel/accel0" */
	char driver_name[32];
	int driver_version_major;
	int driver_version_minor;
	uint32_t vendor_id;
	uint32_t device_id;
	uint32_t revision;
	uint32_t hw_version_major;		/* card interface version */
	uint32_t hw_version_minor;
	uint32_t num_cores;
	uint32_t stick_bytes;
	uint64_t scratchpad_bytes;		/* per core */
	uint64_t mem_bytes;			/* device memory */
	uint32_t num_irq_vectors;
	int irq_selftest_passed;		/* the driver's probe-time check */
} spyre_device_properties;

/* Number of Spyre cards with a driver bound. */
spyre_status spyre_device_count(int *count);

/* Open the index-th card, ordered by PCI address. */
spyre_status spyre_device_open(int index, spyre_device **device);

/* Open the card at a PCI address: "0000:01:00.0" or "01:00.0". */
spyre_status spyre_device_open_pci(const char *pci_address, spyre_device **device);

spyre_status spyre_device_get_properties(spyre_device *device,
					 spyre_device_properties *props);

/* Close a device; NULL is accepted and does nothing. */
spyre_status spyre_device_close(spyre_device *device);

#ifdef __cplusplus
}
#endif

#endif /* SPYRE_SPYRE_H */
