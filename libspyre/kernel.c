// SPDX-License-Identifier: MIT
/* Kernels: a program image in device memory, its arguments and launches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "spyre_program.h"
#include "spyre_regs.h"

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

spyre_status spyre_kernel_check_image(const void *image, size_t bytes, uint32_t *nargs)
{
	const uint8_t *h = image;
	uint32_t major, image_bytes, n, flags;

	if (!image)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "image is NULL");
	if (bytes < SPK_HDR_BYTES || bytes > SPYRE_LAUNCH_MAX_IMAGE)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "image of %zu bytes; a program is %d bytes to 4 MiB", bytes,
				       SPK_HDR_BYTES);
	if (get_le32(h + SPK_HDR_MAGIC) != SPK_MAGIC)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "not a Spyre program (magic 0x%08x)",
				       get_le32(h + SPK_HDR_MAGIC));
	major = h[SPK_HDR_VERSION_MAJOR] | (uint32_t)h[SPK_HDR_VERSION_MAJOR + 1] << 8;
	if (major != SPK_VERSION_MAJOR)
		return spyre_set_error(SPYRE_ERROR_VERSION_MISMATCH,
				       "program format %u; this library knows %d", major,
				       SPK_VERSION_MAJOR);
	image_bytes = get_le32(h + SPK_HDR_IMAGE_BYTES);
	if (image_bytes != bytes)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "the image says %u bytes, %zu given", image_bytes, bytes);
	n = get_le32(h + SPK_HDR_NUM_ARGS);
	if (n > SPK_MAX_ARGS)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "%u arguments; at most %d", n,
				       SPK_MAX_ARGS);
	flags = get_le32(h + SPK_HDR_FLAGS);
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
	spyre_kernel *k;
	spyre_status st;
	uint32_t nargs;

	if (!kernel)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "kernel pointer is NULL");
	*kernel = NULL;
	st = spyre_kernel_check_image(image, bytes, &nargs);
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
	k->image = buf->bo;
	free(buf);
	atomic_init(&k->refs, 1);
	k->nargs = nargs;
	k->core_mask = get_le32((const uint8_t *)image + SPK_HDR_CORE_MASK);
	pthread_mutex_init(&k->prof_lock, NULL);
	pthread_mutex_init(&k->args_lock, NULL);
	spyre_device_link(dev, &k->obj, SPYRE_KIND_KERNEL);
	snprintf(k->name, sizeof(k->name), "kernel %llu", (unsigned long long)k->obj.id);
	*kernel = k;
	return spyre_done(SPYRE_SUCCESS);
}

void spyre_kernel_put(struct spyre_kernel *k)
{
	if (atomic_fetch_sub(&k->refs, 1) == 1) {
		pthread_mutex_destroy(&k->prof_lock);
		pthread_mutex_destroy(&k->args_lock);
		free(k);
	}
}

SPYRE_EXPORT spyre_status spyre_kernel_destroy(spyre_kernel *kernel)
{
	spyre_status st;

	if (!kernel)
		return spyre_done(SPYRE_SUCCESS);
	st = spyre_handle_check(kernel, SPYRE_KIND_KERNEL, "kernel");
	if (st != SPYRE_SUCCESS)
		return st;
	spyre_device_unlink(&kernel->obj);
	/* Queued launches keep the image alive in the driver. */
	spyre_bo_destroy(kernel->obj.dev, &kernel->image);
	spyre_kernel_put(kernel);
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
	kernel->args[index] = buf->bo.va + offset;
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

static spyre_status make_node_locked(struct spyre_kernel *k, struct spyre_node *node,
				     struct spyre_job *job)
{
	spyre_status st;

	for (uint32_t i = 0; i < k->nargs; i++) {
		if (!(k->set_mask & (1ULL << i)))
			return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
					       "%s: argument %u is not set", k->name, i);
		if (k->arg_buf[i] &&
		    !spyre_handle_live(k->arg_buf[i], SPYRE_KIND_BUFFER, k->arg_buf_id[i]))
			return spyre_set_error(SPYRE_ERROR_INVALID_HANDLE,
					       "%s: the buffer of argument %u was freed", k->name,
					       i);
	}
	memset(node, 0, sizeof(*node));
	node->kind = NODE_LAUNCH;
	node->a0 = k->image.va;
	node->nargs = k->nargs;
	memcpy(node->args, k->args, sizeof(k->args[0]) * k->nargs);
	node->name = k->name;
	st = spyre_job_add_bo(job, k->image.handle);
	for (uint32_t i = 0; st == SPYRE_SUCCESS && i < k->nargs; i++)
		if (k->arg_buf[i])
			st = spyre_job_add_bo(job, k->arg_buf[i]->bo.handle);
	if (st != SPYRE_SUCCESS)
		return st;
	atomic_fetch_add(&k->refs, 1);
	node->kernel = k;
	return SPYRE_SUCCESS;
}

spyre_status spyre_kernel_make_node(struct spyre_kernel *k, struct spyre_node *node,
				    struct spyre_job *job)
{
	spyre_status st;

	/* The launch's snapshot of the arguments is taken whole. */
	pthread_mutex_lock(&k->args_lock);
	st = make_node_locked(k, node, job);
	pthread_mutex_unlock(&k->args_lock);
	return st;
}

void spyre_kernel_record_profile(struct spyre_kernel *k, const spyre_launch_profile *p)
{
	pthread_mutex_lock(&k->prof_lock);
	k->last = *p;
	k->have_profile = 1;
	pthread_mutex_unlock(&k->prof_lock);
}

static spyre_status launch(spyre_stream *s, spyre_kernel *kernel, spyre_launch_profile *prof,
			   struct spyre_op_prof *op)
{
	spyre_status st = spyre_handle_check(s, SPYRE_KIND_STREAM, "stream");
	struct spyre_node node;
	struct spyre_job job;

	if (st == SPYRE_SUCCESS)
		st = spyre_handle_check(kernel, SPYRE_KIND_KERNEL, "kernel");
	if (st != SPYRE_SUCCESS)
		return st;
	if (kernel->obj.dev != s->obj.dev)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "the kernel was loaded on another device than the stream's");
	pthread_mutex_lock(&s->lock);
	st = spyre_stream_enter(s, 1);
	if (st == SPYRE_SUCCESS) {
		spyre_job_init(&job);
		st = spyre_kernel_make_node(kernel, &node, &job);
	}
	if (st == SPYRE_SUCCESS) {
		node.profile = prof;
		if (s->capture) {
			st = spyre_graph_capture_node(s, &node, &job, NULL, 0);
		} else {
			/* The completion holds a reference on the op's profile. */
			if (op) {
				atomic_fetch_add(&op->refs, 1);
				op->expected++;
				node.op_prof = op;
			}
			job.nodes = &node;
			job.nnodes = 1;
			st = spyre_stream_submit(s, &job, NULL);
			if (st != SPYRE_SUCCESS && op)
				spyre_op_prof_put(op);
		}
		if (st != SPYRE_SUCCESS || s->capture)
			spyre_kernel_put(kernel);	/* the capture took its own */
	}
	pthread_mutex_unlock(&s->lock);
	return spyre_done(st);
}

SPYRE_EXPORT spyre_status spyre_kernel_launch(spyre_stream *s, spyre_kernel *kernel)
{
	return launch(s, kernel, NULL, NULL);
}

spyre_status spyre_kernel_launch_op(spyre_stream *s, spyre_kernel *kernel,
				    struct spyre_op_prof *op)
{
	return launch(s, kernel, NULL, op);
}

SPYRE_EXPORT spyre_status spyre_kernel_launch_profiled(spyre_stream *s, spyre_kernel *kernel,
						       spyre_launch_profile *profile)
{
	if (!profile)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "profile is NULL");
	return launch(s, kernel, profile, NULL);
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
