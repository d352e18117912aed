/* SPDX-License-Identifier: MIT */
/*
 * A small fixed thread pool for op kernels.  A job is split into `parts`
 * numbered pieces that the threads take in any order, each exactly once.
 * Kernels give each part a fixed, disjoint share of the output computed in
 * a fixed order, so results do not depend on the number of threads or on
 * which thread ran which part.
 *
 * pool_run() runs a job on the workers and the caller and returns when it
 * is done.  pool_start() hands a job to the workers and returns at once, so
 * the caller can do other work (the scheduler moves other cores' sticks)
 * until pool_finish(), where it takes the parts still left and waits.
 */
#ifndef SPYRE_ENGINE_THREADS_H
#define SPYRE_ENGINE_THREADS_H

#include <stddef.h>

struct engine_pool;

typedef void (*pool_fn)(void *ctx, unsigned part, unsigned parts);

/*
 * threads: total threads including the caller; 0 = the host's CPUs. NULL on
 * failure.
 */
struct engine_pool *pool_create(unsigned threads);
void pool_destroy(struct engine_pool *pool);

/* Threads the pool runs a job on (1 for a NULL pool). */
unsigned pool_threads(const struct engine_pool *pool);

/*
 * fn(ctx, p, parts) for p in [0, parts), parts = pool_threads(); NULL pool:
 * inline.
 */
void pool_run(struct engine_pool *pool, pool_fn fn, void *ctx);

#define POOL_CTX_MAX 256 /* bytes of context pool_start() copies */

/*
 * Start fn(copy of ctx, p, parts) for p in [0, parts) on the workers and
 * return; the pool keeps its own copy of ctx (ctx_size <= POOL_CTX_MAX).  A
 * job still pending is finished first.  Without workers (or a NULL pool)
 * the job runs here, before returning.
 */
void pool_start(struct engine_pool *pool, pool_fn fn, const void *ctx,
                size_t ctx_size, unsigned parts);

/*
 * Take the started job's parts nobody took yet, then wait for the rest; no job:
 * no-op.
 */
void pool_finish(struct engine_pool *pool);

/*
 * One step of a part's short wait for another part (*spins counts them,
 * from 0): a pause, and the CPU yielded now and then, in case the other
 * part's thread is not running.
 */
void pool_pause(unsigned *spins);

#endif /* SPYRE_ENGINE_THREADS_H */
