// SPDX-License-Identifier: MIT
/*
 * The program loader against bad programs: each class of mistake a guest
 * can make is rejected with its own status (docs/engine.md), never a crash.
 * Each test starts from a valid program (c = a + b over fp16) and breaks
 * one thing, in the builder's structs or in the serialized bytes.
 */
#include <stdint.h>

#include "engine_testlib.h"
#include "tap.h"

/* Offsets in the base image: one core, 3 buffers, 3 streams, 1 op. */
#define CORE_ENTRY	SPK_HDR_BYTES
#define CORE_PROG	(CORE_ENTRY + SPK_CORE_ENTRY_BYTES)
#define BUFFERS		(CORE_PROG + SPK_PROG_HDR_BYTES)
#define STREAMS		(BUFFERS + 3 * SPK_BUF_BYTES)
#define OPS		(STREAMS + 3 * SPK_STREAM_BYTES)

#define N_ELEMS		100	/* 2 fp16 sticks per row */
#define ROWS		4

static void base_program(struct pb_program *p)
{
	struct pb_core *c;
	struct pb_op *op;
	uint32_t sticks = ROWS * 2;

	memset(p, 0, sizeof(*p));
	c = pb_core(p, 0);
	p->num_args = 3;
	op = pb_op(c, SPK_OPC_ADD, SPK_DT_FP16, SPK_DT_FP16, ROWS, 1, N_ELEMS);
	op->in[0] = pb_stream(c, pb_linear(SPK_EP_DRAM, 0, 0, sticks), pb_op_end(), sticks, 4);
	op->in[1] = pb_stream(c, pb_linear(SPK_EP_DRAM, 1, 0, sticks), pb_op_end(), sticks, 4);
	op->out = pb_stream(c, pb_op_end(), pb_linear(SPK_EP_DRAM, 2, 0, sticks), sticks, 4);
}

static enum spyre_engine_status load_bytes_cfg(const struct spyre_engine_config *cfg,
					       const uint8_t *img, size_t len,
					       struct spyre_engine_error *err)
{
	struct spyre_program *prog = (struct spyre_program *)&prog;
	enum spyre_engine_status st = spyre_program_load(cfg, img, len, &prog, err);

	if (st && prog)
		printf("  # failed load left a program behind\n");
	spyre_program_free(st ? NULL : prog);
	return st;
}

/* What the last load_bytes() failed with. */
static struct spyre_engine_error last_err;

static enum spyre_engine_status load_bytes(const uint8_t *img, size_t len)
{
	struct spyre_engine_config cfg;
	enum spyre_engine_status st;

	spyre_engine_config_default(&cfg);
	st = load_bytes_cfg(&cfg, img, len, &last_err);
	if (st)
		printf("  # %s core %d index %d: %s\n", spyre_engine_status_name(st),
		       last_err.core, last_err.index, last_err.detail);
	return st;
}

static enum spyre_engine_status load_prog(const struct pb_program *p)
{
	size_t len;
	uint8_t *img = pb_serialize(p, &len);
	enum spyre_engine_status st = load_bytes(img, len);

	free(img);
	return st;
}

/* Serialize the base program, let `patch` change bytes, load it. */
#define LOAD_PATCHED(patch)						\
	({								\
		struct pb_program p_;					\
		size_t len;						\
		uint8_t *img;						\
		enum spyre_engine_status st_;				\
		base_program(&p_);					\
		img = pb_serialize(&p_, &len);				\
		patch;							\
		st_ = load_bytes(img, len);				\
		free(img);						\
		st_;							\
	})

static struct pb_program prog;

TEST(base_program_loads_and_runs)
{
	struct spyre_engine_config cfg;
	struct test_mem mem;
	uint64_t args[3] = { 0, 4096, 8192 };

	base_program(&prog);
	EXPECT_EQ(load_prog(&prog), SPYRE_ENGINE_OK);
	spyre_engine_config_default(&cfg);
	test_mem_init(&mem, 1 << 16);
	EXPECT_EQ(test_run(&cfg, &prog, &mem, args, 3, NULL, NULL), SPYRE_ENGINE_OK);
	test_mem_fini(&mem);
}

/* The card shows ENGINE_SITE: what the failure's index counts. */
TEST(failure_site_says_what_the_index_counts)
{
	EXPECT_EQ(LOAD_PATCHED(pb_put64(img + STREAMS + SPK_STREAM_SRC + SPK_EP_STRIDE, 64)),
		  SPYRE_ENGINE_E_PATTERN);
	EXPECT_EQ(last_err.at, SPYRE_ENGINE_AT_STREAM);
	EXPECT_EQ(last_err.index, 0);
	EXPECT_EQ(last_err.core, 0);
	EXPECT_EQ(LOAD_PATCHED(img[OPS + SPK_OP_OPCODE] = 0x7f), SPYRE_ENGINE_E_OPCODE);
	EXPECT_EQ(last_err.at, SPYRE_ENGINE_AT_OP);
	EXPECT_EQ(last_err.index, 0);
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + BUFFERS + SPK_BUF_SIZE, 100)), SPYRE_ENGINE_E_BUFFER);
	EXPECT_EQ(last_err.at, SPYRE_ENGINE_AT_BUFFER);
	EXPECT_EQ(last_err.index, 0);
	EXPECT_EQ(LOAD_PATCHED(img[0] ^= 1), SPYRE_ENGINE_E_MAGIC);
	EXPECT_EQ(last_err.at, SPYRE_ENGINE_AT_NONE);
	EXPECT_EQ(last_err.index, -1);
	EXPECT_EQ(last_err.core, -1);
}

TEST(truncated_images)
{
	EXPECT_EQ(LOAD_PATCHED(len = 63), SPYRE_ENGINE_E_TRUNCATED);
	EXPECT_EQ(LOAD_PATCHED(len = 0), SPYRE_ENGINE_E_TRUNCATED);
	EXPECT_EQ(LOAD_PATCHED(len -= 1), SPYRE_ENGINE_E_TRUNCATED);
	/* A core program past the end of the image. */
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + CORE_ENTRY + SPK_CORE_PROGRAM_OFFSET, 0xfffffff0u)),
		  SPYRE_ENGINE_E_TRUNCATED);
	/* A core program overlapping the header. */
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + CORE_ENTRY + SPK_CORE_PROGRAM_OFFSET, 8)),
		  SPYRE_ENGINE_E_TRUNCATED);
	/* Counts that need more bytes than the core program has. */
	EXPECT_EQ(LOAD_PATCHED(pb_put16(img + CORE_PROG + SPK_PROG_NUM_OPS, 2)),
		  SPYRE_ENGINE_E_TRUNCATED);
	/* Eight more cores in the mask: their table entries run past the image. */
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + SPK_HDR_IMAGE_BYTES, 100);
			       pb_put32(img + SPK_HDR_CORE_MASK, 0xff)),
		  SPYRE_ENGINE_E_TRUNCATED);
	EXPECT_EQ(load_bytes(NULL, 0), SPYRE_ENGINE_E_TRUNCATED);
}

TEST(bad_magic_and_version)
{
	EXPECT_EQ(LOAD_PATCHED(img[0] ^= 1), SPYRE_ENGINE_E_MAGIC);
	EXPECT_EQ(LOAD_PATCHED(pb_put16(img + SPK_HDR_VERSION_MAJOR, 2)), SPYRE_ENGINE_E_VERSION);
	EXPECT_EQ(LOAD_PATCHED(pb_put16(img + SPK_HDR_VERSION_MAJOR, 0)), SPYRE_ENGINE_E_VERSION);
	EXPECT_EQ(LOAD_PATCHED(pb_put16(img + SPK_HDR_VERSION_MINOR, SPK_VERSION_MINOR + 1)),
		  SPYRE_ENGINE_E_VERSION);
}

/* Every reserved field, header to op, must be zero. */
TEST(reserved_fields_rejected)
{
	EXPECT_EQ(LOAD_PATCHED(img[SPK_HDR_FLAGS] = 1), SPYRE_ENGINE_E_RESERVED);
	EXPECT_EQ(LOAD_PATCHED(img[63] = 1), SPYRE_ENGINE_E_RESERVED);
	EXPECT_EQ(LOAD_PATCHED(img[CORE_ENTRY + 12] = 1), SPYRE_ENGINE_E_RESERVED);
	EXPECT_EQ(LOAD_PATCHED(img[CORE_PROG + 6] = 1), SPYRE_ENGINE_E_RESERVED);
	EXPECT_EQ(LOAD_PATCHED(img[STREAMS + 14] = 1), SPYRE_ENGINE_E_RESERVED);
	EXPECT_EQ(LOAD_PATCHED(img[STREAMS + SPK_STREAM_SRC + 2] = 1), SPYRE_ENGINE_E_RESERVED);
	/* An op endpoint carries no pattern. */
	EXPECT_EQ(LOAD_PATCHED(img[STREAMS + SPK_STREAM_DST + SPK_EP_COUNT] = 1),
		  SPYRE_ENGINE_E_RESERVED);
	/* A DRAM endpoint has no core. */
	EXPECT_EQ(LOAD_PATCHED(img[STREAMS + SPK_STREAM_SRC + SPK_EP_CORE] = 1),
		  SPYRE_ENGINE_E_RESERVED);
	EXPECT_EQ(LOAD_PATCHED(img[OPS + 14] = 1), SPYRE_ENGINE_E_RESERVED);
	EXPECT_EQ(LOAD_PATCHED(img[OPS + 36] = 1), SPYRE_ENGINE_E_RESERVED);
	EXPECT_EQ(LOAD_PATCHED(img[OPS + 63] = 1), SPYRE_ENGINE_E_RESERVED);
	EXPECT_EQ(LOAD_PATCHED(img[OPS + SPK_OP_FLAGS] = 0x80), SPYRE_ENGINE_E_RESERVED);
	/* Matmul fields on an add. */
	EXPECT_EQ(LOAD_PATCHED(img[OPS + SPK_OP_K] = 1), SPYRE_ENGINE_E_RESERVED);
	EXPECT_EQ(LOAD_PATCHED(pb_put16(img + OPS + SPK_OP_ACC_BUFFER, 0)),
		  SPYRE_ENGINE_E_RESERVED);
	EXPECT_EQ(LOAD_PATCHED(img[OPS + SPK_OP_IMM1 + 3] = 0x3f), SPYRE_ENGINE_E_OP);
}

TEST(bad_core_masks)
{
	struct spyre_engine_config cfg;
	struct spyre_engine_error err;
	size_t len;
	uint8_t *img;

	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + SPK_HDR_CORE_MASK, 0)), SPYRE_ENGINE_E_CORE_MASK);
	/* Core 4 on a 4-core card. */
	base_program(&prog);
	prog.cores[4] = prog.cores[0];
	prog.core_mask = 1u << 4;
	img = pb_serialize(&prog, &len);
	spyre_engine_config_default(&cfg);
	cfg.num_cores = 4;
	EXPECT_EQ(load_bytes_cfg(&cfg, img, len, &err), SPYRE_ENGINE_E_CORE_MASK);
	cfg.num_cores = 5;
	EXPECT_EQ(load_bytes_cfg(&cfg, img, len, &err), SPYRE_ENGINE_OK);
	free(img);
}

TEST(too_many_streams_buffers_ops_args)
{
	struct pb_core *c;

	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + SPK_HDR_NUM_ARGS, SPK_MAX_ARGS + 1)),
		  SPYRE_ENGINE_E_TOO_MANY);
	EXPECT_EQ(LOAD_PATCHED(pb_put16(img + CORE_PROG + SPK_PROG_NUM_STREAMS, 65)),
		  SPYRE_ENGINE_E_TOO_MANY);
	EXPECT_EQ(LOAD_PATCHED(pb_put16(img + CORE_PROG + SPK_PROG_NUM_BUFFERS, 0xffff)),
		  SPYRE_ENGINE_E_TOO_MANY);
	EXPECT_EQ(LOAD_PATCHED(pb_put16(img + CORE_PROG + SPK_PROG_NUM_OPS, 65)),
		  SPYRE_ENGINE_E_TOO_MANY);
	/* Exactly the limit of buffers is fine. */
	base_program(&prog);
	c = &prog.cores[0];
	while (c->num_buffers < SPK_MAX_BUFFERS)
		pb_buffer(c, 128);
	EXPECT_EQ(load_prog(&prog), SPYRE_ENGINE_OK);
}

TEST(bad_buffers)
{
	struct pb_core *c;

	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + BUFFERS + SPK_BUF_OFFSET, (64 << 10) + 64)),
		  SPYRE_ENGINE_E_BUFFER);
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + BUFFERS + SPK_BUF_SIZE, 100)), SPYRE_ENGINE_E_BUFFER);
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + BUFFERS + SPK_BUF_SIZE, 0)), SPYRE_ENGINE_E_BUFFER);
	/* Inside the program's 64 KiB reservation. */
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + BUFFERS + SPK_BUF_OFFSET, 0)), SPYRE_ENGINE_E_BUFFER);
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + BUFFERS + SPK_BUF_OFFSET, (64 << 10) - 128)),
		  SPYRE_ENGINE_E_BUFFER);
	/* Past the 2 MiB scratchpad, and wrapping 32 bits. */
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + BUFFERS + SPK_BUF_OFFSET, 2u << 20)),
		  SPYRE_ENGINE_E_BUFFER);
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + BUFFERS + SPK_BUF_SIZE, 0xffffff80u)),
		  SPYRE_ENGINE_E_BUFFER);
	/* Exactly the usable scratchpad is fine. */
	base_program(&prog);
	c = &prog.cores[0];
	pb_buffer(c, (2u << 20) - (64u << 10) - c->spad_bytes);
	EXPECT_EQ(load_prog(&prog), SPYRE_ENGINE_OK);
}

TEST(overlapping_buffers)
{
	struct pb_core *c;

	/* Buffer 1 starts inside buffer 0. */
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + BUFFERS + SPK_BUF_BYTES + SPK_BUF_OFFSET,
					(64 << 10) + 128)),
		  SPYRE_ENGINE_E_OVERLAP);
	/* Two streams with one FIFO buffer. */
	EXPECT_EQ(LOAD_PATCHED(pb_put16(img + STREAMS + SPK_STREAM_BYTES + SPK_STREAM_FIFO_BUFFER,
					0)),
		  SPYRE_ENGINE_E_OVERLAP);
	/* A stream's FIFO also used as another stream's scratchpad data. */
	base_program(&prog);
	c = &prog.cores[0];
	c->streams[2].dst = (struct pb_endpoint){ SPK_EP_SCRATCH, 0, 0, 0, { 8, 1, 1, 1 },
						  { 0, 0, 0, 0 } };
	EXPECT_EQ(load_prog(&prog), SPYRE_ENGINE_E_OVERLAP);
}

/* Buffers must fit the scratchpad the core entry declares, which must fit the card. */
TEST(scratchpad_declaration)
{
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + CORE_ENTRY + SPK_CORE_SPAD_BYTES, 128)),
		  SPYRE_ENGINE_E_SPAD_DECLARED);
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + CORE_ENTRY + SPK_CORE_SPAD_BYTES,
					(2u << 20) - (64u << 10) + 128)),
		  SPYRE_ENGINE_E_SPAD_DECLARED);
}

/* Stream addresses out of range: arguments, buffers, patterns. */
TEST(stream_addresses_out_of_range)
{
	struct pb_core *c;

	EXPECT_EQ(LOAD_PATCHED(pb_put16(img + STREAMS + SPK_STREAM_SRC + SPK_EP_REF, 3)),
		  SPYRE_ENGINE_E_STREAM);
	EXPECT_EQ(LOAD_PATCHED(pb_put16(img + STREAMS + SPK_STREAM_FIFO_BUFFER, 3)),
		  SPYRE_ENGINE_E_STREAM);
	/* FIFO larger than its buffer. */
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + STREAMS + SPK_STREAM_FIFO_STICKS, 5)),
		  SPYRE_ENGINE_E_STREAM);
	EXPECT_EQ(LOAD_PATCHED(img[STREAMS + SPK_STREAM_SRC_KIND] = 4), SPYRE_ENGINE_E_STREAM);
	/* Device offset not stick-aligned. */
	EXPECT_EQ(LOAD_PATCHED(img[STREAMS + SPK_STREAM_SRC + SPK_EP_OFFSET] = 64),
		  SPYRE_ENGINE_E_PATTERN);
	/* Scratchpad pattern running off its buffer, forwards and backwards. */
	base_program(&prog);
	c = &prog.cores[0];
	pb_buffer(c, 4 * 128);
	c->streams[2].dst = pb_linear(SPK_EP_SCRATCH, 3, 0, 8);
	EXPECT_EQ(load_prog(&prog), SPYRE_ENGINE_E_PATTERN);
	c->streams[2].dst = (struct pb_endpoint){ SPK_EP_SCRATCH, 3, 0, 384, { 8, 1, 1, 1 },
						  { -128, 0, 0, 0 } };
	EXPECT_EQ(load_prog(&prog), SPYRE_ENGINE_E_PATTERN);
	c->streams[2].dst = (struct pb_endpoint){ SPK_EP_SCRATCH, 3, 0, 384, { 4, 2, 1, 1 },
						  { -128, 0, 0, 0 } };
	EXPECT_EQ(load_prog(&prog), SPYRE_ENGINE_OK);
	c->streams[2].dst.offset = 0xffffffff80ull;
	EXPECT_EQ(load_prog(&prog), SPYRE_ENGINE_E_PATTERN);
	/* A stream that waits for itself or a stream that does not exist. */
	base_program(&prog);
	prog.cores[0].streams[1].after = 1;
	EXPECT_EQ(load_prog(&prog), SPYRE_ENGINE_E_STREAM);
	prog.cores[0].streams[1].after = 3;
	EXPECT_EQ(load_prog(&prog), SPYRE_ENGINE_E_STREAM);
}

TEST(zero_size_loops_and_streams)
{
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + STREAMS + SPK_STREAM_SRC + SPK_EP_COUNT + 4, 0)),
		  SPYRE_ENGINE_E_PATTERN);
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + STREAMS + SPK_STREAM_TOTAL_STICKS, 0)),
		  SPYRE_ENGINE_E_STREAM);
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + STREAMS + SPK_STREAM_FIFO_STICKS, 0)),
		  SPYRE_ENGINE_E_STREAM);
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + OPS + SPK_OP_FIRINGS, 0)), SPYRE_ENGINE_E_OP);
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + OPS + SPK_OP_ROWS, 0)), SPYRE_ENGINE_E_OP);
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + OPS + SPK_OP_ROW_ELEMS, 0)), SPYRE_ENGINE_E_OP);
	/* Loop counts that do not multiply to the stream's sticks. */
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + STREAMS + SPK_STREAM_SRC + SPK_EP_COUNT + 4, 2)),
		  SPYRE_ENGINE_E_PATTERN);
}

TEST(integer_overflow_in_strides_and_counts)
{
	uint8_t *ep = NULL;

#define SRC0 (img + STREAMS + SPK_STREAM_SRC)
	/* (count - 1) * stride past 2^63. */
	EXPECT_EQ(LOAD_PATCHED(ep = SRC0; pb_put32(ep + SPK_EP_COUNT, 4);
			       pb_put32(ep + SPK_EP_COUNT + 4, 2);
			       pb_put64(ep + SPK_EP_STRIDE, 0x3fffffffffffff80ull)),
		  SPYRE_ENGINE_E_PATTERN);
	/* Extents that each fit but add past 2^63. */
	EXPECT_EQ(LOAD_PATCHED(ep = SRC0; pb_put32(ep + SPK_EP_COUNT, 2);
			       pb_put32(ep + SPK_EP_COUNT + 4, 2); pb_put32(ep + SPK_EP_COUNT + 8, 2);
			       pb_put64(ep + SPK_EP_STRIDE, 0x7fffffffffffff00ull);
			       pb_put64(ep + SPK_EP_STRIDE + 8, 0x7fffffffffffff00ull)),
		  SPYRE_ENGINE_E_PATTERN);
	/* Negative extreme. */
	EXPECT_EQ(LOAD_PATCHED(ep = SRC0; pb_put32(ep + SPK_EP_COUNT, 4);
			       pb_put32(ep + SPK_EP_COUNT + 4, 2);
			       pb_put64(ep + SPK_EP_STRIDE, 0x8000000000000000ull)),
		  SPYRE_ENGINE_E_PATTERN);
	/* Counts whose product wraps 64 bits. */
	EXPECT_EQ(LOAD_PATCHED(ep = SRC0; for (int d = 0; d < 4; d++)
				       pb_put32(ep + SPK_EP_COUNT + 4 * d, 0xffffffffu)),
		  SPYRE_ENGINE_E_PATTERN);
	/* Stride not a whole stick. */
	EXPECT_EQ(LOAD_PATCHED(pb_put64(SRC0 + SPK_EP_STRIDE, 64)), SPYRE_ENGINE_E_PATTERN);
	/* Firings x sticks per firing past 32 bits never equals a stream's count. */
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + OPS + SPK_OP_FIRINGS, 0x80000000u)),
		  SPYRE_ENGINE_E_COUNT);
#undef SRC0
	(void)ep;
}

TEST(unknown_opcodes_and_dtypes)
{
	EXPECT_EQ(LOAD_PATCHED(img[OPS + SPK_OP_OPCODE] = 0x7f), SPYRE_ENGINE_E_OPCODE);
	EXPECT_EQ(LOAD_PATCHED(img[OPS + SPK_OP_OPCODE] = 0), SPYRE_ENGINE_E_OPCODE);
	EXPECT_EQ(LOAD_PATCHED(img[OPS + SPK_OP_DTYPE_IN] = 3), SPYRE_ENGINE_E_DTYPE);
	EXPECT_EQ(LOAD_PATCHED(img[OPS + SPK_OP_DTYPE_OUT] = 0xff), SPYRE_ENGINE_E_DTYPE);
	/* ACROSS only on reductions and softmax. */
	EXPECT_EQ(LOAD_PATCHED(img[OPS + SPK_OP_FLAGS] = SPK_OPF_ACROSS), SPYRE_ENGINE_E_OP);
	/* An add with one input. */
	EXPECT_EQ(LOAD_PATCHED(pb_put16(img + OPS + SPK_OP_IN + 2, SPK_NONE)), SPYRE_ENGINE_E_OP);
	/* Inputs not packed first. */
	EXPECT_EQ(LOAD_PATCHED(pb_put16(img + OPS + SPK_OP_IN, SPK_NONE)), SPYRE_ENGINE_E_OP);
	/* Non-finite immediate. */
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + OPS + SPK_OP_IMM0, 0x7fc00000u)), SPYRE_ENGINE_E_OP);
}

/* Op ends of streams: exactly one op each, of the right direction. */
TEST(stream_bindings)
{
	struct pb_core *c;

	/* Input stream index out of range. */
	EXPECT_EQ(LOAD_PATCHED(pb_put16(img + OPS + SPK_OP_IN, 9)), SPYRE_ENGINE_E_BINDING);
	/* The output stream as an input. */
	EXPECT_EQ(LOAD_PATCHED(pb_put16(img + OPS + SPK_OP_IN, 2)), SPYRE_ENGINE_E_BINDING);
	/* The same stream twice. */
	EXPECT_EQ(LOAD_PATCHED(pb_put16(img + OPS + SPK_OP_IN + 2, 0)), SPYRE_ENGINE_E_BINDING);
	/* A stream with an op end no op uses: a missing producer. */
	base_program(&prog);
	c = &prog.cores[0];
	pb_stream(c, pb_op_end(), pb_linear(SPK_EP_DRAM, 2, 4096, 2), 2, 2);
	EXPECT_EQ(load_prog(&prog), SPYRE_ENGINE_E_BINDING);
}

TEST(count_mismatch_and_small_fifo)
{
	/* Stream carries 9 sticks, the op takes 8. */
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + STREAMS + SPK_STREAM_TOTAL_STICKS, 9);
			       pb_put32(img + STREAMS + SPK_STREAM_SRC + SPK_EP_COUNT, 9)),
		  SPYRE_ENGINE_E_COUNT);
	/* A FIFO of 1 stick cannot hold a 2-stick row. */
	EXPECT_EQ(LOAD_PATCHED(pb_put32(img + STREAMS + SPK_STREAM_FIFO_STICKS, 1)),
		  SPYRE_ENGINE_E_FIFO_SMALL);
}

static void ring_program(struct pb_program *p)
{
	struct pb_core *c0, *c1;

	memset(p, 0, sizeof(*p));
	p->num_args = 2;
	c0 = pb_core(p, 0);
	c1 = pb_core(p, 1);
	pb_stream(c0, pb_linear(SPK_EP_DRAM, 0, 0, 8), pb_ring(0, 1u << 1), 8, 8);
	pb_stream(c1, pb_ring(0, 0), pb_linear(SPK_EP_DRAM, 1, 0, 8), 8, 8);
}

TEST(ring_pairs_must_match)
{
	ring_program(&prog);
	EXPECT_EQ(load_prog(&prog), SPYRE_ENGINE_OK);
	/* Receiver names another sender stream. */
	prog.cores[1].streams[0].src.ref = 1;
	EXPECT_EQ(load_prog(&prog), SPYRE_ENGINE_E_RING);
	/* Sender to a core that does not take part. */
	ring_program(&prog);
	prog.cores[0].streams[0].dst.core = 1u << 2;
	EXPECT_EQ(load_prog(&prog), SPYRE_ENGINE_E_RING);
	/* Sender to itself. */
	prog.cores[0].streams[0].dst.core = 1u << 0;
	EXPECT_EQ(load_prog(&prog), SPYRE_ENGINE_E_RING);
	/* Receiver from a core that does not take part. */
	ring_program(&prog);
	prog.cores[1].streams[0].src.core = 5;
	EXPECT_EQ(load_prog(&prog), SPYRE_ENGINE_E_RING);
	/* Different stick counts on the two ends. */
	ring_program(&prog);
	prog.cores[1].streams[0].total_sticks = 4;
	prog.cores[1].streams[0].dst.count[0] = 4;
	EXPECT_EQ(load_prog(&prog), SPYRE_ENGINE_E_RING);
	/* A ring endpoint with a pattern. */
	ring_program(&prog);
	prog.cores[1].streams[0].src.count[0] = 8;
	EXPECT_EQ(load_prog(&prog), SPYRE_ENGINE_E_RESERVED);
}

TEST(work_limit)
{
	struct spyre_engine_config cfg;
	struct spyre_engine_error err;
	size_t len;
	uint8_t *img;

	base_program(&prog);
	img = pb_serialize(&prog, &len);
	spyre_engine_config_default(&cfg);
	cfg.max_work = 10;
	EXPECT_EQ(load_bytes_cfg(&cfg, img, len, &err), SPYRE_ENGINE_E_TOO_MUCH_WORK);
	cfg.max_work = 1000;
	EXPECT_EQ(load_bytes_cfg(&cfg, img, len, &err), SPYRE_ENGINE_OK);
	free(img);
}

/* Run-time checks: argument count, device addresses, memory errors. */
TEST(run_checks_arguments_and_addresses)
{
	struct spyre_engine_config cfg;
	struct test_mem mem;
	uint64_t args[3] = { 0, 4096, 8192 };

	base_program(&prog);
	spyre_engine_config_default(&cfg);
	test_mem_init(&mem, 1 << 16);
	EXPECT_EQ(test_run(&cfg, &prog, &mem, args, 2, NULL, NULL), SPYRE_ENGINE_E_ARGS);
	args[1] = 4096 + 64;
	EXPECT_EQ(test_run(&cfg, &prog, &mem, args, 3, NULL, NULL), SPYRE_ENGINE_E_ADDRESS);
	args[1] = (1ull << 48) - 128;
	EXPECT_EQ(test_run(&cfg, &prog, &mem, args, 3, NULL, NULL), SPYRE_ENGINE_E_ADDRESS);
	args[1] = UINT64_MAX - 127;
	EXPECT_EQ(test_run(&cfg, &prog, &mem, args, 3, NULL, NULL), SPYRE_ENGINE_E_ADDRESS);
	/* Inside 2^48 but outside this memory: the callback fails. */
	args[1] = 1ull << 40;
	EXPECT_EQ(test_run(&cfg, &prog, &mem, args, 3, NULL, NULL), SPYRE_ENGINE_E_MEMORY);
	args[1] = 4096;
	mem.fail_at = 8192 + 300;
	EXPECT_EQ(test_run(&cfg, &prog, &mem, args, 3, NULL, NULL), SPYRE_ENGINE_E_MEMORY);
	test_mem_fini(&mem);
}

TEST(api_rejects_null_and_bad_config)
{
	struct spyre_engine_config cfg;
	struct spyre_program *p = NULL;
	struct spyre_engine_mem mem = { NULL, NULL, NULL, NULL };
	uint8_t img[64] = { 0 };

	spyre_engine_config_default(&cfg);
	EXPECT_EQ(spyre_program_load(&cfg, img, sizeof(img), NULL, NULL), SPYRE_ENGINE_E_INVALID);
	EXPECT_EQ(spyre_program_load(NULL, img, sizeof(img), &p, NULL), SPYRE_ENGINE_E_INVALID);
	EXPECT_EQ(spyre_program_load(&cfg, NULL, 64, &p, NULL), SPYRE_ENGINE_E_INVALID);
	cfg.num_cores = 33;
	EXPECT_EQ(spyre_program_load(&cfg, img, sizeof(img), &p, NULL), SPYRE_ENGINE_E_INVALID);
	spyre_engine_config_default(&cfg);
	cfg.reserved_bytes = cfg.scratchpad_bytes;
	EXPECT_EQ(spyre_program_load(&cfg, img, sizeof(img), &p, NULL), SPYRE_ENGINE_E_INVALID);
	EXPECT_EQ(spyre_program_run(NULL, NULL, 0, &mem, NULL, NULL), SPYRE_ENGINE_E_INVALID);
	EXPECT_TRUE(p == NULL);
	spyre_program_free(NULL);
}

TEST(status_names_are_distinct)
{
	for (int i = 0; i < SPYRE_ENGINE_STATUS_COUNT; i++) {
		const char *name = spyre_engine_status_name(i);

		ASSERT_TRUE(name && !strncmp(name, "SPYRE_ENGINE_", 13));
		for (int j = 0; j < i; j++)
			EXPECT_TRUE(strcmp(name, spyre_engine_status_name(j)));
	}
	EXPECT_STREQ(spyre_engine_status_name(-1), "SPYRE_ENGINE_STATUS_UNKNOWN");
	EXPECT_STREQ(spyre_engine_status_name(SPYRE_ENGINE_STATUS_COUNT),
		     "SPYRE_ENGINE_STATUS_UNKNOWN");
}

TAP_MAIN()
