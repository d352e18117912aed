// SPDX-License-Identifier: MIT
/*
 * The run arena (arena.h): one cached per process behind a mutex, private
 * ones when it is taken.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdlib.h>

#include "arena.h"

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct engine_arena cache = { .cached = true };
static bool cache_busy;

struct engine_arena *arena_get(void)
{
    struct engine_arena *a = NULL;

    pthread_mutex_lock(&cache_lock);
    if (!cache_busy) {
        cache_busy = true;
        a = &cache;
    }
    pthread_mutex_unlock(&cache_lock);
    return a ? a : calloc(1, sizeof(*a));
}

void arena_put(struct engine_arena *a)
{
    if (!a) {
        return;
    }
    if (a->cached) {
        pthread_mutex_lock(&cache_lock);
        cache_busy = false;
        pthread_mutex_unlock(&cache_lock);
        return;
    }
    pool_destroy(a->pool);
    free(a->block);
    free(a);
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
