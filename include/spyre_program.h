/* SPDX-License-Identifier: MIT */
/*
 * The kernel binary that LAUNCH runs: layout constants, shared by the
 * engine's loader and by anything that writes programs (tests, libspyre).
 * Everything is little-endian; docs/engine.md explains each field.
 *
 *   image = header (64 B)
 *         + core table (16 B per set bit of core_mask, ascending core)
 *         + one core program per entry, at the offset its entry gives
 *   core program = core header (8 B) + buffers (8 B each)
 *                + streams (144 B each) + ops (64 B each)
 */
#ifndef SPYRE_PROGRAM_H
#define SPYRE_PROGRAM_H

#define SPK_MAGIC			0x4b595053u	/* "SPYK" */
#define SPK_STICK_BYTES			128	/* the unit streams move */
#define SPK_VERSION_MAJOR		1
#define SPK_VERSION_MINOR		0

/* Image header. */
#define SPK_HDR_BYTES			64
#define SPK_HDR_MAGIC			0	/* u32 */
#define SPK_HDR_VERSION_MAJOR		4	/* u16 */
#define SPK_HDR_VERSION_MINOR		6	/* u16: newer minors only add fields */
#define SPK_HDR_IMAGE_BYTES		8	/* u32: whole image */
#define SPK_HDR_CORE_MASK		12	/* u32: participating cores */
#define SPK_HDR_NUM_ARGS		16	/* u32: u64 entries in the argument block */
#define SPK_HDR_FLAGS			20	/* u32: none defined, must be 0 */
/* bytes 24-63 reserved, must be 0 */

/* Core table entry. */
#define SPK_CORE_ENTRY_BYTES		16
#define SPK_CORE_PROGRAM_OFFSET		0	/* u32: from the image start, 8-aligned */
#define SPK_CORE_PROGRAM_BYTES		4	/* u32 */
#define SPK_CORE_SPAD_BYTES		8	/* u32: scratchpad the program uses */
/* bytes 12-15 reserved */

/* Core program header. */
#define SPK_PROG_HDR_BYTES		8
#define SPK_PROG_NUM_BUFFERS		0	/* u16 */
#define SPK_PROG_NUM_STREAMS		2	/* u16 */
#define SPK_PROG_NUM_OPS		4	/* u16 */
/* bytes 6-7 reserved */

/* Scratchpad buffer: a 128-byte aligned region of the core's scratchpad,
 * above the first SPK_SPAD_RESERVED_BYTES, which hold the core's program. */
#define SPK_SPAD_RESERVED_BYTES		0x10000u	/* 64 KiB */
#define SPK_BUF_BYTES			8
#define SPK_BUF_OFFSET			0	/* u32 */
#define SPK_BUF_SIZE			4	/* u32 */

/* Stream descriptor: source endpoint -> FIFO -> destination endpoint. */
#define SPK_STREAM_BYTES		144
#define SPK_STREAM_SRC_KIND		0	/* u8: SPK_EP_* */
#define SPK_STREAM_DST_KIND		1	/* u8 */
#define SPK_STREAM_FIFO_BUFFER		2	/* u16: buffer holding the FIFO */
#define SPK_STREAM_FIFO_STICKS		4	/* u32: FIFO capacity */
#define SPK_STREAM_TOTAL_STICKS		8	/* u32: sticks that flow through */
#define SPK_STREAM_AFTER		12	/* u16: stream that must finish first, or SPK_NONE */
/* bytes 14-15 reserved */
#define SPK_STREAM_SRC			16	/* endpoint, SPK_EP_BYTES */
#define SPK_STREAM_DST			80	/* endpoint, SPK_EP_BYTES */

/* Endpoint (inside a stream descriptor). */
#define SPK_EP_BYTES			64
#define SPK_EP_REF			0	/* u16: argument, buffer or peer stream */
/* bytes 2-3 reserved */
#define SPK_EP_CORE			4	/* u32: ring source core, or destination core mask */
#define SPK_EP_OFFSET			8	/* u64: bytes from the argument or buffer start */
#define SPK_EP_COUNT			16	/* u32[4]: loop counts, innermost first */
#define SPK_EP_STRIDE			32	/* s64[4]: byte strides, innermost first */
#define SPK_EP_DIMS			4

#define SPK_EP_OP			0	/* an op's input or output */
#define SPK_EP_DRAM			1	/* device memory: argument + offset + pattern */
#define SPK_EP_SCRATCH			2	/* this core's buffer + offset + pattern */
#define SPK_EP_RING			3	/* another core's stream, over the ring */
#define SPK_EP_KIND_MAX			3

/* Op descriptor. */
#define SPK_OP_BYTES			64
#define SPK_OP_OPCODE			0	/* u8: SPK_OPC_* */
#define SPK_OP_DTYPE_IN			1	/* u8: SPK_DT_* */
#define SPK_OP_DTYPE_OUT		2	/* u8 */
#define SPK_OP_FLAGS			3	/* u8: SPK_OPF_* */
#define SPK_OP_IN			4	/* u16[3]: input streams or SPK_NONE */
#define SPK_OP_OUT			10	/* u16: output stream */
#define SPK_OP_ACC_BUFFER		12	/* u16: matmul accumulator buffer or SPK_NONE */
/* bytes 14-15 reserved */
#define SPK_OP_FIRINGS			16	/* u32: times the op fires */
#define SPK_OP_ROW_ELEMS		20	/* u32: valid elements per row (matmul: N) */
#define SPK_OP_ROWS			24	/* u32: rows per firing (matmul: M) */
#define SPK_OP_K			28	/* u32: matmul K elements per firing */
#define SPK_OP_K_STEPS			32	/* u32: matmul firings accumulated per output tile */
/* bytes 36-39 reserved */
#define SPK_OP_IMM0			40	/* f32: scale factor, fill value, epsilon */
#define SPK_OP_IMM1			44	/* f32: reserved for ops that do not use it */
/* bytes 48-63 reserved */

#define SPK_NONE			0xffffu

/* Data types of op operands. */
#define SPK_DT_FP16			0
#define SPK_DT_BF16			1
#define SPK_DT_FP32			2
#define SPK_DT_MAX			2

/* Op flags. */
#define SPK_OPF_ACROSS			0x01	/* reduce/softmax across the firing's rows, per lane */
#define SPK_OPF_ALL			0x01

/* Opcodes. */
#define SPK_OPC_COPY			0x01	/* convert dtype_in -> dtype_out */
#define SPK_OPC_FILL			0x02	/* no input: every valid lane = imm0 */
#define SPK_OPC_ADD			0x10
#define SPK_OPC_SUB			0x11
#define SPK_OPC_MUL			0x12
#define SPK_OPC_MAX			0x13
#define SPK_OPC_SCALE			0x18	/* x * imm0 */
#define SPK_OPC_RELU			0x19
#define SPK_OPC_GELU			0x1a	/* erf form */
#define SPK_OPC_SILU			0x1b
#define SPK_OPC_EXP			0x1c
#define SPK_OPC_RSQRT			0x1d
#define SPK_OPC_REDUCE_SUM		0x20
#define SPK_OPC_REDUCE_MAX		0x21
#define SPK_OPC_SOFTMAX			0x30
#define SPK_OPC_LOG_SOFTMAX		0x33	/* x - max - log(sum(exp(x - max))) */
#define SPK_OPC_LAYERNORM		0x31	/* eps = imm0; optional gamma, beta rows */
#define SPK_OPC_RMSNORM			0x32	/* eps = imm0; optional gamma row */
#define SPK_OPC_MATMUL			0x40
#define SPK_OPC_TRANSPOSE		0x50

/* Elements of a data type in one stick, and sticks that @elems of it take. */
static inline unsigned spk_stick_elems(unsigned dtype)
{
	return dtype == SPK_DT_FP32 ? SPK_STICK_BYTES / 4 : SPK_STICK_BYTES / 2;
}

static inline unsigned spk_sticks_for(unsigned elems, unsigned dtype)
{
	return (elems + spk_stick_elems(dtype) - 1) / spk_stick_elems(dtype);
}

/* Inputs an opcode takes: 1 and *min_in, *max_in, or 0 for an unknown opcode. */
static inline int spk_op_inputs(unsigned opcode, unsigned *min_in, unsigned *max_in)
{
	switch (opcode) {
	case SPK_OPC_FILL:
		*min_in = *max_in = 0;
		return 1;
	case SPK_OPC_COPY: case SPK_OPC_SCALE: case SPK_OPC_RELU: case SPK_OPC_GELU:
	case SPK_OPC_SILU: case SPK_OPC_EXP: case SPK_OPC_RSQRT:
	case SPK_OPC_REDUCE_SUM: case SPK_OPC_REDUCE_MAX: case SPK_OPC_SOFTMAX:
	case SPK_OPC_LOG_SOFTMAX: case SPK_OPC_TRANSPOSE:
		*min_in = *max_in = 1;
		return 1;
	case SPK_OPC_ADD: case SPK_OPC_SUB: case SPK_OPC_MUL: case SPK_OPC_MAX:
	case SPK_OPC_MATMUL:
		*min_in = *max_in = 2;
		return 1;
	case SPK_OPC_LAYERNORM:
		*min_in = 1;
		*max_in = 3;
		return 1;
	case SPK_OPC_RMSNORM:
		*min_in = 1;
		*max_in = 2;
		return 1;
	}
	return 0;
}

/* Limits a program must respect (the loader rejects more). */
#define SPK_MAX_ARGS			64
#define SPK_MAX_BUFFERS			64
#define SPK_MAX_STREAMS			64
#define SPK_MAX_OPS			64
#define SPK_MAX_ROW_ELEMS		65536
#define SPK_MAX_ROWS			4096

#endif /* SPYRE_PROGRAM_H */
