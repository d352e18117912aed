/*
 * IBM Spyre AI accelerator: LAUNCH, the bridge from a command queue to the
 * dataflow engine (engine/, QEMU-free).  The kernel image, its argument
 * block and every tensor it touches are device virtual addresses in the
 * queue's context, so the engine reaches memory only through the MMU.
 * docs/engine.md describes the kernel format and the timing model.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qemu/bswap.h"
#include "qemu/log.h"
#include "qemu/units.h"
#include "trace.h"

#include "spyre-dev.h"
#include "engine/engine.h"

/*
 * Loaded kernels of one queue, by their image bytes: a graph replays the
 * same kernels over and over, and loading one (decoding and checking every
 * core's program) costs more host time than running a small one.  A hit
 * needs the whole image to match, so a kernel rewritten in place loads
 * again.  Only the queue's worker thread uses its cache.
 */
#define SPYRE_KCACHE_ENTRIES    64
#define SPYRE_KCACHE_MAX_IMAGE  (256 * KiB)
#define SPYRE_KCACHE_MAX_BYTES  (8 * MiB)

typedef struct SpyreKernelEntry {
    uint8_t *image;         /* NULL: free */
    uint32_t bytes;
    uint64_t used;          /* for least-recently-used eviction */
    struct spyre_program *prog;
} SpyreKernelEntry;

struct SpyreKernelCache {
    SpyreKernelEntry entry[SPYRE_KCACHE_ENTRIES];
    uint64_t clock;
    uint64_t bytes;         /* of the images kept */
};

static struct spyre_program *spyre_kcache_find(SpyreKernelCache *kc,
                                               const uint8_t *image,
                                               uint32_t bytes)
{
    int i;

    for (i = 0; i < SPYRE_KCACHE_ENTRIES; i++) {
        SpyreKernelEntry *k = &kc->entry[i];

        if (k->image && k->bytes == bytes && !memcmp(k->image, image, bytes)) {
            k->used = ++kc->clock;
            return k->prog;
        }
    }
    return NULL;
}

static void spyre_kcache_drop(SpyreKernelCache *kc, SpyreKernelEntry *k)
{
    kc->bytes -= k->bytes;
    spyre_program_free(k->prog);
    g_free(k->image);
    memset(k, 0, sizeof(*k));
}

/* Keep prog, loaded from image (a g_malloc'd copy); false: too large. */
static bool spyre_kcache_insert(SpyreKernelCache *kc, uint8_t *image,
                                uint32_t bytes, struct spyre_program *prog)
{
    SpyreKernelEntry *victim;
    int i;

    if (bytes > SPYRE_KCACHE_MAX_IMAGE) {
        return false;
    }
    do {
        victim = NULL;
        for (i = 0; i < SPYRE_KCACHE_ENTRIES; i++) {
            SpyreKernelEntry *k = &kc->entry[i];

            if (!k->image) {
                victim = k;
                break;
            }
            if (!victim || k->used < victim->used) {
                victim = k;
            }
        }
        if (victim->image) {
            spyre_kcache_drop(kc, victim);
        }
    } while (kc->bytes + bytes > SPYRE_KCACHE_MAX_BYTES);
    victim->image = image;
    victim->bytes = bytes;
    victim->prog = prog;
    victim->used = ++kc->clock;
    kc->bytes += bytes;
    return true;
}

void spyre_launch_cache_free(SpyreQueue *q)
{
    SpyreKernelCache *kc = q->kcache;
    int i;

    if (!kc) {
        return;
    }
    for (i = 0; i < SPYRE_KCACHE_ENTRIES; i++) {
        if (kc->entry[i].image) {
            spyre_kcache_drop(kc, &kc->entry[i]);
        }
    }
    g_free(kc);
    q->kcache = NULL;
}

/*
 * Memory callbacks: engine addresses are device virtual addresses.  0 on
 * success, -1 with the reason in status.
 */
typedef struct SpyreLaunchMem {
    SpyreExec *e;
    uint32_t status;        /* why an access failed */
} SpyreLaunchMem;

static int spyre_launch_read(void *opaque, uint64_t addr, void *buf,
                             size_t len)
{
    SpyreLaunchMem *m = opaque;

    if (spyre_exec_aborted(m->e)) {
        m->status = SPYRE_CMD_STATUS_ABORTED;
        return -1;
    }
    m->status = spyre_va_read(m->e, addr, buf, len);
    return m->status == SPYRE_CMD_STATUS_SUCCESS ? 0 : -1;
}

static int spyre_launch_write(void *opaque, uint64_t addr, const void *buf,
                              size_t len)
{
    SpyreLaunchMem *m = opaque;

    if (spyre_exec_aborted(m->e)) {
        m->status = SPYRE_CMD_STATUS_ABORTED;
        return -1;
    }
    m->status = spyre_va_write(m->e, addr, buf, len);
    return m->status == SPYRE_CMD_STATUS_SUCCESS ? 0 : -1;
}

/*
 * The card's memory is host RAM: the engine may read a kernel's inputs in
 * place (engine.h says how it keeps the bytes it took).
 */
static const void *spyre_launch_map(void *opaque, uint64_t addr, size_t len)
{
    SpyreLaunchMem *m = opaque;

    if (spyre_exec_aborted(m->e)) {
        return NULL;
    }
    return spyre_va_map(m->e, addr, len);
}

/*
 * The engine polls this between firings and inside large ones, from its
 * pool threads too: a reset stops a compute-bound kernel within about a
 * millisecond instead of at its next memory access.
 */
static bool spyre_launch_aborted(void *opaque)
{
    SpyreLaunchMem *m = opaque;

    return spyre_exec_aborted(m->e);
}

static uint32_t spyre_launch_status(int engine_status, uint32_t mem_status)
{
    switch (engine_status) {
    case SPYRE_ENGINE_OK:
        return SPYRE_CMD_STATUS_SUCCESS;
    case SPYRE_ENGINE_E_ABORTED:
        return SPYRE_CMD_STATUS_ABORTED;
    case SPYRE_ENGINE_E_MEMORY:
        return mem_status != SPYRE_CMD_STATUS_SUCCESS ?
               mem_status : SPYRE_CMD_STATUS_DMA_ERROR;
    case SPYRE_ENGINE_E_DEADLOCK:
        return SPYRE_CMD_STATUS_DEADLOCK;
    case SPYRE_ENGINE_E_ADDRESS:
    case SPYRE_ENGINE_E_ARGS:
        return SPYRE_CMD_STATUS_BAD_ARGUMENT;
    case SPYRE_ENGINE_E_NOMEM:
        return SPYRE_CMD_STATUS_DMA_ERROR;
    default:
        return SPYRE_CMD_STATUS_BAD_PROGRAM;
    }
}

static uint32_t spyre_launch_write_stats(SpyreExec *e, uint64_t va,
                                         const struct spyre_engine_stats *st)
{
    uint64_t rec[SPYRE_LAUNCH_STATS_SIZE / 8];
    int c;

    rec[SPYRE_STAT_DEVICE_CYCLES] = cpu_to_le64(st->device_cycles);
    rec[SPYRE_STAT_DEVICE_NS] = cpu_to_le64(st->device_ns);
    rec[SPYRE_STAT_DRAM_READ_BYTES] = cpu_to_le64(st->dram_read_bytes);
    rec[SPYRE_STAT_DRAM_WRITE_BYTES] = cpu_to_le64(st->dram_write_bytes);
    rec[SPYRE_STAT_RING_BYTES] = cpu_to_le64(st->ring_bytes);
    rec[SPYRE_STAT_RING_LINK_BYTES] = cpu_to_le64(st->ring_link_bytes);
    rec[SPYRE_STAT_OP_FIRINGS] = cpu_to_le64(st->op_firings);
    rec[SPYRE_STAT_MACS] = cpu_to_le64(st->macs);
    for (c = 0; c < SPYRE_NUM_CORES; c++) {
        rec[SPYRE_STAT_CORE_BUSY_CYCLES(c)] = cpu_to_le64(st->busy_cycles[c]);
    }
    return spyre_va_write(e, va, rec, sizeof(rec));
}

static void spyre_launch_account(SpyreExec *e,
                                 const struct spyre_engine_stats *st)
{
    SpyreState *s = e->s;
    int c;

    qemu_mutex_lock(&s->lock);
    if (e->generation == s->generation) {
        s->telem.launch_count++;
        s->telem.launch_ns += st->device_ns;
        s->telem.engine_dram_bytes += st->dram_read_bytes +
                                      st->dram_write_bytes;
        s->telem.engine_ring_bytes += st->ring_bytes;
        for (c = 0; c < SPYRE_NUM_CORES; c++) {
            s->telem.core_busy_cycles[c] += st->busy_cycles[c];
        }
    }
    qemu_mutex_unlock(&s->lock);
}

static uint32_t spyre_engine_field(int v)
{
    return v < 0 ? SPYRE_ENGINE_NONE : (uint32_t)v;
}

/* Why the LAUNCH failed: the queue shows it if the command stops it. */
static void spyre_launch_record_failure(SpyreExec *e,
                                        const struct spyre_engine_error *err)
{
    SpyreEngineFailure *f = &e->engine;

    f->status = err->status;
    f->core = spyre_engine_field(err->core);
    f->site = err->at;
    f->index = spyre_engine_field(err->index);
    f->wait = err->wait;
    f->stream = spyre_engine_field(err->stream);
    f->sticks_done = err->sticks_done;
    f->sticks_total = err->sticks_total;
    /* The record starts zeroed: the register window shows no stale bytes. */
    pstrcpy(f->detail, sizeof(f->detail), err->detail);
}

/*
 * The engine refused a LAUNCH, loading or running it: log it, keep the
 * engine status for ENGINE_STATUS, and return the command's status (never
 * SPYRE_CMD_STATUS_SUCCESS).  mem_status: why a memory callback failed.
 */
static uint32_t spyre_launch_failed(SpyreExec *e, int rc,
                                    const struct spyre_engine_error *err,
                                    uint32_t mem_status)
{
    assert(rc != SPYRE_ENGINE_OK);
    trace_spyre_launch(e->q->index, rc, 0);
    if (rc != SPYRE_ENGINE_E_MEMORY && rc != SPYRE_ENGINE_E_ABORTED) {
        qemu_log_mask(LOG_GUEST_ERROR, "spyre: queue %d: LAUNCH failed: "
                      "%s (core %d, index %d): %s\n", e->q->index,
                      spyre_engine_status_name(rc), err->core, err->index,
                      err->detail);
    }
    spyre_launch_record_failure(e, err);
    return spyre_launch_status(rc, mem_status);
}

/*
 * The kernel at image_va, loaded: from the queue's cache when its bytes
 * are there, else read and loaded.  Returns SPYRE_CMD_STATUS_SUCCESS with
 * *prog set, and *owned when the caller must free it (it could not be
 * kept); else the status the LAUNCH fails with, *prog unset.
 */
static uint32_t spyre_launch_get_program(SpyreExec *e, uint64_t image_va,
                                         uint32_t image_bytes,
                                         struct spyre_program **prog,
                                         bool *owned)
{
    SpyreQueue *q = e->q;
    struct spyre_engine_config cfg;
    struct spyre_engine_error err = { 0 };
    const uint8_t *in_place;
    uint8_t *image;
    uint32_t st;
    int rc;

    *owned = false;
    if (!q->kcache) {
        q->kcache = g_new0(SpyreKernelCache, 1);
    }
    /* Compare where the image lies when it is one range of device memory. */
    in_place = spyre_va_map(e, image_va, image_bytes);
    if (in_place) {
        *prog = spyre_kcache_find(q->kcache, in_place, image_bytes);
        if (*prog) {
            return SPYRE_CMD_STATUS_SUCCESS;
        }
    }
    image = g_malloc(image_bytes);
    st = spyre_va_read(e, image_va, image, image_bytes);
    if (st != SPYRE_CMD_STATUS_SUCCESS) {
        g_free(image);
        return st;
    }
    if (!in_place) {
        *prog = spyre_kcache_find(q->kcache, image, image_bytes);
        if (*prog) {
            g_free(image);
            return SPYRE_CMD_STATUS_SUCCESS;
        }
    }
    spyre_engine_config_default(&cfg);
    cfg.scratchpad_bytes = e->s->scratchpad_size;
    cfg.host_threads = e->s->engine_threads;
    rc = spyre_program_load(&cfg, image, image_bytes, prog, &err);
    if (rc != SPYRE_ENGINE_OK) {
        g_free(image);
        /* Loading touches no guest memory: no memory status to report. */
        return spyre_launch_failed(e, rc, &err, SPYRE_CMD_STATUS_SUCCESS);
    }
    if (!spyre_kcache_insert(q->kcache, image, image_bytes, *prog)) {
        g_free(image);
        *owned = true;
    }
    return SPYRE_CMD_STATUS_SUCCESS;
}

/* args: kernel image, argument block, its bytes, statistics record (or 0). */
uint32_t spyre_cmd_launch(SpyreExec *e, const uint64_t *args)
{
    uint64_t image_va = args[0], args_va = args[1], args_bytes = args[2];
    uint64_t stats_va = args[3];
    uint64_t kargs[SPYRE_LAUNCH_MAX_ARGS];
    struct spyre_engine_stats st;
    struct spyre_engine_error err = { 0 };
    struct spyre_program *prog = NULL;
    SpyreLaunchMem m = { .e = e, .status = SPYRE_CMD_STATUS_SUCCESS };
    struct spyre_engine_mem mem = {
        .opaque = &m,
        .read = spyre_launch_read,
        .write = spyre_launch_write,
        .map = spyre_launch_map,
    };
    struct spyre_engine_abort ab = {
        .aborted = spyre_launch_aborted,
        .opaque = &m,
    };
    uint8_t header[64];
    uint32_t image_bytes, st_cmd;
    unsigned i, nargs;
    bool owned;
    int rc;

    /* Bound the 64-bit byte count before dividing it into a count. */
    if (args_bytes > SPYRE_LAUNCH_MAX_ARGS * 8 || (args_bytes & 7) ||
        (stats_va & 7) || (args_bytes && !args_va)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "spyre: LAUNCH: argument block of 0x%" PRIx64
                      " bytes at 0x%" PRIx64 " (a multiple of 8, at most %u)"
                      " or statistics at 0x%" PRIx64 " (8-byte aligned)\n",
                      args_bytes, args_va, SPYRE_LAUNCH_MAX_ARGS * 8,
                      stats_va);
        return SPYRE_CMD_STATUS_BAD_ARGUMENT;
    }
    nargs = args_bytes / 8;
    st_cmd = spyre_va_read(e, image_va, header, sizeof(header));
    if (st_cmd != SPYRE_CMD_STATUS_SUCCESS) {
        return st_cmd;
    }
    image_bytes = ldl_le_p(header + 8);
    if (image_bytes < sizeof(header) || image_bytes > SPYRE_LAUNCH_MAX_IMAGE) {
        err.status = SPYRE_ENGINE_E_TRUNCATED;
        err.core = err.index = err.stream = -1;
        snprintf(err.detail, sizeof(err.detail),
                 "image of %u bytes: the header needs %zu, a LAUNCH takes at "
                 "most %u",
                 image_bytes, sizeof(header), SPYRE_LAUNCH_MAX_IMAGE);
        return spyre_launch_failed(e, err.status, &err,
                                   SPYRE_CMD_STATUS_SUCCESS);
    }
    for (i = 0; i < nargs; i++) {
        st_cmd = spyre_va_read(e, args_va + i * 8, &kargs[i], 8);
        if (st_cmd != SPYRE_CMD_STATUS_SUCCESS) {
            return st_cmd;
        }
        kargs[i] = le64_to_cpu(kargs[i]);
    }
    st_cmd = spyre_launch_get_program(e, image_va, image_bytes, &prog, &owned);
    if (st_cmd != SPYRE_CMD_STATUS_SUCCESS) {
        return st_cmd;
    }
    memset(&st, 0, sizeof(st));
    rc = spyre_program_run_abortable(prog, kargs, nargs, &mem, &ab, &st,
                                     &err);
    if (owned) {
        spyre_program_free(prog);
    }
    if (rc != SPYRE_ENGINE_OK) {
        return spyre_launch_failed(e, rc, &err, m.status);
    }
    trace_spyre_launch(e->q->index, rc, st.device_ns);
    spyre_clock_advance(e, st.device_ns);
    spyre_launch_account(e, &st);
    /* A reset since: no record (spyre_va_write checks again per page). */
    if (spyre_exec_aborted(e)) {
        return SPYRE_CMD_STATUS_ABORTED;
    }
    return stats_va ? spyre_launch_write_stats(e, stats_va, &st)
                    : SPYRE_CMD_STATUS_SUCCESS;
}
