// SPDX-License-Identifier: MIT
/*
 * The engine's defaults (the real card's parameters, docs/engine.md) and
 * error reporting.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "program.h"

void spyre_engine_config_default(struct spyre_engine_config *cfg)
{
    struct spyre_timing_params *t = &cfg->timing;

    memset(cfg, 0, sizeof(*cfg));
    cfg->num_cores = 32;
    cfg->scratchpad_bytes = 2u << 20;              /* 2 MB LX per core */
    cfg->reserved_bytes = SPK_SPAD_RESERVED_BYTES; /* for the program */
    cfg->max_work = 1ull << 30;
    cfg->pool_min_macs = 1ull << 21; /* docs/engine.md "Host execution" */
    t->clock_ghz = 1.5;
    /* 2 corelets x 8x8 PEs x 8 fp16 lanes: 98 TFLOPS peak at 32 cores. */
    t->pe_macs_per_cycle = 1024;
    t->pe_fp32_factor = 0.25;
    /* Brings a 64x64x64 firing to the sustained 1140 MAC/ns per core. */
    t->pe_firing_cycles = 89;
    t->sfp_lanes_per_cycle = 128;
    t->op_firing_cycles = 16;
    t->dram_bytes_per_ns = 150;
    /* 4 KiB bursts alternating read/write then average 105 GB/s. */
    t->dram_turnaround_ns = 4096.0 / 105 - 4096.0 / 150;
    t->dram_latency_ns = 100;
    t->ring_bytes_per_cycle = 128;
    t->ring_hop_cycles = 1;
    /* One stick per cycle each way, like a ring link (docs/engine.md). */
    t->spad_bytes_per_cycle = 128;
    /* Calibrated on the published 2.1 MB shuffle (docs/engine.md). */
    t->spad_request_cycles = 5;
    t->burst_sticks = 32;
}

void engine_set_error(struct spyre_engine_error *err,
                      enum spyre_engine_status st, int core,
                      enum spyre_engine_site at, int index, const char *fmt,
                      ...)
{
    va_list ap;

    if (!err) {
        return;
    }
    err->status = st;
    err->core = core;
    err->index = index;
    err->at = at;
    err->wait = SPYRE_ENGINE_WAIT_NONE;
    err->stream = -1;
    err->sticks_done = 0;
    err->sticks_total = 0;
    va_start(ap, fmt);
    vsnprintf(err->detail, sizeof(err->detail), fmt, ap);
    va_end(ap);
}
