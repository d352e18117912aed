/* SPDX-License-Identifier: MIT */
/* Helpers shared by the op generators (libspyre/ops/ only). */
#ifndef SPYRE_OPS_PLAN_H
#define SPYRE_OPS_PLAN_H

#include "ops_internal.h"
#include "spyre_program_builder.h"

struct pb_program *ops_prog_new(uint32_t num_args);
/* Serialize @prog and append it; arg[i] names argument i's operand. */
spyre_status ops_plan_add(struct ops_plan *plan, struct pb_program *prog, const uint8_t *arg);
/*
 * Move @src's launches to the end of @dst, renaming operand i to map[i]
 * (a plan built for a sub-op, composed into a bigger one); @src keeps
 * its launches without their images, for ops_plan_free.
 */
spyre_status ops_plan_append(struct ops_plan *dst, struct ops_plan *src, const uint8_t *map);
int ops_core_fits(const struct pb_core *c);

/* NULL, malformed layout or a last dim past SPYRE_OP_MAX_ROW. */
spyre_status ops_check_layout(const char *fn, const char *name, const spyre_layout *l);
uint32_t ops_last_dim(const spyre_layout *l);
int ops_same_shape(const spyre_layout *a, const spyre_layout *b);
void ops_shape_str(const spyre_layout *l, char *buf, size_t n);

/* Row-wise kernels: one op over every row of the output. */
enum rw_mode {
	RW_FULL,	/* one row per output row */
	RW_ROW,		/* a single row, used for every output row (kept in scratchpad) */
};

struct rw_input {
	const spyre_layout *l;
	uint16_t arg;
	enum rw_mode mode;
};

struct rw_spec {
	const char *fn;			/* for messages */
	uint8_t opcode, flags;
	float imm0;
	spyre_dtype din, dout;
	uint32_t row_elems;
	unsigned nin;
	struct rw_input in[3];
	const spyre_layout *out;
	uint16_t out_arg;
	uint32_t num_args;
};

spyre_status ops_rowwise(const struct rw_spec *s, struct ops_plan *plan);

uint8_t ops_act_opcode(spyre_act act);

/* Matmul cores (matmul.c; the fused MLP chains two). */
struct mm_operand {
	uint8_t kind;			/* SPK_EP_DRAM or SPK_EP_SCRATCH */
	uint16_t ref;			/* argument or buffer */
	uint64_t base;			/* byte offset of row 0 */
	uint64_t row_bytes;
	spyre_dtype dtype;
};

/* A B stream that receives over the ring what another core reads. */
struct mm_ring_b {
	uint16_t stream;		/* the receiving stream on this core */
	struct pb_endpoint dram;	/* what the sender reads */
	uint32_t total, fifo;
};

struct mm_geom {
	struct mm_operand a, b, c;
	spyre_act act;
	uint32_t K;
	uint32_t tm, tn;		/* tile */
	uint32_t tk, ks, tail_k;	/* K = ks x tk + tail_k */
	/*
	 * If set, B arrives over the ring from core 0 (which streams it from
	 * device memory and multicasts it): each B stream is recorded here for
	 * the caller to build the sender and patch the peer index.
	 */
	struct mm_ring_b *ring_b;
	unsigned *num_ring_b;
};

/* A core's rectangle of tiles of one shape. */
struct mm_item {
	uint32_t row0, ni, tm;		/* rows row0 .. row0 + ni x tm */
	uint32_t col0, nj, tn;		/* columns col0 .. + nj x tn (tn valid per tile) */
};

struct mm_operand ops_mm_dram(uint16_t arg, const spyre_layout *l);
/* Tiles for an M x N x K product whose item must fit a core alone. */
spyre_status ops_mm_geometry(struct mm_geom *g, uint32_t M, uint32_t N);
uint16_t ops_mm_core(const struct mm_geom *g, const struct mm_item *it, struct pb_core *c,
		     uint32_t fifo, uint16_t a_after);
/* FIFO depth (2 or 1) with which the item fits a core alone; 0 if not. */
uint32_t ops_mm_fit(const struct mm_geom *g, const struct mm_item *it);
/* K in chunks of tk (tk = K: whole), the rest in a tail chunk. */
void ops_mm_chunk_k(struct mm_geom *g, uint32_t K, uint32_t tk);
/* The next K chunk to try: a quarter smaller, whole sticks of ps elements, at least one stick. */
uint32_t ops_mm_smaller_tk(uint32_t tk, uint32_t ps);

#endif /* SPYRE_OPS_PLAN_H */
