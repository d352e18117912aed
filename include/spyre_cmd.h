/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * The card's 64-byte command, as code: the one encoder and decoder of the
 * layout spyre_regs.h defines (SPYRE_CMD_OFF_*), and the little-endian
 * loads and stores everything that talks to the card uses.  Byte by byte,
 * so they are right on any host and at any alignment.  The driver, the
 * QEMU device, libspyre and the tests include this unchanged.
 */
#ifndef SPYRE_CMD_H
#define SPYRE_CMD_H

#ifdef __KERNEL__
#include <linux/string.h>
#include <linux/types.h>
#else
#include <stdint.h>
#include <string.h>
#endif

#include "spyre_regs.h"

static inline void spyre_put_le32(uint8_t *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void spyre_put_le64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t spyre_get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t spyre_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t spyre_get_le64(const uint8_t *p)
{
	return (uint64_t)spyre_get_le32(p) | (uint64_t)spyre_get_le32(p + 4) << 32;
}

/* One command, decoded.  Fields a command does not use are 0. */
struct spyre_cmd {
	uint8_t opcode;		/* SPYRE_OP_* */
	uint8_t flags;		/* SPYRE_CMD_FLAGS_ALL bits */
	uint16_t reserved;	/* bytes 2-3: must be 0 */
	uint32_t status;	/* SPYRE_CMD_STATUS_*: 0 when written, the device's result */
	uint64_t args[SPYRE_CMD_NUM_ARGS];
};

/* Write @cmd as the SPYRE_CMD_SIZE bytes at @raw. */
static inline void spyre_cmd_encode(uint8_t *raw, const struct spyre_cmd *cmd)
{
	int i;

	memset(raw, 0, SPYRE_CMD_SIZE);
	raw[SPYRE_CMD_OFF_OPCODE] = cmd->opcode;
	raw[SPYRE_CMD_OFF_FLAGS] = cmd->flags;
	raw[2] = (uint8_t)cmd->reserved;
	raw[3] = (uint8_t)(cmd->reserved >> 8);
	spyre_put_le32(raw + SPYRE_CMD_OFF_STATUS, cmd->status);
	for (i = 0; i < SPYRE_CMD_NUM_ARGS; i++)
		spyre_put_le64(raw + SPYRE_CMD_OFF_ARGS + 8 * i, cmd->args[i]);
}

/* Read the SPYRE_CMD_SIZE bytes at @raw into @cmd. */
static inline void spyre_cmd_decode(const uint8_t *raw, struct spyre_cmd *cmd)
{
	int i;

	cmd->opcode = raw[SPYRE_CMD_OFF_OPCODE];
	cmd->flags = raw[SPYRE_CMD_OFF_FLAGS];
	cmd->reserved = spyre_get_le16(raw + 2);
	cmd->status = spyre_get_le32(raw + SPYRE_CMD_OFF_STATUS);
	for (i = 0; i < SPYRE_CMD_NUM_ARGS; i++)
		cmd->args[i] = spyre_get_le64(raw + SPYRE_CMD_OFF_ARGS + 8 * i);
}

/* The usual case: @opcode with up to three arguments, the rest 0. */
static inline void spyre_cmd_encode3(uint8_t *raw, uint8_t opcode, uint64_t a0,
				     uint64_t a1, uint64_t a2)
{
	struct spyre_cmd cmd = { .opcode = opcode, .args = { a0, a1, a2 } };

	spyre_cmd_encode(raw, &cmd);
}

#endif /* SPYRE_CMD_H */
