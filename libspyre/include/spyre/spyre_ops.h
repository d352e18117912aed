/* SPDX-License-Identifier: MIT */
/*
 * libspyre's built-in op library: tensors in the card's stick layout, host
 * conversion to and from it, and ops (matmul, elementwise, softmax,
 * layernorm/rmsnorm, a fused MLP, transpose, permute) launched on a stream.
 * Include after spyre.h.  docs/ops.md describes layouts, the programs each
 * op generates and the tolerances.
 *
 * Layout.  The card moves data in 128-byte sticks (64 fp16/bf16 or 32 fp32
 * elements).  A tensor of shape [d0, .., dn-1] (row-major, the last
 * dimension innermost) is stored with its last dimension padded to whole
 * sticks and every other dimension dense: element (i0, .., in-1) is at
 * sum(ik * strides[k]) bytes, strides[n-1] = element size, strides[n-2] =
 * padded_last * element size, and so on outwards.  A (5,100,150) fp16
 * tensor takes 5 x 100 x 3 sticks (150 padded to 192), the size of the
 * card's [100,3,5,64] device layout.  Padding lanes are 0 after
 * spyre_tensor_pack() and after every op; ops never read them.
 *
 * Thread safety: the layout and pack/unpack calls are pure.  The op calls
 * may be made from any thread, on any stream; one program cache serves
 * every device, locked, and each cached op's kernels are locked while
 * their arguments are set and launched.  An op is queued on the stream
 * like a kernel launch (and is recorded by graph capture like one): its
 * tensors must stay allocated until the stream passes it.  An op that
 * needs device scratch memory (the unfused MLP's intermediate) keeps one
 * per cached op, shared by every stream running it: the launches of one
 * call are queued together and the driver orders jobs that use a buffer,
 * so two streams running the same op take turns on the card.
 */
#ifndef SPYRE_SPYRE_OPS_H
#define SPYRE_SPYRE_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "spyre/spyre.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element types; the values are the kernel format's (SPK_DT_*). */
typedef enum spyre_dtype {
	SPYRE_DTYPE_FP16 = 0,
	SPYRE_DTYPE_BF16 = 1,
	SPYRE_DTYPE_FP32 = 2,
} spyre_dtype;

#define SPYRE_TENSOR_MAX_DIMS	4
#define SPYRE_STICK_BYTES	128
/* The engine's longest row: the last dimension of any op's tensors. */
#define SPYRE_OP_MAX_ROW	65536

/* A tensor's shape and its device layout (filled by spyre_tensor_layout). */
typedef struct spyre_layout {
	spyre_dtype dtype;
	uint32_t ndim;				/* 1 .. 4 */
	uint32_t shape[SPYRE_TENSOR_MAX_DIMS];	/* outermost first; unused dims 1 */
	uint32_t elem_bytes;			/* 2 or 4 */
	uint32_t stick_elems;			/* 64 or 32 */
	uint32_t padded_last;			/* last dim rounded up to whole sticks */
	uint32_t row_sticks;			/* padded_last / stick_elems */
	uint64_t strides[SPYRE_TENSOR_MAX_DIMS];	/* bytes; unused dims 0 */
	uint64_t rows;				/* product of every dim but the last */
	uint64_t bytes;				/* rows x row_sticks x 128 */
} spyre_layout;

/*
 * Compute the layout of a tensor of @ndim (1..4) dimensions @shape (each
 * >= 1) and @dtype.  INVALID_ARGUMENT for a bad dtype, rank or a zero
 * dimension, or a size past 2^48 bytes.
 */
spyre_status spyre_tensor_layout(spyre_dtype dtype, uint32_t ndim, const uint32_t *shape,
				 spyre_layout *layout);

/*
 * Host array (dense row-major, @host_dtype) -> device layout bytes at @dev
 * (layout->bytes of them), converting to layout->dtype (round to nearest
 * even, fp16 overflow to infinity, NaN stays NaN) and zeroing padding.
 */
spyre_status spyre_tensor_pack(const spyre_layout *layout, const void *host,
			       spyre_dtype host_dtype, void *dev);

/* Device layout bytes -> dense host array of @host_dtype; padding ignored. */
spyre_status spyre_tensor_unpack(const spyre_layout *layout, const void *dev, void *host,
				 spyre_dtype host_dtype);

/* A tensor on the card: a buffer, a byte offset (a multiple of 128) and a
 * layout.  Ops check that offset + layout.bytes fits the buffer. */
typedef struct spyre_tensor {
	spyre_buffer *buf;
	uint64_t offset;
	spyre_layout layout;
} spyre_tensor;

/* Fill @t; INVALID_ARGUMENT if the tensor does not fit @buf or the offset
 * is not stick aligned. */
spyre_status spyre_tensor_init(spyre_tensor *t, spyre_buffer *buf, uint64_t offset,
			       const spyre_layout *layout);

/* ------------------------------------------------------------------------
 * Ops.  Every call validates shapes, dtypes and buffer sizes
 * (INVALID_ARGUMENT with a detail message naming the operand), finds or
 * generates the program in the device's cache, and queues one or more
 * kernel launches on @s.  Inputs and outputs must not overlap unless a
 * call says so.  The last dimension of every tensor is at most
 * SPYRE_OP_MAX_ROW.  All arithmetic is fp32 on the card (docs/engine.md).
 * ------------------------------------------------------------------------ */

/* Activation applied by matmul and the MLP. */
typedef enum spyre_act {
	SPYRE_ACT_NONE = 0,
	SPYRE_ACT_RELU = 1,
	SPYRE_ACT_GELU = 2,	/* erf form */
	SPYRE_ACT_SILU = 3,
} spyre_act;

/*
 * C = act(A . B): A [.., M, K] (leading dims are more rows), B [K, N],
 * C [.., M, N] with A's rows.  A and B share a dtype; C may have any.  Any
 * M, K, N (K at most SPYRE_OP_MAX_ROW); tiles are spread over up to 32
 * cores.
 */
spyre_status spyre_op_matmul(spyre_stream *s, const spyre_tensor *a, const spyre_tensor *b,
			     spyre_act act, spyre_tensor *c);

/* Elementwise ops. */
typedef enum spyre_eltwise {
	SPYRE_OP_ADD = 0,	/* binary */
	SPYRE_OP_SUB = 1,
	SPYRE_OP_MUL = 2,
	SPYRE_OP_MAX = 3,
	SPYRE_OP_SCALE = 4,	/* unary: x * scale */
	SPYRE_OP_RELU = 5,
	SPYRE_OP_GELU = 6,
	SPYRE_OP_SILU = 7,
	SPYRE_OP_EXP = 8,
	SPYRE_OP_RSQRT = 9,
	SPYRE_OP_COPY = 10,	/* dtype conversion */
} spyre_eltwise;

/*
 * out = x op y.  x and out have the same shape; y has x's shape, or is one
 * row (its shape is x's last dim) broadcast over x's rows.  x and y share a
 * dtype; out may have another.  out may be x (in place).
 */
spyre_status spyre_op_binary(spyre_stream *s, spyre_eltwise op, const spyre_tensor *x,
			     const spyre_tensor *y, spyre_tensor *out);

/* out = op(x); @scale is used by SPYRE_OP_SCALE only (finite).  out may be x. */
spyre_status spyre_op_unary(spyre_stream *s, spyre_eltwise op, const spyre_tensor *x,
			    float scale, spyre_tensor *out);

/* Softmax along the last dimension. */
spyre_status spyre_op_softmax(spyre_stream *s, const spyre_tensor *x, spyre_tensor *y);

/* Log-softmax along the last dimension (since 0.6): x - max - log(sum(exp(x
 * - max))), finite where softmax underflows to 0. */
spyre_status spyre_op_log_softmax(spyre_stream *s, const spyre_tensor *x, spyre_tensor *y);

/* Layernorm along the last dim: (x - mean) / sqrt(var + eps) * gamma +
 * beta; gamma and beta (shape: x's last dim) may be NULL. */
spyre_status spyre_op_layernorm(spyre_stream *s, const spyre_tensor *x,
				const spyre_tensor *gamma, const spyre_tensor *beta, float eps,
				spyre_tensor *y);

/* RMSnorm along the last dim: x / sqrt(mean(x^2) + eps) * gamma (may be NULL). */
spyre_status spyre_op_rmsnorm(spyre_stream *s, const spyre_tensor *x,
			      const spyre_tensor *gamma, float eps, spyre_tensor *y);

/*
 * y = act(x . w1) . w2: x [.., M, K], w1 [K, F], w2 [F, N], y [.., M, N].
 * When a block of rows' intermediate (rows x F) fits in a core's
 * scratchpad, F is a multiple of 64 and M is 1 or at least 65, one kernel
 * keeps it on chip (fused; core 0 multicasts the weights over the ring);
 * otherwise two matmuls through device memory.  SPYRE_OPS_MLP=fused or
 * unfused in the environment forces a form (fused fails with
 * INVALID_ARGUMENT where it cannot be built).
 */
spyre_status spyre_op_mlp(spyre_stream *s, const spyre_tensor *x, const spyre_tensor *w1,
			  spyre_act act, const spyre_tensor *w2, spyre_tensor *y);

/* y = x with its last two dimensions swapped: x [.., R, C], y [.., C, R];
 * same dtype (a 1-D x is a row: y is [C, 1]). */
spyre_status spyre_op_transpose(spyre_stream *s, const spyre_tensor *x, spyre_tensor *y);

/*
 * y = x with its dimensions reordered: y's dim i is x's dim perm[i]
 * (perm has x's rank entries).  E.g. [T, H, D] -> [H, T, D] with perm
 * {1, 0, 2}.  y may have another dtype (converted).  When the last dim
 * stays last, rows move whole in one pass; otherwise (since 0.2) up to a
 * row permute, a transpose and a row permute run through device scratch
 * memory the cached op keeps (x and y's sizes at most).
 */
spyre_status spyre_op_permute(spyre_stream *s, const spyre_tensor *x, const uint32_t *perm,
			      spyre_tensor *y);

/*
 * Drop @dev's cached op programs (NULL: every device's), destroying their
 * kernels and temporaries once no op call uses them (calls already queued
 * keep running).  spyre_device_close() drops the device's own entries.
 * May be called from any thread at any time.
 */
spyre_status spyre_ops_cache_clear(spyre_device *dev);

/* ------------------------------------------------------------------------
 * Op profiles (since 0.2).  An op call queues one or more kernel launches;
 * its profile adds up their statistics (spyre_launch_profile): device
 * cycles and time, DRAM bytes, ring traffic, firings, MACs and each core's
 * busy cycles are sums over the launches, start_ns is the first launch's
 * start and end_ns the last one's end on the card's clock.
 * ------------------------------------------------------------------------ */
typedef struct spyre_op_profile {
	uint32_t launches;		/* kernel launches the op call made */
	spyre_launch_profile total;	/* summed over them (above) */
} spyre_op_profile;

/*
 * Profile the next op call (spyre_op_*) this thread makes into @profile
 * (NULL cancels): *@profile is written when the call's stream is
 * synchronised after its last launch (the rule of spyre_kernel_launch's
 * profile), and only if every launch of it completed.  One call only: the
 * one after is not profiled unless this is called again.  A call that
 * fails to queue, or that a capturing stream records into a graph, writes
 * nothing (spyre_graph_exec_profile has the replays' launches).
 */
spyre_status spyre_ops_profile_next(spyre_op_profile *profile);

#ifdef __cplusplus
}
#endif

#endif /* SPYRE_SPYRE_OPS_H */
