/*
 * IBM Spyre AI accelerator: the per-context MMU.  Translates the device
 * virtual addresses of a command into device memory offsets or host bus
 * addresses by walking the context's 4-level table in host memory, and
 * records faults.  docs/hardware.md, "MMU page tables", is the reference.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/bswap.h"
#include "qemu/log.h"
#include "trace.h"

#include "spyre-dev.h"

#define SPYRE_HUGE_MASK     (SPYRE_HUGE_PAGE_SIZE - 1)
#define SPYRE_PAGE_MASK     (SPYRE_PAGE_SIZE - 1)

void spyre_exec_init(SpyreExec *e, SpyreQueue *q)
{
    SpyreState *s = q->s;

    /* Called with s->lock held: snapshot the queue's context. */
    e->s = s;
    e->q = q;
    e->generation = s->generation;
    e->context = q->regs.context;
    e->ctx_valid = s->regs.ctx_ctrl[q->regs.context] & SPYRE_CTX_VALID;
    e->root = s->regs.ctx_root[q->regs.context];
    e->mc = &q->mmu_cache;
    e->nested = false;
    e->brief_only = false;
    e->resume_index = 0;
    e->sub_index = 0;
    e->engine = (SpyreEngineFailure){ 0 };
    e->model_ns = 0;
    memset(e->model_bytes, 0, sizeof(e->model_bytes));
}

static void spyre_record_fault(SpyreExec *e, uint64_t va, int access,
                               uint32_t reason)
{
    SpyreState *s = e->s;

    qemu_log_mask(LOG_GUEST_ERROR, "spyre: queue %d context %u: MMU fault "
                  "(reason %u) on %s of 0x%" PRIx64 "\n", e->q->index,
                  e->context, reason,
                  access == SPYRE_ACCESS_WRITE ? "write" : "read", va);
    trace_spyre_mmu_fault(e->q->index, e->context, va, access, reason);
    qemu_mutex_lock(&s->lock);
    if (e->generation == s->generation) {
        s->telem.fault_count++;
        if (s->regs.fault_status & SPYRE_FAULT_VALID) {
            s->regs.fault_status |= SPYRE_FAULT_OVERFLOW;
        } else {
            s->regs.fault_status = SPYRE_FAULT_VALID;
            s->regs.fault_addr = va;
            s->regs.fault_context = e->context;
            s->regs.fault_queue = e->q->index;
            s->regs.fault_access = access;
            s->regs.fault_reason = reason;
        }
        spyre_raise_locked(s, SPYRE_INT_MMU_FAULT);
    }
    qemu_mutex_unlock(&s->lock);
}

static uint32_t spyre_read_entry(SpyreExec *e, uint64_t table, unsigned idx,
                                 uint64_t *entry)
{
    uint64_t le;

    if (pci_dma_read(PCI_DEVICE(e->s), table + idx * 8, &le, sizeof(le))) {
        return SPYRE_FAULT_TABLE_FETCH;
    }
    *entry = le64_to_cpu(le);
    if (!(*entry & SPYRE_PTE_VALID)) {
        return SPYRE_FAULT_NOT_PRESENT;
    }
    if (*entry & SPYRE_PTE_RESERVED_MASK) {
        return SPYRE_FAULT_BAD_ENTRY;
    }
    return 0;
}

void spyre_mmu_cache_init(SpyreMmuCache *mc)
{
    mc->epoch = UINT64_MAX;
}

/* Drop everything when MMU_INVALIDATE or a reset moved the epoch. */
static void spyre_mmu_cache_sync(SpyreMmuCache *mc, uint64_t epoch)
{
    int i;

    if (mc->epoch == epoch) {
        return;
    }
    for (i = 0; i < SPYRE_WALK_ENTRIES; i++) {
        mc->walk[i].va = UINT64_MAX;
    }
    for (i = 0; i < SPYRE_TLB_ENTRIES; i++) {
        mc->leaf[i].va = UINT64_MAX;
    }
    mc->epoch = epoch;
}

/* Levels 0-2 for the 2 MiB region holding va, through the walk cache. */
static uint32_t spyre_walk_upper(SpyreExec *e, uint64_t va, uint64_t *l2)
{
    uint64_t region = va & ~SPYRE_HUGE_MASK;
    SpyreMmuCacheEntry *c =
        &e->mc->walk[(region >> SPYRE_PT_SHIFT(2)) % SPYRE_WALK_ENTRIES];
    uint64_t table = e->root, entry = 0;
    uint32_t fault;
    int level;

    if (c->va == region && c->root == e->root) {
        *l2 = c->entry;
        return 0;
    }
    for (level = 0; level < SPYRE_PT_LEVELS - 1; level++) {
        fault = spyre_read_entry(e, table, SPYRE_PT_INDEX(va, level), &entry);
        if (fault) {
            return fault;
        }
        if (level < 2 && (entry & SPYRE_PTE_LEAF)) {
            return SPYRE_FAULT_BAD_ENTRY;
        }
        table = entry & SPYRE_PTE_ADDR_MASK;
    }
    *c = (SpyreMmuCacheEntry) { .root = e->root, .va = region, .entry = entry };
    *l2 = entry;
    return 0;
}

/*
 * The level-3 entry of the 4 KiB page holding va, from the leaf cache or
 * the table at l2.
 */
static uint32_t spyre_read_leaf(SpyreExec *e, uint64_t l2, uint64_t va,
                                uint64_t *leaf)
{
    uint64_t page = va & ~SPYRE_PAGE_MASK;
    SpyreMmuCacheEntry *c =
        &e->mc->leaf[(page >> SPYRE_PAGE_SHIFT) % SPYRE_TLB_ENTRIES];
    uint32_t fault;

    if (c->va == page && c->root == e->root) {
        *leaf = c->entry;
        return 0;
    }
    fault = spyre_read_entry(e, l2 & SPYRE_PTE_ADDR_MASK,
                             SPYRE_PT_INDEX(va, SPYRE_PT_LEVELS - 1), leaf);
    if (!fault) {
        *c = (SpyreMmuCacheEntry) { .root = e->root, .va = page,
                                    .entry = *leaf };
    }
    return fault;
}

/* One page: where va lands and how many bytes of its page follow. */
static uint32_t spyre_translate_page(SpyreExec *e, uint64_t va, int access,
                                     SpyreXlate *out)
{
    uint64_t l2, leaf, page_base, page_size;
    uint32_t fault;

    if (!e->ctx_valid) {
        return SPYRE_FAULT_NO_CONTEXT;
    }
    if (va >> SPYRE_VA_BITS) {
        return SPYRE_FAULT_NOT_PRESENT;
    }
    spyre_mmu_cache_sync(e->mc, qatomic_read(&e->s->mmu_epoch));
    fault = spyre_walk_upper(e, va, &l2);
    if (fault) {
        return fault;
    }
    if (l2 & SPYRE_PTE_LEAF) {
        leaf = l2;
        page_size = SPYRE_HUGE_PAGE_SIZE;
        page_base = leaf & SPYRE_PTE_ADDR_MASK;
        if (page_base & SPYRE_HUGE_MASK) {
            return SPYRE_FAULT_BAD_ENTRY;
        }
    } else {
        fault = spyre_read_leaf(e, l2, va, &leaf);
        if (fault) {
            return fault;
        }
        if (leaf & SPYRE_PTE_LEAF) {
            return SPYRE_FAULT_BAD_ENTRY;
        }
        page_size = SPYRE_PAGE_SIZE;
        page_base = leaf & SPYRE_PTE_ADDR_MASK;
    }
    if (access == SPYRE_ACCESS_WRITE && !(leaf & SPYRE_PTE_WRITE)) {
        return SPYRE_FAULT_PERMISSION;
    }
    out->system = leaf & SPYRE_PTE_SYSTEM;
    if (!out->system && (page_base > e->s->mem_size ||
                         page_size > e->s->mem_size - page_base)) {
        return SPYRE_FAULT_BAD_ENTRY;
    }
    out->addr = page_base + (va & (page_size - 1));
    out->len = page_size - (va & (page_size - 1));
    return 0;
}

/*
 * Translate va for up to max_len bytes, merging pages that are contiguous
 * on the other side.  A fault on the first page is recorded and returned
 * as SPYRE_CMD_STATUS_MMU_FAULT; one further on only ends the run.
 */
uint32_t spyre_translate(SpyreExec *e, uint64_t va, uint64_t max_len,
                         int access, SpyreXlate *out)
{
    SpyreXlate page;
    uint32_t fault;

    fault = spyre_translate_page(e, va, access, out);
    if (fault) {
        spyre_record_fault(e, va, access, fault);
        return SPYRE_CMD_STATUS_MMU_FAULT;
    }
    out->len = MIN(out->len, max_len);
    while (out->len < max_len) {
        if (spyre_translate_page(e, va + out->len, access, &page) ||
            page.system != out->system || page.addr != out->addr + out->len) {
            break;
        }
        out->len = MIN(out->len + page.len, max_len);
    }
    return SPYRE_CMD_STATUS_SUCCESS;
}

/*
 * A bus access failed.  On a vCPU, inside the card's own register write,
 * QEMU refuses accesses that reach back into the card's registers (its
 * re-entrancy guard) that the worker would make: leave the command to the
 * worker.  A brief command's access is one aligned piece: nothing of it
 * was written.
 */
uint32_t spyre_dma_failed(const SpyreExec *e)
{
    return e->brief_only ? SPYRE_CMD_DEFERRED : SPYRE_CMD_STATUS_DMA_ERROR;
}

uint32_t spyre_va_read(SpyreExec *e, uint64_t va, void *buf, uint64_t len)
{
    SpyreXlate x;
    uint32_t st;

    while (len) {
        st = spyre_translate(e, va, len, SPYRE_ACCESS_READ, &x);
        if (st != SPYRE_CMD_STATUS_SUCCESS) {
            return st;
        }
        if (!x.system) {
            memcpy(buf, e->s->mem_ptr + x.addr, x.len);
        } else if (pci_dma_read(PCI_DEVICE(e->s), x.addr, buf, x.len)) {
            return spyre_dma_failed(e);
        }
        va += x.len;
        buf = (uint8_t *)buf + x.len;
        len -= x.len;
    }
    return SPYRE_CMD_STATUS_SUCCESS;
}

/*
 * Where len bytes at va lie in the card's memory when they are one range
 * of it, else NULL.  A fault is not recorded: the caller then reads
 * through spyre_va_read, which records it.
 */
const void *spyre_va_map(SpyreExec *e, uint64_t va, uint64_t len)
{
    SpyreXlate x, page;
    uint64_t done;

    if (!len || spyre_translate_page(e, va, SPYRE_ACCESS_READ, &x) ||
        x.system) {
        return NULL;
    }
    for (done = x.len; done < len; done += page.len) {
        if (spyre_translate_page(e, va + done, SPYRE_ACCESS_READ, &page) ||
            page.system || page.addr != x.addr + done) {
            return NULL;
        }
    }
    return e->s->mem_ptr + x.addr;
}

/*
 * A command a reset aborted writes nothing more, not even through the
 * tables it translated with (which the driver may be rebuilding): each
 * piece checks first.  A piece already under way ends before DEV_STATUS
 * reads READY (the command is still running until then).
 */
uint32_t spyre_va_write(SpyreExec *e, uint64_t va, const void *buf,
                        uint64_t len)
{
    SpyreXlate x;
    uint32_t st;

    while (len) {
        if (spyre_exec_aborted(e)) {
            return SPYRE_CMD_STATUS_ABORTED;
        }
        st = spyre_translate(e, va, len, SPYRE_ACCESS_WRITE, &x);
        if (st != SPYRE_CMD_STATUS_SUCCESS) {
            return st;
        }
        if (!x.system) {
            memcpy(e->s->mem_ptr + x.addr, buf, x.len);
        } else if (pci_dma_write(PCI_DEVICE(e->s), x.addr, buf, x.len)) {
            return spyre_dma_failed(e);
        }
        va += x.len;
        buf = (const uint8_t *)buf + x.len;
        len -= x.len;
    }
    return SPYRE_CMD_STATUS_SUCCESS;
}

/*
 * Invalidation.  MMU_INVALIDATE drops every cached translation at once
 * (mmu_epoch moves), but a command may still be using one it took before:
 * a copy between two 64 KiB chunks has none, a LAUNCH keeps pointers into
 * device memory for its whole run.  Each queue says which context its
 * running command may hold translations of and since which epoch
 * (hold_ctx, hold_epoch); an invalidation of context c completes, and
 * INV_DONE(c) catches up with INV_REQUESTED(c), once no queue holds c from
 * an epoch before it.  docs/hardware.md, "MMU context c".
 */
void spyre_mmu_inv_update_locked(SpyreState *s)
{
    int c, i;

    if (s->regs.dbg_inv_stall) {
        return;     /* DBG_INV_STALL: the card never confirms */
    }
    for (c = 0; c < SPYRE_NUM_CONTEXTS; c++) {
        bool held = false;

        if (s->regs.inv_done[c] == s->regs.inv_requested[c]) {
            continue;
        }
        for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
            const SpyreQueue *q = &s->queues[i];

            held |= q->hold_ctx == c && q->hold_epoch < s->regs.inv_epoch[c];
        }
        if (!held) {
            s->regs.inv_done[c] = s->regs.inv_requested[c];
            trace_spyre_mmu_invalidated(c, s->regs.inv_done[c]);
        }
    }
}

/* MMU_INVALIDATE of context (checked by the caller). */
void spyre_mmu_invalidate_locked(SpyreState *s, uint32_t context)
{
    assert(context < SPYRE_NUM_CONTEXTS);
    qatomic_set(&s->mmu_epoch, s->mmu_epoch + 1);
    s->regs.inv_requested[context]++;
    s->regs.inv_epoch[context] = s->mmu_epoch;
    spyre_mmu_inv_update_locked(s);
}

/*
 * The command running as e holds nothing it translated before: from now
 * on it translates afresh in its context (whose root it reads again).
 */
void spyre_mmu_hold_locked(SpyreExec *e)
{
    SpyreState *s = e->s;

    e->ctx_valid = s->regs.ctx_ctrl[e->context] & SPYRE_CTX_VALID;
    e->root = s->regs.ctx_root[e->context];
    e->q->hold_ctx = e->context;
    e->q->hold_epoch = s->mmu_epoch;
    spyre_mmu_inv_update_locked(s);
}

void spyre_mmu_hold(SpyreExec *e)
{
    qemu_mutex_lock(&e->s->lock);
    spyre_mmu_hold_locked(e);
    qemu_mutex_unlock(&e->s->lock);
}

/* The queue's command ended: it holds no translation. */
void spyre_mmu_release_locked(SpyreQueue *q)
{
    q->hold_ctx = -1;
    spyre_mmu_inv_update_locked(q->s);
}
