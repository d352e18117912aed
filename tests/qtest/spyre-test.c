/*
 * QTest testcase for the emulated IBM Spyre card (-device spyre)
 *
 * Built into QEMU's qos-test by scripts/build-qemu.sh --qtest, like
 * nvme-test.c.  Every expectation comes from docs/hardware.md; every
 * constant from include/spyre_regs.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/module.h"
#include "qemu/units.h"
#include "libqtest.h"
#include "libqos/qgraph.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/malloc-pc.h"
#include "standard-headers/linux/pci_regs.h"
#include "../../hw/spyre/include/spyre_regs.h"

/* The card's mem-size in every test: larger than BAR2 so the window moves. */
#define MEM_SIZE        (96 * MiB)
#define APERTURE        (64 * MiB)

/*
 * The x86_64/q35 machine: QEMU 7.2's libqos only knows x86_64/pc
 * (i440FX), which this build leaves out.  Same PC allocator and
 * configuration-space access, behind the Q35 host bridge.
 */
typedef struct QQ35Host {
    QOSGraphObject obj;
    QPCIBusPC pci;
} QQ35Host;

typedef struct QQ35Machine {
    QOSGraphObject obj;
    QGuestAllocator alloc;
    QQ35Host bridge;
} QQ35Machine;

static QOSGraphObject *q35_host_get_device(void *obj, const char *device)
{
    QQ35Host *host = obj;

    if (!g_strcmp0(device, "pci-bus-pc")) {
        return &host->pci.obj;
    }
    fprintf(stderr, "%s not present in q35-pcihost\n", device);
    g_assert_not_reached();
}

static void q35_destructor(QOSGraphObject *obj)
{
    QQ35Machine *machine = (QQ35Machine *)obj;

    alloc_destroy(&machine->alloc);
}

static void *q35_get_driver(void *object, const char *interface)
{
    QQ35Machine *machine = object;

    if (!g_strcmp0(interface, "memory")) {
        return &machine->alloc;
    }
    fprintf(stderr, "%s not present in x86_64/q35\n", interface);
    g_assert_not_reached();
}

static QOSGraphObject *q35_get_device(void *obj, const char *device)
{
    QQ35Machine *machine = obj;

    if (!g_strcmp0(device, "q35-pcihost")) {
        return &machine->bridge.obj;
    }
    fprintf(stderr, "%s not present in x86_64/q35\n", device);
    g_assert_not_reached();
}

static void *q35_create_machine(QTestState *qts)
{
    QQ35Machine *machine = g_new0(QQ35Machine, 1);

    machine->obj.get_device = q35_get_device;
    machine->obj.get_driver = q35_get_driver;
    machine->obj.destructor = q35_destructor;
    pc_alloc_init(&machine->alloc, qts, ALLOC_NO_FLAGS);
    machine->bridge.obj.get_device = q35_host_get_device;
    qpci_init_pc(&machine->bridge.pci, qts, &machine->alloc);
    return &machine->obj;
}

/* The card's libqos driver node: a PCI device on pci-bus. */
typedef struct QSpyre {
    QOSGraphObject obj;
    QPCIDevice dev;
} QSpyre;

static void *spyre_get_driver(void *obj, const char *interface)
{
    QSpyre *spyre = obj;

    if (!g_strcmp0(interface, "pci-device")) {
        return &spyre->dev;
    }
    fprintf(stderr, "%s not present in spyre\n", interface);
    g_assert_not_reached();
}

static void *spyre_create(void *pci_bus, QGuestAllocator *alloc, void *addr)
{
    QSpyre *spyre = g_new0(QSpyre, 1);

    qpci_device_init(&spyre->dev, pci_bus, addr);
    spyre->obj.get_driver = spyre_get_driver;
    return &spyre->obj;
}

/* Per-test state. */
typedef struct Card {
    QPCIDevice *pdev;
    QTestState *qts;
    QGuestAllocator *alloc;
    QPCIBar bar0, bar2;
    uint64_t bar2_size;
} Card;

static void card_open(Card *c, QSpyre *spyre, QGuestAllocator *alloc)
{
    memset(c, 0, sizeof(*c));
    c->pdev = &spyre->dev;
    c->qts = c->pdev->bus->qts;
    c->alloc = alloc;
    qpci_device_enable(c->pdev);
    c->bar0 = qpci_iomap(c->pdev, SPYRE_BAR_REGS, NULL);
    c->bar2 = qpci_iomap(c->pdev, SPYRE_BAR_MEM, &c->bar2_size);
}

static uint32_t rd(Card *c, uint32_t off)
{
    return qpci_io_readl(c->pdev, c->bar0, off);
}

static void wr(Card *c, uint32_t off, uint32_t val)
{
    qpci_io_writel(c->pdev, c->bar0, off, val);
}

static uint64_t rd64(Card *c, uint32_t lo)
{
    uint32_t l = rd(c, lo);

    return (uint64_t)rd(c, lo + 4) << 32 | l;
}

/* Identification and capabilities. */
static void test_identity(void *obj, void *data, QGuestAllocator *alloc)
{
    Card c;
    uint32_t version;

    card_open(&c, obj, alloc);
    g_assert_cmphex(qpci_config_readw(c.pdev, PCI_VENDOR_ID), ==,
                    SPYRE_PCI_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(c.pdev, PCI_DEVICE_ID), ==,
                    SPYRE_PCI_DEVICE_ID);
    g_assert_cmphex(qpci_config_readb(c.pdev, PCI_REVISION_ID), ==,
                    SPYRE_PCI_REVISION);
    g_assert_cmphex(qpci_config_readw(c.pdev, PCI_CLASS_DEVICE), ==, 0x1200);

    g_assert_cmphex(rd(&c, SPYRE_REG_ID), ==, SPYRE_ID_MAGIC);
    version = rd(&c, SPYRE_REG_VERSION);
    g_assert_cmpuint(version >> SPYRE_VERSION_MAJOR_SHIFT, ==,
                     SPYRE_HW_VERSION_MAJOR);
    g_assert_cmpuint(version & SPYRE_VERSION_MINOR_MASK, ==,
                     SPYRE_HW_VERSION_MINOR);
    g_assert_cmpuint(rd(&c, SPYRE_REG_NUM_CORES), ==, SPYRE_NUM_CORES);
    g_assert_cmpuint(rd(&c, SPYRE_REG_STICK_BYTES), ==, SPYRE_STICK_BYTES);
    g_assert_cmphex(rd(&c, SPYRE_REG_SCRATCHPAD_BYTES), ==,
                    SPYRE_SCRATCHPAD_BYTES);
    g_assert_cmpuint(rd(&c, SPYRE_REG_NUM_VECTORS), ==, SPYRE_MSIX_VECTORS);
    g_assert_cmpuint(rd(&c, SPYRE_REG_NUM_QUEUES), ==, SPYRE_NUM_QUEUES);
    g_assert_cmpuint(rd(&c, SPYRE_REG_NUM_CONTEXTS), ==, SPYRE_NUM_CONTEXTS);
    g_assert_cmphex(rd64(&c, SPYRE_REG_MEM_SIZE_LO), ==, MEM_SIZE);
    g_assert_cmphex(rd(&c, SPYRE_REG_APERTURE_SIZE), ==, APERTURE);
    g_assert_cmphex(c.bar2_size, ==, APERTURE);
}

static void spyre_register_nodes(void)
{
    QOSGraphEdgeOptions opts = {
        .before_cmd_line = "-nodefaults",
        .extra_device_opts = "addr=04.0,mem-size=96M",
    };

    qos_node_create_machine("x86_64/q35", q35_create_machine);
    qos_node_contains("x86_64/q35", "q35-pcihost", NULL);
    qos_node_create_driver("q35-pcihost", NULL);
    qos_node_contains("q35-pcihost", "pci-bus-pc", NULL);

    add_qpci_address(&opts, &(QPCIAddress) { .devfn = QPCI_DEVFN(4, 0) });
    qos_node_create_driver("spyre", spyre_create);
    qos_node_consumes("spyre", "pci-bus", &opts);
    qos_node_produces("spyre", "pci-device");

    qos_add_test("identity", "spyre", test_identity, NULL);
}

libqos_init(spyre_register_nodes);
