// SPDX-License-Identifier: MIT
/*
 * The thread pool: workers sleep on a condition variable until a job's
 * generation number changes, run their part, and count down.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "threads.h"

#define POOL_MAX_THREADS	64

struct engine_pool {
	unsigned threads;		/* including the caller */
	pthread_t workers[POOL_MAX_THREADS];
	pthread_mutex_t lock;		/* protects everything below */
	pthread_cond_t start, done;
	unsigned long generation;
	unsigned pending;
	bool quit;
	pool_fn fn;
	void *ctx;
};

struct worker_arg {
	struct engine_pool *pool;
	unsigned part;
};

static void *worker_main(void *opaque)
{
	struct worker_arg *arg = opaque;
	struct engine_pool *pool = arg->pool;
	unsigned part = arg->part;
	unsigned long seen = 0;

	free(arg);
	pthread_mutex_lock(&pool->lock);
	for (;;) {
		while (!pool->quit && pool->generation == seen)
			pthread_cond_wait(&pool->start, &pool->lock);
		if (pool->quit)
			break;
		seen = pool->generation;
		pthread_mutex_unlock(&pool->lock);
		pool->fn(pool->ctx, part, pool->threads);
		pthread_mutex_lock(&pool->lock);
		if (--pool->pending == 0)
			pthread_cond_signal(&pool->done);
	}
	pthread_mutex_unlock(&pool->lock);
	return NULL;
}

struct engine_pool *pool_create(unsigned threads)
{
	struct engine_pool *pool;

	if (!threads) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		threads = cpus > 0 ? (unsigned)cpus : 1;
	}
	if (threads > POOL_MAX_THREADS)
		threads = POOL_MAX_THREADS;
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return NULL;
	pool->threads = 1;
	pthread_mutex_init(&pool->lock, NULL);
	pthread_cond_init(&pool->start, NULL);
	pthread_cond_init(&pool->done, NULL);
	/* Workers take parts 1..threads-1; the caller does part 0. */
	for (unsigned i = 1; i < threads; i++) {
		struct worker_arg *arg = malloc(sizeof(*arg));

		if (!arg)
			break;
		arg->pool = pool;
		arg->part = i;
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
	if (!pool)
		return;
	pthread_mutex_lock(&pool->lock);
	pool->quit = true;
	pthread_cond_broadcast(&pool->start);
	pthread_mutex_unlock(&pool->lock);
	for (unsigned i = 1; i < pool->threads; i++)
		pthread_join(pool->workers[i], NULL);
	pthread_mutex_destroy(&pool->lock);
	pthread_cond_destroy(&pool->start);
	pthread_cond_destroy(&pool->done);
	free(pool);
}

unsigned pool_threads(const struct engine_pool *pool)
{
	return pool ? pool->threads : 1;
}

void pool_run(struct engine_pool *pool, pool_fn fn, void *ctx)
{
	if (!pool || pool->threads == 1) {
		fn(ctx, 0, 1);
		return;
	}
	pthread_mutex_lock(&pool->lock);
	pool->fn = fn;
	pool->ctx = ctx;
	pool->pending = pool->threads - 1;
	pool->generation++;
	pthread_cond_broadcast(&pool->start);
	pthread_mutex_unlock(&pool->lock);
	fn(ctx, 0, pool->threads);
	pthread_mutex_lock(&pool->lock);
	while (pool->pending)
		pthread_cond_wait(&pool->done, &pool->lock);
	pthread_mutex_unlock(&pool->lock);
}
