/* SPDX-License-Identifier: MIT */
/*
 * Builds kernel images (include/spyre_program.h): describe the program in
 * these structs, then pb_serialize() it.  The one builder of the project:
 * libspyre's op library (libspyre/ops/), the engine's tests, fuzz seeds,
 * qtest and benchmarks.  Header-only; it does not check the loader's
 * limits, so callers keep within SPK_MAX_*.
 */
#ifndef SPYRE_PROGRAM_BUILDER_H
#define SPYRE_PROGRAM_BUILDER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spyre_program.h"

struct pb_endpoint {
	uint8_t kind;
	uint16_t ref;
	uint32_t core;
	uint64_t offset;
	uint32_t count[SPK_EP_DIMS];
	int64_t stride[SPK_EP_DIMS];
};

struct pb_stream {
	uint16_t fifo_buffer;
	uint32_t fifo_sticks, total_sticks;
	uint16_t after;
	struct pb_endpoint src, dst;
};

struct pb_op {
	uint8_t opcode, dtype_in, dtype_out, flags;
	uint16_t in[3], out, acc_buffer;
	uint32_t firings, row_elems, rows, k, k_steps;
	float imm0;
};

struct pb_core {
	uint32_t spad_bytes;
	unsigned num_buffers, num_streams, num_ops;
	uint32_t buf_offset[SPK_MAX_BUFFERS + 1], buf_bytes[SPK_MAX_BUFFERS + 1];
	struct pb_stream streams[SPK_MAX_STREAMS + 1];
	struct pb_op ops[SPK_MAX_OPS + 1];
};

struct pb_program {
	uint32_t core_mask, num_args;
	struct pb_core cores[32];
};

static inline void pb_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void pb_put32(uint8_t *p, uint32_t v)
{
	pb_put16(p, (uint16_t)v);
	pb_put16(p + 2, (uint16_t)(v >> 16));
}

static inline void pb_put64(uint8_t *p, uint64_t v)
{
	pb_put32(p, (uint32_t)v);
	pb_put32(p + 4, (uint32_t)(v >> 32));
}

/* A fresh core: scratchpad buffers are laid out from SPK_SPAD_RESERVED_BYTES upwards. */
static inline struct pb_core *pb_core(struct pb_program *p, unsigned core)
{
	p->core_mask |= 1u << core;
	return &p->cores[core];
}

/* A buffer of `bytes` after the previous one; returns its index. */
static inline uint16_t pb_buffer(struct pb_core *c, uint32_t bytes)
{
	unsigned i = c->num_buffers++;
	uint32_t off = i ? c->buf_offset[i - 1] + c->buf_bytes[i - 1] : SPK_SPAD_RESERVED_BYTES;

	c->buf_offset[i] = off;
	c->buf_bytes[i] = bytes;
	if (off + bytes - SPK_SPAD_RESERVED_BYTES > c->spad_bytes)
		c->spad_bytes = off + bytes - SPK_SPAD_RESERVED_BYTES;
	return (uint16_t)i;
}

/* Contiguous sticks from offset. */
static inline struct pb_endpoint pb_linear(uint8_t kind, uint16_t ref, uint64_t offset,
					   uint32_t sticks)
{
	struct pb_endpoint e = { kind, ref, 0, offset, { sticks, 1, 1, 1 },
				 { 128, 0, 0, 0 } };
	return e;
}

static inline struct pb_endpoint pb_op_end(void)
{
	struct pb_endpoint e = { SPK_EP_OP, 0, 0, 0, { 0, 0, 0, 0 }, { 0, 0, 0, 0 } };
	return e;
}

static inline struct pb_endpoint pb_ring(uint16_t peer_stream, uint32_t core)
{
	struct pb_endpoint e = { SPK_EP_RING, peer_stream, core, 0, { 0, 0, 0, 0 },
				 { 0, 0, 0, 0 } };
	return e;
}

/* A stream with its own FIFO buffer of fifo_sticks; returns its index. */
static inline uint16_t pb_stream(struct pb_core *c, struct pb_endpoint src,
				 struct pb_endpoint dst, uint32_t total, uint32_t fifo_sticks)
{
	unsigned i = c->num_streams++;
	struct pb_stream *s = &c->streams[i];

	s->fifo_buffer = pb_buffer(c, fifo_sticks * 128);
	s->fifo_sticks = fifo_sticks;
	s->total_sticks = total;
	s->after = SPK_NONE;
	s->src = src;
	s->dst = dst;
	return (uint16_t)i;
}

static inline struct pb_op *pb_op(struct pb_core *c, uint8_t opcode, uint8_t din,
				  uint8_t dout, uint32_t firings, uint32_t rows,
				  uint32_t row_elems)
{
	struct pb_op *op = &c->ops[c->num_ops++];

	memset(op, 0, sizeof(*op));
	op->opcode = opcode;
	op->dtype_in = din;
	op->dtype_out = dout;
	op->in[0] = op->in[1] = op->in[2] = SPK_NONE;
	op->acc_buffer = SPK_NONE;
	op->firings = firings;
	op->rows = rows;
	op->row_elems = row_elems;
	return op;
}

static inline void pb_put_endpoint(uint8_t *p, const struct pb_endpoint *e)
{
	pb_put16(p + SPK_EP_REF, e->ref);
	pb_put32(p + SPK_EP_CORE, e->core);
	pb_put64(p + SPK_EP_OFFSET, e->offset);
	for (int d = 0; d < SPK_EP_DIMS; d++) {
		pb_put32(p + SPK_EP_COUNT + 4 * d, e->count[d]);
		pb_put64(p + SPK_EP_STRIDE + 8 * d, (uint64_t)e->stride[d]);
	}
}

static inline size_t pb_core_bytes(const struct pb_core *c)
{
	return SPK_PROG_HDR_BYTES + c->num_buffers * SPK_BUF_BYTES +
	       c->num_streams * SPK_STREAM_BYTES + c->num_ops * SPK_OP_BYTES;
}

static inline uint8_t *pb_put_core(uint8_t *p, const struct pb_core *c)
{
	pb_put16(p + SPK_PROG_NUM_BUFFERS, (uint16_t)c->num_buffers);
	pb_put16(p + SPK_PROG_NUM_STREAMS, (uint16_t)c->num_streams);
	pb_put16(p + SPK_PROG_NUM_OPS, (uint16_t)c->num_ops);
	p += SPK_PROG_HDR_BYTES;
	for (unsigned i = 0; i < c->num_buffers; i++, p += SPK_BUF_BYTES) {
		pb_put32(p + SPK_BUF_OFFSET, c->buf_offset[i]);
		pb_put32(p + SPK_BUF_SIZE, c->buf_bytes[i]);
	}
	for (unsigned i = 0; i < c->num_streams; i++, p += SPK_STREAM_BYTES) {
		const struct pb_stream *s = &c->streams[i];

		p[SPK_STREAM_SRC_KIND] = s->src.kind;
		p[SPK_STREAM_DST_KIND] = s->dst.kind;
		pb_put16(p + SPK_STREAM_FIFO_BUFFER, s->fifo_buffer);
		pb_put32(p + SPK_STREAM_FIFO_STICKS, s->fifo_sticks);
		pb_put32(p + SPK_STREAM_TOTAL_STICKS, s->total_sticks);
		pb_put16(p + SPK_STREAM_AFTER, s->after);
		pb_put_endpoint(p + SPK_STREAM_SRC, &s->src);
		pb_put_endpoint(p + SPK_STREAM_DST, &s->dst);
	}
	for (unsigned i = 0; i < c->num_ops; i++, p += SPK_OP_BYTES) {
		const struct pb_op *op = &c->ops[i];
		uint32_t imm;

		p[SPK_OP_OPCODE] = op->opcode;
		p[SPK_OP_DTYPE_IN] = op->dtype_in;
		p[SPK_OP_DTYPE_OUT] = op->dtype_out;
		p[SPK_OP_FLAGS] = op->flags;
		for (int j = 0; j < 3; j++)
			pb_put16(p + SPK_OP_IN + 2 * j, op->in[j]);
		pb_put16(p + SPK_OP_OUT, op->out);
		pb_put16(p + SPK_OP_ACC_BUFFER, op->acc_buffer);
		pb_put32(p + SPK_OP_FIRINGS, op->firings);
		pb_put32(p + SPK_OP_ROW_ELEMS, op->row_elems);
		pb_put32(p + SPK_OP_ROWS, op->rows);
		pb_put32(p + SPK_OP_K, op->k);
		pb_put32(p + SPK_OP_K_STEPS, op->k_steps);
		memcpy(&imm, &op->imm0, 4);
		pb_put32(p + SPK_OP_IMM0, imm);
	}
	return p;
}

/* The image in a malloc'd buffer (caller frees), its size in *len. */
static inline uint8_t *pb_serialize(const struct pb_program *prog, size_t *len)
{
	unsigned n = (unsigned)__builtin_popcount(prog->core_mask), e = 0;
	size_t size = SPK_HDR_BYTES + n * SPK_CORE_ENTRY_BYTES;
	uint8_t *img, *p;

	for (unsigned c = 0; c < 32; c++)
		if (prog->core_mask & (1u << c))
			size += pb_core_bytes(&prog->cores[c]);
	img = calloc(1, size);
	if (!img)
		return NULL;
	pb_put32(img + SPK_HDR_MAGIC, SPK_MAGIC);
	pb_put16(img + SPK_HDR_VERSION_MAJOR, SPK_VERSION_MAJOR);
	pb_put16(img + SPK_HDR_VERSION_MINOR, SPK_VERSION_MINOR);
	pb_put32(img + SPK_HDR_IMAGE_BYTES, (uint32_t)size);
	pb_put32(img + SPK_HDR_CORE_MASK, prog->core_mask);
	pb_put32(img + SPK_HDR_NUM_ARGS, prog->num_args);
	p = img + SPK_HDR_BYTES + n * SPK_CORE_ENTRY_BYTES;
	for (unsigned c = 0; c < 32; c++) {
		uint8_t *entry = img + SPK_HDR_BYTES + e * SPK_CORE_ENTRY_BYTES;
		const struct pb_core *core = &prog->cores[c];

		if (!(prog->core_mask & (1u << c)))
			continue;
		e++;
		pb_put32(entry + SPK_CORE_PROGRAM_OFFSET, (uint32_t)(p - img));
		pb_put32(entry + SPK_CORE_PROGRAM_BYTES, (uint32_t)pb_core_bytes(core));
		pb_put32(entry + SPK_CORE_SPAD_BYTES, core->spad_bytes);
		p = pb_put_core(p, core);
	}
	*len = size;
	return img;
}

#endif /* SPYRE_PROGRAM_BUILDER_H */
