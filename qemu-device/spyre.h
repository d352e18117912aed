/*
 * IBM Spyre AI accelerator, emulated PCIe card.
 *
 * QEMU interface:
 *  + BAR0: 64 KiB MMIO: registers at 0x0000-0x7fff (include/spyre_regs.h),
 *    MSI-X table at SPYRE_MSIX_TABLE_OFFSET, PBA at SPYRE_MSIX_PBA_OFFSET
 *  + SPYRE_MSIX_VECTORS MSI-X vectors; vector 0 carries self-test and
 *    device-error interrupts
 *  + property "mem-size": device memory bytes (1 MiB granularity)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_SPYRE_H
#define HW_SPYRE_H

#include "hw/pci/pci.h"
#include "qom/object.h"

#define TYPE_SPYRE "spyre"
OBJECT_DECLARE_SIMPLE_TYPE(SpyreState, SPYRE)

struct SpyreState {
    PCIDevice parent_obj;

    MemoryRegion bar0;
    MemoryRegion regs;

    /* Properties */
    uint64_t mem_size;

    /* Registers */
    uint32_t scratch;
    uint32_t irq_test_count;
    uint32_t int_status;
    uint32_t int_mask;
    uint32_t err_status;
    uint32_t err_addr;
};

#endif /* HW_SPYRE_H */
