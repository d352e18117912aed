/*
 * IBM Spyre AI accelerator, emulated PCIe card: PCI function, BAR0
 * registers and interrupts.  docs/hardware.md is the programmer's reference.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "trace.h"

#include "spyre.h"
#include "spyre_regs.h"

#define SPYRE_REGS_SIZE     SPYRE_MSIX_TABLE_OFFSET
#define PCI_CLASS_SPYRE     0x1200  /* processing accelerator */

static void spyre_raise(SpyreState *s, uint32_t cause)
{
    s->int_status |= cause;
    if (!(cause & ~s->int_mask)) {
        return;
    }
    trace_spyre_irq(SPYRE_MSIX_VECTOR_MISC, s->int_status);
    if (msix_enabled(PCI_DEVICE(s))) {
        msix_notify(PCI_DEVICE(s), SPYRE_MSIX_VECTOR_MISC);
    }
}

/* Latch an invalid access for the driver and log it for the developer. */
static void spyre_guest_error(SpyreState *s, uint32_t code, hwaddr addr,
                              const char *what)
{
    qemu_log_mask(LOG_GUEST_ERROR, "spyre: %s at BAR0 offset 0x%" HWADDR_PRIx
                  "\n", what, addr);
    s->err_status = code;
    s->err_addr = addr;
    spyre_raise(s, SPYRE_INT_GUEST_ERROR);
}

static uint64_t spyre_reg_read(void *opaque, hwaddr addr, unsigned size)
{
    SpyreState *s = opaque;
    uint64_t val;

    if (size != 4 || (addr & 3)) {
        spyre_guest_error(s, SPYRE_ERR_BAD_SIZE, addr,
                          "read not 32 bits wide and aligned");
        return ~0ull;
    }

    switch (addr) {
    case SPYRE_REG_ID:
        val = SPYRE_ID_MAGIC;
        break;
    case SPYRE_REG_VERSION:
        val = (SPYRE_HW_VERSION_MAJOR << SPYRE_VERSION_MAJOR_SHIFT) |
              SPYRE_HW_VERSION_MINOR;
        break;
    case SPYRE_REG_NUM_CORES:
        val = SPYRE_NUM_CORES;
        break;
    case SPYRE_REG_STICK_BYTES:
        val = SPYRE_STICK_BYTES;
        break;
    case SPYRE_REG_SCRATCHPAD_BYTES:
        val = SPYRE_SCRATCHPAD_BYTES;
        break;
    case SPYRE_REG_NUM_VECTORS:
        val = SPYRE_MSIX_VECTORS;
        break;
    case SPYRE_REG_MEM_SIZE_LO:
        val = (uint32_t)s->mem_size;
        break;
    case SPYRE_REG_MEM_SIZE_HI:
        val = s->mem_size >> 32;
        break;
    case SPYRE_REG_SCRATCH:
        val = s->scratch;
        break;
    case SPYRE_REG_IRQ_TEST:
        val = 0;
        break;
    case SPYRE_REG_IRQ_TEST_COUNT:
        val = s->irq_test_count;
        break;
    case SPYRE_REG_INT_STATUS:
        val = s->int_status;
        break;
    case SPYRE_REG_INT_MASK:
        val = s->int_mask;
        break;
    case SPYRE_REG_ERR_STATUS:
        val = s->err_status;
        break;
    case SPYRE_REG_ERR_ADDR:
        val = s->err_addr;
        break;
    default:
        spyre_guest_error(s, SPYRE_ERR_BAD_OFFSET, addr,
                          "read of unimplemented register");
        return ~0ull;
    }
    trace_spyre_reg_read(addr, val);
    return val;
}

static void spyre_reg_write(void *opaque, hwaddr addr, uint64_t val,
                            unsigned size)
{
    SpyreState *s = opaque;
    uint32_t pending;

    if (size != 4 || (addr & 3)) {
        spyre_guest_error(s, SPYRE_ERR_BAD_SIZE, addr,
                          "write not 32 bits wide and aligned");
        return;
    }
    trace_spyre_reg_write(addr, val);

    switch (addr) {
    case SPYRE_REG_SCRATCH:
        s->scratch = val;
        break;
    case SPYRE_REG_IRQ_TEST:
        if (val != SPYRE_MSIX_VECTOR_MISC) {
            /* Other vectors belong to the command queues. */
            spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                              "self-test on a vector other than 0");
            break;
        }
        s->irq_test_count++;
        spyre_raise(s, SPYRE_INT_SELFTEST);
        break;
    case SPYRE_REG_INT_STATUS:
        s->int_status &= ~(uint32_t)val;
        break;
    case SPYRE_REG_INT_MASK:
        if (val & ~SPYRE_INT_ALL) {
            spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                              "undefined bits in INT_MASK");
            val &= SPYRE_INT_ALL;
        }
        /* Causes that were pending while masked fire on unmask. */
        pending = s->int_status & s->int_mask & ~(uint32_t)val;
        s->int_mask = val;
        if (pending) {
            spyre_raise(s, pending);
        }
        break;
    case SPYRE_REG_ERR_STATUS:
        s->err_status = SPYRE_ERR_NONE;
        s->err_addr = 0;
        break;
    case SPYRE_REG_ID:
    case SPYRE_REG_VERSION:
    case SPYRE_REG_NUM_CORES:
    case SPYRE_REG_STICK_BYTES:
    case SPYRE_REG_SCRATCHPAD_BYTES:
    case SPYRE_REG_NUM_VECTORS:
    case SPYRE_REG_MEM_SIZE_LO:
    case SPYRE_REG_MEM_SIZE_HI:
    case SPYRE_REG_IRQ_TEST_COUNT:
    case SPYRE_REG_ERR_ADDR:
        spyre_guest_error(s, SPYRE_ERR_READ_ONLY, addr,
                          "write to read-only register");
        break;
    default:
        spyre_guest_error(s, SPYRE_ERR_BAD_OFFSET, addr,
                          "write to unimplemented register");
        break;
    }
}

static const MemoryRegionOps spyre_reg_ops = {
    .read = spyre_reg_read,
    .write = spyre_reg_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    /* Accept every size so that bad ones reach the handler and get logged. */
    .valid = { .min_access_size = 1, .max_access_size = 8 },
    .impl = { .min_access_size = 1, .max_access_size = 8 },
};

static void spyre_reset(DeviceState *dev)
{
    SpyreState *s = SPYRE(dev);

    s->scratch = 0;
    s->irq_test_count = 0;
    s->int_status = 0;
    s->int_mask = SPYRE_INT_ALL;
    s->err_status = SPYRE_ERR_NONE;
    s->err_addr = 0;
}

static bool spyre_check_params(SpyreState *s, Error **errp)
{
    if (s->mem_size < SPYRE_MEM_SIZE_MIN || s->mem_size > SPYRE_MEM_SIZE_MAX) {
        error_setg(errp, "mem-size must be between %llu MiB and %llu GiB",
                   SPYRE_MEM_SIZE_MIN / MiB, SPYRE_MEM_SIZE_MAX / GiB);
        return false;
    }
    if (s->mem_size % MiB) {
        error_setg(errp, "mem-size must be a multiple of 1 MiB");
        return false;
    }
    return true;
}

static void spyre_realize(PCIDevice *pdev, Error **errp)
{
    SpyreState *s = SPYRE(pdev);
    int i, ret;

    if (!spyre_check_params(s, errp)) {
        return;
    }

    pci_config_set_interrupt_pin(pdev->config, 1);

    memory_region_init(&s->bar0, OBJECT(s), "spyre-bar0", SPYRE_BAR0_SIZE);
    memory_region_init_io(&s->regs, OBJECT(s), &spyre_reg_ops, s,
                          "spyre-regs", SPYRE_REGS_SIZE);
    memory_region_add_subregion(&s->bar0, 0, &s->regs);
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->bar0);

    ret = msix_init(pdev, SPYRE_MSIX_VECTORS,
                    &s->bar0, 0, SPYRE_MSIX_TABLE_OFFSET,
                    &s->bar0, 0, SPYRE_MSIX_PBA_OFFSET, 0, errp);
    if (ret) {
        return;
    }
    for (i = 0; i < SPYRE_MSIX_VECTORS; i++) {
        msix_vector_use(pdev, i);
    }

    ret = pcie_endpoint_cap_init(pdev, 0);
    if (ret < 0) {
        error_setg(errp, "spyre: cannot add the PCIe capability");
        msix_uninit(pdev, &s->bar0, &s->bar0);
        return;
    }
    pcie_cap_flr_init(pdev);
}

static void spyre_exit(PCIDevice *pdev)
{
    SpyreState *s = SPYRE(pdev);

    msix_uninit(pdev, &s->bar0, &s->bar0);
}

static const VMStateDescription spyre_vmstate = {
    .name = "spyre",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, SpyreState),
        VMSTATE_MSIX(parent_obj, SpyreState),
        VMSTATE_UINT64(mem_size, SpyreState),
        VMSTATE_UINT32(scratch, SpyreState),
        VMSTATE_UINT32(irq_test_count, SpyreState),
        VMSTATE_UINT32(int_status, SpyreState),
        VMSTATE_UINT32(int_mask, SpyreState),
        VMSTATE_UINT32(err_status, SpyreState),
        VMSTATE_UINT32(err_addr, SpyreState),
        VMSTATE_END_OF_LIST()
    },
};

static Property spyre_properties[] = {
    DEFINE_PROP_SIZE("mem-size", SpyreState, mem_size,
                     SPYRE_MEM_SIZE_DEFAULT),
    DEFINE_PROP_END_OF_LIST(),
};

static void spyre_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    pc->realize = spyre_realize;
    pc->exit = spyre_exit;
    pc->vendor_id = SPYRE_PCI_VENDOR_ID;
    pc->device_id = SPYRE_PCI_DEVICE_ID;
    pc->revision = SPYRE_PCI_REVISION;
    pc->class_id = PCI_CLASS_SPYRE;
    dc->desc = "IBM Spyre AI accelerator";
    dc->reset = spyre_reset;
    dc->vmsd = &spyre_vmstate;
    device_class_set_props(dc, spyre_properties);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo spyre_info = {
    .name = TYPE_SPYRE,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(SpyreState),
    .class_init = spyre_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void spyre_register_types(void)
{
    type_register_static(&spyre_info);
}

type_init(spyre_register_types)
