// SPDX-License-Identifier: MIT
/*
 * Writes the fuzz corpus's seed programs (valid kernels of every op and
 * stream kind) into the directory given: make fuzz-seeds.
 */
#include <stdio.h>

#include "spyre_program_builder.h"

static struct pb_program prog;

static void save(const char *dir, const char *name)
{
	char path[512];
	size_t len;
	uint8_t *img = pb_serialize(&prog, &len);
	FILE *f;

	snprintf(path, sizeof(path), "%s/seed-%s", dir, name);
	f = fopen(path, "wb");
	if (!f || !img || fwrite(img, 1, len, f) != len) {
		perror(path);
		exit(1);
	}
	fclose(f);
	free(img);
}

/* in -> op -> out on core 0, rows of n elements, one row per firing. */
static struct pb_op *row_op(uint8_t opcode, unsigned num_in, uint8_t dt, uint32_t rows,
			    uint32_t n)
{
	struct pb_core *c;
	struct pb_op *op;
	uint32_t per = (n + (dt == SPK_DT_FP32 ? 31 : 63)) / (dt == SPK_DT_FP32 ? 32 : 64);

	memset(&prog, 0, sizeof(prog));
	prog.num_args = 4;
	c = pb_core(&prog, 0);
	op = pb_op(c, opcode, dt, dt, rows, 1, n);
	for (unsigned i = 0; i < num_in; i++)
		op->in[i] = pb_stream(c, pb_linear(SPK_EP_DRAM, (uint16_t)i, 0, rows * per),
				      pb_op_end(), rows * per, 2 * per);
	op->out = pb_stream(c, pb_op_end(), pb_linear(SPK_EP_DRAM, 3, 0, rows * per), rows * per,
			    2 * per);
	return op;
}

int main(int argc, char **argv)
{
	static const struct { uint8_t opcode; unsigned in; const char *name; } ops[] = {
		{ SPK_OPC_COPY, 1, "copy" }, { SPK_OPC_FILL, 0, "fill" },
		{ SPK_OPC_ADD, 2, "add" }, { SPK_OPC_SUB, 2, "sub" }, { SPK_OPC_MUL, 2, "mul" },
		{ SPK_OPC_MAX, 2, "max" }, { SPK_OPC_SCALE, 1, "scale" },
		{ SPK_OPC_RELU, 1, "relu" }, { SPK_OPC_GELU, 1, "gelu" },
		{ SPK_OPC_SILU, 1, "silu" }, { SPK_OPC_EXP, 1, "exp" },
		{ SPK_OPC_RSQRT, 1, "rsqrt" }, { SPK_OPC_SOFTMAX, 1, "softmax" },
		{ SPK_OPC_LAYERNORM, 3, "layernorm" }, { SPK_OPC_RMSNORM, 2, "rmsnorm" },
	};
	const char *dir = argc > 1 ? argv[1] : "tests/fuzz/corpus";
	struct pb_core *c;
	struct pb_op *op;

	for (unsigned i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		op = row_op(ops[i].opcode, ops[i].in, SPK_DT_FP16, 3, 100);
		op->imm0 = 1e-5f;
		save(dir, ops[i].name);
	}
	op = row_op(SPK_OPC_REDUCE_SUM, 1, SPK_DT_BF16, 4, 70);
	prog.cores[0].ops[0].rows = 2;
	prog.cores[0].ops[0].firings = 2;
	prog.cores[0].ops[0].flags = SPK_OPF_ACROSS;
	prog.cores[0].streams[1].total_sticks = prog.cores[0].streams[1].dst.count[0] = 4;
	save(dir, "reduce-across");
	op = row_op(SPK_OPC_REDUCE_MAX, 1, SPK_DT_FP32, 3, 40);
	prog.cores[0].streams[1].total_sticks = prog.cores[0].streams[1].dst.count[0] = 3;
	prog.cores[0].streams[1].fifo_sticks = 2;
	save(dir, "reduce-along");

	/* Matmul 16x128x64 fp16, two k steps. */
	memset(&prog, 0, sizeof(prog));
	prog.num_args = 3;
	c = pb_core(&prog, 0);
	op = pb_op(c, SPK_OPC_MATMUL, SPK_DT_FP16, SPK_DT_FP32, 2, 16, 64);
	op->k = 64;
	op->k_steps = 2;
	op->in[0] = pb_stream(c, (struct pb_endpoint){ SPK_EP_DRAM, 0, 0, 0, { 1, 16, 2, 1 },
						       { 128, 256, 128, 0 } },
			      pb_op_end(), 32, 32);
	op->in[1] = pb_stream(c, pb_linear(SPK_EP_DRAM, 1, 0, 128), pb_op_end(), 128, 128);
	op->out = pb_stream(c, pb_op_end(), pb_linear(SPK_EP_DRAM, 2, 0, 32), 32, 32);
	op->acc_buffer = pb_buffer(c, 16 * 2 * 128);
	save(dir, "matmul");

	/* Ring multicast 0 -> {1, 31}, and a relayout through core 1's scratchpad. */
	memset(&prog, 0, sizeof(prog));
	prog.num_args = 3;
	pb_stream(pb_core(&prog, 0), pb_linear(SPK_EP_DRAM, 0, 0, 16),
		  pb_ring(0, 1u << 1 | 1u << 31), 16, 8);
	c = pb_core(&prog, 1);
	pb_stream(c, pb_ring(0, 0), (struct pb_endpoint){ SPK_EP_SCRATCH, 2, 0, 0, { 4, 4, 1, 1 },
							  { 512, 128, 0, 0 } }, 16, 4);
	pb_stream(c, pb_linear(SPK_EP_SCRATCH, 2, 0, 16), pb_linear(SPK_EP_DRAM, 1, 0, 16), 16, 4);
	pb_buffer(c, 16 * 128);
	c->streams[1].after = 0;
	pb_stream(pb_core(&prog, 31), pb_ring(0, 0), pb_linear(SPK_EP_DRAM, 2, 0, 16), 16, 16);
	save(dir, "ring-relayout");

	/* Transpose and a reversed gather. */
	op = row_op(SPK_OPC_TRANSPOSE, 1, SPK_DT_FP32, 2, 8);
	op->rows = 2;
	op->firings = 1;
	prog.cores[0].streams[1].total_sticks = prog.cores[0].streams[1].dst.count[0] = 8;
	prog.cores[0].streams[1].fifo_sticks = 8;
	prog.cores[0].buf_bytes[1] = 8 * 128;
	prog.cores[0].spad_bytes += 6 * 128;
	prog.cores[0].streams[0].src = (struct pb_endpoint){ SPK_EP_DRAM, 0, 0, 128, { 2, 1, 1, 1 },
							     { -128, 0, 0, 0 } };
	save(dir, "transpose-reverse");
	return 0;
}
