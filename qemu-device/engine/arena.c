// SPDX-License-Identifier: MIT
/*
 * The run arenas (arena.h): ARENA_COUNT of them behind a mutex, a run
 * waiting on a condition for one while all are taken.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "arena.h"

/* A waiting run polls its abort this often. */
#define ARENA_WAIT_POLL_NS 1000000 /* 1 ms */

static pthread_mutex_t arenas_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t arena_freed_once = PTHREAD_ONCE_INIT;
static pthread_cond_t arena_freed; /* on CLOCK_MONOTONIC */
static struct engine_arena arenas[ARENA_COUNT];

static void arena_freed_init(void)
{
    pthread_condattr_t attr;

    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&arena_freed, &attr);
    pthread_condattr_destroy(&attr);
}

static struct engine_arena *arena_take_locked(void)
{
    for (unsigned i = 0; i < ARENA_COUNT; i++) {
        if (!arenas[i].busy) {
            arenas[i].busy = true;
            return &arenas[i];
        }
    }
    return NULL;
}

struct engine_arena *arena_get(const struct spyre_engine_abort *ab)
{
    struct engine_arena *a;

    pthread_once(&arena_freed_once, arena_freed_init);
    pthread_mutex_lock(&arenas_lock);
    while (!(a = arena_take_locked())) {
        struct timespec until;

        if (ab && ab->aborted && ab->aborted(ab->opaque)) {
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += ARENA_WAIT_POLL_NS;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&arena_freed, &arenas_lock, &until);
    }
    pthread_mutex_unlock(&arenas_lock);
    return a;
}

void arena_put(struct engine_arena *a)
{
    if (!a) {
        return;
    }
    pthread_mutex_lock(&arenas_lock);
    a->busy = false;
    pthread_cond_signal(&arena_freed);
    pthread_mutex_unlock(&arenas_lock);
}

int arena_reserve(struct engine_arena *a, size_t bytes)
{
    a->used = 0;
    if (bytes <= a->size) {
        return 0;
    }
    free(a->block);
    a->size = 0;
    a->block = aligned_alloc(64, arena_piece(bytes));
    if (!a->block) {
        return -1;
    }
    a->size = arena_piece(bytes);
    return 0;
}

void *arena_alloc(struct engine_arena *a, size_t bytes)
{
    size_t piece = arena_piece(bytes);
    void *p;

    if (piece > a->size - a->used) {
        return NULL;
    }
    p = a->block + a->used;
    a->used += piece;
    return p;
}

struct engine_pool *arena_pool(struct engine_arena *a, unsigned host_threads)
{
    if (a->pool && a->pool_request == host_threads) {
        return a->pool;
    }
    pool_destroy(a->pool);
    a->pool = pool_create(host_threads);
    a->pool_request = host_threads;
    return a->pool;
}
