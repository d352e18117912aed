// SPDX-License-Identifier: MIT
/*
 * The ring between cores: bidirectional, one link per direction between
 * neighbours, ring_bytes_per_cycle each.  A transfer is pipelined hop by
 * hop (cut-through): it holds each link for bytes / rate and moves on to
 * the next after ring_hop_cycles; a link busy with another transfer makes
 * it wait.
 */
#include <string.h>

#include "timing.h"

/* Hops from src to dst going in direction dir (0: up the core numbers). */
static unsigned ring_hops(unsigned n, unsigned src, unsigned dst, int dir)
{
    return dir == 0 ? (dst + n - src) % n : (src + n - dst) % n;
}

uint64_t ring_transfer(struct ring_model *r,
                       const struct spyre_timing_params *t, unsigned src,
                       uint32_t dst_mask, uint64_t ready, uint64_t bytes,
                       uint64_t arrival[SPYRE_ENGINE_MAX_CORES],
                       uint64_t *link_bytes)
{
    unsigned n = r->num_cores, far[2] = { 0, 0 };
    uint64_t hold =
        timing_cycles_to_ticks((double)bytes / t->ring_bytes_per_cycle);
    uint64_t hop = timing_cycles_to_ticks(t->ring_hop_cycles);
    uint64_t sent = ready;
    int dir_of[SPYRE_ENGINE_MAX_CORES];

    /* Each destination takes its shorter way round; ties go up. */
    for (unsigned c = 0; c < n; c++) {
        unsigned up, down;

        dir_of[c] = -1;
        if (!(dst_mask & (1u << c))) {
            continue;
        }
        up = ring_hops(n, src, c, 0);
        down = ring_hops(n, src, c, 1);
        dir_of[c] = down < up;
        if ((dir_of[c] ? down : up) > far[dir_of[c]]) {
            far[dir_of[c]] = dir_of[c] ? down : up;
        }
    }
    for (int dir = 0; dir < 2; dir++) {
        uint64_t at = ready, first = 0;
        unsigned core = src;

        for (unsigned h = 1; h <= far[dir]; h++) {
            uint64_t *link = &r->link_free[dir][core];
            uint64_t start = at > *link ? at : *link;

            if (h == 1) {
                first = start;
            }
            *link = start + hold;
            *link_bytes += bytes;
            at = start + hop;
            core = dir == 0 ? (core + 1) % n : (core + n - 1) % n;
            if (dir_of[core] == dir) {
                arrival[core] = start + hop + hold;
            }
        }
        if (far[dir] && first + hold > sent) {
            sent = first + hold;
        }
    }
    return sent;
}
