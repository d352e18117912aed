/* SPDX-License-Identifier: MIT */
/* A failed job in words (fault.c): what failed, where, and why. */
#ifndef SPYRE_FAULT_H
#define SPYRE_FAULT_H

#include <stddef.h>
#include <stdint.h>

#include "encode.h"
#include "object.h"

/* Where a job failed: its stream, its place on the timeline, its nodes. */
struct spyre_fault_site {
	uint32_t queue;
	uint32_t stream_tid;		/* the stream's number in messages and traces */
	uint64_t point;			/* the job's point on the stream's timeline */
	uint64_t job_id;		/* the driver's, from SUBMIT */
	const struct spyre_node *nodes;	/* the job's, in command order */
	uint32_t nnodes;
	uint32_t unfinished;		/* the first node whose end was not stamped */
};

/*
 * Fill @info and @detail for a job that ended with driver status
 * @job_status (DRM_SPYRE_JOB_STATUS_*): asks the driver why the card
 * failed the job (the failing command, the engine's record, the MMU
 * fault), else guesses from the unfinished node and the live buffers.
 */
void spyre_fault_explain(spyre_device *dev, const struct spyre_fault_site *site,
			 uint32_t job_status, spyre_fault_info *info, char *detail,
			 size_t detail_size);

#endif /* SPYRE_FAULT_H */
