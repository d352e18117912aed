// SPDX-License-Identifier: MIT
/* Kernels: a program image in device memory, its arguments and launches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kernel.h"
#include "memory.h"
#include "spyre_cmd.h"
#include "spyre_program.h"
#include "stream.h"

/*
 * A kernel's names, newest first.  A launch's node points at the name the
 * kernel had when it was queued, so a renamed kernel keeps its old names
 * until the last queued or captured launch drops its reference.
 */
struct kernel_name {
	struct kernel_name *next;
	char s[];
};

struct spyre_kernel {
	struct spyre_obj obj;
	atomic_int refs;		/* the handle's, and each queued or captured launch's */
	struct spyre_gem image;
	uint32_t nargs;
	uint32_t core_mask;
	pthread_mutex_t args_lock;	/* the arguments below */
	uint64_t args[SPYRE_NODE_MAX_ARGS];
	uint64_t set_mask;
	spyre_buffer *arg_buf[SPYRE_NODE_MAX_ARGS];	/* buffer behind each argument, or NULL */
	uint64_t arg_buf_id[SPYRE_NODE_MAX_ARGS];
	pthread_mutex_t prof_lock;
	int have_profile;
	spyre_launch_profile last;
	_Atomic(const char *) name;	/* names->s; launches snapshot the pointer */
	struct kernel_name *names;	/* every name it had (under args_lock) */
};

static void kernel_get(void *ctx)
{
	struct spyre_kernel *k = ctx;

	atomic_fetch_add(&k->refs, 1);
}

static void kernel_put(void *ctx)
{
	struct spyre_kernel *k = ctx;

	if (atomic_fetch_sub(&k->refs, 1) == 1) {
		while (k->names) {
			struct kernel_name *n = k->names;

			k->names = n->next;
			free(n);
		}
		pthread_mutex_destroy(&k->prof_lock);
		pthread_mutex_destroy(&k->args_lock);
		free(k);
	}
}

/* A launch of it finished: spyre_kernel_last_profile() reports it. */
static void kernel_launch_retired(void *ctx, uint32_t index, const spyre_launch_profile *p)
{
	struct spyre_kernel *k = ctx;

	(void)index;
	pthread_mutex_lock(&k->prof_lock);
	k->last = *p;
	k->have_profile = 1;
	pthread_mutex_unlock(&k->prof_lock);
}

static const struct spyre_owner_ops kernel_owner_ops = {
	.get = kernel_get,
	.put = kernel_put,
	.launch_retired = kernel_launch_retired,
};

static void kernel_destroy_obj(struct spyre_obj *obj)
{
	spyre_kernel_destroy((spyre_kernel *)obj);
}

spyre_status spyre_kernel_name_check(const char *name)
{
	size_t len;

	if (!name)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "the kernel name is NULL");
	len = strlen(name);
	if (!len)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "the kernel name is empty");
	if (len > SPYRE_KERNEL_NAME_MAX)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "the kernel name is %zu bytes; at most %d (SPYRE_KERNEL_NAME_MAX)",
				       len, SPYRE_KERNEL_NAME_MAX);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
					       "the kernel name has a control character (0x%02x) at byte %zu",
					       (unsigned char)name[i], i);
	return SPYRE_SUCCESS;
}

/* Give @k the name @name (checked); the old ones stay for queued launches. */
static spyre_status kernel_rename(struct spyre_kernel *k, const char *name)
{
	size_t len = strlen(name);
	struct kernel_name *n = malloc(sizeof(*n) + len + 1);

	if (!n)
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a kernel name");
	memcpy(n->s, name, len + 1);
	pthread_mutex_lock(&k->args_lock);
	n->next = k->names;
	k->names = n;
	atomic_store(&k->name, n->s);
	pthread_mutex_unlock(&k->args_lock);
	return SPYRE_SUCCESS;
}

static spyre_status check_image(const void *image, size_t bytes, uint32_t *nargs)
{
	const uint8_t *h = image;
	uint32_t major, image_bytes, n, flags;

	if (!image)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "image is NULL");
	if (bytes < SPK_HDR_BYTES || bytes > SPYRE_LAUNCH_MAX_IMAGE)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "image of %zu bytes; a program is %d bytes to 4 MiB", bytes,
				       SPK_HDR_BYTES);
	if (spyre_get_le32(h + SPK_HDR_MAGIC) != SPK_MAGIC)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "not a Spyre program (magic 0x%08x)",
				       spyre_get_le32(h + SPK_HDR_MAGIC));
	major = spyre_get_le16(h + SPK_HDR_VERSION_MAJOR);
	if (major != SPK_VERSION_MAJOR)
		return spyre_set_error(SPYRE_ERROR_VERSION_MISMATCH,
				       "program format %u; this library knows %d", major,
				       SPK_VERSION_MAJOR);
	image_bytes = spyre_get_le32(h + SPK_HDR_IMAGE_BYTES);
	if (image_bytes != bytes)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "the image says %u bytes, %zu given", image_bytes, bytes);
	n = spyre_get_le32(h + SPK_HDR_NUM_ARGS);
	if (n > SPK_MAX_ARGS)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%u arguments; at most %d", n,
				       SPK_MAX_ARGS);
	flags = spyre_get_le32(h + SPK_HDR_FLAGS);
	if (flags)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "unknown program flags 0x%x",
				       flags);
	*nargs = n;
	return SPYRE_SUCCESS;
}

SPYRE_EXPORT spyre_status spyre_kernel_load(spyre_device *dev, const void *image, size_t bytes,
					    spyre_kernel **kernel)
{
	spyre_buffer *buf = NULL;
	char default_name[32];
	spyre_kernel *k;
	spyre_status st;
	uint32_t nargs = 0;

	if (!kernel)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "kernel pointer is NULL");
	*kernel = NULL;
	st = check_image(image, bytes, &nargs);
	if (st != SPYRE_SUCCESS)
		return st;
	if (!dev)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "device is NULL");
	st = spyre_buffer_alloc(dev, bytes, SPYRE_MEM_DEVICE, &buf);
	if (st != SPYRE_SUCCESS)
		return st;
	st = spyre_memcpy_htod(buf, 0, image, bytes);
	if (st != SPYRE_SUCCESS) {
		spyre_buffer_free(buf);
		return st;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		spyre_buffer_free(buf);
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a kernel");
	}
	/* The image buffer moves from the caller-visible list into the kernel. */
	spyre_device_unlink(&buf->obj);
	k->image = buf->gem;
	free(buf);
	atomic_init(&k->refs, 1);
	k->nargs = nargs;
	k->core_mask = spyre_get_le32((const uint8_t *)image + SPK_HDR_CORE_MASK);
	pthread_mutex_init(&k->prof_lock, NULL);
	pthread_mutex_init(&k->args_lock, NULL);
	k->obj.gem = &k->image;
	spyre_device_link(dev, &k->obj, SPYRE_KIND_KERNEL, kernel_destroy_obj);
	snprintf(default_name, sizeof(default_name), "kernel %llu",
		 (unsigned long long)k->obj.id);
	st = kernel_rename(k, default_name);
	if (st != SPYRE_SUCCESS) {
		spyre_kernel_destroy(k);
		return spyre_set_error(st, "no memory for a kernel name");
	}
	*kernel = k;
	return spyre_done(SPYRE_SUCCESS);
}

SPYRE_EXPORT spyre_status spyre_kernel_set_name(spyre_kernel *kernel, const char *name)
{
	/* The name first, like the image before the device in spyre_kernel_load. */
	spyre_status st = spyre_kernel_name_check(name);

	if (st == SPYRE_SUCCESS)
		st = spyre_handle_check(kernel, SPYRE_KIND_KERNEL, "kernel");
	if (st == SPYRE_SUCCESS)
		st = kernel_rename(kernel, name);
	return st == SPYRE_SUCCESS ? spyre_done(st) : st;
}

SPYRE_EXPORT const char *spyre_kernel_get_name(const spyre_kernel *kernel)
{
	if (!spyre_handle_live(kernel, SPYRE_KIND_KERNEL, 0))
		return NULL;
	return atomic_load(&((spyre_kernel *)kernel)->name);
}

SPYRE_EXPORT spyre_status spyre_kernel_destroy(spyre_kernel *kernel)
{
	spyre_status st;

	if (!spyre_handle_unlink(kernel, SPYRE_KIND_KERNEL, "kernel", &st))
		return st;
	/* Queued launches keep the image alive in the driver. */
	spyre_gem_destroy(kernel->obj.dev, &kernel->image);
	kernel_put(kernel);
	return spyre_done(SPYRE_SUCCESS);
}

SPYRE_EXPORT uint32_t spyre_kernel_num_args(const spyre_kernel *kernel)
{
	return spyre_handle_live(kernel, SPYRE_KIND_KERNEL, 0) ? kernel->nargs : 0;
}

static spyre_status check_arg(spyre_kernel *kernel, uint32_t index)
{
	spyre_status st = spyre_handle_check(kernel, SPYRE_KIND_KERNEL, "kernel");

	if (st == SPYRE_SUCCESS && index >= kernel->nargs)
		st = spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				     "argument %u of a kernel with %u arguments", index,
				     kernel->nargs);
	return st;
}

SPYRE_EXPORT spyre_status spyre_kernel_set_arg(spyre_kernel *kernel, uint32_t index,
					       spyre_buffer *buf, uint64_t offset)
{
	spyre_status st = check_arg(kernel, index);

	if (st == SPYRE_SUCCESS)
		st = spyre_handle_check(buf, SPYRE_KIND_BUFFER, "buffer");
	if (st != SPYRE_SUCCESS)
		return st;
	if (buf->obj.dev != kernel->obj.dev)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "the buffer belongs to another device than the kernel");
	if (offset >= buf->bytes)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "offset %llu is outside the %llu-byte buffer",
				       (unsigned long long)offset, (unsigned long long)buf->bytes);
	pthread_mutex_lock(&kernel->args_lock);
	kernel->args[index] = buf->gem.va + offset;
	kernel->arg_buf[index] = buf;
	kernel->arg_buf_id[index] = buf->obj.id;
	kernel->set_mask |= 1ULL << index;
	pthread_mutex_unlock(&kernel->args_lock);
	return spyre_done(SPYRE_SUCCESS);
}

SPYRE_EXPORT spyre_status spyre_kernel_set_arg_u64(spyre_kernel *kernel, uint32_t index,
						   uint64_t value)
{
	spyre_status st = check_arg(kernel, index);

	if (st != SPYRE_SUCCESS)
		return st;
	pthread_mutex_lock(&kernel->args_lock);
	kernel->args[index] = value;
	kernel->arg_buf[index] = NULL;
	kernel->set_mask |= 1ULL << index;
	pthread_mutex_unlock(&kernel->args_lock);
	return spyre_done(SPYRE_SUCCESS);
}

/* Objects a launch uses, for a capture: the kernel and its argument buffers. */
struct launch_uses {
	struct spyre_obj *objs[1 + SPYRE_NODE_MAX_ARGS];
	uint32_t n;
};

/* A launch node from @k's arguments (under k->args_lock); INVALID_ARGUMENT
 * if some are unset.  Lists the image and argument buffers in @sub. */
static spyre_status make_node_locked(struct spyre_kernel *k, struct spyre_node *node,
				     struct spyre_submission *sub, struct launch_uses *uses)
{
	spyre_status st;

	for (uint32_t i = 0; i < k->nargs; i++) {
		if (!(k->set_mask & (1ULL << i)))
			return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
					       "%s: argument %u is not set",
					       atomic_load(&k->name), i);
		if (k->arg_buf[i] &&
		    !spyre_handle_live(k->arg_buf[i], SPYRE_KIND_BUFFER, k->arg_buf_id[i]))
			return spyre_set_error(SPYRE_ERROR_INVALID_HANDLE,
					       "%s: the buffer of argument %u was freed",
					       atomic_load(&k->name), i);
	}
	memset(node, 0, sizeof(*node));
	node->kind = NODE_LAUNCH;
	node->a0 = k->image.va;
	node->nargs = k->nargs;
	memcpy(node->args, k->args, sizeof(k->args[0]) * k->nargs);
	node->name = atomic_load(&k->name);
	uses->n = 0;
	uses->objs[uses->n++] = &k->obj;
	st = spyre_bo_list_add(&sub->bos, k->image.handle, "job");
	for (uint32_t i = 0; st == SPYRE_SUCCESS && i < k->nargs; i++) {
		if (!k->arg_buf[i])
			continue;
		st = spyre_bo_list_add(&sub->bos, k->arg_buf[i]->gem.handle, "job");
		uses->objs[uses->n++] = &k->arg_buf[i]->obj;
	}
	return st;
}

static spyre_status launch_locked(spyre_stream *s, struct spyre_kernel *k,
				  const struct spyre_owner *caller)
{
	struct spyre_submission sub;
	struct launch_uses uses;
	struct spyre_node node;
	spyre_status st;

	spyre_submission_init(&sub);
	/* The launch's snapshot of the arguments is taken whole. */
	pthread_mutex_lock(&k->args_lock);
	st = make_node_locked(k, &node, &sub, &uses);
	pthread_mutex_unlock(&k->args_lock);
	if (st != SPYRE_SUCCESS)
		return st;
	node.program = (struct spyre_owner){ &kernel_owner_ops, k };
	spyre_owner_get(&node.program);
	if (caller) {
		node.caller = *caller;
		spyre_owner_get(&node.caller);
	}
	sub.nodes = &node;
	sub.nnodes = 1;
	sub.uses = uses.objs;
	sub.nuses = uses.n;
	return spyre_stream_queue(s, &sub, NULL);
}

spyre_status spyre_kernel_launch_for(spyre_stream *s, spyre_kernel *kernel,
				     const struct spyre_owner *caller)
{
	spyre_status st = spyre_handle_check(s, SPYRE_KIND_STREAM, "stream");

	if (st == SPYRE_SUCCESS)
		st = spyre_handle_check(kernel, SPYRE_KIND_KERNEL, "kernel");
	if (st != SPYRE_SUCCESS)
		return st;
	if (kernel->obj.dev != s->obj.dev)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "the kernel was loaded on another device than the stream's");
	pthread_mutex_lock(&s->lock);
	st = spyre_stream_enter(s, 1);
	if (st == SPYRE_SUCCESS)
		st = launch_locked(s, kernel, caller);
	pthread_mutex_unlock(&s->lock);
	return spyre_done(st);
}

/* A profiled launch's caller: the user's record, written when it retires. */
static void write_profile(void *ctx, uint32_t index, const spyre_launch_profile *p)
{
	(void)index;
	*(spyre_launch_profile *)ctx = *p;
}

static const struct spyre_owner_ops profile_owner_ops = { .launch_retired = write_profile };

SPYRE_EXPORT spyre_status spyre_kernel_launch(spyre_stream *s, spyre_kernel *kernel)
{
	return spyre_kernel_launch_for(s, kernel, NULL);
}

SPYRE_EXPORT spyre_status spyre_kernel_launch_profiled(spyre_stream *s, spyre_kernel *kernel,
						       spyre_launch_profile *profile)
{
	struct spyre_owner caller = { &profile_owner_ops, profile };

	if (!profile)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "profile is NULL");
	return spyre_kernel_launch_for(s, kernel, &caller);
}

SPYRE_EXPORT spyre_status spyre_kernel_last_profile(spyre_kernel *kernel,
						    spyre_launch_profile *profile)
{
	spyre_status st = spyre_handle_check(kernel, SPYRE_KIND_KERNEL, "kernel");
	int have;

	if (st != SPYRE_SUCCESS)
		return st;
	if (!profile)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "profile is NULL");
	pthread_mutex_lock(&kernel->prof_lock);
	have = kernel->have_profile;
	if (have)
		*profile = kernel->last;
	pthread_mutex_unlock(&kernel->prof_lock);
	if (!have)
		return spyre_set_error(SPYRE_ERROR_NOT_READY,
				       "no launch of this kernel has completed yet");
	return spyre_done(SPYRE_SUCCESS);
}
