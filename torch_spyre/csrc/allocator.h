// SPDX-License-Identifier: MIT
/*
 * Card memory for tensors: a caching allocator over libspyre device
 * buffers, and pinned host memory (SPYRE_MEM_HOST buffers) for
 * non_blocking copies.
 *
 * A tensor's data pointer is its card address (a buffer's device address
 * plus an offset): addresses are unique within a card's open, so
 * (card, address) finds the buffer again.  Requests up to 1 MiB are carved
 * out of 2 MiB buffers in 512-byte steps; larger ones get a buffer of their
 * own, rounded to 2 MiB.  Freed blocks stay with the allocator for the
 * next request until empty_cache() gives whole buffers back to the card.
 */
#pragma once

#include <cstdint>

#include <c10/core/Allocator.h>

#include "runtime.h"

namespace torch_spyre {

/* A card address resolved: the buffer and the offset in it. */
struct buffer_ref {
	spyre_buffer *buf;
	uint64_t offset;
	uint64_t bytes;		/* from the offset to the end of the block */
};

c10::Allocator *device_allocator();
c10::Allocator *pinned_allocator();

/* The block holding card @index's address @ptr; throws if none does. */
buffer_ref lookup_device(c10::DeviceIndex index, const void *ptr);
/* The pinned buffer holding host @ptr .. + @bytes on card @index, or buf NULL. */
buffer_ref lookup_pinned(c10::DeviceIndex index, const void *ptr, uint64_t bytes);
bool is_pinned(const void *ptr);

struct memory_stats {
	uint64_t allocated;	/* bytes in tensors' blocks now */
	uint64_t reserved;	/* bytes of card buffers held (blocks and cache) */
	uint64_t peak_allocated;
	uint64_t buffers;	/* card buffers held */
	uint64_t buffer_allocs;	/* card buffers ever allocated (driver round trips) */
};
memory_stats stats(c10::DeviceIndex index);
void reset_peak(c10::DeviceIndex index);
/* Give every unused cached buffer of card @index back to the card. */
void empty_cache(c10::DeviceIndex index);

/* Graph capture (graph.cpp): blocks allocated on card @index between begin
 * and end belong to @graph (non-zero); freeing their tensors keeps them
 * until release, when the graph is destroyed. */
void graph_memory_begin(c10::DeviceIndex index, uint64_t graph);
void graph_memory_end(c10::DeviceIndex index);
void graph_memory_release(c10::DeviceIndex index, uint64_t graph);

} // namespace torch_spyre
