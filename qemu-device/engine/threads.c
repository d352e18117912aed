// SPDX-License-Identifier: MIT
/*
 * The thread pool.  A job is published by storing a new ticket (job
 * number, parts, next part); every thread takes parts from it until none
 * are left, and the job is over when all its parts are done, so the
 * caller never waits for a worker that took none.  Workers that finished
 * the previous job spin for a new ticket for a while (POOL_SPIN_NS) before
 * sleeping on a condition variable, and the caller spins the same way for
 * the parts others hold.  Waking a sleeping thread
 * costs tens to hundreds of microseconds (much more in a VM, where it is an
 * inter-processor interrupt to a halted vCPU), as long as a whole matmul
 * firing's share, and an engine run hands out a job every few hundred
 * microseconds.  The spinning is bounded, so an idle pool sleeps, and
 * after POOL_YIELD_NS it yields the CPU between checks, so a loaded host's
 * other threads (the caller's own part, a QEMU vCPU) are not starved.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "threads.h"

#define POOL_MAX_THREADS SPYRE_ENGINE_MAX_HOST_THREADS
#define POOL_SPIN_NS 1000000 /* 1 ms */
#define POOL_YIELD_NS 50000  /* then give the CPU to others between checks */

struct engine_pool {
    unsigned threads; /* including the caller */
    pthread_t workers[POOL_MAX_THREADS];
    pthread_mutex_t lock; /* for the sleepers */
    pthread_cond_t start, done;
    /*
     * The job: its number, part count and next part in one word, so a
     * thread takes a part of a job with one compare-and-swap, and a late
     * thread can never take a part of a job that has ended.
     */
    atomic_ullong ticket; /* job (24 bits) | parts (20) | next part (20) */
    atomic_uint finished; /* parts of the job done */
    atomic_uint sleepers; /* threads waiting on start or done */
    atomic_bool quit;
    bool started;           /* the caller has a job not yet finished */
    unsigned long long job; /* the caller's current job number */
    pool_fn fn;             /* the job: written before its ticket */
    void *ctx;
    unsigned parts;
    _Alignas(64) unsigned char ctx_copy[POOL_CTX_MAX]; /* pool_start's ctx */
};

#define PART_BITS 20
#define PART_MASK ((1ull << PART_BITS) - 1)
#define POOL_MAX_PARTS PART_MASK
#define JOB_SHIFT (2 * PART_BITS)
#define JOB_MASK 0xffffffull

struct worker_arg {
    struct engine_pool *pool;
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spin until cond(pool, arg) holds or POOL_SPIN_NS pass; true if it holds. */
static bool spin_until(struct engine_pool *pool,
                       bool (*cond)(struct engine_pool *, unsigned long),
                       unsigned long arg)
{
    uint64_t t0 = 0;

    for (unsigned i = 1;; i++) {
        if (cond(pool, arg)) {
            return true;
        }
        cpu_relax();
        if (i % 256) {
            continue;
        }
        if (!t0) {
            t0 = now_ns();
        } else {
            uint64_t spun = now_ns() - t0;

            if (spun > POOL_SPIN_NS) {
                return false;
            }
            if (spun > POOL_YIELD_NS) {
                sched_yield();
            }
        }
    }
}

static bool new_job(struct engine_pool *pool, unsigned long seen)
{
    return atomic_load(&pool->ticket) >> JOB_SHIFT != seen ||
           atomic_load(&pool->quit);
}

static bool job_done(struct engine_pool *pool, unsigned long unused)
{
    (void)unused;
    return atomic_load(&pool->finished) == pool->parts;
}

/*
 * Sleep on cv until cond holds.  The sleeper count is raised before the
 * condition is checked under the lock, and the other side changes the
 * condition before reading the count (both sequentially consistent), so
 * either this thread sees the change or the other side sees a sleeper and
 * signals under the lock.
 */
static void sleep_until(struct engine_pool *pool, pthread_cond_t *cv,
                        bool (*cond)(struct engine_pool *, unsigned long),
                        unsigned long arg)
{
    pthread_mutex_lock(&pool->lock);
    atomic_fetch_add(&pool->sleepers, 1);
    while (!cond(pool, arg)) {
        pthread_cond_wait(cv, &pool->lock);
    }
    atomic_fetch_sub(&pool->sleepers, 1);
    pthread_mutex_unlock(&pool->lock);
}

static void wake(struct engine_pool *pool, pthread_cond_t *cv)
{
    if (!atomic_load(&pool->sleepers)) {
        return;
    }
    pthread_mutex_lock(&pool->lock);
    pthread_cond_broadcast(cv);
    pthread_mutex_unlock(&pool->lock);
}

/* A part of job `job` nobody took yet, or -1. */
static long claim(struct engine_pool *pool, unsigned long long job)
{
    unsigned long long t = atomic_load(&pool->ticket);

    for (;;) {
        if (t >> JOB_SHIFT != job ||
            (t & PART_MASK) >= ((t >> PART_BITS) & PART_MASK)) {
            return -1;
        }
        if (atomic_compare_exchange_weak(&pool->ticket, &t, t + 1)) {
            return (long)(t & PART_MASK);
        }
    }
}

/*
 * Run parts of `job` until none is left.  fn, ctx and parts cannot change
 * while this thread holds a part: the job ends only when every part is done.
 */
static void take_parts(struct engine_pool *pool, unsigned long long job)
{
    long p;

    while ((p = claim(pool, job)) >= 0) {
        unsigned parts = pool->parts;

        pool->fn(pool->ctx, (unsigned)p, parts);
        if (atomic_fetch_add(&pool->finished, 1) + 1 == parts) {
            wake(pool, &pool->done);
        }
    }
}

static void *worker_main(void *opaque)
{
    struct worker_arg *arg = opaque;
    struct engine_pool *pool = arg->pool;
    unsigned long seen = 0;

    free(arg);
    for (;;) {
        if (!spin_until(pool, new_job, seen)) {
            sleep_until(pool, &pool->start, new_job, seen);
        }
        if (atomic_load(&pool->quit)) {
            break;
        }
        seen = atomic_load(&pool->ticket) >> JOB_SHIFT;
        take_parts(pool, seen);
    }
    return NULL;
}

struct engine_pool *pool_create(unsigned threads)
{
    struct engine_pool *pool;

    if (!threads) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);

        threads = cpus > 0 ? (unsigned)cpus : 1;
    }
    if (threads > POOL_MAX_THREADS) {
        threads = POOL_MAX_THREADS;
    }
    pool = calloc(1, sizeof(*pool));
    if (!pool) {
        return NULL;
    }
    pool->threads = 1;
    atomic_init(&pool->ticket, 0);
    atomic_init(&pool->finished, 0);
    atomic_init(&pool->sleepers, 0);
    atomic_init(&pool->quit, false);
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->start, NULL);
    pthread_cond_init(&pool->done, NULL);
    for (unsigned i = 1; i < threads; i++) {
        struct worker_arg *arg = malloc(sizeof(*arg));

        if (!arg) {
            break;
        }
        arg->pool = pool;
        if (pthread_create(&pool->workers[i], NULL, worker_main, arg)) {
            free(arg);
            break;
        }
        pool->threads++;
    }
    return pool;
}

void pool_destroy(struct engine_pool *pool)
{
    if (!pool) {
        return;
    }
    pool_finish(pool);
    atomic_store(&pool->quit, true);
    wake(pool, &pool->start);
    for (unsigned i = 1; i < pool->threads; i++) {
        pthread_join(pool->workers[i], NULL);
    }
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->start);
    pthread_cond_destroy(&pool->done);
    free(pool);
}

unsigned pool_threads(const struct engine_pool *pool)
{
    return pool ? pool->threads : 1;
}

void pool_pause(unsigned *spins)
{
    cpu_relax();
    if (++*spins % 1024 == 0) {
        sched_yield();
    }
}

/* Publish a job to the workers. */
static void begin(struct engine_pool *pool, pool_fn fn, void *ctx,
                  unsigned parts)
{
    pool->fn = fn;
    pool->ctx = ctx;
    pool->parts = parts;
    atomic_store(&pool->finished, 0);
    pool->job = ((atomic_load(&pool->ticket) >> JOB_SHIFT) + 1) & JOB_MASK;
    /* Publishes the job (fn, ctx, parts written before). */
    atomic_store(&pool->ticket, pool->job << JOB_SHIFT |
                                    (unsigned long long)parts << PART_BITS);
    wake(pool, &pool->start);
    pool->started = true;
}

void pool_finish(struct engine_pool *pool)
{
    if (!pool || !pool->started) {
        return;
    }
    take_parts(pool, pool->job);
    if (!spin_until(pool, job_done, 0)) {
        sleep_until(pool, &pool->done, job_done, 0);
    }
    pool->started = false;
}

void pool_run(struct engine_pool *pool, pool_fn fn, void *ctx)
{
    if (!pool || pool->threads == 1) {
        fn(ctx, 0, 1);
        return;
    }
    pool_finish(pool);
    begin(pool, fn, ctx, pool->threads);
    pool_finish(pool);
}

void pool_start(struct engine_pool *pool, pool_fn fn, const void *ctx,
                size_t ctx_size, unsigned parts)
{
    _Alignas(64) unsigned char copy[POOL_CTX_MAX];

    if (!pool || pool->threads == 1 || parts > POOL_MAX_PARTS) {
        pool_finish(pool);
        memcpy(copy, ctx, ctx_size);
        for (unsigned p = 0; p < parts; p++) {
            fn(copy, p, parts);
        }
        return;
    }
    pool_finish(pool);
    memcpy(pool->ctx_copy, ctx, ctx_size);
    begin(pool, fn, pool->ctx_copy, parts);
}
