/* SPDX-License-Identifier: MIT */
/* Kernels: program images, their arguments and launches (kernel.c). */
#ifndef SPYRE_KERNEL_H
#define SPYRE_KERNEL_H

#include "encode.h"

/*
 * spyre_kernel_launch() for a client that wants to hear of the launch:
 * @caller (may be NULL) gets a reference while the launch is queued and
 * its profile when it retires; a captured launch drops it.
 */
spyre_status spyre_kernel_launch_for(spyre_stream *s, spyre_kernel *kernel,
				     const struct spyre_owner *caller);

/* SUCCESS if @name may name a kernel (spyre_kernel_set_name's rules);
 * otherwise INVALID_ARGUMENT with a detail saying why. */
spyre_status spyre_kernel_name_check(const char *name);

#endif /* SPYRE_KERNEL_H */
