/* SPDX-License-Identifier: MIT */
/*
 * libspyre: the runtime for IBM Spyre AI accelerator cards.
 *
 * Every call returns a spyre_status.  On failure, spyre_strerror() names the
 * code and spyre_last_error_detail() holds a message about the failing call
 * made on the calling thread.
 *
 * Thread safety: spyre_strerror(), spyre_last_error_detail(),
 * spyre_version() and the device discovery calls (spyre_device_count(),
 * spyre_device_open*()) may be called from any thread at any time.  A
 * spyre_device may be used from many threads at once (buffers, streams,
 * copies, launches, events, graphs; see "Runtime objects" below);
 * spyre_device_close() must not race with any other use of that device.
 *
 * docs/runtime.md describes the API, its ordering rules and environment
 * variables.
 */
#ifndef SPYRE_SPYRE_H
#define SPYRE_SPYRE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this header; spyre_version() gives the library's. */
#define SPYRE_VERSION_MAJOR 0
#define SPYRE_VERSION_MINOR 6
#define SPYRE_VERSION_PATCH 0

typedef enum spyre_status {
	SPYRE_SUCCESS = 0,
	SPYRE_ERROR_INVALID_ARGUMENT = 1,	/* a NULL, out-of-range or malformed argument */
	SPYRE_ERROR_NO_DEVICE = 2,		/* no such card, or it went away */
	SPYRE_ERROR_PERMISSION = 3,		/* the device node cannot be opened by this user */
	SPYRE_ERROR_OUT_OF_MEMORY = 4,		/* host memory ran out */
	SPYRE_ERROR_DRIVER = 5,			/* the driver refused a request */
	SPYRE_ERROR_VERSION_MISMATCH = 6,	/* driver or card interface this library does not know */
	SPYRE_ERROR_SYSTEM = 7,			/* the OS failed (udev, sysfs, file descriptors) */
	SPYRE_ERROR_NOT_READY = 8,		/* query: work is still pending (not a failure) */
	SPYRE_ERROR_INVALID_HANDLE = 9,		/* a freed, destroyed or never-created object */
	SPYRE_ERROR_OUT_OF_DEVICE_MEMORY = 10,	/* card memory or device address space ran out */
	SPYRE_ERROR_DEVICE_FAULT = 11,		/* queued work failed on the card (MMU fault, bad command) */
	SPYRE_ERROR_TIMEOUT = 12,		/* queued work hung; the card was reset */
	SPYRE_ERROR_DEVICE_LOST = 13,		/* the device refuses work after a fault: reopen it */
	SPYRE_ERROR_CAPTURE = 14,		/* not allowed while (or unless) the stream captures */
} spyre_status;

/* Human-readable text for a status; never NULL, also for unknown codes. */
const char *spyre_strerror(spyre_status status);

/* The status' enumerator name ("SPYRE_ERROR_NO_DEVICE"); never NULL. */
const char *spyre_status_name(spyre_status status);

/*
 * Detail about the last failing call on this thread ("open /dev/accel/accel0:
 * Permission denied"); "" if none failed.  Valid until the next libspyre
 * call on this thread.
 */
const char *spyre_last_error_detail(void);

/* Library version, as major << 16 | minor << 8 | patch. */
uint32_t spyre_version(void);

typedef struct spyre_device spyre_device;

#define SPYRE_PCI_ADDRESS_LEN	16	/* "dddd:bb:dd.f" and NUL */
#define SPYRE_PATH_LEN		64

/* What a card is; filled by spyre_device_get_properties(). */
typedef struct spyre_device_properties {
	char pci_address[SPYRE_PCI_ADDRESS_LEN];
	char devnode[SPYRE_PATH_LEN];		/* "/dev/accel/accel0" */
	char driver_name[32];
	int driver_version_major;
	int driver_version_minor;
	uint32_t vendor_id;
	uint32_t device_id;
	uint32_t revision;
	uint32_t hw_version_major;		/* card interface version */
	uint32_t hw_version_minor;
	uint32_t num_cores;
	uint32_t stick_bytes;
	uint64_t scratchpad_bytes;		/* per core */
	uint64_t mem_bytes;			/* device memory */
	uint32_t num_irq_vectors;
	int irq_selftest_passed;		/* the driver's probe-time check */
} spyre_device_properties;

/* Number of Spyre cards with a driver bound that SPYRE_VISIBLE_DEVICES lets
 * this process see (all of them if unset). */
spyre_status spyre_device_count(int *count);

/* Open the index-th card, ordered by PCI address (or by the order of
 * SPYRE_VISIBLE_DEVICES if set).  Several cards may be open at once, and one
 * card may be opened several times (each open is its own address space). */
spyre_status spyre_device_open(int index, spyre_device **device);

/* Open the card at a PCI address: "0000:01:00.0" or "01:00.0". */
spyre_status spyre_device_open_pci(const char *pci_address, spyre_device **device);

spyre_status spyre_device_get_properties(spyre_device *device,
					 spyre_device_properties *props);

/*
 * What the card's clock counts (since 0.4): every card time the library
 * reports (events' elapsed time, a launch profile's start_ns and end_ns,
 * trace timestamps) is on it.  docs/runtime.md "Which time is which".
 */
typedef enum spyre_clock {
	SPYRE_CLOCK_WALL = 0,		/* the emulator's own time (the default) */
	SPYRE_CLOCK_MODELLED = 1	/* what the real card would take (the timing model) */
} spyre_clock;

/* The clock the card runs now; an administrator may switch it at any time
 * (/sys/bus/pci/devices/<pci>/spyre/timestamp_clock). */
spyre_status spyre_device_get_clock(spyre_device *device, spyre_clock *clock);

/* Close a device; NULL is accepted and does nothing.  Waits for its
 * streams' work, then frees every object still alive on it (buffers,
 * streams, events, kernels, graphs); their handles become invalid. */
spyre_status spyre_device_close(spyre_device *device);

/* ------------------------------------------------------------------------
 * Runtime objects.  docs/runtime.md describes ordering and lifetimes.
 *
 * Handles: every object below is an opaque pointer.  The library keeps a
 * registry of live objects, so passing a freed or destroyed object (or one
 * that was never created) returns SPYRE_ERROR_INVALID_HANDLE instead of
 * touching freed memory; passing an object of another device returns
 * SPYRE_ERROR_INVALID_ARGUMENT.  Freeing an object while another thread is
 * using it in a call is not allowed.
 *
 * Thread safety, unless a call says otherwise: any call may be made from
 * any thread, concurrently with calls on other objects and with calls on
 * the same stream (a stream serialises its callers internally; the order
 * in which two threads' work enters one stream is the order their calls
 * took the stream's lock).  Destroy/free calls must not race with other
 * uses of the same object.
 * ------------------------------------------------------------------------ */

typedef struct spyre_buffer spyre_buffer;	/* device memory or pinned host memory */
typedef struct spyre_stream spyre_stream;
typedef struct spyre_kernel spyre_kernel;	/* a loaded program image */
typedef struct spyre_event spyre_event;
typedef struct spyre_graph spyre_graph;		/* captured work */
typedef struct spyre_graph_exec spyre_graph_exec;	/* an instantiated graph */

/* Buffer flags. */
#define SPYRE_MEM_DEVICE	0x0	/* card memory (default) */
#define SPYRE_MEM_HOST		0x1	/* pinned host memory the card can DMA; mappable */
#define SPYRE_MEM_MAPPABLE	0x2	/* device memory the CPU may map (through the BAR) */

/*
 * Allocate @bytes (1 .. 16 GiB; rounded up to 4 KiB) of memory.  Device
 * buffers start zeroed.  SPYRE_MEM_HOST and SPYRE_MEM_MAPPABLE are mutually
 * exclusive.  Errors: INVALID_ARGUMENT (also: larger than the card's memory,
 * or a MAPPABLE one larger than the BAR window), OUT_OF_DEVICE_MEMORY (a
 * device buffer: card memory or device address space ran out),
 * OUT_OF_MEMORY (a host buffer), DEVICE_LOST.
 */
spyre_status spyre_buffer_alloc(spyre_device *dev, uint64_t bytes, uint32_t flags,
				spyre_buffer **buf);

/* Free a buffer; NULL is accepted.  Work already queued that uses it (on
 * any stream) runs on the buffer as it was: the call waits for that work,
 * then frees.  (Before 0.2 it did not wait and such work could fault.) */
spyre_status spyre_buffer_free(spyre_buffer *buf);

/* Requested size in bytes (0 for an invalid handle). */
uint64_t spyre_buffer_size(const spyre_buffer *buf);

/* The device the buffer belongs to (NULL for an invalid handle). */
spyre_device *spyre_buffer_device(const spyre_buffer *buf);

/* The buffer's SPYRE_MEM_* flags. */
uint32_t spyre_buffer_flags(const spyre_buffer *buf);

/* The buffer's device virtual address (what kernel arguments hold). */
uint64_t spyre_buffer_device_address(const spyre_buffer *buf);

/*
 * CPU pointer to a SPYRE_MEM_HOST or SPYRE_MEM_MAPPABLE buffer (mapped at
 * allocation, valid until the buffer is freed); INVALID_ARGUMENT for plain
 * device buffers.  The card and CPU see the same memory: read results only
 * after synchronising with the work that wrote them.
 */
spyre_status spyre_buffer_map(spyre_buffer *buf, void **ptr);

/* ------------------------------------------------------------------------
 * Streams: in-order queues of work on one device.
 * ------------------------------------------------------------------------ */

/* Stream priorities: the card's hardware queue the stream submits to.
 * Queues run concurrently; the DMA engine serves the highest priority
 * first.  Streams with the same priority share a hardware queue, so their
 * work runs in submission order relative to each other. */
#define SPYRE_STREAM_PRIORITY_LOW	0
#define SPYRE_STREAM_PRIORITY_NORMAL	1
#define SPYRE_STREAM_PRIORITY_HIGH	2
#define SPYRE_STREAM_PRIORITY_HIGHEST	3

/* Create a stream; @priority is 0 .. 3 (SPYRE_STREAM_PRIORITY_*). */
spyre_status spyre_stream_create(spyre_device *dev, int priority, spyre_stream **s);

/* Wait for the stream's work, then destroy it; NULL is accepted.  Returns a
 * pending async fault of the stream, if any (the stream is destroyed anyway). */
spyre_status spyre_stream_destroy(spyre_stream *s);

/*
 * Wait until all work queued on @s has finished and complete its host side
 * (deferred dtoh copies, profiles, trace records).  An async fault of any of
 * that work (MMU fault, failed command, hang) is returned here as
 * SPYRE_ERROR_DEVICE_FAULT or SPYRE_ERROR_TIMEOUT with the fault in the
 * thread's detail message; the device then refuses new work
 * (SPYRE_ERROR_DEVICE_LOST): close and reopen it.
 */
spyre_status spyre_stream_synchronize(spyre_stream *s);

/* SPYRE_SUCCESS if every piece of work on @s has finished (its host side is
 * then completed too), SPYRE_ERROR_NOT_READY if some is pending, or the
 * stream's async fault.  Never blocks on the card. */
spyre_status spyre_stream_query(spyre_stream *s);

spyre_device *spyre_stream_device(const spyre_stream *s);

/* How the card touched the address it faulted on. */
typedef enum spyre_fault_access {
	SPYRE_FAULT_ACCESS_UNKNOWN = 0,	/* not reported (not an MMU fault, or an old driver) */
	SPYRE_FAULT_ACCESS_READ = 1,
	SPYRE_FAULT_ACCESS_WRITE = 2
} spyre_fault_access;

/* Why the card's MMU refused the address. */
typedef enum spyre_fault_reason {
	SPYRE_FAULT_REASON_UNKNOWN = 0,	/* not reported */
	SPYRE_FAULT_REASON_NOT_PRESENT = 1,	/* no buffer of this device open is mapped there */
	SPYRE_FAULT_REASON_PERMISSION = 2,	/* a write to a read-only buffer */
	SPYRE_FAULT_REASON_BAD_ENTRY = 3,	/* a corrupt page table entry (a driver bug) */
	SPYRE_FAULT_REASON_TABLE_FETCH = 4,	/* a page table could not be read */
	SPYRE_FAULT_REASON_NO_CONTEXT = 5	/* the job ran without an address space */
} spyre_fault_reason;

/*
 * A stream's async fault, as the card reported it (since 0.2).
 * spyre_stream_get_fault() writes every field.
 */
typedef struct spyre_fault_info {
	spyre_status status;		/* SPYRE_SUCCESS: no fault on the stream (nothing
					 * else is set); else what synchronize returns */
	uint32_t job_status;		/* the driver's job status: 1 a command failed, 2 MMU
					 * fault, 3 hung (the card was reset) */
	uint64_t job;			/* the stream's job that failed: 1 = its first */
	uint64_t driver_job_id;		/* the driver's id of that job on its queue */
	uint32_t queue;			/* the card's queue the stream submits to */
	int address_known;		/* 1: the card reported the fault's address, and
					 * address, access, reason and more are set */
	uint64_t address;		/* device address the card could not reach */
	spyre_fault_access access;
	spyre_fault_reason reason;
	int more;			/* the card dropped faults that came after it */
	int operand;			/* the failed operation's operand at or nearest below
					 * @address: a kernel argument's index, or 0 (source) /
					 * 1 (destination) of a copy or fill; -1 if none */
	char operation[64];		/* the failed operation: a kernel's name, "htod"... */
	/* Since 0.4: what the card said about the failing command (driver 0.3+). */
	int card_reported;		/* 1: the fields below are the card's; 0: an older
					 * driver, and the operation is a guess (the first
					 * one that did not finish) */
	uint32_t command_status;	/* the card's status of the failing command: 9 the
					 * engine refused the kernel, 10 it deadlocked, 4 MMU
					 * fault ... (docs/hardware.md "Command status") */
	uint32_t operation_index;	/* the failing operation's place in its job (0 = the
					 * first; a graph's node in the order it was captured) */
	uint32_t engine_status;		/* a LAUNCH the engine refused or that deadlocked:
					 * SPYRE_ENGINE_E_* of <spyre/spyre_engine_status.h>;
					 * 0 for any other failure (the engine_* fields are
					 * then unset) */
	char engine_status_name[32];	/* "SPYRE_ENGINE_E_DEADLOCK", ... or "" */
	int engine_core;		/* the core the failure is about, -1 if none */
	uint32_t engine_site;		/* what engine_index counts: SPYRE_ENGINE_AT_STREAM,
					 * _OP, _BUFFER or _NONE */
	int engine_index;		/* that stream, op or buffer; -1 if none */
	uint32_t engine_wait;		/* deadlock: SPYRE_ENGINE_WAIT_* (FIFO empty ...) */
	int engine_stream;		/* deadlock: the stream waited on, -1 if none */
	uint32_t sticks_done;		/* deadlock: sticks that entered that stream ... */
	uint32_t sticks_total;		/* ... of the sticks it carries */
	char engine_detail[128];	/* the engine's own words, "" if none */
} spyre_fault_info;

/*
 * Fill @info with the stream's async fault, if any (since 0.2).  Like
 * spyre_stream_query() it never blocks and first completes the host side of
 * finished work, so a fault that has happened is seen; unlike it, it
 * returns SPYRE_SUCCESS whether or not there is a fault (info->status
 * says).  The fault stays: synchronising calls go on returning it.  The
 * address, access and reason come from the driver's record of the file's
 * MMU faults (DRM_SPYRE_QUERY_FAULTS); with a driver that predates it,
 * address_known is 0.
 */
spyre_status spyre_stream_get_fault(spyre_stream *s, spyre_fault_info *info);

/* ------------------------------------------------------------------------
 * Copies and fills.
 *
 * Blocking copies return once the data has arrived; they wait for earlier
 * queued work that uses the same buffers (the driver orders jobs by the
 * buffers they use) but are on no stream.
 *
 * Asynchronous copies run in stream order.  For plain (pageable) host
 * memory they stage through pinned bounce buffers:
 *  - htod_async reads @src during the call: the caller may reuse it as
 *    soon as the call returns.
 *  - dtoh_async writes @dst when the stream is synchronised (by
 *    spyre_stream_synchronize(), a spyre_stream_query() that returns
 *    SUCCESS, or spyre_event_synchronize() of a later event on the stream):
 *    the caller must not read or write @dst before then.
 * Host pointers inside a SPYRE_MEM_HOST buffer's mapping are not staged:
 * the card reads or writes them directly when the stream reaches the copy.
 * Copies of any size are split into chunks internally.
 * Errors: INVALID_ARGUMENT (NULL, range outside the buffer, 0 bytes is
 * allowed and does nothing), INVALID_HANDLE, DEVICE_LOST, CAPTURE.
 * ------------------------------------------------------------------------ */
spyre_status spyre_memcpy_htod_async(spyre_stream *s, spyre_buffer *dst, uint64_t dst_offset,
				     const void *src, uint64_t bytes);
spyre_status spyre_memcpy_dtoh_async(spyre_stream *s, void *dst, spyre_buffer *src,
				     uint64_t src_offset, uint64_t bytes);
/* Buffer to buffer (device or host buffers, same device; ranges must not
 * overlap). */
spyre_status spyre_memcpy_dtod_async(spyre_stream *s, spyre_buffer *dst, uint64_t dst_offset,
				     spyre_buffer *src, uint64_t src_offset, uint64_t bytes);
/* Fill @bytes at @offset with the 64-bit little-endian @pattern repeated
 * (byte 0 of the pattern at @offset). */
spyre_status spyre_memset64_async(spyre_stream *s, spyre_buffer *buf, uint64_t offset,
				  uint64_t pattern, uint64_t bytes);

spyre_status spyre_memcpy_htod(spyre_buffer *dst, uint64_t dst_offset, const void *src,
			       uint64_t bytes);	/* blocking */
spyre_status spyre_memcpy_dtoh(void *dst, spyre_buffer *src, uint64_t src_offset,
			       uint64_t bytes);	/* blocking */
spyre_status spyre_memcpy_dtod(spyre_buffer *dst, uint64_t dst_offset, spyre_buffer *src,
			       uint64_t src_offset, uint64_t bytes);	/* blocking */
spyre_status spyre_memset64(spyre_buffer *buf, uint64_t offset, uint64_t pattern,
			    uint64_t bytes);	/* blocking */

/*
 * Peer copies (since 0.5): @bytes from @src (device or host buffer of any
 * device open: another card, or another open of the same card) to @dst,
 * without staging through this process's memory.  The source card DMAs
 * into pinned host buffers that both opens map (PRIME), the destination
 * card DMAs out of them, in chunks of 1 to 16 MiB, two in flight, so both
 * cards work at once.  The async form queues the destination's jobs on
 * @dst_stream, which must be of @dst's device open: the stream's later work
 * (and events recorded after the call) waits for the copy.  The source
 * side runs on a stream of the library's own on @src's open, after every
 * job queued earlier that uses @src (on any stream of that open).  Both
 * buffers of one open: a plain dtod copy.  Not capturable.  Errors as for
 * the copies above; a stream of another open than @dst's is
 * INVALID_ARGUMENT.  docs/runtime.md "Peer copies".
 */
spyre_status spyre_memcpy_peer_async(spyre_stream *dst_stream, spyre_buffer *dst,
				     uint64_t dst_offset, spyre_buffer *src, uint64_t src_offset,
				     uint64_t bytes);
spyre_status spyre_memcpy_peer(spyre_buffer *dst, uint64_t dst_offset, spyre_buffer *src,
			       uint64_t src_offset, uint64_t bytes);	/* blocking */

/*
 * Strided copies (since 0.6): the @ndim-dimensional array (1 ..
 * SPYRE_COPY_MAX_DIMS dims, outermost first) of @elem_bytes-byte elements
 * (1, 2, 4, 8 or 16) at @src + @src_offset, element (i0, ..) at byte
 * sum(ik * src_strides[k]), copied to the same element of @dst +
 * @dst_offset laid out by @dst_strides (bytes, like the source's).  Both
 * buffers of the stream's device (device or host buffers).  Dimensions
 * contiguous on both sides are merged; the rest goes as the card's
 * scatter-gather DMA, one entry per contiguous run (up to 4096 a job):
 * repacking rows (dense <-> the op library's stick layout), gathering a
 * transposed view, broadcasting a row (source stride 0).  A shape with a
 * 0 is a no-op.  Errors: INVALID_ARGUMENT (NULL, bad ndim or element size,
 * elements past either buffer, a destination stride of 0 on a dimension
 * longer than 1, source and destination ranges of one buffer overlapping),
 * INVALID_HANDLE, DEVICE_LOST.  Capturable (since 0.6): a graph records
 * the lists and replays them within its one job.
 */
#define SPYRE_COPY_MAX_DIMS 16
spyre_status spyre_memcpy_strided_async(spyre_stream *s, uint32_t ndim, const uint64_t *shape,
					uint32_t elem_bytes, spyre_buffer *dst,
					uint64_t dst_offset, const uint64_t *dst_strides,
					spyre_buffer *src, uint64_t src_offset,
					const uint64_t *src_strides);

/*
 * Row gathers (since 0.6): for i < @count, the @row_bytes bytes at @src +
 * @src_offset + rows[i] * @row_bytes go to @dst + @dst_offset + i *
 * @row_bytes: an embedding lookup, a cache reordered.  @src holds
 * @src_rows rows from @src_offset; consecutive source rows landing next to
 * each other are one run of the card's scatter-gather DMA (up to 4096 runs
 * a job).  Capturable like any copy (the indices are read at the call).
 * Errors: INVALID_ARGUMENT (NULL, row_bytes 0, an index at or past
 * @src_rows (naming it), either range past its buffer, source and
 * destination ranges of one buffer overlapping), INVALID_HANDLE,
 * DEVICE_LOST.
 */
spyre_status spyre_memcpy_gather_async(spyre_stream *s, spyre_buffer *dst, uint64_t dst_offset,
				       spyre_buffer *src, uint64_t src_offset, uint64_t src_rows,
				       uint64_t row_bytes, uint64_t count, const uint64_t *rows);

/* ------------------------------------------------------------------------
 * Events: points in a stream, timed by the card's clock.
 * ------------------------------------------------------------------------ */
spyre_status spyre_event_create(spyre_device *dev, spyre_event **ev);
spyre_status spyre_event_destroy(spyre_event *ev);	/* NULL ok */

/* Mark the point after all work queued so far on @s; the card writes its
 * clock into the event when the stream reaches it.  Re-recording moves it. */
spyre_status spyre_event_record(spyre_event *ev, spyre_stream *s);

/* Work queued on @s after this call starts only after @ev's recorded point
 * (the record at the time of this call).  A never-recorded event: no-op. */
spyre_status spyre_stream_wait_event(spyre_stream *s, spyre_event *ev);

/* Host wait for the event's point (and the recording stream's host side up
 * to it); returns the recording stream's async fault if any.  An event never
 * recorded is complete. */
spyre_status spyre_event_synchronize(spyre_event *ev);

/* SUCCESS if the point has passed, NOT_READY if not; never blocks. */
spyre_status spyre_event_query(spyre_event *ev);

/* Device time between two completed events of the same device, in
 * milliseconds (negative if @end was reached before @start).  NOT_READY if
 * either has not completed, INVALID_ARGUMENT if either was never recorded. */
spyre_status spyre_event_elapsed_ms(spyre_event *start, spyre_event *end, double *ms);

/* ------------------------------------------------------------------------
 * Kernels.  image = a program in include/spyre_program.h's format.
 * ------------------------------------------------------------------------ */

/* Check the image's header and copy it into device memory.  Errors:
 * INVALID_ARGUMENT (bad magic, major version, size, flags), others as for
 * buffers. */
spyre_status spyre_kernel_load(spyre_device *dev, const void *image, size_t bytes,
			       spyre_kernel **kernel);
/* NULL ok; waits for queued launches of the kernel, like spyre_buffer_free. */
spyre_status spyre_kernel_destroy(spyre_kernel *kernel);
/* Entries in the program's argument block (0 for an invalid handle). */
uint32_t spyre_kernel_num_args(const spyre_kernel *kernel);

/*
 * Kernel names (since 0.4).  Every launch carries its kernel's name at the
 * time it was queued: SPYRE_TRACE's slices, spyre-prof's summary and the
 * error details of a failed launch use it.  A loaded kernel is named
 * "kernel <n>"; the op library names its kernels after the op, shape and
 * dtype ("matmul 64x256x64 fp16").  A name is 1 to SPYRE_KERNEL_NAME_MAX
 * bytes (UTF-8 is fine) without control characters; anything else is
 * INVALID_ARGUMENT, checked before the handle.  Renaming does not change
 * launches already queued or captured.
 */
#define SPYRE_KERNEL_NAME_MAX 63
spyre_status spyre_kernel_set_name(spyre_kernel *kernel, const char *name);
/* The kernel's name (valid until the kernel is destroyed), NULL for an
 * invalid handle. */
const char *spyre_kernel_get_name(const spyre_kernel *kernel);

/*
 * Argument @index (a u64 device address in the program's argument block) =
 * the device address of @buf + @offset.  Unset arguments make launch fail
 * (SPYRE_ERROR_INVALID_ARGUMENT).  Launch snapshots the arguments.
 * Thread safety: set_arg and launch of one kernel may be called from several
 * threads (each call is atomic), but which arguments a launch sees then
 * depends on the interleaving: threads that set different arguments should
 * load their own spyre_kernel, or hold a lock of their own across
 * set_arg + launch.
 */
spyre_status spyre_kernel_set_arg(spyre_kernel *kernel, uint32_t index, spyre_buffer *buf,
				  uint64_t offset);
/* Set argument @index to a raw u64 value (an address or a constant).  A raw
 * address is not tracked: the launch is not ordered by the driver against
 * other streams' work on that memory, and nothing checks it is mapped. */
spyre_status spyre_kernel_set_arg_u64(spyre_kernel *kernel, uint32_t index, uint64_t value);

/* Queue a LAUNCH of @kernel with its current arguments on @s. */
spyre_status spyre_kernel_launch(spyre_stream *s, spyre_kernel *kernel);

#define SPYRE_MAX_CORES 32

/* A launch's statistics (the card's LAUNCH record, docs/hardware.md). */
typedef struct spyre_launch_profile {
	uint64_t device_cycles;
	uint64_t device_ns;		/* modelled device time of the launch */
	uint64_t dram_bytes_read;
	uint64_t dram_bytes_written;
	uint64_t ring_bytes;
	uint64_t ring_byte_hops;	/* ring bytes times links crossed */
	uint64_t op_firings;
	uint64_t macs;			/* multiply-accumulates */
	uint64_t core_busy_cycles[SPYRE_MAX_CORES];
	uint64_t start_ns;		/* card clock (ns since reset) when the launch started */
	uint64_t end_ns;		/* card clock when it finished */
} spyre_launch_profile;

/* Like spyre_kernel_launch(); *@profile is written when the stream is
 * synchronised (same rule as spyre_memcpy_dtoh_async's destination). */
spyre_status spyre_kernel_launch_profiled(spyre_stream *s, spyre_kernel *kernel,
					  spyre_launch_profile *profile);

/* The profile of @kernel's most recently completed launch (as seen by a
 * synchronising call); NOT_READY if none has completed yet. */
spyre_status spyre_kernel_last_profile(spyre_kernel *kernel, spyre_launch_profile *profile);

/* ------------------------------------------------------------------------
 * Graphs: record a stream's work once, replay it as one submission.
 *
 * Between begin_capture and end_capture, work queued on the stream is
 * recorded instead of run: copies between buffers (strided ones too),
 * copies from/to host pointers inside SPYRE_MEM_HOST mappings
 * (read/written at replay time), fills and kernel launches (arguments
 * snapshotted at capture time).
 * Copies from/to other (pageable) host memory, events, waits and
 * synchronisation on a capturing stream return SPYRE_ERROR_CAPTURE.
 * Buffers and kernels a graph uses must stay alive while it is replayed
 * (spyre_graph_launch checks and returns INVALID_HANDLE otherwise).
 * ------------------------------------------------------------------------ */
spyre_status spyre_stream_begin_capture(spyre_stream *s);
spyre_status spyre_stream_end_capture(spyre_stream *s, spyre_graph **graph);
spyre_status spyre_graph_destroy(spyre_graph *graph);	/* NULL ok */
/* Recorded operations (copies, fills, launches). */
uint32_t spyre_graph_num_nodes(const spyre_graph *graph);

/* Build the command buffer once.  The graph may be destroyed afterwards. */
spyre_status spyre_graph_instantiate(spyre_graph *graph, spyre_graph_exec **exec);
spyre_status spyre_graph_exec_destroy(spyre_graph_exec *exec);	/* NULL ok; waits */

/* Replay the whole graph on @s with ONE submit ioctl.  Replays of one exec
 * run one after another (they share its command buffer). */
spyre_status spyre_graph_launch(spyre_graph_exec *exec, spyre_stream *s);

/* Profile of the @launch_index-th kernel launch of the exec's most recent
 * completed replay (as seen by a synchronising call); NOT_READY before. */
spyre_status spyre_graph_exec_profile(spyre_graph_exec *exec, uint32_t launch_index,
				      spyre_launch_profile *profile);

/* ------------------------------------------------------------------------
 * Environment variables (read once, at the first call that needs them):
 *   SPYRE_VISIBLE_DEVICES  comma list of indices or PCI addresses; devices
 *                          are renumbered in list order.
 *   SPYRE_LOG              error|warn|info|debug: messages on stderr.
 *   SPYRE_TRACE=file.json  Chrome/Perfetto trace of every copy and launch
 *                          (launches named after their kernel), written at
 *                          spyre_device_close() and at exit; spyre-prof
 *                          file.json summarises it per kernel name.
 * ------------------------------------------------------------------------ */

/* Write the trace now (if SPYRE_TRACE is set); also done at exit. */
spyre_status spyre_trace_flush(void);

#ifdef __cplusplus
}
#endif

#endif /* SPYRE_SPYRE_H */
