/* SPDX-License-Identifier: MIT */
/* Launch profiles from the card's statistics, and SPYRE_TRACE (trace.c). */
#ifndef SPYRE_TRACE_H
#define SPYRE_TRACE_H

#include <stdint.h>

#include "spyre/spyre.h"

void spyre_profile_from_stats(spyre_launch_profile *p, const uint64_t *stats);
int spyre_trace_enabled(void);
/* A slice on a stream's track, device time in ns. */
void spyre_trace_slice(uint32_t pid, uint32_t tid, const char *name, const char *cat,
		       uint64_t start_ns, uint64_t end_ns, uint64_t bytes);
/* A launch named @name on stream track @tid, its statistics as args, and
 * per-core busy slices under the device's core tracks. */
void spyre_trace_launch(uint32_t pid, uint32_t tid, const char *name,
			const spyre_launch_profile *p);
/* Name a track (@tid) or, with @tid 0, the device open @pid. */
void spyre_trace_name_track(uint32_t pid, uint32_t tid, const char *name);
/* Format the trace as JSON into a malloc'd string (for tests and writing). */
char *spyre_trace_json(void);

#endif /* SPYRE_TRACE_H */
