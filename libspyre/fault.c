// SPDX-License-Identifier: MIT
/*
 * A failed job in words.  The driver's fault record gives the address and
 * the reason; the node gives the operands, so the message can say which
 * one the address belongs to.
 */
#include <stdio.h>
#include <string.h>

#include "driver.h"
#include "fault.h"
#include "spyre_engine_status.h"
#include "spyre_regs.h"

static const char *job_status_text(uint32_t status)
{
	switch (status) {
	case DRM_SPYRE_JOB_STATUS_MMU_FAULT:
		return "MMU fault";
	case DRM_SPYRE_JOB_STATUS_FAILED:
		return "a command failed";
	case DRM_SPYRE_JOB_STATUS_TIMEOUT:
		return "hung; the card was reset";
	case DRM_SPYRE_JOB_STATUS_ABORTED:
		return "aborted (lost to a reset or a failed dependency)";
	default:
		return "did not complete";
	}
}

static const char *reason_text(uint32_t reason)
{
	switch (reason) {
	case DRM_SPYRE_FAULT_REASON_NOT_PRESENT:
		return "nothing mapped there";
	case DRM_SPYRE_FAULT_REASON_PERMISSION:
		return "the buffer is read-only";
	case DRM_SPYRE_FAULT_REASON_BAD_ENTRY:
		return "bad page table entry";
	case DRM_SPYRE_FAULT_REASON_TABLE_FETCH:
		return "page table unreadable";
	case DRM_SPYRE_FAULT_REASON_NO_CONTEXT:
		return "no address space";
	default:
		return "unknown reason";
	}
}

/* The operation's device addresses: copy source/destination, kernel arguments. */
static uint32_t node_operands(const struct spyre_node *n, uint64_t va[SPYRE_NODE_MAX_ARGS],
			      uint64_t len[SPYRE_NODE_MAX_ARGS])
{
	uint32_t count = 0;

	if (n->kind == NODE_COPY || n->kind == NODE_COPY_SG) {
		va[0] = n->a0;
		va[1] = n->a1;
		len[0] = len[1] = n->a2;
		count = 2;
	} else if (n->kind == NODE_FILL) {
		va[0] = n->a0;
		len[0] = n->a1;
		count = 1;
	} else if (n->kind == NODE_LAUNCH) {
		count = n->nargs < SPYRE_NODE_MAX_ARGS ? n->nargs : SPYRE_NODE_MAX_ARGS;
		for (uint32_t i = 0; i < count; i++) {
			va[i] = n->args[i];
			len[i] = 0;	/* a kernel argument's extent is the kernel's business */
		}
	}
	return count;
}

static const char *operand_name(const struct spyre_node *n, int i, char *buf, size_t size)
{
	if (n->kind == NODE_LAUNCH)
		snprintf(buf, size, "argument %d", i);
	else
		snprintf(buf, size, "%s", n->kind == NODE_FILL || i == 1 ? "destination" : "source");
	return buf;
}

/*
 * The operand the fault hit: a copy's or fill's range holding @addr, else
 * the operand at or nearest below it (a kernel argument's extent is not
 * known); -1 if every operand is above it.
 */
static int fault_operand(const struct spyre_node *n, uint64_t addr)
{
	uint64_t va[SPYRE_NODE_MAX_ARGS], len[SPYRE_NODE_MAX_ARGS];
	uint32_t count = node_operands(n, va, len);
	int best = -1;

	for (uint32_t i = 0; i < count; i++)
		if (len[i] && addr >= va[i] && addr - va[i] < len[i])
			return (int)i;
	for (uint32_t i = 0; i < count; i++)
		if (va[i] <= addr && (best < 0 || va[i] > va[best]))
			best = (int)i;
	return best;
}

/*
 * Without the driver's record (a driver before DRM_SPYRE_QUERY_FAULTS):
 * name the operation's first address that no live buffer of the device
 * holds, which is usually it.
 */
static void unmapped_hint(spyre_device *dev, const struct spyre_node *n, char *out, size_t size)
{
	uint64_t va[SPYRE_NODE_MAX_ARGS], len[SPYRE_NODE_MAX_ARGS];
	uint32_t count = node_operands(n, va, len);
	char name[32];

	for (uint32_t i = 0; i < count; i++) {
		if (spyre_device_va_mapped(dev, va[i]))
			continue;
		snprintf(out, size, "; %s = 0x%llx is in no live buffer (a guess: the driver "
			 "did not report the address)",
			 operand_name(n, (int)i, name, sizeof(name)), (unsigned long long)va[i]);
		return;
	}
}

/* The card's fault record in words, and which operand it hit. */
static void fault_text(const struct spyre_node *n, const struct drm_spyre_fault *f, char *out,
		       size_t size)
{
	int op = fault_operand(n, f->device_addr);
	char name[32], where[96] = "";

	if (op >= 0) {
		uint64_t va[SPYRE_NODE_MAX_ARGS], len[SPYRE_NODE_MAX_ARGS];

		node_operands(n, va, len);
		snprintf(where, sizeof(where), " (%s = 0x%llx, +0x%llx)",
			 operand_name(n, op, name, sizeof(name)), (unsigned long long)va[op],
			 (unsigned long long)(f->device_addr - va[op]));
	}
	snprintf(out, size, "; the card faulted on a %s of 0x%llx%s: %s%s",
		 f->access == DRM_SPYRE_FAULT_ACCESS_WRITE ? "write" : "read",
		 (unsigned long long)f->device_addr, where, reason_text(f->reason),
		 (f->flags & DRM_SPYRE_FAULT_MORE) ? " (and more faults after it)" : "");
}

/* An MMU fault's address, access and reason, and the hint text. */
static void explain_mmu_fault(spyre_device *dev, const struct spyre_fault_site *site,
			      const struct spyre_node *n, spyre_fault_info *info, char *hint,
			      size_t size)
{
	struct drm_spyre_fault f;

	if (!spyre_driver_fault_record(dev, site->queue, site->job_id, &f)) {
		unmapped_hint(dev, n, hint, size);
		return;
	}
	info->address_known = 1;
	info->address = f.device_addr;
	info->access = (spyre_fault_access)f.access;
	info->reason = (spyre_fault_reason)f.reason;
	info->more = !!(f.flags & DRM_SPYRE_FAULT_MORE);
	info->operand = fault_operand(n, f.device_addr);
	fault_text(n, &f, hint, size);
}

static const char *cmd_status_text(uint32_t status)
{
	switch (status) {
	case SPYRE_CMD_STATUS_BAD_OPCODE:
		return "bad opcode";
	case SPYRE_CMD_STATUS_BAD_ARGUMENT:
		return "bad argument";
	case SPYRE_CMD_STATUS_MMU_FAULT:
		return "MMU fault";
	case SPYRE_CMD_STATUS_DMA_ERROR:
		return "DMA error";
	case SPYRE_CMD_STATUS_UNSUPPORTED:
		return "unsupported";
	case SPYRE_CMD_STATUS_ABORTED:
		return "aborted by a reset";
	case SPYRE_CMD_STATUS_TIMEOUT:
		return "wait timed out";
	case SPYRE_CMD_STATUS_BAD_PROGRAM:
		return "kernel refused";
	case SPYRE_CMD_STATUS_DEADLOCK:
		return "deadlock";
	default:
		return "unknown status";
	}
}

static const char *engine_site_text(uint32_t site)
{
	switch (site) {
	case SPYRE_ENGINE_AT_STREAM:
		return "stream";
	case SPYRE_ENGINE_AT_OP:
		return "op";
	case SPYRE_ENGINE_AT_BUFFER:
		return "buffer";
	default:
		return NULL;
	}
}

static int engine_field(uint32_t v)
{
	return v == DRM_SPYRE_NONE ? -1 : (int)v;
}

/* The engine's record of a failed LAUNCH into @info. */
static void engine_info(const struct drm_spyre_job_error *je, spyre_fault_info *info)
{
	info->engine_status = je->engine_status;
	snprintf(info->engine_status_name, sizeof(info->engine_status_name), "%s",
		 spyre_engine_status_name((int)je->engine_status));
	info->engine_core = engine_field(je->engine_core);
	info->engine_site = je->engine_site;
	info->engine_index = engine_field(je->engine_index);
	info->engine_wait = je->engine_wait;
	info->engine_stream = engine_field(je->engine_stream);
	info->sticks_done = je->engine_sticks_done;
	info->sticks_total = je->engine_sticks_total;
	snprintf(info->engine_detail, sizeof(info->engine_detail), "%s", je->engine_detail);
}

/* "core 3 stream 5: " / "core 3: " / "": where in the kernel it failed. */
static void engine_where(const spyre_fault_info *info, char *out, size_t size)
{
	const char *site = engine_site_text(info->engine_site);
	int n = 0;

	out[0] = '\0';
	if (info->engine_core >= 0)
		n = snprintf(out, size, "core %d", info->engine_core);
	if (site && info->engine_index >= 0 && n >= 0 && (size_t)n < size)
		n += snprintf(out + n, size - (size_t)n, "%s%s %d", n ? " " : "", site,
			      info->engine_index);
	if (n > 0 && (size_t)n < size)
		snprintf(out + n, size - (size_t)n, ": ");
}

/* What the engine said, as a sentence about kernel @name. */
static void engine_text(const char *name, const spyre_fault_info *info, uint32_t job_status,
			char *out, size_t size)
{
	char where[64];

	if (info->engine_status == SPYRE_ENGINE_E_DEADLOCK) {
		/* The deadlock detail starts with the stuck op or stream itself. */
		if (info->engine_core >= 0)
			snprintf(where, sizeof(where), "core %d ", info->engine_core);
		else
			where[0] = '\0';
		snprintf(out, size, "kernel '%s' deadlocked: %s%s", name, where,
			 info->engine_detail);
		return;
	}
	engine_where(info, where, sizeof(where));
	if (info->engine_status == SPYRE_ENGINE_E_MEMORY)
		snprintf(out, size, "kernel '%s' could not reach device memory (%s): %s%s", name,
			 job_status_text(job_status), where, info->engine_detail);
	else
		snprintf(out, size, "kernel '%s' was refused by the card's engine (%s): %s%s", name,
			 info->engine_status_name, where, info->engine_detail);
}

/*
 * The card's record of why the job failed, into @info: the failing
 * command (so the node is the card's word, not a guess) and, for a LAUNCH,
 * the engine's record.  Returns the failed node.
 */
static const struct spyre_node *card_record(spyre_device *dev, const struct spyre_fault_site *site,
					    spyre_fault_info *info)
{
	struct drm_spyre_job_error je;
	uint32_t index = site->unfinished;

	if (spyre_driver_job_error(dev, site->queue, site->job_id, &je)) {
		info->card_reported = 1;
		info->command_status = je.cmd_status;
		/* Every node is SPYRE_NODE_CMDS commands (encode.h). */
		if (je.command / SPYRE_NODE_CMDS < site->nnodes)
			index = je.command / SPYRE_NODE_CMDS;
		if (je.engine_status)
			engine_info(&je, info);
	}
	info->operation_index = index;
	return &site->nodes[index];
}

void spyre_fault_explain(spyre_device *dev, const struct spyre_fault_site *site,
			 uint32_t job_status, spyre_fault_info *info, char *detail,
			 size_t detail_size)
{
	const struct spyre_node *n;
	const char *name;
	char hint[256] = "", what[320];

	memset(info, 0, sizeof(*info));
	info->status = job_status == DRM_SPYRE_JOB_STATUS_TIMEOUT ? SPYRE_ERROR_TIMEOUT :
								    SPYRE_ERROR_DEVICE_FAULT;
	info->job_status = job_status;
	info->job = site->point;
	info->driver_job_id = site->job_id;
	info->queue = site->queue;
	info->operand = -1;
	info->engine_core = info->engine_index = info->engine_stream = -1;
	n = card_record(dev, site, info);
	name = n->name ? n->name : "operation";
	snprintf(info->operation, sizeof(info->operation), "%s", name);
	if (job_status == DRM_SPYRE_JOB_STATUS_MMU_FAULT)
		explain_mmu_fault(dev, site, n, info, hint, sizeof(hint));
	if (info->engine_status)
		engine_text(name, info, job_status, what, sizeof(what));
	else if (n->kind == NODE_COPY || n->kind == NODE_COPY_SG || n->kind == NODE_FILL)
		snprintf(what, sizeof(what), "%s of %llu bytes failed on the card: %s", name,
			 (unsigned long long)n->bytes, job_status_text(job_status));
	else
		snprintf(what, sizeof(what), "%s failed on the card: %s", name,
			 job_status_text(job_status));
	if (info->card_reported && !info->engine_status &&
	    job_status != DRM_SPYRE_JOB_STATUS_MMU_FAULT)
		snprintf(hint, sizeof(hint), "; the card's command status: %u (%s)",
			 info->command_status, cmd_status_text(info->command_status));
	snprintf(detail, detail_size, "%s: stream %u, job %llu, operation %u: %s (job status %u)%s",
		 dev->props.devnode, site->stream_tid, (unsigned long long)site->point,
		 info->operation_index, what, job_status, hint);
}
