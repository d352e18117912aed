// SPDX-License-Identifier: MIT
/*
 * Strided copies: an n-dimensional array of elements between two buffers
 * of one device, each side with its own byte strides, as the card's
 * scatter-gather DMA (SPYRE_OP_DMA_COPY_SG): one list entry per contiguous
 * run, up to SPYRE_SG_MAX_ENTRIES entries per job.  Dimensions that are
 * contiguous on both sides are merged first, so a dense copy is one run and
 * padding rows (the op library's stick layout) is one run per row.  Row
 * gathers (an embedding lookup) are the same lists with one run per range
 * of consecutive rows.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "spyre_regs.h"
#include "memory.h"
#include "stream.h"

struct strided_plan {
	uint32_t ndim;
	uint64_t shape[SPYRE_COPY_MAX_DIMS];
	uint64_t dstr[SPYRE_COPY_MAX_DIMS], sstr[SPYRE_COPY_MAX_DIMS];
	uint64_t run;		/* bytes of one contiguous run */
	uint32_t outer;		/* dimensions walked run by run (the rest are in it) */
	uint64_t runs;
};

/* Highest byte offset + 1 that the array touches from its origin. */
static int extent(const struct strided_plan *p, const uint64_t *str, uint64_t elem,
		  uint64_t *out)
{
	uint64_t e = elem;

	for (uint32_t i = 0; i < p->ndim; i++) {
		uint64_t step;

		if (__builtin_mul_overflow(p->shape[i] - 1, str[i], &step) ||
		    __builtin_add_overflow(e, step, &e))
			return -1;
	}
	*out = e;
	return 0;
}

/*
 * Drop dimensions of size 1, merge neighbours contiguous on both sides, and
 * find the run: the innermost dimension when both sides step by the element
 * there, else a single element.
 */
static void plan_merge(struct strided_plan *p, uint64_t elem)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < p->ndim; i++) {
		if (p->shape[i] == 1)
			continue;
		if (n && p->dstr[n - 1] == p->shape[i] * p->dstr[i] &&
		    p->sstr[n - 1] == p->shape[i] * p->sstr[i]) {
			p->shape[n - 1] *= p->shape[i];
			p->dstr[n - 1] = p->dstr[i];
			p->sstr[n - 1] = p->sstr[i];
			continue;
		}
		p->shape[n] = p->shape[i];
		p->dstr[n] = p->dstr[i];
		p->sstr[n] = p->sstr[i];
		n++;
	}
	p->ndim = n;
	p->run = elem;
	p->outer = n;
	if (n && p->dstr[n - 1] == elem && p->sstr[n - 1] == elem) {
		p->run = elem * p->shape[n - 1];
		p->outer = n - 1;
	}
	p->runs = 1;
	for (uint32_t i = 0; i < p->outer; i++)
		p->runs *= p->shape[i];
}

/* Entries for runs [first, first + count): (src va, dst va, bytes) each. */
static void plan_entries(const struct strided_plan *p, uint64_t sva, uint64_t dva,
			 uint64_t first, uint32_t count, uint64_t *sg)
{
	for (uint32_t k = 0; k < count; k++) {
		uint64_t r = first + k, so = 0, d = 0;

		for (uint32_t i = p->outer; i-- > 0;) {
			uint64_t idx = r % p->shape[i];

			r /= p->shape[i];
			so += idx * p->sstr[i];
			d += idx * p->dstr[i];
		}
		sg[3 * k] = sva + so;
		sg[3 * k + 1] = dva + d;
		sg[3 * k + 2] = p->run;
	}
}

static spyre_status check_side(spyre_stream *s, spyre_buffer *b, uint64_t off,
			       const struct strided_plan *p, const uint64_t *str, uint64_t elem,
			       const char *what, const char *buffer_name, uint64_t *ext)
{
	spyre_status st = spyre_check_buffer(s, b, buffer_name);

	if (st != SPYRE_SUCCESS)
		return st;
	if (extent(p, str, elem, ext) || off > b->bytes || *ext > b->bytes - off)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "the %s's elements reach past its %llu-byte buffer "
				       "(offset %llu)", what, (unsigned long long)b->bytes,
				       (unsigned long long)off);
	return SPYRE_SUCCESS;
}

/* Queue @n entries (src, dst, bytes) of @sg as one job named @name; @ext,
 * the larger side's extent from the offsets, is for fault reports. */
static spyre_status queue_list(spyre_stream *s, spyre_buffer *dst, uint64_t doff,
			       spyre_buffer *src, uint64_t soff, uint64_t ext, const uint64_t *sg,
			       uint32_t n, uint64_t bytes, const char *name)
{
	spyre_buffer *bufs[2] = { src, dst };
	struct spyre_node node = {
		.kind = NODE_COPY_SG, .a0 = src->gem.va + soff, .a1 = dst->gem.va + doff,
		.a2 = ext, .nsg = n, .sg = sg, .bytes = bytes, .name = name,
	};
	uint64_t point;

	return spyre_queue_node(s, &node, bufs, src == dst ? 1 : 2, -1, NULL, &point);
}

static spyre_status queue_runs(spyre_stream *s, const struct strided_plan *p, spyre_buffer *dst,
			       uint64_t doff, uint64_t dext, spyre_buffer *src, uint64_t soff,
			       uint64_t sext)
{
	uint64_t *sg = malloc(sizeof(*sg) * 3 * SPYRE_SG_MAX_ENTRIES);
	spyre_status st = SPYRE_SUCCESS;

	if (!sg)
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a copy list");
	for (uint64_t first = 0; st == SPYRE_SUCCESS && first < p->runs;) {
		uint32_t n = p->runs - first < SPYRE_SG_MAX_ENTRIES ?
			(uint32_t)(p->runs - first) : SPYRE_SG_MAX_ENTRIES;

		plan_entries(p, src->gem.va + soff, dst->gem.va + doff, first, n, sg);
		st = queue_list(s, dst, doff, src, soff, dext > sext ? dext : sext, sg, n,
				p->run * n, "strided copy");
		first += n;
	}
	free(sg);
	return st;
}

SPYRE_EXPORT spyre_status spyre_memcpy_strided_async(spyre_stream *s, uint32_t ndim,
						     const uint64_t *shape, uint32_t elem_bytes,
						     spyre_buffer *dst, uint64_t dst_offset,
						     const uint64_t *dst_strides, spyre_buffer *src,
						     uint64_t src_offset, const uint64_t *src_strides)
{
	spyre_status st = spyre_handle_check(s, SPYRE_KIND_STREAM, "stream");
	struct strided_plan p = { .ndim = ndim };
	uint64_t dext = 0, sext = 0, elems = 1;

	if (st != SPYRE_SUCCESS)
		return spyre_done(st);
	if (!ndim || ndim > SPYRE_COPY_MAX_DIMS)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "ndim %u is not 1 .. %u", ndim, SPYRE_COPY_MAX_DIMS);
	if (!shape || !dst_strides || !src_strides || !dst || !src)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s is NULL",
				       !shape ? "shape" : !dst_strides ? "dst_strides" :
				       !src_strides ? "src_strides" : !dst ? "destination buffer" :
				       "source buffer");
	if (!elem_bytes || elem_bytes > 16 || (elem_bytes & (elem_bytes - 1)))
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "element size %u is not 1, 2, 4, 8 or 16 bytes", elem_bytes);
	for (uint32_t i = 0; i < ndim; i++) {
		if (!shape[i])
			return SPYRE_SUCCESS;	/* nothing to copy */
		if (__builtin_mul_overflow(elems, shape[i], &elems))
			return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
					       "the shape's element count overflows");
		if (shape[i] > 1 && !dst_strides[i])
			return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
					       "destination stride %u is 0: elements would overlap", i);
		p.shape[i] = shape[i];
		p.dstr[i] = dst_strides[i];
		p.sstr[i] = src_strides[i];
	}
	st = check_side(s, dst, dst_offset, &p, p.dstr, elem_bytes, "destination",
			"destination buffer", &dext);
	if (st == SPYRE_SUCCESS)
		st = check_side(s, src, src_offset, &p, p.sstr, elem_bytes, "source", "source buffer",
				&sext);
	if (st != SPYRE_SUCCESS)
		return st;
	if (src == dst && dst_offset < src_offset + sext && src_offset < dst_offset + dext)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "source and destination ranges overlap");
	plan_merge(&p, elem_bytes);
	pthread_mutex_lock(&s->lock);
	st = spyre_stream_enter(s, 1);
	if (st == SPYRE_SUCCESS)
		st = queue_runs(s, &p, dst, dst_offset, dext, src, src_offset, sext);
	pthread_mutex_unlock(&s->lock);
	return spyre_done(st);
}

SPYRE_EXPORT spyre_status spyre_memcpy_gather_async(spyre_stream *s, spyre_buffer *dst,
						    uint64_t dst_offset, spyre_buffer *src,
						    uint64_t src_offset, uint64_t src_rows,
						    uint64_t row_bytes, uint64_t count,
						    const uint64_t *rows)
{
	spyre_status st = spyre_handle_check(s, SPYRE_KIND_STREAM, "stream");
	uint64_t sext, dext, *sg = NULL;
	uint32_t n = 0;

	if (st != SPYRE_SUCCESS)
		return spyre_done(st);
	if (!dst || !src || (count && !rows))
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s is NULL",
				       !dst ? "destination buffer" : !src ? "source buffer" : "rows");
	if (!count)
		return SPYRE_SUCCESS;
	if (!row_bytes)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "row_bytes is 0");
	for (uint64_t i = 0; i < count; i++)
		if (rows[i] >= src_rows)
			return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
					       "rows[%llu] is %llu: the source has %llu rows",
					       (unsigned long long)i, (unsigned long long)rows[i],
					       (unsigned long long)src_rows);
	st = spyre_check_buffer(s, dst, "destination buffer");
	if (st == SPYRE_SUCCESS)
		st = spyre_check_buffer(s, src, "source buffer");
	if (st != SPYRE_SUCCESS)
		return st;
	if (__builtin_mul_overflow(src_rows, row_bytes, &sext) || src_offset > src->bytes ||
	    sext > src->bytes - src_offset)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%llu source rows of %llu bytes reach past its %llu-byte "
				       "buffer (offset %llu)", (unsigned long long)src_rows,
				       (unsigned long long)row_bytes, (unsigned long long)src->bytes,
				       (unsigned long long)src_offset);
	if (__builtin_mul_overflow(count, row_bytes, &dext) || dst_offset > dst->bytes ||
	    dext > dst->bytes - dst_offset)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%llu rows of %llu bytes reach past the %llu-byte destination "
				       "buffer (offset %llu)", (unsigned long long)count,
				       (unsigned long long)row_bytes, (unsigned long long)dst->bytes,
				       (unsigned long long)dst_offset);
	if (src == dst && dst_offset < src_offset + sext && src_offset < dst_offset + dext)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "source and destination ranges overlap");
	sg = malloc(sizeof(*sg) * 3 * SPYRE_SG_MAX_ENTRIES);
	if (!sg)
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a copy list");
	pthread_mutex_lock(&s->lock);
	st = spyre_stream_enter(s, 1);
	for (uint64_t i = 0, bytes = 0; st == SPYRE_SUCCESS && i < count; i++) {
		uint64_t from = src->gem.va + src_offset + rows[i] * row_bytes;

		/* The next row of the source lands next in the destination: one run. */
		if (n && sg[3 * (n - 1)] + sg[3 * (n - 1) + 2] == from) {
			sg[3 * (n - 1) + 2] += row_bytes;
		} else {
			sg[3 * n] = from;
			sg[3 * n + 1] = dst->gem.va + dst_offset + i * row_bytes;
			sg[3 * n + 2] = row_bytes;
			n++;
		}
		bytes += row_bytes;
		if (n == SPYRE_SG_MAX_ENTRIES || i + 1 == count) {
			st = queue_list(s, dst, dst_offset, src, src_offset,
					sext > dext ? sext : dext, sg, n, bytes, "row gather");
			n = 0;
			bytes = 0;
		}
	}
	pthread_mutex_unlock(&s->lock);
	free(sg);
	return spyre_done(st);
}
