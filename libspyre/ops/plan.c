// SPDX-License-Identifier: MIT
/*
 * Plans (a list of kernel images and their argument maps) and the row-wise
 * kernel shared by elementwise ops, softmax and the norms: rows split
 * over up to 32 cores, each core streaming its rows through one op in
 * firings of several rows, plus one firing for the remainder.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "plan.h"

void ops_plan_free(struct ops_plan *plan)
{
	if (!plan)
		return;
	for (unsigned i = 0; i < plan->num_launches; i++)
		free(plan->launches[i].image);
	free(plan->launches);
	memset(plan, 0, sizeof(*plan));
}

struct pb_program *ops_prog_new(uint32_t num_args)
{
	struct pb_program *p = calloc(1, sizeof(*p));

	if (p)
		p->num_args = num_args;
	return p;
}

/* Room for one more launch at the end of @plan. */
static spyre_status plan_reserve(struct ops_plan *plan)
{
	if (plan->num_launches == plan->cap) {
		unsigned cap = plan->cap ? plan->cap * 2 : 4;
		struct ops_launch *n = realloc(plan->launches, cap * sizeof(*n));

		if (!n)
			return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "op plan: out of memory");
		plan->launches = n;
		plan->cap = cap;
	}
	return SPYRE_SUCCESS;
}

spyre_status ops_plan_add(struct ops_plan *plan, struct pb_program *prog, const uint8_t *arg)
{
	struct ops_launch *l;
	spyre_status st = plan_reserve(plan);

	if (st)
		return st;
	l = &plan->launches[plan->num_launches];
	memset(l, 0, sizeof(*l));
	l->image = pb_serialize(prog, &l->bytes);
	if (!l->image)
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "op plan: out of memory");
	l->num_args = prog->num_args;
	memcpy(l->arg, arg, prog->num_args);
	plan->num_launches++;
	return SPYRE_SUCCESS;
}

spyre_status ops_plan_append(struct ops_plan *dst, struct ops_plan *src, const uint8_t *map)
{
	for (unsigned i = 0; i < src->num_launches; i++) {
		struct ops_launch *l = &src->launches[i];
		spyre_status st = plan_reserve(dst);

		if (st)
			return st;
		for (unsigned a = 0; a < l->num_args; a++)
			l->arg[a] = map[l->arg[a]];
		dst->launches[dst->num_launches++] = *l;
		l->image = NULL;	/* moved */
	}
	return SPYRE_SUCCESS;
}

/* Check that a core program stays within the loader's limits. */
int ops_core_fits(const struct pb_core *c)
{
	return c->num_buffers <= SPK_MAX_BUFFERS && c->num_streams <= SPK_MAX_STREAMS &&
	       c->num_ops <= SPK_MAX_OPS && c->spad_bytes <= OPS_SPAD_BYTES;
}

spyre_status ops_check_layout(const char *fn, const char *name, const spyre_layout *l)
{
	if (!l)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, name);
	if (!ops_dtype_valid((int)l->dtype) || l->ndim < 1 || l->ndim > SPYRE_TENSOR_MAX_DIMS ||
	    !l->rows || !l->row_sticks ||
	    l->bytes != l->rows * l->row_sticks * (uint64_t)SPYRE_STICK_BYTES)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s: %s has a malformed layout (use spyre_tensor_layout)",
				       fn, name);
	if (l->shape[l->ndim - 1] > SPYRE_OP_MAX_ROW)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s: %s's last dimension %u is over %u", fn, name,
				       l->shape[l->ndim - 1], SPYRE_OP_MAX_ROW);
	return SPYRE_SUCCESS;
}

uint32_t ops_last_dim(const spyre_layout *l)
{
	return l->shape[l->ndim - 1];
}

int ops_same_shape(const spyre_layout *a, const spyre_layout *b)
{
	return a->ndim == b->ndim && !memcmp(a->shape, b->shape, sizeof(a->shape));
}

void ops_shape_str(const spyre_layout *l, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (uint32_t d = 0; d < l->ndim && used < n; d++)
		used += (size_t)snprintf(buf + used, n - used, "%s%u", d ? "x" : "", l->shape[d]);
}

/* ------------------------------------------------------------------------
 * Row-wise kernels.
 * ------------------------------------------------------------------------ */

/* Streams of one op over rows [r0, r0 + rows) in firings of rpf rows. */
static void rw_op(const struct rw_spec *s, struct pb_core *c, const uint16_t *resident,
		  uint64_t r0, uint32_t rows, uint32_t rpf, uint32_t fifo_firings)
{
	uint32_t firings = rows / rpf;
	struct pb_op *op = pb_op(c, s->opcode, (uint8_t)s->din, (uint8_t)s->dout, firings, rpf,
				 s->row_elems);

	op->flags = s->flags;
	op->imm0 = s->imm0;
	for (unsigned i = 0; i < s->nin; i++) {
		const struct rw_input *in = &s->in[i];
		uint32_t rs = in->l->row_sticks;
		struct pb_endpoint e;

		if (in->mode == RW_FULL) {
			e = pb_linear(SPK_EP_DRAM, in->arg, r0 * rs * SPYRE_STICK_BYTES, rows * rs);
		} else {
			/* One row, re-read for every row: from the scratchpad copy. */
			e = pb_linear(SPK_EP_SCRATCH, resident[i], 0, rs);
			e.count[1] = rows;
			e.stride[1] = 0;
		}
		op->in[i] = pb_stream(c, e, pb_op_end(), rows * rs, fifo_firings * rpf * rs);
		if (in->mode == RW_ROW)
			c->streams[op->in[i]].after = resident[SPK_MAX_BUFFERS + i];
	}
	{
		uint32_t rs = s->out->row_sticks;

		op->out = pb_stream(c, pb_op_end(),
				    pb_linear(SPK_EP_DRAM, s->out_arg, r0 * rs * SPYRE_STICK_BYTES,
					      rows * rs),
				    rows * rs, fifo_firings * rpf * rs);
	}
}

/* Sticks of one row over every stream of the op (inputs and output). */
static uint64_t rw_row_sticks(const struct rw_spec *s)
{
	uint64_t n = s->out->row_sticks;

	for (unsigned i = 0; i < s->nin; i++)
		if (s->in[i].mode == RW_FULL)
			n += s->in[i].l->row_sticks;
	return n;
}

spyre_status ops_rowwise(const struct rw_spec *s, struct ops_plan *plan)
{
	uint64_t rows = s->out->rows, per_row = rw_row_sticks(s), resident_bytes = 0;
	/* Rows per launch: keep every launch well inside the engine's work bound. */
	uint64_t launch_rows = (1ull << 26) / per_row;
	uint8_t args[SPK_MAX_ARGS];
	spyre_status st = SPYRE_SUCCESS;

	for (unsigned i = 0; i < s->nin; i++)
		if (s->in[i].mode == RW_ROW)
			resident_bytes += 2ull * s->in[i].l->row_sticks * SPYRE_STICK_BYTES;
	if (resident_bytes + 2 * per_row * SPYRE_STICK_BYTES > OPS_SPAD_BYTES)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s: a row of %u elements does not fit a core's scratchpad",
				       s->fn, s->row_elems);
	if (!launch_rows)
		launch_rows = 1;
	for (uint32_t i = 0; i < s->num_args; i++)
		args[i] = (uint8_t)i;
	for (uint64_t base = 0; base < rows && !st; base += launch_rows) {
		uint64_t n = rows - base < launch_rows ? rows - base : launch_rows;
		unsigned cores = n < OPS_CORES ? (unsigned)n : OPS_CORES;
		struct pb_program *prog = ops_prog_new(s->num_args);

		if (!prog)
			return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "%s: out of memory", s->fn);
		for (unsigned core = 0; core < cores; core++) {
			uint64_t r0 = base + n * core / cores, r1 = base + n * (core + 1) / cores;
			uint32_t mine = (uint32_t)(r1 - r0), rpf, fifo = 2, tail;
			/* [i] resident buffer of input i; [64 + i] the stream loading it */
			uint16_t resident[SPK_MAX_BUFFERS + 3];
			struct pb_core *c = pb_core(prog, core);
			uint64_t avail = OPS_SPAD_BYTES - resident_bytes;

			/* Main firings double-buffered, the tail single: 3 x rpf rows. */
			rpf = (uint32_t)(avail / (3 * per_row * SPYRE_STICK_BYTES));
			if (!rpf) {
				rpf = 1;
				fifo = 1;
			}
			if (rpf > SPK_MAX_ROWS)
				rpf = SPK_MAX_ROWS;
			if (rpf > mine)
				rpf = mine;
			for (unsigned i = 0; i < s->nin; i++) {
				uint32_t rs;

				if (s->in[i].mode != RW_ROW)
					continue;
				rs = s->in[i].l->row_sticks;
				resident[i] = pb_buffer(c, rs * SPYRE_STICK_BYTES);
				resident[SPK_MAX_BUFFERS + i] =
					pb_stream(c, pb_linear(SPK_EP_DRAM, s->in[i].arg, 0, rs),
						  pb_linear(SPK_EP_SCRATCH, resident[i], 0, rs), rs,
						  rs);
			}
			rw_op(s, c, resident, r0, mine - mine % rpf, rpf, fifo);
			tail = mine % rpf;
			if (tail)
				rw_op(s, c, resident, r1 - tail, tail, tail, 1);
			if (!ops_core_fits(c)) {
				free(prog);
				return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
						       "%s: program does not fit a core", s->fn);
			}
		}
		st = ops_plan_add(plan, prog, args);
		free(prog);
	}
	return st;
}
