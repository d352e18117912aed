/*
 * IBM Spyre AI accelerator, emulated PCIe card: PCI function, BAR0
 * registers and interrupts.  docs/hardware.md is the programmer's reference.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <math.h>
#include "qemu/atomic.h"
#include "qemu/bitops.h"
#include "qemu/host-utils.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "qemu/module.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "trace.h"

#include "spyre-dev.h"
#include "engine/engine.h"

#define SPYRE_REGS_SIZE     SPYRE_MSIX_TABLE_OFFSET
#define PCI_CLASS_SPYRE     0x1200  /* processing accelerator */

/* Power and thermal model time constants (docs/hardware.md, Telemetry). */
#define SPYRE_UTIL_TAU_NS   100000000.0     /* 100 ms */
#define SPYRE_TEMP_TAU_NS   2000000000.0    /* 2 s */
#define SPYRE_TEMP_AMBIENT  35.0            /* C */
#define SPYRE_TEMP_PER_W    0.5             /* C per W */

int64_t spyre_now_ns(void)
{
    return get_clock();
}

int64_t spyre_device_time_ns(const SpyreState *s)
{
    return spyre_now_ns() - qatomic_read(&s->time_base_ns);
}

/* Vectors whose causes were raised; delivered by the bottom half. */
static uint32_t spyre_cause_vectors(uint32_t causes)
{
    uint32_t vectors = (causes & SPYRE_INT_MISC_ALL) ?
                       1u << SPYRE_MSIX_VECTOR_MISC : 0;
    int q;

    for (q = 0; q < SPYRE_NUM_QUEUES; q++) {
        if (causes & SPYRE_INT_QUEUE_FENCE(q)) {
            vectors |= 1u << SPYRE_MSIX_VECTOR_QUEUE(q);
        }
    }
    return vectors;
}

void spyre_raise_locked(SpyreState *s, uint32_t cause)
{
    uint32_t vectors;

    s->int_status |= cause;
    vectors = spyre_cause_vectors(cause & ~s->int_mask);
    if (vectors) {
        trace_spyre_irq(vectors, s->int_status);
        s->irq_vectors |= vectors;
        qemu_bh_schedule(s->irq_bh);
    }
}

static void spyre_irq_bh(void *opaque)
{
    SpyreState *s = opaque;
    PCIDevice *pdev = PCI_DEVICE(s);
    uint32_t vectors;
    int v;

    qemu_mutex_lock(&s->lock);
    vectors = s->irq_vectors;
    s->irq_vectors = 0;
    qemu_mutex_unlock(&s->lock);
    for (v = 0; v < SPYRE_MSIX_VECTORS; v++) {
        if ((vectors & (1u << v)) && msix_enabled(pdev)) {
            msix_notify(pdev, v);
        }
    }
}

bool spyre_resetting_locked(const SpyreState *s)
{
    int i;

    /* A command that started before the last reset is still stopping. */
    for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
        if (s->queues[i].running &&
            s->queues[i].run_generation != s->generation) {
            return true;
        }
    }
    return false;
}

/* Latch an invalid access for the driver and log it for the developer. */
static void spyre_guest_error(SpyreState *s, uint32_t code, hwaddr addr,
                              const char *what)
{
    qemu_log_mask(LOG_GUEST_ERROR, "spyre: %s at BAR0 offset 0x%" HWADDR_PRIx
                  "\n", what, addr);
    s->err_status = code;
    s->err_addr = addr;
    spyre_raise_locked(s, SPYRE_INT_GUEST_ERROR);
}

static void spyre_telemetry_update_locked(SpyreState *s)
{
    int64_t now = spyre_now_ns();
    double dt = now - s->model_time_ns, inst, power_w;

    if (dt <= 0) {
        return;
    }
    inst = (s->dma_busy_ns - s->model_dma_busy_ns) / dt;
    inst = MIN(MAX(inst, 0.0), 1.0);
    s->utilisation += (1.0 - exp(-dt / SPYRE_UTIL_TAU_NS)) *
                      (inst - s->utilisation);
    power_w = (SPYRE_POWER_IDLE_MW + (SPYRE_POWER_MAX_MW - SPYRE_POWER_IDLE_MW)
               * s->utilisation) / 1000.0;
    s->temp_c += (1.0 - exp(-dt / SPYRE_TEMP_TAU_NS)) *
                 (SPYRE_TEMP_AMBIENT + SPYRE_TEMP_PER_W * power_w - s->temp_c);
    s->model_time_ns = now;
    s->model_dma_busy_ns = s->dma_busy_ns;
}

static uint32_t spyre_power_mw(const SpyreState *s)
{
    return SPYRE_POWER_IDLE_MW +
           (SPYRE_POWER_MAX_MW - SPYRE_POWER_IDLE_MW) * s->utilisation;
}

static uint32_t spyre_queue_state(const SpyreQueue *q)
{
    if (!(q->ctrl & SPYRE_QCTRL_ENABLE)) {
        return SPYRE_QSTATE_DISABLED;
    }
    if (q->stopped) {
        return SPYRE_QSTATE_STOPPED;
    }
    return q->running || q->head != q->tail ? SPYRE_QSTATE_BUSY
                                            : SPYRE_QSTATE_IDLE;
}

static bool spyre_decode(hwaddr addr, hwaddr base, hwaddr stride, int count,
                         int *index, hwaddr *off)
{
    if (addr < base || addr >= base + stride * count) {
        return false;
    }
    *index = (addr - base) / stride;
    *off = (addr - base) % stride;
    return true;
}

/*
 * The spyre_*_peek functions: what a read of a register returns, without
 * the side effects of a guest read (spyre_reg_read_locked adds those); false
 * when there is no register at that offset.  They take a const SpyreState,
 * so a write can ask whether a register exists without changing anything.
 */
static bool spyre_queue_peek(const SpyreQueue *q, hwaddr off, uint64_t *val)
{
    switch (off) {
    case SPYRE_QREG_BASE_LO:
        *val = (uint32_t)q->base;
        return true;
    case SPYRE_QREG_BASE_HI:
        *val = q->base >> 32;
        return true;
    case SPYRE_QREG_SIZE:
        *val = q->size;
        return true;
    case SPYRE_QREG_CTRL:
        *val = q->ctrl;
        return true;
    case SPYRE_QREG_CONTEXT:
        *val = q->context;
        return true;
    case SPYRE_QREG_HEAD:
        *val = q->head;
        return true;
    case SPYRE_QREG_TAIL:
        *val = q->tail;
        return true;
    case SPYRE_QREG_DOORBELL:
        *val = 0;
        return true;
    case SPYRE_QREG_STATUS:
        *val = spyre_queue_state(q);
        return true;
    case SPYRE_QREG_COMPLETED_LO:
        *val = (uint32_t)q->completed;
        return true;
    case SPYRE_QREG_COMPLETED_HI:
        *val = q->completed >> 32;
        return true;
    case SPYRE_QREG_LAST_STATUS:
        *val = q->last_status;
        return true;
    case SPYRE_QREG_ERROR_INDEX:
        *val = q->error_index;
        return true;
    case SPYRE_QREG_BUSY_NS_LO:
        *val = (uint32_t)q->busy_ns;
        return true;
    case SPYRE_QREG_BUSY_NS_HI:
        *val = q->busy_ns >> 32;
        return true;
    case SPYRE_QREG_ERROR_SUB_INDEX:
        *val = q->error_sub_index;
        return true;
    case SPYRE_QREG_ENGINE_STATUS:
        *val = q->engine_status;
        return true;
    }
    return false;
}

static bool spyre_ctx_peek(const SpyreState *s, int c, hwaddr off,
                           uint64_t *val)
{
    switch (off) {
    case SPYRE_CTXREG_ROOT_LO:
        *val = (uint32_t)s->ctx_root[c];
        return true;
    case SPYRE_CTXREG_ROOT_HI:
        *val = s->ctx_root[c] >> 32;
        return true;
    case SPYRE_CTXREG_CTRL:
        *val = s->ctx_ctrl[c];
        return true;
    }
    return false;
}

/* Identification and capabilities: fixed once the device is realized. */
static bool spyre_caps_peek(const SpyreState *s, hwaddr addr, uint64_t *val)
{
    switch (addr) {
    case SPYRE_REG_ID:
        *val = SPYRE_ID_MAGIC;
        return true;
    case SPYRE_REG_VERSION:
        *val = (SPYRE_HW_VERSION_MAJOR << SPYRE_VERSION_MAJOR_SHIFT) |
               SPYRE_HW_VERSION_MINOR;
        return true;
    case SPYRE_REG_NUM_CORES:
        *val = SPYRE_NUM_CORES;
        return true;
    case SPYRE_REG_STICK_BYTES:
        *val = SPYRE_STICK_BYTES;
        return true;
    case SPYRE_REG_SCRATCHPAD_BYTES:
        *val = s->scratchpad_size;
        return true;
    case SPYRE_REG_NUM_VECTORS:
        *val = SPYRE_MSIX_VECTORS;
        return true;
    case SPYRE_REG_MEM_SIZE_LO:
        *val = (uint32_t)s->mem_size;
        return true;
    case SPYRE_REG_MEM_SIZE_HI:
        *val = s->mem_size >> 32;
        return true;
    case SPYRE_REG_NUM_QUEUES:
        *val = SPYRE_NUM_QUEUES;
        return true;
    case SPYRE_REG_NUM_CONTEXTS:
        *val = SPYRE_NUM_CONTEXTS;
        return true;
    case SPYRE_REG_APERTURE_SIZE:
        *val = s->aperture_size;
        return true;
    }
    return false;
}

/* Scratch, interrupts, errors, device control and time, the window. */
static bool spyre_ctrl_peek(const SpyreState *s, hwaddr addr, uint64_t *val)
{
    switch (addr) {
    case SPYRE_REG_SCRATCH:
        *val = s->scratch;
        return true;
    case SPYRE_REG_IRQ_TEST:
    case SPYRE_REG_DEV_CTRL:
        *val = 0;
        return true;
    case SPYRE_REG_IRQ_TEST_COUNT:
        *val = s->irq_test_count;
        return true;
    case SPYRE_REG_INT_STATUS:
        *val = s->int_status;
        return true;
    case SPYRE_REG_INT_MASK:
        *val = s->int_mask;
        return true;
    case SPYRE_REG_ERR_STATUS:
        *val = s->err_status;
        return true;
    case SPYRE_REG_ERR_ADDR:
        *val = s->err_addr;
        return true;
    case SPYRE_REG_DEV_STATUS:
        *val = spyre_resetting_locked(s) ? SPYRE_DEV_STATUS_RESETTING
                                         : SPYRE_DEV_STATUS_READY;
        return true;
    case SPYRE_REG_TIME_LO:
        *val = (uint32_t)spyre_device_time_ns(s);
        return true;
    case SPYRE_REG_TIME_HI:
        *val = s->time_hi_latch;
        return true;
    case SPYRE_REG_APERTURE_BASE_LO:
        *val = (uint32_t)s->aperture_base;
        return true;
    case SPYRE_REG_APERTURE_BASE_HI:
        *val = s->aperture_base >> 32;
        return true;
    }
    return false;
}

/* MMU invalidation and the fault record. */
static bool spyre_mmu_peek(const SpyreState *s, hwaddr addr, uint64_t *val)
{
    switch (addr) {
    case SPYRE_REG_MMU_INVALIDATE:
        *val = 0;
        return true;
    case SPYRE_REG_FAULT_STATUS:
        *val = s->fault_status;
        return true;
    case SPYRE_REG_FAULT_ADDR_LO:
        *val = (uint32_t)s->fault_addr;
        return true;
    case SPYRE_REG_FAULT_ADDR_HI:
        *val = s->fault_addr >> 32;
        return true;
    case SPYRE_REG_FAULT_CONTEXT:
        *val = s->fault_context;
        return true;
    case SPYRE_REG_FAULT_QUEUE:
        *val = s->fault_queue;
        return true;
    case SPYRE_REG_FAULT_ACCESS:
        *val = s->fault_access;
        return true;
    case SPYRE_REG_FAULT_REASON:
        *val = s->fault_reason;
        return true;
    }
    return false;
}

/* Telemetry, CORE_BUSY included; TEMP_MC and POWER_MW as last modelled. */
static bool spyre_telemetry_peek(const SpyreState *s, hwaddr addr,
                                 uint64_t *val)
{
    hwaddr off;
    uint64_t t;
    int c;

    if (spyre_decode(addr, SPYRE_REG_CORE_BUSY_LO(0), 8, SPYRE_NUM_CORES,
                     &c, &off)) {
        *val = off ? s->core_busy_cycles[c] >> 32
                   : (uint32_t)s->core_busy_cycles[c];
        return true;
    }
    switch (addr) {
    case SPYRE_REG_TEMP_MC:
        *val = s->temp_c * 1000.0;
        return true;
    case SPYRE_REG_POWER_MW:
        *val = spyre_power_mw(s);
        return true;
    case SPYRE_REG_BUSY_NS_LO:
    case SPYRE_REG_BUSY_NS_HI:
        t = s->busy_ns + (s->running_queues ? spyre_now_ns() - s->busy_since_ns
                                            : 0);
        *val = addr == SPYRE_REG_BUSY_NS_LO ? (uint32_t)t : t >> 32;
        return true;
    case SPYRE_REG_CMD_COUNT_LO:
        *val = (uint32_t)s->cmd_count;
        return true;
    case SPYRE_REG_CMD_COUNT_HI:
        *val = s->cmd_count >> 32;
        return true;
    case SPYRE_REG_BYTES_LO:
        *val = (uint32_t)s->bytes_moved;
        return true;
    case SPYRE_REG_BYTES_HI:
        *val = s->bytes_moved >> 32;
        return true;
    case SPYRE_REG_FAULT_COUNT:
        *val = s->fault_count;
        return true;
    case SPYRE_REG_ERROR_COUNT:
        *val = s->error_count;
        return true;
    case SPYRE_REG_LAUNCH_COUNT:
        *val = s->launch_count;
        return true;
    case SPYRE_REG_LAUNCH_NS_LO:
        *val = (uint32_t)s->launch_ns;
        return true;
    case SPYRE_REG_LAUNCH_NS_HI:
        *val = s->launch_ns >> 32;
        return true;
    case SPYRE_REG_DRAM_BYTES_LO:
        *val = (uint32_t)s->engine_dram_bytes;
        return true;
    case SPYRE_REG_DRAM_BYTES_HI:
        *val = s->engine_dram_bytes >> 32;
        return true;
    case SPYRE_REG_RING_BYTES_LO:
        *val = (uint32_t)s->engine_ring_bytes;
        return true;
    case SPYRE_REG_RING_BYTES_HI:
        *val = s->engine_ring_bytes >> 32;
        return true;
    }
    return false;
}

static bool spyre_global_peek(const SpyreState *s, hwaddr addr,
                              uint64_t *val)
{
    if (spyre_caps_peek(s, addr, val) || spyre_ctrl_peek(s, addr, val) ||
        spyre_mmu_peek(s, addr, val) || spyre_telemetry_peek(s, addr, val)) {
        return true;
    }
    switch (addr) {
    case SPYRE_REG_DBG_HANG:
        *val = s->dbg_hang;
        return true;
    case SPYRE_REG_DBG_DMA_ERROR:
        *val = s->dbg_dma_error;
        return true;
    }
    return false;
}

static bool spyre_reg_peek(const SpyreState *s, hwaddr addr, uint64_t *val)
{
    hwaddr off;
    int i;

    if (spyre_decode(addr, SPYRE_REG_QUEUE(0), 0x100, SPYRE_NUM_QUEUES,
                     &i, &off)) {
        return spyre_queue_peek(&s->queues[i], off, val);
    }
    if (spyre_decode(addr, SPYRE_REG_CTX(0), 0x10, SPYRE_NUM_CONTEXTS,
                     &i, &off)) {
        return spyre_ctx_peek(s, i, off, val);
    }
    return spyre_global_peek(s, addr, val);
}

/* Is there a register at addr?  A pure lookup: no read side effects. */
static bool spyre_reg_exists(const SpyreState *s, hwaddr addr)
{
    uint64_t unused;

    return spyre_reg_peek(s, addr, &unused);
}

/* A guest read: the register's value and the side effects of reading it. */
static bool spyre_reg_read_locked(SpyreState *s, hwaddr addr, uint64_t *val)
{
    int64_t t;

    switch (addr) {
    case SPYRE_REG_TIME_LO:
        /* One sample for both halves: HI then reads the time LO saw. */
        t = spyre_device_time_ns(s);
        s->time_hi_latch = t >> 32;
        *val = (uint32_t)t;
        return true;
    case SPYRE_REG_TEMP_MC:
    case SPYRE_REG_POWER_MW:
        spyre_telemetry_update_locked(s);
        break;
    }
    return spyre_reg_peek(s, addr, val);
}

static uint64_t spyre_reg_read(void *opaque, hwaddr addr, unsigned size)
{
    SpyreState *s = opaque;
    uint64_t val = 0;

    qemu_mutex_lock(&s->lock);
    if (size != 4 || (addr & 3)) {
        spyre_guest_error(s, SPYRE_ERR_BAD_SIZE, addr,
                          "read not 32 bits wide and aligned");
        val = ~0ull;
    } else if (!spyre_reg_read_locked(s, addr, &val)) {
        spyre_guest_error(s, SPYRE_ERR_BAD_OFFSET, addr,
                          "read of unimplemented register");
        val = ~0ull;
    } else {
        trace_spyre_reg_read(addr, val);
    }
    qemu_mutex_unlock(&s->lock);
    return val;
}

/* Put every register back to its reset value; commands in flight abort. */
static void spyre_reset_locked(SpyreState *s)
{
    int i;

    s->generation++;
    s->mmu_epoch++;
    s->scratch = 0;
    s->irq_test_count = 0;
    s->int_status = 0;
    s->int_mask = SPYRE_INT_ALL;
    s->irq_vectors = 0;
    s->err_status = SPYRE_ERR_NONE;
    s->err_addr = 0;
    s->time_hi_latch = 0;
    qatomic_set(&s->time_base_ns, spyre_now_ns());
    s->aperture_base = 0;
    s->aperture_lo_staged = 0;
    memset(s->ctx_root, 0, sizeof(s->ctx_root));
    memset(s->ctx_ctrl, 0, sizeof(s->ctx_ctrl));
    s->fault_status = 0;
    s->fault_addr = 0;
    s->fault_context = 0;
    s->fault_queue = 0;
    s->fault_access = 0;
    s->fault_reason = 0;
    s->dbg_hang = 0;
    s->dbg_dma_error = 0;
    s->cmd_count = 0;
    s->bytes_moved = 0;
    s->launch_count = 0;
    s->launch_ns = 0;
    s->engine_dram_bytes = 0;
    s->engine_ring_bytes = 0;
    memset(s->core_busy_cycles, 0, sizeof(s->core_busy_cycles));
    s->fault_count = 0;
    s->error_count = 0;
    s->busy_ns = 0;
    s->running_queues = 0;  /* aborted commands no longer count */
    s->busy_since_ns = spyre_now_ns();
    s->dma_busy_ns = 0;
    s->model_dma_busy_ns = 0;
    s->model_time_ns = spyre_now_ns();
    s->utilisation = 0;
    s->temp_c = SPYRE_TEMP_AMBIENT + SPYRE_TEMP_PER_W *
                SPYRE_POWER_IDLE_MW / 1000.0;
    for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
        SpyreQueue *q = &s->queues[i];

        q->base = 0;
        q->size = 0;
        q->ctrl = 0;
        q->context = 0;
        q->head = 0;
        q->tail = 0;
        q->completed = 0;
        q->last_status = 0;
        q->error_index = 0;
        q->error_sub_index = 0;
        q->engine_status = 0;
        q->busy_ns = 0;
        q->stopped = false;
        q->hang_countdown = -1;
        q->dma_error_countdown = -1;
    }
    qemu_cond_broadcast(&s->cond);
    qemu_cond_broadcast(&s->dma_cond);
    spyre_queues_kick_locked(s);
}

/* A write no handler took: to a read-only register, or to no register. */
static void spyre_write_refused(SpyreState *s, hwaddr addr)
{
    if (spyre_reg_exists(s, addr)) {
        spyre_guest_error(s, SPYRE_ERR_READ_ONLY, addr,
                          "write to read-only register");
    } else {
        spyre_guest_error(s, SPYRE_ERR_BAD_OFFSET, addr,
                          "write to unimplemented register");
    }
}

/* BASE, SIZE and CONTEXT: only while the queue is disabled. */
static void spyre_queue_setup_write(SpyreState *s, SpyreQueue *q, hwaddr addr,
                                    hwaddr off, uint32_t val)
{
    if (q->ctrl & SPYRE_QCTRL_ENABLE) {
        spyre_guest_error(s, SPYRE_ERR_BUSY, addr,
                          "queue set-up while the queue is enabled");
        return;
    }
    switch (off) {
    case SPYRE_QREG_BASE_LO:
        if (val & 0xfff) {
            spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                              "ring base not 4 KiB aligned");
        } else {
            q->base = deposit64(q->base, 0, 32, val);
        }
        break;
    case SPYRE_QREG_BASE_HI:
        q->base = deposit64(q->base, 32, 32, val);
        break;
    case SPYRE_QREG_SIZE:
        if (val < 2 || val > 4096 || !is_power_of_2(val)) {
            spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                              "ring size not a power of 2 in 2..4096");
        } else {
            q->size = val;
        }
        break;
    case SPYRE_QREG_CONTEXT:
        if (val >= SPYRE_NUM_CONTEXTS) {
            spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                              "context id out of range");
        } else {
            q->context = val;
        }
        break;
    default:
        g_assert_not_reached();
    }
}

static void spyre_queue_ctrl_write(SpyreState *s, SpyreQueue *q, hwaddr addr,
                                   uint32_t val)
{
    bool enabled = q->ctrl & SPYRE_QCTRL_ENABLE;

    if (val & ~(SPYRE_QCTRL_ENABLE | SPYRE_QCTRL_RESUME |
                SPYRE_QCTRL_PRIORITY_MASK)) {
        spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                          "undefined bits in queue CTRL");
    } else if (!(val & SPYRE_QCTRL_ENABLE) && enabled && q->running) {
        spyre_guest_error(s, SPYRE_ERR_BUSY, addr,
                          "disabling a queue that is running a command");
    } else if ((val & SPYRE_QCTRL_ENABLE) && !enabled && !q->size) {
        spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                          "enabling a queue without a ring size");
    } else if ((val & SPYRE_QCTRL_RESUME) &&
               !(enabled && (val & SPYRE_QCTRL_ENABLE))) {
        spyre_guest_error(s, SPYRE_ERR_BUSY, addr,
                          "resume of a disabled queue");
    } else {
        if ((val & SPYRE_QCTRL_ENABLE) && !enabled) {
            q->head = q->tail = 0;
            q->completed = 0;
            q->stopped = false;
        }
        if (val & SPYRE_QCTRL_RESUME) {
            q->stopped = false;
        }
        q->ctrl = val & (SPYRE_QCTRL_ENABLE | SPYRE_QCTRL_PRIORITY_MASK);
        qemu_cond_broadcast(&s->cond);
        spyre_queue_kick_locked(q);
    }
}

static void spyre_queue_doorbell(SpyreState *s, SpyreQueue *q, hwaddr addr,
                                 uint32_t val)
{
    if (!(q->ctrl & SPYRE_QCTRL_ENABLE)) {
        spyre_guest_error(s, SPYRE_ERR_BUSY, addr,
                          "doorbell on a disabled queue");
    } else if (val >= q->size) {
        spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                          "doorbell beyond the ring");
    } else {
        trace_spyre_doorbell(q->index, val);
        q->tail = val;
        qemu_cond_broadcast(&s->cond);
        spyre_queue_kick_locked(q);
    }
}

static void spyre_queue_write(SpyreState *s, SpyreQueue *q, hwaddr addr,
                              hwaddr off, uint32_t val)
{
    switch (off) {
    case SPYRE_QREG_BASE_LO:
    case SPYRE_QREG_BASE_HI:
    case SPYRE_QREG_SIZE:
    case SPYRE_QREG_CONTEXT:
        spyre_queue_setup_write(s, q, addr, off, val);
        break;
    case SPYRE_QREG_CTRL:
        spyre_queue_ctrl_write(s, q, addr, val);
        break;
    case SPYRE_QREG_DOORBELL:
        spyre_queue_doorbell(s, q, addr, val);
        break;
    default:
        spyre_write_refused(s, addr);
        break;
    }
}

static void spyre_ctx_write(SpyreState *s, int c, hwaddr addr, hwaddr off,
                            uint32_t val)
{
    switch (off) {
    case SPYRE_CTXREG_ROOT_LO:
        if (val & 0xfff) {
            spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                              "page-table root not 4 KiB aligned");
        } else {
            s->ctx_root[c] = deposit64(s->ctx_root[c], 0, 32, val);
        }
        break;
    case SPYRE_CTXREG_ROOT_HI:
        s->ctx_root[c] = deposit64(s->ctx_root[c], 32, 32, val);
        break;
    case SPYRE_CTXREG_CTRL:
        if (val & ~SPYRE_CTX_VALID) {
            spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                              "undefined bits in context CTRL");
        } else {
            s->ctx_ctrl[c] = val;
        }
        break;
    default:
        spyre_write_refused(s, addr);
        break;
    }
}

static void spyre_set_int_mask(SpyreState *s, hwaddr addr, uint32_t val)
{
    uint32_t pending;

    if (val & ~SPYRE_INT_ALL) {
        spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                          "undefined bits in INT_MASK");
        return;
    }
    /* Causes that were pending while masked fire on unmask. */
    pending = s->int_status & s->int_mask & ~val;
    s->int_mask = val;
    if (pending) {
        spyre_raise_locked(s, pending);
    }
}

static void spyre_dev_ctrl_write(SpyreState *s, hwaddr addr, uint32_t val)
{
    if (val & ~SPYRE_DEV_CTRL_RESET) {
        spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                          "undefined bits in DEV_CTRL");
    } else if (val) {
        trace_spyre_reset("DEV_CTRL");
        spyre_reset_locked(s);
        memory_region_set_alias_offset(&s->aperture, 0);
    }
}

static void spyre_set_aperture(SpyreState *s, hwaddr addr, uint32_t hi)
{
    uint64_t base = (uint64_t)hi << 32 | s->aperture_lo_staged;

    if ((base & (MiB - 1)) || base > s->mem_size ||
        s->aperture_size > s->mem_size - base) {
        spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                          "aperture base misaligned or beyond memory");
        return;
    }
    s->aperture_base = base;
    memory_region_set_alias_offset(&s->aperture, base);
}

static void spyre_arm_injection(SpyreState *s, hwaddr addr, uint32_t val,
                                bool hang)
{
    int q, i;

    if (val & ~(SPYRE_INJECT_ARM | SPYRE_INJECT_QUEUE_MASK |
                SPYRE_INJECT_COUNT_MASK) ||
        (val && !(val & SPYRE_INJECT_ARM))) {
        spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                          "malformed fault injection");
        return;
    }
    for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
        if (hang) {
            s->queues[i].hang_countdown = -1;
        } else {
            s->queues[i].dma_error_countdown = -1;
        }
    }
    if (hang) {
        s->dbg_hang = val;
    } else {
        s->dbg_dma_error = val;
    }
    if (val) {
        q = (val & SPYRE_INJECT_QUEUE_MASK) >> SPYRE_INJECT_QUEUE_SHIFT;
        if (hang) {
            s->queues[q].hang_countdown = val & SPYRE_INJECT_COUNT_MASK;
        } else {
            s->queues[q].dma_error_countdown = val & SPYRE_INJECT_COUNT_MASK;
        }
    }
}

static void spyre_global_write(SpyreState *s, hwaddr addr, uint32_t val)
{
    switch (addr) {
    case SPYRE_REG_SCRATCH:
        s->scratch = val;
        break;
    case SPYRE_REG_IRQ_TEST:
        if (val != SPYRE_MSIX_VECTOR_MISC) {
            spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                              "self-test on a vector other than 0");
            break;
        }
        s->irq_test_count++;
        spyre_raise_locked(s, SPYRE_INT_SELFTEST);
        break;
    case SPYRE_REG_INT_STATUS:
        s->int_status &= ~val;
        break;
    case SPYRE_REG_INT_MASK:
        spyre_set_int_mask(s, addr, val);
        break;
    case SPYRE_REG_ERR_STATUS:
        s->err_status = SPYRE_ERR_NONE;
        s->err_addr = 0;
        break;
    case SPYRE_REG_DEV_CTRL:
        spyre_dev_ctrl_write(s, addr, val);
        break;
    case SPYRE_REG_APERTURE_BASE_LO:
        s->aperture_lo_staged = val;
        break;
    case SPYRE_REG_APERTURE_BASE_HI:
        spyre_set_aperture(s, addr, val);
        break;
    case SPYRE_REG_MMU_INVALIDATE:
        if (val >= SPYRE_NUM_CONTEXTS) {
            spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                              "context id out of range");
        } else {
            qatomic_set(&s->mmu_epoch, s->mmu_epoch + 1);
        }
        break;
    case SPYRE_REG_FAULT_STATUS:
        s->fault_status = 0;
        break;
    case SPYRE_REG_DBG_HANG:
        spyre_arm_injection(s, addr, val, true);
        break;
    case SPYRE_REG_DBG_DMA_ERROR:
        spyre_arm_injection(s, addr, val, false);
        break;
    default:
        spyre_write_refused(s, addr);
        break;
    }
}

static void spyre_reg_write(void *opaque, hwaddr addr, uint64_t val,
                            unsigned size)
{
    SpyreState *s = opaque;
    hwaddr off;
    int i;

    qemu_mutex_lock(&s->lock);
    if (size != 4 || (addr & 3)) {
        spyre_guest_error(s, SPYRE_ERR_BAD_SIZE, addr,
                          "write not 32 bits wide and aligned");
    } else if (spyre_resetting_locked(s) && addr != SPYRE_REG_ERR_STATUS &&
               addr != SPYRE_REG_INT_STATUS) {
        spyre_guest_error(s, SPYRE_ERR_BUSY, addr,
                          "write while the device is resetting");
    } else if (spyre_decode(addr, SPYRE_REG_QUEUE(0), 0x100, SPYRE_NUM_QUEUES,
                            &i, &off)) {
        trace_spyre_reg_write(addr, val);
        spyre_queue_write(s, &s->queues[i], addr, off, val);
    } else if (spyre_decode(addr, SPYRE_REG_CTX(0), 0x10, SPYRE_NUM_CONTEXTS,
                            &i, &off)) {
        trace_spyre_reg_write(addr, val);
        spyre_ctx_write(s, i, addr, off, val);
    } else {
        trace_spyre_reg_write(addr, val);
        spyre_global_write(s, addr, val);
    }
    qemu_mutex_unlock(&s->lock);
}

static const MemoryRegionOps spyre_reg_ops = {
    .read = spyre_reg_read,
    .write = spyre_reg_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    /*
     * Accept every size and alignment unsplit, so that bad ones reach the
     * handler whole and get logged with their own offset.
     */
    .valid = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
    .impl = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
};

/* Bus reset and FLR (the PCI core resets us through qdev). */
static void spyre_reset_hold(Object *obj, ResetType type)
{
    SpyreState *s = SPYRE(obj);

    trace_spyre_reset("bus");
    qemu_mutex_lock(&s->lock);
    spyre_reset_locked(s);
    qemu_mutex_unlock(&s->lock);
    memory_region_set_alias_offset(&s->aperture, 0);
}

/* The PCI core leaves FLR to the device: it resets us through qdev. */
static void spyre_write_config(PCIDevice *pdev, uint32_t addr, uint32_t val,
                               int len)
{
    pci_default_write_config(pdev, addr, val, len);
    pcie_cap_flr_write_config(pdev, addr, val, len);
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
    if (s->scratchpad_size < SPYRE_SCRATCHPAD_MIN ||
        s->scratchpad_size > SPYRE_SCRATCHPAD_MAX ||
        s->scratchpad_size % SPYRE_STICK_BYTES) {
        error_setg(errp, "scratchpad-size must be a multiple of %d between "
                   "%u KiB and %u MiB", SPYRE_STICK_BYTES,
                   (unsigned)(SPYRE_SCRATCHPAD_MIN / KiB),
                   (unsigned)(SPYRE_SCRATCHPAD_MAX / MiB));
        return false;
    }
    if (s->engine_threads > SPYRE_ENGINE_MAX_HOST_THREADS) {
        error_setg(errp, "engine-threads must be between 0 (every host CPU) "
                   "and %d", SPYRE_ENGINE_MAX_HOST_THREADS);
        return false;
    }
    return true;
}

static void spyre_realize(PCIDevice *pdev, Error **errp)
{
    SpyreState *s = SPYRE(pdev);
    Error *err = NULL;
    int i, ret;

    if (!spyre_check_params(s, errp)) {
        return;
    }

    pci_config_set_interrupt_pin(pdev->config, 1);

    memory_region_init(&s->bar0, OBJECT(s), "spyre-bar0", SPYRE_BAR0_SIZE);
    memory_region_init_io(&s->regs, OBJECT(s), &spyre_reg_ops, s,
                          "spyre-regs", SPYRE_REGS_SIZE);
    memory_region_add_subregion(&s->bar0, 0, &s->regs);
    pci_register_bar(pdev, SPYRE_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->bar0);

    /* Sparse: host pages are only committed once written. */
    memory_region_init_ram_flags_nomigrate(&s->mem, OBJECT(s), "spyre-mem",
                                           s->mem_size, RAM_NORESERVE, &err);
    if (err) {
        error_propagate(errp, err);
        return;
    }
    s->mem_ptr = memory_region_get_ram_ptr(&s->mem);
    s->aperture_size = MIN(SPYRE_APERTURE_MAX, pow2floor(s->mem_size));
    memory_region_init(&s->bar2, OBJECT(s), "spyre-bar2", s->aperture_size);
    memory_region_init_alias(&s->aperture, OBJECT(s), "spyre-aperture",
                             &s->mem, 0, s->aperture_size);
    memory_region_add_subregion(&s->bar2, 0, &s->aperture);
    pci_register_bar(pdev, SPYRE_BAR_MEM, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &s->bar2);

    ret = msix_init(pdev, SPYRE_MSIX_VECTORS,
                    &s->bar0, SPYRE_BAR_REGS, SPYRE_MSIX_TABLE_OFFSET,
                    &s->bar0, SPYRE_BAR_REGS, SPYRE_MSIX_PBA_OFFSET, 0, errp);
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

    qemu_mutex_init(&s->lock);
    qemu_cond_init(&s->cond);
    qemu_cond_init(&s->dma_cond);
    for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
        qemu_cond_init(&s->queues[i].work);
    }
    s->irq_bh = qemu_bh_new_guarded(spyre_irq_bh, s,
                                    &DEVICE(pdev)->mem_reentrancy_guard);
    s->dma_owner = -1;
    spyre_reset_locked(s);
    spyre_queues_start(s);
}

static void spyre_exit(PCIDevice *pdev)
{
    SpyreState *s = SPYRE(pdev);
    int i;

    spyre_queues_stop(s);
    qemu_bh_delete(s->irq_bh);
    for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
        qemu_cond_destroy(&s->queues[i].work);
    }
    qemu_cond_destroy(&s->cond);
    qemu_cond_destroy(&s->dma_cond);
    qemu_mutex_destroy(&s->lock);
    msix_uninit(pdev, &s->bar0, &s->bar0);
}

/* Worker threads and commands in flight are not migrated (yet). */
static const VMStateDescription spyre_vmstate = {
    .name = "spyre",
    .unmigratable = 1,
};

static const Property spyre_properties[] = {
    DEFINE_PROP_SIZE("mem-size", SpyreState, mem_size,
                     SPYRE_MEM_SIZE_DEFAULT),
    DEFINE_PROP_UINT32("scratchpad-size", SpyreState, scratchpad_size,
                       SPYRE_SCRATCHPAD_BYTES),
    DEFINE_PROP_UINT32("engine-threads", SpyreState, engine_threads, 0),
};

static void spyre_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);

    pc->realize = spyre_realize;
    pc->exit = spyre_exit;
    pc->config_write = spyre_write_config;
    pc->vendor_id = SPYRE_PCI_VENDOR_ID;
    pc->device_id = SPYRE_PCI_DEVICE_ID;
    pc->revision = SPYRE_PCI_REVISION;
    pc->class_id = PCI_CLASS_SPYRE;
    dc->desc = "IBM Spyre AI accelerator";
    rc->phases.hold = spyre_reset_hold;
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
