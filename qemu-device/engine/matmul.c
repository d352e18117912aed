// SPDX-License-Identifier: MIT
/*
 * Matmul tile: C[M x N] (+)= A[M x K] . B[K x N], fp32 accumulation in the
 * core's scratchpad.  A is sticked on K, B and C on N (docs/engine.md).  A
 * tile takes k_steps firings: the first starts the accumulator from 0, the
 * last writes C in the output type (a single-step fp32 tile whose
 * accumulator the program cannot see computes straight into C).  Each
 * accumulator element is updated by fused multiply-adds in ascending k
 * (gemm.h), whichever thread computes it: results do not depend on the
 * host.
 *
 * A firing is one pool job of parts (row panel, block of columns): each
 * runs the tile kernel over its block (B is read in place from the input
 * FIFO, shared read-only), after packing its A panel if no other part has
 * (the first to need a panel packs it, others wait for it); the last block
 * of a panel writes the panel's rows of C.  Panels come first, so threads
 * start on different panels, and blocks are few (4 parts a thread), so
 * packing is shared and the parts are small enough to balance.  When the
 * scheduler allows it (env->defer), the job is only started: the workers
 * compute while the scheduler moves other cores' sticks, and the scheduler
 * finishes it (pool_finish) before touching what it uses.  Once the run
 * is aborted (env->abort), parts still to start skip their work, so a
 * large firing ends within a part's time.
 */
#include <stdatomic.h>
#include <string.h>

#include "dtype.h"
#include "gemm.h"
#include "ops.h"

struct matmul_job {
    enum gemm_isa isa;
    const uint8_t *a, *b;
    uint8_t *out; /* C in the output type, on the last k step only */
    size_t a_row, b_row, c_row, ldc, b_elem;
    unsigned dtype, dtype_out;
    float *apack, *acc;
    uint8_t *bpack; /* B's column panels one after another, or NULL */
    bool bpairs;    /* bpack holds bf16 pairs (gemm_pack_b_pairs) */
    bool zero;      /* the first k step: start from 0 */
    uint32_t m, k, n, mr, ipanels, jpanels;
    uint32_t blocks;    /* column blocks a panel is split into */
    uint32_t bparts;    /* parts that pack B (the first ones), or 0 */
    atomic_uint *state; /* per panel: 0 not packed, 1 packing, 2 packed */
    atomic_uint *done;  /* per panel: column blocks finished */
    atomic_uint *bdone; /* B packing parts finished */
    struct run_abort *abort; /* NULL: none */
};

_Static_assert(sizeof(atomic_uint) <= sizeof(float),
               "panel state lives in float scratch");

_Static_assert(sizeof(struct matmul_job) <= POOL_CTX_MAX,
               "pool_start copies the job");

static inline uint32_t share(uint32_t total, unsigned part, unsigned parts)
{
    return (uint32_t)((uint64_t)total * part / parts);
}

static inline uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

/*
 * B packing part q: rows share(k, q) .. of B, each read in one piece,
 * copied into the column panels (GEMM_NR elements a row: sticks pad B's
 * rows, so they are there) that bpack holds one after another; for bf16
 * pairs (bpairs), pair steps share(pairs, q) .. as gemm_pack_b_pairs lays
 * them out.
 */
#define PACK_B_AHEAD 8 /* rows */

static uint32_t b_pair_steps(const struct matmul_job *j)
{
    return (j->k + 1) / 2;
}

/* Rows far apart defeat the hardware prefetcher: fetch row kk ahead. */
static void prefetch_b_row(const struct matmul_job *j, uint32_t kk)
{
    const uint8_t *src = j->b + (size_t)kk * j->b_row;

    if (kk < j->k) {
        for (size_t o = 0; o < j->jpanels * GEMM_NR * j->b_elem; o += 64) {
            __builtin_prefetch(src + o);
        }
    }
}

static void pack_b_pairs_part(const struct matmul_job *j, unsigned q)
{
    uint32_t pairs = b_pair_steps(j);

    for (uint32_t i = share(pairs, q, j->bparts);
         i < share(pairs, q + 1, j->bparts); i++) {
        prefetch_b_row(j, 2 * i + PACK_B_AHEAD);
        prefetch_b_row(j, 2 * i + 1 + PACK_B_AHEAD);
        gemm_pack_b_pairs(j->b, j->b_row, j->k, j->jpanels, i, i + 1,
                          j->bpack, (size_t)pairs * 64);
    }
}

static void pack_b_part(const struct matmul_job *j, unsigned q)
{
    size_t row = GEMM_NR * j->b_elem, panel = (size_t)j->k * row;

    if (j->bpairs) {
        pack_b_pairs_part(j, q);
        atomic_fetch_add(j->bdone, 1);
        return;
    }
    for (uint32_t kk = share(j->k, q, j->bparts);
         kk < share(j->k, q + 1, j->bparts); kk++) {
        const uint8_t *src = j->b + kk * j->b_row;
        uint8_t *dst = j->bpack + kk * row;

        prefetch_b_row(j, kk + PACK_B_AHEAD);
        if (row == 32) {
            for (uint32_t jp = 0; jp < j->jpanels; jp++) {
                memcpy(dst + jp * panel, src + jp * (size_t)32, 32);
            }
        } else {
            for (uint32_t jp = 0; jp < j->jpanels; jp++) {
                memcpy(dst + jp * panel, src + jp * row, row);
            }
        }
    }
    atomic_fetch_add(j->bdone, 1);
}

/*
 * Row panels i0 .. i1 - 1 times column panels j0 .. j1 - 1 (A packed, B
 * packed or in place): each row panel's column panels in one gemm_tiles
 * call, which computes panels of a few rows several at a time.
 */
static void run_tiles(const struct matmul_job *j, uint32_t i0, uint32_t i1,
                      uint32_t j0, uint32_t j1)
{
    size_t b_row = j->bpairs  ? 64
                   : j->bpack ? GEMM_NR * j->b_elem
                              : j->b_row;
    size_t b_panel = j->bpairs  ? (size_t)b_pair_steps(j) * 64
                     : j->bpack ? (size_t)j->k * b_row
                                : GEMM_NR * j->b_elem;
    const uint8_t *b = (j->bpack ? j->bpack : j->b) + j0 * b_panel;

    if (j1 <= j0) {
        return;
    }
    for (uint32_t ip = i0; ip < i1; ip++) {
        uint32_t row = ip * j->mr;

        gemm_tiles(j->isa, j->apack + (size_t)ip * j->k * j->mr, b, b_row,
                   b_panel, j->dtype, j->k,
                   j->acc + row * j->ldc + j0 * GEMM_NR, j->ldc,
                   min_u32(j->mr, j->m - row), j1 - j0,
                   min_u32(GEMM_NR, j->n - (j1 - 1) * GEMM_NR), j->zero,
                   j->bpairs);
    }
}

static void store_rows(const struct matmul_job *j, uint32_t r0, uint32_t r1)
{
    for (uint32_t i = r0; i < r1; i++) {
        dtype_store(j->out + i * j->c_row, j->dtype_out, j->acc + i * j->ldc,
                    j->n, j->c_row);
    }
}

/* Panel p of A, packed by the first part that needs it. */
static void need_panel(const struct matmul_job *j, uint32_t p)
{
    unsigned expect = 0, spins = 0;

    if (atomic_compare_exchange_strong(&j->state[p], &expect, 1)) {
        gemm_pack_a(j->isa, j->a, j->a_row, j->dtype, j->m, j->k, p, p + 1,
                    j->apack);
        atomic_store(&j->state[p], 2);
        return;
    }
    while (atomic_load(&j->state[p]) != 2) {
        pool_pause(&spins);
    }
}

static bool job_aborted(const struct matmul_job *j)
{
    return j->abort && run_abort_poll(j->abort);
}

/*
 * Parts below bparts pack B; then part q is row panel q % ipanels, column
 * block q / ipanels (q counted from bparts), which waits for B's packing
 * (taken first, so only its last pieces are still running).  An aborted
 * part does nothing but what others wait for: a B part still counts
 * itself done, a tile part returns before claiming its A panel.
 */
static void tile_part(void *ctx, unsigned q, unsigned parts)
{
    const struct matmul_job *j = ctx;
    uint32_t p, blk;
    unsigned spins = 0;

    (void)parts;
    if (q < j->bparts) {
        if (job_aborted(j)) {
            atomic_fetch_add(j->bdone, 1);
        } else {
            pack_b_part(j, q);
        }
        return;
    }
    if (job_aborted(j)) {
        return;
    }
    q -= j->bparts;
    p = q % j->ipanels;
    blk = q / j->ipanels;
    need_panel(j, p);
    while (atomic_load(j->bdone) != j->bparts) {
        pool_pause(&spins);
    }
    run_tiles(j, p, p + 1, share(j->jpanels, blk, j->blocks),
              share(j->jpanels, blk + 1, j->blocks));
    if (j->out && atomic_fetch_add(&j->done[p], 1) == j->blocks - 1) {
        store_rows(j, p * j->mr, min_u32(j->m, (p + 1) * j->mr));
    }
}

/*
 * Whether B is copied into column panels: when several row panels reuse
 * it and it is read in device memory (b_row given) with rows so far apart
 * that the panels' rows fall into few cache sets, or it is bf16 on the
 * AVX512-BF16 path, where packing interleaves its row pairs once instead
 * of once a row panel (pairs).
 */
static bool pack_b(size_t b_row, uint32_t ipanels, bool pairs)
{
    return ipanels > 1 && (pairs || b_row >= 1024);
}

/* Columns of B's panels, rounded up to whole panels. */
static size_t b_panel_cols(const struct op_desc *op)
{
    return ((size_t)op->row_elems + GEMM_NR - 1) / GEMM_NR * GEMM_NR;
}

/*
 * Packed A, two counters per A panel (fewer panels than rows + 1), one for
 * B, packed B (elements of at most 4 bytes, 64-byte aligned).
 */
size_t op_matmul_tmp_floats(const struct op_desc *op)
{
    return gemm_pack_floats(op->rows, op->k) + 2 * ((size_t)op->rows + 1) + 1 +
           16 + (size_t)op->k * b_panel_cols(op);
}

size_t op_matmul_bpack_bytes(const struct op_desc *op)
{
    size_t bytes = (size_t)op->k * b_panel_cols(op) * sizeof(float);

    return op->opcode == SPK_OPC_MATMUL ? (bytes + 63) & ~(size_t)63 : 0;
}

void matmul_bcache_forget(struct matmul_bcache *c, uintptr_t lo, uintptr_t hi,
                          bool all)
{
    for (unsigned i = 0; i < c->slots; i++) {
        struct matmul_bslot *s = &c->slot[i];

        if (s->b && (all || (lo < s->hi && s->lo < hi))) {
            s->b = NULL;
            s->used = 0; /* packed over first */
        }
    }
}

/*
 * Where j's B is packed: a slot of the cache that holds it already (*hit),
 * else the least recently used slot, now keyed to it.  NULL when B is not
 * in device memory (its FIFO's slots change) or there is no cache.
 */
static uint8_t *bcache_slot(struct matmul_bcache *c,
                            const struct matmul_job *j, bool *hit)
{
    struct matmul_bslot key = {
        .b = j->b,
        .b_row = j->b_row,
        .k = j->k,
        .jpanels = j->jpanels,
        .dtype = j->dtype,
        .isa = j->isa,
        .pairs = j->bpairs,
        .lo = (uintptr_t)j->b,
        .hi = (uintptr_t)j->b + (j->k - 1) * j->b_row +
              (size_t)j->jpanels * GEMM_NR * j->b_elem,
    };
    unsigned victim = 0;

    *hit = false;
    if (!c || !c->slots) {
        return NULL;
    }
    key.used = ++c->clock;
    for (unsigned i = 0; i < c->slots; i++) {
        struct matmul_bslot *s = &c->slot[i];

        if (s->b == key.b && s->b_row == key.b_row && s->k == key.k &&
            s->jpanels == key.jpanels && s->dtype == key.dtype &&
            s->isa == key.isa && s->pairs == key.pairs) {
            s->used = key.used;
            *hit = true;
            return c->mem + i * c->slot_bytes;
        }
        if (c->slot[i].used < c->slot[victim].used) {
            victim = i;
        }
    }
    c->slot[victim] = key;
    return c->mem + victim * c->slot_bytes;
}

size_t op_thread_floats(const struct op_desc *op)
{
    (void)op;
    return 0;
}

bool op_matmul_fire(const struct op_env *env, const struct op_desc *op,
                    uint32_t firing, const uint8_t *a, const uint8_t *b,
                    uint8_t *out, float *acc, float *tmp)
{
    return op_matmul_fire_rows(env, op, firing, a, 0, b, 0, out, acc, tmp);
}

/*
 * Whether A's panels are those the previous firing packed (A in device
 * memory, a_row given, the same bytes and shape): remembers this A.
 */
static bool a_panels_kept(struct matmul_memo *mm, const struct matmul_job *j,
                          size_t a_row)
{
    struct matmul_memo now = {
        .a = a_row ? j->a : NULL,
        .a_row = a_row,
        .m = j->m,
        .k = j->k,
        .dtype = j->dtype,
        .isa = j->isa,
        .lo = (uintptr_t)j->a,
        .hi = (uintptr_t)j->a + (j->m - 1) * a_row +
              sticks_for(j->k, j->dtype) * STICK_BYTES,
    };
    bool reuse;

    if (!mm) {
        return false;
    }
    reuse = now.a && mm->a == now.a && mm->a_row == a_row && mm->m == now.m &&
            mm->k == now.k && mm->dtype == now.dtype && mm->isa == now.isa;
    *mm = now;
    return reuse;
}

bool op_matmul_fire_rows(const struct op_env *env, const struct op_desc *op,
                         uint32_t firing, const uint8_t *a, size_t a_row,
                         const uint8_t *b, size_t b_row, uint8_t *out,
                         float *acc, float *tmp)
{
    uint32_t m = op->rows, k = op->k, n = op->row_elems;
    uint32_t step = firing % op->k_steps;
    bool emit = step == op->k_steps - 1, reuse = false, pairs;
    struct matmul_job job = {
        .isa = env->isa,
        .a = a,
        .b = b,
        .out = emit ? out : NULL,
        .a_row =
            a_row ? a_row : (size_t)sticks_for(k, op->dtype_in) * STICK_BYTES,
        .b_row =
            b_row ? b_row : (size_t)sticks_for(n, op->dtype_in) * STICK_BYTES,
        .c_row = (size_t)sticks_for(n, op->dtype_out) * STICK_BYTES,
        .ldc = (size_t)sticks_for(n, SPK_DT_FP32) * 32,
        .b_elem = op->dtype_in == SPK_DT_FP32 ? 4 : 2,
        .dtype = op->dtype_in,
        .dtype_out = op->dtype_out,
        .apack = tmp,
        .acc = acc,
        .zero = step == 0,
        .m = m,
        .k = k,
        .n = n,
        .jpanels = (n + GEMM_NR - 1) / GEMM_NR,
    };

    /*
     * A small firing runs on the calling thread: waking and joining the
     * workers cost more than they save (docs/engine.md "Host execution").
     */
    struct engine_pool *pool =
        (uint64_t)m * k * n < env->pool_min_macs ? NULL : env->pool;

    /* Only firings on the pool are long enough to poll inside. */
    job.abort = pool ? env->abort : NULL;

    /*
     * A single-step firing whose accumulator the program cannot see, with
     * fp32 output rows that need no padding (so they are the accumulator's
     * rows): the tiles compute straight into the output.
     */
    if (emit && op->k_steps == 1 && op->acc_private &&
        op->dtype_out == SPK_DT_FP32 &&
        n % dtype_stick_elems(SPK_DT_FP32) == 0) {
        job.acc = (float *)(void *)out;
        job.out = NULL;
    }
    job.mr = gemm_mr(job.isa);
    job.ipanels = (m + job.mr - 1) / job.mr;
    job.blocks = (4 * pool_threads(pool) + job.ipanels - 1) / job.ipanels;
    if (job.blocks > job.jpanels) {
        job.blocks = job.jpanels;
    }
    /*
     * A panel of a few rows: blocks of at least 4 column panels, which
     * gemm_tiles computes together (smaller parts halve its speed).
     */
    if (m <= GEMM_WIDE_ROWS && job.blocks > (job.jpanels + 3) / 4) {
        job.blocks = (job.jpanels + 3) / 4;
    }
    job.state = (atomic_uint *)(void *)(tmp + gemm_pack_floats(m, k));
    job.done = job.state + job.ipanels;
    reuse = a_panels_kept(env->memo, &job, a_row);
    for (uint32_t i = 0; i < job.ipanels; i++) {
        atomic_init(&job.state[i], reuse ? 2 : 0);
        atomic_init(&job.done[i], 0);
    }
    job.bdone = job.done + job.ipanels;
    atomic_init(job.bdone, 0);
    pairs = job.isa == GEMM_AVX512_BF16 && job.dtype == SPK_DT_BF16;
    if (pack_b(b_row, job.ipanels, pairs)) {
        bool hit = false;

        job.bpairs = pairs;
        job.bpack = b_row ? bcache_slot(env->bcache, &job, &hit) : NULL;
        if (!job.bpack) {
            job.bpack = (uint8_t *)(((uintptr_t)(job.bdone + 1) + 63) &
                                    ~(uintptr_t)63);
        }
        job.bparts = hit ? 0 : 2 * pool_threads(pool);
    }
    pool_start(pool, tile_part, &job, sizeof(job),
               job.bparts + job.ipanels * job.blocks);
    if (!env->defer) {
        pool_finish(env->pool);
    }
    return emit;
}
