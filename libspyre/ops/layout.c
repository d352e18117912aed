// SPDX-License-Identifier: MIT
/*
 * Tensor layout (the innermost dimension padded to whole 128-byte sticks)
 * and host <-> device conversion.  The scalar conversions are written
 * with integer arithmetic; tests/host/test_ops.c checks them bit for bit
 * against the engine's (qemu-device/engine/dtype.c) on every fp16 pattern
 * and on random floats.
 */
#include <string.h>

#include "../error.h"
#include "spyre/spyre_ops.h"
#include "ops_internal.h"

static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float f32_from_bits(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

uint16_t ops_f32_to_fp16(float f)
{
	uint32_t w = f32_bits(f), sign = (w >> 16) & 0x8000u, mag = w & 0x7fffffffu;
	uint32_t exp = mag >> 23, mant = mag & 0x7fffffu;

	if (mag > 0x7f800000u)				/* NaN: quiet */
		return (uint16_t)(sign | 0x7e00u);
	if (exp >= 143)					/* >= 2^16 (and inf): overflow */
		return (uint16_t)(sign | 0x7c00u);
	if (exp >= 113) {				/* normal fp16 */
		uint32_t h = ((exp - 112) << 10) | (mant >> 13), rest = mant & 0x1fffu;

		if (rest > 0x1000u || (rest == 0x1000u && (h & 1)))
			h++;				/* may carry into inf: right */
		return (uint16_t)(sign | h);
	}
	if (exp < 102)					/* below half the smallest subnormal */
		return (uint16_t)sign;
	/* Subnormal: value = (mant | 1 << 23) * 2^(exp - 150), unit 2^-24. */
	{
		uint32_t m = mant | 0x800000u, shift = 126 - exp;	/* 14 .. 24 */
		uint32_t h = m >> shift, rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);

		if (rest > half || (rest == half && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
}

float ops_fp16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;

	if (exp == 0x1f)
		return f32_from_bits(sign | 0x7f800000u | (mant << 13));
	if (exp)
		return f32_from_bits(sign | ((exp + 112) << 23) | (mant << 13));
	/* Zero or subnormal: mant x 2^-24, exact in fp32. */
	return f32_from_bits(sign) + (sign ? -1.0f : 1.0f) * (float)mant * 0x1.0p-24f;
}

uint16_t ops_f32_to_bf16(float f)
{
	uint32_t w = f32_bits(f);

	if ((w & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((w >> 16) | 0x40u);
	return (uint16_t)((w + 0x7fffu + ((w >> 16) & 1)) >> 16);
}

float ops_bf16_to_f32(uint16_t b)
{
	return f32_from_bits((uint32_t)b << 16);
}

uint32_t ops_dtype_bytes(spyre_dtype dt)
{
	return dt == SPYRE_DTYPE_FP32 ? 4 : 2;
}

int ops_dtype_valid(int dt)
{
	return dt == SPYRE_DTYPE_FP16 || dt == SPYRE_DTYPE_BF16 || dt == SPYRE_DTYPE_FP32;
}

const char *ops_dtype_name(spyre_dtype dt)
{
	switch (dt) {
	case SPYRE_DTYPE_FP16:
		return "fp16";
	case SPYRE_DTYPE_BF16:
		return "bf16";
	case SPYRE_DTYPE_FP32:
		return "fp32";
	}
	return "unknown dtype";
}

SPYRE_EXPORT spyre_status spyre_tensor_layout(spyre_dtype dtype, uint32_t ndim,
					      const uint32_t *shape, spyre_layout *l)
{
	uint64_t stride;

	if (!l || !shape)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "spyre_tensor_layout: NULL %s", l ? "shape" : "layout");
	if (!ops_dtype_valid((int)dtype))
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "spyre_tensor_layout: unknown dtype %d", (int)dtype);
	if (ndim < 1 || ndim > SPYRE_TENSOR_MAX_DIMS)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "spyre_tensor_layout: %u dimensions (1..%d)", ndim,
				       SPYRE_TENSOR_MAX_DIMS);
	memset(l, 0, sizeof(*l));
	l->dtype = dtype;
	l->ndim = ndim;
	l->elem_bytes = ops_dtype_bytes(dtype);
	l->stick_elems = SPYRE_STICK_BYTES / l->elem_bytes;
	for (uint32_t d = 0; d < SPYRE_TENSOR_MAX_DIMS; d++)
		l->shape[d] = d < ndim ? shape[d] : 1;
	for (uint32_t d = 0; d < ndim; d++)
		if (!shape[d])
			return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
					       "spyre_tensor_layout: dimension %u is 0", d);
	l->row_sticks = (shape[ndim - 1] + l->stick_elems - 1) / l->stick_elems;
	l->padded_last = l->row_sticks * l->stick_elems;
	l->rows = 1;
	stride = l->elem_bytes;
	l->strides[ndim - 1] = stride;
	stride = (uint64_t)l->row_sticks * SPYRE_STICK_BYTES;
	for (int d = (int)ndim - 2; d >= 0; d--) {
		l->strides[d] = stride;
		stride *= shape[d];
		l->rows *= shape[d];
		if (stride > OPS_MAX_TENSOR_BYTES)
			break;
	}
	l->bytes = l->rows * l->row_sticks * SPYRE_STICK_BYTES;
	if (stride > OPS_MAX_TENSOR_BYTES || l->bytes > OPS_MAX_TENSOR_BYTES)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "spyre_tensor_layout: more than 2^48 bytes");
	return SPYRE_SUCCESS;
}

static float load_elem(const uint8_t *p, spyre_dtype dt)
{
	uint16_t h;
	float f;

	if (dt == SPYRE_DTYPE_FP32) {
		memcpy(&f, p, 4);
		return f;
	}
	memcpy(&h, p, 2);
	return dt == SPYRE_DTYPE_FP16 ? ops_fp16_to_f32(h) : ops_bf16_to_f32(h);
}

static void store_elem(uint8_t *p, spyre_dtype dt, float f)
{
	uint16_t h;

	if (dt == SPYRE_DTYPE_FP32) {
		memcpy(p, &f, 4);
		return;
	}
	h = dt == SPYRE_DTYPE_FP16 ? ops_f32_to_fp16(f) : ops_f32_to_bf16(f);
	memcpy(p, &h, 2);
}

/* Convert n elements; a plain copy when the types match (bit exact). */
static void convert(uint8_t *dst, spyre_dtype dt_dst, const uint8_t *src, spyre_dtype dt_src,
		    size_t n)
{
	uint32_t db = ops_dtype_bytes(dt_dst), sb = ops_dtype_bytes(dt_src);

	if (dt_dst == dt_src) {
		memcpy(dst, src, n * db);
		return;
	}
	for (size_t i = 0; i < n; i++)
		store_elem(dst + i * db, dt_dst, load_elem(src + i * sb, dt_src));
}

static spyre_status check_conv(const char *fn, const spyre_layout *l, const void *a,
			       const void *b, spyre_dtype host_dtype)
{
	if (!l || !a || !b)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: NULL argument", fn);
	if (!ops_dtype_valid((int)host_dtype) || !ops_dtype_valid((int)l->dtype) ||
	    l->ndim < 1 || l->ndim > SPYRE_TENSOR_MAX_DIMS)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s: bad dtype or layout (use spyre_tensor_layout)", fn);
	return SPYRE_SUCCESS;
}

/* Host rows (dense) <-> device rows (padded); padding zeroed on the way in. */
static spyre_status transfer(const char *fn, const spyre_layout *l, void *host,
			     spyre_dtype host_dtype, void *dev, int to_dev)
{
	spyre_status st = check_conv(fn, l, host, dev, host_dtype);
	uint32_t n, hb;
	uint64_t row_bytes, used;

	if (st)
		return st;
	n = l->shape[l->ndim - 1];
	hb = ops_dtype_bytes(host_dtype);
	row_bytes = (uint64_t)l->row_sticks * SPYRE_STICK_BYTES;
	used = (uint64_t)n * l->elem_bytes;
	for (uint64_t r = 0; r < l->rows; r++) {
		uint8_t *d = (uint8_t *)dev + r * row_bytes, *h = (uint8_t *)host + r * n * hb;

		if (to_dev) {
			convert(d, l->dtype, h, host_dtype, n);
			memset(d + used, 0, row_bytes - used);
		} else {
			convert(h, host_dtype, d, l->dtype, n);
		}
	}
	return SPYRE_SUCCESS;
}

SPYRE_EXPORT spyre_status spyre_tensor_pack(const spyre_layout *layout, const void *host,
					    spyre_dtype host_dtype, void *dev)
{
	return transfer("spyre_tensor_pack", layout, (void *)(uintptr_t)host, host_dtype, dev, 1);
}

SPYRE_EXPORT spyre_status spyre_tensor_unpack(const spyre_layout *layout, const void *dev,
					      void *host, spyre_dtype host_dtype)
{
	return transfer("spyre_tensor_unpack", layout, host, host_dtype, (void *)(uintptr_t)dev, 0);
}
