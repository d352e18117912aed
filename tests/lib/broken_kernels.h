/* SPDX-License-Identifier: MIT */
/*
 * Kernels broken on purpose, one per way the card's engine refuses or stops
 * a kernel: a small valid copy kernel (DRAM -> COPY -> DRAM on core 0) with
 * one field changed.  The host suite checks the engine's verdict on each;
 * the guest suite checks that the same verdict reaches the user through the
 * card, the driver and libspyre.
 */
#ifndef BROKEN_KERNELS_H
#define BROKEN_KERNELS_H

#include <stdint.h>
#include <string.h>

#include "spyre_engine_status.h"
#include "spyre_program_builder.h"

#define BROKEN_STICKS	8	/* sticks the base kernel copies */
#define BROKEN_ARGS	2	/* source, destination */

struct broken_kernel {
	const char *name;
	int status;		/* enum spyre_engine_status it ends with */
	int site;		/* enum spyre_engine_site of the report */
	int index;		/* the stream, op or buffer it names; -1: none */
	void (*breaks)(struct pb_program *p);
};

/* The valid base: stream 0 DRAM arg 0 -> op 0 COPY -> stream 1 -> DRAM arg 1. */
static inline void broken_base(struct pb_program *p)
{
	struct pb_core *c;
	struct pb_op *op;

	memset(p, 0, sizeof(*p));
	p->num_args = BROKEN_ARGS;
	c = pb_core(p, 0);
	op = pb_op(c, SPK_OPC_COPY, SPK_DT_FP16, SPK_DT_FP16, BROKEN_STICKS, 1, 64);
	op->in[0] = pb_stream(c, pb_linear(SPK_EP_DRAM, 0, 0, BROKEN_STICKS), pb_op_end(),
			      BROKEN_STICKS, 4);
	op->out = pb_stream(c, pb_op_end(), pb_linear(SPK_EP_DRAM, 1, 0, BROKEN_STICKS),
			    BROKEN_STICKS, 4);
}

static inline void broken_reserved(struct pb_program *p) { p->cores[0].ops[0].flags = 0x80; }
static inline void broken_buffer(struct pb_program *p) { p->cores[0].buf_offset[0] += 64; }
static inline void broken_overlap(struct pb_program *p)
{
	p->cores[0].buf_offset[1] = p->cores[0].buf_offset[0];
}
static inline void broken_spad_declared(struct pb_program *p) { p->cores[0].spad_bytes = 128; }
static inline void broken_stream(struct pb_program *p)
{
	p->cores[0].streams[0].src.kind = SPK_EP_OP;	/* op -> op with no op at the source */
	p->cores[0].streams[0].src = pb_op_end();
	p->cores[0].streams[0].dst.kind = 9;
}
static inline void broken_pattern(struct pb_program *p)
{
	p->cores[0].streams[0].src.stride[0] = 64;	/* half a stick */
}
static inline void broken_opcode(struct pb_program *p) { p->cores[0].ops[0].opcode = 0x7f; }
static inline void broken_op(struct pb_program *p) { p->cores[0].ops[0].row_elems = 0; }
static inline void broken_dtype(struct pb_program *p) { p->cores[0].ops[0].dtype_in = 99; }
static inline void broken_binding(struct pb_program *p) { p->cores[0].ops[0].in[0] = 7; }
static inline void broken_count(struct pb_program *p)
{
	p->cores[0].ops[0].firings = BROKEN_STICKS / 2;	/* moves half the stream */
}
static inline void broken_fifo_small(struct pb_program *p)
{
	struct pb_core *c = &p->cores[0];

	c->ops[0].rows = 2;	/* two sticks a firing ... */
	c->ops[0].firings = BROKEN_STICKS / 2;
	c->streams[0].fifo_sticks = 1;	/* ... into a one-stick FIFO */
	c->buf_bytes[0] = 128;
}
static inline void broken_ring(struct pb_program *p)
{
	p->cores[0].streams[1].dst = pb_ring(0, 1u << 1);	/* to core 1, which has no program */
}
static inline void broken_deadlock(struct pb_program *p)
{
	struct pb_core *c = &p->cores[0];

	/* A third stream that starts after the output, which waits for it. */
	pb_stream(c, pb_linear(SPK_EP_DRAM, 0, 0, 1), pb_linear(SPK_EP_DRAM, 1, 0, 1), 1, 1);
	c->streams[2].after = 1;
	c->streams[1].after = 2;
}

static const struct broken_kernel broken_kernels[] = {
	{ "reserved", SPYRE_ENGINE_E_RESERVED, SPYRE_ENGINE_AT_OP, 0, broken_reserved },
	{ "buffer", SPYRE_ENGINE_E_BUFFER, SPYRE_ENGINE_AT_BUFFER, 0, broken_buffer },
	{ "overlap", SPYRE_ENGINE_E_OVERLAP, SPYRE_ENGINE_AT_BUFFER, 1, broken_overlap },
	{ "spad_declared", SPYRE_ENGINE_E_SPAD_DECLARED, SPYRE_ENGINE_AT_BUFFER, 0,
	  broken_spad_declared },
	{ "stream", SPYRE_ENGINE_E_STREAM, SPYRE_ENGINE_AT_STREAM, 0, broken_stream },
	{ "pattern", SPYRE_ENGINE_E_PATTERN, SPYRE_ENGINE_AT_STREAM, 0, broken_pattern },
	{ "opcode", SPYRE_ENGINE_E_OPCODE, SPYRE_ENGINE_AT_OP, 0, broken_opcode },
	{ "op", SPYRE_ENGINE_E_OP, SPYRE_ENGINE_AT_OP, 0, broken_op },
	{ "dtype", SPYRE_ENGINE_E_DTYPE, SPYRE_ENGINE_AT_OP, 0, broken_dtype },
	{ "binding", SPYRE_ENGINE_E_BINDING, SPYRE_ENGINE_AT_OP, 0, broken_binding },
	{ "count", SPYRE_ENGINE_E_COUNT, SPYRE_ENGINE_AT_OP, 0, broken_count },
	{ "fifo_small", SPYRE_ENGINE_E_FIFO_SMALL, SPYRE_ENGINE_AT_OP, 0, broken_fifo_small },
	{ "ring", SPYRE_ENGINE_E_RING, SPYRE_ENGINE_AT_STREAM, 1, broken_ring },
	{ "deadlock", SPYRE_ENGINE_E_DEADLOCK, SPYRE_ENGINE_AT_STREAM, 2, broken_deadlock },
};

#define NUM_BROKEN_KERNELS (sizeof(broken_kernels) / sizeof(broken_kernels[0]))

#endif /* BROKEN_KERNELS_H */
