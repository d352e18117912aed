// SPDX-License-Identifier: MIT
/*
 * Softmax, layernorm and rmsnorm along the last dimension: row-wise
 * kernels; gamma and beta are single rows kept in each core's scratchpad.
 */
#include <math.h>

#include "../error.h"
#include "plan.h"

static spyre_status check_xy(const char *fn, const spyre_layout *x, const spyre_layout *y)
{
	spyre_status st;
	char xs[64], ys[64];

	if ((st = ops_check_layout(fn, "x", x)) || (st = ops_check_layout(fn, "y", y)))
		return st;
	if (!ops_same_shape(x, y)) {
		ops_shape_str(x, xs, sizeof(xs));
		ops_shape_str(y, ys, sizeof(ys));
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: y is %s, x is %s", fn,
				       ys, xs);
	}
	return SPYRE_SUCCESS;
}

spyre_status ops_gen_softmax(const spyre_layout *x, const spyre_layout *y, int log,
			     struct ops_plan *plan)
{
	struct rw_spec s = { .fn = log ? "spyre_op_log_softmax" : "spyre_op_softmax" };
	spyre_status st = check_xy(s.fn, x, y);

	if (st)
		return st;
	s.opcode = log ? SPK_OPC_LOG_SOFTMAX : SPK_OPC_SOFTMAX;
	s.din = x->dtype;
	s.dout = y->dtype;
	s.row_elems = ops_last_dim(x);
	s.nin = 1;
	s.in[0] = (struct rw_input){ x, 0, RW_FULL };
	s.out = y;
	s.out_arg = 1;
	s.num_args = 2;
	return ops_rowwise(&s, plan);
}

/* gamma/beta: one row of x's last dim, x's dtype. */
static spyre_status check_param(const char *fn, const char *name, const spyre_layout *p,
				const spyre_layout *x)
{
	spyre_status st = ops_check_layout(fn, name, p);

	if (st)
		return st;
	if (p->rows != 1 || ops_last_dim(p) != ops_last_dim(x))
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s: %s must be one row of %u elements", fn, name,
				       ops_last_dim(x));
	if (p->dtype != x->dtype)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: %s is %s, x is %s", fn,
				       name, ops_dtype_name(p->dtype), ops_dtype_name(x->dtype));
	return SPYRE_SUCCESS;
}

spyre_status ops_gen_norm(int rms, const spyre_layout *x, const spyre_layout *gamma,
			  const spyre_layout *beta, float eps, const spyre_layout *y,
			  struct ops_plan *plan)
{
	struct rw_spec s = { .fn = rms ? "spyre_op_rmsnorm" : "spyre_op_layernorm" };
	spyre_status st = check_xy(s.fn, x, y);

	if (st)
		return st;
	if (!isfinite(eps) || eps < 0)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s: eps must be finite and >= 0", s.fn);
	if (rms && beta)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: rmsnorm has no beta",
				       s.fn);
	if (beta && !gamma)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s: beta needs gamma (pass a row of ones)", s.fn);
	if ((gamma && (st = check_param(s.fn, "gamma", gamma, x))) ||
	    (beta && (st = check_param(s.fn, "beta", beta, x))))
		return st;
	s.opcode = rms ? SPK_OPC_RMSNORM : SPK_OPC_LAYERNORM;
	s.imm0 = eps;
	s.din = x->dtype;
	s.dout = y->dtype;
	s.row_elems = ops_last_dim(x);
	s.in[s.nin++] = (struct rw_input){ x, 0, RW_FULL };
	if (gamma) {
		s.in[s.nin] = (struct rw_input){ gamma, (uint16_t)s.nin, RW_ROW };
		s.nin++;
	}
	if (beta) {
		s.in[s.nin] = (struct rw_input){ beta, (uint16_t)s.nin, RW_ROW };
		s.nin++;
	}
	s.out = y;
	s.out_arg = (uint16_t)s.nin;
	s.num_args = s.nin + 1;
	return ops_rowwise(&s, plan);
}
