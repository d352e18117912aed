// SPDX-License-Identifier: MIT
/*
 * Runtime objects.  The registry of live objects: every handle a caller
 * passes is looked up here before it is dereferenced, so a freed or
 * made-up pointer is an error code, never a use-after-free (an
 * open-addressing hash set keyed by pointer, under one mutex).  And each
 * device's list of its objects, which closing the device empties.
 */
#include <stdint.h>
#include <stdlib.h>

#include "error.h"
#include "gem.h"
#include "object.h"

struct slot {
	const struct spyre_obj *obj;	/* NULL: empty; TOMB: deleted */
};

#define TOMB ((const struct spyre_obj *)1)

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *table;
static size_t table_size;	/* power of two */
static size_t table_used;	/* live + tombstones */
static uint64_t next_id = 1;

static size_t hash_ptr(const void *p)
{
	uint64_t x = (uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

/* Index of @p's slot, or of the empty slot where it would go. */
static size_t find(const void *p)
{
	size_t mask = table_size - 1, i = hash_ptr(p) & mask;

	while (table[i].obj && table[i].obj != p)
		i = (i + 1) & mask;
	return i;
}

static int grow(void)
{
	struct slot *old = table;
	size_t old_size = table_size;
	size_t size = table_size ? table_size * 2 : 256;

	/* Only rehash live entries; the size stays if mostly tombstones. */
	size_t live = 0;

	for (size_t i = 0; i < old_size; i++)
		live += old[i].obj && old[i].obj != TOMB;
	if (old_size && live * 4 < old_size)
		size = old_size;
	table = calloc(size, sizeof(*table));
	if (!table) {
		table = old;
		return -1;
	}
	table_size = size;
	table_used = 0;
	for (size_t i = 0; i < old_size; i++) {
		if (old[i].obj && old[i].obj != TOMB) {
			table[find(old[i].obj)].obj = old[i].obj;
			table_used++;
		}
	}
	free(old);
	return 0;
}

void spyre_handle_add(struct spyre_obj *obj, enum spyre_kind kind, spyre_device *dev)
{
	pthread_mutex_lock(&reg_lock);
	obj->kind = kind;
	obj->dev = dev;
	obj->id = next_id++;
	/*
	 * If the table cannot grow the object is still usable by the library
	 * but the caller's handle checks fail: report it.
	 */
	if ((table_used + 1) * 2 >= table_size && grow() && !table_size) {
		pthread_mutex_unlock(&reg_lock);
		spyre_log(SPYRE_LOG_ERROR, "handle registry: out of memory");
		return;
	}
	table[find(obj)].obj = obj;
	table_used++;
	pthread_mutex_unlock(&reg_lock);
}

void spyre_handle_remove(struct spyre_obj *obj)
{
	size_t i;

	pthread_mutex_lock(&reg_lock);
	if (table_size) {
		/* Tombstones keep probe chains intact. */
		size_t mask = table_size - 1;

		i = hash_ptr(obj) & mask;
		while (table[i].obj && table[i].obj != obj)
			i = (i + 1) & mask;
		if (table[i].obj == obj)
			table[i].obj = TOMB;
	}
	obj->kind = 0;
	pthread_mutex_unlock(&reg_lock);
}

static int live_locked(const void *p, enum spyre_kind kind, uint64_t id)
{
	size_t mask, i;

	if (!p || !table_size || p == TOMB)
		return 0;
	mask = table_size - 1;
	i = hash_ptr(p) & mask;
	while (table[i].obj && table[i].obj != p)
		i = (i + 1) & mask;
	if (table[i].obj != p)
		return 0;
	return table[i].obj->kind == kind && (!id || table[i].obj->id == id);
}

int spyre_handle_live(const void *p, enum spyre_kind kind, uint64_t id)
{
	int live;

	pthread_mutex_lock(&reg_lock);
	live = live_locked(p, kind, id);
	pthread_mutex_unlock(&reg_lock);
	return live;
}

int spyre_handle_with(const void *p, enum spyre_kind kind, uint64_t id,
		      void (*fn)(void *obj, void *arg), void *arg)
{
	int live;

	pthread_mutex_lock(&reg_lock);
	live = live_locked(p, kind, id);
	if (live)
		fn((void *)p, arg);
	pthread_mutex_unlock(&reg_lock);
	return live;
}

static const char *const kind_names[] = {
	[0] = "dead object",
	[SPYRE_KIND_BUFFER] = "buffer", [SPYRE_KIND_STREAM] = "stream",
	[SPYRE_KIND_EVENT] = "event", [SPYRE_KIND_KERNEL] = "kernel",
	[SPYRE_KIND_GRAPH] = "graph", [SPYRE_KIND_EXEC] = "graph exec",
	[SPYRE_KIND_DEVICE] = "device",
};

const char *spyre_kind_name(enum spyre_kind kind)
{
	return kind_names[kind];
}

spyre_status spyre_handle_check(const void *p, enum spyre_kind kind, const char *what)
{
	if (!p)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%s is NULL", what);
	if (!spyre_handle_live(p, kind, 0))
		return spyre_set_error(SPYRE_ERROR_INVALID_HANDLE,
				       "%s %p is not a live %s (freed or destroyed?)", what, p,
				       kind_names[kind]);
	return SPYRE_SUCCESS;
}

spyre_status spyre_device_check(spyre_device *dev)
{
	if (!dev)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "device is NULL");
	if (!spyre_handle_live(&dev->objects, SPYRE_KIND_DEVICE, 0))
		return spyre_set_error(SPYRE_ERROR_INVALID_HANDLE, "device %p is not open",
				       (void *)dev);
	return SPYRE_SUCCESS;
}

void spyre_device_link(spyre_device *dev, struct spyre_obj *obj, enum spyre_kind kind,
		       void (*destroy)(struct spyre_obj *obj))
{
	obj->destroy = destroy;
	spyre_handle_add(obj, kind, dev);
	pthread_mutex_lock(&dev->lock);
	obj->next = &dev->objects;
	obj->prev = dev->objects.prev;
	dev->objects.prev->next = obj;
	dev->objects.prev = obj;
	pthread_mutex_unlock(&dev->lock);
}

void spyre_device_unlink(struct spyre_obj *obj)
{
	spyre_device *dev = obj->dev;

	spyre_handle_remove(obj);
	pthread_mutex_lock(&dev->lock);
	obj->prev->next = obj->next;
	obj->next->prev = obj->prev;
	obj->next = obj->prev = obj;
	pthread_mutex_unlock(&dev->lock);
}

int spyre_device_va_mapped(spyre_device *dev, uint64_t va)
{
	struct spyre_obj *o;
	int found = 0;

	pthread_mutex_lock(&dev->lock);
	for (o = dev->objects.next; o != &dev->objects && !found; o = o->next) {
		const struct spyre_gem *gem = o->gem;

		found = gem && gem->handle && va >= gem->va && va - gem->va < gem->size;
	}
	pthread_mutex_unlock(&dev->lock);
	return found;
}

int spyre_handle_unlink(void *p, enum spyre_kind kind, const char *what, spyre_status *st)
{
	if (!p) {
		*st = spyre_done(SPYRE_SUCCESS);
		return 0;
	}
	*st = spyre_handle_check(p, kind, what);
	if (*st != SPYRE_SUCCESS)
		return 0;
	spyre_device_unlink(p);
	return 1;
}
