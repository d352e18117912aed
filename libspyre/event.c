// SPDX-License-Identifier: MIT
/*
 * Events: a binary syncobj holding the fence of the job that recorded it,
 * and a small pinned buffer the card's TIMESTAMP writes the device time to.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xf86drm.h>

#include "device.h"
#include "error.h"
#include "stream.h"

struct spyre_event {
	struct spyre_obj obj;
	uint32_t syncobj;		/* binary: the last record's fence */
	struct spyre_gem ts;		/* device time written by the record */
	int recorded;
	spyre_stream *stream;		/* recording stream and point */
	uint64_t stream_id, point;
};

static void event_destroy_obj(struct spyre_obj *obj)
{
	spyre_event_destroy((spyre_event *)obj);
}

SPYRE_EXPORT spyre_status spyre_event_create(spyre_device *dev, spyre_event **ev)
{
	spyre_event *e;
	spyre_status st;

	if (!ev)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "event pointer is NULL");
	*ev = NULL;
	st = spyre_device_check(dev);
	if (st != SPYRE_SUCCESS)
		return st;
	e = calloc(1, sizeof(*e));
	if (!e)
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for an event");
	if (drmSyncobjCreate(dev->fd, 0, &e->syncobj)) {
		st = spyre_set_error(spyre_status_from_errno(errno), "syncobj: %s",
				     strerror(errno));
		free(e);
		return st;
	}
	st = spyre_gem_create(dev, 4096, 0, &e->ts);
	if (st != SPYRE_SUCCESS) {
		drmSyncobjDestroy(dev->fd, e->syncobj);
		free(e);
		return st;
	}
	/*
	 * The first CPU write to the timestamp page faults it in (50-170 us
	 * in a guest under TCG): take that here, not in the first record.
	 */
	((volatile uint64_t *)e->ts.map)[0] = 0;
	spyre_device_link(dev, &e->obj, SPYRE_KIND_EVENT, event_destroy_obj);
	*ev = e;
	return spyre_done(SPYRE_SUCCESS);
}

SPYRE_EXPORT spyre_status spyre_event_destroy(spyre_event *ev)
{
	spyre_status st;

	if (!spyre_handle_unlink(ev, SPYRE_KIND_EVENT, "event", &st))
		return st;
	/* A pending record keeps the buffer alive in the driver. */
	spyre_gem_destroy(ev->obj.dev, &ev->ts);
	drmSyncobjDestroy(ev->obj.dev->fd, ev->syncobj);
	free(ev);
	return spyre_done(SPYRE_SUCCESS);
}

static spyre_status check_pair(spyre_event *ev, spyre_stream *s)
{
	spyre_status st = spyre_handle_check(ev, SPYRE_KIND_EVENT, "event");

	if (st == SPYRE_SUCCESS)
		st = spyre_handle_check(s, SPYRE_KIND_STREAM, "stream");
	if (st == SPYRE_SUCCESS && ev->obj.dev != s->obj.dev)
		st = spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				     "the event and the stream belong to different devices");
	return st;
}

SPYRE_EXPORT spyre_status spyre_event_record(spyre_event *ev, spyre_stream *s)
{
	struct spyre_node node = { .kind = NODE_MARK, .name = "event" };
	struct spyre_submission sub;
	spyre_status st = check_pair(ev, s);
	uint64_t point;

	if (st != SPYRE_SUCCESS)
		return st;
	pthread_mutex_lock(&s->lock);
	st = spyre_stream_enter(s, 0);
	if (st == SPYRE_SUCCESS) {
		spyre_submission_init(&sub);
		node.a0 = ev->ts.va;
		sub.nodes = &node;
		sub.nnodes = 1;
		sub.signal_syncobj = ev->syncobj;
		spyre_bo_list_add(&sub.bos, ev->ts.handle, "job");
		((volatile uint64_t *)ev->ts.map)[0] = 0;
		st = spyre_stream_queue(s, &sub, &point);
	}
	/* Not recorded unless its syncobj holds the new fence. */
	if (st == SPYRE_SUCCESS) {
		ev->recorded = 1;
		ev->stream = s;
		ev->stream_id = s->obj.id;
		ev->point = point;
	}
	pthread_mutex_unlock(&s->lock);
	return spyre_done(st);
}

SPYRE_EXPORT spyre_status spyre_stream_wait_event(spyre_stream *s, spyre_event *ev)
{
	struct spyre_node node = { .kind = NODE_MARK, .name = "wait" };
	struct spyre_submission sub;
	spyre_status st = check_pair(ev, s);

	if (st != SPYRE_SUCCESS)
		return st;
	pthread_mutex_lock(&s->lock);
	st = spyre_stream_enter(s, 0);
	if (st == SPYRE_SUCCESS && ev->recorded) {
		spyre_submission_init(&sub);
		sub.nodes = &node;
		sub.nnodes = 1;
		sub.in_syncobj = ev->syncobj;
		st = spyre_stream_queue(s, &sub, NULL);
	}
	pthread_mutex_unlock(&s->lock);
	return spyre_done(st);
}

/* 1 if signalled, 0 if not (timeout_abs 0: just look), or a negative errno. */
static int event_wait(spyre_event *ev, int64_t timeout_abs)
{
	int ret = drmSyncobjWait(ev->obj.dev->fd, &ev->syncobj, 1, timeout_abs, 0, NULL);

	if (!ret)
		return 1;
	return errno == ETIME || errno == ETIMEDOUT ? 0 : -errno;
}

/* Has @ev's last record been reached, waiting up to @timeout_abs (0: just
 * look)?  SUCCESS, NOT_READY, or the error of @what ("event wait"). */
static spyre_status event_reached(spyre_event *ev, int64_t timeout_abs, const char *what)
{
	spyre_status st = spyre_handle_check(ev, SPYRE_KIND_EVENT, "event");
	int ret;

	if (st != SPYRE_SUCCESS || !ev->recorded)
		return st;
	ret = event_wait(ev, timeout_abs);
	if (ret < 0)
		return spyre_set_error(spyre_status_from_errno(-ret), "%s: %s", what,
				       strerror(-ret));
	if (!ret)
		return spyre_set_error(SPYRE_ERROR_NOT_READY, "the event has not been reached");
	return SPYRE_SUCCESS;
}

SPYRE_EXPORT spyre_status spyre_event_synchronize(spyre_event *ev)
{
	spyre_status st = event_reached(ev, INT64_MAX, "event wait");

	/* The recording stream's host side up to the event, and its faults. */
	if (st == SPYRE_SUCCESS && ev->recorded &&
	    spyre_handle_live(ev->stream, SPYRE_KIND_STREAM, ev->stream_id))
		st = spyre_stream_wait_point(ev->stream, ev->point);
	return st == SPYRE_SUCCESS ? spyre_done(st) : st;
}

SPYRE_EXPORT spyre_status spyre_event_query(spyre_event *ev)
{
	spyre_status st = event_reached(ev, 0, "event query");

	return st == SPYRE_SUCCESS ? spyre_done(st) : st;
}

SPYRE_EXPORT spyre_status spyre_event_elapsed_ms(spyre_event *start, spyre_event *end,
						 double *ms)
{
	spyre_status st = spyre_handle_check(start, SPYRE_KIND_EVENT, "start event");
	uint64_t t0, t1;

	if (st == SPYRE_SUCCESS)
		st = spyre_handle_check(end, SPYRE_KIND_EVENT, "end event");
	if (st != SPYRE_SUCCESS)
		return st;
	if (!ms)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "ms is NULL");
	if (start->obj.dev != end->obj.dev)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "the events belong to different devices");
	if (!start->recorded || !end->recorded)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "the %s event was never recorded",
				       start->recorded ? "end" : "start");
	if (event_wait(start, 0) != 1 || event_wait(end, 0) != 1)
		return spyre_set_error(SPYRE_ERROR_NOT_READY,
				       "an event has not been reached yet");
	t0 = ((volatile uint64_t *)start->ts.map)[0];
	t1 = ((volatile uint64_t *)end->ts.map)[0];
	if (!t0 || !t1)
		return spyre_set_error(SPYRE_ERROR_DEVICE_FAULT,
				       "an event's timestamp was not written (its job failed)");
	*ms = ((double)t1 - (double)t0) / 1e6;
	return spyre_done(SPYRE_SUCCESS);
}
