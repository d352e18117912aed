// SPDX-License-Identifier: MIT
/*
 * Streams: each is a timeline syncobj (point n = its n-th job finished), a
 * command ring in a pinned host buffer, staging buffers for pageable copies
 * and a list of jobs whose host side (deferred copies, profiles, traces,
 * fault checks) runs when they retire.
 *
 * A job is one SUBMIT: its commands sit in ring slots followed by data slots.
 * Every operation ("node") is [TIMESTAMP t0][op][TIMESTAMP t1], so each one
 * is timed by the card and t1 != 0 proves it ran: the first node whose t1
 * stayed 0 is the one that failed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xf86drm.h>

#include "internal.h"
#include "spyre_regs.h"
#include "uapi/drm/spyre_accel.h"

struct spyre_completion {
	struct spyre_completion *next;
	uint64_t point;
	uint64_t job_id;		/* SUBMIT's, to find the job's fault record */
	uint32_t slot;			/* first ring slot of the job */
	uint32_t ncmds;
	struct spyre_node *nodes;	/* owned, unless exec's */
	uint32_t nnodes;
	int stage;
	void *dtoh_dst;
	uint64_t dtoh_bytes;
	struct spyre_graph_exec *exec;
};

void spyre_cmd_put(uint8_t *c, uint8_t op, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3)
{
	uint64_t a[4] = { a0, a1, a2, a3 };

	memset(c, 0, SPYRE_CMD_SIZE);
	c[SPYRE_CMD_OFF_OPCODE] = op;
	for (int i = 0; i < 4; i++)
		for (int b = 0; b < 8; b++)
			c[SPYRE_CMD_OFF_ARGS + i * 8 + b] = (uint8_t)(a[i] >> (8 * b));
}

static uint32_t args_slots(uint32_t nargs)
{
	return (nargs * 8 + SPYRE_CMD_SIZE - 1) / SPYRE_CMD_SIZE;
}

#define STATS_SLOTS ((SPYRE_STATS_WORDS * 8 + SPYRE_CMD_SIZE - 1) / SPYRE_CMD_SIZE)

uint32_t spyre_node_data_slots(const struct spyre_node *n)
{
	if (n->kind == NODE_LAUNCH)
		return 1 + args_slots(n->nargs) + STATS_SLOTS;
	return 1;
}

uint32_t spyre_node_encode(const struct spyre_node *n, uint8_t *cmd, uint8_t *data,
			   uint64_t data_va)
{
	uint32_t slots = spyre_node_data_slots(n);
	uint64_t args_va = data_va + SPYRE_CMD_SIZE;
	uint64_t stats_va = args_va + (uint64_t)args_slots(n->nargs) * SPYRE_CMD_SIZE;

	memset(data, 0, (size_t)slots * SPYRE_CMD_SIZE);
	spyre_cmd_put(cmd, SPYRE_OP_TIMESTAMP, data_va, 0, 0, 0);
	switch (n->kind) {
	case NODE_COPY:
		spyre_cmd_put(cmd + SPYRE_CMD_SIZE, SPYRE_OP_DMA_COPY, n->a0, n->a1, n->a2, 0);
		break;
	case NODE_FILL:
		spyre_cmd_put(cmd + SPYRE_CMD_SIZE, SPYRE_OP_DMA_FILL, n->a0, n->a1, n->a2, 0);
		break;
	case NODE_LAUNCH:
		for (uint32_t i = 0; i < n->nargs; i++)
			for (int b = 0; b < 8; b++)
				data[SPYRE_CMD_SIZE + i * 8 + b] = (uint8_t)(n->args[i] >> (8 * b));
		spyre_cmd_put(cmd + SPYRE_CMD_SIZE, SPYRE_OP_LAUNCH, n->a0, args_va,
			      (uint64_t)n->nargs * 8, stats_va);
		break;
	case NODE_MARK:
		if (n->a0)
			spyre_cmd_put(cmd + SPYRE_CMD_SIZE, SPYRE_OP_TIMESTAMP, n->a0, 0, 0, 0);
		else
			spyre_cmd_put(cmd + SPYRE_CMD_SIZE, SPYRE_OP_NOP, 0, 0, 0, 0);
		break;
	}
	spyre_cmd_put(cmd + 2 * SPYRE_CMD_SIZE, SPYRE_OP_TIMESTAMP, data_va + 8, 0, 0, 0);
	return slots;
}

static uint64_t load_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int b = 7; b >= 0; b--)
		v = v << 8 | p[b];
	return v;
}

static uint32_t job_slots(const struct spyre_node *nodes, uint32_t n, uint32_t *ncmds)
{
	uint32_t total = 3 * n;

	for (uint32_t i = 0; i < n; i++)
		total += spyre_node_data_slots(&nodes[i]);
	*ncmds = 3 * n;
	return total;
}

/* Encode @n nodes at @base (device address @va): commands, then data. */
static void encode_job(const struct spyre_node *nodes, uint32_t n, uint8_t *base, uint64_t va)
{
	uint32_t d = 3 * n;

	for (uint32_t i = 0; i < n; i++)
		d += spyre_node_encode(&nodes[i], base + (size_t)3 * i * SPYRE_CMD_SIZE,
				       base + (size_t)d * SPYRE_CMD_SIZE,
				       va + (uint64_t)d * SPYRE_CMD_SIZE);
}

static void add_le64(uint8_t *p, uint64_t add)
{
	uint64_t v = load_le64(p) + add;

	for (int b = 0; b < 8; b++)
		p[b] = (uint8_t)(v >> (8 * b));
}

spyre_status spyre_template_build(struct spyre_template *t, const struct spyre_node *nodes,
				  uint32_t n)
{
	uint32_t r = 0;

	memset(t, 0, sizeof(*t));
	t->slots = job_slots(nodes, n, &t->ncmds);
	if (!n || t->slots > SPYRE_JOB_MAX_SLOTS)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%u operations need %u command slots; at most %u", n,
				       t->slots, SPYRE_JOB_MAX_SLOTS);
	t->bytes = calloc(t->slots, SPYRE_CMD_SIZE);
	t->relocs = calloc((size_t)4 * n, sizeof(*t->relocs));
	if (!t->bytes || !t->relocs) {
		spyre_template_free(t);
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a graph");
	}
	/* Relative to 0: every ring-relative address is an offset in the job. */
	encode_job(nodes, n, t->bytes, 0);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t cmd = 3 * i * SPYRE_CMD_SIZE + SPYRE_CMD_OFF_ARGS;

		t->relocs[r++] = cmd;				/* TIMESTAMP t0 */
		t->relocs[r++] = cmd + 2 * SPYRE_CMD_SIZE;	/* TIMESTAMP t1 */
		if (nodes[i].kind == NODE_LAUNCH) {
			t->relocs[r++] = cmd + SPYRE_CMD_SIZE + 8;	/* argument block */
			t->relocs[r++] = cmd + SPYRE_CMD_SIZE + 24;	/* statistics record */
		}
	}
	t->nrelocs = r;
	return SPYRE_SUCCESS;
}

void spyre_template_free(struct spyre_template *t)
{
	free(t->bytes);
	free(t->relocs);
	memset(t, 0, sizeof(*t));
}

void spyre_job_init(struct spyre_job *job)
{
	memset(job, 0, offsetof(struct spyre_job, bos));
	job->nbos = 0;
	job->in_syncobj = 0;
	job->stage = -1;
	job->dtoh_dst = NULL;
	job->dtoh_bytes = 0;
	job->exec = NULL;
	job->event = NULL;
}

spyre_status spyre_job_add_bo(struct spyre_job *job, uint32_t handle)
{
	for (uint32_t i = 0; i < job->nbos; i++)
		if (job->bos[i] == handle)
			return SPYRE_SUCCESS;
	if (job->nbos >= SPYRE_JOB_MAX_BOS - 8)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "a job may use at most %d buffers", SPYRE_JOB_MAX_BOS - 8);
	job->bos[job->nbos++] = handle;
	return SPYRE_SUCCESS;
}

static const char *job_status_text(uint32_t status)
{
	switch (status) {
	case DRM_SPYRE_JOB_STATUS_MMU_FAULT:
		return "MMU fault";
	case DRM_SPYRE_JOB_STATUS_FAILED:
		return "a command failed";
	case DRM_SPYRE_JOB_STATUS_TIMEOUT:
		return "hung; the card was reset";
	case DRM_SPYRE_JOB_STATUS_ABORTED:
		return "aborted (lost to a reset or a failed dependency)";
	default:
		return "did not complete";
	}
}

/* The operation's device addresses: copy source/destination, kernel arguments. */
static uint32_t node_operands(const struct spyre_node *n, uint64_t va[64], uint64_t len[64])
{
	uint32_t count = 0;

	if (n->kind == NODE_COPY) {
		va[0] = n->a0;
		va[1] = n->a1;
		len[0] = len[1] = n->a2;
		count = 2;
	} else if (n->kind == NODE_FILL) {
		va[0] = n->a0;
		len[0] = n->a1;
		count = 1;
	} else if (n->kind == NODE_LAUNCH) {
		count = n->nargs < 64 ? n->nargs : 64;
		for (uint32_t i = 0; i < count; i++) {
			va[i] = n->args[i];
			len[i] = 0;	/* a kernel argument's extent is the kernel's business */
		}
	}
	return count;
}

static const char *operand_name(const struct spyre_node *n, int i, char *buf, size_t size)
{
	if (n->kind == NODE_LAUNCH)
		snprintf(buf, size, "argument %d", i);
	else
		snprintf(buf, size, "%s", n->kind == NODE_FILL || i == 1 ? "destination" : "source");
	return buf;
}

/*
 * The operand the fault hit: a copy's or fill's range holding @addr, else
 * the operand at or nearest below it (a kernel argument's extent is not
 * known); -1 if every operand is above it.
 */
static int fault_operand(const struct spyre_node *n, uint64_t addr)
{
	uint64_t va[64], len[64];
	uint32_t count = node_operands(n, va, len);
	int best = -1;

	for (uint32_t i = 0; i < count; i++)
		if (len[i] && addr >= va[i] && addr - va[i] < len[i])
			return (int)i;
	for (uint32_t i = 0; i < count; i++)
		if (va[i] <= addr && (best < 0 || va[i] > va[best]))
			best = (int)i;
	return best;
}

/*
 * Without the driver's record (a driver before DRM_SPYRE_QUERY_FAULTS):
 * name the operation's first address that no live buffer of the device
 * holds, which is usually it.
 */
static void unmapped_hint(spyre_device *dev, const struct spyre_node *n, char *out, size_t size)
{
	uint64_t va[64], len[64];
	uint32_t count = node_operands(n, va, len);
	char name[32];

	for (uint32_t i = 0; i < count; i++) {
		if (spyre_device_va_mapped(dev, va[i]))
			continue;
		snprintf(out, size, "; %s = 0x%llx is in no live buffer (a guess: the driver "
			 "did not report the address)",
			 operand_name(n, (int)i, name, sizeof(name)), (unsigned long long)va[i]);
		return;
	}
}

/* The driver's record of the MMU fault of job @job_id on @queue of this file. */
static int driver_fault(spyre_device *dev, uint32_t queue, uint64_t job_id,
			struct drm_spyre_fault *out)
{
	struct drm_spyre_faults fl;
	struct drm_spyre_query q;

	memset(&q, 0, sizeof(q));
	memset(&fl, 0, sizeof(fl));
	q.param = DRM_SPYRE_QUERY_FAULTS;
	q.size = sizeof(fl);
	q.data = (uintptr_t)&fl;
	if (spyre_ioctl(dev->fd, DRM_IOCTL_SPYRE_QUERY, &q))
		return 0;	/* an older driver */
	for (uint32_t i = fl.num_faults; i > 0 && i <= DRM_SPYRE_MAX_FAULTS; i--) {
		if (fl.faults[i - 1].job_id == job_id && fl.faults[i - 1].queue == queue) {
			*out = fl.faults[i - 1];
			return 1;
		}
	}
	return 0;
}

static const char *reason_text(uint32_t reason)
{
	switch (reason) {
	case DRM_SPYRE_FAULT_REASON_NOT_PRESENT:
		return "nothing mapped there";
	case DRM_SPYRE_FAULT_REASON_PERMISSION:
		return "the buffer is read-only";
	case DRM_SPYRE_FAULT_REASON_BAD_ENTRY:
		return "bad page table entry";
	case DRM_SPYRE_FAULT_REASON_TABLE_FETCH:
		return "page table unreadable";
	case DRM_SPYRE_FAULT_REASON_NO_CONTEXT:
		return "no address space";
	default:
		return "unknown reason";
	}
}

/* The card's fault record in words, and which operand it hit. */
static void fault_text(const struct spyre_node *n, const struct drm_spyre_fault *f, char *out,
		       size_t size)
{
	int op = fault_operand(n, f->device_addr);
	char name[32], where[96] = "";

	if (op >= 0) {
		uint64_t va[64], len[64];

		node_operands(n, va, len);
		snprintf(where, sizeof(where), " (%s = 0x%llx, +0x%llx)",
			 operand_name(n, op, name, sizeof(name)), (unsigned long long)va[op],
			 (unsigned long long)(f->device_addr - va[op]));
	}
	snprintf(out, size, "; the card faulted on a %s of 0x%llx%s: %s%s",
		 f->access == DRM_SPYRE_FAULT_ACCESS_WRITE ? "write" : "read",
		 (unsigned long long)f->device_addr, where, reason_text(f->reason),
		 (f->flags & DRM_SPYRE_FAULT_MORE) ? " (and more faults after it)" : "");
}

/* Record the stream's first async fault, at node @n of retired job @c. */
static void stream_fault(spyre_stream *s, const struct spyre_node *n,
			 const struct spyre_completion *c)
{
	struct drm_spyre_bo_wait w;
	struct drm_spyre_fault f;
	spyre_device *dev = s->obj.dev;
	spyre_fault_info *info = &s->fault_info;
	char hint[256] = "", what[64];
	spyre_status st;

	memset(&w, 0, sizeof(w));
	w.handle = s->ring.handle;
	w.timeout_ns = 0;	/* the job has retired: no waiting */
	if (spyre_ioctl(dev->fd, DRM_IOCTL_SPYRE_BO_WAIT, &w))
		w.job_status = DRM_SPYRE_JOB_STATUS_FAILED;
	st = w.job_status == DRM_SPYRE_JOB_STATUS_TIMEOUT ? SPYRE_ERROR_TIMEOUT :
							     SPYRE_ERROR_DEVICE_FAULT;
	if (w.job_status != DRM_SPYRE_JOB_STATUS_ABORTED)
		atomic_store(&dev->lost, 1);
	if (s->fault != SPYRE_SUCCESS)
		return;
	s->fault = st;
	memset(info, 0, sizeof(*info));
	info->status = st;
	info->job_status = w.job_status;
	info->job = c->point;
	info->driver_job_id = c->job_id;
	info->queue = s->queue;
	info->operand = -1;
	snprintf(info->operation, sizeof(info->operation), "%s", n->name ? n->name : "operation");
	if (w.job_status == DRM_SPYRE_JOB_STATUS_MMU_FAULT) {
		if (driver_fault(dev, s->queue, c->job_id, &f)) {
			info->address_known = 1;
			info->address = f.device_addr;
			info->access = (spyre_fault_access)f.access;
			info->reason = (spyre_fault_reason)f.reason;
			info->more = !!(f.flags & DRM_SPYRE_FAULT_MORE);
			info->operand = fault_operand(n, f.device_addr);
			fault_text(n, &f, hint, sizeof(hint));
		} else {
			unmapped_hint(dev, n, hint, sizeof(hint));
		}
	}
	if (n->kind == NODE_COPY || n->kind == NODE_FILL)
		snprintf(what, sizeof(what), "%s of %llu bytes", n->name ? n->name : "copy",
			 (unsigned long long)n->bytes);
	else
		snprintf(what, sizeof(what), "%s", n->name ? n->name : "operation");
	snprintf(s->fault_detail, sizeof(s->fault_detail),
		 "%s: stream %u, job %llu: %s failed on the card: %s (job status %u)%s",
		 dev->props.devnode, s->trace_tid, (unsigned long long)c->point, what,
		 job_status_text(w.job_status), w.job_status, hint);
	spyre_log(SPYRE_LOG_ERROR, "%s", s->fault_detail);
}

/* Drop what a job's record holds: its nodes' kernels or its graph exec. */
static void release(struct spyre_completion *c)
{
	if (c->exec) {
		spyre_exec_put(c->exec);
	} else {
		for (uint32_t i = 0; i < c->nnodes; i++) {
			if (c->nodes[i].kernel)
				spyre_kernel_put(c->nodes[i].kernel);
			/* Only launches set op_prof (other nodes may leave it unset). */
			if (c->nodes[i].kind == NODE_LAUNCH && c->nodes[i].op_prof)
				spyre_op_prof_put(c->nodes[i].op_prof);
		}
		free(c->nodes);
	}
}

/* Host side of a retired job. */
static void complete(spyre_stream *s, struct spyre_completion *c)
{
	spyre_device *dev = s->obj.dev;
	uint8_t *data = (uint8_t *)s->ring.map + ((size_t)c->slot + c->ncmds) * SPYRE_CMD_SIZE;
	uint32_t nprof = 0, nexec = 0;
	int trace = spyre_trace_enabled();
	/* A replay's profiles go straight into its exec, under one lock. */
	spyre_launch_profile *eprof = c->exec ? spyre_exec_retire_begin(c->exec, &nexec) : NULL;
	int failed = 0;

	for (uint32_t i = 0; i < c->nnodes; i++) {
		const struct spyre_node *n = &c->nodes[i];
		uint64_t t0 = load_le64(data), t1 = load_le64(data + 8);

		if (!failed && !t1) {
			stream_fault(s, n, c);
			failed = 1;
		}
		if (!failed && n->kind == NODE_LAUNCH) {
			uint64_t stats[SPYRE_STATS_WORDS];
			const uint8_t *sp = data + SPYRE_CMD_SIZE +
					    (size_t)args_slots(n->nargs) * SPYRE_CMD_SIZE;
			spyre_launch_profile local;
			spyre_launch_profile *p = eprof && nprof < nexec ? &eprof[nprof] : &local;

			for (int w = 0; w < SPYRE_STATS_WORDS; w++)
				stats[w] = load_le64(sp + 8 * w);
			spyre_profile_from_stats(p, stats);
			p->start_ns = t0;
			p->end_ns = t1;
			if (n->profile)
				*n->profile = *p;
			if (n->op_prof)
				spyre_op_prof_add(n->op_prof, p);
			if (n->kernel)
				spyre_kernel_record_profile(n->kernel, p);
			nprof++;
			if (trace)
				spyre_trace_launch_cores(dev->trace_pid, n->name, t0, p);
		}
		if (!failed && trace && n->kind != NODE_MARK)
			spyre_trace_slice(dev->trace_pid, s->trace_tid, n->name,
					  n->kind == NODE_LAUNCH ? "launch" : "copy", t0, t1,
					  n->bytes);
		data += (size_t)spyre_node_data_slots(n) * SPYRE_CMD_SIZE;
	}
	if (eprof)
		spyre_exec_retire_end(c->exec, nprof < nexec ? nprof : nexec);
	if (c->dtoh_dst && !failed)
		memcpy(c->dtoh_dst, s->stage[c->stage].bo.map, c->dtoh_bytes);
	if (c->stage >= 0)
		s->stage[c->stage].pending = 0;
	release(c);
}

/* Run the host side of every job the card has finished (under s->lock). */
static void retire_locked(spyre_stream *s)
{
	uint64_t done = 0;
	struct spyre_completion *c;

	if (s->retired == s->submitted)
		return;
	if (drmSyncobjQuery(s->obj.dev->fd, &s->syncobj, &done, 1))
		return;
	while ((c = s->pending_head) && c->point <= done) {
		s->pending_head = c->next;
		if (!s->pending_head)
			s->pending_tail = NULL;
		complete(s, c);
		s->retired = c->point;
		free(c);
	}
}

static spyre_status wait_timeline(spyre_stream *s, uint64_t point)
{
	int ret;

	if (point <= s->retired)
		return SPYRE_SUCCESS;
	ret = drmSyncobjTimelineWait(s->obj.dev->fd, &s->syncobj, &point, 1, INT64_MAX,
				     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, NULL);
	if (ret)
		return spyre_set_error(spyre_status_from_errno(errno),
				       "waiting for stream %u point %llu: %s", s->trace_tid,
				       (unsigned long long)point, strerror(errno));
	return SPYRE_SUCCESS;
}

/* Wait for @point with the lock held, then retire. */
static spyre_status wait_locked(spyre_stream *s, uint64_t point)
{
	spyre_status st = wait_timeline(s, point);

	retire_locked(s);
	return st;
}

static spyre_status fault_status(spyre_stream *s)
{
	if (s->fault != SPYRE_SUCCESS)
		return spyre_set_error(s->fault, "%s", s->fault_detail);
	return SPYRE_SUCCESS;
}

spyre_status spyre_stream_wait_point(spyre_stream *s, uint64_t point)
{
	spyre_status st;

	st = wait_timeline(s, point);
	pthread_mutex_lock(&s->lock);
	retire_locked(s);
	if (st == SPYRE_SUCCESS)
		st = fault_status(s);
	pthread_mutex_unlock(&s->lock);
	return st;
}

spyre_status spyre_stream_enter(spyre_stream *s, int capture_ok)
{
	if (s->capture && !capture_ok)
		return spyre_set_error(SPYRE_ERROR_CAPTURE,
				       "stream %u is capturing a graph; this operation cannot be "
				       "captured", s->trace_tid);
	if (!s->capture)
		return spyre_device_check_alive(s->obj.dev);
	return SPYRE_SUCCESS;
}

/* Staging buffers grow with the copies: a power of two from 64 KiB to 8 MiB. */
static uint64_t stage_size(uint64_t bytes)
{
	uint64_t size = SPYRE_STAGE_MIN;

	while (size < bytes && size < SPYRE_STAGE_BYTES)
		size <<= 1;
	return size;
}

spyre_status spyre_stream_get_stage(spyre_stream *s, uint64_t bytes, int *index)
{
	spyre_status st;

	for (;;) {
		int empty = -1, small = -1, oldest = -1;

		retire_locked(s);
		for (int i = 0; i < SPYRE_STAGE_COUNT; i++) {
			struct spyre_stage *g = &s->stage[i];

			if (!g->bo.handle) {
				if (empty < 0)
					empty = i;
				continue;
			}
			if (g->pending || g->busy_until > s->retired) {
				if (oldest < 0 || g->busy_until < s->stage[oldest].busy_until)
					oldest = i;
				continue;
			}
			if (g->bo.size >= bytes) {
				*index = i;
				return SPYRE_SUCCESS;
			}
			small = i;
		}
		if (small >= 0) {
			/* An idle one too small for this copy: replace it. */
			spyre_bo_destroy(s->obj.dev, &s->stage[small].bo);
			empty = small;
		}
		if (empty >= 0) {
			st = spyre_bo_create(s->obj.dev, stage_size(bytes), 0, &s->stage[empty].bo);
			if (st != SPYRE_SUCCESS)
				return st;
			s->stage[empty].busy_until = 0;
			s->stage[empty].pending = 0;
			*index = empty;
			return SPYRE_SUCCESS;
		}
		st = wait_locked(s, s->stage[oldest].busy_until);
		if (st != SPYRE_SUCCESS)
			return st;
	}
}

spyre_status spyre_stream_submit(spyre_stream *s, struct spyre_job *job, uint64_t *point)
{
	spyre_device *dev = s->obj.dev;
	uint32_t ncmds, total, pos, bos[SPYRE_JOB_MAX_BOS];
	uint64_t need = 0, pt;
	struct drm_spyre_submit sub;
	struct spyre_completion *c;
	uint8_t *base;
	int ret;

	if (job->tmpl) {
		total = job->tmpl->slots;
		ncmds = job->tmpl->ncmds;
	} else {
		total = job_slots(job->nodes, job->nnodes, &ncmds);
	}
	if (!job->nnodes || total > SPYRE_JOB_MAX_SLOTS)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "a job of %u operations needs %u command slots; at most %u",
				       job->nnodes, total, SPYRE_JOB_MAX_SLOTS);
	c = calloc(1, sizeof(*c));
	if (!c)
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a job");

	/* Ring space: wrap rather than split; wait for the jobs that used it. */
	if (s->ring_pos + total > SPYRE_RING_SLOTS)
		s->ring_pos = 0;
	pos = s->ring_pos;
	for (uint32_t i = pos; i < pos + total; i++)
		if (s->slot_point[i] > need)
			need = s->slot_point[i];
	if (need > s->retired) {
		spyre_status st = wait_locked(s, need);

		if (st != SPYRE_SUCCESS) {
			free(c);
			return st;
		}
	}

	base = (uint8_t *)s->ring.map + (size_t)pos * SPYRE_CMD_SIZE;
	if (job->tmpl) {
		uint64_t va = s->ring.va + (uint64_t)pos * SPYRE_CMD_SIZE;

		memcpy(base, job->tmpl->bytes, (size_t)total * SPYRE_CMD_SIZE);
		for (uint32_t i = 0; i < job->tmpl->nrelocs; i++)
			add_le64(base + job->tmpl->relocs[i], va);
	} else {
		encode_job(job->nodes, job->nnodes, base,
			   s->ring.va + (uint64_t)pos * SPYRE_CMD_SIZE);
	}

	memcpy(bos, job->bos, job->nbos * sizeof(bos[0]));
	{
		struct spyre_job tmp;
		uint32_t n = job->nbos;

		/* Ring and staging buffer join the list once. */
		tmp.nbos = 0;
		for (uint32_t i = 0; i < n; i++)
			tmp.bos[tmp.nbos++] = bos[i];
		spyre_job_add_bo(&tmp, s->ring.handle);
		if (job->stage >= 0)
			spyre_job_add_bo(&tmp, s->stage[job->stage].bo.handle);
		memcpy(bos, tmp.bos, tmp.nbos * sizeof(bos[0]));
		n = tmp.nbos;
		memset(&sub, 0, sizeof(sub));
		sub.bo_count = n;
	}
	pt = s->submitted + 1;
	sub.queue = s->queue;
	sub.commands = s->ring.va + (uint64_t)pos * SPYRE_CMD_SIZE;
	sub.command_count = ncmds;
	sub.bo_handles = (uintptr_t)bos;
	sub.in_syncobjs = job->in_syncobj ? (uintptr_t)&job->in_syncobj : 0;
	sub.in_syncobj_count = job->in_syncobj ? 1 : 0;
	sub.out_syncobj = s->syncobj;
	sub.out_syncobj_point = pt;
	ret = spyre_ioctl(dev->fd, DRM_IOCTL_SPYRE_SUBMIT, &sub);
	if (ret) {
		free(c);
		if (ret == -ECANCELED) {
			atomic_store(&dev->lost, 1);
			return spyre_device_check_alive(dev);
		}
		return spyre_set_error(spyre_status_from_errno(-ret), "%s: submit: %s",
				       dev->props.devnode, strerror(-ret));
	}
	s->submitted = pt;
	for (uint32_t i = pos; i < pos + total; i++)
		s->slot_point[i] = pt;
	s->ring_pos = pos + total;

	c->point = pt;
	c->job_id = sub.job_id;
	c->slot = pos;
	c->ncmds = ncmds;
	c->nnodes = job->nnodes;
	c->stage = job->stage;
	c->dtoh_dst = job->dtoh_dst;
	c->dtoh_bytes = job->dtoh_bytes;
	c->exec = job->exec;
	if (job->exec) {
		c->nodes = job->nodes;	/* the exec's, kept alive by its reference */
	} else {
		c->nodes = malloc(sizeof(*c->nodes) * job->nnodes);
		if (!c->nodes) {
			/* Submitted: wait so nothing is lost, then drop the refs. */
			wait_timeline(s, pt);
			for (uint32_t i = 0; i < job->nnodes; i++) {
				if (job->nodes[i].kernel)
					spyre_kernel_put(job->nodes[i].kernel);
				if (job->nodes[i].kind == NODE_LAUNCH && job->nodes[i].op_prof)
					spyre_op_prof_put(job->nodes[i].op_prof);
			}
			c->nnodes = 0;
		} else {
			memcpy(c->nodes, job->nodes, sizeof(*c->nodes) * job->nnodes);
		}
	}
	if (job->stage >= 0) {
		s->stage[job->stage].busy_until = pt;
		s->stage[job->stage].pending = job->dtoh_dst != NULL;
	}
	if (s->pending_tail)
		s->pending_tail->next = c;
	else
		s->pending_head = c;
	s->pending_tail = c;
	spyre_log(SPYRE_LOG_DEBUG, "stream %u: job %llu, %u operations, queue %u", s->trace_tid,
		  (unsigned long long)pt, job->nnodes, s->queue);
	if (point)
		*point = pt;
	if (job->event &&
	    drmSyncobjTransfer(dev->fd, job->event->syncobj, 0, s->syncobj, pt, 0))
		/* The timestamp job runs, but the event cannot be waited for. */
		return spyre_set_error(spyre_status_from_errno(errno),
				       "event record: moving the job's fence into the event: %s",
				       strerror(errno));
	return SPYRE_SUCCESS;
}

static atomic_uint next_tid = 1;

spyre_status spyre_stream_new(spyre_device *dev, int priority, int internal, spyre_stream **out)
{
	spyre_stream *s = calloc(1, sizeof(*s));
	spyre_status st;
	char name[48];

	if (!s)
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a stream");
	s->obj.dev = dev;
	s->queue = (uint32_t)priority;
	s->internal = internal;
	s->trace_tid = atomic_fetch_add(&next_tid, 1);
	s->slot_point = calloc(SPYRE_RING_SLOTS, sizeof(*s->slot_point));
	if (!s->slot_point) {
		free(s);
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a stream");
	}
	if (drmSyncobjCreate(dev->fd, 0, &s->syncobj)) {
		st = spyre_set_error(spyre_status_from_errno(errno), "%s: syncobj: %s",
				     dev->props.devnode, strerror(errno));
		free(s->slot_point);
		free(s);
		return st;
	}
	st = spyre_bo_create(dev, (uint64_t)SPYRE_RING_SLOTS * SPYRE_CMD_SIZE, 0, &s->ring);
	if (st != SPYRE_SUCCESS) {
		drmSyncobjDestroy(dev->fd, s->syncobj);
		free(s->slot_point);
		free(s);
		return st;
	}
	pthread_mutex_init(&s->lock, NULL);
	if (spyre_trace_enabled()) {
		snprintf(name, sizeof(name), "%s %u (queue %u)", internal ? "blocking" : "stream",
			 s->trace_tid, s->queue);
		spyre_trace_name_track(dev->trace_pid, s->trace_tid, name);
	}
	*out = s;
	return SPYRE_SUCCESS;
}

/* Wait for everything, run the host side, release the stream's resources. */
void spyre_stream_free(spyre_stream *s)
{
	spyre_device *dev = s->obj.dev;

	pthread_mutex_lock(&s->lock);
	wait_timeline(s, s->submitted);
	retire_locked(s);
	/* Jobs the card never signalled (only if waiting failed): drop them. */
	while (s->pending_head) {
		struct spyre_completion *c = s->pending_head;

		s->pending_head = c->next;
		release(c);
		free(c);
	}
	if (s->capture)
		spyre_graph_free_captured(s->capture);
	pthread_mutex_unlock(&s->lock);
	for (int i = 0; i < SPYRE_STAGE_COUNT; i++)
		if (s->stage[i].bo.handle)
			spyre_bo_destroy(dev, &s->stage[i].bo);
	spyre_bo_destroy(dev, &s->ring);
	drmSyncobjDestroy(dev->fd, s->syncobj);
	pthread_mutex_destroy(&s->lock);
	free(s->slot_point);
	free(s);
}

SPYRE_EXPORT spyre_status spyre_stream_create(spyre_device *dev, int priority, spyre_stream **s)
{
	spyre_status st;

	if (!s)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "stream pointer is NULL");
	*s = NULL;
	if (!dev)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "device is NULL");
	if (!spyre_handle_live(&dev->objects, SPYRE_KIND_DEVICE, 0))
		return spyre_set_error(SPYRE_ERROR_INVALID_HANDLE, "device %p is not open",
				       (void *)dev);
	if (priority < 0 || priority >= DRM_SPYRE_NUM_QUEUES)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "priority %d is not 0 .. %d", priority,
				       DRM_SPYRE_NUM_QUEUES - 1);
	st = spyre_device_check_alive(dev);
	if (st == SPYRE_SUCCESS)
		st = spyre_stream_new(dev, priority, 0, s);
	if (st != SPYRE_SUCCESS)
		return st;
	spyre_device_link(dev, &(*s)->obj, SPYRE_KIND_STREAM);
	return spyre_done(SPYRE_SUCCESS);
}

SPYRE_EXPORT spyre_status spyre_stream_destroy(spyre_stream *s)
{
	spyre_status st;

	if (!s)
		return spyre_done(SPYRE_SUCCESS);
	st = spyre_handle_check(s, SPYRE_KIND_STREAM, "stream");
	if (st != SPYRE_SUCCESS)
		return st;
	spyre_device_unlink(&s->obj);
	pthread_mutex_lock(&s->lock);
	wait_timeline(s, s->submitted);
	retire_locked(s);
	st = fault_status(s);
	pthread_mutex_unlock(&s->lock);
	spyre_stream_free(s);
	return spyre_done(st);
}

SPYRE_EXPORT spyre_status spyre_stream_synchronize(spyre_stream *s)
{
	spyre_status st = spyre_handle_check(s, SPYRE_KIND_STREAM, "stream");
	uint64_t pt;

	if (st != SPYRE_SUCCESS)
		return st;
	pthread_mutex_lock(&s->lock);
	st = s->capture ? spyre_stream_enter(s, 0) : SPYRE_SUCCESS;
	pt = s->submitted;
	pthread_mutex_unlock(&s->lock);
	if (st != SPYRE_SUCCESS)
		return st;
	return spyre_done(spyre_stream_wait_point(s, pt));
}

SPYRE_EXPORT spyre_status spyre_stream_query(spyre_stream *s)
{
	spyre_status st = spyre_handle_check(s, SPYRE_KIND_STREAM, "stream");

	if (st != SPYRE_SUCCESS)
		return st;
	pthread_mutex_lock(&s->lock);
	st = s->capture ? spyre_stream_enter(s, 0) : SPYRE_SUCCESS;
	if (st == SPYRE_SUCCESS) {
		retire_locked(s);
		st = fault_status(s);
	}
	if (st == SPYRE_SUCCESS && s->retired < s->submitted)
		st = spyre_set_error(SPYRE_ERROR_NOT_READY, "stream %u: %llu of %llu jobs done",
				     s->trace_tid, (unsigned long long)s->retired,
				     (unsigned long long)s->submitted);
	pthread_mutex_unlock(&s->lock);
	return spyre_done(st);
}

SPYRE_EXPORT spyre_status spyre_stream_get_fault(spyre_stream *s, spyre_fault_info *info)
{
	spyre_status st = spyre_handle_check(s, SPYRE_KIND_STREAM, "stream");

	if (st != SPYRE_SUCCESS)
		return st;
	if (!info)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "info is NULL");
	pthread_mutex_lock(&s->lock);
	retire_locked(s);
	if (s->fault != SPYRE_SUCCESS) {
		*info = s->fault_info;
	} else {
		memset(info, 0, sizeof(*info));
		info->operand = -1;
		info->queue = s->queue;
	}
	pthread_mutex_unlock(&s->lock);
	return spyre_done(SPYRE_SUCCESS);
}

SPYRE_EXPORT spyre_device *spyre_stream_device(const spyre_stream *s)
{
	return spyre_handle_live(s, SPYRE_KIND_STREAM, 0) ? s->obj.dev : NULL;
}
