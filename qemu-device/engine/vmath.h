/* SPDX-License-Identifier: MIT */
/*
 * exp and the ops built on it (SFP EXP, SILU, softmax), over arrays of
 * fp32.  One formula (docs/engine.md, "exp"): the scalar code and the AVX2
 * path perform the same IEEE operations in the same order, so they give
 * the same bits and a result never depends on the host's vector width.
 */
#ifndef SPYRE_ENGINE_VMATH_H
#define SPYRE_ENGINE_VMATH_H

#include <stdbool.h>
#include <stddef.h>

/* exp(x) within 2 ulp; +inf above 88.72, +0 below -103.97, NaN kept. */
float vm_expf(float x);

/* x[i] = exp(x[i] - sub), and returns the sum of the results in index order. */
float vm_exp_sub_sum(float *x, size_t n, float sub, bool simd);

/* x[i] = exp(x[i]). */
void vm_exp(float *x, size_t n, bool simd);

/* x[i] = x[i] / (1 + exp(-x[i])). */
void vm_silu(float *x, size_t n, bool simd);

#endif /* SPYRE_ENGINE_VMATH_H */
