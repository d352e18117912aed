/* SPDX-License-Identifier: MIT */
/*
 * A loaded program as the loader decoded and validated it (struct
 * spyre_program, opaque in engine.h: per core its buffers, streams and
 * ops), which the scheduler, ops and timing model read, and the engine's
 * error reporting.
 */
#ifndef SPYRE_ENGINE_PROGRAM_H
#define SPYRE_ENGINE_PROGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "spyre_program.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the engine keeps device data in host order: little-endian hosts only"
#endif

#define STICK_BYTES ((uint32_t)SPK_STICK_BYTES)

struct endpoint {
    uint8_t kind;  /* SPK_EP_* */
    uint16_t ref;  /* argument, buffer or peer stream */
    uint32_t core; /* ring: source core, or destination mask */
    uint64_t offset;
    uint32_t count[SPK_EP_DIMS];
    int64_t stride[SPK_EP_DIMS];
    /* extent of the pattern from offset (stick starts) */
    int64_t min_off, max_off;
};

struct stream_desc {
    uint16_t fifo_buffer;
    uint32_t fifo_sticks;
    uint32_t total_sticks;
    uint16_t after; /* SPK_NONE or a stream of the same core */
    struct endpoint src, dst;
    int16_t producer_op, consumer_op; /* for SPK_EP_OP ends, else -1 */
};

struct op_desc {
    uint8_t opcode, dtype_in, dtype_out, flags;
    uint16_t in[3];
    uint16_t out;
    uint16_t acc_buffer;
    uint32_t firings;
    uint32_t row_elems, rows, k, k_steps;
    float imm0, imm1;
    unsigned num_in;
    /* Sticks one firing takes from each input and gives its output. */
    uint32_t in_sticks[3];
    uint32_t out_sticks; /* 0 on firings that produce nothing */
    /*
     * A matmul whose accumulator nothing else names (no stream's FIFO or
     * scratchpad endpoint, no other op): the program cannot see it.
     */
    bool acc_private;
};

struct buffer_desc {
    uint32_t offset, bytes;
};

struct core_program {
    unsigned core;
    uint32_t spad_declared;
    unsigned num_buffers, num_streams, num_ops;
    struct buffer_desc buffers[SPK_MAX_BUFFERS];
    struct stream_desc streams[SPK_MAX_STREAMS];
    struct op_desc ops[SPK_MAX_OPS];
};

struct spyre_program {
    struct spyre_engine_config cfg;
    uint32_t core_mask;
    unsigned num_args;
    unsigned num_cores;         /* participating */
    struct core_program *cores; /* num_cores entries, ascending core */
    int core_slot[SPYRE_ENGINE_MAX_CORES]; /* core -> index in cores, or -1 */
    uint64_t work; /* sticks moved + firings: bounded by cfg.max_work */
};

/* Elements of a dtype in one stick. */
static inline uint32_t dtype_stick_elems(unsigned dtype)
{
    return spk_stick_elems(dtype);
}

static inline uint32_t sticks_for(uint32_t elems, unsigned dtype)
{
    return spk_sticks_for(elems, dtype);
}

/* Record a failure; index counts what at says (-1 with SPYRE_ENGINE_AT_NONE).
 */
void engine_set_error(struct spyre_engine_error *err,
                      enum spyre_engine_status st, int core,
                      enum spyre_engine_site at, int index, const char *fmt,
                      ...) __attribute__((format(printf, 6, 7)));

#endif /* SPYRE_ENGINE_PROGRAM_H */
