// SPDX-License-Identifier: MIT
/*
 * Program loader: decodes a kernel image (include/spyre_program.h) and
 * validates every field before anything runs.  The image comes from the guest,
 * so every count, index, offset and product is bounded and overflow-checked
 * here; the scheduler and ops trust what this file accepts.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"
#include "spyre_cmd.h"

/* Record the failure at what idx counts and return its status. */
#define FAIL_AT(st, core, at, idx, ...)                                \
    do {                                                               \
        engine_set_error(err, (st), (core), (at), (idx), __VA_ARGS__); \
        return (st);                                                   \
    } while (0)
#define FAIL(st, core, idx, ...) \
    FAIL_AT(st, core, SPYRE_ENGINE_AT_NONE, idx, __VA_ARGS__)
#define FAIL_AT_STREAM(st, core, idx, ...) \
    FAIL_AT(st, core, SPYRE_ENGINE_AT_STREAM, idx, __VA_ARGS__)
#define FAIL_AT_OP(st, core, idx, ...) \
    FAIL_AT(st, core, SPYRE_ENGINE_AT_OP, idx, __VA_ARGS__)
#define FAIL_AT_BUFFER(st, core, idx, ...) \
    FAIL_AT(st, core, SPYRE_ENGINE_AT_BUFFER, idx, __VA_ARGS__)

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i]) {
            return false;
        }
    }
    return true;
}

/* prog->work += a * b, saturating: the sum only has to exceed the limit. */
static void work_add(struct spyre_program *prog, uint64_t a, uint64_t b)
{
    uint64_t product;

    if (__builtin_mul_overflow(a, b, &product) ||
        __builtin_add_overflow(prog->work, product, &prog->work)) {
        prog->work = UINT64_MAX;
    }
}

/* An fp32 immediate of the image (little-endian, like every field). */
static float get_lef32(const uint8_t *p)
{
    uint32_t u = spyre_get_le32(p);
    float f;

    memcpy(&f, &u, sizeof(f));
    return f;
}

/*
 * Loop counts and strides of a DRAM or scratchpad endpoint: every count at
 * least 1, their product the stream's sticks, strides whole sticks, and the
 * extent (lowest and highest stick start relative to offset) computable
 * without overflow.
 */
static enum spyre_engine_status check_pattern(struct endpoint *ep,
                                              uint32_t total, int core, int idx,
                                              struct spyre_engine_error *err)
{
    uint64_t product = 1;

    ep->min_off = ep->max_off = 0;
    for (int d = 0; d < SPK_EP_DIMS; d++) {
        int64_t span;

        if (!ep->count[d]) {
            FAIL_AT_STREAM(SPYRE_ENGINE_E_PATTERN, core, idx,
                           "loop %d has count 0", d);
        }
        if (__builtin_mul_overflow(product, ep->count[d], &product) ||
            product > total) {
            FAIL_AT_STREAM(SPYRE_ENGINE_E_PATTERN, core, idx,
                           "loop counts multiply past the stream's %u sticks",
                           total);
        }
        if (ep->stride[d] % STICK_BYTES) {
            FAIL_AT_STREAM(SPYRE_ENGINE_E_PATTERN, core, idx,
                           "stride %d is not a multiple of 128 bytes", d);
        }
        if (__builtin_mul_overflow(ep->stride[d], (int64_t)ep->count[d] - 1,
                                   &span)) {
            FAIL_AT_STREAM(SPYRE_ENGINE_E_PATTERN, core, idx,
                           "stride %d overflows", d);
        }
        if (__builtin_add_overflow(span > 0 ? ep->max_off : ep->min_off, span,
                                   span > 0 ? &ep->max_off : &ep->min_off)) {
            FAIL_AT_STREAM(SPYRE_ENGINE_E_PATTERN, core, idx,
                           "pattern extent overflows");
        }
    }
    if (product != total) {
        FAIL_AT_STREAM(SPYRE_ENGINE_E_PATTERN, core, idx,
                       "loop counts give %llu sticks, the stream moves %u",
                       (unsigned long long)product, total);
    }
    return SPYRE_ENGINE_OK;
}

static void decode_endpoint(const uint8_t *p, struct endpoint *ep, uint8_t kind)
{
    ep->kind = kind;
    ep->ref = spyre_get_le16(p + SPK_EP_REF);
    ep->core = spyre_get_le32(p + SPK_EP_CORE);
    ep->offset = spyre_get_le64(p + SPK_EP_OFFSET);
    for (int d = 0; d < SPK_EP_DIMS; d++) {
        ep->count[d] = spyre_get_le32(p + SPK_EP_COUNT + 4 * d);
        ep->stride[d] = (int64_t)spyre_get_le64(p + SPK_EP_STRIDE + 8 * d);
    }
}

static enum spyre_engine_status check_endpoint(
    const struct spyre_program *prog, const struct core_program *cp,
    struct endpoint *ep, const uint8_t *raw, uint32_t total, bool is_src,
    int idx, struct spyre_engine_error *err)
{
    int core = (int)cp->core;
    enum spyre_engine_status st;

    if (spyre_get_le16(raw + 2)) {
        FAIL_AT_STREAM(SPYRE_ENGINE_E_RESERVED, core, idx,
                       "endpoint reserved bytes set");
    }
    switch (ep->kind) {
    case SPK_EP_OP:
        if (!all_zero(raw, SPK_EP_BYTES)) {
            FAIL_AT_STREAM(SPYRE_ENGINE_E_RESERVED, core, idx,
                           "op endpoint with fields set");
        }
        return SPYRE_ENGINE_OK;
    case SPK_EP_RING:
        if (!all_zero(raw + SPK_EP_OFFSET, SPK_EP_BYTES - SPK_EP_OFFSET)) {
            FAIL_AT_STREAM(SPYRE_ENGINE_E_RESERVED, core, idx,
                           "ring endpoint with a pattern");
        }
        if (is_src ? ep->core >= prog->cfg.num_cores || ep->core == cp->core
                   : !ep->core || (ep->core & ~prog->core_mask) ||
                         (ep->core & (1u << cp->core))) {
            FAIL_AT_STREAM(SPYRE_ENGINE_E_RING, core, idx,
                           "ring peer core(s) 0x%x invalid", ep->core);
        }
        return SPYRE_ENGINE_OK;
    case SPK_EP_DRAM:
        if (ep->ref >= prog->num_args) {
            FAIL_AT_STREAM(SPYRE_ENGINE_E_STREAM, core, idx,
                           "argument %u of %u", ep->ref, prog->num_args);
        }
        break;
    case SPK_EP_SCRATCH:
        if (ep->ref >= cp->num_buffers) {
            FAIL_AT_STREAM(SPYRE_ENGINE_E_STREAM, core, idx, "buffer %u of %u",
                           ep->ref, cp->num_buffers);
        }
        break;
    }
    if (ep->core) {
        FAIL_AT_STREAM(SPYRE_ENGINE_E_RESERVED, core, idx,
                       "core field set on a memory endpoint");
    }
    st = check_pattern(ep, total, core, idx, err);
    if (st) {
        return st;
    }
    if (ep->kind == SPK_EP_SCRATCH) {
        const struct buffer_desc *b = &cp->buffers[ep->ref];

        /* offset <= 2^32 keeps the sums below in range: extents are bounded. */
        if (ep->offset % STICK_BYTES || ep->offset > b->bytes ||
            (int64_t)ep->offset + ep->min_off < 0 ||
            ep->max_off > (int64_t)b->bytes ||
            (int64_t)ep->offset + ep->max_off + STICK_BYTES > b->bytes) {
            FAIL_AT_STREAM(SPYRE_ENGINE_E_PATTERN, core, idx,
                           "pattern leaves buffer %u (%u bytes)", ep->ref,
                           b->bytes);
        }
    } else if (ep->offset % STICK_BYTES) {
        FAIL_AT_STREAM(SPYRE_ENGINE_E_PATTERN, core, idx,
                       "device offset not 128-byte aligned");
    }
    return SPYRE_ENGINE_OK;
}

static enum spyre_engine_status decode_buffers(const struct spyre_program *prog,
                                               struct core_program *cp,
                                               const uint8_t *p,
                                               struct spyre_engine_error *err)
{
    const struct spyre_engine_config *cfg = &prog->cfg;
    uint64_t limit = (uint64_t)cfg->reserved_bytes + cp->spad_declared;
    int core = (int)cp->core;

    for (unsigned i = 0; i < cp->num_buffers; i++, p += SPK_BUF_BYTES) {
        struct buffer_desc *b = &cp->buffers[i];
        uint64_t end;

        memset(b, 0, sizeof(*b));
        b->offset = spyre_get_le32(p + SPK_BUF_OFFSET);
        b->bytes = spyre_get_le32(p + SPK_BUF_SIZE);
        end = (uint64_t)b->offset + b->bytes;
        if (!b->bytes || b->offset % STICK_BYTES || b->bytes % STICK_BYTES ||
            b->offset < cfg->reserved_bytes || end > cfg->scratchpad_bytes) {
            FAIL_AT_BUFFER(
                SPYRE_ENGINE_E_BUFFER, core, (int)i,
                "buffer [0x%x, +0x%x) is not 128-byte aligned inside "
                "[0x%x, 0x%x)",
                b->offset, b->bytes, cfg->reserved_bytes,
                cfg->scratchpad_bytes);
        }
        if (end > limit) {
            FAIL_AT_BUFFER(
                SPYRE_ENGINE_E_SPAD_DECLARED, core, (int)i,
                "buffer ends at 0x%llx, the program declares 0x%x bytes",
                (unsigned long long)end, cp->spad_declared);
        }
        for (unsigned j = 0; j < i; j++) {
            const struct buffer_desc *o = &cp->buffers[j];

            if (b->offset < (uint64_t)o->offset + o->bytes && o->offset < end) {
                FAIL_AT_BUFFER(SPYRE_ENGINE_E_OVERLAP, core, (int)i,
                               "buffers %u and %u overlap", j, i);
            }
        }
    }
    return SPYRE_ENGINE_OK;
}

static enum spyre_engine_status decode_streams(const struct spyre_program *prog,
                                               struct core_program *cp,
                                               const uint8_t *p,
                                               struct spyre_engine_error *err)
{
    int core = (int)cp->core;
    int fifo_owner[SPK_MAX_BUFFERS];

    for (unsigned i = 0; i < SPK_MAX_BUFFERS; i++) {
        fifo_owner[i] = -1;
    }
    for (unsigned i = 0; i < cp->num_streams; i++, p += SPK_STREAM_BYTES) {
        struct stream_desc *s = &cp->streams[i];
        uint8_t sk = p[SPK_STREAM_SRC_KIND], dk = p[SPK_STREAM_DST_KIND];
        enum spyre_engine_status st;
        int idx = (int)i;

        memset(s, 0, sizeof(*s));
        s->fifo_buffer = spyre_get_le16(p + SPK_STREAM_FIFO_BUFFER);
        s->fifo_sticks = spyre_get_le32(p + SPK_STREAM_FIFO_STICKS);
        s->total_sticks = spyre_get_le32(p + SPK_STREAM_TOTAL_STICKS);
        s->after = spyre_get_le16(p + SPK_STREAM_AFTER);
        s->producer_op = s->consumer_op = -1;
        if (spyre_get_le16(p + 14)) {
            FAIL_AT_STREAM(SPYRE_ENGINE_E_RESERVED, core, idx,
                           "stream reserved bytes set");
        }
        if (sk > SPK_EP_KIND_MAX || dk > SPK_EP_KIND_MAX ||
            (sk == SPK_EP_RING && dk == SPK_EP_RING)) {
            FAIL_AT_STREAM(SPYRE_ENGINE_E_STREAM, core, idx,
                           "endpoint kinds %u -> %u", sk, dk);
        }
        if (!s->total_sticks) {
            FAIL_AT_STREAM(SPYRE_ENGINE_E_STREAM, core, idx,
                           "stream moves no sticks");
        }
        if (s->fifo_buffer >= cp->num_buffers || !s->fifo_sticks ||
            s->fifo_sticks > cp->buffers[s->fifo_buffer].bytes / STICK_BYTES) {
            FAIL_AT_STREAM(SPYRE_ENGINE_E_STREAM, core, idx,
                           "FIFO of %u sticks in buffer %u does not fit",
                           s->fifo_sticks, s->fifo_buffer);
        }
        if (fifo_owner[s->fifo_buffer] >= 0) {
            FAIL_AT_STREAM(SPYRE_ENGINE_E_OVERLAP, core, idx,
                           "buffer %u is the FIFO of streams %d and %u",
                           s->fifo_buffer, fifo_owner[s->fifo_buffer], i);
        }
        fifo_owner[s->fifo_buffer] = idx;
        if (s->after != SPK_NONE &&
            (s->after >= cp->num_streams || s->after == i)) {
            FAIL_AT_STREAM(SPYRE_ENGINE_E_STREAM, core, idx,
                           "waits for stream %u", s->after);
        }
        decode_endpoint(p + SPK_STREAM_SRC, &s->src, sk);
        decode_endpoint(p + SPK_STREAM_DST, &s->dst, dk);
        st = check_endpoint(prog, cp, &s->src, p + SPK_STREAM_SRC,
                            s->total_sticks, true, idx, err);
        if (!st) {
            st = check_endpoint(prog, cp, &s->dst, p + SPK_STREAM_DST,
                                s->total_sticks, false, idx, err);
        }
        if (st) {
            return st;
        }
    }
    /* A FIFO buffer belongs to its stream alone. */
    for (unsigned i = 0; i < cp->num_streams; i++) {
        const struct stream_desc *s = &cp->streams[i];

        for (int e = 0; e < 2; e++) {
            const struct endpoint *ep = e ? &s->dst : &s->src;

            if (ep->kind == SPK_EP_SCRATCH && fifo_owner[ep->ref] >= 0) {
                FAIL_AT_STREAM(SPYRE_ENGINE_E_OVERLAP, core, (int)i,
                               "buffer %u is a FIFO and a stream's data",
                               ep->ref);
            }
        }
    }
    return SPYRE_ENGINE_OK;
}

/* Sticks per firing on each side, from the op's shape (already bounded). */
static void op_stick_counts(struct op_desc *op)
{
    uint32_t row_in = sticks_for(op->row_elems, op->dtype_in);
    uint32_t row_out = sticks_for(op->row_elems, op->dtype_out);

    for (unsigned i = 0; i < op->num_in; i++) {
        op->in_sticks[i] = op->rows * row_in;
    }
    op->out_sticks = op->rows * row_out;
    switch (op->opcode) {
    case SPK_OPC_REDUCE_SUM:
    case SPK_OPC_REDUCE_MAX:
        op->out_sticks = op->flags & SPK_OPF_ACROSS ? row_out : op->rows;
        break;
    case SPK_OPC_MATMUL:
        op->in_sticks[0] = op->rows * sticks_for(op->k, op->dtype_in);
        op->in_sticks[1] = op->k * row_in;
        break;
    case SPK_OPC_TRANSPOSE:
        op->out_sticks = op->row_elems * sticks_for(op->rows, op->dtype_out);
        break;
    }
}

static enum spyre_engine_status check_op_shape(const struct core_program *cp,
                                               struct op_desc *op,
                                               const uint8_t *p, int idx,
                                               struct spyre_engine_error *err)
{
    int core = (int)cp->core;
    bool matmul = op->opcode == SPK_OPC_MATMUL;

    if (!op->firings || !op->row_elems || op->row_elems > SPK_MAX_ROW_ELEMS ||
        !op->rows || op->rows > SPK_MAX_ROWS) {
        FAIL_AT_OP(SPYRE_ENGINE_E_OP, core, idx,
                   "firings %u, row_elems %u, rows %u out of range",
                   op->firings, op->row_elems, op->rows);
    }
    if ((op->flags & SPK_OPF_ACROSS) && op->opcode != SPK_OPC_REDUCE_SUM &&
        op->opcode != SPK_OPC_REDUCE_MAX && op->opcode != SPK_OPC_SOFTMAX &&
        op->opcode != SPK_OPC_LOG_SOFTMAX) {
        FAIL_AT_OP(SPYRE_ENGINE_E_OP, core, idx,
                   "ACROSS on an op that does not reduce");
    }
    if (!isfinite(op->imm0) || spyre_get_le32(p + SPK_OP_IMM1)) {
        FAIL_AT_OP(SPYRE_ENGINE_E_OP, core, idx, "imm0 not finite or imm1 set");
    }
    if ((op->opcode == SPK_OPC_LAYERNORM || op->opcode == SPK_OPC_RMSNORM) &&
        !(op->imm0 > 0)) {
        FAIL_AT_OP(SPYRE_ENGINE_E_OP, core, idx, "epsilon must be positive");
    }
    if (op->opcode == SPK_OPC_FILL && op->dtype_in != op->dtype_out) {
        FAIL_AT_OP(SPYRE_ENGINE_E_DTYPE, core, idx, "fill has one data type");
    }
    if (!matmul) {
        if (op->k || op->k_steps || op->acc_buffer != SPK_NONE) {
            FAIL_AT_OP(SPYRE_ENGINE_E_RESERVED, core, idx,
                       "matmul fields on another op");
        }
        return SPYRE_ENGINE_OK;
    }
    if (!op->k || op->k > SPK_MAX_ROW_ELEMS || !op->k_steps ||
        op->firings % op->k_steps) {
        FAIL_AT_OP(SPYRE_ENGINE_E_OP, core, idx, "k %u, k_steps %u, firings %u",
                   op->k, op->k_steps, op->firings);
    }
    if (op->acc_buffer >= cp->num_buffers ||
        (uint64_t)cp->buffers[op->acc_buffer].bytes <
            (uint64_t)op->rows * sticks_for(op->row_elems, SPK_DT_FP32) *
                STICK_BYTES) {
        FAIL_AT_OP(SPYRE_ENGINE_E_OP, core, idx,
                   "accumulator buffer missing or too small");
    }
    return SPYRE_ENGINE_OK;
}

/* Attach an op end to a stream; the stream must be an op end there and free. */
static enum spyre_engine_status bind_stream(struct core_program *cp,
                                            uint16_t sid, bool as_input,
                                            int op_idx, uint64_t sticks,
                                            uint32_t per_firing,
                                            struct spyre_engine_error *err)
{
    int core = (int)cp->core;
    struct stream_desc *s;
    int16_t *slot;

    if (sid >= cp->num_streams) {
        FAIL_AT_OP(SPYRE_ENGINE_E_BINDING, core, op_idx, "stream %u of %u", sid,
                   cp->num_streams);
    }
    s = &cp->streams[sid];
    slot = as_input ? &s->consumer_op : &s->producer_op;
    if ((as_input ? s->dst.kind : s->src.kind) != SPK_EP_OP || *slot >= 0) {
        FAIL_AT_OP(SPYRE_ENGINE_E_BINDING, core, op_idx,
                   "stream %u is not a free op %s", sid,
                   as_input ? "input" : "output");
    }
    *slot = (int16_t)op_idx;
    if (sticks != s->total_sticks) {
        FAIL_AT_OP(SPYRE_ENGINE_E_COUNT, core, op_idx,
                   "op moves %llu sticks on stream %u, which carries %u",
                   (unsigned long long)sticks, sid, s->total_sticks);
    }
    if (per_firing > s->fifo_sticks) {
        FAIL_AT_OP(SPYRE_ENGINE_E_FIFO_SMALL, core, op_idx,
                   "a firing needs %u sticks, stream %u's FIFO holds %u",
                   per_firing, sid, s->fifo_sticks);
    }
    return SPYRE_ENGINE_OK;
}

static enum spyre_engine_status decode_ops(struct spyre_program *prog,
                                           struct core_program *cp,
                                           const uint8_t *p,
                                           struct spyre_engine_error *err)
{
    int core = (int)cp->core;

    for (unsigned i = 0; i < cp->num_ops; i++, p += SPK_OP_BYTES) {
        struct op_desc *op = &cp->ops[i];
        unsigned min_in, max_in;
        enum spyre_engine_status st;
        uint64_t out_firings;
        int idx = (int)i;

        memset(op, 0, sizeof(*op));
        op->opcode = p[SPK_OP_OPCODE];
        op->dtype_in = p[SPK_OP_DTYPE_IN];
        op->dtype_out = p[SPK_OP_DTYPE_OUT];
        op->flags = p[SPK_OP_FLAGS];
        for (int j = 0; j < 3; j++) {
            op->in[j] = spyre_get_le16(p + SPK_OP_IN + 2 * j);
        }
        op->out = spyre_get_le16(p + SPK_OP_OUT);
        op->acc_buffer = spyre_get_le16(p + SPK_OP_ACC_BUFFER);
        op->firings = spyre_get_le32(p + SPK_OP_FIRINGS);
        op->row_elems = spyre_get_le32(p + SPK_OP_ROW_ELEMS);
        op->rows = spyre_get_le32(p + SPK_OP_ROWS);
        op->k = spyre_get_le32(p + SPK_OP_K);
        op->k_steps = spyre_get_le32(p + SPK_OP_K_STEPS);
        op->imm0 = get_lef32(p + SPK_OP_IMM0);
        op->imm1 = 0;
        if (!spk_op_inputs(op->opcode, &min_in, &max_in)) {
            FAIL_AT_OP(SPYRE_ENGINE_E_OPCODE, core, idx,
                       "unknown opcode 0x%02x", op->opcode);
        }
        if (op->dtype_in > SPK_DT_MAX || op->dtype_out > SPK_DT_MAX) {
            FAIL_AT_OP(SPYRE_ENGINE_E_DTYPE, core, idx, "data types %u -> %u",
                       op->dtype_in, op->dtype_out);
        }
        if ((op->flags & ~SPK_OPF_ALL) || spyre_get_le16(p + 14) ||
            spyre_get_le32(p + 36) || !all_zero(p + 48, SPK_OP_BYTES - 48)) {
            FAIL_AT_OP(SPYRE_ENGINE_E_RESERVED, core, idx,
                       "op reserved bits set");
        }
        op->num_in = 0;
        while (op->num_in < 3 && op->in[op->num_in] != SPK_NONE) {
            op->num_in++;
        }
        for (unsigned j = op->num_in; j < 3; j++) {
            if (op->in[j] != SPK_NONE) {
                FAIL_AT_OP(SPYRE_ENGINE_E_OP, core, idx,
                           "inputs must be packed first");
            }
        }
        if (op->num_in < min_in || op->num_in > max_in) {
            FAIL_AT_OP(SPYRE_ENGINE_E_OP, core, idx,
                       "%u inputs, opcode takes %u-%u", op->num_in, min_in,
                       max_in);
        }
        st = check_op_shape(cp, op, p, idx, err);
        if (st) {
            return st;
        }
        op_stick_counts(op);
        for (unsigned j = 0; j < op->num_in; j++) {
            st = bind_stream(cp, op->in[j], true, idx,
                             (uint64_t)op->firings * op->in_sticks[j],
                             op->in_sticks[j], err);
            if (st) {
                return st;
            }
        }
        out_firings = op->opcode == SPK_OPC_MATMUL ? op->firings / op->k_steps
                                                   : op->firings;
        st = bind_stream(cp, op->out, false, idx, out_firings * op->out_sticks,
                         op->out_sticks, err);
        if (st) {
            return st;
        }
        /* Work: sticks each firing touches, and matmul MACs / 4096. */
        work_add(prog, op->firings, op->out_sticks + 1);
        for (unsigned j = 0; j < op->num_in; j++) {
            work_add(prog, op->firings, op->in_sticks[j]);
        }
        if (op->opcode == SPK_OPC_MATMUL) {
            work_add(prog, (uint64_t)op->firings * op->rows,
                     (uint64_t)op->k * (op->row_elems / 4096 + 1));
        }
    }
    for (unsigned i = 0; i < cp->num_streams; i++) {
        const struct stream_desc *s = &cp->streams[i];

        if ((s->src.kind == SPK_EP_OP && s->producer_op < 0) ||
            (s->dst.kind == SPK_EP_OP && s->consumer_op < 0)) {
            FAIL_AT_STREAM(SPYRE_ENGINE_E_BINDING, core, (int)i,
                           "stream %u has an op end no op uses", i);
        }
        work_add(prog, s->total_sticks,
                 (s->src.kind != SPK_EP_OP) + (s->dst.kind != SPK_EP_OP));
    }
    return SPYRE_ENGINE_OK;
}

/* How many times the core's streams and ops name buffer b. */
static unsigned buffer_uses(const struct core_program *cp, unsigned b)
{
    unsigned uses = 0;

    for (unsigned i = 0; i < cp->num_streams; i++) {
        const struct stream_desc *s = &cp->streams[i];

        uses += s->fifo_buffer == b;
        uses += s->src.kind == SPK_EP_SCRATCH && s->src.ref == b;
        uses += s->dst.kind == SPK_EP_SCRATCH && s->dst.ref == b;
    }
    for (unsigned i = 0; i < cp->num_ops; i++) {
        uses += cp->ops[i].opcode == SPK_OPC_MATMUL &&
                cp->ops[i].acc_buffer == b;
    }
    return uses;
}

/*
 * Matmul accumulators only their op names: a firing may compute into its
 * output instead (matmul.c), as the program cannot tell.
 */
static void find_private_accs(struct core_program *cp)
{
    for (unsigned i = 0; i < cp->num_ops; i++) {
        struct op_desc *op = &cp->ops[i];

        op->acc_private = op->opcode == SPK_OPC_MATMUL &&
                          buffer_uses(cp, op->acc_buffer) == 1;
    }
}

static enum spyre_engine_status decode_core(struct spyre_program *prog,
                                            struct core_program *cp,
                                            const uint8_t *p, uint32_t bytes,
                                            struct spyre_engine_error *err)
{
    int core = (int)cp->core;
    uint64_t want;
    enum spyre_engine_status st;

    if (bytes < SPK_PROG_HDR_BYTES) {
        FAIL(SPYRE_ENGINE_E_TRUNCATED, core, -1, "core program of %u bytes",
             bytes);
    }
    cp->num_buffers = spyre_get_le16(p + SPK_PROG_NUM_BUFFERS);
    cp->num_streams = spyre_get_le16(p + SPK_PROG_NUM_STREAMS);
    cp->num_ops = spyre_get_le16(p + SPK_PROG_NUM_OPS);
    if (spyre_get_le16(p + 6)) {
        FAIL(SPYRE_ENGINE_E_RESERVED, core, -1,
             "core program reserved bytes set");
    }
    if (cp->num_buffers > SPK_MAX_BUFFERS ||
        cp->num_streams > SPK_MAX_STREAMS || cp->num_ops > SPK_MAX_OPS) {
        FAIL(SPYRE_ENGINE_E_TOO_MANY, core, -1,
             "%u buffers, %u streams, %u ops", cp->num_buffers, cp->num_streams,
             cp->num_ops);
    }
    want = SPK_PROG_HDR_BYTES + (uint64_t)cp->num_buffers * SPK_BUF_BYTES +
           (uint64_t)cp->num_streams * SPK_STREAM_BYTES +
           (uint64_t)cp->num_ops * SPK_OP_BYTES;
    if (want != bytes) {
        FAIL(SPYRE_ENGINE_E_TRUNCATED, core, -1,
             "core program is %u bytes, its counts need %llu", bytes,
             (unsigned long long)want);
    }
    p += SPK_PROG_HDR_BYTES;
    st = decode_buffers(prog, cp, p, err);
    if (st) {
        return st;
    }
    p += cp->num_buffers * SPK_BUF_BYTES;
    st = decode_streams(prog, cp, p, err);
    if (st) {
        return st;
    }
    p += cp->num_streams * SPK_STREAM_BYTES;
    st = decode_ops(prog, cp, p, err);
    if (!st) {
        find_private_accs(cp);
    }
    return st;
}

/* Every ring sender names receivers that name it back, and vice versa. */
static enum spyre_engine_status check_ring_pairs(
    const struct spyre_program *prog, struct spyre_engine_error *err)
{
    for (unsigned c = 0; c < prog->num_cores; c++) {
        const struct core_program *cp = &prog->cores[c];

        for (unsigned i = 0; i < cp->num_streams; i++) {
            const struct stream_desc *s = &cp->streams[i];
            const struct core_program *peer;
            const struct stream_desc *ps;

            if (s->dst.kind == SPK_EP_RING) {
                for (unsigned b = 0; b < prog->cfg.num_cores; b++) {
                    if (!(s->dst.core & (1u << b))) {
                        continue;
                    }
                    peer = &prog->cores[prog->core_slot[b]];
                    ps = s->dst.ref < peer->num_streams
                             ? &peer->streams[s->dst.ref]
                             : NULL;
                    if (!ps || ps->src.kind != SPK_EP_RING ||
                        ps->src.core != cp->core || ps->src.ref != i ||
                        ps->total_sticks != s->total_sticks) {
                        FAIL_AT_STREAM(SPYRE_ENGINE_E_RING, (int)cp->core,
                                       (int)i,
                                       "core %u stream %u is not this stream's "
                                       "receiver",
                                       b, s->dst.ref);
                    }
                }
            }
            if (s->src.kind == SPK_EP_RING) {
                if (prog->core_slot[s->src.core] < 0) {
                    FAIL_AT_STREAM(SPYRE_ENGINE_E_RING, (int)cp->core, (int)i,
                                   "sender core %u does not take part",
                                   s->src.core);
                }
                peer = &prog->cores[prog->core_slot[s->src.core]];
                ps = s->src.ref < peer->num_streams ? &peer->streams[s->src.ref]
                                                    : NULL;
                if (!ps || ps->dst.kind != SPK_EP_RING ||
                    !(ps->dst.core & (1u << cp->core)) || ps->dst.ref != i) {
                    FAIL_AT_STREAM(SPYRE_ENGINE_E_RING, (int)cp->core, (int)i,
                                   "core %u stream %u does not send here",
                                   s->src.core, s->src.ref);
                }
            }
        }
    }
    return SPYRE_ENGINE_OK;
}

static enum spyre_engine_status check_header(
    const struct spyre_engine_config *cfg, const uint8_t *img, size_t len,
    uint32_t *image_bytes, struct spyre_engine_error *err)
{
    uint32_t mask;

    if (len < SPK_HDR_BYTES) {
        FAIL(SPYRE_ENGINE_E_TRUNCATED, -1, -1, "%zu bytes, the header needs %u",
             len, SPK_HDR_BYTES);
    }
    if (spyre_get_le32(img + SPK_HDR_MAGIC) != SPK_MAGIC) {
        FAIL(SPYRE_ENGINE_E_MAGIC, -1, -1, "magic 0x%08x", spyre_get_le32(img));
    }
    if (spyre_get_le16(img + SPK_HDR_VERSION_MAJOR) != SPK_VERSION_MAJOR ||
        spyre_get_le16(img + SPK_HDR_VERSION_MINOR) > SPK_VERSION_MINOR) {
        FAIL(SPYRE_ENGINE_E_VERSION, -1, -1,
             "version %u.%u, the engine runs %u.%u",
             spyre_get_le16(img + SPK_HDR_VERSION_MAJOR),
             spyre_get_le16(img + SPK_HDR_VERSION_MINOR), SPK_VERSION_MAJOR,
             SPK_VERSION_MINOR);
    }
    *image_bytes = spyre_get_le32(img + SPK_HDR_IMAGE_BYTES);
    if (*image_bytes < SPK_HDR_BYTES || *image_bytes > len) {
        FAIL(SPYRE_ENGINE_E_TRUNCATED, -1, -1,
             "image declares %u bytes, %zu given", *image_bytes, len);
    }
    if (spyre_get_le32(img + SPK_HDR_FLAGS) ||
        !all_zero(img + 24, SPK_HDR_BYTES - 24)) {
        FAIL(SPYRE_ENGINE_E_RESERVED, -1, -1, "header reserved bytes set");
    }
    mask = spyre_get_le32(img + SPK_HDR_CORE_MASK);
    if (!mask || (cfg->num_cores < 32 && (mask >> cfg->num_cores))) {
        FAIL(SPYRE_ENGINE_E_CORE_MASK, -1, -1, "core mask 0x%08x on %u cores",
             mask, cfg->num_cores);
    }
    if (spyre_get_le32(img + SPK_HDR_NUM_ARGS) > SPK_MAX_ARGS) {
        FAIL(SPYRE_ENGINE_E_TOO_MANY, -1, -1, "%u arguments",
             spyre_get_le32(img + SPK_HDR_NUM_ARGS));
    }
    return SPYRE_ENGINE_OK;
}

static bool config_valid(const struct spyre_engine_config *cfg)
{
    const struct spyre_timing_params *t = &cfg->timing;

    return cfg->num_cores >= 1 && cfg->num_cores <= SPYRE_ENGINE_MAX_CORES &&
           cfg->scratchpad_bytes % STICK_BYTES == 0 &&
           cfg->reserved_bytes % STICK_BYTES == 0 &&
           cfg->reserved_bytes < cfg->scratchpad_bytes && t->clock_ghz > 0 &&
           t->pe_macs_per_cycle > 0 && t->pe_fp32_factor > 0 &&
           t->sfp_lanes_per_cycle > 0 && t->dram_bytes_per_ns > 0 &&
           t->ring_bytes_per_cycle > 0 && t->spad_bytes_per_cycle > 0 &&
           t->burst_sticks >= 1 && t->pe_firing_cycles >= 0 &&
           t->op_firing_cycles >= 0 && t->dram_turnaround_ns >= 0 &&
           t->dram_latency_ns >= 0 && t->ring_hop_cycles >= 0 &&
           t->spad_request_cycles >= 0;
}

static enum spyre_engine_status decode_image(struct spyre_program *prog,
                                             const uint8_t *img, size_t len,
                                             struct spyre_engine_error *err)
{
    uint32_t image_bytes, table_end;
    enum spyre_engine_status st;
    unsigned slot = 0;

    st = check_header(&prog->cfg, img, len, &image_bytes, err);
    if (st) {
        return st;
    }
    prog->core_mask = spyre_get_le32(img + SPK_HDR_CORE_MASK);
    prog->num_args = spyre_get_le32(img + SPK_HDR_NUM_ARGS);
    prog->num_cores = (unsigned)__builtin_popcount(prog->core_mask);
    table_end = SPK_HDR_BYTES + prog->num_cores * SPK_CORE_ENTRY_BYTES;
    if (table_end > image_bytes) {
        FAIL(SPYRE_ENGINE_E_TRUNCATED, -1, -1, "core table past the image");
    }
    /*
     * Not cleared: 16 KiB a core, mostly tables past the counts, which
     * nothing reads; decode_core clears what it decodes.
     */
    prog->cores = malloc(prog->num_cores * sizeof(*prog->cores));
    if (!prog->cores) {
        FAIL(SPYRE_ENGINE_E_NOMEM, -1, -1, "core programs");
    }
    for (unsigned c = 0; c < SPYRE_ENGINE_MAX_CORES; c++) {
        prog->core_slot[c] = prog->core_mask & (1u << c) ? (int)slot++ : -1;
    }
    for (unsigned c = 0; c < prog->num_cores; c++) {
        const uint8_t *e = img + SPK_HDR_BYTES + c * SPK_CORE_ENTRY_BYTES;
        struct core_program *cp = &prog->cores[c];
        uint32_t off = spyre_get_le32(e + SPK_CORE_PROGRAM_OFFSET);
        uint32_t bytes = spyre_get_le32(e + SPK_CORE_PROGRAM_BYTES);

        memset(cp, 0, offsetof(struct core_program, buffers));

        for (cp->core = 0; prog->core_slot[cp->core] != (int)c; cp->core++) {
            ;
        }
        cp->spad_declared = spyre_get_le32(e + SPK_CORE_SPAD_BYTES);
        if (spyre_get_le32(e + 12)) {
            FAIL(SPYRE_ENGINE_E_RESERVED, (int)cp->core, -1,
                 "core entry reserved");
        }
        if (off < table_end || (uint64_t)off + bytes > image_bytes) {
            FAIL(SPYRE_ENGINE_E_TRUNCATED, (int)cp->core, -1,
                 "core program [0x%x, +0x%x) outside the image", off, bytes);
        }
        if (cp->spad_declared >
            prog->cfg.scratchpad_bytes - prog->cfg.reserved_bytes) {
            FAIL(SPYRE_ENGINE_E_SPAD_DECLARED, (int)cp->core, -1,
                 "declares 0x%x scratchpad bytes, 0x%x usable",
                 cp->spad_declared,
                 prog->cfg.scratchpad_bytes - prog->cfg.reserved_bytes);
        }
        st = decode_core(prog, cp, img + off, bytes, err);
        if (st) {
            return st;
        }
    }
    st = check_ring_pairs(prog, err);
    if (st) {
        return st;
    }
    if (prog->work > prog->cfg.max_work) {
        FAIL(SPYRE_ENGINE_E_TOO_MUCH_WORK, -1, -1, "work %llu, limit %llu",
             (unsigned long long)prog->work,
             (unsigned long long)prog->cfg.max_work);
    }
    return SPYRE_ENGINE_OK;
}

enum spyre_engine_status spyre_program_load(
    const struct spyre_engine_config *cfg, const void *image, size_t len,
    struct spyre_program **out, struct spyre_engine_error *err)
{
    struct spyre_program *prog;
    enum spyre_engine_status st;

    engine_set_error(err, SPYRE_ENGINE_OK, -1, SPYRE_ENGINE_AT_NONE, -1, "%s",
                     "");
    if (!out) {
        FAIL(SPYRE_ENGINE_E_INVALID, -1, -1, "out is NULL");
    }
    *out = NULL;
    if (!cfg || !config_valid(cfg) || (!image && len)) {
        FAIL(SPYRE_ENGINE_E_INVALID, -1, -1,
             "bad configuration or image pointer");
    }
    prog = calloc(1, sizeof(*prog));
    if (!prog) {
        FAIL(SPYRE_ENGINE_E_NOMEM, -1, -1, "program");
    }
    prog->cfg = *cfg;
    st = decode_image(prog, image, len, err);
    if (st) {
        spyre_program_free(prog);
        return st;
    }
    *out = prog;
    return SPYRE_ENGINE_OK;
}

unsigned spyre_program_num_args(const struct spyre_program *prog)
{
    return prog ? prog->num_args : 0;
}

void spyre_program_free(struct spyre_program *prog)
{
    if (!prog) {
        return;
    }
    free(prog->cores);
    free(prog);
}
