/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Spyre card hardware interface: the contract between the QEMU device model
 * (qemu-device/) and the driver (driver/).  Register offsets, bit fields and
 * constants only; no logic and no types, so that both a kernel build and a
 * QEMU build include it unchanged.  docs/hardware.md describes every register.
 */
#ifndef SPYRE_REGS_H
#define SPYRE_REGS_H

/* PCI identity (IBM, Spyre physical function). */
#define SPYRE_PCI_VENDOR_ID		0x1014
#define SPYRE_PCI_DEVICE_ID		0x06a7
#define SPYRE_PCI_REVISION		0x01

/* BAR0: 64 KiB of 32-bit registers, then the MSI-X table and PBA. */
#define SPYRE_BAR0_SIZE			0x10000
#define SPYRE_MSIX_TABLE_OFFSET		0x8000
#define SPYRE_MSIX_PBA_OFFSET		0xc000
#define SPYRE_MSIX_VECTORS		8
#define SPYRE_MSIX_VECTOR_MISC		0	/* self-test and device errors */

/* Identification (read-only). */
#define SPYRE_REG_ID			0x0000
#define   SPYRE_ID_MAGIC		0x53505952	/* "SPYR" */
#define SPYRE_REG_VERSION		0x0004
#define   SPYRE_VERSION_MAJOR_SHIFT	16
#define   SPYRE_VERSION_MINOR_MASK	0xffff
#define   SPYRE_HW_VERSION_MAJOR	0
#define   SPYRE_HW_VERSION_MINOR	1

/* Capabilities (read-only). */
#define SPYRE_REG_NUM_CORES		0x0010
#define SPYRE_REG_STICK_BYTES		0x0014
#define SPYRE_REG_SCRATCHPAD_BYTES	0x0018	/* per core */
#define SPYRE_REG_NUM_VECTORS		0x001c	/* MSI-X vectors */
#define SPYRE_REG_MEM_SIZE_LO		0x0020	/* device memory bytes */
#define SPYRE_REG_MEM_SIZE_HI		0x0024

/* Read-write scratch register; no side effects. */
#define SPYRE_REG_SCRATCH		0x0030

/*
 * Interrupt self-test: writing a vector number sets SPYRE_INT_SELFTEST in
 * INT_STATUS and, unless masked, raises that MSI-X vector.
 */
#define SPYRE_REG_IRQ_TEST		0x0040
#define SPYRE_REG_IRQ_TEST_COUNT	0x0044	/* self-test interrupts raised */

/* Interrupt cause (write 1 to clear) and mask (1 = masked). */
#define SPYRE_REG_INT_STATUS		0x0100
#define SPYRE_REG_INT_MASK		0x0104
#define   SPYRE_INT_SELFTEST		0x00000001u
#define   SPYRE_INT_GUEST_ERROR		0x00000002u
#define   SPYRE_INT_ALL			(SPYRE_INT_SELFTEST | SPYRE_INT_GUEST_ERROR)

/*
 * Error reporting: the last invalid register access, latched until cleared
 * by writing any value to ERR_STATUS.  Each one also raises
 * SPYRE_INT_GUEST_ERROR.
 */
#define SPYRE_REG_ERR_STATUS		0x0110
#define   SPYRE_ERR_NONE		0
#define   SPYRE_ERR_BAD_OFFSET		1	/* no register there */
#define   SPYRE_ERR_READ_ONLY		2	/* write to a read-only register */
#define   SPYRE_ERR_BAD_SIZE		3	/* access not 32 bits wide */
#define   SPYRE_ERR_BAD_VALUE		4	/* value out of range */
#define SPYRE_REG_ERR_ADDR		0x0114	/* offending BAR0 offset */

/* Architecture constants the capability registers report. */
#define SPYRE_NUM_CORES			32
#define SPYRE_STICK_BYTES		128
#define SPYRE_SCRATCHPAD_BYTES		0x00200000u		/* 2 MiB */
#define SPYRE_MEM_SIZE_DEFAULT		0x0040000000ull		/* 1 GiB */
#define SPYRE_MEM_SIZE_MIN		0x0000100000ull		/* 1 MiB */
#define SPYRE_MEM_SIZE_MAX		0x2000000000ull		/* 128 GiB */

#endif /* SPYRE_REGS_H */
