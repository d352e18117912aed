/* SPDX-License-Identifier: MIT */
/*
 * fp16 and bf16 <-> fp32, round to nearest even, NaNs kept quiet.  Exact
 * bit patterns: the same as F16C's VCVTPS2PH with rounding mode 0, so
 * SIMD paths can replace these without changing any result.
 */
#ifndef SPYRE_ENGINE_DTYPE_H
#define SPYRE_ENGINE_DTYPE_H

#include <stddef.h>
#include <stdint.h>

float fp16_to_f32(uint16_t h);
uint16_t f32_to_fp16(float f);
float bf16_to_f32(uint16_t b);
uint16_t f32_to_bf16(float f);

/* n elements of dtype (SPK_DT_*) at src, to floats. */
void dtype_load(const uint8_t *src, unsigned dtype, size_t n, float *dst);

/*
 * n floats to dtype at dst, then zeros up to padded_bytes: padding lanes
 * of a result are always 0, never stale data.
 */
void dtype_store(uint8_t *dst, unsigned dtype, const float *src, size_t n,
                 size_t padded_bytes);

#endif /* SPYRE_ENGINE_DTYPE_H */
