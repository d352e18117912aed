/* SPDX-License-Identifier: MIT */
/*
 * Why the card's dataflow engine refused or stopped a LAUNCH: the values of
 * the queue registers ENGINE_STATUS, ENGINE_SITE and ENGINE_WAIT
 * (docs/hardware.md "Why a LAUNCH failed"), shared by the engine, the QEMU
 * device, the driver and libspyre.  docs/engine.md says what causes each.
 */
#ifndef SPYRE_ENGINE_STATUS_H
#define SPYRE_ENGINE_STATUS_H

/*
 * Results of load and run (the ENGINE_STATUS register); values are fixed:
 * they cross the PCI bus and the uapi.
 */
enum spyre_engine_status {
	SPYRE_ENGINE_OK = 0,
	SPYRE_ENGINE_E_TRUNCATED = 1, /* image shorter than its tables */
	SPYRE_ENGINE_E_MAGIC = 2,
	SPYRE_ENGINE_E_VERSION = 3,
	SPYRE_ENGINE_E_RESERVED = 4,  /* a reserved field or flag is not 0 */
	SPYRE_ENGINE_E_CORE_MASK = 5, /* empty, or names a core the card lacks */
	SPYRE_ENGINE_E_TOO_MANY = 6,  /* args, buffers, streams or ops over the limit */
	/* misaligned, empty, or outside the usable scratchpad */
	SPYRE_ENGINE_E_BUFFER = 7,
	SPYRE_ENGINE_E_OVERLAP = 8, /* two buffers share scratchpad bytes */
	/* buffers use more than the core entry declares */
	SPYRE_ENGINE_E_SPAD_DECLARED = 9,
	SPYRE_ENGINE_E_STREAM = 10, /* bad endpoint kind, FIFO, count or dependency */
	/* zero loop, misaligned or overflowing stride, out of its buffer */
	SPYRE_ENGINE_E_PATTERN = 11,
	SPYRE_ENGINE_E_OPCODE = 12, /* unknown opcode */
	SPYRE_ENGINE_E_OP = 13,     /* op parameters out of range */
	SPYRE_ENGINE_E_DTYPE = 14,  /* unknown data type, or one the op does not take */
	/* an op stream without exactly one op at that end */
	SPYRE_ENGINE_E_BINDING = 15,
	SPYRE_ENGINE_E_COUNT = 16, /* a stream's sticks differ from what its ops move */
	SPYRE_ENGINE_E_FIFO_SMALL = 17,    /* a FIFO cannot hold one firing's sticks */
	SPYRE_ENGINE_E_RING = 18,          /* ring sender and receiver do not match */
	SPYRE_ENGINE_E_TOO_MUCH_WORK = 19, /* more work than the configured limit */
	SPYRE_ENGINE_E_ARGS = 20,          /* argument count differs from the header */
	SPYRE_ENGINE_E_ADDRESS = 21,  /* a device-memory range misaligned or past 2^48 */
	SPYRE_ENGINE_E_MEMORY = 22,   /* the device-memory callback failed */
	SPYRE_ENGINE_E_DEADLOCK = 23, /* no stream or op can progress, work remains */
	SPYRE_ENGINE_E_NOMEM = 24,    /* host allocation failed */
	SPYRE_ENGINE_E_INVALID = 25,  /* NULL or inconsistent API arguments */
	SPYRE_ENGINE_E_ABORTED = 26,  /* the caller stopped the run (a device reset) */
	SPYRE_ENGINE_STATUS_COUNT
};

/* What ENGINE_INDEX (spyre_engine_error.index) counts: ENGINE_SITE. */
enum spyre_engine_site {
	SPYRE_ENGINE_AT_NONE = 0, /* the image, the header or a whole core */
	SPYRE_ENGINE_AT_STREAM,
	SPYRE_ENGINE_AT_OP,
	SPYRE_ENGINE_AT_BUFFER,
};

/* Why the stream or op a deadlock names cannot go on: ENGINE_WAIT. */
enum spyre_engine_wait {
	SPYRE_ENGINE_WAIT_NONE = 0,
	SPYRE_ENGINE_WAIT_FIFO_EMPTY, /* its input FIFO holds too few sticks */
	SPYRE_ENGINE_WAIT_FIFO_FULL,  /* its output FIFO has no room */
	SPYRE_ENGINE_WAIT_AFTER,      /* its stream waits for an earlier stream */
	SPYRE_ENGINE_WAIT_RING_FULL,  /* a receiving core's FIFO has no room */
};

/* "SPYRE_ENGINE_E_DEADLOCK" etc.; "SPYRE_ENGINE_STATUS_UNKNOWN" otherwise. */
static inline const char *spyre_engine_status_name(int status)
{
	static const char *const names[SPYRE_ENGINE_STATUS_COUNT] = {
		[SPYRE_ENGINE_OK] = "SPYRE_ENGINE_OK",
		[SPYRE_ENGINE_E_TRUNCATED] = "SPYRE_ENGINE_E_TRUNCATED",
		[SPYRE_ENGINE_E_MAGIC] = "SPYRE_ENGINE_E_MAGIC",
		[SPYRE_ENGINE_E_VERSION] = "SPYRE_ENGINE_E_VERSION",
		[SPYRE_ENGINE_E_RESERVED] = "SPYRE_ENGINE_E_RESERVED",
		[SPYRE_ENGINE_E_CORE_MASK] = "SPYRE_ENGINE_E_CORE_MASK",
		[SPYRE_ENGINE_E_TOO_MANY] = "SPYRE_ENGINE_E_TOO_MANY",
		[SPYRE_ENGINE_E_BUFFER] = "SPYRE_ENGINE_E_BUFFER",
		[SPYRE_ENGINE_E_OVERLAP] = "SPYRE_ENGINE_E_OVERLAP",
		[SPYRE_ENGINE_E_SPAD_DECLARED] = "SPYRE_ENGINE_E_SPAD_DECLARED",
		[SPYRE_ENGINE_E_STREAM] = "SPYRE_ENGINE_E_STREAM",
		[SPYRE_ENGINE_E_PATTERN] = "SPYRE_ENGINE_E_PATTERN",
		[SPYRE_ENGINE_E_OPCODE] = "SPYRE_ENGINE_E_OPCODE",
		[SPYRE_ENGINE_E_OP] = "SPYRE_ENGINE_E_OP",
		[SPYRE_ENGINE_E_DTYPE] = "SPYRE_ENGINE_E_DTYPE",
		[SPYRE_ENGINE_E_BINDING] = "SPYRE_ENGINE_E_BINDING",
		[SPYRE_ENGINE_E_COUNT] = "SPYRE_ENGINE_E_COUNT",
		[SPYRE_ENGINE_E_FIFO_SMALL] = "SPYRE_ENGINE_E_FIFO_SMALL",
		[SPYRE_ENGINE_E_RING] = "SPYRE_ENGINE_E_RING",
		[SPYRE_ENGINE_E_TOO_MUCH_WORK] = "SPYRE_ENGINE_E_TOO_MUCH_WORK",
		[SPYRE_ENGINE_E_ARGS] = "SPYRE_ENGINE_E_ARGS",
		[SPYRE_ENGINE_E_ADDRESS] = "SPYRE_ENGINE_E_ADDRESS",
		[SPYRE_ENGINE_E_MEMORY] = "SPYRE_ENGINE_E_MEMORY",
		[SPYRE_ENGINE_E_DEADLOCK] = "SPYRE_ENGINE_E_DEADLOCK",
		[SPYRE_ENGINE_E_NOMEM] = "SPYRE_ENGINE_E_NOMEM",
		[SPYRE_ENGINE_E_INVALID] = "SPYRE_ENGINE_E_INVALID",
		[SPYRE_ENGINE_E_ABORTED] = "SPYRE_ENGINE_E_ABORTED",
	};

	if (status < 0 || status >= SPYRE_ENGINE_STATUS_COUNT)
		return "SPYRE_ENGINE_STATUS_UNKNOWN";
	return names[status];
}

#endif /* SPYRE_ENGINE_STATUS_H */
