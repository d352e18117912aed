// SPDX-License-Identifier: MIT
/*
 * The scheduler: runs a loaded program as static dataflow.  Every stream
 * end that moves sticks by itself (a DRAM or scratchpad source, a DRAM,
 * scratchpad or ring destination) and every op is an agent.  An agent can
 * fire when the sticks it needs are in its input FIFO and its output FIFO
 * has room (back-pressure); among those that can, the one that could start
 * earliest in device time fires next (ties: the lowest agent index), so the
 * run is deterministic.  When nothing can fire and work remains, the
 * program can never finish: the run stops with SPYRE_ENGINE_E_DEADLOCK.
 *
 * Every firing makes progress and the loader bounded the total work, so
 * the loop always ends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "timing.h"

/* A stream's FIFO: cap sticks in the scratchpad, with per-slot times. */
struct fifo {
	uint8_t *base;
	uint32_t cap, head, count;
	uint64_t *ready;		/* when the stick in a slot arrived */
	uint64_t *freed;		/* when a slot was last emptied */
	uint64_t last_ready, last_freed;	/* keep both monotone in FIFO order */
};

struct stream_run {
	const struct stream_desc *desc;
	struct fifo fifo;
	uint32_t entered, left;		/* sticks into and out of the FIFO */
	uint64_t src_base, dst_base;	/* DRAM endpoints: argument + offset */
	uint64_t done_at;		/* when the last stick left */
};

enum agent_kind { AGENT_SRC, AGENT_DST, AGENT_OP };

struct agent {
	enum agent_kind kind;
	unsigned slot;			/* index into run->cores */
	unsigned index;			/* stream or op */
	uint64_t free_at;
	uint32_t fired;			/* op firings done */
};

struct core_run {
	const struct core_program *prog;
	uint8_t *spad;
	struct stream_run streams[SPK_MAX_STREAMS];
	uint64_t pe_free, sfp_free;
};

struct run {
	const struct spyre_program *prog;
	const struct spyre_timing_params *t;
	const struct spyre_engine_mem *mem;
	struct spyre_engine_stats *stats;
	struct spyre_engine_error *err;
	struct core_run *cores;
	struct agent *agents;
	unsigned num_agents;
	struct dram_model dram;
	struct ring_model ring;
	float *tmp;
	uint8_t *gather;		/* op inputs, then output, contiguous */
	struct op_env env;		/* thread pool and SIMD choice for kernels */
	uint64_t end;			/* latest completion seen */
};

static inline uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static inline bool stream_done(const struct stream_run *s)
{
	return s->left == s->desc->total_sticks;
}

static inline uint32_t fifo_space(const struct fifo *f)
{
	return f->cap - f->count;
}

static inline uint8_t *fifo_at(const struct fifo *f, uint32_t i)
{
	return f->base + (size_t)((f->head + i) % f->cap) * STICK_BYTES;
}

/* When the n-th stick from the front arrived (n >= 1, n <= count). */
static inline uint64_t fifo_ready_time(const struct fifo *f, uint32_t n)
{
	return f->ready[(f->head + n - 1) % f->cap];
}

/* When the n-th free slot was emptied (n >= 1, n <= space). */
static inline uint64_t fifo_room_time(const struct fifo *f, uint32_t n)
{
	return f->freed[(f->head + f->count + n - 1) % f->cap];
}

static void fifo_push(struct fifo *f, uint32_t n, uint64_t ready)
{
	f->last_ready = max_u64(f->last_ready, ready);
	for (uint32_t i = 0; i < n; i++)
		f->ready[(f->head + f->count + i) % f->cap] = f->last_ready;
	f->count += n;
}

static void fifo_pop(struct stream_run *s, uint32_t n, uint64_t freed)
{
	struct fifo *f = &s->fifo;

	f->last_freed = max_u64(f->last_freed, freed);
	for (uint32_t i = 0; i < n; i++)
		f->freed[(f->head + i) % f->cap] = f->last_freed;
	f->head = (f->head + n) % f->cap;
	f->count -= n;
	s->left += n;
	if (stream_done(s))
		s->done_at = f->last_freed;
}

/* Byte offset of stick `index` of a pattern, from its offset. */
static int64_t pattern_offset(const struct endpoint *ep, uint32_t index)
{
	int64_t off = 0;

	for (int d = 0; d < SPK_EP_DIMS; d++) {
		off += (int64_t)(index % ep->count[d]) * ep->stride[d];
		index /= ep->count[d];
	}
	return off;
}

/* Sticks may enter stream s once the stream it waits for has finished. */
static bool stream_may_enter(const struct core_run *cr, const struct stream_run *s,
			     uint64_t *t)
{
	const struct stream_run *dep;

	if (s->desc->after == SPK_NONE)
		return true;
	dep = &cr->streams[s->desc->after];
	if (!stream_done(dep))
		return false;
	*t = max_u64(*t, dep->done_at);
	return true;
}

static struct stream_run *ring_receiver(struct run *r, const struct stream_desc *d,
					unsigned core, struct core_run **rc)
{
	*rc = &r->cores[r->prog->core_slot[core]];
	return &(*rc)->streams[d->dst.ref];
}

static bool src_ready(struct run *r, struct agent *a, uint64_t *t, uint32_t *n)
{
	struct core_run *cr = &r->cores[a->slot];
	struct stream_run *s = &cr->streams[a->index];
	uint32_t left = s->desc->total_sticks - s->entered;

	if (!left || !fifo_space(&s->fifo) || !stream_may_enter(cr, s, t))
		return false;
	*n = left < r->t->burst_sticks ? left : r->t->burst_sticks;
	if (*n > fifo_space(&s->fifo))
		*n = fifo_space(&s->fifo);
	*t = max_u64(*t, fifo_room_time(&s->fifo, *n));
	if (s->desc->src.kind == SPK_EP_DRAM)
		*t = max_u64(*t, r->dram.free_at);
	return true;
}

static bool dst_ready(struct run *r, struct agent *a, uint64_t *t, uint32_t *n)
{
	struct core_run *cr = &r->cores[a->slot];
	struct stream_run *s = &cr->streams[a->index];
	const struct stream_desc *d = s->desc;

	*n = s->fifo.count < r->t->burst_sticks ? s->fifo.count : r->t->burst_sticks;
	if (!*n)
		return false;
	if (d->dst.kind == SPK_EP_RING) {
		for (unsigned c = 0; c < r->prog->cfg.num_cores; c++) {
			struct core_run *rc;
			struct stream_run *rs;

			if (!(d->dst.core & (1u << c)))
				continue;
			rs = ring_receiver(r, d, c, &rc);
			if (!fifo_space(&rs->fifo) || !stream_may_enter(rc, rs, t))
				return false;
			if (*n > fifo_space(&rs->fifo))
				*n = fifo_space(&rs->fifo);
		}
		for (unsigned c = 0; c < r->prog->cfg.num_cores; c++) {
			struct core_run *rc;

			if (d->dst.core & (1u << c))
				*t = max_u64(*t, fifo_room_time(&ring_receiver(r, d, c, &rc)->fifo,
								*n));
		}
	}
	*t = max_u64(*t, fifo_ready_time(&s->fifo, *n));
	if (d->dst.kind == SPK_EP_DRAM)
		*t = max_u64(*t, r->dram.free_at);
	return true;
}

static bool op_emits(const struct op_desc *op, uint32_t firing)
{
	return op->opcode != SPK_OPC_MATMUL || firing % op->k_steps == op->k_steps - 1;
}

static bool op_ready(struct run *r, struct agent *a, uint64_t *t)
{
	struct core_run *cr = &r->cores[a->slot];
	const struct op_desc *op = &cr->prog->ops[a->index];
	struct stream_run *out = &cr->streams[op->out];

	for (unsigned i = 0; i < op->num_in; i++) {
		struct fifo *f = &cr->streams[op->in[i]].fifo;

		if (f->count < op->in_sticks[i])
			return false;
		*t = max_u64(*t, fifo_ready_time(f, op->in_sticks[i]));
	}
	if (op_emits(op, a->fired)) {
		if (fifo_space(&out->fifo) < op->out_sticks || !stream_may_enter(cr, out, t))
			return false;
		*t = max_u64(*t, fifo_room_time(&out->fifo, op->out_sticks));
	}
	*t = max_u64(*t, op->opcode == SPK_OPC_MATMUL ? cr->pe_free : cr->sfp_free);
	return true;
}

static bool agent_done(const struct run *r, const struct agent *a)
{
	const struct core_run *cr = &r->cores[a->slot];
	const struct stream_run *s = &cr->streams[a->index];

	switch (a->kind) {
	case AGENT_SRC:
		return s->entered == s->desc->total_sticks;
	case AGENT_DST:
		return stream_done(s);
	default:
		return a->fired == cr->prog->ops[a->index].firings;
	}
}

static enum spyre_engine_status mem_fail(struct run *r, struct agent *a, uint64_t addr,
					 const char *what)
{
	engine_set_error(r->err, SPYRE_ENGINE_E_MEMORY, (int)r->cores[a->slot].prog->core,
			 (int)a->index, "device memory %s failed at 0x%llx", what,
			 (unsigned long long)addr);
	return SPYRE_ENGINE_E_MEMORY;
}

static uint8_t *spad_at(struct core_run *cr, const struct endpoint *ep, uint32_t index)
{
	return cr->spad + cr->prog->buffers[ep->ref].offset + ep->offset +
	       pattern_offset(ep, index);
}

static enum spyre_engine_status fire_src(struct run *r, struct agent *a, uint64_t t,
					 uint32_t n)
{
	struct core_run *cr = &r->cores[a->slot];
	struct stream_run *s = &cr->streams[a->index];
	const struct endpoint *ep = &s->desc->src;
	uint64_t done, ready;

	for (uint32_t i = 0; i < n; i++) {
		uint8_t *slot = fifo_at(&s->fifo, s->fifo.count + i);

		if (ep->kind == SPK_EP_SCRATCH) {
			memcpy(slot, spad_at(cr, ep, s->entered + i), STICK_BYTES);
		} else {
			uint64_t addr = s->src_base + pattern_offset(ep, s->entered + i);

			if (r->mem->read(r->mem->opaque, addr, slot, STICK_BYTES))
				return mem_fail(r, a, addr, "read");
		}
	}
	if (ep->kind == SPK_EP_SCRATCH) {
		done = ready = t + timing_spad_ticks(r->t, (uint64_t)n * STICK_BYTES);
	} else {
		done = dram_transfer(&r->dram, r->t, t, (uint64_t)n * STICK_BYTES, false, &ready);
		r->stats->dram_read_bytes += (uint64_t)n * STICK_BYTES;
	}
	s->entered += n;
	fifo_push(&s->fifo, n, ready);
	a->free_at = done;
	r->end = max_u64(r->end, ready);
	return SPYRE_ENGINE_OK;
}

static void fire_ring(struct run *r, struct agent *a, uint64_t t, uint32_t n, uint64_t *done)
{
	struct core_run *cr = &r->cores[a->slot];
	const struct stream_desc *d = cr->streams[a->index].desc;
	uint64_t arrival[SPYRE_ENGINE_MAX_CORES];
	uint64_t bytes = (uint64_t)n * STICK_BYTES;

	*done = ring_transfer(&r->ring, r->t, cr->prog->core, d->dst.core, t, bytes, arrival,
			      &r->stats->ring_link_bytes);
	r->stats->ring_bytes += bytes;
	for (unsigned c = 0; c < r->prog->cfg.num_cores; c++) {
		struct core_run *rc;
		struct stream_run *rs;

		if (!(d->dst.core & (1u << c)))
			continue;
		rs = ring_receiver(r, d, c, &rc);
		for (uint32_t i = 0; i < n; i++)
			memcpy(fifo_at(&rs->fifo, rs->fifo.count + i),
			       fifo_at(&cr->streams[a->index].fifo, i), STICK_BYTES);
		rs->entered += n;
		fifo_push(&rs->fifo, n, arrival[c]);
		r->end = max_u64(r->end, arrival[c]);
	}
}

static enum spyre_engine_status fire_dst(struct run *r, struct agent *a, uint64_t t,
					 uint32_t n)
{
	struct core_run *cr = &r->cores[a->slot];
	struct stream_run *s = &cr->streams[a->index];
	const struct endpoint *ep = &s->desc->dst;
	uint64_t done, unused;

	if (ep->kind == SPK_EP_RING) {
		fire_ring(r, a, t, n, &done);
	} else {
		for (uint32_t i = 0; i < n; i++) {
			const uint8_t *slot = fifo_at(&s->fifo, i);

			if (ep->kind == SPK_EP_SCRATCH) {
				memcpy(spad_at(cr, ep, s->left + i), slot, STICK_BYTES);
			} else {
				uint64_t addr = s->dst_base + pattern_offset(ep, s->left + i);

				if (r->mem->write(r->mem->opaque, addr, slot, STICK_BYTES))
					return mem_fail(r, a, addr, "write");
			}
		}
		if (ep->kind == SPK_EP_SCRATCH) {
			done = t + timing_spad_ticks(r->t, (uint64_t)n * STICK_BYTES);
		} else {
			done = dram_transfer(&r->dram, r->t, t, (uint64_t)n * STICK_BYTES, true,
					     &unused);
			r->stats->dram_write_bytes += (uint64_t)n * STICK_BYTES;
		}
	}
	fifo_pop(s, n, done);
	a->free_at = done;
	r->end = max_u64(r->end, done);
	return SPYRE_ENGINE_OK;
}

/* Copy n sticks from the front of a FIFO into a contiguous array. */
static void fifo_gather(const struct fifo *f, uint32_t n, uint8_t *dst)
{
	for (uint32_t i = 0; i < n; i++)
		memcpy(dst + (size_t)i * STICK_BYTES, fifo_at(f, i), STICK_BYTES);
}

static void fire_op(struct run *r, struct agent *a, uint64_t t)
{
	struct core_run *cr = &r->cores[a->slot];
	const struct op_desc *op = &cr->prog->ops[a->index];
	struct stream_run *out = &cr->streams[op->out];
	unsigned core = cr->prog->core;
	const uint8_t *in[3] = { NULL, NULL, NULL };
	uint8_t *p = r->gather, *out_buf;
	float *acc = NULL;
	bool on_pe;
	uint64_t end = t + timing_op_ticks(r->t, op, &on_pe);

	for (unsigned i = 0; i < op->num_in; i++) {
		fifo_gather(&cr->streams[op->in[i]].fifo, op->in_sticks[i], p);
		in[i] = p;
		p += (size_t)op->in_sticks[i] * STICK_BYTES;
	}
	out_buf = p;
	if (op->opcode == SPK_OPC_MATMUL) {
		acc = (float *)(void *)(cr->spad + cr->prog->buffers[op->acc_buffer].offset);
		r->stats->macs += (uint64_t)op->rows * op->k * op->row_elems;
	}
	if (op_fire(&r->env, op, a->fired, in, out_buf, acc, r->tmp)) {
		struct fifo *f = &out->fifo;

		for (uint32_t i = 0; i < op->out_sticks; i++)
			memcpy(fifo_at(f, f->count + i), out_buf + (size_t)i * STICK_BYTES,
			       STICK_BYTES);
		out->entered += op->out_sticks;
		fifo_push(f, op->out_sticks, end);
	}
	for (unsigned i = 0; i < op->num_in; i++)
		fifo_pop(&cr->streams[op->in[i]], op->in_sticks[i], end);
	a->fired++;
	a->free_at = end;
	*(on_pe ? &cr->pe_free : &cr->sfp_free) = end;
	r->stats->op_firings++;
	r->stats->busy_cycles[core] += (end - t) / TICKS_PER_CYCLE;
	if (on_pe)
		r->stats->pe_busy_cycles[core] += (end - t) / TICKS_PER_CYCLE;
	r->end = max_u64(r->end, end);
}

static const char *agent_name(const struct agent *a)
{
	return a->kind == AGENT_SRC ? "stream source" :
	       a->kind == AGENT_DST ? "stream destination" : "op";
}

/* Nothing can fire: report the first agent that still has work. */
static enum spyre_engine_status report_deadlock(struct run *r)
{
	unsigned pending = 0;
	struct agent *first = NULL;

	for (unsigned i = 0; i < r->num_agents; i++) {
		if (!agent_done(r, &r->agents[i])) {
			pending++;
			if (!first)
				first = &r->agents[i];
		}
	}
	engine_set_error(r->err, SPYRE_ENGINE_E_DEADLOCK, (int)r->cores[first->slot].prog->core,
			 (int)first->index,
			 "no progress possible: %s %u waits (%u agents unfinished)",
			 agent_name(first), first->index, pending);
	return SPYRE_ENGINE_E_DEADLOCK;
}

static enum spyre_engine_status run_loop(struct run *r)
{
	for (;;) {
		struct agent *best = NULL;
		uint64_t best_t = 0;
		uint32_t best_n = 0;
		bool pending = false;
		enum spyre_engine_status st = SPYRE_ENGINE_OK;

		for (unsigned i = 0; i < r->num_agents; i++) {
			struct agent *a = &r->agents[i];
			uint64_t t = a->free_at;
			uint32_t n = 0;
			bool ready;

			if (agent_done(r, a))
				continue;
			pending = true;
			ready = a->kind == AGENT_SRC ? src_ready(r, a, &t, &n) :
				a->kind == AGENT_DST ? dst_ready(r, a, &t, &n) :
						       op_ready(r, a, &t);
			if (ready && (!best || t < best_t)) {
				best = a;
				best_t = t;
				best_n = n;
			}
		}
		if (!pending)
			return SPYRE_ENGINE_OK;
		if (!best)
			return report_deadlock(r);
		if (best->kind == AGENT_SRC)
			st = fire_src(r, best, best_t, best_n);
		else if (best->kind == AGENT_DST)
			st = fire_dst(r, best, best_t, best_n);
		else
			fire_op(r, best, best_t);
		if (st)
			return st;
	}
}

/* Resolve DRAM endpoints against the arguments: aligned, inside 2^48. */
static enum spyre_engine_status bind_endpoint(struct run *r, const struct core_program *cp,
					      unsigned idx, const struct endpoint *ep,
					      const uint64_t *args, uint64_t *base)
{
	const uint64_t limit = 1ull << 48;

	if (ep->kind != SPK_EP_DRAM)
		return SPYRE_ENGINE_OK;
	if (__builtin_add_overflow(args[ep->ref], ep->offset, base) || *base % STICK_BYTES ||
	    *base >= limit || 0 - (uint64_t)ep->min_off > *base ||
	    (uint64_t)ep->max_off + STICK_BYTES > limit - *base) {
		engine_set_error(r->err, SPYRE_ENGINE_E_ADDRESS, (int)cp->core, (int)idx,
				 "argument %u + 0x%llx: pattern misaligned or outside 2^48",
				 ep->ref, (unsigned long long)ep->offset);
		return SPYRE_ENGINE_E_ADDRESS;
	}
	return SPYRE_ENGINE_OK;
}

static enum spyre_engine_status setup_core(struct run *r, unsigned slot, const uint64_t *args)
{
	const struct core_program *cp = &r->prog->cores[slot];
	struct core_run *cr = &r->cores[slot];
	enum spyre_engine_status st;

	cr->prog = cp;
	cr->spad = calloc(1, r->prog->cfg.scratchpad_bytes);
	if (!cr->spad)
		return SPYRE_ENGINE_E_NOMEM;
	for (unsigned i = 0; i < cp->num_streams; i++) {
		struct stream_run *s = &cr->streams[i];

		s->desc = &cp->streams[i];
		s->fifo.base = cr->spad + cp->buffers[s->desc->fifo_buffer].offset;
		s->fifo.cap = s->desc->fifo_sticks;
		s->fifo.ready = calloc(s->fifo.cap, sizeof(uint64_t));
		s->fifo.freed = calloc(s->fifo.cap, sizeof(uint64_t));
		if (!s->fifo.ready || !s->fifo.freed)
			return SPYRE_ENGINE_E_NOMEM;
		st = bind_endpoint(r, cp, i, &s->desc->src, args, &s->src_base);
		if (!st)
			st = bind_endpoint(r, cp, i, &s->desc->dst, args, &s->dst_base);
		if (st)
			return st;
		if (s->desc->src.kind == SPK_EP_DRAM || s->desc->src.kind == SPK_EP_SCRATCH)
			r->agents[r->num_agents++] = (struct agent){ AGENT_SRC, slot, i, 0, 0 };
		if (s->desc->dst.kind != SPK_EP_OP)
			r->agents[r->num_agents++] = (struct agent){ AGENT_DST, slot, i, 0, 0 };
	}
	for (unsigned i = 0; i < cp->num_ops; i++)
		r->agents[r->num_agents++] = (struct agent){ AGENT_OP, slot, i, 0, 0 };
	return SPYRE_ENGINE_OK;
}

/* Host scratch for the largest op firing. */
static enum spyre_engine_status alloc_op_scratch(struct run *r)
{
	size_t floats = 64, bytes = STICK_BYTES;

	for (unsigned c = 0; c < r->prog->num_cores; c++) {
		const struct core_program *cp = &r->prog->cores[c];

		for (unsigned i = 0; i < cp->num_ops; i++) {
			const struct op_desc *op = &cp->ops[i];
			size_t sticks = op->out_sticks;

			for (unsigned j = 0; j < op->num_in; j++)
				sticks += op->in_sticks[j];
			if (sticks * STICK_BYTES > bytes)
				bytes = sticks * STICK_BYTES;
			if (op_tmp_floats(op) > floats)
				floats = op_tmp_floats(op);
		}
	}
	r->tmp = malloc(floats * sizeof(float));
	r->gather = malloc(bytes);
	return r->tmp && r->gather ? SPYRE_ENGINE_OK : SPYRE_ENGINE_E_NOMEM;
}

static void run_free(struct run *r)
{
	for (unsigned c = 0; r->cores && c < r->prog->num_cores; c++) {
		struct core_run *cr = &r->cores[c];

		free(cr->spad);
		for (unsigned i = 0; i < SPK_MAX_STREAMS; i++) {
			free(cr->streams[i].fifo.ready);
			free(cr->streams[i].fifo.freed);
		}
	}
	free(r->cores);
	free(r->agents);
	free(r->tmp);
	free(r->gather);
	pool_destroy(r->env.pool);
}

static void finish_stats(struct run *r)
{
	struct spyre_engine_stats *st = r->stats;

	st->device_cycles = (r->end + TICKS_PER_CYCLE - 1) / TICKS_PER_CYCLE;
	st->device_ns = (uint64_t)((double)st->device_cycles / r->t->clock_ghz + 0.5);
}

enum spyre_engine_status spyre_program_run(struct spyre_program *prog,
					   const uint64_t *args, unsigned nargs,
					   const struct spyre_engine_mem *mem,
					   struct spyre_engine_stats *stats,
					   struct spyre_engine_error *err)
{
	struct spyre_engine_stats local;
	struct run r = { 0 };
	enum spyre_engine_status st = SPYRE_ENGINE_OK;

	engine_set_error(err, SPYRE_ENGINE_OK, -1, -1, "%s", "");
	if (!prog || !mem || !mem->read || !mem->write || (nargs && !args)) {
		engine_set_error(err, SPYRE_ENGINE_E_INVALID, -1, -1, "NULL argument");
		return SPYRE_ENGINE_E_INVALID;
	}
	if (nargs != prog->num_args) {
		engine_set_error(err, SPYRE_ENGINE_E_ARGS, -1, -1,
				 "%u arguments, the program takes %u", nargs, prog->num_args);
		return SPYRE_ENGINE_E_ARGS;
	}
	r.stats = stats ? stats : &local;
	memset(r.stats, 0, sizeof(*r.stats));
	r.prog = prog;
	r.t = &prog->cfg.timing;
	r.mem = mem;
	r.err = err;
	r.dram.last_dir = -1;
	r.ring.num_cores = prog->cfg.num_cores;
	r.cores = calloc(prog->num_cores, sizeof(*r.cores));
	r.agents = calloc((size_t)prog->num_cores * (2 * SPK_MAX_STREAMS + SPK_MAX_OPS),
			  sizeof(*r.agents));
	if (!r.cores || !r.agents)
		st = SPYRE_ENGINE_E_NOMEM;
	for (unsigned c = 0; !st && c < prog->num_cores; c++)
		st = setup_core(&r, c, args);
	if (!st)
		st = alloc_op_scratch(&r);
	if (!st) {
		r.env.simd = !prog->cfg.host_portable;
		r.env.pool = pool_create(prog->cfg.host_threads);
		if (!r.env.pool)
			st = SPYRE_ENGINE_E_NOMEM;
	}
	if (st == SPYRE_ENGINE_E_NOMEM)
		engine_set_error(err, st, -1, -1, "host memory for the run");
	if (!st)
		st = run_loop(&r);
	finish_stats(&r);
	run_free(&r);
	return st;
}
