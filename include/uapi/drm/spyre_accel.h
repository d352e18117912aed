/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * Spyre accel driver user-space interface: the contract between driver/ and
 * libspyre/.  docs/uapi.md documents every ioctl, field and errno.
 */
#ifndef __UAPI_SPYRE_ACCEL_H__
#define __UAPI_SPYRE_ACCEL_H__

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_SPYRE_QUERY			0x00

#define DRM_IOCTL_SPYRE_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_SPYRE_QUERY, struct drm_spyre_query)

/**
 * enum drm_spyre_query_param - what DRM_IOCTL_SPYRE_QUERY returns
 * @DRM_SPYRE_QUERY_DEVICE_INFO: &struct drm_spyre_device_info
 */
enum drm_spyre_query_param {
	DRM_SPYRE_QUERY_DEVICE_INFO = 0,
};

/**
 * struct drm_spyre_query - argument of DRM_IOCTL_SPYRE_QUERY
 * @param: one of &enum drm_spyre_query_param
 * @size: in: bytes available at @data, or 0 to ask for the size only;
 *	out: the size of the kernel's structure for @param.  A non-zero size
 *	smaller than the first version of that structure is -EINVAL; a larger
 *	one is filled up to the kernel's size (structures only grow at the end).
 * @data: user pointer the structure is written to
 * @flags: must be 0
 * @reserved: must be 0
 */
struct drm_spyre_query {
	__u32 param;
	__u32 size;
	__u64 data;
	__u32 flags;
	__u32 reserved;
};

/* drm_spyre_device_info.flags */
#define DRM_SPYRE_DEVICE_IRQ_SELFTEST_PASSED	0x1ULL

/**
 * struct drm_spyre_device_info - DRM_SPYRE_QUERY_DEVICE_INFO
 * @vendor_id: PCI vendor id
 * @device_id: PCI device id
 * @revision: PCI revision
 * @hw_version: card interface version, major << 16 | minor
 * @num_cores: AI cores
 * @stick_bytes: bytes in a stick, the unit of every transfer
 * @scratchpad_bytes: scratchpad bytes per core
 * @num_irq_vectors: MSI-X vectors the driver set up
 * @mem_bytes: device memory bytes
 * @pci_domain: PCI domain of the card
 * @pci_bdf: bus << 8 | device << 3 | function
 * @flags: DRM_SPYRE_DEVICE_* bits
 */
struct drm_spyre_device_info {
	__u32 vendor_id;
	__u32 device_id;
	__u32 revision;
	__u32 hw_version;
	__u32 num_cores;
	__u32 stick_bytes;
	__u32 scratchpad_bytes;
	__u32 num_irq_vectors;
	__u64 mem_bytes;
	__u32 pci_domain;
	__u32 pci_bdf;
	__u64 flags;
};

#define DRM_SPYRE_DEVICE_INFO_SIZE_V1	56

#if defined(__cplusplus)
}
#endif

#endif /* __UAPI_SPYRE_ACCEL_H__ */
