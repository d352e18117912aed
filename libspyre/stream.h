/* SPDX-License-Identifier: MIT */
/*
 * Streams (stream.c): a command ring, staging buffers, and the one path by
 * which work reaches the card: spyre_stream_queue() takes a submission,
 * hands it to a capturing graph or encodes and submits it, and runs its
 * host side when it retires.
 */
#ifndef SPYRE_STREAM_H
#define SPYRE_STREAM_H

#include <pthread.h>
#include <stdatomic.h>

#include "driver.h"
#include "encode.h"
#include "object.h"

#define SPYRE_RING_SLOTS	8192	/* 64-byte slots in a stream's command ring */
#define SPYRE_STAGE_BYTES	(8u << 20)	/* largest staging buffer (a copy chunk) */
#define SPYRE_STAGE_MIN		(64u << 10)
#define SPYRE_STAGE_COUNT	4

/*
 * A job's commands placed once in a buffer of their own (a graph exec's),
 * submitted from there instead of copied into the ring.  The card writes
 * each node's timestamps and statistics into it, so one job at a time uses
 * it: busy from spyre_stream_queue() until that job retires.
 */
struct spyre_placed {
	struct spyre_gem gem;
	atomic_int busy;
};

/* Work for one SUBMIT, put together by the caller of spyre_stream_queue(). */
struct spyre_submission {
	const struct spyre_node *nodes;
	uint32_t nnodes;
	const struct spyre_template *tmpl;	/* the nodes pre-encoded, or NULL */
	/* tmpl placed at placed->gem.va, which the caller set busy; or NULL */
	struct spyre_placed *placed;
	struct spyre_bo_list bos;
	struct spyre_obj *const *uses;	/* objects the nodes use, for a capture */
	uint32_t nuses;
	uint32_t in_syncobj;		/* 0 or a binary syncobj to wait for */
	uint32_t signal_syncobj;	/* 0 or a binary syncobj to get the job's fence */
	int stage;			/* staging buffer used, or -1 */
	void *dtoh_dst;			/* deferred copy out of the staging buffer */
	uint64_t dtoh_bytes;
	/* Holds the nodes (they are not copied) and hears of every launch. */
	struct spyre_owner owner;
};

void spyre_submission_init(struct spyre_submission *sub);

/* Where a capturing stream's work goes instead of the card (a graph). */
struct spyre_capture {
	spyre_status (*add)(struct spyre_capture *cap, const struct spyre_submission *sub);
	void (*discard)(struct spyre_capture *cap);
};

struct spyre_stage {
	struct spyre_gem gem;
	uint64_t busy_until;		/* point of the last job using it */
	int pending;			/* a deferred dtoh copy still reads it */
};

struct spyre_completion;

struct spyre_stream {
	struct spyre_obj obj;
	pthread_mutex_t lock;
	uint32_t queue;
	uint32_t syncobj;		/* timeline: point n = n-th job done */
	uint64_t submitted;		/* last point handed out */
	uint64_t retired;		/* host side done up to here */
	struct spyre_gem ring;
	uint64_t *slot_point;		/* job point that last used each slot */
	uint32_t ring_pos;
	struct spyre_completion *pending_head, *pending_tail;
	struct spyre_stage stage[SPYRE_STAGE_COUNT];
	struct spyre_capture *capture;	/* capturing into this, or NULL */
	spyre_status fault;		/* sticky async fault */
	char fault_detail[512];
	spyre_fault_info fault_info;	/* the same, for spyre_stream_get_fault */
	uint32_t trace_tid;
	int internal;			/* 0 a user's, 1 blocking calls', 2 peer copies' */
};

/* The device's stream for blocking calls, created on first use. */
spyre_status spyre_stream_internal(spyre_device *dev, spyre_stream **s);
/* A stream of the library's own (peer copies' source side): on no device
 * list, no handle; freed, after its work, by spyre_stream_private_free(). */
spyre_status spyre_stream_private_new(spyre_device *dev, spyre_stream **s);
void spyre_stream_private_free(spyre_stream *s);
/* Checks on entry of a stream operation (under s->lock). */
spyre_status spyre_stream_enter(spyre_stream *s, int capture_ok);
/*
 * Queue @sub (under s->lock): to the capture if the stream captures, else
 * to the card; *point (if not NULL) = its timeline point, 0 when captured.
 * Takes over the references of the nodes' and the submission's owners,
 * whatever it returns.
 */
spyre_status spyre_stream_queue(spyre_stream *s, struct spyre_submission *sub, uint64_t *point);
/* Wait for @point and retire up to it (takes the lock itself). */
spyre_status spyre_stream_wait_point(spyre_stream *s, uint64_t point);
/* A free staging buffer of at least @bytes (<= SPYRE_STAGE_BYTES); waits
 * for one if needed; under s->lock. */
spyre_status spyre_stream_get_stage(spyre_stream *s, uint64_t bytes, int *index);

#endif /* SPYRE_STREAM_H */
