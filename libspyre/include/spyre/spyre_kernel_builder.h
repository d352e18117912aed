/* SPDX-License-Identifier: MIT */
/*
 * Writing kernels of your own.
 *
 * A kernel is a program for some of the card's 32 cores.  Each core's part
 * has scratchpad buffers, streams that move 128-byte sticks from a source
 * endpoint through a FIFO to a destination endpoint, and ops that fire as
 * their input sticks arrive.  An endpoint is device memory (a kernel
 * argument plus an offset), a scratchpad buffer, an op's input or output, or
 * another core's stream over the ring; the loops of a memory endpoint are up
 * to four (count, stride) pairs, innermost first.
 *
 * Describe the program with a spyre_kernel_builder, then build the image
 * (the format in spyre_program.h) and load it with spyre_kernel_load(), or
 * do both with spyre_kernel_builder_load().  Every call checks what it is
 * given; a mistake returns SPYRE_ERROR_INVALID_ARGUMENT with a
 * spyre_last_error_detail() naming the core, the stream or op and the field
 * ("core 3 stream 1: dst.count[0] x ... = 64 sticks, total_sticks is 32").
 *
 * docs/kernels.md walks through one; docs/engine.md defines each field's
 * semantics and the timing model.
 *
 * Thread safety: a builder is used by one thread at a time.
 */
#ifndef SPYRE_KERNEL_BUILDER_H
#define SPYRE_KERNEL_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "spyre.h"
#include "spyre_program.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct spyre_kernel_builder spyre_kernel_builder;

/* One end of a stream.  kind is SPK_EP_OP, SPK_EP_DRAM, SPK_EP_SCRATCH or
 * SPK_EP_RING; the constructors below fill the rest. */
typedef struct spyre_endpoint {
	uint8_t kind;
	uint16_t ref;		/* DRAM: argument index; SCRATCH: buffer; RING: peer's stream */
	uint32_t core;		/* RING: the sending core (source end), or the mask of
				 * receiving cores (destination end) */
	uint64_t offset;	/* DRAM, SCRATCH: bytes from the argument or buffer start */
	uint32_t count[SPK_EP_DIMS];	/* DRAM, SCRATCH: loop counts, innermost first */
	int64_t stride[SPK_EP_DIMS];	/* byte strides (multiples of 128), innermost first */
} spyre_endpoint;

/* An op.  in[] are input streams (unused: SPK_NONE, after the used ones),
 * out the output stream; a firing consumes rows x row_elems elements per
 * input and produces its output rows. */
typedef struct spyre_op_desc {
	uint8_t opcode;		/* SPK_OPC_* */
	uint8_t dtype_in;	/* SPK_DT_* */
	uint8_t dtype_out;
	uint8_t flags;		/* SPK_OPF_* */
	uint16_t in[3];
	uint16_t out;
	uint16_t acc_buffer;	/* matmul: fp32 accumulator buffer; else SPK_NONE */
	uint32_t firings;	/* times the op fires */
	uint32_t rows;		/* rows per firing (matmul: M) */
	uint32_t row_elems;	/* elements per row (matmul: N) */
	uint32_t k;		/* matmul: K per firing; else 0 */
	uint32_t k_steps;	/* matmul: firings summed per output tile; else 0 */
	float imm0;		/* scale, fill value or epsilon */
} spyre_op_desc;

/* An op's input or output end. */
static inline spyre_endpoint spyre_endpoint_op(void)
{
	spyre_endpoint e = { SPK_EP_OP, 0, 0, 0, { 0, 0, 0, 0 }, { 0, 0, 0, 0 } };
	return e;
}

/* @sticks contiguous sticks of kernel argument @arg from byte @offset. */
static inline spyre_endpoint spyre_endpoint_dram(uint16_t arg, uint64_t offset, uint32_t sticks)
{
	spyre_endpoint e = { SPK_EP_DRAM, arg, 0, offset, { sticks, 1, 1, 1 },
			     { SPK_STICK_BYTES, 0, 0, 0 } };
	return e;
}

/* @sticks contiguous sticks of scratchpad buffer @buffer from byte @offset. */
static inline spyre_endpoint spyre_endpoint_scratch(uint16_t buffer, uint64_t offset,
						    uint32_t sticks)
{
	spyre_endpoint e = { SPK_EP_SCRATCH, buffer, 0, offset, { sticks, 1, 1, 1 },
			     { SPK_STICK_BYTES, 0, 0, 0 } };
	return e;
}

/* As a source: stream @peer_stream of core @core sends to us.  As a
 * destination: we send to stream @peer_stream of every core in mask @core. */
static inline spyre_endpoint spyre_endpoint_ring(uint16_t peer_stream, uint32_t core)
{
	spyre_endpoint e = { SPK_EP_RING, peer_stream, core, 0, { 0, 0, 0, 0 },
			     { 0, 0, 0, 0 } };
	return e;
}

/* An op with no streams bound yet (in[], out and acc_buffer SPK_NONE). */
static inline spyre_op_desc spyre_op_desc_init(uint8_t opcode, uint8_t dtype_in,
					       uint8_t dtype_out, uint32_t firings,
					       uint32_t rows, uint32_t row_elems)
{
	spyre_op_desc op = { opcode, dtype_in, dtype_out, 0, { SPK_NONE, SPK_NONE, SPK_NONE },
			     SPK_NONE, SPK_NONE, firings, rows, row_elems, 0, 0, 0.0f };
	return op;
}

/* A builder for a kernel with @num_args u64 arguments (device addresses or
 * values set with spyre_kernel_set_arg*() before a launch), 0 to SPK_MAX_ARGS. */
spyre_status spyre_kernel_builder_create(uint32_t num_args, spyre_kernel_builder **builder);
/* NULL is accepted.  Unlike runtime objects, a builder is not in the handle
 * registry (it belongs to no device): it must not be used once destroyed. */
spyre_status spyre_kernel_builder_destroy(spyre_kernel_builder *builder);

/* A scratchpad buffer of @bytes (a multiple of 128) on @core, after the
 * core's previous buffers; its index in *@buffer.  A core takes part in the
 * kernel from its first buffer, stream or op. */
spyre_status spyre_kernel_builder_add_buffer(spyre_kernel_builder *builder, uint32_t core,
					     uint32_t bytes, uint16_t *buffer);

/* A stream on @core moving @total_sticks from @src to @dst through a FIFO of
 * @fifo_sticks (a buffer of its own, added here); its index in *@stream. */
spyre_status spyre_kernel_builder_add_stream(spyre_kernel_builder *builder, uint32_t core,
					     const spyre_endpoint *src,
					     const spyre_endpoint *dst, uint32_t total_sticks,
					     uint32_t fifo_sticks, uint16_t *stream);

/* Stream @stream of @core starts moving only once stream @after has finished. */
spyre_status spyre_kernel_builder_stream_after(spyre_kernel_builder *builder, uint32_t core,
					       uint16_t stream, uint16_t after);

/* An op on @core; its index in *@op_index (may be NULL). */
spyre_status spyre_kernel_builder_add_op(spyre_kernel_builder *builder, uint32_t core,
					 const spyre_op_desc *op, uint16_t *op_index);

/* Check the whole program (bindings between ops and streams, stick counts,
 * ring pairs, scratchpad use) and write the image: *@image is malloc'd (the
 * caller free()s it), *@bytes its size.  The builder stays usable. */
spyre_status spyre_kernel_builder_build(spyre_kernel_builder *builder, void **image,
					size_t *bytes);

/* Build, check against @dev's scratchpad size, and spyre_kernel_load(); the
 * kernel gets the builder's name, if it was given one. */
spyre_status spyre_kernel_builder_load(spyre_kernel_builder *builder, spyre_device *dev,
				       spyre_kernel **kernel);

/* The name spyre_kernel_builder_load() gives its kernels (since 0.4;
 * spyre_kernel_set_name()'s rules, SPYRE_KERNEL_NAME_MAX).  Traces and
 * error details then say "kernel 'my_gelu' ..." rather than "kernel 17". */
spyre_status spyre_kernel_builder_set_name(spyre_kernel_builder *builder, const char *name);

#ifdef __cplusplus
}
#endif

#endif /* SPYRE_KERNEL_BUILDER_H */
