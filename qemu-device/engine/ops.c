// SPDX-License-Identifier: MIT
/*
 * Elementwise, reduction, softmax, normalisation, copy/convert, fill and
 * transpose firings.  Everything computes in fp32 (docs/engine.md says how
 * each op is defined), in a fixed order so results never depend on timing
 * or threads.
 */
#include <math.h>
#include <string.h>

#include "dtype.h"
#include "ops.h"
#include "vmath.h"

static inline size_t row_bytes(uint32_t elems, unsigned dtype)
{
    return (size_t)sticks_for(elems, dtype) * STICK_BYTES;
}

/* Four floats in a vector register (GCC and clang vector extension). */
typedef float v4f __attribute__((vector_size(16)));

static inline v4f v4_load(const float *p)
{
    v4f v;

    memcpy(&v, p, sizeof(v));
    return v;
}

size_t op_tmp_floats(const struct op_desc *op)
{
    size_t n = (size_t)op->out_sticks * 64;

    for (unsigned i = 0; i < op->num_in; i++) {
        n += (size_t)op->in_sticks[i] * 64;
    }
    if (op->opcode == SPK_OPC_MATMUL && op_matmul_tmp_floats(op) > n) {
        n = op_matmul_tmp_floats(op);
    }
    return n + 64;
}

/* A row of a one-input op, in place; one loop per opcode so each vectorises. */
static void unary_row(uint8_t opcode, float *x, uint32_t n, float imm,
                      bool simd)
{
    switch (opcode) {
    case SPK_OPC_SCALE:
        for (uint32_t i = 0; i < n; i++) {
            x[i] *= imm;
        }
        return;
    case SPK_OPC_RELU:
        for (uint32_t i = 0; i < n; i++) {
            x[i] = x[i] > 0 || isnan(x[i]) ? x[i] : 0.0f;
        }
        return;
    case SPK_OPC_GELU: /* 1 + erf, without cancellation */
        for (uint32_t i = 0; i < n; i++) {
            x[i] = 0.5f * x[i] * erfcf(-x[i] * 0.70710678118654752f);
        }
        return;
    case SPK_OPC_SILU:
        vm_silu(x, n, simd);
        return;
    case SPK_OPC_EXP:
        vm_exp(x, n, simd);
        return;
    case SPK_OPC_RSQRT:
        for (uint32_t i = 0; i < n; i++) {
            x[i] = 1.0f / sqrtf(x[i]);
        }
        return;
    default: /* COPY */
        return;
    }
}

/*
 * x = x op y over a row (ADD, SUB, MUL four lanes at a time: the same values).
 */
static void binary_row(uint8_t opcode, float *x, const float *y, uint32_t n)
{
    uint32_t i = 0;

    if (opcode == SPK_OPC_ADD || opcode == SPK_OPC_SUB ||
        opcode == SPK_OPC_MUL) {
        for (; i + 4 <= n; i += 4) {
            v4f a = v4_load(x + i), b = v4_load(y + i);

            a = opcode == SPK_OPC_ADD   ? a + b
                : opcode == SPK_OPC_SUB ? a - b
                                        : a * b;
            memcpy(x + i, &a, sizeof(a));
        }
    }
    for (; i < n; i++) {
        switch (opcode) {
        case SPK_OPC_ADD:
            x[i] += y[i];
            break;
        case SPK_OPC_SUB:
            x[i] -= y[i];
            break;
        case SPK_OPC_MUL:
            x[i] *= y[i];
            break;
        default: /* MAX: NaN in either operand gives NaN */
            x[i] = isnan(x[i]) || isnan(y[i]) ? x[i] + y[i]
                   : x[i] > y[i]              ? x[i]
                                              : y[i];
            break;
        }
    }
}

static void fire_elementwise(const struct op_env *env, const struct op_desc *op,
                             const uint8_t *const in[3], uint8_t *out,
                             float *tmp)
{
    size_t in_row = row_bytes(op->row_elems, op->dtype_in);
    size_t out_row = row_bytes(op->row_elems, op->dtype_out);
    uint32_t n = op->row_elems;
    float *x = tmp, *y = tmp + n;

    for (uint32_t r = 0; r < op->rows; r++) {
        if (op->opcode == SPK_OPC_FILL) {
            for (uint32_t i = 0; i < n; i++) {
                x[i] = op->imm0;
            }
        } else if (op->num_in == 2) {
            dtype_load(in[0] + r * in_row, op->dtype_in, n, x);
            dtype_load(in[1] + r * in_row, op->dtype_in, n, y);
            binary_row(op->opcode, x, y, n);
        } else {
            dtype_load(in[0] + r * in_row, op->dtype_in, n, x);
            unary_row(op->opcode, x, n, op->imm0, env->simd);
        }
        dtype_store(out + r * out_row, op->dtype_out, x, n, out_row);
    }
}

static float reduce_step(bool is_max, float acc, float x)
{
    if (!is_max) {
        return acc + x;
    }
    if (isnan(acc) || isnan(x)) {
        return acc + x;
    }
    return x > acc ? x : acc;
}

/* Along a row: one stick per row, the result in lane 0. */
static void fire_reduce_along(const struct op_desc *op, const uint8_t *in,
                              uint8_t *out, float *tmp)
{
    size_t in_row = row_bytes(op->row_elems, op->dtype_in);
    bool is_max = op->opcode == SPK_OPC_REDUCE_MAX;

    for (uint32_t r = 0; r < op->rows; r++) {
        float acc;

        dtype_load(in + r * in_row, op->dtype_in, op->row_elems, tmp);
        acc = tmp[0];
        for (uint32_t i = 1; i < op->row_elems; i++) {
            acc = reduce_step(is_max, acc, tmp[i]);
        }
        dtype_store(out + (size_t)r * STICK_BYTES, op->dtype_out, &acc, 1,
                    STICK_BYTES);
    }
}

/* Across the firing's rows, lane by lane: one row out. */
static void fire_reduce_across(const struct op_desc *op, const uint8_t *in,
                               uint8_t *out, float *tmp)
{
    size_t in_row = row_bytes(op->row_elems, op->dtype_in);
    bool is_max = op->opcode == SPK_OPC_REDUCE_MAX;
    uint32_t n = op->row_elems;
    float *acc = tmp, *x = tmp + n;

    dtype_load(in, op->dtype_in, n, acc);
    for (uint32_t r = 1; r < op->rows; r++) {
        dtype_load(in + r * in_row, op->dtype_in, n, x);
        for (uint32_t i = 0; i < n; i++) {
            acc[i] = reduce_step(is_max, acc[i], x[i]);
        }
    }
    dtype_store(out, op->dtype_out, acc, n, row_bytes(n, op->dtype_out));
}

/* Softmax of n values spaced `stride` floats apart, in place. */
static void softmax_strided(float *x, uint32_t n, size_t stride, bool simd)
{
    float max = x[0], sum = 0;

    for (uint32_t i = 1; i < n; i++) {
        max = reduce_step(true, max, x[i * stride]);
    }
    if (stride == 1) {
        sum = vm_exp_sub_sum(x, n, max, simd);
    } else {
        /* the same values and sum as vm_exp_sub_sum */
        for (uint32_t i = 0; i < n; i++) {
            x[i * stride] = vm_expf(x[i * stride] - max);
            sum += x[i * stride];
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        x[i * stride] /= sum;
    }
}

/*
 * Log-softmax of n values spaced `stride` floats apart, in place: each
 * minus the log of the sum of exponentials, taken after the max, so no
 * value underflows to log(0).
 */
static void log_softmax_strided(float *x, uint32_t n, size_t stride)
{
    float max = x[0], sum = 0, lse;

    for (uint32_t i = 1; i < n; i++) {
        max = reduce_step(true, max, x[i * stride]);
    }
    for (uint32_t i = 0; i < n; i++) {
        sum += vm_expf(x[i * stride] - max);
    }
    lse = max + logf(sum);
    for (uint32_t i = 0; i < n; i++) {
        x[i * stride] -= lse;
    }
}

/* One softmax (or log-softmax) per row, or per lane with ACROSS. */
static void softmax_group(const struct op_env *env, const struct op_desc *op,
                          float *x, uint32_t n, size_t stride)
{
    if (op->opcode == SPK_OPC_LOG_SOFTMAX) {
        log_softmax_strided(x, n, stride);
    } else {
        softmax_strided(x, n, stride, env->simd);
    }
}

static void fire_softmax(const struct op_env *env, const struct op_desc *op,
                         const uint8_t *in, uint8_t *out, float *tmp)
{
    size_t in_row = row_bytes(op->row_elems, op->dtype_in);
    size_t out_row = row_bytes(op->row_elems, op->dtype_out);
    uint32_t n = op->row_elems;

    for (uint32_t r = 0; r < op->rows; r++) {
        dtype_load(in + r * in_row, op->dtype_in, n, tmp + (size_t)r * n);
    }
    if (op->flags & SPK_OPF_ACROSS) {
        for (uint32_t i = 0; i < n; i++) {
            softmax_group(env, op, tmp + i, op->rows, n);
        }
    } else {
        for (uint32_t r = 0; r < op->rows; r++) {
            softmax_group(env, op, tmp + (size_t)r * n, n, 1);
        }
    }
    for (uint32_t r = 0; r < op->rows; r++) {
        dtype_store(out + r * out_row, op->dtype_out, tmp + (size_t)r * n, n,
                    out_row);
    }
}

/*
 * The sum of x[i] - c (squared when sq) over a row, as eight interleaved
 * partial sums (lane i % 8, each in ascending index) added pairwise: a
 * fixed order like every other sum, but two vector adds per eight
 * elements rather than an add's latency per element.
 */
static float norm_sum(const float *x, uint32_t n, float c, bool sq)
{
    v4f lo = { 0 }, hi = { 0 }, cv = { c, c, c, c };
    float acc[8];
    uint32_t i = 0;

    for (; i + 8 <= n; i += 8) {
        v4f a = v4_load(x + i) - cv, b = v4_load(x + i + 4) - cv;

        lo += sq ? a * a : a;
        hi += sq ? b * b : b;
    }
    memcpy(acc, &lo, sizeof(lo));
    memcpy(acc + 4, &hi, sizeof(hi));
    for (; i < n; i++) {
        float d = x[i] - c;

        acc[i % 8] += sq ? d * d : d;
    }
    return ((acc[0] + acc[4]) + (acc[1] + acc[5])) +
           ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

/* x = ((x - mean) * inv) [* g] [+ b], element by element. */
static void norm_scale(float *x, const float *g, const float *b, uint32_t n,
                       float mean, float inv)
{
    v4f mv = { mean, mean, mean, mean }, iv = { inv, inv, inv, inv };
    uint32_t i = 0;

    for (; i + 4 <= n; i += 4) {
        v4f y = (v4_load(x + i) - mv) * iv;

        if (g) {
            y *= v4_load(g + i);
        }
        if (b) {
            y += v4_load(b + i);
        }
        memcpy(x + i, &y, sizeof(y));
    }
    for (; i < n; i++) {
        float y = (x[i] - mean) * inv;

        if (g) {
            y *= g[i];
        }
        if (b) {
            y += b[i];
        }
        x[i] = y;
    }
}

/*
 * layernorm: (x - mean) / sqrt(var + eps) * gamma + beta; rmsnorm: x / rms *
 * gamma.
 */
static void fire_norm(const struct op_desc *op, const uint8_t *const in[3],
                      uint8_t *out, float *tmp)
{
    size_t in_row = row_bytes(op->row_elems, op->dtype_in);
    size_t out_row = row_bytes(op->row_elems, op->dtype_out);
    bool layer = op->opcode == SPK_OPC_LAYERNORM;
    uint32_t n = op->row_elems;
    float *x = tmp, *g = tmp + n, *b = tmp + 2 * (size_t)n;

    for (uint32_t r = 0; r < op->rows; r++) {
        float mean = 0, inv;

        dtype_load(in[0] + r * in_row, op->dtype_in, n, x);
        if (layer) {
            mean = norm_sum(x, n, 0.0f, false) / (float)n;
        }
        inv = 1.0f / sqrtf(norm_sum(x, n, mean, true) / (float)n + op->imm0);
        if (op->num_in > 1) {
            dtype_load(in[1] + r * in_row, op->dtype_in, n, g);
        }
        if (op->num_in > 2) {
            dtype_load(in[2] + r * in_row, op->dtype_in, n, b);
        }
        norm_scale(x, op->num_in > 1 ? g : NULL, op->num_in > 2 ? b : NULL, n,
                   mean, inv);
        dtype_store(out + r * out_row, op->dtype_out, x, n, out_row);
    }
}

/* rows x row_elems in, row_elems x rows out. */
static void fire_transpose(const struct op_desc *op, const uint8_t *in,
                           uint8_t *out, float *tmp)
{
    size_t in_row = row_bytes(op->row_elems, op->dtype_in);
    size_t out_row = row_bytes(op->rows, op->dtype_out);
    uint32_t n = op->row_elems, m = op->rows;
    float *x = tmp, *col = tmp + (size_t)m * n;

    for (uint32_t r = 0; r < m; r++) {
        dtype_load(in + r * in_row, op->dtype_in, n, x + (size_t)r * n);
    }
    for (uint32_t c = 0; c < n; c++) {
        for (uint32_t r = 0; r < m; r++) {
            col[r] = x[(size_t)r * n + c];
        }
        dtype_store(out + c * out_row, op->dtype_out, col, m, out_row);
    }
}

bool op_fire(const struct op_env *env, const struct op_desc *op,
             uint32_t firing, const uint8_t *const in[3], uint8_t *out,
             float *acc, float *tmp)
{
    switch (op->opcode) {
    case SPK_OPC_MATMUL:
        return op_matmul_fire(env, op, firing, in[0], in[1], out, acc, tmp);
    case SPK_OPC_REDUCE_SUM:
    case SPK_OPC_REDUCE_MAX:
        if (op->flags & SPK_OPF_ACROSS) {
            fire_reduce_across(op, in[0], out, tmp);
        } else {
            fire_reduce_along(op, in[0], out, tmp);
        }
        return true;
    case SPK_OPC_SOFTMAX:
    case SPK_OPC_LOG_SOFTMAX:
        fire_softmax(env, op, in[0], out, tmp);
        return true;
    case SPK_OPC_LAYERNORM:
    case SPK_OPC_RMSNORM:
        fire_norm(op, in, out, tmp);
        return true;
    case SPK_OPC_TRANSPOSE:
        fire_transpose(op, in[0], out, tmp);
        return true;
    default:
        fire_elementwise(env, op, in, out, tmp);
        return true;
    }
}
