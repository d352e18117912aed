/* SPDX-License-Identifier: MIT */
/*
 * A small fixed thread pool for op kernels.  pool_run() splits one job into
 * `parts` numbered pieces, runs them on the workers and the caller, and
 * returns when all are done.  Kernels give each part a fixed, disjoint
 * share of the output computed in a fixed order, so results do not depend
 * on the number of threads.
 */
#ifndef SPYRE_ENGINE_THREADS_H
#define SPYRE_ENGINE_THREADS_H

struct engine_pool;

typedef void (*pool_fn)(void *ctx, unsigned part, unsigned parts);

/* threads: total threads including the caller; 0 = the host's CPUs. NULL on failure. */
struct engine_pool *pool_create(unsigned threads);
void pool_destroy(struct engine_pool *pool);

/* Threads the pool runs a job on (1 for a NULL pool). */
unsigned pool_threads(const struct engine_pool *pool);

/* fn(ctx, p, parts) for p in [0, parts), parts = pool_threads(); NULL pool: inline. */
void pool_run(struct engine_pool *pool, pool_fn fn, void *ctx);

#endif /* SPYRE_ENGINE_THREADS_H */
