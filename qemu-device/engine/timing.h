/* SPDX-License-Identifier: MIT */
/*
 * The timing model (docs/engine.md "Timing model").  Time is kept in ticks,
 * 1/1024 of a device cycle, so bandwidths that are not whole bytes per
 * cycle add up without drift.
 */
#ifndef SPYRE_ENGINE_TIMING_H
#define SPYRE_ENGINE_TIMING_H

#include <stdbool.h>
#include <stdint.h>

#include "program.h"

#define TICKS_PER_CYCLE 1024u

/* Device memory: one shared server for the whole card. */
struct dram_model {
    uint64_t free_at;
    int last_dir; /* -1 none yet, 0 read, 1 write */
};

/* The ring: one link per core and direction (0 to core + 1, 1 to core - 1). */
struct ring_model {
    unsigned num_cores;
    uint64_t link_free[2][SPYRE_ENGINE_MAX_CORES];
};

uint64_t timing_cycles_to_ticks(double cycles);

/* Ticks of one firing of op, and whether it runs on the PE array. */
uint64_t timing_op_ticks(const struct spyre_timing_params *t,
                         const struct op_desc *op, bool *on_pe);

/*
 * A DRAM transfer of bytes that may start at `ready`.  Returns when the
 * DRAM is done with it; *arrival is when its data has reached the other
 * side (reads add the access latency).
 */
uint64_t dram_transfer(struct dram_model *d,
                       const struct spyre_timing_params *t, uint64_t ready,
                       uint64_t bytes, bool write, uint64_t *arrival);

/*
 * A core's scratchpad has a read port and a write port for the sticks
 * streams move (docs/engine.md "Scratchpad ports").  Ticks one of them is
 * held to move bytes in `runs` contiguous pattern runs (requests).
 */
enum { SPAD_READ, SPAD_WRITE };

uint64_t timing_port_ticks(const struct spyre_timing_params *t, uint64_t bytes,
                           uint32_t runs);

/*
 * Send bytes from core src to every core in dst_mask, starting no earlier
 * than `ready`: each destination takes its shorter direction, a multicast
 * crosses each link once.  arrival[c] gets each destination's arrival;
 * returns when the source has sent the last byte.  *link_bytes adds bytes
 * times links crossed.
 */
uint64_t ring_transfer(struct ring_model *r,
                       const struct spyre_timing_params *t, unsigned src,
                       uint32_t dst_mask, uint64_t ready, uint64_t bytes,
                       uint64_t arrival[SPYRE_ENGINE_MAX_CORES],
                       uint64_t *link_bytes);

#endif /* SPYRE_ENGINE_TIMING_H */
