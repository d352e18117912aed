/* SPDX-License-Identifier: MIT */
/* Buffers and copies (memory.c). */
#ifndef SPYRE_MEMORY_H
#define SPYRE_MEMORY_H

#include "encode.h"
#include "gem.h"
#include "object.h"

struct spyre_buffer {
	struct spyre_obj obj;
	struct spyre_gem gem;
	uint64_t bytes;			/* requested size */
	uint32_t flags;			/* SPYRE_MEM_* */
};

/* The live SPYRE_MEM_HOST buffer of @dev whose mapping holds [p, p + bytes). */
spyre_buffer *spyre_host_buffer_find(spyre_device *dev, const void *p, uint64_t bytes,
				     uint64_t *offset);

/* @b is a live buffer of @s's device open; the error names it @what. */
spyre_status spyre_check_buffer(spyre_stream *s, spyre_buffer *b, const char *what);

/* Queue one node on @s (under s->lock); @bufs are the buffers it uses.
 * @stage and @dtoh_dst as in struct spyre_submission. */
spyre_status spyre_queue_node(spyre_stream *s, struct spyre_node *node, spyre_buffer **bufs,
			      int nbufs, int stage, void *dtoh_dst, uint64_t *point);

#endif /* SPYRE_MEMORY_H */
