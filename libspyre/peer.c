// SPDX-License-Identifier: MIT
/*
 * Peer copies: device memory of one open (a card) to device memory of
 * another, with no CPU copy of the data.  A link per (source, destination)
 * pair of opens holds two pinned host buffers, the slots, made by the
 * source open and imported into the destination open (PRIME, docs/uapi.md):
 * both cards' DMA engines reach them.  Chunk i (a slot's size) goes through
 * slot i % 2: the source card copies into it (a job on the link's own
 * stream of the source open), then the destination card copies out of it
 * (a job on the caller's stream).  Fences cross between the two files as sync files: a destination
 * job waits for the source job that filled its slot, a source job for the
 * destination job that last emptied it.  So while one card works on one
 * slot the other works on the other.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xf86drm.h>

#include "device.h"
#include "error.h"
#include "peer.h"
#include "stream.h"

#define PEER_SLOTS	2

struct peer_slot {
	struct spyre_gem src_gem;	/* a pinned host buffer of the source open */
	struct spyre_gem dst_gem;	/* the same memory, imported by the destination */
	uint32_t src_free;		/* source syncobj: the job that last emptied it */
	uint32_t dst_full;		/* destination syncobj: the job that last filled it */
};

struct peer_link {
	struct peer_link *next;
	spyre_device *src, *dst;
	pthread_mutex_t lock;		/* one copy at a time queues its jobs */
	spyre_stream *stream;		/* on the source open: the source side's jobs */
	uint32_t src_sig, dst_sig;	/* a job's fence, on its way to the other file */
	struct peer_slot slot[PEER_SLOTS];
	uint64_t slot_bytes;		/* each slot's size now (0: not made yet) */
	unsigned int next_slot;
};

static pthread_mutex_t links_lock = PTHREAD_MUTEX_INITIALIZER;
static struct peer_link *links;

static void syncobj_destroy(spyre_device *dev, uint32_t *h)
{
	if (*h)
		drmSyncobjDestroy(dev->fd, *h);
	*h = 0;
}

static spyre_status syncobj_new(spyre_device *dev, int signalled, uint32_t *h)
{
	if (drmSyncobjCreate(dev->fd, signalled ? DRM_SYNCOBJ_CREATE_SIGNALED : 0, h))
		return spyre_set_error(spyre_status_from_errno(errno), "%s: syncobj: %s",
				       dev->props.devnode, strerror(errno));
	return SPYRE_SUCCESS;
}

/* Wait for the link's work, then release all it holds in both opens. */
static void link_free(struct peer_link *l)
{
	spyre_stream_private_free(l->stream);
	for (int i = 0; i < PEER_SLOTS; i++) {
		struct peer_slot *sl = &l->slot[i];

		spyre_gem_destroy(l->dst, &sl->dst_gem);	/* waits for its jobs */
		spyre_gem_destroy(l->src, &sl->src_gem);
		syncobj_destroy(l->src, &sl->src_free);
		syncobj_destroy(l->dst, &sl->dst_full);
	}
	syncobj_destroy(l->src, &l->src_sig);
	syncobj_destroy(l->dst, &l->dst_sig);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

static spyre_status slot_new(struct peer_link *l, struct peer_slot *sl)
{
	spyre_status st = syncobj_new(l->src, 1, &sl->src_free);

	if (st == SPYRE_SUCCESS)
		st = syncobj_new(l->dst, 1, &sl->dst_full);
	return st;
}

/* Slots of at least half of @bytes (within the bounds), made or grown once
 * their jobs have finished (destroying a buffer waits for them). */
static spyre_status link_fit(struct peer_link *l, uint64_t bytes)
{
	uint64_t want = SPYRE_PEER_SLOT_MIN;
	spyre_status st = SPYRE_SUCCESS;

	while (want < (bytes + 1) / 2 && want < SPYRE_PEER_SLOT_MAX)
		want <<= 1;
	if (want <= l->slot_bytes)
		return SPYRE_SUCCESS;
	for (int i = 0; i < PEER_SLOTS && st == SPYRE_SUCCESS; i++) {
		struct peer_slot *sl = &l->slot[i];

		spyre_gem_destroy(l->dst, &sl->dst_gem);
		spyre_gem_destroy(l->src, &sl->src_gem);
		st = spyre_gem_create(l->src, want, 0, &sl->src_gem);
		if (st == SPYRE_SUCCESS)
			st = spyre_gem_share(l->src, &sl->src_gem, l->dst, &sl->dst_gem);
	}
	/* Half made: made again, whole, by the next copy. */
	l->slot_bytes = st == SPYRE_SUCCESS ? want : 0;
	return st;
}

static spyre_status link_new(spyre_device *src, spyre_device *dst, struct peer_link **out)
{
	struct peer_link *l = calloc(1, sizeof(*l));
	spyre_status st;

	if (!l)
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a peer link");
	l->src = src;
	l->dst = dst;
	pthread_mutex_init(&l->lock, NULL);
	st = spyre_stream_private_new(src, &l->stream);
	for (int i = 0; i < PEER_SLOTS && st == SPYRE_SUCCESS; i++)
		st = slot_new(l, &l->slot[i]);
	if (st == SPYRE_SUCCESS)
		st = syncobj_new(src, 0, &l->src_sig);
	if (st == SPYRE_SUCCESS)
		st = syncobj_new(dst, 0, &l->dst_sig);
	if (st != SPYRE_SUCCESS) {
		link_free(l);
		return st;
	}
	*out = l;
	return SPYRE_SUCCESS;
}

/* A device closes (its streams have finished): drop every link it is in. */
static void peer_close_hook(spyre_device *dev)
{
	struct peer_link **pp, *l, *dead = NULL;

	pthread_mutex_lock(&links_lock);
	for (pp = &links; (l = *pp);) {
		if (l->src == dev || l->dst == dev) {
			*pp = l->next;
			l->next = dead;
			dead = l;
		} else {
			pp = &l->next;
		}
	}
	pthread_mutex_unlock(&links_lock);
	while ((l = dead)) {
		dead = l->next;
		link_free(l);
	}
}

/* The link from @src to @dst, made on first use. */
static spyre_status link_get(spyre_device *src, spyre_device *dst, struct peer_link **out)
{
	spyre_status st = SPYRE_SUCCESS;
	struct peer_link *l;

	pthread_mutex_lock(&links_lock);
	for (l = links; l && !(l->src == src && l->dst == dst); l = l->next)
		;
	if (!l) {
		st = spyre_device_on_close(src, peer_close_hook);
		if (st == SPYRE_SUCCESS)
			st = spyre_device_on_close(dst, peer_close_hook);
		if (st == SPYRE_SUCCESS)
			st = link_new(src, dst, &l);
		if (st == SPYRE_SUCCESS) {
			l->next = links;
			links = l;
		}
	}
	pthread_mutex_unlock(&links_lock);
	*out = l;
	return st;
}

/* One DMA job on @s: @n bytes from @from to @to, listing @bo1 and @bo2. */
static spyre_status queue_dma(spyre_stream *s, uint64_t from, uint64_t to, uint64_t n,
			      uint32_t bo1, uint32_t bo2, uint32_t in, uint32_t sig,
			      uint64_t *point)
{
	struct spyre_node node = {
		.kind = NODE_COPY, .a0 = from, .a1 = to, .a2 = n, .bytes = n, .name = "peer",
	};
	struct spyre_submission sub;

	spyre_submission_init(&sub);
	spyre_bo_list_add_reserved(&sub.bos, bo1);
	spyre_bo_list_add_reserved(&sub.bos, bo2);
	sub.nodes = &node;
	sub.nnodes = 1;
	sub.in_syncobj = in;
	sub.signal_syncobj = sig;
	return spyre_stream_queue(s, &sub, point);
}

/* The source card fills @sl with @n bytes at @src_va (the source buffer @src). */
static spyre_status fill_slot(struct peer_link *l, struct peer_slot *sl, const struct spyre_gem *src,
			      uint64_t src_va, uint64_t n)
{
	spyre_stream *s = l->stream;
	spyre_status st;

	pthread_mutex_lock(&s->lock);
	st = spyre_stream_enter(s, 0);
	if (st == SPYRE_SUCCESS)
		st = queue_dma(s, src_va, sl->src_gem.va, n, src->handle, sl->src_gem.handle,
			       sl->src_free, l->src_sig, NULL);
	pthread_mutex_unlock(&s->lock);
	if (st == SPYRE_SUCCESS)
		st = spyre_driver_fence_move(l->src, l->src_sig, l->dst, sl->dst_full);
	return st;
}

/* The destination card empties @sl into @dst_va, on @s (locked). */
static spyre_status empty_slot(struct peer_link *l, struct peer_slot *sl, spyre_stream *s,
			       const struct spyre_gem *dst, uint64_t dst_va, uint64_t n,
			       uint64_t *point)
{
	spyre_status st = queue_dma(s, sl->dst_gem.va, dst_va, n, dst->handle, sl->dst_gem.handle,
				    sl->dst_full, l->dst_sig, point);

	if (st != SPYRE_SUCCESS)
		return st;
	st = spyre_driver_fence_move(l->dst, l->dst_sig, l->src, sl->src_free);
	if (st != SPYRE_SUCCESS)
		/* The slot's next filler cannot wait for this job: let it end first. */
		drmSyncobjWait(l->dst->fd, &l->dst_sig, 1, INT64_MAX, 0, NULL);
	return st;
}

spyre_status spyre_peer_copy(spyre_stream *s, const struct spyre_gem *dst, uint64_t dst_va,
			     spyre_device *src_dev, const struct spyre_gem *src, uint64_t src_va,
			     uint64_t bytes, uint64_t *point)
{
	struct peer_link *l;
	spyre_status st;

	*point = 0;
	st = link_get(src_dev, s->obj.dev, &l);
	if (st != SPYRE_SUCCESS)
		return st;
	pthread_mutex_lock(&l->lock);
	st = link_fit(l, bytes);
	pthread_mutex_lock(&s->lock);
	if (st == SPYRE_SUCCESS)
		st = spyre_stream_enter(s, 0);
	for (uint64_t done = 0; st == SPYRE_SUCCESS && done < bytes;) {
		uint64_t n = bytes - done < l->slot_bytes ? bytes - done : l->slot_bytes;
		struct peer_slot *sl = &l->slot[l->next_slot];

		l->next_slot = (l->next_slot + 1) % PEER_SLOTS;
		st = fill_slot(l, sl, src, src_va + done, n);
		if (st == SPYRE_SUCCESS)
			st = empty_slot(l, sl, s, dst, dst_va + done, n, point);
		done += n;
	}
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_unlock(&l->lock);
	return st;
}
