// SPDX-License-Identifier: MIT
/*
 * Names of the op library's kernels: the op, its shape and dtype, so that
 * traces, spyre-prof and error details tell one op's launches from
 * another's ("matmul 64x256x64 fp16", "softmax 64x256 fp16").  A cached
 * plan serves one set of operand layouts only (launch.c's key holds them
 * all), so a kernel's name describes every launch of it.  docs/ops.md
 * "Kernel names" lists the forms.
 */
#include <stdio.h>

#include "plan.h"

static const char *const act_names[] = {
	[SPYRE_ACT_NONE] = "", [SPYRE_ACT_RELU] = " relu", [SPYRE_ACT_GELU] = " gelu",
	[SPYRE_ACT_SILU] = " silu",
};

static const char *act_name(int act)
{
	return act >= 0 && (unsigned)act < sizeof(act_names) / sizeof(act_names[0]) ?
	       act_names[act] : " act?";
}

/* "fp16", or "fp16->fp32" when the output's dtype differs. */
static void dtypes(char *buf, size_t n, const spyre_layout *in, const spyre_layout *out)
{
	if (in->dtype == out->dtype)
		snprintf(buf, n, "%s", ops_dtype_name(in->dtype));
	else
		snprintf(buf, n, "%s->%s", ops_dtype_name(in->dtype), ops_dtype_name(out->dtype));
}

/* The operand in slot @i (absent: NULL). */
static const spyre_layout *slot(const struct ops_name_args *a, unsigned i)
{
	return (a->present >> i) & 1 ? &a->l[i] : NULL;
}

void ops_kernel_name(const struct ops_name_args *a, unsigned launch, unsigned launches,
		     char *buf, size_t size)
{
	const spyre_layout *x = slot(a, 0);
	char shape[48], dt[16], tail[24] = "";
	int n = 0;

	if (!x || size < 2) {
		snprintf(buf, size, "op");
		return;
	}
	ops_shape_str(x, shape, sizeof(shape));
	if (launches > 1)
		snprintf(tail, sizeof(tail), " (%u/%u)", launch + 1, launches);
	switch (a->kind) {
	case OPS_K_MATMUL: {
		/* M x K x N: M counts every row of a (its leading dims). */
		const spyre_layout *b = slot(a, 1), *c = slot(a, 2);

		dtypes(dt, sizeof(dt), x, c ? c : x);
		n = snprintf(buf, size, "matmul %llux%ux%u %s%s%s", (unsigned long long)x->rows,
			     ops_last_dim(x), b ? ops_last_dim(b) : 0, dt, act_name(a->act), tail);
		break;
	}
	case OPS_K_MLP: {
		const spyre_layout *w1 = slot(a, 1), *w2 = slot(a, 2), *y = slot(a, 3);

		dtypes(dt, sizeof(dt), x, y ? y : x);
		n = snprintf(buf, size, "mlp %llux%ux%ux%u %s%s %s%s",
			     (unsigned long long)x->rows, ops_last_dim(x),
			     w1 ? ops_last_dim(w1) : 0, w2 ? ops_last_dim(w2) : 0, dt,
			     act_name(a->act), a->mlp_unfused ? "unfused" : "fused", tail);
		break;
	}
	case OPS_K_ELTWISE: {
		const spyre_layout *y = slot(a, 1);

		dtypes(dt, sizeof(dt), x, slot(a, 2) ? slot(a, 2) : x);
		n = snprintf(buf, size, "%s %s %s%s%s", ops_eltwise_name((spyre_eltwise)a->sub),
			     shape, dt, y && y->rows == 1 && x->rows > 1 ? " bcast" : "", tail);
		break;
	}
	case OPS_K_NORM:
		dtypes(dt, sizeof(dt), x, slot(a, 3) ? slot(a, 3) : x);
		n = snprintf(buf, size, "%s %s %s%s", a->sub ? "rmsnorm" : "layernorm", shape, dt,
			     tail);
		break;
	case OPS_K_PERMUTE: {
		char perm[16];
		int p = 0;

		for (uint32_t d = 0; d < x->ndim; d++)
			p += snprintf(perm + p, sizeof(perm) - (size_t)p, "%s%d", d ? "," : "",
				      (a->sub >> (2 * d)) & 3);
		dtypes(dt, sizeof(dt), x, slot(a, 1) ? slot(a, 1) : x);
		n = snprintf(buf, size, "permute %s %s [%s]%s", shape, dt, perm, tail);
		break;
	}
	default:	/* softmax, transpose: x, y */
		dtypes(dt, sizeof(dt), x, slot(a, 1) ? slot(a, 1) : x);
		n = snprintf(buf, size, "%s %s %s%s",
			     a->kind != OPS_K_SOFTMAX ? "transpose" :
			     a->sub ? "log_softmax" : "softmax", shape, dt, tail);
		break;
	}
	(void)n;	/* a longer name is cut at size - 1 bytes, still a valid name */
}
