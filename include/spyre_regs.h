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

/*
 * BAR0: 64 KiB of 32-bit registers, then the MSI-X table and PBA.
 * BAR2: 64-bit prefetchable window onto device memory (see APERTURE_BASE).
 */
#define SPYRE_BAR_REGS			0
#define SPYRE_BAR_MEM			2
#define SPYRE_BAR0_SIZE			0x10000
#define SPYRE_MSIX_TABLE_OFFSET		0x8000
#define SPYRE_MSIX_PBA_OFFSET		0xc000
#define SPYRE_APERTURE_MAX		0x10000000	/* 256 MiB */

/*
 * MSI-X: vector 0 for the device, then one per command queue (a FENCE's
 * default), then vectors a FENCE may name instead (from HW minor 5), so a
 * driver can take each job's interrupt on the CPU that submitted it.
 */
#define SPYRE_NUM_QUEUES		4
#define SPYRE_MSIX_VECTORS		32
#define SPYRE_MSIX_VECTOR_MISC		0
#define SPYRE_MSIX_VECTOR_QUEUE(q)	(1 + (q))
#define SPYRE_MSIX_VECTORS_FIXED	(1 + SPYRE_NUM_QUEUES)	/* misc and queues */

/* Identification (read-only). */
#define SPYRE_REG_ID			0x0000
#define   SPYRE_ID_MAGIC		0x53505952	/* "SPYR" */
#define SPYRE_REG_VERSION		0x0004
#define   SPYRE_VERSION_MAJOR_SHIFT	16
#define   SPYRE_VERSION_MINOR_MASK	0xffff
#define   SPYRE_HW_VERSION_MAJOR	0
#define   SPYRE_HW_VERSION_MINOR	5
/* Minor versions that added registers a driver may use only from then on. */
#define   SPYRE_HW_MINOR_ENGINE_RECORD	3	/* ENGINE_CORE .. ENGINE_DETAIL */
#define   SPYRE_HW_MINOR_CLOCK		3	/* CLOCK */
#define   SPYRE_HW_MINOR_INV_ACK	4	/* INV_REQUESTED, INV_DONE */
#define   SPYRE_HW_MINOR_FENCE_VECTOR	5	/* FENCE's vector argument */

/* Capabilities (read-only). */
#define SPYRE_REG_NUM_CORES		0x0010
#define SPYRE_REG_STICK_BYTES		0x0014
#define SPYRE_REG_SCRATCHPAD_BYTES	0x0018	/* per core */
#define SPYRE_REG_NUM_VECTORS		0x001c	/* MSI-X vectors */
#define SPYRE_REG_MEM_SIZE_LO		0x0020	/* device memory bytes */
#define SPYRE_REG_MEM_SIZE_HI		0x0024
#define SPYRE_REG_NUM_QUEUES		0x0028
#define SPYRE_REG_NUM_CONTEXTS		0x002c
#define SPYRE_REG_APERTURE_SIZE		0x0034	/* BAR2 bytes */

/* Read-write scratch register; no side effects. */
#define SPYRE_REG_SCRATCH		0x0030

/*
 * Interrupt self-test: writing 0 sets SPYRE_INT_SELFTEST in INT_STATUS and,
 * unless masked, raises MSI-X vector 0.
 */
#define SPYRE_REG_IRQ_TEST		0x0040
#define SPYRE_REG_IRQ_TEST_COUNT	0x0044	/* self-test interrupts raised */

/*
 * Interrupt causes (write 1 to clear) and mask (1 = masked).  Bits 0-3
 * signal vector 0; QUEUE_FENCE(q) signals vector SPYRE_MSIX_VECTOR_QUEUE(q)
 * or the vector its FENCE named.
 */
#define SPYRE_REG_INT_STATUS		0x0100
#define SPYRE_REG_INT_MASK		0x0104
#define   SPYRE_INT_SELFTEST		0x00000001u
#define   SPYRE_INT_GUEST_ERROR		0x00000002u	/* bad register access */
#define   SPYRE_INT_MMU_FAULT		0x00000004u	/* a fault was recorded */
#define   SPYRE_INT_CMD_ERROR		0x00000008u	/* a command failed; its queue stopped */
#define   SPYRE_INT_QUEUE_FENCE(q)	(0x00010000u << (q))
#define   SPYRE_INT_MISC_ALL		0x0000000fu
#define   SPYRE_INT_QUEUE_FENCE_ALL	0x000f0000u
#define   SPYRE_INT_ALL			(SPYRE_INT_MISC_ALL | SPYRE_INT_QUEUE_FENCE_ALL)

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
#define   SPYRE_ERR_BUSY		5	/* register locked in this state */
#define SPYRE_REG_ERR_ADDR		0x0114	/* offending BAR0 offset */

/* Device control. */
#define SPYRE_REG_DEV_CTRL		0x0200
#define   SPYRE_DEV_CTRL_RESET		0x00000001u	/* write 1: reset the device */
#define SPYRE_REG_DEV_STATUS		0x0204
#define   SPYRE_DEV_STATUS_READY	0x00000001u
#define   SPYRE_DEV_STATUS_RESETTING	0x00000002u	/* queues still draining */
#define SPYRE_REG_TIME_LO		0x0208	/* device time, ns since reset; */
#define SPYRE_REG_TIME_HI		0x020c	/* reading LO latches HI */
#define SPYRE_REG_CLOCK			0x0210	/* what TIME and TIMESTAMP count */
#define   SPYRE_CLOCK_MODEL		0x00000001u	/* the real card's time (modelled), else wall time */

/* Device memory aperture: BAR2 shows device memory from this offset. */
#define SPYRE_REG_APERTURE_BASE_LO	0x0300	/* multiple of 1 MiB */
#define SPYRE_REG_APERTURE_BASE_HI	0x0304

/*
 * Command queues: a ring of SPYRE_CMD_SIZE-byte commands in host memory at
 * a bus address.  Registers at SPYRE_REG_QUEUE(q) + offset.
 */
#define SPYRE_REG_QUEUE(q)		(0x1000 + (q) * 0x100)
#define SPYRE_QREG_BASE_LO		0x00	/* ring bus address, 4 KiB aligned */
#define SPYRE_QREG_BASE_HI		0x04
#define SPYRE_QREG_SIZE			0x08	/* entries: power of 2, 2..4096 */
#define SPYRE_QREG_CTRL			0x0c
#define   SPYRE_QCTRL_ENABLE		0x00000001u
#define   SPYRE_QCTRL_RESUME		0x00000002u	/* write 1: leave STOPPED */
#define   SPYRE_QCTRL_PRIORITY_SHIFT	8		/* 0 (low) .. 3 (high) */
#define   SPYRE_QCTRL_PRIORITY_MASK	0x00000300u
#define SPYRE_QREG_CONTEXT		0x10	/* MMU context of its commands */
#define SPYRE_QREG_HEAD			0x14	/* RO: next entry the device reads */
#define SPYRE_QREG_TAIL			0x18	/* RO: last doorbell value */
#define SPYRE_QREG_DOORBELL		0x1c	/* WO: new tail, starts work */
#define SPYRE_QREG_STATUS		0x20	/* RO: SPYRE_QSTATE_* */
#define   SPYRE_QSTATE_DISABLED		0
#define   SPYRE_QSTATE_IDLE		1
#define   SPYRE_QSTATE_BUSY		2
#define   SPYRE_QSTATE_STOPPED		3	/* a command failed */
#define SPYRE_QREG_COMPLETED_LO		0x24	/* RO: commands finished since enable */
#define SPYRE_QREG_COMPLETED_HI		0x28
#define SPYRE_QREG_LAST_STATUS		0x2c	/* RO: SPYRE_CMD_STATUS_* of the last */
#define SPYRE_QREG_ERROR_INDEX		0x30	/* RO: ring index that stopped it */
#define SPYRE_QREG_BUSY_NS_LO		0x34	/* RO: time spent executing */
#define SPYRE_QREG_BUSY_NS_HI		0x38
#define SPYRE_QREG_ERROR_SUB_INDEX	0x3c	/* RO: failing command inside a CALL */
#define SPYRE_QREG_ENGINE_STATUS	0x40	/* RO: engine status of the last failed LAUNCH */
/*
 * Why the last failed LAUNCH failed, beside ENGINE_STATUS (values in
 * spyre_engine_status.h); latched with it, kept until the next failure.
 */
#define SPYRE_QREG_ENGINE_CORE		0x44	/* RO: core, or SPYRE_ENGINE_NONE */
#define SPYRE_QREG_ENGINE_SITE		0x48	/* RO: what ENGINE_INDEX counts */
#define SPYRE_QREG_ENGINE_INDEX		0x4c	/* RO: stream, op or buffer, or NONE */
#define SPYRE_QREG_ENGINE_WAIT		0x50	/* RO: deadlock: what the stuck agent waits for */
#define SPYRE_QREG_ENGINE_STREAM	0x54	/* RO: deadlock: the stream waited on, or NONE */
#define SPYRE_QREG_ENGINE_STICKS_DONE	0x58	/* RO: deadlock: sticks into that stream */
#define SPYRE_QREG_ENGINE_STICKS_TOTAL	0x5c	/* RO: deadlock: sticks it carries */
#define SPYRE_QREG_ENGINE_DETAIL	0x80	/* RO: the engine's words, NUL-padded */
#define SPYRE_ENGINE_DETAIL_BYTES	128
#define SPYRE_ENGINE_NONE		0xffffffffu

/*
 * MMU: SPYRE_NUM_CONTEXTS address spaces, each a 4-level page table in
 * host memory (bus addresses), 48-bit device virtual addresses.
 */
#define SPYRE_NUM_CONTEXTS		16
#define SPYRE_REG_CTX(c)		(0x2000 + (c) * 0x10)
#define SPYRE_CTXREG_ROOT_LO		0x00	/* level-0 table, 4 KiB aligned */
#define SPYRE_CTXREG_ROOT_HI		0x04
#define SPYRE_CTXREG_CTRL		0x08
#define   SPYRE_CTX_VALID		0x00000001u
#define SPYRE_REG_MMU_INVALIDATE	0x2100	/* write a context id */
/*
 * Per context (interface 0.4): MMU_INVALIDATEs of context c accepted, and
 * how many of them completed (no command still holds a translation of c
 * from before them).  32-bit counters, 0 after reset.
 */
#define SPYRE_REG_INV_REQUESTED(c)	(0x2300 + (c) * 8)
#define SPYRE_REG_INV_DONE(c)		(0x2304 + (c) * 8)
#define SPYRE_REG_FAULT_STATUS		0x2200	/* write any value: clear */
#define   SPYRE_FAULT_VALID		0x00000001u
#define   SPYRE_FAULT_OVERFLOW		0x00000002u	/* another came while valid */
#define SPYRE_REG_FAULT_ADDR_LO		0x2204	/* device virtual address */
#define SPYRE_REG_FAULT_ADDR_HI		0x2208
#define SPYRE_REG_FAULT_CONTEXT		0x220c
#define SPYRE_REG_FAULT_QUEUE		0x2210
#define SPYRE_REG_FAULT_ACCESS		0x2214
#define   SPYRE_ACCESS_READ		1
#define   SPYRE_ACCESS_WRITE		2
#define SPYRE_REG_FAULT_REASON		0x2218
#define   SPYRE_FAULT_NOT_PRESENT	1	/* no valid entry on the walk */
#define   SPYRE_FAULT_PERMISSION	2	/* write to a read-only page */
#define   SPYRE_FAULT_BAD_ENTRY		3	/* reserved bits set, or beyond memory */
#define   SPYRE_FAULT_TABLE_FETCH	4	/* a table could not be read */
#define   SPYRE_FAULT_NO_CONTEXT	5	/* the queue's context is not valid */

/* Page-table entries (64 bits), the same at every level. */
#define SPYRE_PTE_VALID			0x0000000000000001ull
#define SPYRE_PTE_WRITE			0x0000000000000002ull
#define SPYRE_PTE_SYSTEM		0x0000000000000004ull	/* a host bus address */
#define SPYRE_PTE_LEAF			0x0000000000000080ull	/* in level 2: a 2 MiB page */
#define SPYRE_PTE_ADDR_MASK		0x000ffffffffff000ull
#define SPYRE_PTE_RESERVED_MASK		0xfff0000000000078ull
#define SPYRE_PT_LEVELS			4
#define SPYRE_PT_ENTRIES		512
#define SPYRE_PAGE_SHIFT		12
#define SPYRE_PAGE_SIZE			0x1000ull
#define SPYRE_HUGE_PAGE_SIZE		0x200000ull
#define SPYRE_VA_BITS			48
/* Bit shift of the VA bits that index a table at @level (0 = root .. 3). */
#define SPYRE_PT_SHIFT(level)		(SPYRE_PAGE_SHIFT + 9 * (SPYRE_PT_LEVELS - 1 - (level)))
/* Entry of the level-@level table that a walk for @va reads. */
#define SPYRE_PT_INDEX(va, level)	(((va) >> SPYRE_PT_SHIFT(level)) & (SPYRE_PT_ENTRIES - 1))

/* Telemetry (read-only). */
#define SPYRE_REG_TEMP_MC		0x3000	/* milli-degrees Celsius */
#define SPYRE_REG_POWER_MW		0x3004	/* milliwatts */
#define SPYRE_REG_BUSY_NS_LO		0x3008	/* any queue busy, ns since reset */
#define SPYRE_REG_BUSY_NS_HI		0x300c
#define SPYRE_REG_CMD_COUNT_LO		0x3010	/* commands completed */
#define SPYRE_REG_CMD_COUNT_HI		0x3014
#define SPYRE_REG_BYTES_LO		0x3018	/* bytes moved by DMA */
#define SPYRE_REG_BYTES_HI		0x301c
#define SPYRE_REG_FAULT_COUNT		0x3020	/* MMU faults */
#define SPYRE_REG_ERROR_COUNT		0x3024	/* failed commands */
#define SPYRE_REG_LAUNCH_COUNT		0x3028	/* LAUNCHes that ran to completion */
#define SPYRE_REG_LAUNCH_NS_LO		0x3030	/* modelled device time of all LAUNCHes */
#define SPYRE_REG_LAUNCH_NS_HI		0x3034
#define SPYRE_REG_DRAM_BYTES_LO		0x3038	/* engine device-memory traffic */
#define SPYRE_REG_DRAM_BYTES_HI		0x303c
#define SPYRE_REG_RING_BYTES_LO		0x3040	/* engine ring payload */
#define SPYRE_REG_RING_BYTES_HI		0x3044
#define SPYRE_REG_CORE_BUSY_LO(c)	(0x3100 + (c) * 8)	/* busy cycles per core */
#define SPYRE_REG_CORE_BUSY_HI(c)	(0x3104 + (c) * 8)

/*
 * Test-only fault injection.  Write SPYRE_INJECT_ARM | queue << 16 | n:
 * the n-th command the queue starts from now on (0 = the next) hangs until
 * reset (DBG_HANG) or fails with SPYRE_CMD_STATUS_DMA_ERROR (DBG_DMA_ERROR).
 * Write 0 to disarm.
 */
#define SPYRE_REG_DBG_HANG		0x3800
#define SPYRE_REG_DBG_DMA_ERROR		0x3804
/*
 * Write SPYRE_INJECT_ARM: no invalidation completes (INV_DONE stays where it
 * is) until a reset or a write of 0; what the driver does when the card
 * never confirms one.
 */
#define SPYRE_REG_DBG_INV_STALL		0x3808
/*
 * Write SPYRE_INJECT_ARM: the next DEV_CTRL reset never finishes (DEV_STATUS
 * stays RESETTING, register writes are refused) until a PCI function or bus
 * reset; what the driver does with a card that does not come back.
 */
#define SPYRE_REG_DBG_RESET_STALL	0x380c
#define   SPYRE_INJECT_ARM		0x80000000u
#define   SPYRE_INJECT_QUEUE_SHIFT	16
#define   SPYRE_INJECT_QUEUE_MASK	0x00030000u
#define   SPYRE_INJECT_COUNT_MASK	0x0000ffffu

/*
 * Commands: SPYRE_CMD_SIZE bytes, little-endian:
 *   byte 0 opcode, byte 1 flags, bytes 2-3 zero, bytes 4-7 status (the
 *   driver writes 0, the device the result), then args[0..6], 64 bits each.
 */
#define SPYRE_CMD_SIZE			64
#define SPYRE_CMD_OFF_OPCODE		0
#define SPYRE_CMD_OFF_FLAGS		1
#define SPYRE_CMD_OFF_STATUS		4
#define SPYRE_CMD_OFF_ARGS		8
#define SPYRE_CMD_NUM_ARGS		7

#define SPYRE_OP_NOP			0x00
#define SPYRE_OP_DMA_COPY		0x01	/* src, dst, bytes */
#define SPYRE_OP_DMA_COPY_SG		0x02	/* list address, entries */
#define SPYRE_OP_LAUNCH			0x03	/* program, argument block, bytes, stats */
#define SPYRE_OP_FENCE			0x04	/* address, value, vector: write, then interrupt */
#define SPYRE_OP_WAIT			0x05	/* address, value, timeout ns (0: none) */
#define SPYRE_OP_TIMESTAMP		0x06	/* address: device time in ns */
#define SPYRE_OP_CALL			0x07	/* context, buffer address, commands */
#define SPYRE_OP_DMA_FILL		0x08	/* dst, bytes, 64-bit pattern */

/* CALL: run a command buffer in another context; no CALL inside it. */
#define SPYRE_CALL_MAX_CMDS		65536

/* Command flags: none defined yet; every bit must be 0. */
#define SPYRE_CMD_FLAGS_ALL		0x00

/* Scatter-gather entry for SPYRE_OP_DMA_COPY_SG: src, dst, bytes, 0. */
#define SPYRE_SG_ENTRY_SIZE		32
#define SPYRE_SG_MAX_ENTRIES		4096
#define SPYRE_DMA_MAX_BYTES		0x0000010000000000ull	/* 1 TiB per copy */

#define SPYRE_CMD_STATUS_PENDING	0	/* never written by the device */
#define SPYRE_CMD_STATUS_SUCCESS	1
#define SPYRE_CMD_STATUS_BAD_OPCODE	2
#define SPYRE_CMD_STATUS_BAD_ARGUMENT	3	/* flags, sizes, alignment, overlap */
#define SPYRE_CMD_STATUS_MMU_FAULT	4	/* see the fault record */
#define SPYRE_CMD_STATUS_DMA_ERROR	5	/* bus error, or injected */
#define SPYRE_CMD_STATUS_UNSUPPORTED	6	/* LAUNCH before the compute engine */
#define SPYRE_CMD_STATUS_ABORTED	7	/* device reset while it ran */
#define SPYRE_CMD_STATUS_TIMEOUT	8	/* WAIT's timeout passed */
#define SPYRE_CMD_STATUS_BAD_PROGRAM	9	/* LAUNCH: the engine refused the kernel */
#define SPYRE_CMD_STATUS_DEADLOCK	10	/* LAUNCH: the kernel can never finish */

/* LAUNCH: kernel image and argument block bounds. */
#define SPYRE_LAUNCH_MAX_IMAGE		0x00400000	/* 4 MiB */
#define SPYRE_LAUNCH_MAX_ARGS		64

/*
 * LAUNCH statistics record, written at args[3] when it is not 0: u64
 * little-endian values at these indexes, then one per core.
 */
#define SPYRE_STAT_DEVICE_CYCLES	0
#define SPYRE_STAT_DEVICE_NS		1
#define SPYRE_STAT_DRAM_READ_BYTES	2
#define SPYRE_STAT_DRAM_WRITE_BYTES	3
#define SPYRE_STAT_RING_BYTES		4
#define SPYRE_STAT_RING_LINK_BYTES	5
#define SPYRE_STAT_OP_FIRINGS		6
#define SPYRE_STAT_MACS			7
#define SPYRE_STAT_CORE_BUSY_CYCLES(c)	(8 + (c))
#define SPYRE_LAUNCH_STATS_SIZE		(8 * (8 + SPYRE_NUM_CORES))

/* Architecture constants the capability registers report. */
#define SPYRE_NUM_CORES			32
#define SPYRE_STICK_BYTES		128
#define SPYRE_SCRATCHPAD_BYTES		0x00200000u		/* 2 MiB, the default */
#define SPYRE_SCRATCHPAD_MIN		0x00020000u		/* 128 KiB */
#define SPYRE_SCRATCHPAD_MAX		0x01000000u		/* 16 MiB */
#define SPYRE_MEM_SIZE_DEFAULT		0x0040000000ull		/* 1 GiB */
#define SPYRE_MEM_SIZE_MIN		0x0000100000ull		/* 1 MiB */
#define SPYRE_MEM_SIZE_MAX		0x2000000000ull		/* 128 GiB */

/* Power model around the real card's 75 W envelope. */
#define SPYRE_POWER_IDLE_MW		20000
#define SPYRE_POWER_MAX_MW		75000

#endif /* SPYRE_REGS_H */
