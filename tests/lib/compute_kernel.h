/* SPDX-License-Identifier: MIT */
/*
 * A compute-bound kernel, for tests that need the card busy for seconds
 * without touching memory much: on core 0, @firings matmul firings of
 * 64x512 by 512x256 (fp16 in, fp32 out) accumulating into one tile, A and
 * B read again each firing (a stride-0 outer loop), C written once at the
 * end.  Arguments: A, B (zeros will do), C.  Each firing is 38401 units of
 * the loader's work bound (2^30), mostly MACs / 4096: 25000 firings are
 * 88% of it.  The host suite stops it with an abort, the guest suite with
 * a reset.
 */
#ifndef COMPUTE_KERNEL_H
#define COMPUTE_KERNEL_H

#include <string.h>

#include "spyre_program_builder.h"

#define COMPUTE_M	64
#define COMPUTE_K	512
#define COMPUTE_N	256
#define COMPUTE_A_STICKS	(COMPUTE_M * COMPUTE_K / 64)	/* fp16 */
#define COMPUTE_B_STICKS	(COMPUTE_K * COMPUTE_N / 64)
#define COMPUTE_C_STICKS	(COMPUTE_M * COMPUTE_N / 32)	/* fp32 */

static inline void compute_kernel_build(struct pb_program *prog, unsigned int firings)
{
	struct pb_endpoint a = pb_linear(SPK_EP_DRAM, 0, 0, COMPUTE_A_STICKS);
	struct pb_endpoint b = pb_linear(SPK_EP_DRAM, 1, 0, COMPUTE_B_STICKS);
	struct pb_core *core;
	struct pb_op *op;

	memset(prog, 0, sizeof(*prog));
	a.count[1] = b.count[1] = firings;
	prog->num_args = 3;
	core = pb_core(prog, 0);
	op = pb_op(core, SPK_OPC_MATMUL, SPK_DT_FP16, SPK_DT_FP32, firings, COMPUTE_M,
		   COMPUTE_N);
	op->k = COMPUTE_K;
	op->k_steps = firings;
	op->in[0] = pb_stream(core, a, pb_op_end(), COMPUTE_A_STICKS * firings,
			      COMPUTE_A_STICKS);
	op->in[1] = pb_stream(core, b, pb_op_end(), COMPUTE_B_STICKS * firings,
			      COMPUTE_B_STICKS);
	op->out = pb_stream(core, pb_op_end(),
			    pb_linear(SPK_EP_DRAM, 2, 0, COMPUTE_C_STICKS), COMPUTE_C_STICKS,
			    COMPUTE_C_STICKS);
	op->acc_buffer = pb_buffer(core, COMPUTE_C_STICKS * 128);
}

#endif /* COMPUTE_KERNEL_H */
