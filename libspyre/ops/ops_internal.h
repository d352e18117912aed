/* SPDX-License-Identifier: MIT */
/*
 * The op library's program generators.  A generator is pure: from the
 * operands' layouts it builds a plan, one or more kernel images (the
 * include/spyre_program.h format, via include/spyre_program_builder.h)
 * run in order, each naming which operand every argument points at.
 * tests/host/test_ops.c runs the plans on the host engine; ops/launch.c
 * loads them on a device.
 */
#ifndef SPYRE_OPS_INTERNAL_H
#define SPYRE_OPS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "spyre/spyre.h"
#include "spyre/spyre_ops.h"
#include "spyre_program.h"

#define OPS_MAX_TENSOR_BYTES	(1ull << 48)
#define OPS_CORES		32
/* A core's scratchpad (2 MiB) minus the program's 64 KiB reservation
 * (shared/reference/spyre-hardware.md, "scratchpad"). */
#define OPS_SPAD_BYTES		((2u << 20) - (64u << 10))
#define OPS_MAX_OPERANDS	6

/* What a kernel argument points at: operand i of the plan (the op's
 * tensors in the order its generator documents), or the plan's temporary
 * device buffer. */
#define OPS_ARG_TEMP		0xff
/* A second temporary: the same buffer, from plan->temp2_offset on. */
#define OPS_ARG_TEMP2		0xfe

struct ops_launch {
	uint8_t *image;
	size_t bytes;
	uint32_t num_args;
	uint8_t arg[SPK_MAX_ARGS];	/* operand index, or OPS_ARG_TEMP */
};

struct ops_plan {
	unsigned num_launches, cap;
	struct ops_launch *launches;
	uint64_t temp_bytes;		/* device scratch memory the plan needs */
	uint64_t temp2_offset;		/* where OPS_ARG_TEMP2 starts in it (128-aligned) */
	char what[96];			/* "matmul 100x200x300 fp16->fp32 relu, 2 launches" */
};

void ops_plan_free(struct ops_plan *plan);

/*
 * The device address argument @a of launch @l takes, for code that runs a
 * plan on raw device addresses (the host tests and ops-bench; launch.c
 * binds buffers instead): operand i at ops[i] (@nops of them), the plan's
 * temporaries from @temp.  -1 if the argument names no operand.
 */
static inline int ops_launch_arg_addr(const struct ops_plan *plan, const struct ops_launch *l,
				      unsigned int a, const uint64_t *ops, unsigned int nops,
				      uint64_t temp, uint64_t *addr)
{
	unsigned int op = l->arg[a];

	if (op == OPS_ARG_TEMP)
		*addr = temp;
	else if (op == OPS_ARG_TEMP2)
		*addr = temp + plan->temp2_offset;
	else if (op < nops)
		*addr = ops[op];
	else
		return -1;
	return 0;
}

/* fp32 <-> fp16 / bf16, round to nearest even (pack and unpack use them). */
uint16_t ops_f32_to_fp16(float f);
float ops_fp16_to_f32(uint16_t h);
uint16_t ops_f32_to_bf16(float f);
float ops_bf16_to_f32(uint16_t b);

uint32_t ops_dtype_bytes(spyre_dtype dt);
int ops_dtype_valid(int dt);
const char *ops_dtype_name(spyre_dtype dt);

/* 1 for ops that take two inputs (add, sub, mul, max). */
int ops_eltwise_binary(spyre_eltwise op);
/* "add", "gelu" ...; "op?" for an unknown op. */
const char *ops_eltwise_name(spyre_eltwise op);

/* The op calls (launch.c's cache key, name.c's names). */
enum ops_kind {
	OPS_K_MATMUL, OPS_K_ELTWISE, OPS_K_SOFTMAX, OPS_K_NORM, OPS_K_MLP, OPS_K_TRANSPOSE,
	OPS_K_PERMUTE
};

/* An op call as its kernels' names describe it. */
struct ops_name_args {
	enum ops_kind kind;
	int sub;			/* eltwise: the op; norm: 1 = rms; permute: perm[i] in
					 * bits 2i..2i+1 */
	int act;			/* matmul, mlp: spyre_act */
	int mlp_unfused;		/* mlp: the plan is the unfused form */
	uint32_t present;		/* bit i: l[i] given */
	spyre_layout l[OPS_MAX_OPERANDS];	/* the operands in their call's slots */
};

/*
 * The name of launch @launch of @launches of an op (ops/name.c), at most
 * @size - 1 bytes: "matmul 64x256x64 fp16", "softmax 64x256 fp16",
 * "mlp 64x256x1024x256 fp16 gelu unfused (1/2)"; docs/ops.md lists them.
 */
void ops_kernel_name(const struct ops_name_args *a, unsigned launch, unsigned launches,
		     char *buf, size_t size);

/* Which variant of an op a generator builds. */
enum ops_mlp_mode { OPS_MLP_AUTO, OPS_MLP_FUSED, OPS_MLP_UNFUSED };

/*
 * Generators.  Operand order (= argument order) is given for each.
 * They validate the layouts (INVALID_ARGUMENT with a detail message).
 */
/* a, b, c */
spyre_status ops_gen_matmul(const spyre_layout *a, const spyre_layout *b, spyre_act act,
			    const spyre_layout *c, struct ops_plan *plan);
/* x, y (y NULL for unary ops), out */
spyre_status ops_gen_eltwise(spyre_eltwise op, const spyre_layout *x, const spyre_layout *y,
			     float scale, const spyre_layout *out, struct ops_plan *plan);
/* x, y; @log: log-softmax (SPK_OPC_LOG_SOFTMAX) */
spyre_status ops_gen_softmax(const spyre_layout *x, const spyre_layout *y, int log,
			     struct ops_plan *plan);
/* x, gamma (if any), beta (if any), y; rms: no beta */
spyre_status ops_gen_norm(int rms, const spyre_layout *x, const spyre_layout *gamma,
			  const spyre_layout *beta, float eps, const spyre_layout *y,
			  struct ops_plan *plan);
/* x, w1, w2, y (+ a temporary for the unfused form) */
spyre_status ops_gen_mlp(const spyre_layout *x, const spyre_layout *w1, spyre_act act,
			 const spyre_layout *w2, const spyre_layout *y, enum ops_mlp_mode mode,
			 struct ops_plan *plan);
/* x, y: y's dim i is x's dim perm[i].  Keeping the last dim last: one
 * strided copy; moving it: up to a copy, a transpose and a copy through
 * temporaries (OPS_ARG_TEMP, OPS_ARG_TEMP2). */
spyre_status ops_gen_permute(const spyre_layout *x, const uint32_t *perm, const spyre_layout *y,
			     struct ops_plan *plan);
/* x, y */
spyre_status ops_gen_transpose(const spyre_layout *x, const spyre_layout *y,
			       struct ops_plan *plan);

#endif /* SPYRE_OPS_INTERNAL_H */
