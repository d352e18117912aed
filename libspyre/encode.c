// SPDX-License-Identifier: MIT
/* Operations as card commands: see encode.h for the layout of a job. */
#include <stdlib.h>
#include <string.h>

#include "encode.h"
#include "error.h"
#include "spyre_cmd.h"

static uint32_t args_slots(uint32_t nargs)
{
	return (nargs * 8 + SPYRE_CMD_SIZE - 1) / SPYRE_CMD_SIZE;
}

#define STATS_SLOTS ((SPYRE_STATS_WORDS * 8 + SPYRE_CMD_SIZE - 1) / SPYRE_CMD_SIZE)

uint32_t spyre_node_data_slots(const struct spyre_node *n)
{
	if (n->kind == NODE_LAUNCH)
		return 1 + args_slots(n->nargs) + STATS_SLOTS;
	if (n->kind == NODE_COPY_SG)	/* the timestamps, then the list */
		return 1 + (n->nsg * SPYRE_SG_ENTRY_SIZE + SPYRE_CMD_SIZE - 1) / SPYRE_CMD_SIZE;
	return 1;
}

uint32_t spyre_node_stats_offset(const struct spyre_node *n)
{
	return (1 + args_slots(n->nargs)) * SPYRE_CMD_SIZE;
}

/* The node's own command (between the timestamps). */
static void encode_op(const struct spyre_node *n, uint8_t *cmd, uint8_t *data, uint64_t data_va)
{
	uint64_t args_va = data_va + SPYRE_CMD_SIZE;

	switch (n->kind) {
	case NODE_COPY:
		spyre_cmd_encode3(cmd, SPYRE_OP_DMA_COPY, n->a0, n->a1, n->a2);
		break;
	case NODE_FILL:
		spyre_cmd_encode3(cmd, SPYRE_OP_DMA_FILL, n->a0, n->a1, n->a2);
		break;
	case NODE_COPY_SG:
		for (uint32_t i = 0; i < n->nsg; i++) {
			uint8_t *e = data + SPYRE_CMD_SIZE + (size_t)i * SPYRE_SG_ENTRY_SIZE;

			spyre_put_le64(e, n->sg[3 * i]);
			spyre_put_le64(e + 8, n->sg[3 * i + 1]);
			spyre_put_le64(e + 16, n->sg[3 * i + 2]);
		}
		spyre_cmd_encode3(cmd, SPYRE_OP_DMA_COPY_SG, args_va, n->nsg, 0);
		break;
	case NODE_LAUNCH: {
		struct spyre_cmd launch = {
			.opcode = SPYRE_OP_LAUNCH,
			.args = { n->a0, args_va, (uint64_t)n->nargs * 8,
				  data_va + spyre_node_stats_offset(n) },
		};

		for (uint32_t i = 0; i < n->nargs; i++)
			spyre_put_le64(data + SPYRE_CMD_SIZE + i * 8, n->args[i]);
		spyre_cmd_encode(cmd, &launch);
		break;
	}
	case NODE_MARK:
		if (n->a0)
			spyre_cmd_encode3(cmd, SPYRE_OP_TIMESTAMP, n->a0, 0, 0);
		else
			spyre_cmd_encode3(cmd, SPYRE_OP_NOP, 0, 0, 0);
		break;
	}
}

uint32_t spyre_node_encode(const struct spyre_node *n, uint8_t *cmd, uint8_t *data,
			   uint64_t data_va)
{
	uint32_t slots = spyre_node_data_slots(n);

	memset(data, 0, (size_t)slots * SPYRE_CMD_SIZE);
	spyre_cmd_encode3(cmd, SPYRE_OP_TIMESTAMP, data_va, 0, 0);
	encode_op(n, cmd + SPYRE_CMD_SIZE, data, data_va);
	spyre_cmd_encode3(cmd + 2 * SPYRE_CMD_SIZE, SPYRE_OP_TIMESTAMP, data_va + 8, 0, 0);
	return slots;
}

uint32_t spyre_job_slots(const struct spyre_node *nodes, uint32_t n, uint32_t *ncmds)
{
	uint32_t total = SPYRE_NODE_CMDS * n;

	for (uint32_t i = 0; i < n; i++)
		total += spyre_node_data_slots(&nodes[i]);
	*ncmds = SPYRE_NODE_CMDS * n;
	return total;
}

void spyre_job_encode(const struct spyre_node *nodes, uint32_t n, uint8_t *base, uint64_t va)
{
	uint32_t d = SPYRE_NODE_CMDS * n;

	for (uint32_t i = 0; i < n; i++)
		d += spyre_node_encode(&nodes[i], base + (size_t)SPYRE_NODE_CMDS * i * SPYRE_CMD_SIZE,
				       base + (size_t)d * SPYRE_CMD_SIZE,
				       va + (uint64_t)d * SPYRE_CMD_SIZE);
}

spyre_status spyre_template_build(struct spyre_template *t, const struct spyre_node *nodes,
				  uint32_t n)
{
	uint32_t r = 0;

	memset(t, 0, sizeof(*t));
	t->slots = spyre_job_slots(nodes, n, &t->ncmds);
	if (!n || t->slots > SPYRE_JOB_MAX_SLOTS)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "%u operations need %u command slots; at most %u", n,
				       t->slots, SPYRE_JOB_MAX_SLOTS);
	t->bytes = calloc(t->slots, SPYRE_CMD_SIZE);
	t->relocs = calloc((size_t)4 * n, sizeof(*t->relocs));
	if (!t->bytes || !t->relocs) {
		spyre_template_free(t);
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a graph");
	}
	/* Relative to 0: every ring-relative address is an offset in the job. */
	spyre_job_encode(nodes, n, t->bytes, 0);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t cmd = SPYRE_NODE_CMDS * i * SPYRE_CMD_SIZE + SPYRE_CMD_OFF_ARGS;

		t->relocs[r++] = cmd;				/* TIMESTAMP t0 */
		t->relocs[r++] = cmd + 2 * SPYRE_CMD_SIZE;	/* TIMESTAMP t1 */
		if (nodes[i].kind == NODE_COPY_SG)
			t->relocs[r++] = cmd + SPYRE_CMD_SIZE;	/* the list */
		if (nodes[i].kind == NODE_LAUNCH) {
			t->relocs[r++] = cmd + SPYRE_CMD_SIZE + 8;	/* argument block */
			t->relocs[r++] = cmd + SPYRE_CMD_SIZE + 24;	/* statistics record */
		}
	}
	t->nrelocs = r;
	return SPYRE_SUCCESS;
}

void spyre_template_place(const struct spyre_template *t, uint8_t *base, uint64_t va)
{
	memcpy(base, t->bytes, (size_t)t->slots * SPYRE_CMD_SIZE);
	for (uint32_t i = 0; i < t->nrelocs; i++) {
		uint8_t *p = base + t->relocs[i];

		spyre_put_le64(p, spyre_get_le64(p) + va);
	}
}

void spyre_template_free(struct spyre_template *t)
{
	free(t->bytes);
	free(t->relocs);
	memset(t, 0, sizeof(*t));
}
