/*
 * IBM Spyre AI accelerator: command queues and the DMA engine.  Each queue
 * has a worker thread that fetches commands from its ring in host memory
 * and runs them without the BQL, so a long copy never stalls a vCPU.
 * docs/hardware.md, "Commands", is the reference.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "exec/cpu-common.h"
#include "exec/memory.h"
#include "trace.h"

#include "spyre-dev.h"
#include "spyre_cmd.h"

/* WAIT re-reads its word at least this often (ms). */
#define SPYRE_WAIT_POLL_MS  1

/* The command layout is the shared contract's (include/spyre_cmd.h). */
typedef struct spyre_cmd SpyreCmd;

/* A reset or unplug since the command started ends it. */
bool spyre_exec_aborted(SpyreExec *e)
{
    return qatomic_read(&e->s->generation) != e->generation ||
           qatomic_read(&e->s->stopping);
}

static int spyre_queue_priority(SpyreQueue *q)
{
    return (q->regs.ctrl & SPYRE_QCTRL_PRIORITY_MASK) >>
           SPYRE_QCTRL_PRIORITY_SHIFT;
}

/* Among queues waiting for the engine: highest priority, then round robin. */
static int spyre_dma_next_locked(SpyreState *s)
{
    int best = -1, i;

    for (i = 1; i <= SPYRE_NUM_QUEUES; i++) {
        SpyreQueue *q = &s->queues[(s->dma_last + i) % SPYRE_NUM_QUEUES];

        if (q->dma_waiting &&
            (best < 0 || spyre_queue_priority(q) >
                         spyre_queue_priority(&s->queues[best]))) {
            best = q->index;
        }
    }
    return best;
}

static bool spyre_dma_acquire(SpyreExec *e)
{
    SpyreState *s = e->s;
    SpyreQueue *q = e->q;

    qemu_mutex_lock(&s->lock);
    q->dma_waiting = true;
    while (!spyre_exec_aborted(e) &&
           (s->dma_owner >= 0 || spyre_dma_next_locked(s) != q->index)) {
        qemu_cond_wait(&s->dma_cond, &s->lock);
    }
    q->dma_waiting = false;
    if (spyre_exec_aborted(e)) {
        qemu_cond_broadcast(&s->dma_cond);
        qemu_mutex_unlock(&s->lock);
        return false;
    }
    s->dma_owner = q->index;
    /* Translations of the chunk before are done with. */
    spyre_mmu_hold_locked(e);
    qemu_mutex_unlock(&s->lock);
    return true;
}

static void spyre_dma_release(SpyreExec *e, uint64_t bytes, int64_t ns)
{
    SpyreState *s = e->s;
    int i;

    qemu_mutex_lock(&s->lock);
    s->dma_owner = -1;
    s->dma_last = e->q->index;
    /* Nothing translated is held between chunks. */
    spyre_mmu_hold_locked(e);
    if (e->generation == s->generation) {
        s->telem.bytes_moved += bytes;
        s->telem.dma_busy_ns += ns;
    }
    /* Wake only the queues waiting for the engine, and only if any. */
    for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
        if (s->queues[i].dma_waiting) {
            qemu_cond_broadcast(&s->dma_cond);
            break;
        }
    }
    qemu_mutex_unlock(&s->lock);
}

/* Copy one run that is contiguous on both sides. */
static uint32_t spyre_copy_run(SpyreExec *e, const SpyreXlate *src,
                               const SpyreXlate *dst, uint64_t len,
                               uint8_t *bounce)
{
    PCIDevice *pdev = PCI_DEVICE(e->s);
    uint8_t *mem = e->s->mem_ptr;

    if (!src->system && !dst->system) {
        memmove(mem + dst->addr, mem + src->addr, len);
    } else if (src->system && !dst->system) {
        if (pci_dma_read(pdev, src->addr, mem + dst->addr, len)) {
            return SPYRE_CMD_STATUS_DMA_ERROR;
        }
    } else if (!src->system) {
        if (pci_dma_write(pdev, dst->addr, mem + src->addr, len)) {
            return SPYRE_CMD_STATUS_DMA_ERROR;
        }
    } else if (pci_dma_read(pdev, src->addr, bounce, len) ||
               pci_dma_write(pdev, dst->addr, bounce, len)) {
        return SPYRE_CMD_STATUS_DMA_ERROR;
    }
    return SPYRE_CMD_STATUS_SUCCESS;
}

static bool spyre_range_ok(uint64_t va, uint64_t len)
{
    return len && len <= SPYRE_DMA_MAX_BYTES && !(va >> SPYRE_VA_BITS) &&
           len <= (1ull << SPYRE_VA_BITS) - va;
}

static uint32_t spyre_copy(SpyreExec *e, uint64_t src, uint64_t dst,
                           uint64_t len, uint8_t *bounce)
{
    uint32_t st = SPYRE_CMD_STATUS_SUCCESS;

    if (!spyre_range_ok(src, len) || !spyre_range_ok(dst, len) ||
        (src < dst + len && dst < src + len)) {
        return SPYRE_CMD_STATUS_BAD_ARGUMENT;
    }
    while (len && st == SPYRE_CMD_STATUS_SUCCESS) {
        uint64_t chunk = MIN(len, SPYRE_DMA_CHUNK), done = 0;
        int64_t start;

        if (!spyre_dma_acquire(e)) {
            return SPYRE_CMD_STATUS_ABORTED;
        }
        start = spyre_now_ns();
        while (done < chunk) {
            SpyreXlate xs, xd;
            uint64_t n;

            st = spyre_translate(e, src + done, chunk - done,
                                 SPYRE_ACCESS_READ, &xs);
            if (st == SPYRE_CMD_STATUS_SUCCESS) {
                st = spyre_translate(e, dst + done, xs.len,
                                     SPYRE_ACCESS_WRITE, &xd);
            }
            if (st != SPYRE_CMD_STATUS_SUCCESS) {
                break;
            }
            n = MIN(xs.len, xd.len);
            st = spyre_copy_run(e, &xs, &xd, n, bounce);
            if (st != SPYRE_CMD_STATUS_SUCCESS) {
                break;
            }
            spyre_clock_copy(e, xs.system, xd.system, n);
            done += n;
        }
        spyre_dma_release(e, done, spyre_now_ns() - start);
        src += done;
        dst += done;
        len -= done;
    }
    spyre_clock_dma_done(e);
    return st;
}

/*
 * Write device memory from a pattern buffer.  Zeros over whole host pages
 * give the pages back instead of writing them (the device memory is
 * anonymous RAM, which reads back as zeros once discarded): clearing a new
 * 16 GiB buffer then costs no host RAM until the buffer is written.
 */
static void spyre_mem_fill(SpyreState *s, uint64_t off, const uint8_t *src,
                           uint64_t len, bool zero)
{
    uint64_t page = qemu_real_host_page_size();
    uint64_t head = MIN(ROUND_UP(off, page) - off, len);
    uint64_t body = QEMU_ALIGN_DOWN(len - head, page);

    if (zero && body && !ram_block_discard_is_disabled() &&
        !ram_block_discard_range(s->mem.ram_block, off + head, body)) {
        memcpy(s->mem_ptr + off, src, head);
        memcpy(s->mem_ptr + off + head + body, src, len - head - body);
        return;
    }
    memcpy(s->mem_ptr + off, src, len);
}

/* Fill with a repeated 64-bit pattern (little-endian, from dst's start). */
static uint32_t spyre_fill(SpyreExec *e, uint64_t dst, uint64_t len,
                           uint64_t pattern, uint8_t *bounce)
{
    uint64_t done = 0, i;
    uint32_t st = SPYRE_CMD_STATUS_SUCCESS;

    if (!spyre_range_ok(dst, len)) {
        return SPYRE_CMD_STATUS_BAD_ARGUMENT;
    }
    for (i = 0; i < SPYRE_DMA_CHUNK; i += 8) {
        stq_le_p(bounce + i, pattern);
    }
    while (done < len && st == SPYRE_CMD_STATUS_SUCCESS) {
        uint64_t chunk = MIN(len - done, SPYRE_DMA_CHUNK), n = 0;
        int64_t start;

        if (!spyre_dma_acquire(e)) {
            return SPYRE_CMD_STATUS_ABORTED;
        }
        start = spyre_now_ns();
        while (n < chunk) {
            SpyreXlate x;
            /* Keep the pattern's phase: offsets are relative to dst. */
            uint64_t phase = (done + n) & 7;

            st = spyre_translate(e, dst + done + n, chunk - n,
                                 SPYRE_ACCESS_WRITE, &x);
            if (st != SPYRE_CMD_STATUS_SUCCESS) {
                break;
            }
            x.len = MIN(x.len, SPYRE_DMA_CHUNK - phase);
            if (!x.system) {
                spyre_mem_fill(e->s, x.addr, bounce + phase, x.len,
                               pattern == 0);
            } else if (pci_dma_write(PCI_DEVICE(e->s), x.addr, bounce + phase,
                                     x.len)) {
                st = SPYRE_CMD_STATUS_DMA_ERROR;
                break;
            }
            spyre_clock_fill(e, x.system, x.len);
            n += x.len;
        }
        spyre_dma_release(e, n, spyre_now_ns() - start);
        done += n;
    }
    spyre_clock_dma_done(e);
    return st;
}

static uint32_t spyre_cmd_copy_sg(SpyreExec *e, const SpyreCmd *c,
                                  uint8_t *bounce)
{
    uint64_t list = c->args[0], count = c->args[1], i;

    if ((list & 7) || !count || count > SPYRE_SG_MAX_ENTRIES ||
        !spyre_range_ok(list, count * SPYRE_SG_ENTRY_SIZE)) {
        return SPYRE_CMD_STATUS_BAD_ARGUMENT;
    }
    for (i = 0; i < count; i++) {
        uint64_t ent[4];
        uint32_t st;

        st = spyre_va_read(e, list + i * SPYRE_SG_ENTRY_SIZE, ent, sizeof(ent));
        if (st != SPYRE_CMD_STATUS_SUCCESS) {
            return st;
        }
        if (ent[3]) {
            return SPYRE_CMD_STATUS_BAD_ARGUMENT;
        }
        st = spyre_copy(e, le64_to_cpu(ent[0]), le64_to_cpu(ent[1]),
                        le64_to_cpu(ent[2]), bounce);
        if (st != SPYRE_CMD_STATUS_SUCCESS) {
            return st;
        }
    }
    return SPYRE_CMD_STATUS_SUCCESS;
}

static uint32_t spyre_write_u64(SpyreExec *e, uint64_t va, uint64_t val)
{
    uint64_t le = cpu_to_le64(val);

    if ((va & 7) || !spyre_range_ok(va, 8)) {
        return SPYRE_CMD_STATUS_BAD_ARGUMENT;
    }
    return spyre_va_write(e, va, &le, sizeof(le));
}

static uint32_t spyre_cmd_fence(SpyreExec *e, const SpyreCmd *c)
{
    SpyreState *s = e->s;
    uint64_t vector = c->args[2];
    uint32_t st;

    /* 0 is the queue's own vector (the misc vector is not a choice). */
    if (vector >= SPYRE_MSIX_VECTORS) {
        qemu_log_mask(LOG_GUEST_ERROR, "spyre: queue %d: FENCE names vector "
                      "%" PRIu64 " (0-%d)\n", e->q->index, vector,
                      SPYRE_MSIX_VECTORS - 1);
        return SPYRE_CMD_STATUS_BAD_ARGUMENT;
    }
    /*
     * A CALL runs a client's commands: their FENCEs signal the queue's own
     * vector only, so a client cannot interrupt another queue's or CPU's
     * waiter (the vectors are the driver's to hand out).
     */
    if (e->nested && vector) {
        qemu_log_mask(LOG_GUEST_ERROR, "spyre: queue %d: FENCE inside a CALL "
                      "names vector %" PRIu64 " (only 0 there)\n",
                      e->q->index, vector);
        return SPYRE_CMD_STATUS_BAD_ARGUMENT;
    }
    st = spyre_write_u64(e, c->args[0], c->args[1]);
    if (st == SPYRE_CMD_STATUS_SUCCESS) {
        qemu_mutex_lock(&s->lock);
        if (e->generation == s->generation) {
            spyre_clock_fence_locked(e, c->args[0]);
            spyre_raise_fence_locked(s, e->q->index, vector);
        }
        qemu_mutex_unlock(&s->lock);
    }
    return st;
}

static uint32_t spyre_cmd_wait(SpyreExec *e, const SpyreCmd *c)
{
    SpyreState *s = e->s;
    uint64_t va = c->args[0], want = c->args[1], timeout = c->args[2];
    int64_t deadline = spyre_now_ns() + MIN(timeout, INT64_MAX / 2);

    if ((va & 7) || !spyre_range_ok(va, 8)) {
        return SPYRE_CMD_STATUS_BAD_ARGUMENT;
    }
    for (;;) {
        uint64_t le;
        uint32_t st = spyre_va_read(e, va, &le, sizeof(le));

        if (st != SPYRE_CMD_STATUS_SUCCESS) {
            return st;
        }
        if (le64_to_cpu(le) >= want) {
            spyre_clock_waited(e, va);
            return SPYRE_CMD_STATUS_SUCCESS;
        }
        if (timeout && spyre_now_ns() >= deadline) {
            return SPYRE_CMD_STATUS_TIMEOUT;
        }
        /* Woken early when another queue finishes a command. */
        qemu_mutex_lock(&s->lock);
        spyre_mmu_hold_locked(e);       /* the word is read afresh */
        if (!spyre_exec_aborted(e)) {
            qemu_cond_timedwait(&s->cond, &s->lock, SPYRE_WAIT_POLL_MS);
        }
        qemu_mutex_unlock(&s->lock);
        if (spyre_exec_aborted(e)) {
            return SPYRE_CMD_STATUS_ABORTED;
        }
    }
}

/* An injected hang: nothing happens until a reset. */
static uint32_t spyre_hang(SpyreExec *e)
{
    SpyreState *s = e->s;

    qemu_mutex_lock(&s->lock);
    /* It stops before translating anything: it holds nothing. */
    spyre_mmu_release_locked(e->q);
    while (!spyre_exec_aborted(e)) {
        qemu_cond_wait(&s->cond, &s->lock);
    }
    qemu_mutex_unlock(&s->lock);
    return SPYRE_CMD_STATUS_ABORTED;
}

/*
 * Commands a vCPU may run itself when its doorbell finds the queue idle:
 * each takes a microsecond or two and never blocks, so the vCPU saves
 * handing them to the worker and the worker's interrupt back, and is not
 * held up.  A CALL is brief as far as its own commands are; at most
 * SPYRE_BRIEF_MAX commands run so at one doorbell.  The rest (copies,
 * fills, launches, waits) and all after them go to the worker.
 */
#define SPYRE_BRIEF_MAX     32

static bool spyre_cmd_brief(SpyreQueue *q, uint8_t opcode)
{
    switch (opcode) {
    case SPYRE_OP_NOP:
    case SPYRE_OP_FENCE:
    case SPYRE_OP_TIMESTAMP:
    case SPYRE_OP_CALL:
        if (!q->brief_left) {
            return false;
        }
        q->brief_left--;
        return true;
    default:
        return false;
    }
}

static bool spyre_unused_args_zero(const SpyreCmd *c, int used)
{
    int i;

    for (i = used; i < SPYRE_CMD_NUM_ARGS; i++) {
        if (c->args[i]) {
            return false;
        }
    }
    return true;
}

static uint32_t spyre_cmd_execute(SpyreExec *e, const SpyreCmd *c,
                                  uint8_t *bounce);

/* Run a command buffer in the context the CALL names. */
static uint32_t spyre_cmd_call(SpyreExec *e, const SpyreCmd *c,
                               uint8_t *bounce)
{
    uint64_t ctx = c->args[0], buf = c->args[1], count = c->args[2], i;
    SpyreExec inner;

    if (e->nested) {
        return SPYRE_CMD_STATUS_BAD_OPCODE;
    }
    if (ctx >= SPYRE_NUM_CONTEXTS || (buf & (SPYRE_CMD_SIZE - 1)) || !count ||
        count > SPYRE_CALL_MAX_CMDS ||
        !spyre_range_ok(buf, count * SPYRE_CMD_SIZE)) {
        return SPYRE_CMD_STATUS_BAD_ARGUMENT;
    }
    qemu_mutex_lock(&e->s->lock);
    inner = *e;
    inner.context = ctx;
    inner.ctx_valid = e->s->regs.ctx_ctrl[ctx] & SPYRE_CTX_VALID;
    inner.root = e->s->regs.ctx_root[ctx];
    inner.nested = true;
    qemu_mutex_unlock(&e->s->lock);

    /* A CALL a vCPU began goes on where the vCPU stopped. */
    for (i = e->resume_index; i < count; i++) {
        uint8_t raw[SPYRE_CMD_SIZE];
        SpyreCmd sub;
        uint32_t st;

        /* Each command translates in the called context, afresh. */
        spyre_mmu_hold(&inner);
        st = spyre_va_read(&inner, buf + i * SPYRE_CMD_SIZE, raw, sizeof(raw));
        if (st == SPYRE_CMD_STATUS_SUCCESS) {
            spyre_cmd_decode(raw, &sub);
            st = spyre_cmd_execute(&inner, &sub, bounce);
        }
        e->model_ns = inner.model_ns;
        if (st == SPYRE_CMD_STATUS_SUCCESS && spyre_exec_aborted(e)) {
            st = SPYRE_CMD_STATUS_ABORTED;
        }
        if (st != SPYRE_CMD_STATUS_SUCCESS) {
            e->sub_index = i;
            e->engine = inner.engine;
            return st;
        }
    }
    return SPYRE_CMD_STATUS_SUCCESS;
}

static uint32_t spyre_cmd_execute(SpyreExec *e, const SpyreCmd *c,
                                  uint8_t *bounce)
{
    static const int nargs[] = {
        [SPYRE_OP_NOP] = 0,
        [SPYRE_OP_DMA_COPY] = 3,
        [SPYRE_OP_DMA_COPY_SG] = 2,
        [SPYRE_OP_LAUNCH] = 4,
        [SPYRE_OP_FENCE] = 3,
        [SPYRE_OP_WAIT] = 3,
        [SPYRE_OP_TIMESTAMP] = 1,
        [SPYRE_OP_CALL] = 3,
        [SPYRE_OP_DMA_FILL] = 3,
    };

    if (c->opcode >= ARRAY_SIZE(nargs)) {
        qemu_log_mask(LOG_GUEST_ERROR, "spyre: queue %d: unknown opcode "
                      "0x%02x\n", e->q->index, c->opcode);
        return SPYRE_CMD_STATUS_BAD_OPCODE;
    }
    if (c->flags & ~SPYRE_CMD_FLAGS_ALL || c->reserved ||
        !spyre_unused_args_zero(c, nargs[c->opcode])) {
        qemu_log_mask(LOG_GUEST_ERROR, "spyre: queue %d: opcode 0x%02x with "
                      "reserved bits set\n", e->q->index, c->opcode);
        return SPYRE_CMD_STATUS_BAD_ARGUMENT;
    }

    if (e->brief_only && !spyre_cmd_brief(e->q, c->opcode)) {
        return SPYRE_CMD_DEFERRED;
    }
    switch (c->opcode) {
    case SPYRE_OP_NOP:
        return SPYRE_CMD_STATUS_SUCCESS;
    case SPYRE_OP_DMA_COPY:
        return spyre_copy(e, c->args[0], c->args[1], c->args[2], bounce);
    case SPYRE_OP_DMA_COPY_SG:
        return spyre_cmd_copy_sg(e, c, bounce);
    case SPYRE_OP_LAUNCH:
        return spyre_cmd_launch(e, c->args);
    case SPYRE_OP_FENCE:
        return spyre_cmd_fence(e, c);
    case SPYRE_OP_WAIT:
        return spyre_cmd_wait(e, c);
    case SPYRE_OP_TIMESTAMP:
        return spyre_write_u64(e, c->args[0], spyre_clock_timestamp(e));
    case SPYRE_OP_CALL:
        return spyre_cmd_call(e, c, bounce);
    case SPYRE_OP_DMA_FILL:
        return spyre_fill(e, c->args[0], c->args[1], c->args[2], bounce);
    default:
        g_assert_not_reached();
    }
}

static bool spyre_queue_has_work_locked(SpyreQueue *q)
{
    return (q->regs.ctrl & SPYRE_QCTRL_ENABLE) && !q->regs.stopped &&
           q->regs.head != q->regs.tail && !q->s->stopping;
}

/* Decrement an injection countdown; true when it fires on this command. */
static bool spyre_injection_fires(int *countdown)
{
    if (*countdown < 0) {
        return false;
    }
    if (*countdown == 0) {
        *countdown = -1;
        return true;
    }
    (*countdown)--;
    return false;
}

static void spyre_queue_finish_locked(SpyreQueue *q, uint32_t status,
                                      const SpyreExec *e, int64_t ns)
{
    SpyreState *s = q->s;

    q->running = false;
    spyre_clock_end_locked(q, e);
    q->regs.head = (q->regs.head + 1) & (q->regs.size - 1);
    q->regs.completed++;
    q->regs.last_status = status;
    q->regs.busy_ns += ns;
    s->telem.cmd_count++;
    if (status != SPYRE_CMD_STATUS_SUCCESS) {
        q->regs.stopped = true;
        q->regs.error_index = (q->regs.head - 1) & (q->regs.size - 1);
        q->regs.error_sub_index = e->sub_index;
        q->regs.engine = e->engine;
        s->telem.error_count++;
        spyre_raise_deferred_locked(s, SPYRE_INT_CMD_ERROR);
    }
}

static void spyre_busy_account_locked(SpyreState *s, int delta)
{
    int64_t now = spyre_now_ns();

    if (delta > 0 && s->telem.running_queues++ == 0) {
        s->telem.busy_since_ns = now;
    } else if (delta < 0 && --s->telem.running_queues == 0) {
        s->telem.busy_ns += now - s->telem.busy_since_ns;
    }
}

/*
 * Fetch the command at ring index head (bus address entry), run it or the
 * injection that fires on it, and write its status back.  Called without
 * the lock; returns the status.
 */
static uint32_t spyre_queue_run_entry(SpyreQueue *q, SpyreExec *e,
                                      uint32_t head, uint64_t entry,
                                      bool hang, bool dma_error,
                                      uint8_t *bounce)
{
    PCIDevice *pdev = PCI_DEVICE(q->s);
    uint8_t raw[SPYRE_CMD_SIZE], le_status[4];
    uint32_t status;
    SpyreCmd c;

    if (pci_dma_read(pdev, entry, raw, sizeof(raw))) {
        if (e->brief_only) {
            return SPYRE_CMD_DEFERRED;      /* see spyre_dma_failed() */
        }
        qemu_log_mask(LOG_GUEST_ERROR, "spyre: queue %d: cannot read ring "
                      "entry at 0x%" PRIx64 "\n", q->index, entry);
        trace_spyre_cmd_done(q->index, SPYRE_CMD_STATUS_DMA_ERROR);
        return SPYRE_CMD_STATUS_DMA_ERROR;
    }
    spyre_cmd_decode(raw, &c);
    trace_spyre_cmd_start(q->index, head, c.opcode);
    if (hang) {
        status = spyre_hang(e);
    } else if (dma_error) {
        status = SPYRE_CMD_STATUS_DMA_ERROR;
    } else {
        status = spyre_cmd_execute(e, &c, bounce);
    }
    if (spyre_exec_aborted(e)) {
        status = SPYRE_CMD_STATUS_ABORTED;
    } else if (status == SPYRE_CMD_DEFERRED) {
        return status;
    }
    trace_spyre_cmd_done(q->index, status);
    spyre_put_le32(le_status, status);
    if (pci_dma_write(pdev, entry + SPYRE_CMD_OFF_STATUS, le_status,
                      sizeof(le_status))) {
        qemu_log_mask(LOG_GUEST_ERROR, "spyre: queue %d: cannot write the "
                      "status of ring entry at 0x%" PRIx64 "\n", q->index,
                      entry);
    }
    return status;
}

/*
 * Run the command at the ring's head, with s->lock held (dropped while it
 * runs), and signal the interrupts it raised.  On a vCPU (brief_only: the
 * caller holds the BQL) it may leave the command to the worker: returns
 * false then, with the command still at the head.
 */
static bool spyre_queue_run_head_locked(SpyreQueue *q, uint8_t *bounce,
                                        bool brief_only)
{
    SpyreState *s = q->s;
    uint32_t head, status;
    uint64_t entry;
    SpyreExec e;
    bool hang, dma_error;
    int64_t start;

    head = q->regs.head;
    entry = q->regs.base + (uint64_t)head * SPYRE_CMD_SIZE;
    spyre_exec_init(&e, q);
    e.brief_only = brief_only;
    e.resume_index = q->call_resume;
    q->call_resume = 0;
    q->deferred = false;
    spyre_mmu_hold_locked(&e);
    spyre_clock_begin_locked(q, &e);
    /* A CALL the vCPU began started before: injections count starts. */
    hang = !e.resume_index && spyre_injection_fires(&q->hang_countdown);
    dma_error = !e.resume_index &&
                spyre_injection_fires(&q->dma_error_countdown);
    q->running = true;
    q->run_generation = e.generation;
    spyre_busy_account_locked(s, 1);
    qemu_mutex_unlock(&s->lock);

    start = spyre_now_ns();
    status = spyre_queue_run_entry(q, &e, head, entry, hang, dma_error,
                                   bounce);

    qemu_mutex_lock(&s->lock);
    if (e.generation != s->generation) {
        q->running = false;     /* the reset already cleared the queue */
    } else {
        spyre_busy_account_locked(s, -1);
        if (status != SPYRE_CMD_DEFERRED) {
            spyre_queue_finish_locked(q, status, &e, spyre_now_ns() - start);
        } else {
            /* The worker goes on from the command the vCPU stopped at. */
            spyre_clock_end_locked(q, &e);
            q->running = false;
            q->call_resume = e.sub_index;
            q->deferred = true;
            q->regs.busy_ns += spyre_now_ns() - start;
        }
    }
    spyre_mmu_release_locked(q);
    /*
     * Wake WAITs on other queues and a hang waiting for reset; idle
     * workers wait on their own queue's condition, not woken here.
     */
    qemu_cond_broadcast(&s->cond);
    if (s->irq_vectors) {
        /* The BQL without s->lock: MMIO handlers take them in turn. */
        qemu_mutex_unlock(&s->lock);
        if (brief_only) {
            spyre_irq_signal(s);
        } else {
            spyre_irq_deliver(s);
        }
        qemu_mutex_lock(&s->lock);
    }
    return status != SPYRE_CMD_DEFERRED;
}

static void *spyre_queue_worker(void *opaque)
{
    SpyreQueue *q = opaque;
    SpyreState *s = q->s;
    uint8_t *bounce = g_malloc(SPYRE_DMA_CHUNK);

    qemu_mutex_lock(&s->lock);
    while (!s->stopping) {
        /* A vCPU may be running the head command (it dropped the lock). */
        if (!spyre_queue_has_work_locked(q) || q->running) {
            if (!q->running) {
                q->model_idle = true;
            }
            qemu_cond_wait(&q->work, &s->lock);
            continue;
        }
        spyre_queue_run_head_locked(q, bounce, false);
    }
    qemu_mutex_unlock(&s->lock);
    spyre_launch_cache_free(q);
    g_free(bounce);
    return NULL;
}

/* Reset, re-enabled or emptied: nothing is left half run for the worker. */
void spyre_queue_drop_deferred_locked(SpyreQueue *q)
{
    q->call_resume = 0;
    q->deferred = false;
}

/*
 * A doorbell (on a vCPU, with the BQL and s->lock): if the queue is idle
 * (nothing running, nothing left to the worker), run its brief commands
 * here (spyre_cmd_brief), and wake the worker for whatever is left.
 * Injected faults always go to the worker (a hang blocks until reset).
 */
void spyre_queue_doorbell_locked(SpyreQueue *q)
{
    SpyreState *s = q->s;

    if (s->brief_on_vcpu && !q->running && !q->deferred &&
        q->hang_countdown < 0 && q->dma_error_countdown < 0) {
        q->brief_left = SPYRE_BRIEF_MAX;
        while (spyre_queue_has_work_locked(q) && !q->running &&
               spyre_queue_run_head_locked(q, NULL, true)) {
            /* on to the next command */
        }
    }
    if (spyre_queue_has_work_locked(q)) {
        spyre_queue_kick_locked(q);
    } else if (!q->running) {
        q->model_idle = true;
    }
}

/*
 * The queue's registers changed (doorbell, control): wake its worker.
 * Each worker has its own condition, so a command on one queue does not
 * wake the other three workers.
 */
void spyre_queue_kick_locked(SpyreQueue *q)
{
    qemu_cond_signal(&q->work);
}

/* Reset or stop: wake every worker. */
void spyre_queues_kick_locked(SpyreState *s)
{
    int i;

    for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
        qemu_cond_signal(&s->queues[i].work);
    }
}

void spyre_queues_start(SpyreState *s)
{
    int i;

    for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
        SpyreQueue *q = &s->queues[i];
        char name[16];

        q->s = s;
        q->index = i;
        q->hold_ctx = -1;
        spyre_mmu_cache_init(&q->mmu_cache);
        snprintf(name, sizeof(name), "spyre-q%d", i);
        qemu_thread_create(&q->thread, name, spyre_queue_worker, q,
                           QEMU_THREAD_JOINABLE);
    }
}

void spyre_queues_stop(SpyreState *s)
{
    int i;

    qemu_mutex_lock(&s->lock);
    s->stopping = true;
    qemu_cond_broadcast(&s->cond);
    qemu_cond_broadcast(&s->dma_cond);
    spyre_queues_kick_locked(s);
    qemu_mutex_unlock(&s->lock);
    /* A worker may be waiting for the BQL inside a DMA to MMIO. */
    bql_unlock();
    for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
        qemu_thread_join(&s->queues[i].thread);
    }
    bql_lock();
}
