/* SPDX-License-Identifier: MIT */
/*
 * Host resources of a run, kept between runs: the cores' scratchpads, the
 * bookkeeping arrays, op scratch and the kernel thread pool.  Allocating
 * (and page-faulting) tens of megabytes and starting threads on every
 * launch cost more than many kernels take to run.  The process keeps
 * ARENA_COUNT arenas; a run takes a free one and gives it back, and when
 * all are taken (more concurrent runs than that) it waits for one, so
 * concurrent runs never create more arenas or thread pools.
 *
 * Memory from an arena is not zeroed: the scheduler clears what a program
 * can observe (docs/engine.md "Host execution").
 */
#ifndef SPYRE_ENGINE_ARENA_H
#define SPYRE_ENGINE_ARENA_H

#include <stdbool.h>
#include <stddef.h>

#include "engine.h"
#include "threads.h"

/*
 * A card's four queues launch at once without waiting; more concurrent
 * runs (several cards in one process) wait for an arena.
 */
#define ARENA_COUNT 4

struct engine_arena {
    bool busy; /* taken by a run (under the arenas' lock) */
    unsigned char *block; /* bump-allocated, 64-byte aligned pieces */
    size_t size, used;
    struct engine_pool *pool;
    unsigned pool_request; /* host_threads the pool was made for */
};

/*
 * A free arena, waiting for one while all are taken; NULL only when ab
 * (may be NULL) says the run was aborted while it waited.
 */
struct engine_arena *arena_get(const struct spyre_engine_abort *ab);
void arena_put(struct engine_arena *a);

/* Make room for `bytes` in total and forget earlier pieces; 0 or -1. */
int arena_reserve(struct engine_arena *a, size_t bytes);

/* A piece of the reservation (64-byte aligned); NULL if it does not fit. */
void *arena_alloc(struct engine_arena *a, size_t bytes);

/* Bytes arena_alloc() takes for a piece of `bytes`, for sizing reservations. */
static inline size_t arena_piece(size_t bytes)
{
    return (bytes + 63) & ~(size_t)63;
}

/* The thread pool for host_threads (0: every CPU); NULL on failure. */
struct engine_pool *arena_pool(struct engine_arena *a, unsigned host_threads);

#endif /* SPYRE_ENGINE_ARENA_H */
