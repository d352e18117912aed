/* SPDX-License-Identifier: MIT */
/*
 * Op kernels: one firing of an op on sticks already gathered from its input
 * FIFOs into contiguous arrays.  Rows are packed into whole sticks: row r
 * of an input starts at stick r * ceil(row_elems / stick elements), and its
 * padding lanes are ignored; output padding lanes are written as 0.
 */
#ifndef SPYRE_ENGINE_OPS_H
#define SPYRE_ENGINE_OPS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gemm.h"
#include "program.h"
#include "threads.h"

#define OP_MAX_THREADS 64 /* threads.c's POOL_MAX_THREADS */

/*
 * The A panels the last matmul firing packed, which op scratch keeps until
 * another op fires: a firing of the same A in device memory (another
 * core's tile of the same rows) uses them instead of packing again.  The
 * scheduler forgets them (a = NULL) when a write meets lo .. hi, another
 * op uses the scratch, or a run starts.
 */
struct matmul_memo {
    const uint8_t *a; /* NULL: nothing kept */
    size_t a_row;
    uint32_t m, k;
    unsigned dtype, isa;
    uintptr_t lo, hi; /* the bytes of A they were packed from */
};

/*
 * B as recent matmul firings packed it (column panels, or bf16 pairs), in
 * slots the scheduler allocates beside op scratch: a firing of the same B
 * in device memory (another core's tile of the same columns) uses a slot
 * instead of packing again; the least recently used slot is packed over.
 * The scheduler forgets a slot (b = NULL) when a write meets its lo .. hi
 * (matmul_bcache_forget) or a run starts.
 */
#define MATMUL_BCACHE_SLOTS 8
#define MATMUL_BCACHE_BYTES (8u << 20) /* at most, all slots together */

struct matmul_bslot {
    const uint8_t *b; /* NULL: empty */
    size_t b_row;
    uint32_t k, jpanels;
    unsigned dtype, isa;
    bool pairs;
    uintptr_t lo, hi; /* the bytes of B it was packed from */
    uint64_t used;    /* the cache's clock when last used */
};

struct matmul_bcache {
    uint8_t *mem; /* slots * slot_bytes, 64-byte aligned */
    size_t slot_bytes;
    unsigned slots; /* 0: nothing is kept */
    uint64_t clock;
    struct matmul_bslot slot[MATMUL_BCACHE_SLOTS];
};

/*
 * A run's abort (engine.h) as the scheduler and its pool parts poll it:
 * a true answer is remembered in seen, so the scheduler stops at its next
 * firing when a pool part saw it first.
 */
struct run_abort {
    const struct spyre_engine_abort *ab; /* NULL: the run never stops */
    atomic_bool seen;
};

static inline bool run_abort_seen(struct run_abort *ra)
{
    return atomic_load_explicit(&ra->seen, memory_order_relaxed);
}

static inline bool run_abort_poll(struct run_abort *ra)
{
    if (!ra->ab) {
        return false;
    }
    if (run_abort_seen(ra)) {
        return true;
    }
    if (!ra->ab->aborted(ra->ab->opaque)) {
        return false;
    }
    atomic_store_explicit(&ra->seen, true, memory_order_relaxed);
    return true;
}

/* Host resources a firing may use. */
struct op_env {
    struct engine_pool *pool;
    uint64_t pool_min_macs; /* smaller matmul firings skip the pool */
    bool simd;
    enum gemm_isa isa; /* gemm_isa(simd), chosen once a run */
    /*
     * The firing may still be computing on the pool when op_fire returns
     * (a matmul into its output FIFO's slots): the caller must call
     * pool_finish(pool) before anything else reads or writes the firing's
     * core (its FIFOs, accumulator) or fires another op.
     */
    bool defer;
    /* op_thread_floats() each, per pool thread */
    float *thread_tmp[OP_MAX_THREADS];
    size_t thread_floats;
    struct matmul_memo *memo;     /* NULL: none */
    struct matmul_bcache *bcache; /* NULL: none */
    /*
     * The run's abort (NULL: none): the parts of a matmul firing on the
     * pool poll it and skip their work once it is set (the run's results
     * are then undefined; engine.h).
     */
    struct run_abort *abort;
};

/* Floats of host scratch one firing of op needs (the tmp of op_fire). */
size_t op_tmp_floats(const struct op_desc *op);

/* Floats of scratch each pool thread needs for one firing of op. */
size_t op_thread_floats(const struct op_desc *op);

/*
 * Run firing number `firing` of op.  in[i] holds op->in_sticks[i] sticks,
 * out room for op->out_sticks (written only when the firing emits), acc is
 * the matmul accumulator in the scratchpad.  Returns true if it wrote out.
 */
bool op_fire(const struct op_env *env, const struct op_desc *op,
             uint32_t firing, const uint8_t *const in[3], uint8_t *out,
             float *acc, float *tmp);

/* The matmul firing (matmul.c) and its packed-A scratch. */
size_t op_matmul_tmp_floats(const struct op_desc *op);
/* Bytes of one packed B of op (a matmul_bcache slot), 0 if not a matmul. */
size_t op_matmul_bpack_bytes(const struct op_desc *op);
/* Forget the packed B of every slot whose bytes meet lo .. hi (or all). */
void matmul_bcache_forget(struct matmul_bcache *c, uintptr_t lo, uintptr_t hi,
                          bool all);
bool op_matmul_fire(const struct op_env *env, const struct op_desc *op,
                    uint32_t firing, const uint8_t *a, const uint8_t *b,
                    uint8_t *out, float *acc, float *tmp);
/*
 * The same with A's rows a_row bytes apart and B's b_row (0: packed, one
 * row after another in whole sticks), for inputs read where they lie in
 * device memory.
 */
bool op_matmul_fire_rows(const struct op_env *env, const struct op_desc *op,
                         uint32_t firing, const uint8_t *a, size_t a_row,
                         const uint8_t *b, size_t b_row, uint8_t *out,
                         float *acc, float *tmp);

#endif /* SPYRE_ENGINE_OPS_H */
