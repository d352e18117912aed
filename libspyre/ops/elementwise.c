// SPDX-License-Identifier: MIT
/*
 * Elementwise ops (add, sub, mul, max, scale, relu, gelu, silu, exp, rsqrt,
 * copy/convert): one row-wise kernel; a binary op's second operand may be
 * a single row broadcast over every row (a bias), kept in the scratchpad.
 */
#include <math.h>

#include "../error.h"
#include "plan.h"

static const struct {
	uint8_t opcode, binary;
	const char *name;
} eltwise_ops[] = {
	[SPYRE_OP_ADD] = { SPK_OPC_ADD, 1, "add" },
	[SPYRE_OP_SUB] = { SPK_OPC_SUB, 1, "sub" },
	[SPYRE_OP_MUL] = { SPK_OPC_MUL, 1, "mul" },
	[SPYRE_OP_MAX] = { SPK_OPC_MAX, 1, "max" },
	[SPYRE_OP_SCALE] = { SPK_OPC_SCALE, 0, "scale" },
	[SPYRE_OP_RELU] = { SPK_OPC_RELU, 0, "relu" },
	[SPYRE_OP_GELU] = { SPK_OPC_GELU, 0, "gelu" },
	[SPYRE_OP_SILU] = { SPK_OPC_SILU, 0, "silu" },
	[SPYRE_OP_EXP] = { SPK_OPC_EXP, 0, "exp" },
	[SPYRE_OP_RSQRT] = { SPK_OPC_RSQRT, 0, "rsqrt" },
	[SPYRE_OP_COPY] = { SPK_OPC_COPY, 0, "copy" },
};

#define NUM_ELTWISE (sizeof(eltwise_ops) / sizeof(eltwise_ops[0]))

int ops_eltwise_binary(spyre_eltwise op)
{
	return (unsigned)op < NUM_ELTWISE && eltwise_ops[op].binary;
}

const char *ops_eltwise_name(spyre_eltwise op)
{
	return (unsigned)op < NUM_ELTWISE ? eltwise_ops[op].name : "op?";
}

/* y is one row of x's last dimension (broadcast), or x's shape. */
static int is_row_of(const spyre_layout *y, const spyre_layout *x)
{
	return y->rows == 1 && ops_last_dim(y) == ops_last_dim(x);
}

spyre_status ops_gen_eltwise(spyre_eltwise op, const spyre_layout *x, const spyre_layout *y,
			     float scale, const spyre_layout *out, struct ops_plan *plan)
{
	static const char fn[] = "spyre_op_eltwise";
	struct rw_spec s = { .fn = fn };
	spyre_status st;
	char xs[64], os[64];

	if ((unsigned)op >= NUM_ELTWISE)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: unknown op %d", fn,
				       (int)op);
	if ((st = ops_check_layout(fn, "x", x)) || (st = ops_check_layout(fn, "out", out)))
		return st;
	if (!ops_same_shape(x, out)) {
		ops_shape_str(x, xs, sizeof(xs));
		ops_shape_str(out, os, sizeof(os));
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s %s: out is %s, x is %s", fn, eltwise_ops[op].name, os, xs);
	}
	s.num_args = 2;
	s.nin = 1;
	s.in[0] = (struct rw_input){ x, 0, RW_FULL };
	if (eltwise_ops[op].binary) {
		if ((st = ops_check_layout(fn, "y", y)))
			return st;
		if (y->dtype != x->dtype)
			return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
					       "%s %s: y is %s, x is %s", fn, eltwise_ops[op].name,
					       ops_dtype_name(y->dtype), ops_dtype_name(x->dtype));
		if (!ops_same_shape(x, y) && !is_row_of(y, x)) {
			ops_shape_str(x, xs, sizeof(xs));
			ops_shape_str(y, os, sizeof(os));
			return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
					       "%s %s: y is %s: neither x's shape %s nor one row",
					       fn, eltwise_ops[op].name, os, xs);
		}
		s.nin = 2;
		s.num_args = 3;
		s.in[1] = (struct rw_input){ y, 1,
					     ops_same_shape(x, y) ? RW_FULL : RW_ROW };
	} else if (y) {
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s %s: a unary op takes no y", fn, eltwise_ops[op].name);
	}
	if (op == SPYRE_OP_SCALE && !isfinite(scale))
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s scale: factor not finite",
				       fn);
	s.opcode = eltwise_ops[op].opcode;
	s.imm0 = op == SPYRE_OP_SCALE ? scale : 0;
	s.din = x->dtype;
	s.dout = out->dtype;
	s.row_elems = ops_last_dim(x);
	s.out = out;
	s.out_arg = (uint16_t)(s.num_args - 1);
	return ops_rowwise(&s, plan);
}
