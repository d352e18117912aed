// SPDX-License-Identifier: MIT
/*
 * libspyre graphs for torch.compile (graph.cpp; torch_spyre/compile.py
 * drives them): between capture_begin and capture_end the calling thread's
 * work on a card is recorded on a capture stream instead of run; replay
 * queues all of it as one submission on the current stream.
 */
#pragma once

#include <ATen/ATen.h>

namespace torch_spyre {

/* Start recording card @index's work on this thread; returns the graph's id. */
int64_t capture_begin(c10::DeviceIndex index);
/* Stop recording and build the replayable graph; throws (and forgets the
 * graph) if anything recorded failed.  @abandon: stop and discard. */
void capture_end(int64_t graph, bool abandon);
/* Queue the graph on the current stream of its card: one submission. */
void replay(int64_t graph);
/* The graph's memory goes back to the allocator; its exec is destroyed. */
void graph_destroy(int64_t graph);
/* Recorded operations of a captured graph. */
int64_t graph_nodes(int64_t graph);

/* Whether this thread is recording card @index's work now. */
bool capturing(c10::DeviceIndex index);
/* Keep @t alive as long as the graph being recorded on card @index: a
 * recorded copy from pinned host memory reads it at every replay. */
void capture_keep(c10::DeviceIndex index, const at::Tensor &t);

} // namespace torch_spyre
