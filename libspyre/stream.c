// SPDX-License-Identifier: MIT
/*
 * Streams: each is a timeline syncobj (point n = its n-th job finished), a
 * command ring in a pinned host buffer, staging buffers for pageable copies
 * and a list of jobs whose host side (deferred copies, profiles, traces,
 * fault checks) runs when they retire.
 *
 * A job is one SUBMIT: its commands sit in ring slots (or in a graph
 * exec's own buffer, placed once) followed by data slots (encode.h).
 * Every node is timed by the card, and t1 != 0 proves it ran: the first
 * node whose t1 stayed 0 is the one that failed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xf86drm.h>

#include "device.h"
#include "error.h"
#include "fault.h"
#include "spyre_cmd.h"
#include "stream.h"
#include "trace.h"

/* A submitted job, until its host side has run. */
struct spyre_completion {
	struct spyre_completion *next;
	uint64_t point;
	uint64_t job_id;		/* SUBMIT's, to find the job's fault record */
	uint32_t slot;			/* first ring slot of the job */
	uint32_t ncmds;
	struct spyre_placed *placed;	/* the job's own buffer (set free at retire), or NULL */
	struct spyre_node *nodes;	/* a copy, unless the owner holds them */
	uint32_t nnodes;
	int stage;
	void *dtoh_dst;
	uint64_t dtoh_bytes;
	struct spyre_owner owner;
};

void spyre_submission_init(struct spyre_submission *sub)
{
	/* Not the handle array: it is read only up to its count. */
	sub->nodes = NULL;
	sub->nnodes = 0;
	sub->tmpl = NULL;
	sub->placed = NULL;
	sub->bos.count = 0;
	sub->uses = NULL;
	sub->nuses = 0;
	sub->in_syncobj = 0;
	sub->signal_syncobj = 0;
	sub->stage = -1;
	sub->dtoh_dst = NULL;
	sub->dtoh_bytes = 0;
	sub->owner = (struct spyre_owner){ NULL, NULL };
}

/* Drop what a submission's nodes and owner hold. */
static void submission_release(const struct spyre_submission *sub)
{
	if (sub->placed)
		atomic_store(&sub->placed->busy, 0);
	if (sub->owner.ops) {
		spyre_owner_put(&sub->owner);
		return;
	}
	for (uint32_t i = 0; i < sub->nnodes; i++)
		spyre_node_put(&sub->nodes[i]);
}

/* ---- retire ---- */

static void completion_release(struct spyre_completion *c)
{
	if (c->placed)
		atomic_store(&c->placed->busy, 0);
	if (c->owner.ops) {
		spyre_owner_put(&c->owner);
		return;
	}
	for (uint32_t i = 0; i < c->nnodes; i++)
		spyre_node_put(&c->nodes[i]);
	free(c->nodes);
}

static void owner_launch_retired(const struct spyre_owner *o, uint32_t index,
				 const spyre_launch_profile *p)
{
	if (o->ops && o->ops->launch_retired)
		o->ops->launch_retired(o->ctx, index, p);
}

/* Record the stream's first async fault: node @unfinished of job @c did not end. */
static void stream_fault(spyre_stream *s, uint32_t unfinished, const struct spyre_completion *c)
{
	spyre_device *dev = s->obj.dev;
	/* The job has retired: its status is final. */
	uint32_t status = spyre_driver_job_status(dev, s->ring.handle);
	struct spyre_fault_site site = {
		.queue = s->queue, .stream_tid = s->trace_tid, .point = c->point,
		.job_id = c->job_id, .nodes = c->nodes, .nnodes = c->nnodes,
		.unfinished = unfinished,
	};

	if (status != DRM_SPYRE_JOB_STATUS_ABORTED)
		atomic_store(&dev->lost, 1);
	if (s->fault != SPYRE_SUCCESS)
		return;
	spyre_fault_explain(dev, &site, status, &s->fault_info, s->fault_detail,
			    sizeof(s->fault_detail));
	s->fault = s->fault_info.status;
	spyre_log(SPYRE_LOG_ERROR, "%s", s->fault_detail);
}

/* A launch that ran: its statistics to whoever waits for them. */
static void retire_launch(spyre_stream *s, const struct spyre_completion *c,
			  const struct spyre_node *n, const uint8_t *data, uint32_t index)
{
	const uint8_t *sp = data + spyre_node_stats_offset(n);
	uint64_t stats[SPYRE_STATS_WORDS];
	spyre_launch_profile p;

	for (int w = 0; w < SPYRE_STATS_WORDS; w++)
		stats[w] = spyre_get_le64(sp + 8 * w);
	spyre_profile_from_stats(&p, stats);
	p.start_ns = spyre_get_le64(data);
	p.end_ns = spyre_get_le64(data + 8);
	owner_launch_retired(&n->program, index, &p);
	owner_launch_retired(&n->caller, index, &p);
	owner_launch_retired(&c->owner, index, &p);
	if (spyre_trace_enabled())
		spyre_trace_launch(s->obj.dev->trace_pid, s->trace_tid, n->name, &p);
}

/* Host side of a retired job. */
static void complete(spyre_stream *s, struct spyre_completion *c)
{
	const struct spyre_owner *owner = &c->owner;
	uint8_t *data = (uint8_t *)(c->placed ? c->placed->gem.map : s->ring.map) +
			((size_t)c->slot + c->ncmds) * SPYRE_CMD_SIZE;
	uint32_t launches = 0;
	int failed = 0;

	if (owner->ops && owner->ops->retire_begin)
		owner->ops->retire_begin(owner->ctx);
	for (uint32_t i = 0; i < c->nnodes; i++) {
		const struct spyre_node *n = &c->nodes[i];
		uint64_t t0 = spyre_get_le64(data), t1 = spyre_get_le64(data + 8);

		if (!t1) {	/* this node did not finish: the job failed here */
			stream_fault(s, i, c);
			failed = 1;
			break;
		}
		if (n->kind == NODE_LAUNCH)
			retire_launch(s, c, n, data, launches++);
		if ((n->kind == NODE_COPY || n->kind == NODE_COPY_SG || n->kind == NODE_FILL) &&
		    spyre_trace_enabled())
			spyre_trace_slice(s->obj.dev->trace_pid, s->trace_tid, n->name, "copy",
					  t0, t1, n->bytes);
		data += (size_t)spyre_node_data_slots(n) * SPYRE_CMD_SIZE;
	}
	if (owner->ops && owner->ops->retire_end)
		owner->ops->retire_end(owner->ctx, launches);
	if (c->dtoh_dst && !failed)
		memcpy(c->dtoh_dst, s->stage[c->stage].gem.map, c->dtoh_bytes);
	if (c->stage >= 0)
		s->stage[c->stage].pending = 0;
	completion_release(c);
}

/* Run the host side of every job up to timeline point @done (under s->lock). */
static void retire_through(spyre_stream *s, uint64_t done)
{
	struct spyre_completion *c;

	while ((c = s->pending_head) && c->point <= done) {
		s->pending_head = c->next;
		if (!s->pending_head)
			s->pending_tail = NULL;
		complete(s, c);
		s->retired = c->point;
		free(c);
	}
}

/* Run the host side of every job the card has finished (under s->lock). */
static void retire_locked(spyre_stream *s)
{
	uint64_t done = 0;

	if (s->retired == s->submitted)
		return;
	if (drmSyncobjQuery(s->obj.dev->fd, &s->syncobj, &done, 1))
		return;
	retire_through(s, done);
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

/*
 * After a wait for @point: a successful one already says the jobs up to it
 * have finished, so retiring them needs no query ioctl (one syscall less a
 * synchronize); after a failed one, retire what the card has finished.
 */
static void retire_after_wait(spyre_stream *s, spyre_status waited, uint64_t point)
{
	if (waited == SPYRE_SUCCESS)
		retire_through(s, point);
	else
		retire_locked(s);
}

/* Wait for @point with the lock held, then retire. */
static spyre_status wait_locked(spyre_stream *s, uint64_t point)
{
	spyre_status st = wait_timeline(s, point);

	retire_after_wait(s, st, point);
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
	retire_after_wait(s, st, point);
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

			if (!g->gem.handle) {
				if (empty < 0)
					empty = i;
				continue;
			}
			if (g->pending || g->busy_until > s->retired) {
				if (oldest < 0 || g->busy_until < s->stage[oldest].busy_until)
					oldest = i;
				continue;
			}
			if (g->gem.size >= bytes) {
				*index = i;
				return SPYRE_SUCCESS;
			}
			small = i;
		}
		if (small >= 0) {
			/* An idle one too small for this copy: replace it. */
			spyre_gem_destroy(s->obj.dev, &s->stage[small].gem);
			empty = small;
		}
		if (empty >= 0) {
			st = spyre_gem_create(s->obj.dev, stage_size(bytes), 0, &s->stage[empty].gem);
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


/* ---- submit ---- */

/* The record of @sub's job, holding its nodes' references from now on. */
static struct spyre_completion *completion_new(const struct spyre_submission *sub)
{
	struct spyre_completion *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->nnodes = sub->nnodes;
	c->stage = sub->stage;
	c->dtoh_dst = sub->dtoh_dst;
	c->dtoh_bytes = sub->dtoh_bytes;
	c->owner = sub->owner;
	if (sub->owner.ops) {
		c->nodes = (struct spyre_node *)sub->nodes;	/* kept alive by the owner */
		return c;
	}
	c->nodes = malloc(sizeof(*c->nodes) * sub->nnodes);
	if (!c->nodes) {
		free(c);
		return NULL;
	}
	memcpy(c->nodes, sub->nodes, sizeof(*c->nodes) * sub->nnodes);
	for (uint32_t i = 0; i < c->nnodes; i++)
		c->nodes[i].sg = NULL;	/* the caller's list: encoded, not kept */
	return c;
}

/* @total ring slots at *pos: wrap rather than split; wait for the jobs that used them. */
static spyre_status ring_reserve(spyre_stream *s, uint32_t total, uint32_t *pos)
{
	uint64_t need = 0;

	if (s->ring_pos + total > SPYRE_RING_SLOTS)
		s->ring_pos = 0;
	*pos = s->ring_pos;
	for (uint32_t i = *pos; i < *pos + total; i++)
		if (s->slot_point[i] > need)
			need = s->slot_point[i];
	return need > s->retired ? wait_locked(s, need) : SPYRE_SUCCESS;
}

/*
 * A placed job's timestamps back to 0 (a node whose t1 stays 0 did not
 * run); the rest of its slots are the same every time.
 */
static void placed_reset(const struct spyre_submission *sub)
{
	uint8_t *data = (uint8_t *)sub->placed->gem.map + (size_t)sub->tmpl->ncmds * SPYRE_CMD_SIZE;

	for (uint32_t i = 0; i < sub->nnodes; i++) {
		memset(data, 0, 16);
		data += (size_t)spyre_node_data_slots(&sub->nodes[i]) * SPYRE_CMD_SIZE;
	}
}

static void ring_write(spyre_stream *s, const struct spyre_submission *sub, uint32_t pos)
{
	uint8_t *base = (uint8_t *)s->ring.map + (size_t)pos * SPYRE_CMD_SIZE;
	uint64_t va = s->ring.va + (uint64_t)pos * SPYRE_CMD_SIZE;

	if (sub->tmpl)
		spyre_template_place(sub->tmpl, base, va);
	else
		spyre_job_encode(sub->nodes, sub->nnodes, base, va);
}

/* The SUBMIT ioctl for the job at ring slot @pos, signalling point @pt. */
static spyre_status submit_ioctl(spyre_stream *s, struct spyre_submission *sub, uint32_t pos,
				 uint32_t ncmds, uint64_t pt, uint64_t *job_id)
{
	spyre_device *dev = s->obj.dev;
	struct drm_spyre_submit req;
	int ret;

	/*
	 * The stream's buffers join the list once (the ring always: its last
	 * job's status names a fault), the one holding the commands last: the
	 * driver looks for them there first.
	 */
	if (sub->stage >= 0)
		spyre_bo_list_add_reserved(&sub->bos, s->stage[sub->stage].gem.handle);
	spyre_bo_list_add_reserved(&sub->bos, s->ring.handle);
	if (sub->placed)
		spyre_bo_list_add_reserved(&sub->bos, sub->placed->gem.handle);
	memset(&req, 0, sizeof(req));
	req.queue = s->queue;
	req.commands = sub->placed ? sub->placed->gem.va :
				     s->ring.va + (uint64_t)pos * SPYRE_CMD_SIZE;
	req.command_count = ncmds;
	req.bo_handles = (uintptr_t)sub->bos.handles;
	req.bo_count = sub->bos.count;
	req.in_syncobjs = sub->in_syncobj ? (uintptr_t)&sub->in_syncobj : 0;
	req.in_syncobj_count = sub->in_syncobj ? 1 : 0;
	req.out_syncobj = s->syncobj;
	req.out_syncobj_point = pt;
	ret = spyre_ioctl(dev->fd, DRM_IOCTL_SPYRE_SUBMIT, &req);
	if (ret == -ECANCELED) {
		atomic_store(&dev->lost, 1);
		return spyre_device_check_alive(dev);
	}
	if (ret == -EBUSY)
		return spyre_set_error(SPYRE_ERROR_DRIVER,
				       "%s: submit: this device open already has the driver's limit "
				       "of jobs waiting for the card (module parameter "
				       "max_queued_jobs); synchronize a stream and retry",
				       dev->props.devnode);
	if (ret)
		return spyre_set_error(spyre_status_from_errno(-ret), "%s: submit: %s",
				       dev->props.devnode, strerror(-ret));
	*job_id = req.job_id;
	return SPYRE_SUCCESS;
}

/* The job is on the card: account for its slots, stage and completion. */
static void track(spyre_stream *s, struct spyre_completion *c, uint32_t total)
{
	s->submitted = c->point;
	if (!c->placed) {
		for (uint32_t i = c->slot; i < c->slot + total; i++)
			s->slot_point[i] = c->point;
		s->ring_pos = c->slot + total;
	}
	if (c->stage >= 0) {
		s->stage[c->stage].busy_until = c->point;
		s->stage[c->stage].pending = c->dtoh_dst != NULL;
	}
	if (s->pending_tail)
		s->pending_tail->next = c;
	else
		s->pending_head = c;
	s->pending_tail = c;
}

static spyre_status submit(spyre_stream *s, struct spyre_submission *sub, uint64_t *point)
{
	uint32_t ncmds, total;
	struct spyre_completion *c;
	spyre_status st;

	total = sub->tmpl ? sub->tmpl->slots : spyre_job_slots(sub->nodes, sub->nnodes, &ncmds);
	if (sub->tmpl)
		ncmds = sub->tmpl->ncmds;
	if (!sub->nnodes || total > SPYRE_JOB_MAX_SLOTS) {
		submission_release(sub);
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "a job of %u operations needs %u command slots; at most %u",
				       sub->nnodes, total, SPYRE_JOB_MAX_SLOTS);
	}
	/* Allocated before the job exists, so running out of memory loses nothing. */
	c = completion_new(sub);
	if (!c) {
		submission_release(sub);
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a job");
	}
	c->point = s->submitted + 1;
	c->ncmds = ncmds;
	c->placed = sub->placed;
	if (sub->placed) {
		/* Its slots are its own buffer's: none of the ring's (track() skips them). */
		c->slot = 0;
		placed_reset(sub);
		st = SPYRE_SUCCESS;
	} else {
		st = ring_reserve(s, total, &c->slot);
		if (st == SPYRE_SUCCESS)
			ring_write(s, sub, c->slot);
	}
	if (st == SPYRE_SUCCESS)
		st = submit_ioctl(s, sub, c->slot, ncmds, c->point, &c->job_id);
	if (st != SPYRE_SUCCESS) {
		completion_release(c);
		free(c);
		return st;
	}
	track(s, c, total);
	spyre_log(SPYRE_LOG_DEBUG, "stream %u: job %llu, %u operations, queue %u", s->trace_tid,
		  (unsigned long long)c->point, sub->nnodes, s->queue);
	if (point)
		*point = c->point;
	if (sub->signal_syncobj &&
	    drmSyncobjTransfer(s->obj.dev->fd, sub->signal_syncobj, 0, s->syncobj, c->point, 0))
		/* The job runs, but its fence cannot be waited for there. */
		return spyre_set_error(spyre_status_from_errno(errno),
				       "moving the job's fence into a syncobj: %s", strerror(errno));
	return SPYRE_SUCCESS;
}

spyre_status spyre_stream_queue(spyre_stream *s, struct spyre_submission *sub, uint64_t *point)
{
	spyre_status st;

	if (point)
		*point = 0;
	if (!s->capture)
		return submit(s, sub, point);
	st = s->capture->add(s->capture, sub);	/* takes its own references */
	submission_release(sub);
	return st;
}

static void stream_destroy_obj(struct spyre_obj *obj);

static atomic_uint next_tid = 1;

static spyre_status stream_new(spyre_device *dev, int priority, int internal, spyre_stream **out)
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
	st = spyre_gem_create(dev, (uint64_t)SPYRE_RING_SLOTS * SPYRE_CMD_SIZE, 0, &s->ring);
	if (st != SPYRE_SUCCESS) {
		drmSyncobjDestroy(dev->fd, s->syncobj);
		free(s->slot_point);
		free(s);
		return st;
	}
	pthread_mutex_init(&s->lock, NULL);
	if (spyre_trace_enabled()) {
		static const char *const kinds[] = { "stream", "blocking", "peer" };

		snprintf(name, sizeof(name), "%s %u (queue %u)", kinds[internal], s->trace_tid,
			 s->queue);
		spyre_trace_name_track(dev->trace_pid, s->trace_tid, name);
	}
	*out = s;
	return SPYRE_SUCCESS;
}

/* Wait for everything, run the host side, release the stream's resources. */
static void stream_free(spyre_stream *s)
{
	spyre_device *dev = s->obj.dev;

	pthread_mutex_lock(&s->lock);
	wait_timeline(s, s->submitted);
	retire_locked(s);
	/* Jobs the card never signalled (only if waiting failed): drop them. */
	while (s->pending_head) {
		struct spyre_completion *c = s->pending_head;

		s->pending_head = c->next;
		completion_release(c);
		free(c);
	}
	if (s->capture)
		s->capture->discard(s->capture);
	pthread_mutex_unlock(&s->lock);
	if (s->internal) {
		/* A blocking call after this (a close hook's) makes a new one. */
		pthread_mutex_lock(&dev->lock);
		if (dev->internal == s)
			dev->internal = NULL;
		pthread_mutex_unlock(&dev->lock);
	}
	for (int i = 0; i < SPYRE_STAGE_COUNT; i++)
		spyre_gem_destroy(dev, &s->stage[i].gem);
	spyre_gem_destroy(dev, &s->ring);
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
	st = spyre_device_check(dev);
	if (st != SPYRE_SUCCESS)
		return st;
	if (priority < 0 || priority >= DRM_SPYRE_NUM_QUEUES)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "priority %d is not 0 .. %d", priority,
				       DRM_SPYRE_NUM_QUEUES - 1);
	st = spyre_device_check_alive(dev);
	if (st == SPYRE_SUCCESS)
		st = stream_new(dev, priority, 0, s);
	if (st != SPYRE_SUCCESS)
		return st;
	spyre_device_link(dev, &(*s)->obj, SPYRE_KIND_STREAM, stream_destroy_obj);
	return spyre_done(SPYRE_SUCCESS);
}

SPYRE_EXPORT spyre_status spyre_stream_destroy(spyre_stream *s)
{
	spyre_status st;

	if (!spyre_handle_unlink(s, SPYRE_KIND_STREAM, "stream", &st))
		return st;
	pthread_mutex_lock(&s->lock);
	wait_timeline(s, s->submitted);
	retire_locked(s);
	st = fault_status(s);
	pthread_mutex_unlock(&s->lock);
	stream_free(s);
	return spyre_done(st);
}

static void stream_destroy_obj(struct spyre_obj *obj)
{
	spyre_stream_destroy((spyre_stream *)obj);
}

spyre_status spyre_stream_internal(spyre_device *dev, spyre_stream **s)
{
	spyre_status st = SPYRE_SUCCESS;
	spyre_stream *made = NULL;

	pthread_mutex_lock(&dev->lock);
	if (!dev->internal) {
		st = stream_new(dev, SPYRE_STREAM_PRIORITY_NORMAL, 1, &dev->internal);
		made = dev->internal;
	}
	*s = dev->internal;
	pthread_mutex_unlock(&dev->lock);
	/* Closed with the device's other streams. */
	if (made)
		spyre_device_link(dev, &made->obj, SPYRE_KIND_STREAM, stream_destroy_obj);
	return st;
}

spyre_status spyre_stream_private_new(spyre_device *dev, spyre_stream **s)
{
	return stream_new(dev, SPYRE_STREAM_PRIORITY_NORMAL, 2, s);
}

void spyre_stream_private_free(spyre_stream *s)
{
	if (s)
		stream_free(s);
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

/* The first @size bytes of the stream's fault record (the struct only grows). */
static spyre_status stream_get_fault(spyre_stream *s, spyre_fault_info *info, size_t size)
{
	spyre_status st = spyre_handle_check(s, SPYRE_KIND_STREAM, "stream");
	spyre_fault_info out;

	if (st != SPYRE_SUCCESS)
		return st;
	if (!info)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "info is NULL");
	pthread_mutex_lock(&s->lock);
	retire_locked(s);
	if (s->fault != SPYRE_SUCCESS) {
		out = s->fault_info;
	} else {
		memset(&out, 0, sizeof(out));
		out.operand = -1;
		out.queue = s->queue;
		out.engine_core = out.engine_index = out.engine_stream = -1;
	}
	pthread_mutex_unlock(&s->lock);
	memcpy(info, &out, size);
	return spyre_done(SPYRE_SUCCESS);
}

/*
 * Programs built against 0.2 and 0.3 pass the record as it was then: the
 * fields before card_reported.  The linker picks by the version a program
 * was linked against (libspyre.map).
 */
SPYRE_EXPORT spyre_status spyre_stream_get_fault_v0_2(spyre_stream *s, spyre_fault_info *info)
{
	return stream_get_fault(s, info, offsetof(spyre_fault_info, card_reported));
}
__asm__(".symver spyre_stream_get_fault_v0_2, spyre_stream_get_fault@SPYRE_0.2");

SPYRE_EXPORT spyre_status spyre_stream_get_fault_v0_4(spyre_stream *s, spyre_fault_info *info)
{
	return stream_get_fault(s, info, sizeof(*info));
}
__asm__(".symver spyre_stream_get_fault_v0_4, spyre_stream_get_fault@@SPYRE_0.4");

SPYRE_EXPORT spyre_device *spyre_stream_device(const spyre_stream *s)
{
	return spyre_handle_live(s, SPYRE_KIND_STREAM, 0) ? s->obj.dev : NULL;
}
