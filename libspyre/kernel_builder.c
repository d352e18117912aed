// SPDX-License-Identifier: MIT
/*
 * The public kernel-authoring API (spyre/spyre_kernel_builder.h): collects a
 * program in the project's image builder (include/spyre_program_builder.h),
 * checks each field as it is given and the whole program at build time, and
 * names the offending field in the error.  The checks follow the card's
 * loader (docs/engine.md, "Loader"), so a program built here loads; the card
 * still checks every image itself.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kernel.h"
#include "spyre/spyre_kernel_builder.h"
#include "spyre_program_builder.h"
#include "spyre_regs.h"

#define BUILDER_MAGIC 0x53504b42u	/* "SPKB" */
#define NUM_CORES 32u

struct spyre_kernel_builder {
	uint32_t magic;
	struct pb_program prog;
	char name[SPYRE_KERNEL_NAME_MAX + 1];	/* "" = the loader's default */
};

#define FAIL(...) return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, __VA_ARGS__)

static spyre_status check_builder(const spyre_kernel_builder *b)
{
	if (!b)
		FAIL("builder is NULL");
	if (b->magic != BUILDER_MAGIC)
		return spyre_set_error(SPYRE_ERROR_INVALID_HANDLE,
				       "builder is not a live spyre_kernel_builder");
	return SPYRE_SUCCESS;
}

static spyre_status check_core(uint32_t core)
{
	if (core >= NUM_CORES)
		FAIL("core %u: the card has cores 0-%u", core, NUM_CORES - 1);
	return SPYRE_SUCCESS;
}

SPYRE_EXPORT spyre_status spyre_kernel_builder_create(uint32_t num_args,
						      spyre_kernel_builder **builder)
{
	spyre_kernel_builder *b;

	if (!builder)
		FAIL("builder pointer is NULL");
	*builder = NULL;
	if (num_args > SPK_MAX_ARGS)
		FAIL("num_args %u: at most %u", num_args, SPK_MAX_ARGS);
	b = calloc(1, sizeof(*b));
	if (!b)
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a kernel builder");
	b->magic = BUILDER_MAGIC;
	b->prog.num_args = num_args;
	*builder = b;
	return spyre_done(SPYRE_SUCCESS);
}

SPYRE_EXPORT spyre_status spyre_kernel_builder_destroy(spyre_kernel_builder *builder)
{
	spyre_status st;

	if (!builder)
		return spyre_done(SPYRE_SUCCESS);
	st = check_builder(builder);
	if (st)
		return st;
	builder->magic = 0;
	free(builder);
	return spyre_done(SPYRE_SUCCESS);
}

/* Room on @core for one more buffer of @bytes (@what names it in errors). */
static spyre_status check_buffer_room(const struct pb_core *c, uint32_t core, uint32_t bytes,
				      const char *what)
{
	if (!bytes || bytes % SPK_STICK_BYTES)
		FAIL("core %u %s: %u bytes is not a non-zero multiple of %u", core, what, bytes,
		     SPK_STICK_BYTES);
	if (c->num_buffers >= SPK_MAX_BUFFERS)
		FAIL("core %u %s: more than %u buffers (each stream's FIFO is one)", core, what,
		     SPK_MAX_BUFFERS);
	if ((uint64_t)c->spad_bytes + SPK_SPAD_RESERVED_BYTES + bytes > SPYRE_SCRATCHPAD_MAX)
		FAIL("core %u %s: %u bytes more pass the largest scratchpad (%u bytes)", core,
		     what, bytes, SPYRE_SCRATCHPAD_MAX);
	return SPYRE_SUCCESS;
}

SPYRE_EXPORT spyre_status spyre_kernel_builder_add_buffer(spyre_kernel_builder *builder,
							  uint32_t core, uint32_t bytes,
							  uint16_t *buffer)
{
	spyre_status st = check_builder(builder);
	uint16_t i;

	if (st || (st = check_core(core)))
		return st;
	st = check_buffer_room(&builder->prog.cores[core], core, bytes, "buffer");
	if (st)
		return st;
	i = pb_buffer(pb_core(&builder->prog, core), bytes);
	if (buffer)
		*buffer = i;
	return spyre_done(SPYRE_SUCCESS);
}

static struct pb_endpoint to_pb_endpoint(const spyre_endpoint *e)
{
	struct pb_endpoint p = { e->kind, e->ref, e->core, e->offset, { 0 }, { 0 } };

	for (int d = 0; d < SPK_EP_DIMS; d++) {
		p.count[d] = e->count[d];
		p.stride[d] = e->stride[d];
	}
	return p;
}

/* Field-by-field checks of one endpoint that need nothing added later. */
static spyre_status check_endpoint_fields(uint32_t core, unsigned stream, const char *end,
					  const spyre_endpoint *e)
{
	switch (e->kind) {
	case SPK_EP_OP:
		if (e->ref || e->core || e->offset)
			FAIL("core %u stream %u: %s is an op end and must have ref, core and offset 0",
			     core, stream, end);
		for (int d = 0; d < SPK_EP_DIMS; d++)
			if (e->count[d] || e->stride[d])
				FAIL("core %u stream %u: %s is an op end and must have count[%d] and stride[%d] 0",
				     core, stream, end, d, d);
		return SPYRE_SUCCESS;
	case SPK_EP_RING:
		if (e->offset)
			FAIL("core %u stream %u: %s is a ring end and has no offset", core, stream, end);
		for (int d = 0; d < SPK_EP_DIMS; d++)
			if (e->count[d] || e->stride[d])
				FAIL("core %u stream %u: %s is a ring end and has no loops (count[%d], stride[%d])",
				     core, stream, end, d, d);
		return SPYRE_SUCCESS;
	case SPK_EP_DRAM:
	case SPK_EP_SCRATCH:
		if (e->core)
			FAIL("core %u stream %u: %s.core is for ring ends; a memory end has 0",
			     core, stream, end);
		if (e->offset % SPK_STICK_BYTES)
			FAIL("core %u stream %u: %s.offset %llu is not a multiple of %u", core, stream,
			     end, (unsigned long long)e->offset, SPK_STICK_BYTES);
		for (int d = 0; d < SPK_EP_DIMS; d++) {
			if (!e->count[d])
				FAIL("core %u stream %u: %s.count[%d] is 0 (unused loops have count 1)",
				     core, stream, end, d);
			if (e->stride[d] % SPK_STICK_BYTES)
				FAIL("core %u stream %u: %s.stride[%d] %lld is not a multiple of %u",
				     core, stream, end, d, (long long)e->stride[d], SPK_STICK_BYTES);
		}
		return SPYRE_SUCCESS;
	}
	FAIL("core %u stream %u: %s.kind %u is not SPK_EP_OP, _DRAM, _SCRATCH or _RING", core,
	     stream, end, e->kind);
}

SPYRE_EXPORT spyre_status spyre_kernel_builder_add_stream(spyre_kernel_builder *builder,
							  uint32_t core,
							  const spyre_endpoint *src,
							  const spyre_endpoint *dst,
							  uint32_t total_sticks,
							  uint32_t fifo_sticks, uint16_t *stream)
{
	spyre_status st = check_builder(builder);
	struct pb_core *c;
	unsigned idx;
	uint16_t i;

	if (st || (st = check_core(core)))
		return st;
	c = &builder->prog.cores[core];
	idx = c->num_streams;
	if (!src || !dst)
		FAIL("core %u stream %u: %s is NULL", core, idx, src ? "dst" : "src");
	if (c->num_streams >= SPK_MAX_STREAMS)
		FAIL("core %u: more than %u streams", core, SPK_MAX_STREAMS);
	if (!total_sticks)
		FAIL("core %u stream %u: total_sticks is 0", core, idx);
	if (!fifo_sticks)
		FAIL("core %u stream %u: fifo_sticks is 0", core, idx);
	if (src->kind == SPK_EP_RING && dst->kind == SPK_EP_RING)
		FAIL("core %u stream %u: src and dst are both ring ends", core, idx);
	st = check_endpoint_fields(core, idx, "src", src);
	if (!st)
		st = check_endpoint_fields(core, idx, "dst", dst);
	if (st)
		return st;
	if (src->kind == SPK_EP_RING && (src->core >= NUM_CORES || src->core == core))
		FAIL("core %u stream %u: src.core %u is not another core", core, idx, src->core);
	if (dst->kind == SPK_EP_RING && (!dst->core || (dst->core & (1u << core))))
		FAIL("core %u stream %u: dst.core mask 0x%x must name other cores", core, idx,
		     dst->core);
	/* The FIFO is a buffer of its own. */
	if (fifo_sticks > SPYRE_SCRATCHPAD_MAX / SPK_STICK_BYTES)
		FAIL("core %u stream %u: fifo_sticks %u pass the largest scratchpad", core, idx,
		     fifo_sticks);
	st = check_buffer_room(c, core, fifo_sticks * SPK_STICK_BYTES, "stream FIFO");
	if (st)
		return st;
	i = pb_stream(pb_core(&builder->prog, core), to_pb_endpoint(src), to_pb_endpoint(dst),
		      total_sticks, fifo_sticks);
	if (stream)
		*stream = i;
	return spyre_done(SPYRE_SUCCESS);
}

SPYRE_EXPORT spyre_status spyre_kernel_builder_stream_after(spyre_kernel_builder *builder,
							    uint32_t core, uint16_t stream,
							    uint16_t after)
{
	spyre_status st = check_builder(builder);
	struct pb_core *c;

	if (st || (st = check_core(core)))
		return st;
	c = &builder->prog.cores[core];
	if (stream >= c->num_streams)
		FAIL("core %u: stream %u of %u", core, stream, c->num_streams);
	if (after >= c->num_streams || after == stream)
		FAIL("core %u stream %u: after %u is not another stream of the core (%u)", core,
		     stream, after, c->num_streams);
	c->streams[stream].after = after;
	return spyre_done(SPYRE_SUCCESS);
}

SPYRE_EXPORT spyre_status spyre_kernel_builder_add_op(spyre_kernel_builder *builder,
						      uint32_t core, const spyre_op_desc *op,
						      uint16_t *op_index)
{
	spyre_status st = check_builder(builder);
	unsigned min_in, max_in, n = 0, idx;
	struct pb_core *c;
	struct pb_op *o;

	if (st || (st = check_core(core)))
		return st;
	c = &builder->prog.cores[core];
	idx = c->num_ops;
	if (!op)
		FAIL("core %u op %u: op is NULL", core, idx);
	if (c->num_ops >= SPK_MAX_OPS)
		FAIL("core %u: more than %u ops", core, SPK_MAX_OPS);
	if (!spk_op_inputs(op->opcode, &min_in, &max_in))
		FAIL("core %u op %u: opcode 0x%02x is not an SPK_OPC_*", core, idx, op->opcode);
	if (op->dtype_in > SPK_DT_MAX)
		FAIL("core %u op %u: dtype_in %u is not an SPK_DT_*", core, idx, op->dtype_in);
	if (op->dtype_out > SPK_DT_MAX)
		FAIL("core %u op %u: dtype_out %u is not an SPK_DT_*", core, idx, op->dtype_out);
	if (op->flags & ~SPK_OPF_ALL)
		FAIL("core %u op %u: flags 0x%x has undefined bits", core, idx, op->flags);
	if ((op->flags & SPK_OPF_ACROSS) && op->opcode != SPK_OPC_REDUCE_SUM &&
	    op->opcode != SPK_OPC_REDUCE_MAX && op->opcode != SPK_OPC_SOFTMAX &&
	    op->opcode != SPK_OPC_LOG_SOFTMAX)
		FAIL("core %u op %u: flags SPK_OPF_ACROSS is only for reductions and softmax",
		     core, idx);
	while (n < 3 && op->in[n] != SPK_NONE)
		n++;
	for (unsigned j = n; j < 3; j++)
		if (op->in[j] != SPK_NONE)
			FAIL("core %u op %u: in[%u] is set after an unused in[%u]", core, idx, j, n);
	if (n < min_in || n > max_in)
		FAIL("core %u op %u: %u inputs in in[], opcode 0x%02x takes %u to %u", core, idx,
		     n, op->opcode, min_in, max_in);
	if (op->out == SPK_NONE)
		FAIL("core %u op %u: out is not set", core, idx);
	if (!op->firings)
		FAIL("core %u op %u: firings is 0", core, idx);
	if (!op->rows || op->rows > SPK_MAX_ROWS)
		FAIL("core %u op %u: rows %u is not 1 to %u", core, idx, op->rows, SPK_MAX_ROWS);
	if (!op->row_elems || op->row_elems > SPK_MAX_ROW_ELEMS)
		FAIL("core %u op %u: row_elems %u is not 1 to %u", core, idx, op->row_elems,
		     SPK_MAX_ROW_ELEMS);
	if (!isfinite(op->imm0))
		FAIL("core %u op %u: imm0 is not finite", core, idx);
	if ((op->opcode == SPK_OPC_LAYERNORM || op->opcode == SPK_OPC_RMSNORM) && !(op->imm0 > 0))
		FAIL("core %u op %u: imm0 (epsilon) must be positive", core, idx);
	if (op->opcode == SPK_OPC_FILL && op->dtype_in != op->dtype_out)
		FAIL("core %u op %u: a fill has one data type (dtype_in %u, dtype_out %u)", core,
		     idx, op->dtype_in, op->dtype_out);
	if (op->opcode == SPK_OPC_MATMUL) {
		if (!op->k || op->k > SPK_MAX_ROW_ELEMS)
			FAIL("core %u op %u: k %u is not 1 to %u", core, idx, op->k,
			     SPK_MAX_ROW_ELEMS);
		if (!op->k_steps || op->firings % op->k_steps)
			FAIL("core %u op %u: k_steps %u does not divide firings %u", core, idx,
			     op->k_steps, op->firings);
		if (op->acc_buffer == SPK_NONE)
			FAIL("core %u op %u: a matmul needs acc_buffer", core, idx);
	} else if (op->k || op->k_steps || op->acc_buffer != SPK_NONE) {
		FAIL("core %u op %u: k, k_steps and acc_buffer are for matmul only", core, idx);
	}
	o = pb_op(pb_core(&builder->prog, core), op->opcode, op->dtype_in, op->dtype_out, op->firings,
		  op->rows, op->row_elems);
	o->flags = op->flags;
	memcpy(o->in, op->in, sizeof(o->in));
	o->out = op->out;
	o->acc_buffer = op->acc_buffer;
	o->k = op->k;
	o->k_steps = op->k_steps;
	o->imm0 = op->imm0;
	if (op_index)
		*op_index = (uint16_t)idx;
	return spyre_done(SPYRE_SUCCESS);
}

/* Sticks a firing of @op takes on input @j (j < 0: gives on its output). */
static uint64_t op_sticks(const struct pb_op *op, int j)
{
	uint64_t row_in = spk_sticks_for(op->row_elems, op->dtype_in);
	uint64_t row_out = spk_sticks_for(op->row_elems, op->dtype_out);

	if (j >= 0) {
		if (op->opcode == SPK_OPC_MATMUL)
			return j == 0 ? (uint64_t)op->rows * spk_sticks_for(op->k, op->dtype_in) :
					(uint64_t)op->k * row_in;
		return op->rows * row_in;
	}
	switch (op->opcode) {
	case SPK_OPC_REDUCE_SUM:
	case SPK_OPC_REDUCE_MAX:
		return op->flags & SPK_OPF_ACROSS ? row_out : op->rows;
	case SPK_OPC_TRANSPOSE:
		return (uint64_t)op->row_elems * spk_sticks_for(op->rows, op->dtype_out);
	}
	return op->rows * row_out;
}

/* A memory end's loops: their product is the stream's sticks, and a
 * scratchpad end stays inside its buffer. */
static spyre_status check_pattern(uint32_t core, unsigned i, const char *end,
				  const struct pb_core *c, const struct pb_endpoint *e,
				  uint32_t total)
{
	uint64_t product = 1;
	int64_t lo = 0, hi = 0;

	for (int d = 0; d < SPK_EP_DIMS; d++) {
		int64_t span;

		product *= e->count[d];
		if (product > total)
			break;
		if (__builtin_mul_overflow(e->stride[d], (int64_t)e->count[d] - 1, &span) ||
		    __builtin_add_overflow(span > 0 ? hi : lo, span, span > 0 ? &hi : &lo))
			FAIL("core %u stream %u: %s.stride[%d] x count[%d] overflows", core, i, end,
			     d, d);
	}
	if (product != total)
		FAIL("core %u stream %u: %s.count[0] x ... x count[3] = %llu%s sticks, total_sticks is %u",
		     core, i, end, (unsigned long long)product, product > total ? " or more" : "",
		     total);
	if (e->kind == SPK_EP_SCRATCH) {
		uint32_t bytes = c->buf_bytes[e->ref];

		if (e->offset >= bytes || (int64_t)e->offset + lo < 0 ||
		    hi > (int64_t)bytes || (int64_t)e->offset + hi + SPK_STICK_BYTES > (int64_t)bytes)
			FAIL("core %u stream %u: %s pattern (offset %llu, strides) leaves buffer %u of %u bytes",
			     core, i, end, (unsigned long long)e->offset, e->ref, bytes);
	}
	return SPYRE_SUCCESS;
}

/* Stream @i's two ends: arguments, buffers and access patterns in range. */
static spyre_status check_stream_ends(const struct pb_program *p, const struct pb_core *c,
				      uint32_t core, unsigned i)
{
	const struct pb_stream *s = &c->streams[i];
	const struct pb_endpoint *ends[2] = { &s->src, &s->dst };
	spyre_status st;

	for (int e = 0; e < 2; e++) {
		const struct pb_endpoint *ep = ends[e];
		const char *name = e ? "dst" : "src";

		if (ep->kind == SPK_EP_DRAM && ep->ref >= p->num_args)
			FAIL("core %u stream %u: %s.ref is argument %u; the kernel has %u",
			     core, i, name, ep->ref, p->num_args);
		if (ep->kind == SPK_EP_SCRATCH) {
			if (ep->ref >= c->num_buffers)
				FAIL("core %u stream %u: %s.ref is buffer %u; core %u has %u",
				     core, i, name, ep->ref, core, c->num_buffers);
			for (unsigned j = 0; j < c->num_streams; j++)
				if (c->streams[j].fifo_buffer == ep->ref)
					FAIL("core %u stream %u: %s.ref is buffer %u, the FIFO of stream %u",
					     core, i, name, ep->ref, j);
		}
		if (ep->kind == SPK_EP_DRAM || ep->kind == SPK_EP_SCRATCH) {
			st = check_pattern(core, i, name, c, ep, s->total_sticks);
			if (st)
				return st;
		}
	}
	return SPYRE_SUCCESS;
}

/* Stream @i of @core on the ring: each end names its peer, which names it back. */
static spyre_status check_ring_pairs(const struct pb_program *p, uint32_t core, unsigned i)
{
	const struct pb_stream *s = &p->cores[core].streams[i];

	if (s->dst.kind == SPK_EP_RING) {
		for (uint32_t peer = 0; peer < NUM_CORES; peer++) {
			const struct pb_core *pc = &p->cores[peer];
			const struct pb_stream *ps;

			if (!(s->dst.core & (1u << peer)))
				continue;
			ps = (p->core_mask & (1u << peer)) && s->dst.ref < pc->num_streams ?
				     &pc->streams[s->dst.ref] : NULL;
			if (!ps || ps->src.kind != SPK_EP_RING || ps->src.core != core ||
			    ps->src.ref != i || ps->total_sticks != s->total_sticks)
				FAIL("core %u stream %u: dst sends to core %u stream %u, which must be a ring source naming core %u stream %u with %u sticks",
				     core, i, peer, s->dst.ref, core, i, s->total_sticks);
		}
	}
	if (s->src.kind == SPK_EP_RING) {
		const struct pb_core *pc = &p->cores[s->src.core];
		const struct pb_stream *ps;

		ps = (p->core_mask & (1u << s->src.core)) && s->src.ref < pc->num_streams ?
			     &pc->streams[s->src.ref] : NULL;
		if (!ps || ps->dst.kind != SPK_EP_RING || !(ps->dst.core & (1u << core)) ||
		    ps->dst.ref != i)
			FAIL("core %u stream %u: src receives from core %u stream %u, which must be a ring destination naming core %u stream %u",
			     core, i, s->src.core, s->src.ref, core, i);
	}
	return SPYRE_SUCCESS;
}

/* Which op produces and consumes each stream of a core (-1: none). */
struct op_bindings {
	int producer[SPK_MAX_STREAMS], consumer[SPK_MAX_STREAMS];
};

/* Op @o's stream @j (-1: out, else in[j]): an op end, bound once, with the
 * op's stick counts. */
static spyre_status check_op_stream(const struct pb_core *c, uint32_t core, unsigned o, int j,
				    struct op_bindings *b)
{
	const struct pb_op *op = &c->ops[o];
	uint64_t fire_out = op->opcode == SPK_OPC_MATMUL ? op->firings / op->k_steps :
							   op->firings;
	uint16_t sid = j < 0 ? op->out : op->in[j];
	int *bound = j < 0 ? b->producer : b->consumer;
	const struct pb_stream *s;
	uint64_t per, all;
	char field[8];

	if (sid == SPK_NONE)
		return SPYRE_SUCCESS;
	snprintf(field, sizeof(field), j < 0 ? "out" : "in[%d]", j);
	if (sid >= c->num_streams)
		FAIL("core %u op %u: %s is stream %u; core %u has %u", core, o, field, sid, core,
		     c->num_streams);
	s = &c->streams[sid];
	if ((j < 0 ? s->src.kind : s->dst.kind) != SPK_EP_OP)
		FAIL("core %u op %u: %s is stream %u, whose %s is not spyre_endpoint_op()", core, o,
		     field, sid, j < 0 ? "src" : "dst");
	if (bound[sid] >= 0)
		FAIL("core %u op %u: %s is stream %u, already bound to op %d", core, o, field, sid,
		     bound[sid]);
	bound[sid] = (int)o;
	per = op_sticks(op, j);
	all = per * (j < 0 ? fire_out : op->firings);
	if (all != s->total_sticks)
		FAIL("core %u op %u: %s moves %llu sticks (%llu a firing), stream %u has total_sticks %u",
		     core, o, field, (unsigned long long)all, (unsigned long long)per, sid,
		     s->total_sticks);
	if (per > s->fifo_sticks)
		FAIL("core %u op %u: a firing needs %llu sticks on %s, stream %u's fifo_sticks is %u",
		     core, o, (unsigned long long)per, field, sid, s->fifo_sticks);
	return SPYRE_SUCCESS;
}

/* A core's ops: accumulators big enough, streams bound both ways. */
static spyre_status check_ops(const struct pb_core *c, uint32_t core)
{
	struct op_bindings b;
	spyre_status st;

	for (unsigned i = 0; i < SPK_MAX_STREAMS; i++)
		b.producer[i] = b.consumer[i] = -1;
	for (unsigned o = 0; o < c->num_ops; o++) {
		const struct pb_op *op = &c->ops[o];

		if (op->opcode == SPK_OPC_MATMUL) {
			uint64_t need = (uint64_t)op->rows *
					spk_sticks_for(op->row_elems, SPK_DT_FP32) * SPK_STICK_BYTES;

			if (op->acc_buffer >= c->num_buffers || c->buf_bytes[op->acc_buffer] < need)
				FAIL("core %u op %u: acc_buffer %u must be a buffer of at least %llu bytes",
				     core, o, op->acc_buffer, (unsigned long long)need);
		}
		for (int j = -1; j < 3; j++) {
			st = check_op_stream(c, core, o, j, &b);
			if (st)
				return st;
		}
	}
	for (unsigned i = 0; i < c->num_streams; i++) {
		if (c->streams[i].src.kind == SPK_EP_OP && b.producer[i] < 0)
			FAIL("core %u stream %u: src is an op end but no op has it as out", core, i);
		if (c->streams[i].dst.kind == SPK_EP_OP && b.consumer[i] < 0)
			FAIL("core %u stream %u: dst is an op end but no op has it in in[]", core, i);
	}
	return SPYRE_SUCCESS;
}

/* What build checks once everything is added. */
static spyre_status check_program(const struct pb_program *p, uint32_t spad_bytes)
{
	spyre_status st;

	if (!p->core_mask)
		FAIL("the kernel has no core: add a stream or an op");
	for (uint32_t core = 0; core < NUM_CORES; core++) {
		const struct pb_core *c = &p->cores[core];

		if (!(p->core_mask & (1u << core)))
			continue;
		if (SPK_SPAD_RESERVED_BYTES + (uint64_t)c->spad_bytes > spad_bytes)
			FAIL("core %u: buffers take %u bytes; a %u-byte scratchpad has %u above its program area",
			     core, c->spad_bytes, spad_bytes, spad_bytes - SPK_SPAD_RESERVED_BYTES);
		for (unsigned i = 0; i < c->num_streams; i++) {
			st = check_stream_ends(p, c, core, i);
			if (!st)
				st = check_ring_pairs(p, core, i);
			if (st)
				return st;
		}
		st = check_ops(c, core);
		if (st)
			return st;
	}
	return SPYRE_SUCCESS;
}

static spyre_status build(spyre_kernel_builder *b, uint32_t spad_bytes, void **image,
			  size_t *bytes)
{
	spyre_status st = check_builder(b);
	uint8_t *img;
	size_t len;

	if (st)
		return st;
	st = check_program(&b->prog, spad_bytes);
	if (st)
		return st;
	img = pb_serialize(&b->prog, &len);
	if (!img)
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for the kernel image");
	if (len > SPYRE_LAUNCH_MAX_IMAGE) {
		free(img);
		FAIL("the image is %zu bytes; the card loads at most %u", len,
		     SPYRE_LAUNCH_MAX_IMAGE);
	}
	*image = img;
	*bytes = len;
	return SPYRE_SUCCESS;
}

SPYRE_EXPORT spyre_status spyre_kernel_builder_build(spyre_kernel_builder *builder,
						     void **image, size_t *bytes)
{
	spyre_status st;

	if (!image || !bytes)
		FAIL("%s pointer is NULL", image ? "bytes" : "image");
	*image = NULL;
	*bytes = 0;
	st = build(builder, SPYRE_SCRATCHPAD_BYTES, image, bytes);
	return spyre_done(st);
}

SPYRE_EXPORT spyre_status spyre_kernel_builder_load(spyre_kernel_builder *builder,
						    spyre_device *dev, spyre_kernel **kernel)
{
	spyre_device_properties props;
	spyre_status st;
	void *img;
	size_t len;

	if (!kernel)
		FAIL("kernel pointer is NULL");
	*kernel = NULL;
	st = spyre_device_get_properties(dev, &props);
	if (st)
		return st;
	st = build(builder, (uint32_t)props.scratchpad_bytes, &img, &len);
	if (st)
		return st;
	st = spyre_kernel_load(dev, img, len, kernel);
	free(img);
	if (!st && builder->name[0]) {
		st = spyre_kernel_set_name(*kernel, builder->name);
		if (st) {
			spyre_kernel_destroy(*kernel);
			*kernel = NULL;
			return spyre_set_error(st, "naming the kernel failed");
		}
	}
	return st;
}

SPYRE_EXPORT spyre_status spyre_kernel_builder_set_name(spyre_kernel_builder *builder,
							const char *name)
{
	spyre_status st = check_builder(builder);

	if (!st)
		st = spyre_kernel_name_check(name);
	if (st)
		return st;
	snprintf(builder->name, sizeof(builder->name), "%s", name);
	return spyre_done(SPYRE_SUCCESS);
}
