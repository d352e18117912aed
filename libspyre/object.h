/* SPDX-License-Identifier: MIT */
/*
 * Runtime objects (object.c): every handle the API gives out starts with a
 * struct spyre_obj, is registered so that a stale or made-up pointer is an
 * error code, and sits on its device's list so that closing the device
 * can destroy what the caller left, through the object's own callback.
 */
#ifndef SPYRE_OBJECT_H
#define SPYRE_OBJECT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "spyre/spyre.h"

/* Kinds, in the order spyre_device_close() destroys them: streams first,
 * since they wait for their work, then what the work used. */
enum spyre_kind {
	SPYRE_KIND_STREAM = 1,
	SPYRE_KIND_EXEC,
	SPYRE_KIND_GRAPH,
	SPYRE_KIND_EVENT,
	SPYRE_KIND_KERNEL,
	SPYRE_KIND_BUFFER,
	SPYRE_KIND_DEVICE,
};

struct spyre_gem;

/* First member of every runtime object. */
struct spyre_obj {
	enum spyre_kind kind;
	uint64_t id;			/* never reused: tells a recycled pointer apart */
	spyre_device *dev;
	struct spyre_obj *prev, *next;	/* the device's objects (dev->lock) */
	void (*destroy)(struct spyre_obj *obj);	/* at device close */
	const struct spyre_gem *gem;	/* device memory it holds, or NULL */
};

/* A client's clean-up when a device closes (the op library's cache). */
typedef void (*spyre_close_hook)(spyre_device *dev);
#define SPYRE_MAX_CLOSE_HOOKS 4

/* An open card. */
struct spyre_device {
	int fd;
	spyre_device_properties props;
	uint32_t trace_pid;		/* this open's process id in traces */
	pthread_mutex_t lock;		/* objects list, internal stream, hooks */
	struct spyre_obj objects;	/* list head; also the device's registry entry */
	spyre_stream *internal;		/* for blocking calls, made on first use */
	spyre_close_hook close_hooks[SPYRE_MAX_CLOSE_HOOKS];
	int nclose_hooks;
	atomic_int lost;		/* banned by the driver after a fault */
};

/* Register a live object (gives it its id); unregister before freeing. */
void spyre_handle_add(struct spyre_obj *obj, enum spyre_kind kind, spyre_device *dev);
void spyre_handle_remove(struct spyre_obj *obj);
/* Is @p a live object of @kind (and, if @id, that very object)? */
int spyre_handle_live(const void *p, enum spyre_kind kind, uint64_t id);
/* Check a caller's handle: INVALID_ARGUMENT for NULL, INVALID_HANDLE if dead. */
spyre_status spyre_handle_check(const void *p, enum spyre_kind kind, const char *what);
/* Check a caller's device: NULL or not open is an error. */
spyre_status spyre_device_check(spyre_device *dev);
/* "buffer", "stream", ... */
const char *spyre_kind_name(enum spyre_kind kind);

/* Register @obj and put it on @dev's list; @destroy frees it at close. */
void spyre_device_link(spyre_device *dev, struct spyre_obj *obj, enum spyre_kind kind,
		       void (*destroy)(struct spyre_obj *obj));
void spyre_device_unlink(struct spyre_obj *obj);
/*
 * The start of every destroy call: 1 if @p was a live object of @kind,
 * now unlinked for the caller to free; else 0 with *st = SUCCESS for NULL
 * (nothing to do) or the error naming @what for a dead handle.
 */
int spyre_handle_unlink(void *p, enum spyre_kind kind, const char *what, spyre_status *st);
/* Does device memory of a live object of @dev hold device address @va? */
int spyre_device_va_mapped(spyre_device *dev, uint64_t va);

#endif /* SPYRE_OBJECT_H */
