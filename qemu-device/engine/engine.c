// SPDX-License-Identifier: MIT
/*
 * The engine's defaults (the real card's parameters, docs/engine.md), status
 * names and error reporting.
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

static const char *const status_names[SPYRE_ENGINE_STATUS_COUNT] = {
    [SPYRE_ENGINE_OK] = "SPYRE_ENGINE_OK",
    [SPYRE_ENGINE_E_TRUNCATED] = "SPYRE_ENGINE_E_TRUNCATED",
    [SPYRE_ENGINE_E_MAGIC] = "SPYRE_ENGINE_E_MAGIC",
    [SPYRE_ENGINE_E_VERSION] = "SPYRE_ENGINE_E_VERSION",
    [SPYRE_ENGINE_E_RESERVED] = "SPYRE_ENGINE_E_RESERVED",
    [SPYRE_ENGINE_E_CORE_MASK] = "SPYRE_ENGINE_E_CORE_MASK",
    [SPYRE_ENGINE_E_TOO_MANY] = "SPYRE_ENGINE_E_TOO_MANY",
    [SPYRE_ENGINE_E_BUFFER] = "SPYRE_ENGINE_E_BUFFER",
    [SPYRE_ENGINE_E_OVERLAP] = "SPYRE_ENGINE_E_OVERLAP",
    [SPYRE_ENGINE_E_SPAD_DECLARED] = "SPYRE_ENGINE_E_SPAD_DECLARED",
    [SPYRE_ENGINE_E_STREAM] = "SPYRE_ENGINE_E_STREAM",
    [SPYRE_ENGINE_E_PATTERN] = "SPYRE_ENGINE_E_PATTERN",
    [SPYRE_ENGINE_E_OPCODE] = "SPYRE_ENGINE_E_OPCODE",
    [SPYRE_ENGINE_E_OP] = "SPYRE_ENGINE_E_OP",
    [SPYRE_ENGINE_E_DTYPE] = "SPYRE_ENGINE_E_DTYPE",
    [SPYRE_ENGINE_E_BINDING] = "SPYRE_ENGINE_E_BINDING",
    [SPYRE_ENGINE_E_COUNT] = "SPYRE_ENGINE_E_COUNT",
    [SPYRE_ENGINE_E_FIFO_SMALL] = "SPYRE_ENGINE_E_FIFO_SMALL",
    [SPYRE_ENGINE_E_RING] = "SPYRE_ENGINE_E_RING",
    [SPYRE_ENGINE_E_TOO_MUCH_WORK] = "SPYRE_ENGINE_E_TOO_MUCH_WORK",
    [SPYRE_ENGINE_E_ARGS] = "SPYRE_ENGINE_E_ARGS",
    [SPYRE_ENGINE_E_ADDRESS] = "SPYRE_ENGINE_E_ADDRESS",
    [SPYRE_ENGINE_E_MEMORY] = "SPYRE_ENGINE_E_MEMORY",
    [SPYRE_ENGINE_E_DEADLOCK] = "SPYRE_ENGINE_E_DEADLOCK",
    [SPYRE_ENGINE_E_NOMEM] = "SPYRE_ENGINE_E_NOMEM",
    [SPYRE_ENGINE_E_INVALID] = "SPYRE_ENGINE_E_INVALID",
};

const char *spyre_engine_status_name(int status)
{
    if (status < 0 || status >= SPYRE_ENGINE_STATUS_COUNT) {
        return "SPYRE_ENGINE_STATUS_UNKNOWN";
    }
    return status_names[status];
}

void engine_set_error(struct spyre_engine_error *err,
                      enum spyre_engine_status st, int core, int index,
                      const char *fmt, ...)
{
    va_list ap;

    if (!err) {
        return;
    }
    err->status = st;
    err->core = core;
    err->index = index;
    va_start(ap, fmt);
    vsnprintf(err->detail, sizeof(err->detail), fmt, ap);
    va_end(ap);
}
