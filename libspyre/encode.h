/* SPDX-License-Identifier: MIT */
/*
 * Operations as card commands (encode.c).  Every operation ("node") is
 * [TIMESTAMP t0][op][TIMESTAMP t1] in the job's command slots plus data
 * slots after all commands: the two timestamps, and for a launch its
 * argument block and statistics record.  The 64-byte layout itself is
 * include/spyre_cmd.h's.
 */
#ifndef SPYRE_ENCODE_H
#define SPYRE_ENCODE_H

#include <stdint.h>

#include "spyre/spyre.h"

#define SPYRE_JOB_MAX_SLOTS	4096	/* largest job (graph) */
#define SPYRE_NODE_CMDS		3	/* command slots per node */
#define SPYRE_STATS_WORDS	40
#define SPYRE_NODE_MAX_ARGS	64

/*
 * Something a queued node holds a reference on and tells when the node
 * retires: the program it runs, the call that queued it, a graph replay.
 * Every member is optional.
 */
struct spyre_owner_ops {
	void (*get)(void *ctx);
	void (*put)(void *ctx);
	/* A launch of the job finished; @index counts launches in the job. */
	void (*launch_retired)(void *ctx, uint32_t index, const spyre_launch_profile *p);
	/* Around the launch_retired calls of one job (job owners only). */
	void (*retire_begin)(void *ctx);
	void (*retire_end)(void *ctx, uint32_t launches);
};

struct spyre_owner {
	const struct spyre_owner_ops *ops;
	void *ctx;
};

static inline void spyre_owner_get(const struct spyre_owner *o)
{
	if (o->ops && o->ops->get)
		o->ops->get(o->ctx);
}

static inline void spyre_owner_put(const struct spyre_owner *o)
{
	if (o->ops && o->ops->put)
		o->ops->put(o->ctx);
}

enum spyre_node_kind { NODE_COPY, NODE_FILL, NODE_LAUNCH, NODE_MARK, NODE_COPY_SG };

/* One operation. */
struct spyre_node {
	enum spyre_node_kind kind;
	uint64_t a0, a1, a2;		/* copy: src, dst, bytes; fill: dst, bytes, pattern;
					 * launch: image va; mark: timestamp va or 0;
					 * copy_sg: lowest src, lowest dst, extent */
	uint32_t nsg;			/* copy_sg: entries in @sg (1..SPYRE_SG_MAX_ENTRIES) */
	const uint64_t *sg;		/* copy_sg: (src, dst, bytes) per entry; read only
					 * while the node is encoded (NULL afterwards) */
	uint32_t nargs;
	uint64_t args[SPYRE_NODE_MAX_ARGS];	/* launch: snapshot */
	struct spyre_owner program;	/* launch: the kernel (a graph keeps it) */
	struct spyre_owner caller;	/* launch: the call's profile (a graph drops it) */
	uint64_t bytes;			/* for traces */
	const char *name;		/* "htod", "dtoh", "dtod", "fill", kernel name ... */
};

/* Drop the references a node holds. */
static inline void spyre_node_put(const struct spyre_node *n)
{
	spyre_owner_put(&n->program);
	spyre_owner_put(&n->caller);
}

/* Data slots a node takes after the job's commands. */
uint32_t spyre_node_data_slots(const struct spyre_node *n);
/* Encode @n's commands at @cmd (3 slots) and data at @data (device address
 * @data_va); returns the number of data slots used. */
uint32_t spyre_node_encode(const struct spyre_node *n, uint8_t *cmd, uint8_t *data,
			   uint64_t data_va);
/* Where a node's statistics record starts in its data slots. */
uint32_t spyre_node_stats_offset(const struct spyre_node *n);

/* Slots of a job of @n nodes; *ncmds = its command slots (the rest is data). */
uint32_t spyre_job_slots(const struct spyre_node *nodes, uint32_t n, uint32_t *ncmds);
/* Encode @n nodes at @base (device address @va): commands, then data. */
void spyre_job_encode(const struct spyre_node *nodes, uint32_t n, uint8_t *base, uint64_t va);

/*
 * A job's slots encoded once (a graph's, at instantiation) with addresses
 * relative to the job's first slot: a replay copies them into the ring and
 * adds the ring address at each relocation.
 */
struct spyre_template {
	uint8_t *bytes;
	uint32_t slots, ncmds;
	uint32_t *relocs;		/* byte offsets of u64 fields to relocate */
	uint32_t nrelocs;
};

spyre_status spyre_template_build(struct spyre_template *t, const struct spyre_node *nodes,
				  uint32_t n);
/* Copy @t to @base and relocate it to device address @va. */
void spyre_template_place(const struct spyre_template *t, uint8_t *base, uint64_t va);
void spyre_template_free(struct spyre_template *t);

#endif /* SPYRE_ENCODE_H */
