/* SPDX-License-Identifier: MIT */
/* Copies between two device opens through shared pinned host buffers (peer.c). */
#ifndef SPYRE_PEER_H
#define SPYRE_PEER_H

#include <stdint.h>

#include "gem.h"
#include "object.h"

/* A link's two slots grow with the copies: a power of two, half the largest
 * copy so far, from 1 MiB to 16 MiB (the chunk a copy moves at a time). */
#define SPYRE_PEER_SLOT_MIN	(1u << 20)
#define SPYRE_PEER_SLOT_MAX	(16u << 20)

/*
 * Queue on @s (of the destination open; not locked by the caller) the copy of
 * @bytes from @src_va (inside @src, a buffer of @src_dev) to @dst_va (inside
 * @dst, of @s's open); *point = the last destination job's point on @s.
 * The source side runs on a stream of the library's own; the driver orders
 * it after earlier jobs that used @src.
 */
spyre_status spyre_peer_copy(spyre_stream *s, const struct spyre_gem *dst, uint64_t dst_va,
			     spyre_device *src_dev, const struct spyre_gem *src, uint64_t src_va,
			     uint64_t bytes, uint64_t *point);

#endif /* SPYRE_PEER_H */
