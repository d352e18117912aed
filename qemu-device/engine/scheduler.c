// SPDX-License-Identifier: MIT
/*
 * The scheduler: runs a loaded program as static dataflow.  Every stream
 * end that moves sticks by itself (a DRAM or scratchpad source, a DRAM,
 * scratchpad or ring destination) and every op is an agent.  An agent can
 * fire when the sticks it needs are in its input FIFO and its output FIFO
 * has room (back-pressure); among those that can, the one that could start
 * earliest in device time fires next (ties: the lowest agent index), so the
 * run is deterministic.  When nothing can fire and work remains, the
 * program can never finish: the run stops with SPYRE_ENGINE_E_DEADLOCK.
 *
 * Every firing makes progress and the loader bounded the total work, so
 * the loop always ends.
 *
 * Host speed: an agent's readiness depends only on its own core's streams
 * and units and on the cores it shares ring streams with (and, for DRAM
 * agents, the DRAM's free time, which agentq.h handles), so after a firing
 * only those agents are re-evaluated, and agentq picks the next one in
 * O(log agents).  Runs of contiguous sticks move with one memory callback
 * or memcpy, and ops read their inputs in place when the FIFO does not
 * wrap.  Host memory comes from a cached arena (arena.h).
 *
 * A run its caller can stop (spyre_engine_abort) polls between firings
 * once they have done POLL_WORK of host work (poll_cost), so a poll costs
 * nothing measurable and a reset is seen within a millisecond or so;
 * matmul firings on the pool poll in each part as well (matmul.c).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentq.h"
#include "arena.h"
#include "ops.h"
#include "timing.h"

/* A stream's FIFO: cap sticks in the scratchpad, with per-slot times. */
struct fifo {
    uint8_t *base;
    uint32_t cap, head, count;
    uint64_t *ready; /* when the stick in a slot arrived */
    uint64_t *freed; /* when a slot was last emptied (once it was used) */
    uint64_t pushed; /* sticks ever pushed: slots are used in order */
    uint64_t last_ready, last_freed; /* keep both monotone in FIFO order */
    /*
     * Lazy FIFOs (a DRAM source feeding a matmul, with mem->map): where
     * each slot's stick lies in mapped device memory, or NULL when it is
     * in the slot; lazy_lo .. lazy_hi bounds the host range of the mapped
     * sticks still queued.  NULL src: every stick is in its slot.
     */
    const uint8_t **src;
    uintptr_t lazy_lo, lazy_hi;
};

/*
 * Where a walk through an endpoint's pattern is: stick index, loop
 * counters, byte offset (computed modulo 2^64: past the last stick it may
 * leave the pattern's range).  Streams move sticks in order, so a walk
 * goes on from the previous transfer without a division.
 */
struct pat_cursor {
    uint32_t index;
    uint32_t i[SPK_EP_DIMS];
    uint64_t off;
};

struct stream_run {
    const struct stream_desc *desc;
    struct fifo fifo;
    uint32_t entered, left;      /* sticks into and out of the FIFO */
    uint64_t src_base, dst_base; /* DRAM endpoints: argument + offset */
    uint64_t done_at;            /* when the last stick left */
    /* scratchpad patterns: where a run would go on */
    int64_t src_next, dst_next;
    struct pat_cursor src_cur, dst_cur;
    /*
     * Lazy streams: the source's whole extent mapped at once, if it could be.
     */
    const uint8_t *src_host;
    bool src_host_tried;
    /*
     * A lazy DRAM source with src_host, while every queued stick still
     * lies where its pattern puts it (in_pattern): its firings write no
     * FIFO slot, the pattern says where the sticks are, and fifo.src is
     * filled in only when something reads it (spell_out), up to stick
     * `spelled`.
     */
    bool in_pattern;
    uint32_t spelled;
    struct pat_cursor spell_cur;
    uint32_t reader; /* the agent taking sticks out of the FIFO */
};

enum agent_kind { AGENT_SRC, AGENT_DST, AGENT_OP };

struct agent {
    enum agent_kind kind;
    unsigned slot;  /* index into run->cores */
    unsigned index; /* stream or op */
    uint64_t free_at;
    uint32_t fired; /* op firings done */
    bool dram;      /* waits for the DRAM too (agentq.h) */
    bool done;
    uint32_t n; /* sticks the next firing moves (streams) */
};

struct core_run {
    const struct core_program *prog;
    uint8_t *spad;
    uint64_t pe_free, sfp_free;
    uint64_t port_free[2]; /* scratchpad ports: SPAD_READ, SPAD_WRITE */
    unsigned first_agent, num_agents;
    uint32_t linked; /* slots sharing a ring stream with this one */
    /*
     * Agents eval_after() re-evaluates for other cores' firings (link_agents).
     */
    unsigned num_senders, num_wport;
    uint16_t senders[SPK_MAX_STREAMS]; /* ring senders into this core */
    /* stream agents using the write port */
    uint16_t wport[2 * SPK_MAX_STREAMS];
    /* Last: a run clears only the program's streams (core_run_bytes). */
    struct stream_run streams[SPK_MAX_STREAMS];
};

/* What of a core_run a program with n streams uses. */
static inline size_t core_run_bytes(unsigned n)
{
    return offsetof(struct core_run, streams) + n * sizeof(struct stream_run);
}

/* FIFO slots first .. first + n - 1 (wrapping) of a core's stream. */
struct slot_range {
    uint32_t stream, first, n;
};

struct run {
    const struct spyre_program *prog;
    const struct spyre_timing_params *t;
    const struct spyre_engine_mem *mem;
    struct spyre_engine_stats *stats;
    struct spyre_engine_error *err;
    struct core_run *cores;
    struct agent *agents;
    unsigned num_agents, pending;
    struct agentq queue;
    struct engine_arena *arena;
    struct dram_model dram;
    struct ring_model ring;
    float *tmp;
    uint8_t *gather;   /* op inputs, then output, contiguous */
    struct op_env env; /* thread pool and SIMD choice for kernels */
    uint64_t end;      /* latest completion seen */
    /*
     * A firing still computing (op_env.defer): its core, the FIFO slots it
     * uses.
     */
    int busy_slot; /* -1: none */
    unsigned busy_num;
    struct slot_range busy_use[4];
    uintptr_t busy_lo, busy_hi; /* mapped device memory it reads, if any */
    struct stream_run **lazy;   /* the lazy streams */
    unsigned num_lazy;
    uintptr_t lazy_lo, lazy_hi; /* holds every lazy FIFO's range (grows only) */
    struct matmul_memo memo;    /* A panels kept in r->tmp (ops.h) */
    struct matmul_bcache bcache; /* packed B kept between firings (ops.h) */
    struct run_abort abort; /* ab NULL: the run never stops */
    uint64_t since_poll;    /* host work since abort was last polled */
};

/*
 * Host work between polls of the abort, in units of about a stick copied
 * (tens of ns): 2^16 of them are well under a millisecond of host time.
 */
#define POLL_WORK (1u << 16)
#define POLL_FIRING_COST 16 /* a firing's own cost: evaluation, picking */
#define POLL_MACS_SHIFT 6   /* 64 multiply-adds a unit */

/* Whether the caller stopped the run (engine.h: spyre_engine_abort). */
static bool run_aborted(struct run *r)
{
    return run_abort_poll(&r->abort);
}

static enum spyre_engine_status aborted_error(struct run *r)
{
    engine_set_error(r->err, SPYRE_ENGINE_E_ABORTED, -1, SPYRE_ENGINE_AT_NONE,
                     -1, "the run was stopped (device reset)");
    return SPYRE_ENGINE_E_ABORTED;
}

static inline uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static inline bool stream_done(const struct stream_run *s)
{
    return s->left == s->desc->total_sticks;
}

static inline uint32_t fifo_space(const struct fifo *f)
{
    return f->cap - f->count;
}

static inline uint8_t *fifo_at(const struct fifo *f, uint32_t i)
{
    return f->base + (size_t)((f->head + i) % f->cap) * STICK_BYTES;
}

/* When the n-th stick from the front arrived (n >= 1, n <= count). */
static inline uint64_t fifo_ready_time(const struct fifo *f, uint32_t n)
{
    return f->ready[(f->head + n - 1) % f->cap];
}

/*
 * When the n-th free slot was emptied (n >= 1, n <= space): 0 if it was
 * never used (so neither times array needs clearing at the start of a run).
 */
static inline uint64_t fifo_room_time(const struct fifo *f, uint32_t n)
{
    if (f->pushed + n - 1 < f->cap) {
        return 0;
    }
    return f->freed[(f->head + f->count + n - 1) % f->cap];
}

/* times[pos .. pos + n - 1], wrapping at cap, = t (no division per slot). */
static void fifo_set_times(uint64_t *times, uint32_t cap, uint32_t pos,
                           uint32_t n, uint64_t t)
{
    while (n) {
        uint32_t run = n < cap - pos ? n : cap - pos;

        for (uint32_t i = 0; i < run; i++) {
            times[pos + i] = t;
        }
        n -= run;
        pos = 0;
    }
}

static void fifo_push(struct fifo *f, uint32_t n, uint64_t ready)
{
    f->last_ready = max_u64(f->last_ready, ready);
    fifo_set_times(f->ready, f->cap, (f->head + f->count) % f->cap, n,
                   f->last_ready);
    f->count += n;
    f->pushed += n;
}

static void fifo_pop(struct stream_run *s, uint32_t n, uint64_t freed)
{
    struct fifo *f = &s->fifo;

    f->last_freed = max_u64(f->last_freed, freed);
    fifo_set_times(f->freed, f->cap, f->head, n, f->last_freed);
    f->head = (f->head + n) % f->cap;
    f->count -= n;
    if (f->src && !f->count) { /* nothing mapped is queued */
        f->lazy_lo = UINTPTR_MAX;
        f->lazy_hi = 0;
        s->in_pattern = s->src_host != NULL;
    }
    s->left += n;
    if (stream_done(s)) {
        s->done_at = f->last_freed;
    }
}

/*
 * Copy the mapped sticks among the n slots from the front of a lazy FIFO
 * into their slots (runs contiguous at both ends in one memcpy).  When n
 * covers every queued stick, nothing queued is mapped any more.
 */
static void fifo_materialize(struct fifo *f, uint32_t n)
{
    uint32_t i = 0;

    while (i < n) {
        uint32_t pos = (f->head + i) % f->cap, run = 1;
        const uint8_t *p = f->src[pos];

        if (!p) {
            i++;
            continue;
        }
        while (i + run < n && pos + run < f->cap &&
               f->src[pos + run] == p + (size_t)run * STICK_BYTES) {
            run++;
        }
        memcpy(f->base + (size_t)pos * STICK_BYTES, p,
               (size_t)run * STICK_BYTES);
        for (uint32_t j = 0; j < run; j++) {
            f->src[pos + j] = NULL;
        }
        i += run;
    }
    if (n == f->count) {
        f->lazy_lo = UINTPTR_MAX;
        f->lazy_hi = 0;
    }
}

static inline bool ranges_meet(uintptr_t lo, uintptr_t hi, uintptr_t lo2,
                               uintptr_t hi2)
{
    return lo < hi2 && lo2 < hi;
}

/* Sticks may enter stream s once the stream it waits for has finished. */
static bool stream_may_enter(const struct core_run *cr,
                             const struct stream_run *s, uint64_t *t)
{
    const struct stream_run *dep;

    if (s->desc->after == SPK_NONE) {
        return true;
    }
    dep = &cr->streams[s->desc->after];
    if (!stream_done(dep)) {
        return false;
    }
    *t = max_u64(*t, dep->done_at);
    return true;
}

/*
 * The receiving stream of ring sender d on the first core >= *core of its
 * destination mask (which *core becomes), or NULL past the last.
 */
static struct stream_run *next_receiver(struct run *r,
                                        const struct stream_desc *d,
                                        unsigned *core, struct core_run **rc)
{
    for (; *core < r->prog->cfg.num_cores; ++*core) {
        if (d->dst.core & (1u << *core)) {
            *rc = &r->cores[r->prog->core_slot[*core]];
            return &(*rc)->streams[d->dst.ref];
        }
    }
    return NULL;
}

/*
 * The scratchpad ports a stream agent's transfer holds (docs/engine.md
 * "Scratchpad ports"): sticks are read where they leave scratchpad storage
 * (a scratchpad source, an op's output FIFO) and written where they land
 * in it (a scratchpad destination, an op's input FIFO).  A FIFO between
 * DRAM, ring and scratchpad ends is the data mover's staging, not storage.
 */
static void stream_ports(const struct stream_desc *d, bool src_agent,
                         bool port[2])
{
    port[SPAD_READ] =
        src_agent ? d->src.kind == SPK_EP_SCRATCH : d->src.kind == SPK_EP_OP;
    port[SPAD_WRITE] =
        src_agent ? d->dst.kind == SPK_EP_OP : d->dst.kind == SPK_EP_SCRATCH;
}

/* Start no earlier than the ports a transfer needs are free. */
static uint64_t ports_ready(const struct core_run *cr, const bool port[2],
                            uint64_t t)
{
    for (int p = 0; p < 2; p++) {
        if (port[p]) {
            t = max_u64(t, cr->port_free[p]);
        }
    }
    return t;
}

/*
 * Hold the ports from t for bytes each, plus the pattern's requests on the
 * first port held.  Returns when the last is released (t if none).
 */
static uint64_t hold_ports(struct run *r, struct core_run *cr,
                           const bool port[2], uint64_t t, uint64_t bytes,
                           uint32_t runs)
{
    uint64_t end = t;

    for (int p = 0; p < 2; p++) {
        if (!port[p]) {
            continue;
        }
        cr->port_free[p] =
            max_u64(t, cr->port_free[p]) + timing_port_ticks(r->t, bytes, runs);
        end = max_u64(end, cr->port_free[p]);
        runs = 0;
    }
    return end;
}

static bool src_ready(struct run *r, struct agent *a, uint64_t *t, uint32_t *n)
{
    struct core_run *cr = &r->cores[a->slot];
    struct stream_run *s = &cr->streams[a->index];
    uint32_t left = s->desc->total_sticks - s->entered;
    bool port[2];

    if (!left || !fifo_space(&s->fifo) || !stream_may_enter(cr, s, t)) {
        return false;
    }
    *n = left < r->t->burst_sticks ? left : r->t->burst_sticks;
    if (*n > fifo_space(&s->fifo)) {
        *n = fifo_space(&s->fifo);
    }
    stream_ports(s->desc, true, port);
    *t = ports_ready(cr, port, max_u64(*t, fifo_room_time(&s->fifo, *n)));
    return true;
}

static bool dst_ready(struct run *r, struct agent *a, uint64_t *t, uint32_t *n)
{
    struct core_run *cr = &r->cores[a->slot];
    struct stream_run *s = &cr->streams[a->index];
    const struct stream_desc *d = s->desc;
    struct core_run *rc;
    struct stream_run *rs;
    bool port[2];

    *n =
        s->fifo.count < r->t->burst_sticks ? s->fifo.count : r->t->burst_sticks;
    if (!*n) {
        return false;
    }
    if (d->dst.kind == SPK_EP_RING) {
        for (unsigned c = 0; (rs = next_receiver(r, d, &c, &rc)); c++) {
            if (!fifo_space(&rs->fifo) || !stream_may_enter(rc, rs, t)) {
                return false;
            }
            if (*n > fifo_space(&rs->fifo)) {
                *n = fifo_space(&rs->fifo);
            }
        }
        for (unsigned c = 0; (rs = next_receiver(r, d, &c, &rc)); c++) {
            *t = max_u64(*t, fifo_room_time(&rs->fifo, *n));
        }
    }
    stream_ports(d, false, port);
    *t = ports_ready(cr, port, max_u64(*t, fifo_ready_time(&s->fifo, *n)));
    return true;
}

static bool op_emits(const struct op_desc *op, uint32_t firing)
{
    return op->opcode != SPK_OPC_MATMUL ||
           firing % op->k_steps == op->k_steps - 1;
}

static bool op_ready(struct run *r, struct agent *a, uint64_t *t)
{
    struct core_run *cr = &r->cores[a->slot];
    const struct op_desc *op = &cr->prog->ops[a->index];
    struct stream_run *out = &cr->streams[op->out];

    for (unsigned i = 0; i < op->num_in; i++) {
        struct fifo *f = &cr->streams[op->in[i]].fifo;

        if (f->count < op->in_sticks[i]) {
            return false;
        }
        *t = max_u64(*t, fifo_ready_time(f, op->in_sticks[i]));
    }
    if (op_emits(op, a->fired)) {
        if (fifo_space(&out->fifo) < op->out_sticks ||
            !stream_may_enter(cr, out, t)) {
            return false;
        }
        *t = max_u64(*t, fifo_room_time(&out->fifo, op->out_sticks));
    }
    *t = max_u64(*t, op->opcode == SPK_OPC_MATMUL ? cr->pe_free : cr->sfp_free);
    return true;
}

static bool agent_done(const struct run *r, const struct agent *a)
{
    const struct core_run *cr = &r->cores[a->slot];
    const struct stream_run *s = &cr->streams[a->index];

    switch (a->kind) {
    case AGENT_SRC:
        return s->entered == s->desc->total_sticks;
    case AGENT_DST:
        return stream_done(s);
    default:
        return a->fired == cr->prog->ops[a->index].firings;
    }
}

static enum spyre_engine_status mem_fail(struct run *r, struct agent *a,
                                         uint64_t addr, const char *what)
{
    engine_set_error(r->err, SPYRE_ENGINE_E_MEMORY,
                     (int)r->cores[a->slot].prog->core, SPYRE_ENGINE_AT_STREAM,
                     (int)a->index, "device memory %s failed at 0x%llx", what,
                     (unsigned long long)addr);
    return SPYRE_ENGINE_E_MEMORY;
}

/* Put c at stick `index` of ep's pattern. */
static void cursor_seek(const struct endpoint *ep, struct pat_cursor *c,
                        uint32_t index)
{
    c->index = index;
    c->off = 0;
    for (int d = 0; d < SPK_EP_DIMS; d++) {
        c->i[d] = index % ep->count[d];
        c->off += (uint64_t)c->i[d] * (uint64_t)ep->stride[d];
        index /= ep->count[d];
    }
}

/* Move c on by n sticks of its innermost row (n <= count[0] - i[0]). */
static void cursor_step(const struct endpoint *ep, struct pat_cursor *c,
                        uint32_t n)
{
    c->index += n;
    c->i[0] += n;
    c->off += (uint64_t)n * (uint64_t)ep->stride[0];
    for (int d = 0; d < SPK_EP_DIMS - 1 && c->i[d] == ep->count[d]; d++) {
        c->off -= (uint64_t)ep->count[d] * (uint64_t)ep->stride[d];
        c->i[d] = 0;
        c->i[d + 1]++;
        c->off += (uint64_t)ep->stride[d + 1];
    }
}

/*
 * One stream transfer between a pattern endpoint and a FIFO (move_sticks).
 * A lazy FIFO (f->src) takes where mapped sticks lie instead of their
 * bytes: host is the source's mapped extent (from its min_off), or NULL to
 * map each run.
 */
struct transfer {
    struct agent *a;
    struct core_run *cr;
    const struct endpoint *ep;
    uint64_t base; /* DRAM endpoints: argument + offset */
    struct fifo *f;
    bool to_fifo;  /* reads the endpoint, else writes it */
    bool coalesce; /* contiguous sticks in one memcpy or callback */
    const uint8_t *host;
    struct pat_cursor *cur;
    int64_t *next; /* where the previous run ended: a run may go on */
    uint32_t runs; /* contiguous runs of the pattern (the requests) */
};

/*
 * Step cur over the sticks one copy moves, at most max: whole innermost
 * rows of 128-byte strides, while the next stick follows.
 */
static uint32_t pattern_run(const struct endpoint *ep, struct pat_cursor *cur,
                            uint32_t max, bool coalesce)
{
    int64_t off = (int64_t)cur->off;
    uint32_t run = 0;

    do {
        uint32_t step = 1;

        if (coalesce && ep->stride[0] == STICK_BYTES) {
            step = ep->count[0] - cur->i[0];
            step = step < max - run ? step : max - run;
        }
        cursor_step(ep, cur, step);
        run += step;
    } while (coalesce && run < max &&
             (int64_t)cur->off == off + (int64_t)run * STICK_BYTES);
    return run;
}

/* Lazy FIFO f now queues sticks mapped in host memory lo .. hi. */
static void fifo_note_mapped(struct run *r, struct fifo *f, uintptr_t lo,
                             uintptr_t hi)
{
    if (lo < f->lazy_lo) {
        f->lazy_lo = lo;
    }
    if (hi > f->lazy_hi) {
        f->lazy_hi = hi;
    }
    if (f->lazy_lo < r->lazy_lo) {
        r->lazy_lo = f->lazy_lo;
    }
    if (f->lazy_hi > r->lazy_hi) {
        r->lazy_hi = f->lazy_hi;
    }
}

/* Slots pos .. pos + run - 1 of lazy FIFO f hold the sticks from p on. */
static void fifo_put_addresses(struct fifo *f, uint32_t pos, const uint8_t *p,
                               uint32_t run)
{
    /* No branch per stick. */
    for (uint32_t j = 0; j < run; j++) {
        f->src[pos + j] = p + (size_t)j * STICK_BYTES;
    }
}

/*
 * Write where the queued sticks of an in_pattern stream lie into its
 * FIFO's src (those not written yet), for what reads them one by one.
 */
static void spell_out(struct stream_run *s)
{
    const struct endpoint *ep = &s->desc->src;
    struct fifo *f = &s->fifo;
    uint32_t i, pos;

    if (!s->in_pattern) {
        return;
    }
    i = s->spelled > s->left ? s->spelled : s->left;
    pos = (f->head + (i - s->left)) % f->cap;
    if (s->spell_cur.index != i) {
        cursor_seek(ep, &s->spell_cur, i);
    }
    while (i < s->entered) {
        const uint8_t *p = s->src_host + (s->spell_cur.off - ep->min_off);
        uint32_t max =
            s->entered - i < f->cap - pos ? s->entered - i : f->cap - pos;
        uint32_t run = pattern_run(ep, &s->spell_cur, max, true);

        fifo_put_addresses(f, pos, p, run);
        i += run;
        pos = pos + run == f->cap ? 0 : pos + run;
    }
    s->spelled = s->entered;
}

/*
 * Copy the first n queued sticks of lazy stream s into their FIFO slots:
 * they no longer lie where the pattern puts them.
 */
static void stream_materialize(struct stream_run *s, uint32_t n)
{
    spell_out(s);
    if (n) {
        s->in_pattern = false;
    }
    fifo_materialize(&s->fifo, n);
}

/*
 * Sticks entering the FIFO of a source in_pattern: nothing moves; the
 * source's whole mapped extent counts as queued (a superset is safe).
 */
static void enter_in_pattern(struct run *r, struct stream_run *s)
{
    const struct endpoint *ep = &s->desc->src;
    uintptr_t lo = (uintptr_t)s->src_host;

    fifo_note_mapped(r, &s->fifo, lo,
                     lo + (uintptr_t)(ep->max_off - ep->min_off) + STICK_BYTES);
}

/*
 * Before the run writes len bytes of device memory at addr: a deferred
 * firing reading mapped memory there is finished, and queued sticks of
 * lazy FIFOs mapped there are copied into their slots, so they keep the
 * bytes they had when they entered.  Where the write lands is found by
 * mapping it; when it cannot be mapped, everything is assumed to meet it.
 */
static void before_write(struct run *r, uint64_t addr, size_t len)
{
    const uint8_t *p;
    uintptr_t lo, hi;
    bool any;

    if (!r->num_lazy) {
        return;
    }
    p = r->mem->map(r->mem->opaque, addr, len);
    any = !p;
    lo = (uintptr_t)p;
    hi = lo + len;
    if (r->busy_slot >= 0 && r->busy_lo < r->busy_hi &&
        (any || ranges_meet(lo, hi, r->busy_lo, r->busy_hi))) {
        pool_finish(r->env.pool);
        r->busy_slot = -1;
    }
    if (r->memo.a && (any || ranges_meet(lo, hi, r->memo.lo, r->memo.hi))) {
        r->memo.a = NULL;
    }
    matmul_bcache_forget(&r->bcache, lo, hi, any);
    if (!any && !ranges_meet(lo, hi, r->lazy_lo, r->lazy_hi)) {
        return;
    }
    for (unsigned i = 0; i < r->num_lazy; i++) {
        struct fifo *f = &r->lazy[i]->fifo;

        if (f->lazy_lo < f->lazy_hi &&
            (any || ranges_meet(lo, hi, f->lazy_lo, f->lazy_hi))) {
            stream_materialize(r->lazy[i], f->count);
        }
    }
}

/*
 * A lazy FIFO keeps where the run sticks from slot pos lie, p (NULL: not
 * mapped, they hold their bytes); false if they are not mapped.
 */
static bool fifo_put_mapped(struct run *r, struct fifo *f, uint32_t pos,
                            const uint8_t *p, uint32_t run)
{
    if (!p) {
        memset(&f->src[pos], 0, run * sizeof(*f->src));
        return false;
    }
    fifo_put_addresses(f, pos, p, run);
    fifo_note_mapped(r, f, (uintptr_t)p,
                     (uintptr_t)p + (size_t)run * STICK_BYTES);
    return true;
}

/*
 * Move run sticks between device memory at the pattern's offset off and
 * the FIFO slots from pos.  Returns non-zero if a memory callback refused.
 */
static int dram_move(struct run *r, struct transfer *x, int64_t off,
                     uint32_t pos, uint32_t run)
{
    uint64_t addr = x->base + (uint64_t)off;
    size_t bytes = (size_t)run * STICK_BYTES;
    uint8_t *fifo = x->f->base + (size_t)pos * STICK_BYTES;

    if (x->to_fifo && x->f->src) {
        const uint8_t *p = x->host ? x->host + (off - x->ep->min_off)
                                   : r->mem->map(r->mem->opaque, addr, bytes);

        if (fifo_put_mapped(r, x->f, pos, p, run)) {
            return 0;
        }
    }
    if (!x->to_fifo) {
        before_write(r, addr, bytes);
        return r->mem->write(r->mem->opaque, addr, fifo, bytes);
    }
    return r->mem->read(r->mem->opaque, addr, fifo, bytes);
}

/*
 * Move n sticks between x's endpoint (sticks first .. first + n - 1,
 * walked by x->cur) and the FIFO slots from `slot` on.  Sticks contiguous
 * at both ends go in one memcpy or callback; when a callback refuses a
 * run, it is retried stick by stick so the failure names the exact stick
 * (and earlier sticks are moved); if every stick goes alone, the rest of
 * the transfer follows stick by stick.
 */
static enum spyre_engine_status move_sticks(struct run *r, struct transfer *x,
                                            uint32_t slot, uint32_t first,
                                            uint32_t n)
{
    const struct endpoint *ep = x->ep;
    struct fifo *f = x->f;
    uint32_t i = 0, pos = (f->head + slot) % f->cap;

    if (x->cur->index != first) {
        cursor_seek(ep, x->cur, first);
    }
    while (i < n) {
        int64_t off = (int64_t)x->cur->off;
        uint32_t max = n - i < f->cap - pos ? n - i : f->cap - pos;
        uint32_t run = pattern_run(ep, x->cur, max, x->coalesce);
        size_t bytes = (size_t)run * STICK_BYTES;

        x->runs += off != *x->next;
        *x->next = off + (int64_t)bytes;
        if (ep->kind == SPK_EP_SCRATCH) {
            const struct core_run *cr = x->cr;
            uint8_t *fifo = f->base + (size_t)pos * STICK_BYTES;
            uint8_t *sp =
                cr->spad + cr->prog->buffers[ep->ref].offset + ep->offset + off;

            memcpy(x->to_fifo ? fifo : sp, x->to_fifo ? sp : fifo, bytes);
        } else if (dram_move(r, x, off, pos, run)) {
            if (run == 1) {
                return mem_fail(r, x->a, x->base + (uint64_t)off,
                                x->to_fifo ? "read" : "write");
            }
            /* Find the stick that fails; if none does, go on stick by stick. */
            enum spyre_engine_status st;

            x->coalesce = false;
            x->host = NULL;
            st = move_sticks(r, x, slot + i, first + i, run);
            if (st != SPYRE_ENGINE_OK) {
                return st;
            }
        }
        i += run;
        pos = pos + run == f->cap ? 0 : pos + run;
    }
    return SPYRE_ENGINE_OK;
}

/* The transfer at stream s's source end (to_fifo) or destination end. */
static struct transfer stream_transfer(struct agent *a, struct core_run *cr,
                                       struct stream_run *s, bool to_fifo)
{
    return (struct transfer){
        .a = a,
        .cr = cr,
        .ep = to_fifo ? &s->desc->src : &s->desc->dst,
        .base = to_fifo ? s->src_base : s->dst_base,
        .f = &s->fifo,
        .to_fifo = to_fifo,
        .coalesce = true,
        .host = to_fifo ? s->src_host : NULL,
        .cur = to_fifo ? &s->src_cur : &s->dst_cur,
        .next = to_fifo ? &s->src_next : &s->dst_next,
    };
}

/*
 * A lazy source maps its whole extent once, unless it is much larger than
 * the sticks it moves.
 */
static void src_map_extent(struct run *r, struct stream_run *s)
{
    const struct endpoint *ep = &s->desc->src;
    uint64_t span = (uint64_t)(ep->max_off - ep->min_off) + STICK_BYTES;

    s->src_host_tried = true;
    if (span / 16 <= (uint64_t)s->desc->total_sticks * STICK_BYTES) {
        s->src_host = r->mem->map(r->mem->opaque,
                                  s->src_base + (uint64_t)ep->min_off, span);
    }
}

static enum spyre_engine_status fire_src(struct run *r, struct agent *a,
                                         uint64_t t, uint32_t n)
{
    struct core_run *cr = &r->cores[a->slot];
    struct stream_run *s = &cr->streams[a->index];
    const struct endpoint *ep = &s->desc->src;
    uint64_t bytes = (uint64_t)n * STICK_BYTES, done, ready;
    struct transfer x;
    enum spyre_engine_status st;
    bool port[2];

    if (s->fifo.src && !s->src_host_tried) {
        src_map_extent(r, s);
        s->in_pattern = s->src_host != NULL;
    }
    x = stream_transfer(a, cr, s, true);
    if (s->in_pattern) {
        enter_in_pattern(r, s);
    } else {
        st = move_sticks(r, &x, s->fifo.count, s->entered, n);
        if (st) {
            return st;
        }
    }
    stream_ports(s->desc, true, port);
    /* Requests to the DRAM are the DRAM model's (bursts, turnaround). */
    done = ready = hold_ports(r, cr, port, t, bytes,
                              ep->kind == SPK_EP_SCRATCH ? x.runs : 0);
    if (ep->kind == SPK_EP_DRAM) {
        uint64_t arrival;

        done = dram_transfer(&r->dram, r->t, t, bytes, false, &arrival);
        ready = max_u64(ready, arrival);
        r->stats->dram_read_bytes += bytes;
    }
    s->entered += n;
    fifo_push(&s->fifo, n, ready);
    a->free_at = done;
    r->end = max_u64(r->end, ready);
    return SPYRE_ENGINE_OK;
}

/*
 * Copy n sticks from the front of FIFO `from` into the free slots of `to`.
 * A stick of a lazy `from` still in device memory goes to a lazy `to` as
 * where it lies (a ring multicast of weights then copies nothing), else
 * its bytes are copied from there.
 */
static void fifo_transfer(const struct fifo *from, struct fifo *to, uint32_t n)
{
    uint32_t i = 0;

    while (i < n) {
        uint32_t ps = (from->head + i) % from->cap;
        uint32_t pd = (to->head + to->count + i) % to->cap;
        uint32_t run = n - i;
        uint8_t *dst = to->base + (size_t)pd * STICK_BYTES;

        if (run > from->cap - ps) {
            run = from->cap - ps;
        }
        if (run > to->cap - pd) {
            run = to->cap - pd;
        }
        if (!from->src) {
            memcpy(dst, from->base + (size_t)ps * STICK_BYTES,
                   (size_t)run * STICK_BYTES);
            if (to->src) {
                memset(&to->src[pd], 0, run * sizeof(*to->src));
            }
        } else if (to->src) {
            /* Where the sticks lie, then the bytes of those in from's slots. */
            memcpy(&to->src[pd], &from->src[ps], run * sizeof(*to->src));
            for (uint32_t j = 0; j < run; j++) {
                if (!from->src[ps + j]) {
                    memcpy(dst + (size_t)j * STICK_BYTES,
                           from->base + (size_t)(ps + j) * STICK_BYTES,
                           STICK_BYTES);
                }
            }
        } else {
            for (uint32_t j = 0; j < run; j++) {
                const uint8_t *p = from->src[ps + j];

                memcpy(dst + (size_t)j * STICK_BYTES,
                       p ? p : from->base + (size_t)(ps + j) * STICK_BYTES,
                       STICK_BYTES);
            }
        }
        i += run;
    }
    /* What to now maps lies in what from maps (a superset is safe). */
    if (from->src && to->src && from->lazy_lo < from->lazy_hi) {
        if (from->lazy_lo < to->lazy_lo) {
            to->lazy_lo = from->lazy_lo;
        }
        if (from->lazy_hi > to->lazy_hi) {
            to->lazy_hi = from->lazy_hi;
        }
    }
}

/*
 * Send n sticks over the ring.  A receiver whose stream feeds an op writes
 * them into its scratchpad as they arrive, through its write port.
 */
static void fire_ring(struct run *r, struct agent *a, uint64_t t, uint32_t n,
                      uint64_t *done)
{
    struct core_run *cr = &r->cores[a->slot], *rc;
    struct stream_run *rs;
    const struct stream_desc *d = cr->streams[a->index].desc;
    uint64_t arrival[SPYRE_ENGINE_MAX_CORES];
    uint64_t bytes = (uint64_t)n * STICK_BYTES;
    uint64_t port_ticks = timing_port_ticks(r->t, bytes, 0);
    bool port[2];

    spell_out(&cr->streams[a->index]);
    stream_ports(d, false, port);
    *done =
        max_u64(hold_ports(r, cr, port, t, bytes, 0),
                ring_transfer(&r->ring, r->t, cr->prog->core, d->dst.core, t,
                              bytes, arrival, &r->stats->ring_link_bytes));
    r->stats->ring_bytes += bytes;
    for (unsigned c = 0; (rs = next_receiver(r, d, &c, &rc)); c++) {
        uint64_t at = arrival[c];

        if (rs->desc->dst.kind == SPK_EP_OP) {
            uint64_t *w = &rc->port_free[SPAD_WRITE];

            *w =
                max_u64(at > port_ticks ? at - port_ticks : 0, *w) + port_ticks;
            at = *w;
        }
        fifo_transfer(&cr->streams[a->index].fifo, &rs->fifo, n);
        rs->entered += n;
        fifo_push(&rs->fifo, n, at);
        r->end = max_u64(r->end, at);
    }
}

static enum spyre_engine_status fire_dst(struct run *r, struct agent *a,
                                         uint64_t t, uint32_t n)
{
    struct core_run *cr = &r->cores[a->slot];
    struct stream_run *s = &cr->streams[a->index];
    const struct endpoint *ep = &s->desc->dst;
    uint64_t bytes = (uint64_t)n * STICK_BYTES, done, unused;

    if (ep->kind == SPK_EP_RING) {
        fire_ring(r, a, t, n, &done);
    } else {
        struct transfer x = stream_transfer(a, cr, s, false);
        bool port[2];
        enum spyre_engine_status st;

        st = move_sticks(r, &x, 0, s->left, n);
        if (st) {
            return st;
        }
        stream_ports(s->desc, false, port);
        done = hold_ports(r, cr, port, t, bytes,
                          ep->kind == SPK_EP_SCRATCH ? x.runs : 0);
        if (ep->kind == SPK_EP_DRAM) {
            done = max_u64(
                done, dram_transfer(&r->dram, r->t, t, bytes, true, &unused));
            r->stats->dram_write_bytes += bytes;
        }
    }
    fifo_pop(s, n, done);
    a->free_at = done;
    r->end = max_u64(r->end, done);
    return SPYRE_ENGINE_OK;
}

/*
 * The first n sticks of a FIFO as one array: in place when they do not
 * wrap, else copied to *spare (which then moves past them).
 */
static const uint8_t *fifo_front(const struct fifo *f, uint32_t n,
                                 uint8_t **spare)
{
    uint8_t *dst = *spare;
    uint32_t first = f->cap - f->head < n ? f->cap - f->head : n;

    if (first == n) {
        return fifo_at(f, 0);
    }
    memcpy(dst, fifo_at(f, 0), (size_t)first * STICK_BYTES);
    memcpy(dst + (size_t)first * STICK_BYTES, f->base,
           (size_t)(n - first) * STICK_BYTES);
    *spare += (size_t)n * STICK_BYTES;
    return dst;
}

/*
 * Whether the first n sticks of lazy FIFO f are all mapped, as rows of
 * row_sticks contiguous sticks at a constant positive distance: then a
 * matmul reads them where they lie, from *p with rows *row bytes apart.
 */
static bool fifo_rows(const struct fifo *f, uint32_t n, uint32_t row_sticks,
                      const uint8_t **p, size_t *row)
{
    const uint8_t *const *src = f->src;
    uintptr_t p0 = (uintptr_t)src[f->head], stride = 0;
    uint32_t rows = n / row_sticks, pos = f->head;

    if (!p0) {
        return false;
    }
    if (rows > 1) {
        uintptr_t p1 = (uintptr_t)src[(f->head + row_sticks) % f->cap];

        if (p1 <= p0) {
            return false;
        }
        stride = p1 - p0;
    }
    for (uint32_t i = 0; i < rows; i++) {
        uintptr_t want = p0 + i * stride, differ = 0;

        /*
         * A row that does not wrap is compared without a branch or a wrap
         * test per stick; one that wraps, stick by stick.
         */
        if (pos + row_sticks <= f->cap) {
            for (uint32_t j = 0; j < row_sticks; j++) {
                differ |= (uintptr_t)src[pos + j] ^ (want + j * STICK_BYTES);
            }
            pos = pos + row_sticks == f->cap ? 0 : pos + row_sticks;
        } else {
            for (uint32_t j = 0; j < row_sticks; j++, want += STICK_BYTES) {
                differ |= (uintptr_t)src[pos] ^ want;
                pos = pos + 1 == f->cap ? 0 : pos + 1;
            }
        }
        if (differ) {
            return false;
        }
    }
    *p = src[f->head];
    *row = stride;
    return true;
}

/*
 * fifo_rows for a stream in_pattern, from its pattern: the first n queued
 * sticks are whole innermost rows of row_sticks contiguous sticks, within
 * one run of the next dimension at a positive stride.  Other shapes spell
 * the FIFO out and ask fifo_rows.
 */
static bool pattern_rows(struct stream_run *s, uint32_t n, uint32_t row_sticks,
                         const uint8_t **p, size_t *row)
{
    const struct endpoint *ep = &s->desc->src;
    uint32_t rows = n / row_sticks;
    struct pat_cursor c;

    cursor_seek(ep, &c, s->left);
    if (ep->stride[0] != STICK_BYTES || ep->count[0] != row_sticks ||
        c.i[0] != 0 ||
        (rows > 1 && (ep->count[1] - c.i[1] < rows || ep->stride[1] <= 0))) {
        spell_out(s);
        return fifo_rows(&s->fifo, n, row_sticks, p, row);
    }
    *p = s->src_host + (c.off - ep->min_off);
    *row = rows > 1 ? (size_t)ep->stride[1] : 0;
    return true;
}

/* Where a firing's inputs are (in place, gathered or in device memory). */
struct op_inputs {
    const uint8_t *p[3];
    size_t row[3];  /* matmul inputs read in device memory: */
    bool mapped[3]; /* rows this far apart */
};

/*
 * Whether lazy input i of a matmul is read where it lies in device memory
 * (fifo_rows); r->busy_lo .. busy_hi then covers it.
 */
static bool input_in_place(struct run *r, const struct op_desc *op, unsigned i,
                           struct stream_run *s, struct op_inputs *in)
{
    /* A's rows are K elements, B's N (only matmuls have lazy inputs). */
    uint32_t rs = sticks_for(i ? op->row_elems : op->k, op->dtype_in);
    uintptr_t lo, hi;

    if (s->in_pattern
            ? !pattern_rows(s, op->in_sticks[i], rs, &in->p[i], &in->row[i])
            : !fifo_rows(&s->fifo, op->in_sticks[i], rs, &in->p[i],
                         &in->row[i])) {
        return false;
    }
    lo = (uintptr_t)in->p[i];
    hi = lo + (op->in_sticks[i] / rs - 1) * in->row[i] +
         (size_t)rs * STICK_BYTES;
    r->busy_lo = lo < r->busy_lo ? lo : r->busy_lo;
    r->busy_hi = hi > r->busy_hi ? hi : r->busy_hi;
    in->mapped[i] = true;
    return true;
}

/*
 * Each input of a firing as one array: in device memory, in place in its
 * FIFO, or copied to r->gather.  Returns the room left after the copies.
 */
static uint8_t *gather_inputs(struct run *r, struct core_run *cr,
                              const struct op_desc *op, struct op_inputs *in)
{
    uint8_t *spare = r->gather;

    r->busy_lo = UINTPTR_MAX;
    r->busy_hi = 0;
    for (unsigned i = 0; i < op->num_in; i++) {
        struct stream_run *s = &cr->streams[op->in[i]];
        struct fifo *f = &s->fifo;

        if (f->src) {
            if (input_in_place(r, op, i, s, in)) {
                continue;
            }
            stream_materialize(s, op->in_sticks[i]);
        }
        in->p[i] = fifo_front(f, op->in_sticks[i], &spare);
    }
    return spare;
}

/*
 * A matmul writing straight into its output FIFO may finish later
 * (run_loop): note the FIFO slots it uses, not those of inputs read in
 * device memory.
 */
static void defer_firing(struct run *r, const struct agent *a,
                         const struct core_run *cr, const struct op_desc *op,
                         const struct op_inputs *in, uint32_t out_pos,
                         bool direct)
{
    r->env.defer = direct && op->opcode == SPK_OPC_MATMUL;
    if (!r->env.defer) {
        return;
    }
    r->busy_slot = (int)a->slot;
    r->busy_num = 0;
    for (unsigned i = 0; i < op->num_in; i++) {
        if (!in->mapped[i]) {
            r->busy_use[r->busy_num++] = (struct slot_range){
                op->in[i], cr->streams[op->in[i]].fifo.head, op->in_sticks[i]
            };
        }
    }
    if (op_emits(op, a->fired)) {
        r->busy_use[r->busy_num++] =
            (struct slot_range){ op->out, out_pos, op->out_sticks };
    }
}

/* Run the op's kernel; true if this firing emits its output. */
static bool compute_firing(struct run *r, const struct agent *a,
                           const struct core_run *cr, const struct op_desc *op,
                           const struct op_inputs *in, uint8_t *out_buf)
{
    float *acc;

    if (op->opcode != SPK_OPC_MATMUL) {
        r->memo.a = NULL; /* its scratch is r->tmp too */
        return op_fire(&r->env, op, a->fired, in->p, out_buf, NULL, r->tmp);
    }
    acc =
        (float *)(void *)(cr->spad + cr->prog->buffers[op->acc_buffer].offset);
    return op_matmul_fire_rows(&r->env, op, a->fired, in->p[0], in->row[0],
                               in->p[1], in->row[1], out_buf, acc, r->tmp);
}

/*
 * The output, if emitted, enters its FIFO at out_pos (copied there, in two
 * parts, unless it was written in place); the inputs leave theirs.
 */
static void retire_firing(struct core_run *cr, const struct op_desc *op,
                          const uint8_t *out_buf, uint32_t out_pos, bool direct,
                          uint64_t end)
{
    struct stream_run *out = &cr->streams[op->out];
    struct fifo *of = &out->fifo;

    if (out_buf) {
        if (!direct) {
            uint32_t first = of->cap - out_pos;

            memcpy(of->base + (size_t)out_pos * STICK_BYTES, out_buf,
                   (size_t)first * STICK_BYTES);
            memcpy(of->base, out_buf + (size_t)first * STICK_BYTES,
                   (size_t)(op->out_sticks - first) * STICK_BYTES);
        }
        out->entered += op->out_sticks;
        fifo_push(of, op->out_sticks, end);
    }
    for (unsigned i = 0; i < op->num_in; i++) {
        fifo_pop(&cr->streams[op->in[i]], op->in_sticks[i], end);
    }
}

/* The firing holds its unit from t to end: agent, unit and stats. */
static void account_firing(struct run *r, struct agent *a, struct core_run *cr,
                           const struct op_desc *op, uint64_t t, uint64_t end,
                           bool on_pe)
{
    unsigned core = cr->prog->core;

    a->fired++;
    a->free_at = end;
    *(on_pe ? &cr->pe_free : &cr->sfp_free) = end;
    if (op->opcode == SPK_OPC_MATMUL) {
        r->stats->macs += (uint64_t)op->rows * op->k * op->row_elems;
    }
    r->stats->op_firings++;
    r->stats->busy_cycles[core] += (end - t) / TICKS_PER_CYCLE;
    if (on_pe) {
        r->stats->pe_busy_cycles[core] += (end - t) / TICKS_PER_CYCLE;
    }
    r->end = max_u64(r->end, end);
}

static void fire_op(struct run *r, struct agent *a, uint64_t t)
{
    struct core_run *cr = &r->cores[a->slot];
    const struct op_desc *op = &cr->prog->ops[a->index];
    struct fifo *of = &cr->streams[op->out].fifo;
    uint32_t out_pos = (of->head + of->count) % of->cap;
    /* Output straight into the FIFO's free slots when they do not wrap. */
    bool direct = out_pos + op->out_sticks <= of->cap;
    struct op_inputs in = { 0 };
    uint8_t *spare, *out_buf;
    bool on_pe, emitted;
    uint64_t end = t + timing_op_ticks(r->t, op, &on_pe);

    spare = gather_inputs(r, cr, op, &in);
    out_buf = direct ? of->base + (size_t)out_pos * STICK_BYTES : spare;
    defer_firing(r, a, cr, op, &in, out_pos, direct);
    emitted = compute_firing(r, a, cr, op, &in, out_buf);
    retire_firing(cr, op, emitted ? out_buf : NULL, out_pos, direct, end);
    account_firing(r, a, cr, op, t, end, on_pe);
}

/* The wait of a stuck op: an input short of sticks, else a full output. */
static void op_wait(const struct core_run *cr, const struct agent *a,
                    struct spyre_engine_error *err)
{
    const struct op_desc *op = &cr->prog->ops[a->index];

    const struct stream_run *out = &cr->streams[op->out];

    for (unsigned i = 0; i < op->num_in; i++) {
        if (cr->streams[op->in[i]].fifo.count < op->in_sticks[i]) {
            err->wait = SPYRE_ENGINE_WAIT_FIFO_EMPTY;
            err->stream = op->in[i];
            return;
        }
    }
    if (out->desc->after != SPK_NONE &&
        !stream_done(&cr->streams[out->desc->after])) {
        err->wait = SPYRE_ENGINE_WAIT_AFTER;
        err->stream = out->desc->after;
        return;
    }
    err->wait = SPYRE_ENGINE_WAIT_FIFO_FULL;
    err->stream = op->out;
}

/* The wait of a stuck stream end (a source cannot push, a sink cannot pull). */
static void stream_wait(struct run *r, const struct agent *a,
                        struct spyre_engine_error *err)
{
    struct core_run *cr = &r->cores[a->slot];
    const struct stream_run *s = &cr->streams[a->index];
    struct core_run *rc;
    struct stream_run *rs;

    err->stream = (int)a->index;
    if (a->kind == AGENT_SRC) {
        if (s->desc->after != SPK_NONE &&
            !stream_done(&cr->streams[s->desc->after])) {
            err->wait = SPYRE_ENGINE_WAIT_AFTER;
            err->stream = s->desc->after;
        } else {
            err->wait = SPYRE_ENGINE_WAIT_FIFO_FULL;
        }
        return;
    }
    err->wait = SPYRE_ENGINE_WAIT_FIFO_EMPTY;
    if (s->fifo.count && s->desc->dst.kind == SPK_EP_RING) {
        for (unsigned c = 0; (rs = next_receiver(r, s->desc, &c, &rc)); c++) {
            if (!fifo_space(&rs->fifo)) {
                err->wait = SPYRE_ENGINE_WAIT_RING_FULL;
            }
        }
    }
}

static const char *const wait_text[] = {
    [SPYRE_ENGINE_WAIT_NONE] = "",
    [SPYRE_ENGINE_WAIT_FIFO_EMPTY] = "FIFO empty",
    [SPYRE_ENGINE_WAIT_FIFO_FULL] = "FIFO full",
    [SPYRE_ENGINE_WAIT_AFTER] = "ordered after it",
    [SPYRE_ENGINE_WAIT_RING_FULL] = "the receiving core's FIFO is full",
};

/* What unfinished agent a waits for, into err (status and site too). */
static void agent_wait(struct run *r, const struct agent *a,
                       struct spyre_engine_error *err)
{
    struct core_run *cr = &r->cores[a->slot];

    engine_set_error(err, SPYRE_ENGINE_E_DEADLOCK, (int)cr->prog->core,
                     a->kind == AGENT_OP ? SPYRE_ENGINE_AT_OP
                                         : SPYRE_ENGINE_AT_STREAM,
                     (int)a->index, "%s", "");
    if (a->kind == AGENT_OP) {
        op_wait(cr, a, err);
    } else {
        stream_wait(r, a, err);
    }
}

/*
 * How close a wait is to a deadlock's cause: a stream ordered after another
 * is the usual one; an empty FIFO is starved by something upstream, a full
 * one is back-pressure from downstream.
 */
static int wait_rank(enum spyre_engine_wait wait)
{
    return wait == SPYRE_ENGINE_WAIT_AFTER       ? 3
           : wait == SPYRE_ENGINE_WAIT_FIFO_FULL ? 1
                                                 : 2;
}

/*
 * Nothing can fire: report the unfinished agent whose wait is closest to
 * the cause (the first of those), what it waits on, and how far that
 * stream got.
 */
static enum spyre_engine_status report_deadlock(struct run *r)
{
    struct spyre_engine_error *err = r->err;
    struct spyre_engine_error local;
    struct agent *first = NULL;
    const struct stream_run *s;
    struct core_run *cr;
    int best = 0;

    err = err ? err : &local;
    for (unsigned i = 0; i < r->num_agents; i++) {
        if (r->agents[i].done) {
            continue;
        }
        agent_wait(r, &r->agents[i], err);
        if (wait_rank(err->wait) > best) {
            best = wait_rank(err->wait);
            first = &r->agents[i];
        }
    }
    agent_wait(r, first, err);
    cr = &r->cores[first->slot];
    s = &cr->streams[err->stream];
    err->sticks_done = s->entered;
    err->sticks_total = s->desc->total_sticks;
    snprintf(err->detail, sizeof(err->detail),
             "%s %u%s waits on stream %d (%s), %u of %u sticks delivered; "
             "%u agents unfinished",
             first->kind == AGENT_OP ? "op" : "stream", first->index,
             first->kind == AGENT_SRC   ? "'s source"
             : first->kind == AGENT_DST ? "'s destination"
                                        : "",
             err->stream, wait_text[err->wait], err->sticks_done,
             err->sticks_total, r->pending);
    return SPYRE_ENGINE_E_DEADLOCK;
}

/* Re-evaluate agent i: done, or when it could fire next (without the DRAM). */
static void agent_eval(struct run *r, unsigned i)
{
    struct agent *a = &r->agents[i];
    uint64_t t = a->free_at;
    bool ready;

    if (a->done) {
        return;
    }
    if (agent_done(r, a)) {
        a->done = true;
        r->pending--;
        agentq_set(&r->queue, a->dram, i, AGENTQ_NEVER);
        return;
    }
    ready = a->kind == AGENT_SRC   ? src_ready(r, a, &t, &a->n)
            : a->kind == AGENT_DST ? dst_ready(r, a, &t, &a->n)
                                   : op_ready(r, a, &t);
    agentq_set(&r->queue, a->dram, i, ready ? t : AGENTQ_NEVER);
}

/*
 * Which agents other cores' firings can change (eval_after): the ring
 * senders into each core, the agent that takes sticks out of each FIFO,
 * and the stream agents that wait for a core's scratchpad write port.
 */
static void link_agents(struct run *r)
{
    for (unsigned i = 0; i < r->num_agents; i++) {
        const struct agent *a = &r->agents[i];
        struct core_run *cr = &r->cores[a->slot], *rc;
        const struct op_desc *op;
        struct stream_run *s, *rs;
        bool port[2];

        if (a->kind == AGENT_OP) {
            op = &cr->prog->ops[a->index];
            for (unsigned j = 0; j < op->num_in; j++) {
                cr->streams[op->in[j]].reader = i;
            }
            continue;
        }
        s = &cr->streams[a->index];
        stream_ports(s->desc, a->kind == AGENT_SRC, port);
        if (port[SPAD_WRITE]) {
            cr->wport[cr->num_wport++] = (uint16_t)i;
        }
        if (a->kind != AGENT_DST) {
            continue;
        }
        s->reader = i;
        /* One sender a receiving stream, never on its own core (loader.c). */
        for (unsigned c = 0; s->desc->dst.kind == SPK_EP_RING &&
                             (rs = next_receiver(r, s->desc, &c, &rc));
             c++) {
            rc->senders[rc->num_senders++] = (uint16_t)i;
        }
    }
}

/*
 * After agent a fired, the agents whose readiness (agent_eval) may have
 * changed: every agent of a's core; the ring senders into that core (they
 * wait for room in its FIFOs); and when a sent over the ring, on each
 * receiving core the agent taking sticks out of the receiving FIFO and,
 * if the sticks went through that core's scratchpad write port, the
 * stream agents using that port that could fire.  Nothing else they read
 * changed.
 */
static void eval_after(struct run *r, const struct agent *a)
{
    const struct core_run *cr = &r->cores[a->slot];
    const struct stream_desc *d;
    const struct stream_run *rs;
    struct core_run *rc;

    for (unsigned i = cr->first_agent; i < cr->first_agent + cr->num_agents;
         i++) {
        agent_eval(r, i);
    }
    for (unsigned k = 0; k < cr->num_senders; k++) {
        agent_eval(r, cr->senders[k]);
    }
    if (a->kind != AGENT_DST) {
        return;
    }
    d = cr->streams[a->index].desc;
    if (d->dst.kind != SPK_EP_RING) {
        return;
    }
    /* The loader made each receiver a stream of another core. */
    for (unsigned c = 0; (rs = next_receiver(r, d, &c, &rc)); c++) {
        agent_eval(r, rs->reader);
        /*
         * The write port only delays an agent that can fire: one that
         * cannot (or is done) stays so, as nothing else it reads changed.
         */
        if (rs->desc->dst.kind == SPK_EP_OP) {
            for (unsigned k = 0; k < rc->num_wport; k++) {
                const struct agent *w = &r->agents[rc->wport[k]];

                if (agentq_time(&r->queue, w->dram, rc->wport[k]) !=
                    AGENTQ_NEVER) {
                    agent_eval(r, rc->wport[k]);
                }
            }
        }
    }
}

/* Whether two runs of slots of a FIFO of cap slots share a slot. */
static bool slots_meet(uint32_t a, uint32_t an, uint32_t b, uint32_t bn,
                       uint32_t cap)
{
    return (b + cap - a) % cap < an || (a + cap - b) % cap < bn;
}

/*
 * Whether agent a may touch what the deferred firing on core slot s uses:
 * any op (they share host scratch), any agent of a ring partner, an agent
 * of s with a scratchpad endpoint, or one whose next burst reaches FIFO
 * slots the firing reads or writes.  Other agents of s move sticks of
 * other streams, or of other slots of the same FIFOs, and need not wait.
 */
static bool agent_touches(const struct run *r, const struct agent *a,
                          unsigned s)
{
    const struct stream_run *st;
    uint32_t first;

    if (a->kind == AGENT_OP || (r->cores[s].linked & (1u << a->slot))) {
        return true;
    }
    if (a->slot != s) {
        return false;
    }
    st = &r->cores[s].streams[a->index];
    if (st->desc->src.kind == SPK_EP_SCRATCH ||
        st->desc->dst.kind == SPK_EP_SCRATCH) {
        return true;
    }
    first = a->kind == AGENT_SRC
                ? (st->fifo.head + st->fifo.count) % st->fifo.cap
                : st->fifo.head;
    for (unsigned i = 0; i < r->busy_num; i++) {
        if (r->busy_use[i].stream == a->index &&
            slots_meet(first, a->n, r->busy_use[i].first, r->busy_use[i].n,
                       st->fifo.cap)) {
            return true;
        }
    }
    return false;
}

/* Host work of agent a's next firing, in POLL_WORK units. */
static uint64_t poll_cost(const struct run *r, const struct agent *a)
{
    const struct op_desc *op;
    uint64_t cost = POLL_FIRING_COST;

    if (a->kind != AGENT_OP) {
        return cost + a->n;
    }
    op = &r->cores[a->slot].prog->ops[a->index];
    cost += op->in_sticks[0] + op->in_sticks[1] + op->in_sticks[2] +
            op->out_sticks;
    if (op->opcode == SPK_OPC_MATMUL) {
        cost += ((uint64_t)op->rows * op->k * op->row_elems) >> POLL_MACS_SHIFT;
    }
    return cost;
}

/* Whether to poll the abort before agent a fires: POLL_WORK done since. */
static bool poll_due(struct run *r, const struct agent *a)
{
    if (!r->abort.ab) {
        return false;
    }
    r->since_poll += poll_cost(r, a);
    if (r->since_poll < POLL_WORK) {
        return false;
    }
    r->since_poll = 0;
    return true;
}

static enum spyre_engine_status run_loop(struct run *r)
{
    link_agents(r);
    for (unsigned i = 0; i < r->num_agents; i++) {
        agent_eval(r, i);
    }
    for (;;) {
        struct agent *best;
        uint32_t idx;
        uint64_t t;
        enum spyre_engine_status st = SPYRE_ENGINE_OK;

        if (!r->pending) {
            return SPYRE_ENGINE_OK;
        }
        if (!agentq_pick(&r->queue, r->dram.free_at, &idx, &t)) {
            return report_deadlock(r);
        }
        best = &r->agents[idx];
        /* A pool part may have seen it first (one relaxed load). */
        if (run_abort_seen(&r->abort) ||
            (poll_due(r, best) && run_aborted(r))) {
            return aborted_error(r);
        }
        if (r->busy_slot >= 0 &&
            agent_touches(r, best, (unsigned)r->busy_slot)) {
            pool_finish(r->env.pool);
            r->busy_slot = -1;
        }
        if (best->kind == AGENT_SRC) {
            st = fire_src(r, best, t, best->n);
        } else if (best->kind == AGENT_DST) {
            st = fire_dst(r, best, t, best->n);
        } else {
            fire_op(r, best, t);
        }
        if (st) {
            return st;
        }
        eval_after(r, best);
    }
}

/* Resolve DRAM endpoints against the arguments: aligned, inside 2^48. */
static enum spyre_engine_status bind_endpoint(
    struct run *r, const struct core_program *cp, unsigned idx,
    const struct endpoint *ep, const uint64_t *args, uint64_t *base)
{
    const uint64_t limit = 1ull << 48;

    if (ep->kind != SPK_EP_DRAM) {
        return SPYRE_ENGINE_OK;
    }
    if (__builtin_add_overflow(args[ep->ref], ep->offset, base) ||
        *base % STICK_BYTES || *base >= limit ||
        0 - (uint64_t)ep->min_off > *base ||
        (uint64_t)ep->max_off + STICK_BYTES > limit - *base) {
        engine_set_error(
            r->err, SPYRE_ENGINE_E_ADDRESS, (int)cp->core,
            SPYRE_ENGINE_AT_STREAM, (int)idx,
            "argument %u + 0x%llx: pattern misaligned or outside 2^48", ep->ref,
            (unsigned long long)ep->offset);
        return SPYRE_ENGINE_E_ADDRESS;
    }
    return SPYRE_ENGINE_OK;
}

/* Whether stream i of a core feeds a matmul. */
static bool feeds_matmul(const struct core_program *cp, unsigned i)
{
    for (unsigned o = 0; o < cp->num_ops; o++) {
        for (unsigned j = 0; j < cp->ops[o].num_in; j++) {
            if (cp->ops[o].in[j] == i) {
                return cp->ops[o].opcode == SPK_OPC_MATMUL;
            }
        }
    }
    return false;
}

/*
 * Whether stream i of a core is lazy (with a map callback), so a matmul
 * can read the sticks where they lie: from DRAM into a matmul; from DRAM
 * to the ring when every receiving stream feeds a matmul; and such a
 * receiving stream (fifo_transfer passes where the sticks lie along).
 */
static bool stream_lazy(const struct run *r, const struct core_program *cp,
                        unsigned i)
{
    const struct spyre_program *prog = r->prog;
    const struct stream_desc *d = &cp->streams[i];

    if (!r->mem->map) {
        return false;
    }
    /* the loader checked */
    if (d->src.kind == SPK_EP_RING && d->dst.kind == SPK_EP_OP) {
        return stream_lazy(r, &prog->cores[prog->core_slot[d->src.core]],
                           d->src.ref);
    }
    if (d->src.kind != SPK_EP_DRAM) {
        return false;
    }
    if (d->dst.kind == SPK_EP_OP) {
        return feeds_matmul(cp, i);
    }
    if (d->dst.kind != SPK_EP_RING) {
        return false;
    }
    for (unsigned c = 0; c < prog->cfg.num_cores; c++) {
        const struct core_program *rc;

        if (!(d->dst.core & (1u << c))) {
            continue;
        }
        rc = &prog->cores[prog->core_slot[c]];
        if (rc->streams[d->dst.ref].dst.kind != SPK_EP_OP ||
            !feeds_matmul(rc, d->dst.ref)) {
            return false;
        }
    }
    return true;
}

/* Scratchpad a core's run needs: its reservation plus what it declares. */
static size_t core_spad_bytes(const struct spyre_program *prog,
                              const struct core_program *cp)
{
    return (size_t)prog->cfg.reserved_bytes + cp->spad_declared;
}

static void add_agent(struct run *r, enum agent_kind kind, unsigned slot,
                      unsigned index, bool dram)
{
    r->agents[r->num_agents++] = (struct agent){
        .kind = kind, .slot = slot, .index = index, .dram = dram
    };
    r->cores[slot].num_agents++;
    r->pending++;
}

static enum spyre_engine_status setup_core(struct run *r, unsigned slot,
                                           const uint64_t *args)
{
    const struct core_program *cp = &r->prog->cores[slot];
    struct core_run *cr = &r->cores[slot];
    enum spyre_engine_status st;

    cr->prog = cp;
    cr->spad = arena_alloc(r->arena, core_spad_bytes(r->prog, cp));
    cr->first_agent = r->num_agents;
    for (unsigned i = 0; i < cp->num_streams; i++) {
        struct stream_run *s = &cr->streams[i];
        const struct endpoint *src, *dst;

        s->desc = &cp->streams[i];
        src = &s->desc->src;
        dst = &s->desc->dst;
        s->fifo.base = cr->spad + cp->buffers[s->desc->fifo_buffer].offset;
        s->fifo.cap = s->desc->fifo_sticks;
        s->fifo.ready = arena_alloc(r->arena, s->fifo.cap * sizeof(uint64_t));
        s->fifo.freed = arena_alloc(r->arena, s->fifo.cap * sizeof(uint64_t));
        s->src_next = s->dst_next = INT64_MIN;
        if (stream_lazy(r, cp, i)) {
            s->fifo.src =
                arena_alloc(r->arena, s->fifo.cap * sizeof(*s->fifo.src));
            s->fifo.lazy_lo = UINTPTR_MAX;
            s->fifo.lazy_hi = 0;
            r->lazy[r->num_lazy++] = s;
        }
        /* What the program can see of the scratchpad starts as zeros. */
        if (src->kind == SPK_EP_SCRATCH) {
            memset(cr->spad + cp->buffers[src->ref].offset, 0,
                   cp->buffers[src->ref].bytes);
        }
        if (dst->kind == SPK_EP_SCRATCH) {
            memset(cr->spad + cp->buffers[dst->ref].offset, 0,
                   cp->buffers[dst->ref].bytes);
        }
        /* Ring partners re-evaluate each other after a firing. */
        if (src->kind == SPK_EP_RING && r->prog->core_slot[src->core] >= 0) {
            cr->linked |= 1u << r->prog->core_slot[src->core];
        }
        for (unsigned c = 0;
             dst->kind == SPK_EP_RING && c < SPYRE_ENGINE_MAX_CORES; c++) {
            if ((dst->core & (1u << c)) && r->prog->core_slot[c] >= 0) {
                cr->linked |= 1u << r->prog->core_slot[c];
                r->cores[r->prog->core_slot[c]].linked |= 1u << slot;
            }
        }
        st = bind_endpoint(r, cp, i, src, args, &s->src_base);
        if (!st) {
            st = bind_endpoint(r, cp, i, dst, args, &s->dst_base);
        }
        if (st) {
            return st;
        }
        if (src->kind == SPK_EP_DRAM || src->kind == SPK_EP_SCRATCH) {
            add_agent(r, AGENT_SRC, slot, i, src->kind == SPK_EP_DRAM);
        }
        if (dst->kind != SPK_EP_OP) {
            add_agent(r, AGENT_DST, slot, i, dst->kind == SPK_EP_DRAM);
        }
    }
    for (unsigned i = 0; i < cp->num_ops; i++) {
        add_agent(r, AGENT_OP, slot, i, false);
    }
    return SPYRE_ENGINE_OK;
}

/*
 * Host scratch for the largest op firing, each thread's share, and the
 * largest packed B (a slot of r->bcache).
 */
static void op_scratch_sizes(const struct spyre_program *prog,
                             size_t *tmp_floats, size_t *gather_bytes,
                             size_t *thread_floats, size_t *bpack_bytes)
{
    *tmp_floats = 64;
    *gather_bytes = STICK_BYTES;
    *thread_floats = 0;
    *bpack_bytes = 0;
    for (unsigned c = 0; c < prog->num_cores; c++) {
        const struct core_program *cp = &prog->cores[c];

        for (unsigned i = 0; i < cp->num_ops; i++) {
            const struct op_desc *op = &cp->ops[i];
            size_t sticks = op->out_sticks;

            for (unsigned j = 0; j < op->num_in; j++) {
                sticks += op->in_sticks[j];
            }
            if (sticks * STICK_BYTES > *gather_bytes) {
                *gather_bytes = sticks * STICK_BYTES;
            }
            if (op_tmp_floats(op) > *tmp_floats) {
                *tmp_floats = op_tmp_floats(op);
            }
            if (op_thread_floats(op) > *thread_floats) {
                *thread_floats = op_thread_floats(op);
            }
            if (op_matmul_bpack_bytes(op) > *bpack_bytes) {
                *bpack_bytes = op_matmul_bpack_bytes(op);
            }
        }
    }
}

/* Every piece of host memory the run takes, from the arena. */
static enum spyre_engine_status alloc_run(struct run *r)
{
    const struct spyre_program *prog = r->prog;
    size_t agents = 0, streams = 0, lazy = 0;
    size_t tmp_floats, gather_bytes, thread_floats, bpack_bytes, total, threads;

    r->arena = arena_get(r->abort.ab);
    if (!r->arena) {
        return aborted_error(r);
    }
    r->env.simd = !prog->cfg.host_portable;
    r->env.isa = gemm_isa(r->env.simd);
    r->env.pool_min_macs = prog->cfg.pool_min_macs;
    r->env.pool = arena_pool(r->arena, prog->cfg.host_threads);
    if (!r->env.pool) {
        return SPYRE_ENGINE_E_NOMEM;
    }
    threads = pool_threads(r->env.pool);
    for (unsigned c = 0; c < prog->num_cores; c++) {
        const struct core_program *cp = &prog->cores[c];

        agents += cp->num_ops;
        for (unsigned i = 0; i < cp->num_streams; i++) {
            agents += (cp->streams[i].src.kind == SPK_EP_DRAM ||
                       cp->streams[i].src.kind == SPK_EP_SCRATCH) +
                      (cp->streams[i].dst.kind != SPK_EP_OP);
        }
    }
    op_scratch_sizes(prog, &tmp_floats, &gather_bytes, &thread_floats,
                     &bpack_bytes);
    total = arena_piece(prog->num_cores * sizeof(*r->cores)) +
            arena_piece(agents * sizeof(*r->agents)) +
            arena_piece(tmp_floats * sizeof(float)) +
            arena_piece(gather_bytes) +
            threads * arena_piece(thread_floats * sizeof(float) + 64) +
            arena_piece(agentq_bytes((uint32_t)agents));
    for (unsigned c = 0; c < prog->num_cores; c++) {
        const struct core_program *cp = &prog->cores[c];

        total += arena_piece(core_spad_bytes(prog, cp));
        streams += cp->num_streams;
        for (unsigned i = 0; i < cp->num_streams; i++) {
            total +=
                2 * arena_piece(cp->streams[i].fifo_sticks * sizeof(uint64_t));
            if (stream_lazy(r, cp, i)) {
                total += arena_piece(cp->streams[i].fifo_sticks *
                                     sizeof(const uint8_t *));
                lazy++;
            }
        }
    }
    total += arena_piece(streams * sizeof(*r->lazy));
    /* Only B read in device memory (from a lazy FIFO) is kept. */
    if (lazy && bpack_bytes) {
        r->bcache.slot_bytes = bpack_bytes;
        r->bcache.slots = MATMUL_BCACHE_BYTES / bpack_bytes;
        if (r->bcache.slots > MATMUL_BCACHE_SLOTS) {
            r->bcache.slots = MATMUL_BCACHE_SLOTS;
        }
        total += arena_piece(r->bcache.slots * bpack_bytes);
    }
    if (arena_reserve(r->arena, total)) {
        return SPYRE_ENGINE_E_NOMEM;
    }
    r->cores = arena_alloc(r->arena, prog->num_cores * sizeof(*r->cores));
    for (unsigned c = 0; c < prog->num_cores; c++) {
        memset(&r->cores[c], 0, core_run_bytes(prog->cores[c].num_streams));
    }
    r->agents = arena_alloc(r->arena, agents * sizeof(*r->agents));
    r->lazy = arena_alloc(r->arena, streams * sizeof(*r->lazy));
    r->tmp = arena_alloc(r->arena, tmp_floats * sizeof(float));
    r->gather = arena_alloc(r->arena, gather_bytes);
    r->bcache.mem =
        arena_alloc(r->arena, r->bcache.slots * r->bcache.slot_bytes);
    r->env.thread_floats = thread_floats;
    for (size_t i = 0; i < threads && i < OP_MAX_THREADS; i++) {
        r->env.thread_tmp[i] =
            arena_alloc(r->arena, thread_floats * sizeof(float) + 64);
    }
    agentq_init(&r->queue, (uint32_t)agents,
                arena_alloc(r->arena, agentq_bytes((uint32_t)agents)));
    return SPYRE_ENGINE_OK;
}

static void finish_stats(struct run *r)
{
    struct spyre_engine_stats *st = r->stats;

    st->device_cycles = (r->end + TICKS_PER_CYCLE - 1) / TICKS_PER_CYCLE;
    st->device_ns =
        (uint64_t)((double)st->device_cycles / r->t->clock_ghz + 0.5);
}

enum spyre_engine_status spyre_program_run_abortable(
    struct spyre_program *prog, const uint64_t *args, unsigned nargs,
    const struct spyre_engine_mem *mem, const struct spyre_engine_abort *ab,
    struct spyre_engine_stats *stats, struct spyre_engine_error *err)
{
    struct spyre_engine_stats local;
    struct run r = { 0 };
    enum spyre_engine_status st = SPYRE_ENGINE_OK;

    engine_set_error(err, SPYRE_ENGINE_OK, -1, SPYRE_ENGINE_AT_NONE, -1, "%s",
                     "");
    if (!prog || !mem || !mem->read || !mem->write || (nargs && !args)) {
        engine_set_error(err, SPYRE_ENGINE_E_INVALID, -1, SPYRE_ENGINE_AT_NONE,
                         -1, "NULL argument");
        return SPYRE_ENGINE_E_INVALID;
    }
    if (nargs != prog->num_args) {
        engine_set_error(err, SPYRE_ENGINE_E_ARGS, -1, SPYRE_ENGINE_AT_NONE, -1,
                         "%u arguments, the program takes %u", nargs,
                         prog->num_args);
        return SPYRE_ENGINE_E_ARGS;
    }
    r.stats = stats ? stats : &local;
    memset(r.stats, 0, sizeof(*r.stats));
    r.prog = prog;
    r.t = &prog->cfg.timing;
    r.mem = mem;
    r.err = err;
    r.dram.last_dir = -1;
    r.ring.num_cores = prog->cfg.num_cores;
    r.busy_slot = -1;
    r.lazy_lo = UINTPTR_MAX;
    r.env.memo = &r.memo;
    r.env.bcache = &r.bcache;
    r.abort.ab = ab && ab->aborted ? ab : NULL;
    atomic_init(&r.abort.seen, false);
    r.env.abort = r.abort.ab ? &r.abort : NULL;
    st = alloc_run(&r);
    /* Set-up clears scratchpads (megabytes a core): a poll between cores. */
    for (unsigned c = 0; !st && c < prog->num_cores; c++) {
        st = run_aborted(&r) ? aborted_error(&r) : setup_core(&r, c, args);
    }
    if (st == SPYRE_ENGINE_E_NOMEM) {
        engine_set_error(err, st, -1, SPYRE_ENGINE_AT_NONE, -1,
                         "host memory for the run");
    }
    if (!st) {
        st = run_loop(&r);
    }
    pool_finish(r.env.pool); /* a deferred firing still reads the arena */
    finish_stats(&r);
    arena_put(r.arena);
    return st;
}

enum spyre_engine_status spyre_program_run(struct spyre_program *prog,
                                           const uint64_t *args, unsigned nargs,
                                           const struct spyre_engine_mem *mem,
                                           struct spyre_engine_stats *stats,
                                           struct spyre_engine_error *err)
{
    return spyre_program_run_abortable(prog, args, nargs, mem, NULL, stats,
                                       err);
}
