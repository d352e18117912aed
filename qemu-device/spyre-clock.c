/*
 * Spyre card: the modelled clock.
 *
 * With CLOCK set to MODEL the card's timestamps (TIMESTAMP, TIME_LO/HI)
 * count the time the real card would take, not the emulator's: a LAUNCH
 * advances its queue's clock by the engine's modelled device time, a DMA
 * by its bytes over the modelled link (PCIe Gen5 x16 to and from host
 * memory, LPDDR5 inside device memory), a WAIT to when the FENCE it waited
 * for was written, and a queue that was idle starts no earlier than the
 * latest work the card finished.  Time the host spends between
 * submissions is not card time and does not count.  docs/hardware.md
 * "Clocks" gives the figures and their sources.
 *
 * Copyright 2026 The Spyre emulation project
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"

#include "spyre-dev.h"

/* Bytes per us (MB/s) of the modelled links (docs/hardware.md "Clocks"). */
#define SPYRE_MODEL_HOST_TO_DEV     35000   /* PCIe Gen5 x16, measured */
#define SPYRE_MODEL_DEV_TO_HOST     53000
#define SPYRE_MODEL_DRAM_COPY       105000  /* LPDDR5 read + write */
#define SPYRE_MODEL_DRAM_WRITE      150000  /* LPDDR5 one direction */

bool spyre_clock_modelled(const SpyreState *s)
{
    return s->regs.clock & SPYRE_CLOCK_MODEL;
}

/* A command starts: where its queue's clock stands. */
void spyre_clock_begin_locked(SpyreQueue *q, SpyreExec *e)
{
    e->model_ns = q->model_ns;
    if (q->model_idle) {
        /* Work that reaches an idle queue came after what the card finished. */
        e->model_ns = MAX(e->model_ns, q->s->model_done_ns);
        q->model_idle = false;
    }
}

/* A command ended: its queue's clock moves to its end. */
void spyre_clock_end_locked(SpyreQueue *q, const SpyreExec *e)
{
    q->model_ns = e->model_ns;
    q->s->model_done_ns = MAX(q->s->model_done_ns, e->model_ns);
}

void spyre_clock_advance(SpyreExec *e, uint64_t ns)
{
    e->model_ns += ns;
}

/* ns to move bytes at rate bytes per us; bytes <= 1 TiB, so no overflow. */
static uint64_t spyre_model_ns(uint64_t bytes, uint64_t rate)
{
    return (bytes * 1000 + rate - 1) / rate;
}

static const uint64_t spyre_model_rate[SPYRE_CLOCK_LINKS] = {
    [SPYRE_CLOCK_HOST_TO_DEV] = SPYRE_MODEL_HOST_TO_DEV,
    [SPYRE_CLOCK_DEV_TO_HOST] = SPYRE_MODEL_DEV_TO_HOST,
    [SPYRE_CLOCK_DRAM_COPY] = SPYRE_MODEL_DRAM_COPY,
    [SPYRE_CLOCK_DRAM_WRITE] = SPYRE_MODEL_DRAM_WRITE,
};

/*
 * n bytes copied from src to dst (host memory or device memory).  A copy
 * moves in pieces (pages, chunks): the bytes add up per link and become
 * time once, at spyre_clock_dma_done(), so pieces do not round.
 */
void spyre_clock_copy(SpyreExec *e, bool src_host, bool dst_host, uint64_t n)
{
    int link = src_host && !dst_host ? SPYRE_CLOCK_HOST_TO_DEV
               : !src_host && dst_host ? SPYRE_CLOCK_DEV_TO_HOST
               : src_host ? SPYRE_CLOCK_HOST_TO_DEV
               : SPYRE_CLOCK_DRAM_COPY;

    e->model_bytes[link] += n;
}

/* n bytes written by a fill. */
void spyre_clock_fill(SpyreExec *e, bool dst_host, uint64_t n)
{
    e->model_bytes[dst_host ? SPYRE_CLOCK_HOST_TO_DEV : SPYRE_CLOCK_DRAM_WRITE] += n;
}

/* A copy or fill ended: its bytes become modelled time. */
void spyre_clock_dma_done(SpyreExec *e)
{
    int i;

    for (i = 0; i < SPYRE_CLOCK_LINKS; i++) {
        if (e->model_bytes[i]) {
            e->model_ns += spyre_model_ns(e->model_bytes[i], spyre_model_rate[i]);
            e->model_bytes[i] = 0;
        }
    }
}

/* A FENCE wrote at va (in e's context): a WAIT on it ends no earlier. */
void spyre_clock_fence_locked(SpyreExec *e, uint64_t va)
{
    SpyreState *s = e->s;
    SpyreClockFence *f = NULL;
    int i;

    for (i = 0; i < SPYRE_CLOCK_FENCES; i++) {
        if (s->model_fences[i].valid && s->model_fences[i].context == e->context &&
            s->model_fences[i].va == va) {
            f = &s->model_fences[i];
            break;
        }
    }
    if (!f) {
        f = &s->model_fences[s->model_fence_next];
        s->model_fence_next = (s->model_fence_next + 1) % SPYRE_CLOCK_FENCES;
    }
    *f = (SpyreClockFence) {
        .valid = true, .context = e->context, .va = va, .ns = e->model_ns,
    };
}

/* A WAIT on va was satisfied: it ends when the FENCE it saw was written. */
void spyre_clock_waited(SpyreExec *e, uint64_t va)
{
    SpyreState *s = e->s;
    int i;

    qemu_mutex_lock(&s->lock);
    for (i = 0; i < SPYRE_CLOCK_FENCES; i++) {
        const SpyreClockFence *f = &s->model_fences[i];

        if (f->valid && f->context == e->context && f->va == va) {
            e->model_ns = MAX(e->model_ns, f->ns);
        }
    }
    qemu_mutex_unlock(&s->lock);
}

/* What TIMESTAMP writes. */
uint64_t spyre_clock_timestamp(const SpyreExec *e)
{
    return spyre_clock_modelled(e->s) ? e->model_ns
                                      : spyre_device_time_ns(e->s);
}

/* What TIME_LO/HI read: the latest modelled end, or wall time. */
uint64_t spyre_clock_now_locked(const SpyreState *s)
{
    uint64_t t = s->model_done_ns;
    int i;

    if (!spyre_clock_modelled(s)) {
        return spyre_device_time_ns(s);
    }
    for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
        t = MAX(t, s->queues[i].model_ns);
    }
    return t;
}

/* Reset: every modelled clock back to 0. */
void spyre_clock_reset_locked(SpyreState *s)
{
    int i;

    s->model_done_ns = 0;
    s->model_fence_next = 0;
    memset(s->model_fences, 0, sizeof(s->model_fences));
    for (i = 0; i < SPYRE_NUM_QUEUES; i++) {
        s->queues[i].model_ns = 0;
        s->queues[i].model_idle = true;
    }
}
