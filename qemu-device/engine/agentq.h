/* SPDX-License-Identifier: MIT */
/*
 * The scheduler's choice of the next agent, in O(log agents) per change
 * instead of a scan of every agent per firing.  A tournament (segment) tree
 * over agent indices keeps, for each subtree, the earliest start time and
 * the lowest index reaching it; an agent that cannot fire holds AGENTQ_NEVER.
 *
 * DRAM agents also wait for the card's one DRAM, whose free time moves with
 * every DRAM transfer: they live in a second tree keyed by their own ready
 * time, and agentq_pick() applies max(own, dram_free) there, so a DRAM
 * transfer does not re-key every DRAM agent.  The choice is exactly the
 * earliest max(own, dram) over all agents, ties to the lowest index.
 */
#ifndef SPYRE_ENGINE_AGENTQ_H
#define SPYRE_ENGINE_AGENTQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENTQ_NEVER UINT64_MAX

struct agentq_node {
    uint64_t t;
    uint32_t idx;
};

struct agentq {
    uint32_t leaves;             /* power of two >= agents */
    struct agentq_node *tree[2]; /* [0] other agents, [1] DRAM agents */
};

/* Bytes of memory agentq_init() needs for `agents` agents. */
size_t agentq_bytes(uint32_t agents);

/* Every agent starts at NEVER; mem holds agentq_bytes(agents), aligned. */
void agentq_init(struct agentq *q, uint32_t agents, void *mem);

/* Agent idx (in tree dram ? 1 : 0) may start at t, or never. */
void agentq_set(struct agentq *q, bool dram, uint32_t idx, uint64_t t);

/* When agent idx (in tree dram ? 1 : 0) may start, as last set. */
static inline uint64_t agentq_time(const struct agentq *q, bool dram,
                                   uint32_t idx)
{
    return q->tree[dram][q->leaves + idx].t;
}

/* The agent to fire and its start time; false when none can fire. */
bool agentq_pick(const struct agentq *q, uint64_t dram_free, uint32_t *idx,
                 uint64_t *t);

#endif /* SPYRE_ENGINE_AGENTQ_H */
