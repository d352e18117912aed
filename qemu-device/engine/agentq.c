// SPDX-License-Identifier: MIT
/*
 * Tournament trees for the scheduler's choice (agentq.h).  Node i has
 * children 2i and 2i + 1; leaves start at `leaves`.
 */
#include "agentq.h"

static inline struct agentq_node better(struct agentq_node a,
                                        struct agentq_node b)
{
    return b.t < a.t || (b.t == a.t && b.idx < a.idx) ? b : a;
}

static uint32_t leaves_for(uint32_t agents)
{
    uint32_t leaves = 1;

    while (leaves < agents) {
        leaves *= 2;
    }
    return leaves;
}

size_t agentq_bytes(uint32_t agents)
{
    return 4 * (size_t)leaves_for(agents) * sizeof(struct agentq_node);
}

void agentq_init(struct agentq *q, uint32_t agents, void *mem)
{
    q->leaves = leaves_for(agents);
    for (int k = 0; k < 2; k++) {
        q->tree[k] = (struct agentq_node *)mem + (size_t)k * 2 * q->leaves;
        for (uint32_t i = 0; i < q->leaves; i++) {
            q->tree[k][q->leaves + i] = (struct agentq_node){ AGENTQ_NEVER, i };
        }
        for (uint32_t i = q->leaves - 1; i >= 1; i--) {
            q->tree[k][i] = better(q->tree[k][2 * i], q->tree[k][2 * i + 1]);
        }
    }
}

void agentq_set(struct agentq *q, bool dram, uint32_t idx, uint64_t t)
{
    struct agentq_node *tr = q->tree[dram];
    uint32_t i = q->leaves + idx;

    if (tr[i].t == t) {
        return;
    }
    tr[i].t = t;
    for (i /= 2; i >= 1; i /= 2) {
        struct agentq_node b = better(tr[2 * i], tr[2 * i + 1]);

        if (tr[i].t == b.t && tr[i].idx == b.idx) {
            break;
        }
        tr[i] = b;
    }
}

/* The lowest index whose time is <= limit (the root's minimum is). */
static uint32_t leftmost_at_most(const struct agentq_node *tr, uint32_t leaves,
                                 uint64_t limit)
{
    uint32_t i = 1;

    while (i < leaves) {
        i = tr[2 * i].t <= limit ? 2 * i : 2 * i + 1;
    }
    return i - leaves;
}

bool agentq_pick(const struct agentq *q, uint64_t dram_free, uint32_t *idx,
                 uint64_t *t)
{
    struct agentq_node other = q->tree[0][1], dram = q->tree[1][1];

    if (dram.t != AGENTQ_NEVER && dram.t <= dram_free) {
        /* Every DRAM agent ready by then starts when the DRAM is free. */
        dram.idx = leftmost_at_most(q->tree[1], q->leaves, dram_free);
        dram.t = dram_free;
    }
    other = better(other, dram);
    if (other.t == AGENTQ_NEVER) {
        return false;
    }
    *idx = other.idx;
    *t = other.t;
    return true;
}
