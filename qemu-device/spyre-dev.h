/*
 * IBM Spyre AI accelerator, emulated PCIe card: the device's state
 * (SpyreState, SpyreQueue) and the interfaces between its files.  Named
 * spyre-dev.h, not spyre.h, so it is not confused with libspyre's public
 * <spyre/spyre.h>.
 *
 * QEMU interface:
 *  + BAR0: 64 KiB MMIO: registers at 0x0000-0x7fff (include/spyre_regs.h),
 *    MSI-X table at SPYRE_MSIX_TABLE_OFFSET, PBA at SPYRE_MSIX_PBA_OFFSET
 *  + BAR2: 64-bit prefetchable window onto device memory
 *  + SPYRE_MSIX_VECTORS MSI-X vectors: 0 for the device, 1 + q per queue,
 *    the rest for FENCEs that name them
 *  + property "mem-size": device memory bytes (1 MiB granularity)
 *
 * Threads: the vCPU (register access, with the BQL, and an idle queue's
 * brief commands at its doorbell), one worker per command queue (commands,
 * DMA; never with the BQL), and the main loop (interrupt delivery from a
 * bottom half).  SpyreState.lock protects every register
 * and queue field; it is never held across a DMA access, which may need
 * the BQL.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_SPYRE_DEV_H
#define HW_SPYRE_DEV_H

#include "hw/pci/pci_device.h"
#include "qemu/thread.h"
#include "qom/object.h"

#include "spyre_regs.h"

#define TYPE_SPYRE "spyre"
OBJECT_DECLARE_SIMPLE_TYPE(SpyreState, SPYRE)

/* The DMA engine moves data in chunks this large between arbitrations. */
#define SPYRE_DMA_CHUNK     (64 * 1024)

typedef struct SpyreKernelCache SpyreKernelCache;

/*
 * Translations a queue's worker keeps across commands, as a TLB does:
 * level-2 entries by 2 MiB region and 4 KiB leaf entries, each tagged with
 * its table root (so a CALL into another context keeps both), all dropped
 * when mmu_epoch moves (MMU_INVALIDATE, reset).  Direct mapped; only valid
 * entries are kept.  Only the worker thread uses it.
 */
#define SPYRE_WALK_ENTRIES  64
#define SPYRE_TLB_ENTRIES   1024

typedef struct SpyreMmuCacheEntry {
    uint64_t root;
    uint64_t va;            /* region or page base; UINT64_MAX: empty */
    uint64_t entry;
} SpyreMmuCacheEntry;

typedef struct SpyreMmuCache {
    uint64_t epoch;         /* of mmu_epoch when filled; UINT64_MAX: never */
    SpyreMmuCacheEntry walk[SPYRE_WALK_ENTRIES];
    SpyreMmuCacheEntry leaf[SPYRE_TLB_ENTRIES];
} SpyreMmuCache;

/*
 * Why the engine refused or stopped a LAUNCH (the ENGINE_* queue registers,
 * docs/hardware.md "Why a LAUNCH failed"); NONE fields are UINT32_MAX.
 */
typedef struct SpyreEngineFailure {
    uint32_t status;        /* enum spyre_engine_status */
    uint32_t core;
    uint32_t site;          /* enum spyre_engine_site */
    uint32_t index;
    uint32_t wait;          /* enum spyre_engine_wait */
    uint32_t stream;
    uint32_t sticks_done;
    uint32_t sticks_total;
    char detail[SPYRE_ENGINE_DETAIL_BYTES];
} SpyreEngineFailure;

/* The links a modelled DMA crosses (spyre-clock.c). */
enum {
    SPYRE_CLOCK_HOST_TO_DEV,
    SPYRE_CLOCK_DEV_TO_HOST,
    SPYRE_CLOCK_DRAM_COPY,
    SPYRE_CLOCK_DRAM_WRITE,
    SPYRE_CLOCK_LINKS
};

/* A FENCE's modelled time, for the WAIT that sees its value (spyre-clock.c). */
#define SPYRE_CLOCK_FENCES 64
typedef struct SpyreClockFence {
    bool valid;
    uint32_t context;
    uint64_t va;
    uint64_t ns;
} SpyreClockFence;

/*
 * A queue's guest-visible registers (docs/hardware.md, "Command queue"):
 * all 0 after reset, so a reset is one assignment.
 */
typedef struct SpyreQueueRegs {
    uint64_t base;
    uint32_t size;
    uint32_t ctrl;          /* ENABLE and PRIORITY; RESUME is not stored */
    uint32_t context;
    uint32_t head;
    uint32_t tail;
    uint64_t completed;
    uint32_t last_status;
    uint32_t error_index;
    uint32_t error_sub_index;
    SpyreEngineFailure engine; /* of the failed command (0: not the engine) */
    uint64_t busy_ns;
    bool stopped;           /* STATUS STOPPED: a command failed, until RESUME */
} SpyreQueueRegs;

typedef struct SpyreQueue {
    SpyreState *s;
    int index;
    /* spyre-clock.c: modelled time, under s->lock */
    uint64_t model_ns;      /* when its last command ended */
    bool model_idle;        /* it ran out of work since */
    QemuThread thread;
    QemuCond work;          /* the worker waits here for commands (s->lock) */

    SpyreQueueRegs regs;

    /* State */
    bool running;           /* the worker or a vCPU runs a command */
    /*
     * A CALL a vCPU began and left to the worker (spyre_queue_doorbell_locked)
     * goes on from this command; 0: from its start.
     */
    uint32_t call_resume;
    bool deferred;          /* a vCPU left the head command to the worker */
    uint32_t brief_left;    /* commands a vCPU may still run at this doorbell */
    uint64_t run_generation; /* device generation when it started */
    bool dma_waiting;       /* wants the DMA engine */
    /*
     * Translations the running command may still use: context hold_ctx
     * (-1: none), taken at mmu_epoch hold_epoch or later.  Under s->lock.
     */
    int hold_ctx;
    uint64_t hold_epoch;
    int hang_countdown;     /* injections: commands left before, or -1 */
    int dma_error_countdown;
    SpyreKernelCache *kcache; /* spyre-launch.c; only the worker uses it */
    SpyreMmuCache mmu_cache;  /* spyre-mmu.c; used by whoever is running */
} SpyreQueue;

/*
 * The device's guest-visible registers outside the queues and telemetry
 * (docs/hardware.md: global, MMU context and fault, fault injection): all
 * 0 after reset except INT_MASK.
 */
typedef struct SpyreRegs {
    uint32_t scratch;
    uint32_t irq_test_count;
    uint32_t int_status;
    uint32_t int_mask;
    uint32_t err_status;
    uint32_t err_addr;
    uint32_t time_hi_latch;
    uint64_t aperture_base;
    uint32_t aperture_lo_staged;
    uint64_t ctx_root[SPYRE_NUM_CONTEXTS];
    uint32_t ctx_ctrl[SPYRE_NUM_CONTEXTS];
    uint32_t fault_status;
    uint64_t fault_addr;
    uint32_t fault_context;
    uint32_t fault_queue;
    uint32_t fault_access;
    uint32_t fault_reason;
    uint32_t dbg_hang;
    uint32_t dbg_dma_error;
    uint32_t dbg_inv_stall;
    uint32_t dbg_reset_stall;
    /* MMU_INVALIDATE completion (spyre-mmu.c "Invalidation") */
    uint32_t inv_requested[SPYRE_NUM_CONTEXTS];
    uint32_t inv_done[SPYRE_NUM_CONTEXTS];
    uint64_t inv_epoch[SPYRE_NUM_CONTEXTS]; /* mmu_epoch of the latest */
    uint32_t clock;         /* SPYRE_CLOCK_*; reset to the clock property */
} SpyreRegs;

/*
 * The telemetry block's counters and the power/thermal model behind
 * TEMP_MC and POWER_MW: all 0 after reset except the model's clock and
 * its idle temperature.
 */
typedef struct SpyreTelemetry {
    uint64_t cmd_count;
    uint64_t bytes_moved;
    uint32_t fault_count;
    uint32_t error_count;
    uint64_t busy_ns;       /* time any queue was running a command */
    int running_queues;
    int64_t busy_since_ns;
    uint64_t dma_busy_ns;   /* time the DMA engine was held */
    uint32_t launch_count;
    uint64_t launch_ns;     /* modelled device time of LAUNCHes */
    uint64_t engine_dram_bytes;
    uint64_t engine_ring_bytes;
    uint64_t core_busy_cycles[SPYRE_NUM_CORES];
    int64_t model_time_ns;  /* power/thermal model state */
    uint64_t model_dma_busy_ns;
    double utilisation;
    double temp_c;
} SpyreTelemetry;

struct SpyreState {
    PCIDevice parent_obj;

    MemoryRegion bar0;
    MemoryRegion mmio;      /* the registers, in BAR0 below the MSI-X table */
    MemoryRegion mem;       /* device memory, sparse host RAM */
    MemoryRegion bar2;
    MemoryRegion aperture;  /* alias of mem, moved by APERTURE_BASE */
    uint8_t *mem_ptr;
    uint64_t aperture_size;

    /* Properties */
    uint64_t mem_size;
    uint32_t scratchpad_size;
    uint32_t engine_threads;    /* host threads for compute (0: realize picks) */
    bool brief_on_vcpu;         /* the doorbell's vCPU runs brief commands */
    bool modelled_clock;        /* CLOCK's reset value: MODEL */

    QemuMutex lock;
    QemuCond cond;          /* queue work, reset progress, WAIT */
    QemuCond dma_cond;      /* the DMA engine became free */
    QEMUBH *irq_bh;
    uint32_t irq_vectors;   /* vectors not yet signalled (bh or worker) */
    uint64_t generation;    /* bumped by reset: older commands are aborted */
    /* DBG_RESET_STALL fired: RESETTING until a PCI function or bus reset */
    bool reset_stalled;
    bool stopping;          /* unrealize: workers exit */
    int dma_owner;          /* queue holding the DMA engine, or -1 */
    int dma_last;           /* last holder, for round robin */
    uint64_t mmu_epoch;     /* bumped by MMU_INVALIDATE and reset */

    /* Device time is spyre_now_ns() - time_base_ns (read without lock). */
    int64_t time_base_ns;
    /* spyre-clock.c, under lock: the latest modelled end, recent FENCEs */
    uint64_t model_done_ns;
    SpyreClockFence model_fences[SPYRE_CLOCK_FENCES];
    int model_fence_next;
    SpyreRegs regs;
    SpyreTelemetry telem;
    SpyreQueue queues[SPYRE_NUM_QUEUES];
};

/* spyre.c */
int64_t spyre_now_ns(void);
int64_t spyre_device_time_ns(const SpyreState *s);
void spyre_raise_locked(SpyreState *s, uint32_t cause);
/*
 * Raised by a queue worker's command (fence, command error): the worker
 * signals it itself right after the command, without s->lock
 * (spyre_irq_deliver takes the BQL), saving the main loop's bottom half a
 * thread wake-up on every fence.
 */
void spyre_raise_deferred_locked(SpyreState *s, uint32_t cause);
void spyre_irq_deliver(SpyreState *s);
/* Signal the pending vectors; called with the BQL, without s->lock. */
void spyre_irq_signal(SpyreState *s);
/* A FENCE finished on queue q: QUEUE_FENCE(q), on vector (0: 1 + q). */
void spyre_raise_fence_locked(SpyreState *s, int q, uint32_t vector);
bool spyre_resetting_locked(const SpyreState *s);

/* Not a status: a vCPU left the command to its queue's worker. */
#define SPYRE_CMD_DEFERRED  UINT32_MAX

/* spyre-mmu.c: translation of device virtual addresses for one command */
typedef struct SpyreExec {
    SpyreState *s;
    SpyreQueue *q;
    uint64_t generation;    /* of the command; a reset aborts it */
    uint32_t context;
    bool ctx_valid;
    uint64_t root;
    SpyreMmuCache *mc;      /* the queue's */
    bool nested;            /* inside a CALL: no further CALL */
    bool brief_only;        /* on a vCPU: leave other commands to the worker */
    uint32_t resume_index;  /* a CALL starts at this command */
    uint32_t sub_index;     /* failing command inside a CALL */
    SpyreEngineFailure engine; /* why a LAUNCH failed; status 0 otherwise */
    uint64_t model_ns;      /* modelled time the command has reached */
    uint64_t model_bytes[SPYRE_CLOCK_LINKS]; /* DMA bytes not yet timed */
} SpyreExec;

typedef struct SpyreXlate {
    bool system;            /* host bus address, else device memory offset */
    uint64_t addr;
    uint64_t len;           /* contiguous bytes from addr */
} SpyreXlate;

/* spyre-clock.c: the modelled clock */
bool spyre_clock_modelled(const SpyreState *s);
void spyre_clock_begin_locked(SpyreQueue *q, SpyreExec *e);
void spyre_clock_end_locked(SpyreQueue *q, const SpyreExec *e);
void spyre_clock_advance(SpyreExec *e, uint64_t ns);
void spyre_clock_copy(SpyreExec *e, bool src_host, bool dst_host, uint64_t n);
void spyre_clock_fill(SpyreExec *e, bool dst_host, uint64_t n);
void spyre_clock_dma_done(SpyreExec *e);
void spyre_clock_fence_locked(SpyreExec *e, uint64_t va);
void spyre_clock_waited(SpyreExec *e, uint64_t va);
uint64_t spyre_clock_timestamp(const SpyreExec *e);
uint64_t spyre_clock_now_locked(const SpyreState *s);
void spyre_clock_reset_locked(SpyreState *s);

void spyre_exec_init(SpyreExec *e, SpyreQueue *q);
void spyre_mmu_cache_init(SpyreMmuCache *mc);
uint32_t spyre_translate(SpyreExec *e, uint64_t va, uint64_t max_len,
                         int access, SpyreXlate *out);
uint32_t spyre_dma_failed(const SpyreExec *e);
uint32_t spyre_va_read(SpyreExec *e, uint64_t va, void *buf, uint64_t len);
uint32_t spyre_va_write(SpyreExec *e, uint64_t va, const void *buf,
                        uint64_t len);
void spyre_mmu_invalidate_locked(SpyreState *s, uint32_t context);
/* Complete the invalidations no running command still holds up. */
void spyre_mmu_inv_update_locked(SpyreState *s);
void spyre_mmu_hold_locked(SpyreExec *e);
void spyre_mmu_hold(SpyreExec *e);
void spyre_mmu_release_locked(SpyreQueue *q);
const void *spyre_va_map(SpyreExec *e, uint64_t va, uint64_t len);

/* spyre-launch.c */
uint32_t spyre_cmd_launch(SpyreExec *e, const uint64_t *args);
void spyre_launch_cache_free(SpyreQueue *q);

/* spyre-queue.c */
void spyre_queues_start(SpyreState *s);
void spyre_queue_kick_locked(SpyreQueue *q);
void spyre_queue_doorbell_locked(SpyreQueue *q);
void spyre_queue_drop_deferred_locked(SpyreQueue *q);
void spyre_queues_kick_locked(SpyreState *s);
void spyre_queues_stop(SpyreState *s);
bool spyre_exec_aborted(SpyreExec *e);

#endif /* HW_SPYRE_DEV_H */
