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
#include "hw/boards.h"
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "trace.h"

#include "spyre-dev.h"
#include "engine/engine.h"

#define SPYRE_REGS_SIZE     SPYRE_MSIX_TABLE_OFFSET
#define SPYRE_AER_OFFSET    0x100   /* first extended capability */
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

/*
 * Latch cause and signal vectors (those of its unmasked causes): by the
 * main loop's bottom half, or (deferred) by whoever ran the command, right
 * after it (spyre_irq_deliver, or spyre_irq_signal on a vCPU).
 */
static void spyre_raise_vectors_locked(SpyreState *s, uint32_t cause,
                                       uint32_t vectors, bool deferred)
{
    s->regs.int_status |= cause;
    if (vectors) {
        trace_spyre_irq(vectors, s->regs.int_status);
        s->irq_vectors |= vectors;
        if (!deferred) {
            qemu_bh_schedule(s->irq_bh);
        }
    }
}

static void spyre_raise_common_locked(SpyreState *s, uint32_t cause,
                                      bool deferred)
{
    spyre_raise_vectors_locked(s, cause,
                               spyre_cause_vectors(cause & ~s->regs.int_mask),
                               deferred);
}

/*
 * A FENCE's cause is the queue's; its vector the one the FENCE named, so a
 * driver can have the interrupt taken where the job was submitted.
 */
void spyre_raise_fence_locked(SpyreState *s, int q, uint32_t vector)
{
    uint32_t cause = SPYRE_INT_QUEUE_FENCE(q);
    uint32_t vectors = 0;

    if (!(cause & s->regs.int_mask)) {
        vectors = vector ? 1u << vector : spyre_cause_vectors(cause);
    }
    spyre_raise_vectors_locked(s, cause, vectors, true);
}

void spyre_raise_locked(SpyreState *s, uint32_t cause)
{
    spyre_raise_common_locked(s, cause, false);
}

void spyre_raise_deferred_locked(SpyreState *s, uint32_t cause)
{
    spyre_raise_common_locked(s, cause, true);
}

void spyre_irq_signal(SpyreState *s)
{
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

static void spyre_irq_bh(void *opaque)
{
    spyre_irq_signal(opaque);
}

void spyre_irq_deliver(SpyreState *s)
{
    bql_lock();
    spyre_irq_signal(s);
    bql_unlock();
}

bool spyre_resetting_locked(const SpyreState *s)
{
    int i;

    if (s->reset_stalled) {
        return true;
    }
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
    s->regs.err_status = code;
    s->regs.err_addr = addr;
    spyre_raise_locked(s, SPYRE_INT_GUEST_ERROR);
}

static void spyre_telemetry_update_locked(SpyreTelemetry *tm)
{
    int64_t now = spyre_now_ns();
    double dt = now - tm->model_time_ns, inst, power_w, target_c;

    if (dt <= 0) {
        return;
    }
    inst = (tm->dma_busy_ns - tm->model_dma_busy_ns) / dt;
    inst = MIN(MAX(inst, 0.0), 1.0);
    tm->utilisation += (1.0 - exp(-dt / SPYRE_UTIL_TAU_NS)) *
                       (inst - tm->utilisation);
    power_w = (SPYRE_POWER_IDLE_MW + (SPYRE_POWER_MAX_MW - SPYRE_POWER_IDLE_MW)
               * tm->utilisation) / 1000.0;
    target_c = SPYRE_TEMP_AMBIENT + SPYRE_TEMP_PER_W * power_w;
    tm->temp_c += (1.0 - exp(-dt / SPYRE_TEMP_TAU_NS)) *
                  (target_c - tm->temp_c);
    tm->model_time_ns = now;
    tm->model_dma_busy_ns = tm->dma_busy_ns;
}

static uint32_t spyre_power_mw(const SpyreTelemetry *tm)
{
    return SPYRE_POWER_IDLE_MW +
           (SPYRE_POWER_MAX_MW - SPYRE_POWER_IDLE_MW) * tm->utilisation;
}

static uint32_t spyre_queue_state(const SpyreQueue *q)
{
    if (!(q->regs.ctrl & SPYRE_QCTRL_ENABLE)) {
        return SPYRE_QSTATE_DISABLED;
    }
    if (q->regs.stopped) {
        return SPYRE_QSTATE_STOPPED;
    }
    if (q->running || q->regs.head != q->regs.tail) {
        return SPYRE_QSTATE_BUSY;
    }
    return SPYRE_QSTATE_IDLE;
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

/* The ENGINE_* registers: the last failed LAUNCH's record. */
static bool spyre_engine_failure_peek(const SpyreEngineFailure *f, hwaddr off,
                                      uint64_t *val)
{
    switch (off) {
    case SPYRE_QREG_ENGINE_STATUS:
        *val = f->status;
        return true;
    case SPYRE_QREG_ENGINE_CORE:
        *val = f->core;
        return true;
    case SPYRE_QREG_ENGINE_SITE:
        *val = f->site;
        return true;
    case SPYRE_QREG_ENGINE_INDEX:
        *val = f->index;
        return true;
    case SPYRE_QREG_ENGINE_WAIT:
        *val = f->wait;
        return true;
    case SPYRE_QREG_ENGINE_STREAM:
        *val = f->stream;
        return true;
    case SPYRE_QREG_ENGINE_STICKS_DONE:
        *val = f->sticks_done;
        return true;
    case SPYRE_QREG_ENGINE_STICKS_TOTAL:
        *val = f->sticks_total;
        return true;
    }
    if (off >= SPYRE_QREG_ENGINE_DETAIL &&
        off < SPYRE_QREG_ENGINE_DETAIL + SPYRE_ENGINE_DETAIL_BYTES) {
        *val = ldl_le_p(f->detail + (off - SPYRE_QREG_ENGINE_DETAIL));
        return true;
    }
    return false;
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
        *val = (uint32_t)q->regs.base;
        return true;
    case SPYRE_QREG_BASE_HI:
        *val = q->regs.base >> 32;
        return true;
    case SPYRE_QREG_SIZE:
        *val = q->regs.size;
        return true;
    case SPYRE_QREG_CTRL:
        *val = q->regs.ctrl;
        return true;
    case SPYRE_QREG_CONTEXT:
        *val = q->regs.context;
        return true;
    case SPYRE_QREG_HEAD:
        *val = q->regs.head;
        return true;
    case SPYRE_QREG_TAIL:
        *val = q->regs.tail;
        return true;
    case SPYRE_QREG_DOORBELL:
        *val = 0;
        return true;
    case SPYRE_QREG_STATUS:
        *val = spyre_queue_state(q);
        return true;
    case SPYRE_QREG_COMPLETED_LO:
        *val = (uint32_t)q->regs.completed;
        return true;
    case SPYRE_QREG_COMPLETED_HI:
        *val = q->regs.completed >> 32;
        return true;
    case SPYRE_QREG_LAST_STATUS:
        *val = q->regs.last_status;
        return true;
    case SPYRE_QREG_ERROR_INDEX:
        *val = q->regs.error_index;
        return true;
    case SPYRE_QREG_BUSY_NS_LO:
        *val = (uint32_t)q->regs.busy_ns;
        return true;
    case SPYRE_QREG_BUSY_NS_HI:
        *val = q->regs.busy_ns >> 32;
        return true;
    case SPYRE_QREG_ERROR_SUB_INDEX:
        *val = q->regs.error_sub_index;
        return true;
    }
    return spyre_engine_failure_peek(&q->regs.engine, off, val);
}

static bool spyre_ctx_peek(const SpyreState *s, int c, hwaddr off,
                           uint64_t *val)
{
    switch (off) {
    case SPYRE_CTXREG_ROOT_LO:
        *val = (uint32_t)s->regs.ctx_root[c];
        return true;
    case SPYRE_CTXREG_ROOT_HI:
        *val = s->regs.ctx_root[c] >> 32;
        return true;
    case SPYRE_CTXREG_CTRL:
        *val = s->regs.ctx_ctrl[c];
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
        *val = s->regs.scratch;
        return true;
    case SPYRE_REG_IRQ_TEST:
    case SPYRE_REG_DEV_CTRL:
        *val = 0;
        return true;
    case SPYRE_REG_IRQ_TEST_COUNT:
        *val = s->regs.irq_test_count;
        return true;
    case SPYRE_REG_INT_STATUS:
        *val = s->regs.int_status;
        return true;
    case SPYRE_REG_INT_MASK:
        *val = s->regs.int_mask;
        return true;
    case SPYRE_REG_ERR_STATUS:
        *val = s->regs.err_status;
        return true;
    case SPYRE_REG_ERR_ADDR:
        *val = s->regs.err_addr;
        return true;
    case SPYRE_REG_DEV_STATUS:
        *val = spyre_resetting_locked(s) ? SPYRE_DEV_STATUS_RESETTING
                                         : SPYRE_DEV_STATUS_READY;
        return true;
    case SPYRE_REG_TIME_LO:
        *val = (uint32_t)spyre_clock_now_locked(s);
        return true;
    case SPYRE_REG_TIME_HI:
        *val = s->regs.time_hi_latch;
        return true;
    case SPYRE_REG_CLOCK:
        *val = s->regs.clock;
        return true;
    case SPYRE_REG_APERTURE_BASE_LO:
        *val = (uint32_t)s->regs.aperture_base;
        return true;
    case SPYRE_REG_APERTURE_BASE_HI:
        *val = s->regs.aperture_base >> 32;
        return true;
    }
    return false;
}

/* MMU invalidation and the fault record. */
static bool spyre_mmu_peek(const SpyreState *s, hwaddr addr, uint64_t *val)
{
    hwaddr off;
    int c;

    if (spyre_decode(addr, SPYRE_REG_INV_REQUESTED(0), 8, SPYRE_NUM_CONTEXTS,
                     &c, &off)) {
        if (off != 0 && off != 4) {
            return false;
        }
        *val = off == 0 ? s->regs.inv_requested[c] : s->regs.inv_done[c];
        return true;
    }
    switch (addr) {
    case SPYRE_REG_MMU_INVALIDATE:
        *val = 0;
        return true;
    case SPYRE_REG_FAULT_STATUS:
        *val = s->regs.fault_status;
        return true;
    case SPYRE_REG_FAULT_ADDR_LO:
        *val = (uint32_t)s->regs.fault_addr;
        return true;
    case SPYRE_REG_FAULT_ADDR_HI:
        *val = s->regs.fault_addr >> 32;
        return true;
    case SPYRE_REG_FAULT_CONTEXT:
        *val = s->regs.fault_context;
        return true;
    case SPYRE_REG_FAULT_QUEUE:
        *val = s->regs.fault_queue;
        return true;
    case SPYRE_REG_FAULT_ACCESS:
        *val = s->regs.fault_access;
        return true;
    case SPYRE_REG_FAULT_REASON:
        *val = s->regs.fault_reason;
        return true;
    }
    return false;
}

/* Telemetry, CORE_BUSY included; TEMP_MC and POWER_MW as last modelled. */
static bool spyre_telemetry_peek(const SpyreTelemetry *tm, hwaddr addr,
                                 uint64_t *val)
{
    hwaddr off;
    uint64_t t;
    int c;

    if (spyre_decode(addr, SPYRE_REG_CORE_BUSY_LO(0), 8, SPYRE_NUM_CORES,
                     &c, &off)) {
        *val = off ? tm->core_busy_cycles[c] >> 32
                   : (uint32_t)tm->core_busy_cycles[c];
        return true;
    }
    switch (addr) {
    case SPYRE_REG_TEMP_MC:
        *val = tm->temp_c * 1000.0;
        return true;
    case SPYRE_REG_POWER_MW:
        *val = spyre_power_mw(tm);
        return true;
    case SPYRE_REG_BUSY_NS_LO:
    case SPYRE_REG_BUSY_NS_HI:
        t = tm->busy_ns + (tm->running_queues ? spyre_now_ns() -
                                                tm->busy_since_ns : 0);
        *val = addr == SPYRE_REG_BUSY_NS_LO ? (uint32_t)t : t >> 32;
        return true;
    case SPYRE_REG_CMD_COUNT_LO:
        *val = (uint32_t)tm->cmd_count;
        return true;
    case SPYRE_REG_CMD_COUNT_HI:
        *val = tm->cmd_count >> 32;
        return true;
    case SPYRE_REG_BYTES_LO:
        *val = (uint32_t)tm->bytes_moved;
        return true;
    case SPYRE_REG_BYTES_HI:
        *val = tm->bytes_moved >> 32;
        return true;
    case SPYRE_REG_FAULT_COUNT:
        *val = tm->fault_count;
        return true;
    case SPYRE_REG_ERROR_COUNT:
        *val = tm->error_count;
        return true;
    case SPYRE_REG_LAUNCH_COUNT:
        *val = tm->launch_count;
        return true;
    case SPYRE_REG_LAUNCH_NS_LO:
        *val = (uint32_t)tm->launch_ns;
        return true;
    case SPYRE_REG_LAUNCH_NS_HI:
        *val = tm->launch_ns >> 32;
        return true;
    case SPYRE_REG_DRAM_BYTES_LO:
        *val = (uint32_t)tm->engine_dram_bytes;
        return true;
    case SPYRE_REG_DRAM_BYTES_HI:
        *val = tm->engine_dram_bytes >> 32;
        return true;
    case SPYRE_REG_RING_BYTES_LO:
        *val = (uint32_t)tm->engine_ring_bytes;
        return true;
    case SPYRE_REG_RING_BYTES_HI:
        *val = tm->engine_ring_bytes >> 32;
        return true;
    }
    return false;
}

static bool spyre_global_peek(const SpyreState *s, hwaddr addr,
                              uint64_t *val)
{
    if (spyre_caps_peek(s, addr, val) || spyre_ctrl_peek(s, addr, val) ||
        spyre_mmu_peek(s, addr, val) ||
        spyre_telemetry_peek(&s->telem, addr, val)) {
        return true;
    }
    switch (addr) {
    case SPYRE_REG_DBG_HANG:
        *val = s->regs.dbg_hang;
        return true;
    case SPYRE_REG_DBG_DMA_ERROR:
        *val = s->regs.dbg_dma_error;
        return true;
    case SPYRE_REG_DBG_INV_STALL:
        *val = s->regs.dbg_inv_stall;
        return true;
    case SPYRE_REG_DBG_RESET_STALL:
        *val = s->regs.dbg_reset_stall;
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
        t = spyre_clock_now_locked(s);
        s->regs.time_hi_latch = t >> 32;
        *val = (uint32_t)t;
        return true;
    case SPYRE_REG_TEMP_MC:
    case SPYRE_REG_POWER_MW:
        spyre_telemetry_update_locked(&s->telem);
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
    int64_t now = spyre_now_ns();
    int i;

    /* Read without the lock by running commands (spyre_exec_aborted). */
    qatomic_set(&s->generation, s->generation + 1);
    qatomic_set(&s->mmu_epoch, s->mmu_epoch + 1);
    s->irq_vectors = 0;
    qatomic_set(&s->time_base_ns, now);
    s->regs = (SpyreRegs) {
        .int_mask = SPYRE_INT_ALL,
        .clock = s->modelled_clock ? SPYRE_CLOCK_MODEL : 0,
    };
    spyre_clock_reset_locked(s);
    /* running_queues 0: commands the reset aborts no longer count. */
    s->telem = (SpyreTelemetry) {
        .busy_since_ns = now,
        .model_time_ns = now,
        .temp_c = SPYRE_TEMP_AMBIENT +
                  SPYRE_TEMP_PER_W * SPYRE_POWER_IDLE_MW / 1000.0,
    };
    for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
        s->queues[i].regs = (SpyreQueueRegs) { 0 };
        spyre_queue_drop_deferred_locked(&s->queues[i]);
        s->queues[i].hang_countdown = -1;
        s->queues[i].dma_error_countdown = -1;
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
    if (q->regs.ctrl & SPYRE_QCTRL_ENABLE) {
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
            q->regs.base = deposit64(q->regs.base, 0, 32, val);
        }
        break;
    case SPYRE_QREG_BASE_HI:
        q->regs.base = deposit64(q->regs.base, 32, 32, val);
        break;
    case SPYRE_QREG_SIZE:
        if (val < 2 || val > 4096 || !is_power_of_2(val)) {
            spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                              "ring size not a power of 2 in 2..4096");
        } else {
            q->regs.size = val;
        }
        break;
    case SPYRE_QREG_CONTEXT:
        if (val >= SPYRE_NUM_CONTEXTS) {
            spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                              "context id out of range");
        } else {
            q->regs.context = val;
        }
        break;
    default:
        g_assert_not_reached();
    }
}

static void spyre_queue_ctrl_write(SpyreState *s, SpyreQueue *q, hwaddr addr,
                                   uint32_t val)
{
    bool enabled = q->regs.ctrl & SPYRE_QCTRL_ENABLE;

    if (val & ~(SPYRE_QCTRL_ENABLE | SPYRE_QCTRL_RESUME |
                SPYRE_QCTRL_PRIORITY_MASK)) {
        spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                          "undefined bits in queue CTRL");
    } else if (!(val & SPYRE_QCTRL_ENABLE) && enabled &&
               (q->running || q->call_resume)) {
        /* A CALL the vCPU began is running, only not on a thread yet. */
        spyre_guest_error(s, SPYRE_ERR_BUSY, addr,
                          "disabling a queue that is running a command");
    } else if ((val & SPYRE_QCTRL_ENABLE) && !enabled && !q->regs.size) {
        spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                          "enabling a queue without a ring size");
    } else if ((val & SPYRE_QCTRL_RESUME) &&
               !(enabled && (val & SPYRE_QCTRL_ENABLE))) {
        spyre_guest_error(s, SPYRE_ERR_BUSY, addr,
                          "resume of a disabled queue");
    } else {
        if ((val & SPYRE_QCTRL_ENABLE) && !enabled) {
            q->regs.head = q->regs.tail = 0;
            spyre_queue_drop_deferred_locked(q);
            q->regs.completed = 0;
            q->regs.stopped = false;
        }
        if (val & SPYRE_QCTRL_RESUME) {
            q->regs.stopped = false;
        }
        q->regs.ctrl = val & (SPYRE_QCTRL_ENABLE | SPYRE_QCTRL_PRIORITY_MASK);
        qemu_cond_broadcast(&s->cond);
        spyre_queue_kick_locked(q);
    }
}

static void spyre_queue_doorbell(SpyreState *s, SpyreQueue *q, hwaddr addr,
                                 uint32_t val)
{
    if (!(q->regs.ctrl & SPYRE_QCTRL_ENABLE)) {
        spyre_guest_error(s, SPYRE_ERR_BUSY, addr,
                          "doorbell on a disabled queue");
    } else if (val >= q->regs.size) {
        spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                          "doorbell beyond the ring");
    } else {
        trace_spyre_doorbell(q->index, val);
        q->regs.tail = val;
        if (val == q->regs.head) {
            /* Emptied: a CALL the vCPU began is dropped, not resumed. */
            spyre_queue_drop_deferred_locked(q);
        }
        qemu_cond_broadcast(&s->cond);
        spyre_queue_doorbell_locked(q);
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
            s->regs.ctx_root[c] = deposit64(s->regs.ctx_root[c], 0, 32, val);
        }
        break;
    case SPYRE_CTXREG_ROOT_HI:
        s->regs.ctx_root[c] = deposit64(s->regs.ctx_root[c], 32, 32, val);
        break;
    case SPYRE_CTXREG_CTRL:
        if (val & ~SPYRE_CTX_VALID) {
            spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                              "undefined bits in context CTRL");
        } else {
            s->regs.ctx_ctrl[c] = val;
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
    pending = s->regs.int_status & s->regs.int_mask & ~val;
    s->regs.int_mask = val;
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
        bool stall = s->regs.dbg_reset_stall;

        trace_spyre_reset("DEV_CTRL");
        spyre_reset_locked(s);
        memory_region_set_alias_offset(&s->aperture, 0);
        /* DBG_RESET_STALL: this reset never finishes. */
        s->reset_stalled = stall;
    }
}

static void spyre_set_aperture(SpyreState *s, hwaddr addr, uint32_t hi)
{
    uint64_t base = (uint64_t)hi << 32 | s->regs.aperture_lo_staged;

    if ((base & (MiB - 1)) || base > s->mem_size ||
        s->aperture_size > s->mem_size - base) {
        spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                          "aperture base misaligned or beyond memory");
        return;
    }
    s->regs.aperture_base = base;
    memory_region_set_alias_offset(&s->aperture, base);
}

/* An on/off injection (DBG_INV_STALL, DBG_RESET_STALL): ARM or 0. */
static bool spyre_inject_switch_ok(SpyreState *s, hwaddr addr, uint32_t val)
{
    if (val && val != SPYRE_INJECT_ARM) {
        spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                          "malformed fault injection");
        return false;
    }
    return true;
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
        s->regs.dbg_hang = val;
    } else {
        s->regs.dbg_dma_error = val;
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
        s->regs.scratch = val;
        break;
    case SPYRE_REG_IRQ_TEST:
        if (val != SPYRE_MSIX_VECTOR_MISC) {
            spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                              "self-test on a vector other than 0");
            break;
        }
        s->regs.irq_test_count++;
        spyre_raise_locked(s, SPYRE_INT_SELFTEST);
        break;
    case SPYRE_REG_INT_STATUS:
        s->regs.int_status &= ~val;
        break;
    case SPYRE_REG_INT_MASK:
        spyre_set_int_mask(s, addr, val);
        break;
    case SPYRE_REG_ERR_STATUS:
        s->regs.err_status = SPYRE_ERR_NONE;
        s->regs.err_addr = 0;
        break;
    case SPYRE_REG_DEV_CTRL:
        spyre_dev_ctrl_write(s, addr, val);
        break;
    case SPYRE_REG_APERTURE_BASE_LO:
        s->regs.aperture_lo_staged = val;
        break;
    case SPYRE_REG_APERTURE_BASE_HI:
        spyre_set_aperture(s, addr, val);
        break;
    case SPYRE_REG_CLOCK:
        if (val & ~SPYRE_CLOCK_MODEL) {
            spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                              "unknown CLOCK bits");
        } else {
            s->regs.clock = val;
        }
        break;
    case SPYRE_REG_MMU_INVALIDATE:
        if (val >= SPYRE_NUM_CONTEXTS) {
            spyre_guest_error(s, SPYRE_ERR_BAD_VALUE, addr,
                              "context id out of range");
        } else {
            spyre_mmu_invalidate_locked(s, val);
        }
        break;
    case SPYRE_REG_FAULT_STATUS:
        s->regs.fault_status = 0;
        break;
    case SPYRE_REG_DBG_HANG:
        spyre_arm_injection(s, addr, val, true);
        break;
    case SPYRE_REG_DBG_DMA_ERROR:
        spyre_arm_injection(s, addr, val, false);
        break;
    case SPYRE_REG_DBG_INV_STALL:
        if (spyre_inject_switch_ok(s, addr, val)) {
            s->regs.dbg_inv_stall = val;
            spyre_mmu_inv_update_locked(s);
        }
        break;
    case SPYRE_REG_DBG_RESET_STALL:
        if (spyre_inject_switch_ok(s, addr, val)) {
            s->regs.dbg_reset_stall = val;
        }
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
    s->reset_stalled = false;
    spyre_reset_locked(s);
    qemu_mutex_unlock(&s->lock);
    memory_region_set_alias_offset(&s->aperture, 0);
}

/*
 * The PCI core leaves FLR to the device: it resets us through qdev.  AER
 * keeps its first-error pointer and header log consistent with the status
 * the guest clears.
 */
static void spyre_write_config(PCIDevice *pdev, uint32_t addr, uint32_t val,
                               int len)
{
    pci_default_write_config(pdev, addr, val, len);
    pcie_cap_flr_write_config(pdev, addr, val, len);
    pcie_aer_write_config(pdev, addr, val, len);
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

/*
 * engine-threads=0: the host CPUs the guest's vCPUs leave free, at least
 * one.  A pool thread that spins beside a busy vCPU on the same host CPU
 * slows both: on a 2-CPU host with 2 vCPUs one engine thread replayed the
 * decoder example's decode steps 11-21% faster than two.
 */
static uint32_t spyre_default_engine_threads(void)
{
    return spyre_engine_threads_beside(sysconf(_SC_NPROCESSORS_ONLN),
                                       MACHINE(qdev_get_machine())->smp.cpus);
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
    memory_region_init_io(&s->mmio, OBJECT(s), &spyre_reg_ops, s,
                          "spyre-regs", SPYRE_REGS_SIZE);
    memory_region_add_subregion(&s->bar0, 0, &s->mmio);
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
    /*
     * Advanced Error Reporting, so errors injected on the link (HMP
     * pcie_aer_inject_error, or the guest's aer_inject) reach the driver's
     * pci_error_handlers as on a real card.
     */
    ret = pcie_aer_init(pdev, PCI_ERR_VER, SPYRE_AER_OFFSET, PCI_ERR_SIZEOF,
                        errp);
    if (ret < 0) {
        pcie_cap_exit(pdev);
        msix_uninit(pdev, &s->bar0, &s->bar0);
        return;
    }

    qemu_mutex_init(&s->lock);
    qemu_cond_init(&s->cond);
    qemu_cond_init(&s->dma_cond);
    for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
        qemu_cond_init(&s->queues[i].work);
    }
    s->irq_bh = qemu_bh_new_guarded(spyre_irq_bh, s,
                                    &DEVICE(pdev)->mem_reentrancy_guard);
    s->dma_owner = -1;
    if (!s->engine_threads) {
        s->engine_threads = spyre_default_engine_threads();
    }
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
    pcie_aer_exit(pdev);
    pcie_cap_exit(pdev);
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
    DEFINE_PROP_BOOL("modelled-clock", SpyreState, modelled_clock, false),
    DEFINE_PROP_BOOL("brief-on-vcpu", SpyreState, brief_on_vcpu, true),
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
