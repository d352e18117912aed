// SPDX-License-Identifier: MIT
/*
 * The op calls: validate the tensors, find the op's plan in a per-device
 * cache (generating and loading it on a miss), set every kernel's
 * arguments and launch them on the stream.  The cache is one list under a
 * mutex; each entry has its own mutex held across set_arg + launch, since
 * a kernel's arguments are shared state, and a count of the calls using
 * it, so that spyre_ops_cache_clear() from another thread never frees an
 * entry under a call.  A close hook on each device the cache serves drops
 * its entries (their kernels and scratch buffer) when the device closes,
 * once its streams are done and before the rest is freed.
 *
 * An entry's scratch buffer (the unfused MLP's h) is shared by every
 * stream that runs the entry.  That is safe because one call's launches
 * are queued contiguously under the entry's lock and the driver makes
 * every job wait for the earlier jobs that listed one of its buffers: the
 * second stream's first launch, which lists the scratch buffer, waits for
 * the first stream's last.  (The kernels' images are listed the same way,
 * so two streams running one cached op take turns in any case.)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../device.h"
#include "../error.h"
#include "../kernel.h"
#include "ops_internal.h"

/* Everything the generated program depends on; compared with memcmp. */
struct op_key {
	spyre_device *dev;
	int kind, sub, act;
	float imm;
	uint32_t present;	/* bit i: operand i given */
	spyre_layout l[OPS_MAX_OPERANDS];
};

struct op_entry {
	struct op_entry *next;
	struct op_key key;
	pthread_mutex_t lock;
	unsigned n;
	spyre_kernel **kernels;
	struct ops_launch *launches;	/* argument maps (images freed) */
	spyre_buffer *temp;
	uint64_t temp2_offset;
	unsigned users;			/* calls using it (under cache_lock) */
	int unlisted;			/* dropped from the cache: last user frees it */
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct op_entry *cache;

static void entry_free(struct op_entry *e)
{
	for (unsigned i = 0; i < e->n; i++)
		spyre_kernel_destroy(e->kernels[i]);
	spyre_buffer_free(e->temp);
	free(e->kernels);
	free(e->launches);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

/* A cached entry whose kernels went away (device closed) is stale. */
static int entry_stale(const struct op_entry *e)
{
	for (unsigned i = 0; i < e->n; i++)
		if (spyre_kernel_num_args(e->kernels[i]) != e->launches[i].num_args)
			return 1;
	return e->temp && spyre_buffer_size(e->temp) == 0;
}

/* Take @e off the list (under cache_lock); free it unless a call uses it. */
static void entry_unlist(struct op_entry **pp, struct op_entry *e)
{
	*pp = e->next;
	e->next = NULL;
	e->unlisted = 1;
	if (!e->users)
		entry_free(e);
}

static void entry_put(struct op_entry *e)
{
	pthread_mutex_lock(&cache_lock);
	if (!--e->users && e->unlisted)
		entry_free(e);
	pthread_mutex_unlock(&cache_lock);
}

static void cache_drop(spyre_device *dev)
{
	struct op_entry **pp, *e;

	pthread_mutex_lock(&cache_lock);
	for (pp = &cache; (e = *pp);) {
		if (!dev || e->key.dev == dev)
			entry_unlist(pp, e);
		else
			pp = &e->next;
	}
	pthread_mutex_unlock(&cache_lock);
}

SPYRE_EXPORT spyre_status spyre_ops_cache_clear(spyre_device *dev)
{
	cache_drop(dev);
	return spyre_done(SPYRE_SUCCESS);
}

/* spyre_device_close(): the device's programs and scratch go first. */
static void device_closing(spyre_device *dev)
{
	cache_drop(dev);
}

/* ---- op profiles ---- */

static _Thread_local spyre_op_profile *profile_next;

SPYRE_EXPORT spyre_status spyre_ops_profile_next(spyre_op_profile *profile)
{
	profile_next = profile;
	return spyre_done(SPYRE_SUCCESS);
}

/*
 * An op call's profile while its launches run: each launch adds its
 * statistics when it retires; the last reference (the call's own, or a
 * retired launch's) writes *dst if every launch was profiled.
 */
struct spyre_op_prof {
	_Atomic unsigned refs;
	unsigned expected;		/* launches the op queued */
	spyre_op_profile acc;
	spyre_op_profile *dst;
};

static struct spyre_op_prof *op_prof_new(spyre_op_profile *dst)
{
	struct spyre_op_prof *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	atomic_init(&p->refs, 1);	/* the op call's own */
	p->dst = dst;
	return p;
}

/* Under the stream's lock: one op's launches are all on one stream. */
static void op_prof_launch_retired(void *ctx, uint32_t index, const spyre_launch_profile *lp)
{
	struct spyre_op_prof *p = ctx;
	spyre_launch_profile *t = &p->acc.total;

	(void)index;

	if (!p->acc.launches || lp->start_ns < t->start_ns)
		t->start_ns = lp->start_ns;
	if (lp->end_ns > t->end_ns)
		t->end_ns = lp->end_ns;
	t->device_cycles += lp->device_cycles;
	t->device_ns += lp->device_ns;
	t->dram_bytes_read += lp->dram_bytes_read;
	t->dram_bytes_written += lp->dram_bytes_written;
	t->ring_bytes += lp->ring_bytes;
	t->ring_byte_hops += lp->ring_byte_hops;
	t->op_firings += lp->op_firings;
	t->macs += lp->macs;
	for (int c = 0; c < SPYRE_MAX_CORES; c++)
		t->core_busy_cycles[c] += lp->core_busy_cycles[c];
	p->acc.launches++;
}

static void op_prof_put(void *ctx)
{
	struct spyre_op_prof *p = ctx;

	if (atomic_fetch_sub(&p->refs, 1) != 1)
		return;
	if (p->expected && p->acc.launches == p->expected)
		*p->dst = p->acc;
	free(p);
}

/* A queued launch of the call (a captured one is dropped, so expected
 * then exceeds what retires and nothing is written). */
static void op_prof_get(void *ctx)
{
	struct spyre_op_prof *p = ctx;

	atomic_fetch_add(&p->refs, 1);
	p->expected++;
}

static const struct spyre_owner_ops op_prof_owner_ops = {
	.get = op_prof_get,
	.put = op_prof_put,
	.launch_retired = op_prof_launch_retired,
};

static spyre_status generate(const struct op_key *k, struct ops_plan *plan)
{
	const spyre_layout *l = k->l;
#define OPT(i) ((k->present >> (i)) & 1 ? &l[i] : NULL)
	switch (k->kind) {
	case OPS_K_MATMUL:
		return ops_gen_matmul(&l[0], &l[1], (spyre_act)k->act, &l[2], plan);
	case OPS_K_ELTWISE:
		return ops_gen_eltwise((spyre_eltwise)k->sub, &l[0], OPT(1), k->imm, &l[2], plan);
	case OPS_K_NORM:
		return ops_gen_norm(k->sub, &l[0], OPT(1), OPT(2), k->imm, &l[3], plan);
	case OPS_K_SOFTMAX:
		return ops_gen_softmax(&l[0], &l[1], k->sub, plan);
	case OPS_K_MLP:
		return ops_gen_mlp(&l[0], &l[1], (spyre_act)k->act, &l[2], &l[3],
				   (enum ops_mlp_mode)k->sub, plan);
	case OPS_K_PERMUTE: {
		/* sub: perm[i] in bits 2i .. 2i+1 */
		uint32_t perm[SPYRE_TENSOR_MAX_DIMS];

		for (int i = 0; i < SPYRE_TENSOR_MAX_DIMS; i++)
			perm[i] = ((uint32_t)k->sub >> (2 * i)) & 3;
		return ops_gen_permute(&l[0], perm, &l[1], plan);
	}
	default:
		return ops_gen_transpose(&l[0], &l[1], plan);
	}
#undef OPT
}

/* Launch @i of @plan's kernel is named after the op (ops/name.c). */
static spyre_status name_kernel(const struct op_key *k, const struct ops_plan *plan, unsigned i,
				spyre_kernel *kernel)
{
	struct ops_name_args a = {
		.kind = (enum ops_kind)k->kind, .sub = k->sub, .act = k->act,
		.mlp_unfused = k->kind == OPS_K_MLP && plan->temp_bytes, .present = k->present,
	};
	char name[SPYRE_KERNEL_NAME_MAX + 1];
	spyre_status st;

	memcpy(a.l, k->l, sizeof(a.l));
	ops_kernel_name(&a, i, plan->num_launches, name, sizeof(name));
	st = spyre_kernel_set_name(kernel, name);
	if (st) {
		spyre_kernel_destroy(kernel);
		return spyre_set_error(st, "naming the op's kernel \"%s\"", name);
	}
	return SPYRE_SUCCESS;
}

/* Generate the plan and load its kernels: a new entry (not yet listed). */
static spyre_status entry_create(const struct op_key *k, struct op_entry **out)
{
	struct ops_plan plan = { 0 };
	struct op_entry *e = calloc(1, sizeof(*e));
	spyre_status st;

	if (!e)
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "op cache: out of memory");
	e->key = *k;
	pthread_mutex_init(&e->lock, NULL);
	st = spyre_device_on_close(k->dev, device_closing);
	if (!st)
		st = generate(k, &plan);
	if (!st) {
		e->kernels = calloc(plan.num_launches, sizeof(*e->kernels));
		e->launches = calloc(plan.num_launches, sizeof(*e->launches));
		if (!e->kernels || !e->launches)
			st = spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "op cache: out of memory");
	}
	for (unsigned i = 0; !st && i < plan.num_launches; i++) {
		st = spyre_kernel_load(k->dev, plan.launches[i].image, plan.launches[i].bytes,
				       &e->kernels[i]);
		if (!st)
			st = name_kernel(k, &plan, i, e->kernels[i]);
		if (!st) {
			e->launches[i] = plan.launches[i];
			e->launches[i].image = NULL;
			e->n++;
		}
	}
	if (!st && plan.temp_bytes)
		st = spyre_buffer_alloc(k->dev, plan.temp_bytes, SPYRE_MEM_DEVICE, &e->temp);
	e->temp2_offset = plan.temp2_offset;
	ops_plan_free(&plan);
	if (st) {
		/* Cleaning up makes runtime calls, which reset the detail. */
		char detail[256];

		snprintf(detail, sizeof(detail), "%s", spyre_last_error_detail());
		entry_free(e);
		return spyre_set_error(st, "%s", detail);
	}
	*out = e;
	return SPYRE_SUCCESS;
}

static spyre_status entry_get(const struct op_key *k, struct op_entry **out)
{
	struct op_entry **pp, *e;
	spyre_status st;

	pthread_mutex_lock(&cache_lock);
	for (pp = &cache; (e = *pp); pp = &e->next) {
		if (memcmp(&e->key, k, sizeof(*k)))
			continue;
		if (!entry_stale(e))
			break;
		entry_unlist(pp, e);
		e = NULL;
		break;
	}
	if (!e) {
		st = entry_create(k, &e);
		if (st) {
			pthread_mutex_unlock(&cache_lock);
			return st;
		}
		e->next = cache;
		cache = e;
	}
	e->users++;
	pthread_mutex_unlock(&cache_lock);
	*out = e;
	return SPYRE_SUCCESS;
}

static spyre_status check_tensor(const char *fn, const char *name, const spyre_tensor *t,
				 spyre_device *dev)
{
	uint64_t size;

	if (!t)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, name);
	if (!t->buf)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: %s has no buffer", fn,
				       name);
	size = spyre_buffer_size(t->buf);
	if (!size)
		return spyre_set_error(SPYRE_ERROR_INVALID_HANDLE,
				       "%s: %s's buffer is not a live buffer", fn, name);
	if (spyre_buffer_device(t->buf) != dev)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s: %s's buffer belongs to another device than the stream",
				       fn, name);
	if (t->offset % SPYRE_STICK_BYTES)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s: %s's offset %llu is not a multiple of 128", fn, name,
				       (unsigned long long)t->offset);
	if (t->offset > size || t->layout.bytes > size - t->offset)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%s: %s needs %llu bytes at offset %llu; its buffer has %llu",
				       fn, name, (unsigned long long)t->layout.bytes,
				       (unsigned long long)t->offset, (unsigned long long)size);
	return SPYRE_SUCCESS;
}

SPYRE_EXPORT spyre_status spyre_tensor_init(spyre_tensor *t, spyre_buffer *buf,
					    uint64_t offset, const spyre_layout *layout)
{
	spyre_device *dev;

	if (!t || !layout)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "spyre_tensor_init: NULL");
	t->buf = buf;
	t->offset = offset;
	t->layout = *layout;
	dev = buf ? spyre_buffer_device(buf) : NULL;
	return check_tensor("spyre_tensor_init", "the tensor", t, dev);
}

/*
 * Validate the tensors in their slots (NULL = absent; names[i] for
 * messages), find the plan and launch it.  Generators number their
 * operands in slot order skipping absent ones: argument operand j is the
 * j-th present tensor.
 */
static spyre_status run_op(const char *fn, spyre_stream *s, struct op_key *k,
			   const spyre_tensor *const *t, const char *const *names, unsigned n)
{
	const spyre_tensor *ops[OPS_MAX_OPERANDS];
	spyre_op_profile *want = profile_next;
	struct spyre_op_prof *prof = NULL;
	unsigned nops = 0;
	struct op_entry *e;
	spyre_device *dev;
	spyre_status st;

	profile_next = NULL;	/* this call takes it, whatever happens */
	if (!s)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: stream is NULL", fn);
	dev = spyre_stream_device(s);
	if (!dev)
		return spyre_set_error(SPYRE_ERROR_INVALID_HANDLE, "%s: not a live stream", fn);
	k->dev = dev;
	for (unsigned i = 0; i < n; i++) {
		if (!t[i])
			continue;
		if ((st = check_tensor(fn, names[i], t[i], dev)))
			return st;
		k->l[i] = t[i]->layout;
		k->present |= 1u << i;
		ops[nops++] = t[i];
	}
	if ((st = entry_get(k, &e)))
		return st;
	if (want && !(prof = op_prof_new(want))) {
		entry_put(e);
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "%s: out of memory", fn);
	}
	pthread_mutex_lock(&e->lock);
	for (unsigned i = 0; !st && i < e->n; i++) {
		const struct ops_launch *l = &e->launches[i];

		for (unsigned a = 0; !st && a < l->num_args; a++) {
			if (l->arg[a] == OPS_ARG_TEMP)
				st = spyre_kernel_set_arg(e->kernels[i], a, e->temp, 0);
			else if (l->arg[a] == OPS_ARG_TEMP2)
				st = spyre_kernel_set_arg(e->kernels[i], a, e->temp,
							  e->temp2_offset);
			else if (l->arg[a] < nops)
				st = spyre_kernel_set_arg(e->kernels[i], a, ops[l->arg[a]]->buf,
							  ops[l->arg[a]]->offset);
			else
				st = spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
						     "%s: internal: argument %u names operand %u",
						     fn, a, l->arg[a]);
		}
		if (!st)
			st = spyre_kernel_launch_for(s, e->kernels[i],
						     prof ? &(struct spyre_owner){ &op_prof_owner_ops,
										   prof } : NULL);
	}
	pthread_mutex_unlock(&e->lock);
	entry_put(e);
	if (prof) {
		if (st)
			prof->expected = 0;	/* not every launch queued: write nothing */
		op_prof_put(prof);
	}
	return st;
}

static void key_init(struct op_key *k, int kind, int sub, int act, float imm)
{
	memset(k, 0, sizeof(*k));
	k->kind = kind;
	k->sub = sub;
	k->act = act;
	k->imm = imm;
}

/* Required operands: a NULL one is an error naming it. */
static spyre_status need(const char *fn, const spyre_tensor *const *t,
			 const char *const *names, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (names[i] && !t[i])
			return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
					       names[i]);
	return SPYRE_SUCCESS;
}

#define RUN(fn, kind, sub, act, imm, req, ...)						\
	do {										\
		const spyre_tensor *t_[] = { __VA_ARGS__ };				\
		const char *const *n_ = req;						\
		unsigned c_ = sizeof(t_) / sizeof(t_[0]);				\
		struct op_key k_;							\
		spyre_status st_ = need(fn, t_, n_, c_);				\
											\
		if (st_)								\
			return st_;							\
		key_init(&k_, kind, sub, act, imm);					\
		return run_op(fn, s, &k_, t_, n_, c_);					\
	} while (0)

static const char *const n_ab_c[] = { "a", "b", "c" };
static const char *const n_x_y_out[] = { "x", "y", "out" };
static const char *const n_x_opt_out[] = { "x", NULL, "out" };
static const char *const n_x_y[] = { "x", "y" };
static const char *const n_norm[] = { "x", NULL, NULL, "y" };
static const char *const n_mlp[] = { "x", "w1", "w2", "y" };

SPYRE_EXPORT spyre_status spyre_op_matmul(spyre_stream *s, const spyre_tensor *a,
					  const spyre_tensor *b, spyre_act act, spyre_tensor *c)
{
	RUN("spyre_op_matmul", OPS_K_MATMUL, 0, (int)act, 0, n_ab_c, a, b, c);
}

SPYRE_EXPORT spyre_status spyre_op_binary(spyre_stream *s, spyre_eltwise op,
					  const spyre_tensor *x, const spyre_tensor *y,
					  spyre_tensor *out)
{
	if (!ops_eltwise_binary(op))
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "spyre_op_binary: op %d is not a binary op", (int)op);
	RUN("spyre_op_binary", OPS_K_ELTWISE, (int)op, 0, 0, n_x_y_out, x, y, out);
}

SPYRE_EXPORT spyre_status spyre_op_unary(spyre_stream *s, spyre_eltwise op,
					 const spyre_tensor *x, float scale, spyre_tensor *out)
{
	if ((unsigned)op > SPYRE_OP_COPY || ops_eltwise_binary(op))
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "spyre_op_unary: op %d is not a unary op", (int)op);
	RUN("spyre_op_unary", OPS_K_ELTWISE, (int)op, 0, op == SPYRE_OP_SCALE ? scale : 0,
	    n_x_opt_out, x, NULL, out);
}

SPYRE_EXPORT spyre_status spyre_op_softmax(spyre_stream *s, const spyre_tensor *x,
					   spyre_tensor *y)
{
	RUN("spyre_op_softmax", OPS_K_SOFTMAX, 0, 0, 0, n_x_y, x, y);
}

SPYRE_EXPORT spyre_status spyre_op_log_softmax(spyre_stream *s, const spyre_tensor *x,
					       spyre_tensor *y)
{
	RUN("spyre_op_log_softmax", OPS_K_SOFTMAX, 1, 0, 0, n_x_y, x, y);
}

SPYRE_EXPORT spyre_status spyre_op_layernorm(spyre_stream *s, const spyre_tensor *x,
					     const spyre_tensor *gamma, const spyre_tensor *beta,
					     float eps, spyre_tensor *y)
{
	RUN("spyre_op_layernorm", OPS_K_NORM, 0, 0, eps, n_norm, x, gamma, beta, y);
}

SPYRE_EXPORT spyre_status spyre_op_rmsnorm(spyre_stream *s, const spyre_tensor *x,
					   const spyre_tensor *gamma, float eps, spyre_tensor *y)
{
	RUN("spyre_op_rmsnorm", OPS_K_NORM, 1, 0, eps, n_norm, x, gamma, NULL, y);
}

/* SPYRE_OPS_MLP=fused|unfused forces a form (read once); default auto. */
static enum ops_mlp_mode mlp_mode(void)
{
	static _Atomic int mode = -1;
	int m = mode;

	if (m < 0) {
		const char *e = getenv("SPYRE_OPS_MLP");

		m = !e ? OPS_MLP_AUTO : !strcmp(e, "fused") ? OPS_MLP_FUSED :
		    !strcmp(e, "unfused") ? OPS_MLP_UNFUSED : OPS_MLP_AUTO;
		mode = m;
	}
	return (enum ops_mlp_mode)m;
}

SPYRE_EXPORT spyre_status spyre_op_mlp(spyre_stream *s, const spyre_tensor *x,
				       const spyre_tensor *w1, spyre_act act,
				       const spyre_tensor *w2, spyre_tensor *y)
{
	RUN("spyre_op_mlp", OPS_K_MLP, (int)mlp_mode(), (int)act, 0, n_mlp, x, w1, w2, y);
}

SPYRE_EXPORT spyre_status spyre_op_permute(spyre_stream *s, const spyre_tensor *x,
					   const uint32_t *perm, spyre_tensor *y)
{
	int sub = 0;

	if (!perm || !x)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "spyre_op_permute: %s is NULL",
				       perm ? "x" : "perm");
	for (uint32_t i = 0; i < x->layout.ndim && i < SPYRE_TENSOR_MAX_DIMS; i++) {
		if (perm[i] >= SPYRE_TENSOR_MAX_DIMS)
			return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
					       "spyre_op_permute: perm[%u] = %u", i, perm[i]);
		sub |= (int)perm[i] << (2 * i);
	}
	RUN("spyre_op_permute", OPS_K_PERMUTE, sub, 0, 0, n_x_y, x, y);
}

SPYRE_EXPORT spyre_status spyre_op_transpose(spyre_stream *s, const spyre_tensor *x,
					     spyre_tensor *y)
{
	RUN("spyre_op_transpose", OPS_K_TRANSPOSE, 0, 0, 0, n_x_y, x, y);
}
