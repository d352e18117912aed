// SPDX-License-Identifier: MIT
/*
 * Buffers and copies.  Pageable host memory goes through the stream's
 * pinned staging buffers (chunks of up to SPYRE_STAGE_BYTES, up to
 * SPYRE_STAGE_COUNT in flight, so copying into one overlaps the card's DMA
 * from another);
 * pointers inside a SPYRE_MEM_HOST buffer's mapping are DMAed directly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "error.h"
#include "memory.h"
#include "peer.h"
#include "stream.h"

#define MAX_BO_BYTES (16ULL << 30)

static void buffer_destroy_obj(struct spyre_obj *obj)
{
	spyre_buffer_free((spyre_buffer *)obj);
}

SPYRE_EXPORT spyre_status spyre_buffer_alloc(spyre_device *dev, uint64_t bytes, uint32_t flags,
					     spyre_buffer **buf)
{
	uint32_t bo_flags;
	spyre_buffer *b;
	spyre_status st;

	if (!buf)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "buffer pointer is NULL");
	*buf = NULL;
	st = spyre_device_check(dev);
	if (st != SPYRE_SUCCESS)
		return st;
	if (flags & ~(uint32_t)(SPYRE_MEM_HOST | SPYRE_MEM_MAPPABLE))
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "unknown flags 0x%x", flags);
	if ((flags & SPYRE_MEM_HOST) && (flags & SPYRE_MEM_MAPPABLE))
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "SPYRE_MEM_HOST and SPYRE_MEM_MAPPABLE exclude each other");
	if (!bytes || bytes > MAX_BO_BYTES)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "size %llu is not 1 .. 16 GiB", (unsigned long long)bytes);
	st = spyre_device_check_alive(dev);
	if (st != SPYRE_SUCCESS)
		return st;
	b = calloc(1, sizeof(*b));
	if (!b)
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a buffer");
	bo_flags = flags & SPYRE_MEM_HOST ? 0 : DRM_SPYRE_BO_DEVICE;
	if (flags & SPYRE_MEM_MAPPABLE)
		bo_flags |= DRM_SPYRE_BO_MAPPABLE;
	st = spyre_gem_create(dev, bytes, bo_flags, &b->gem);
	if (st != SPYRE_SUCCESS) {
		free(b);
		return st;
	}
	b->bytes = bytes;
	b->flags = flags;
	b->obj.gem = &b->gem;
	spyre_device_link(dev, &b->obj, SPYRE_KIND_BUFFER, buffer_destroy_obj);
	*buf = b;
	return spyre_done(SPYRE_SUCCESS);
}

SPYRE_EXPORT spyre_status spyre_buffer_free(spyre_buffer *buf)
{
	spyre_status st;

	if (!spyre_handle_unlink(buf, SPYRE_KIND_BUFFER, "buffer", &st))
		return st;
	spyre_gem_destroy(buf->obj.dev, &buf->gem);
	free(buf);
	return spyre_done(SPYRE_SUCCESS);
}

SPYRE_EXPORT uint64_t spyre_buffer_size(const spyre_buffer *buf)
{
	return spyre_handle_live(buf, SPYRE_KIND_BUFFER, 0) ? buf->bytes : 0;
}

SPYRE_EXPORT spyre_device *spyre_buffer_device(const spyre_buffer *buf)
{
	return spyre_handle_live(buf, SPYRE_KIND_BUFFER, 0) ? buf->obj.dev : NULL;
}

SPYRE_EXPORT uint32_t spyre_buffer_flags(const spyre_buffer *buf)
{
	return spyre_handle_live(buf, SPYRE_KIND_BUFFER, 0) ? buf->flags : 0;
}

SPYRE_EXPORT uint64_t spyre_buffer_device_address(const spyre_buffer *buf)
{
	return spyre_handle_live(buf, SPYRE_KIND_BUFFER, 0) ? buf->gem.va : 0;
}

SPYRE_EXPORT spyre_status spyre_buffer_map(spyre_buffer *buf, void **ptr)
{
	spyre_status st;

	if (!ptr)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "ptr is NULL");
	*ptr = NULL;
	st = spyre_handle_check(buf, SPYRE_KIND_BUFFER, "buffer");
	if (st != SPYRE_SUCCESS)
		return st;
	if (!buf->gem.map)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "a device buffer without SPYRE_MEM_MAPPABLE cannot be "
				       "mapped");
	*ptr = buf->gem.map;
	return spyre_done(SPYRE_SUCCESS);
}

spyre_buffer *spyre_host_buffer_find(spyre_device *dev, const void *p, uint64_t bytes,
				     uint64_t *offset)
{
	uintptr_t a = (uintptr_t)p;
	spyre_buffer *found = NULL;
	struct spyre_obj *o;

	pthread_mutex_lock(&dev->lock);
	for (o = dev->objects.next; o != &dev->objects; o = o->next) {
		spyre_buffer *b = (spyre_buffer *)o;
		uintptr_t m;

		if (o->kind != SPYRE_KIND_BUFFER || !(b->flags & SPYRE_MEM_HOST))
			continue;
		m = (uintptr_t)b->gem.map;
		if (a >= m && a - m <= b->bytes && bytes <= b->bytes - (a - m)) {
			found = b;
			*offset = a - m;
			break;
		}
	}
	pthread_mutex_unlock(&dev->lock);
	return found;
}

/* ---- copies ---- */

static spyre_status check_range(const spyre_buffer *b, uint64_t off, uint64_t bytes,
				const char *what)
{
	if (off > b->bytes || bytes > b->bytes - off)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s range [%llu, +%llu) is outside its %llu-byte buffer",
				       what, (unsigned long long)off, (unsigned long long)bytes,
				       (unsigned long long)b->bytes);
	return SPYRE_SUCCESS;
}

spyre_status spyre_check_buffer(spyre_stream *s, spyre_buffer *b, const char *what)
{
	spyre_status st = spyre_handle_check(b, SPYRE_KIND_BUFFER, what);

	if (st == SPYRE_SUCCESS && b->obj.dev != s->obj.dev)
		st = spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				     "%s belongs to %s, the stream to another device open", what,
				     b->obj.dev->props.devnode);
	return st;
}

spyre_status spyre_queue_node(spyre_stream *s, struct spyre_node *node, spyre_buffer **bufs,
			      int nbufs, int stage, void *dtoh_dst, uint64_t *point)
{
	struct spyre_obj *uses[2];
	struct spyre_submission sub;
	spyre_status st;

	spyre_submission_init(&sub);
	for (int i = 0; i < nbufs; i++) {
		st = spyre_bo_list_add(&sub.bos, bufs[i]->gem.handle, "job");
		if (st != SPYRE_SUCCESS)
			return st;
		uses[i] = &bufs[i]->obj;
	}
	sub.nodes = node;
	sub.nnodes = 1;
	sub.uses = uses;
	sub.nuses = (uint32_t)nbufs;
	sub.stage = stage;
	sub.dtoh_dst = dtoh_dst;
	sub.dtoh_bytes = dtoh_dst ? node->a2 : 0;
	return spyre_stream_queue(s, &sub, point);
}

static spyre_status dtod_locked(spyre_stream *s, spyre_buffer *dst, uint64_t doff,
				spyre_buffer *src, uint64_t soff, uint64_t bytes, const char *name,
				uint64_t *point)
{
	struct spyre_node node = { .kind = NODE_COPY };
	spyre_buffer *bufs[2] = { src, dst };

	if (src == dst && doff < soff + bytes && soff < doff + bytes)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "source and destination ranges overlap");
	if (!bytes)
		return SPYRE_SUCCESS;
	node.a0 = src->gem.va + soff;
	node.a1 = dst->gem.va + doff;
	node.a2 = bytes;
	node.bytes = bytes;
	node.name = name;
	return spyre_queue_node(s, &node, bufs, src == dst ? 1 : 2, -1, NULL, point);
}

static spyre_status fill_locked(spyre_stream *s, spyre_buffer *buf, uint64_t off,
				uint64_t pattern, uint64_t bytes, uint64_t *point)
{
	struct spyre_node node = { .kind = NODE_FILL };

	if (!bytes)
		return SPYRE_SUCCESS;
	node.a0 = buf->gem.va + off;
	node.a1 = bytes;
	node.a2 = pattern;
	node.bytes = bytes;
	node.name = "fill";
	return spyre_queue_node(s, &node, &buf, 1, -1, NULL, point);
}

/*
 * Host memory <-> @buf through staging buffers, chunk by chunk.  htod copies
 * each chunk into a staging buffer now; dtoh leaves the copy out of the
 * staging buffer to the job's retirement.
 */
static spyre_status staged_locked(spyre_stream *s, int to_device, spyre_buffer *buf,
				  uint64_t off, void *host, uint64_t bytes, uint64_t *point)
{
	const char *name = to_device ? "htod" : "dtoh";
	spyre_buffer *pinned;
	uint64_t hoff;
	spyre_status st;

	pinned = spyre_host_buffer_find(s->obj.dev, host, bytes, &hoff);
	if (pinned)
		return to_device ? dtod_locked(s, buf, off, pinned, hoff, bytes, name, point) :
				   dtod_locked(s, pinned, hoff, buf, off, bytes, name, point);
	if (s->capture)
		return spyre_set_error(SPYRE_ERROR_CAPTURE,
				       "a captured %s copy must use a SPYRE_MEM_HOST buffer's "
				       "memory, not pageable memory", name);
	for (uint64_t done = 0; done < bytes;) {
		uint64_t n = bytes - done < SPYRE_STAGE_BYTES ? bytes - done : SPYRE_STAGE_BYTES;
		struct spyre_node node = { .kind = NODE_COPY, .a2 = n, .bytes = n, .name = name };
		uint64_t stage_va, buf_va = buf->gem.va + off + done;
		int stage;

		st = spyre_stream_get_stage(s, n, &stage);
		if (st != SPYRE_SUCCESS)
			return st;
		stage_va = s->stage[stage].gem.va;
		if (to_device)
			memcpy(s->stage[stage].gem.map, (const uint8_t *)host + done, n);
		node.a0 = to_device ? stage_va : buf_va;
		node.a1 = to_device ? buf_va : stage_va;
		st = spyre_queue_node(s, &node, &buf, 1, stage,
				to_device ? NULL : (uint8_t *)host + done, point);
		if (st != SPYRE_SUCCESS)
			return st;
		done += n;
	}
	return SPYRE_SUCCESS;
}

enum copy_kind { COPY_HTOD, COPY_DTOH, COPY_DTOD, COPY_FILL };

struct copy_args {
	enum copy_kind kind;
	spyre_buffer *dst, *src;
	uint64_t doff, soff, bytes, pattern;
	void *hdst;
	const void *hsrc;
};

/* Validate, then queue on @s; *point is the last job's point (0: none). */
static spyre_status do_copy(spyre_stream *s, const struct copy_args *a, uint64_t *point)
{
	spyre_status st = SPYRE_SUCCESS;

	*point = 0;
	if (a->dst)
		st = spyre_check_buffer(s, a->dst, "destination buffer");
	if (st == SPYRE_SUCCESS && a->src)
		st = spyre_check_buffer(s, a->src, "source buffer");
	if (st == SPYRE_SUCCESS && a->kind == COPY_HTOD && !a->hsrc && a->bytes)
		st = spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "source pointer is NULL");
	if (st == SPYRE_SUCCESS && a->kind == COPY_DTOH && !a->hdst && a->bytes)
		st = spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				     "destination pointer is NULL");
	if (st == SPYRE_SUCCESS && a->dst)
		st = check_range(a->dst, a->doff, a->bytes, "destination");
	if (st == SPYRE_SUCCESS && a->src)
		st = check_range(a->src, a->soff, a->bytes, "source");
	if (st != SPYRE_SUCCESS)
		return st;
	pthread_mutex_lock(&s->lock);
	st = spyre_stream_enter(s, 1);
	if (st == SPYRE_SUCCESS) {
		switch (a->kind) {
		case COPY_HTOD:
			st = staged_locked(s, 1, a->dst, a->doff, (void *)(uintptr_t)a->hsrc,
					   a->bytes, point);
			break;
		case COPY_DTOH:
			st = staged_locked(s, 0, a->src, a->soff, a->hdst, a->bytes, point);
			break;
		case COPY_DTOD:
			st = dtod_locked(s, a->dst, a->doff, a->src, a->soff, a->bytes, "dtod",
					 point);
			break;
		case COPY_FILL:
			st = fill_locked(s, a->dst, a->doff, a->pattern, a->bytes, point);
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return st;
}

static spyre_status copy_async(spyre_stream *s, const struct copy_args *a)
{
	spyre_status st = spyre_handle_check(s, SPYRE_KIND_STREAM, "stream");
	uint64_t point;

	if (st == SPYRE_SUCCESS)
		st = do_copy(s, a, &point);
	return spyre_done(st);
}

/* A blocking copy: the device's internal stream, then wait for its job. */
static spyre_status copy_blocking(spyre_buffer *b, const struct copy_args *a)
{
	spyre_status st = spyre_handle_check(b, SPYRE_KIND_BUFFER, "buffer");
	spyre_stream *s;
	uint64_t point;

	if (st == SPYRE_SUCCESS)
		st = spyre_stream_internal(b->obj.dev, &s);
	if (st == SPYRE_SUCCESS)
		st = do_copy(s, a, &point);
	if (st == SPYRE_SUCCESS && point)
		st = spyre_stream_wait_point(s, point);
	return spyre_done(st);
}

SPYRE_EXPORT spyre_status spyre_memcpy_htod_async(spyre_stream *s, spyre_buffer *dst,
						  uint64_t dst_offset, const void *src,
						  uint64_t bytes)
{
	struct copy_args a = { .kind = COPY_HTOD, .dst = dst, .doff = dst_offset, .hsrc = src,
			       .bytes = bytes };

	return copy_async(s, &a);
}

SPYRE_EXPORT spyre_status spyre_memcpy_dtoh_async(spyre_stream *s, void *dst, spyre_buffer *src,
						  uint64_t src_offset, uint64_t bytes)
{
	struct copy_args a = { .kind = COPY_DTOH, .src = src, .soff = src_offset, .hdst = dst,
			       .bytes = bytes };

	return copy_async(s, &a);
}

SPYRE_EXPORT spyre_status spyre_memcpy_dtod_async(spyre_stream *s, spyre_buffer *dst,
						  uint64_t dst_offset, spyre_buffer *src,
						  uint64_t src_offset, uint64_t bytes)
{
	struct copy_args a = { .kind = COPY_DTOD, .dst = dst, .doff = dst_offset, .src = src,
			       .soff = src_offset, .bytes = bytes };

	if (!dst || !src)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s buffer is NULL",
				       dst ? "source" : "destination");
	return copy_async(s, &a);
}

SPYRE_EXPORT spyre_status spyre_memset64_async(spyre_stream *s, spyre_buffer *buf,
					       uint64_t offset, uint64_t pattern, uint64_t bytes)
{
	struct copy_args a = { .kind = COPY_FILL, .dst = buf, .doff = offset, .pattern = pattern,
			       .bytes = bytes };

	if (!buf)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "buffer is NULL");
	return copy_async(s, &a);
}

SPYRE_EXPORT spyre_status spyre_memcpy_htod(spyre_buffer *dst, uint64_t dst_offset,
					    const void *src, uint64_t bytes)
{
	struct copy_args a = { .kind = COPY_HTOD, .dst = dst, .doff = dst_offset, .hsrc = src,
			       .bytes = bytes };

	return copy_blocking(dst, &a);
}

SPYRE_EXPORT spyre_status spyre_memcpy_dtoh(void *dst, spyre_buffer *src, uint64_t src_offset,
					    uint64_t bytes)
{
	struct copy_args a = { .kind = COPY_DTOH, .src = src, .soff = src_offset, .hdst = dst,
			       .bytes = bytes };

	return copy_blocking(src, &a);
}

SPYRE_EXPORT spyre_status spyre_memcpy_dtod(spyre_buffer *dst, uint64_t dst_offset,
					    spyre_buffer *src, uint64_t src_offset, uint64_t bytes)
{
	struct copy_args a = { .kind = COPY_DTOD, .dst = dst, .doff = dst_offset, .src = src,
			       .soff = src_offset, .bytes = bytes };

	if (!src)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "source buffer is NULL");
	return copy_blocking(dst, &a);
}

SPYRE_EXPORT spyre_status spyre_memset64(spyre_buffer *buf, uint64_t offset, uint64_t pattern,
					 uint64_t bytes)
{
	struct copy_args a = { .kind = COPY_FILL, .dst = buf, .doff = offset, .pattern = pattern,
			       .bytes = bytes };

	return copy_blocking(buf, &a);
}

/* ---- peer copies ---- */

/* Check a peer copy's arguments for a stream of @sdev; *same: one open. */
static spyre_status peer_check(spyre_device *sdev, spyre_buffer *dst, uint64_t doff,
			       spyre_buffer *src, uint64_t soff, uint64_t bytes, int *same)
{
	spyre_status st;

	if (!dst || !src)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s buffer is NULL",
				       dst ? "source" : "destination");
	st = spyre_handle_check(dst, SPYRE_KIND_BUFFER, "destination buffer");
	if (st == SPYRE_SUCCESS)
		st = spyre_handle_check(src, SPYRE_KIND_BUFFER, "source buffer");
	if (st != SPYRE_SUCCESS)
		return st;
	if (dst->obj.dev != sdev)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "the stream must be of the destination buffer's device "
				       "open (%s), it is of another", dst->obj.dev->props.devnode);
	st = check_range(dst, doff, bytes, "destination");
	if (st == SPYRE_SUCCESS)
		st = check_range(src, soff, bytes, "source");
	*same = src->obj.dev == dst->obj.dev;
	return st;
}

/* Validate, then queue on @s; *point is the last destination job's (0: none). */
static spyre_status peer_copy(spyre_stream *s, spyre_buffer *dst, uint64_t doff, spyre_buffer *src,
			      uint64_t soff, uint64_t bytes, uint64_t *point)
{
	struct copy_args a = { .kind = COPY_DTOD, .dst = dst, .doff = doff, .src = src,
			       .soff = soff, .bytes = bytes };
	spyre_status st;
	int same;

	*point = 0;
	st = peer_check(s->obj.dev, dst, doff, src, soff, bytes, &same);
	if (st != SPYRE_SUCCESS)
		return st;
	if (same)	/* one open: the card copies within its own address space */
		return do_copy(s, &a, point);
	st = spyre_device_check_alive(src->obj.dev);
	if (st != SPYRE_SUCCESS || !bytes)
		return st;
	return spyre_peer_copy(s, &dst->gem, dst->gem.va + doff, src->obj.dev, &src->gem,
			       src->gem.va + soff, bytes, point);
}

SPYRE_EXPORT spyre_status spyre_memcpy_peer_async(spyre_stream *dst_stream, spyre_buffer *dst,
						  uint64_t dst_offset, spyre_buffer *src,
						  uint64_t src_offset, uint64_t bytes)
{
	spyre_status st = spyre_handle_check(dst_stream, SPYRE_KIND_STREAM, "stream");
	uint64_t point;

	if (st == SPYRE_SUCCESS)
		st = peer_copy(dst_stream, dst, dst_offset, src, src_offset, bytes, &point);
	return spyre_done(st);
}

SPYRE_EXPORT spyre_status spyre_memcpy_peer(spyre_buffer *dst, uint64_t dst_offset,
					    spyre_buffer *src, uint64_t src_offset, uint64_t bytes)
{
	spyre_status st;
	spyre_stream *s;
	uint64_t point;
	int same;

	if (!dst)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "destination buffer is NULL");
	st = spyre_handle_check(dst, SPYRE_KIND_BUFFER, "destination buffer");
	/* Every argument is checked before the device's blocking stream is made. */
	if (st == SPYRE_SUCCESS)
		st = peer_check(dst->obj.dev, dst, dst_offset, src, src_offset, bytes, &same);
	if (st == SPYRE_SUCCESS)
		st = spyre_stream_internal(dst->obj.dev, &s);
	if (st == SPYRE_SUCCESS)
		st = peer_copy(s, dst, dst_offset, src, src_offset, bytes, &point);
	if (st == SPYRE_SUCCESS && point)
		st = spyre_stream_wait_point(s, point);
	return spyre_done(st);
}
