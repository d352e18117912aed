/* SPDX-License-Identifier: MIT */
/* Private state and helpers shared by libspyre's source files. */
#ifndef SPYRE_INTERNAL_H
#define SPYRE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "spyre/spyre.h"
#include "spyre/spyre_ops.h"

#define SPYRE_EXPORT __attribute__((visibility("default")))

#define SPYRE_MAX_DEVICES 64

/* ---- objects and the handle registry (handle.c) ---- */

enum spyre_kind {
	SPYRE_KIND_BUFFER = 1,
	SPYRE_KIND_STREAM,
	SPYRE_KIND_EVENT,
	SPYRE_KIND_KERNEL,
	SPYRE_KIND_GRAPH,
	SPYRE_KIND_EXEC,
	SPYRE_KIND_DEVICE,
};

/* First member of every runtime object: kind, unique id, owner, device list. */
struct spyre_obj {
	enum spyre_kind kind;
	uint64_t id;			/* never reused: tells a recycled pointer apart */
	spyre_device *dev;
	struct spyre_obj *prev, *next;	/* the device's objects (dev->lock) */
};

/* Register a live object (gives it its id); unregister before freeing. */
void spyre_handle_add(struct spyre_obj *obj, enum spyre_kind kind, spyre_device *dev);
void spyre_handle_remove(struct spyre_obj *obj);
/* Is @p a live object of @kind (and, if @id, that very object)? */
int spyre_handle_live(const void *p, enum spyre_kind kind, uint64_t id);
/* Check a caller's handle: INVALID_ARGUMENT for NULL, INVALID_HANDLE if dead. */
spyre_status spyre_handle_check(const void *p, enum spyre_kind kind, const char *what);
/* Run @fn(@arg) under the registry lock if @p is still the object @id. */
int spyre_handle_with(const void *p, enum spyre_kind kind, uint64_t id,
		      void (*fn)(void *obj, void *arg), void *arg);

/* ---- devices (device.c) ---- */

struct spyre_device {
	int fd;
	spyre_device_properties props;
	uint32_t trace_pid;		/* this open's process id in traces */
	pthread_mutex_t lock;		/* objects list, internal stream creation */
	struct spyre_obj objects;	/* list head */
	spyre_stream *internal;		/* blocking copies */
	atomic_int lost;		/* banned by the driver after a fault */
	int registered;
};

void spyre_device_link(spyre_device *dev, struct spyre_obj *obj, enum spyre_kind kind);
void spyre_device_unlink(struct spyre_obj *obj);
/* The device's stream for blocking calls, created on first use. */
spyre_status spyre_device_internal_stream(spyre_device *dev, spyre_stream **s);
/* DEVICE_LOST with a detail once the driver banned this device's file. */
spyre_status spyre_device_check_alive(spyre_device *dev);

/* One discovered card: where it sits and which node opens it. */
struct spyre_device_entry {
	char pci_address[SPYRE_PCI_ADDRESS_LEN];
	char devnode[SPYRE_PATH_LEN];
};

/* ---- errors (error.c) and logging (log.c) ---- */

/* Record a failure for spyre_last_error_detail() and return it. */
spyre_status spyre_set_error(spyre_status status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void spyre_clear_error(void);
/* Return @st, clearing the detail on success. */
spyre_status spyre_done(spyre_status st);

/* Map an errno from open()/ioctl() to a status. */
spyre_status spyre_status_from_errno(int err);

enum spyre_log_level { SPYRE_LOG_OFF, SPYRE_LOG_ERROR, SPYRE_LOG_WARN, SPYRE_LOG_INFO,
		       SPYRE_LOG_DEBUG };
void spyre_log(enum spyre_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int spyre_log_enabled(enum spyre_log_level level);
/* SPYRE_LOG's value parsed ("warn" -> SPYRE_LOG_WARN); -1 if malformed. */
int spyre_log_parse(const char *s);

/* ---- discovery (discover.c) ---- */

/* Cards sorted by PCI address; returns the count or a negative status. */
int spyre_discover(struct spyre_device_entry *entries, int max);
/* The cards SPYRE_VISIBLE_DEVICES lets the process see, in its order. */
int spyre_discover_visible(struct spyre_device_entry *entries, int max);
/* Apply a SPYRE_VISIBLE_DEVICES value to @n discovered @entries in place;
 * returns the new count.  NULL @spec keeps them all. */
int spyre_visible_filter(const char *spec, struct spyre_device_entry *entries, int n);

/* Parse "dddd:bb:dd.f" or "bb:dd.f" into canonical "dddd:bb:dd.f". */
int spyre_pci_address_normalize(const char *in, char out[SPYRE_PCI_ADDRESS_LEN]);

/* ---- driver buffers (memory.c) ---- */

struct spyre_bo {
	uint32_t handle;
	uint64_t va;
	uint64_t size;
	void *map;
};

int spyre_ioctl(int fd, unsigned long request, void *arg);
/* Create a GEM buffer (DRM_SPYRE_BO_* flags), mapped if the CPU can. */
spyre_status spyre_bo_create(spyre_device *dev, uint64_t size, uint32_t flags,
			     struct spyre_bo *bo);
void spyre_bo_destroy(spyre_device *dev, struct spyre_bo *bo);

struct spyre_buffer {
	struct spyre_obj obj;
	struct spyre_bo bo;
	uint64_t bytes;			/* requested size */
	uint32_t flags;			/* SPYRE_MEM_* */
};

/* Does a live buffer or kernel image of @dev hold device address @va? */
int spyre_device_va_mapped(spyre_device *dev, uint64_t va);

/* The live SPYRE_MEM_HOST buffer of @dev whose mapping holds [p, p + bytes). */
spyre_buffer *spyre_host_buffer_find(spyre_device *dev, const void *p, uint64_t bytes,
				     uint64_t *offset);

/* ---- command encoding (stream.c) ---- */

#define SPYRE_RING_SLOTS	8192	/* 64-byte slots in a stream's command ring */
#define SPYRE_JOB_MAX_SLOTS	4096	/* largest job (graph) */
#define SPYRE_JOB_MAX_BOS	1024
#define SPYRE_STATS_WORDS	40

enum spyre_node_kind { NODE_COPY, NODE_FILL, NODE_LAUNCH, NODE_MARK };

/* One operation: [TIMESTAMP][op][TIMESTAMP] plus data slots. */
struct spyre_node {
	enum spyre_node_kind kind;
	uint64_t a0, a1, a2;		/* copy: src, dst, bytes; fill: dst, bytes, pattern;
					 * launch: image va */
	uint32_t nargs;
	uint64_t args[64];		/* launch: snapshot */
	struct spyre_kernel *kernel;	/* launch: holds a reference */
	spyre_launch_profile *profile;	/* launch: user's record, written at retire */
	struct spyre_op_prof *op_prof;	/* launch: an op call's profile it adds to */
	uint64_t bytes;			/* for traces */
	const char *name;		/* "htod", "dtoh", "dtod", "fill", kernel name ... */
};

/* Slots a node takes: 3 commands, 1 timestamp slot, args and stats slots. */
uint32_t spyre_node_data_slots(const struct spyre_node *n);
/* Encode @n's commands at @cmd (3 slots) and data at @data (device address
 * @data_va); returns the number of data slots used. */
uint32_t spyre_node_encode(const struct spyre_node *n, uint8_t *cmd, uint8_t *data,
			   uint64_t data_va);
void spyre_cmd_put(uint8_t *c, uint8_t op, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3);

/* Host work done when a job retires. */
struct spyre_completion;

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
void spyre_template_free(struct spyre_template *t);

/* A job being queued on a stream (under its lock). */
struct spyre_job {
	struct spyre_node *nodes;
	uint32_t nnodes;
	const struct spyre_template *tmpl;	/* pre-encoded slots, or NULL */
	uint32_t bos[SPYRE_JOB_MAX_BOS];
	uint32_t nbos;
	uint32_t in_syncobj;		/* 0 or a binary syncobj to wait for */
	int stage;			/* staging buffer used, or -1 */
	void *dtoh_dst;			/* deferred copy from the staging buffer */
	uint64_t dtoh_bytes;
	struct spyre_graph_exec *exec;	/* a graph replay (holds a reference) */
	struct spyre_event *event;	/* record: transfer the point into it */
};

void spyre_job_init(struct spyre_job *job);
/* Add a GEM handle to a job's list once; INVALID_ARGUMENT if full. */
spyre_status spyre_job_add_bo(struct spyre_job *job, uint32_t handle);

/* ---- the op library (ops/launch.c) ---- */

/*
 * An op call's profile while its launches run: each launch adds its
 * statistics when it retires; the last reference (the call's own, or a
 * retired launch's) writes *dst if every launch was profiled.
 */
struct spyre_op_prof {
	_Atomic unsigned refs;
	unsigned expected;		/* launches the op queued */
	spyre_op_profile acc;
	spyre_op_profile *dst;
};

struct spyre_op_prof *spyre_op_prof_new(spyre_op_profile *dst);
void spyre_op_prof_add(struct spyre_op_prof *p, const spyre_launch_profile *lp);
void spyre_op_prof_put(struct spyre_op_prof *p);
/* spyre_kernel_launch() whose profile is added to @op (NULL: none); a
 * launch captured into a graph is not. */
spyre_status spyre_kernel_launch_op(spyre_stream *s, spyre_kernel *kernel,
				    struct spyre_op_prof *op);

/* Drop @dev's cached op programs and scratch buffers (at close). */
void spyre_ops_device_closing(spyre_device *dev);

/* ---- streams (stream.c) ---- */

#define SPYRE_STAGE_BYTES	(8u << 20)	/* largest staging buffer (a copy chunk) */
#define SPYRE_STAGE_MIN		(64u << 10)
#define SPYRE_STAGE_COUNT	4

struct spyre_stage {
	struct spyre_bo bo;
	uint64_t busy_until;		/* point of the last job using it */
	int pending;			/* a deferred dtoh copy still reads it */
};

struct spyre_stream {
	struct spyre_obj obj;
	pthread_mutex_t lock;
	uint32_t queue;
	uint32_t syncobj;		/* timeline: point n = n-th job done */
	uint64_t submitted;		/* last point handed out */
	uint64_t retired;		/* host side done up to here */
	struct spyre_bo ring;
	uint64_t *slot_point;		/* job point that last used each slot */
	uint32_t ring_pos;
	struct spyre_completion *pending_head, *pending_tail;
	struct spyre_stage stage[SPYRE_STAGE_COUNT];
	struct spyre_graph *capture;	/* capturing into this graph */
	spyre_status fault;		/* sticky async fault */
	char fault_detail[512];
	spyre_fault_info fault_info;	/* the same, for spyre_stream_get_fault */
	uint32_t trace_tid;
	int internal;
};

spyre_status spyre_stream_new(spyre_device *dev, int priority, int internal, spyre_stream **out);
void spyre_stream_free(spyre_stream *s);
/* Queue @job (under s->lock); *point = its timeline point. */
spyre_status spyre_stream_submit(spyre_stream *s, struct spyre_job *job, uint64_t *point);
/* Wait for @point and retire up to it (takes the lock itself). */
spyre_status spyre_stream_wait_point(spyre_stream *s, uint64_t point);
/* A free staging buffer of at least @bytes (<= SPYRE_STAGE_BYTES); waits
 * for one if needed; under s->lock. */
spyre_status spyre_stream_get_stage(spyre_stream *s, uint64_t bytes, int *index);
/* Checks on entry of a stream operation (under s->lock). */
spyre_status spyre_stream_enter(spyre_stream *s, int capture_ok);

/* ---- events, kernels and graphs ---- */

struct spyre_event {
	struct spyre_obj obj;
	uint32_t syncobj;		/* binary: the last record's fence */
	struct spyre_bo ts;		/* device time written by the record */
	int recorded;
	spyre_stream *stream;		/* recording stream and point */
	uint64_t stream_id, point;
};

struct spyre_kernel {
	struct spyre_obj obj;
	atomic_int refs;
	struct spyre_bo image;
	uint32_t nargs;
	uint32_t core_mask;
	pthread_mutex_t args_lock;	/* the arguments below */
	uint64_t args[64];
	uint64_t set_mask;
	spyre_buffer *arg_buf[64];	/* buffer behind each argument, or NULL */
	uint64_t arg_buf_id[64];
	pthread_mutex_t prof_lock;
	int have_profile;
	spyre_launch_profile last;
	char name[32];
};

void spyre_kernel_put(struct spyre_kernel *k);
/* Check a program header; *nargs = its argument count. */
spyre_status spyre_kernel_check_image(const void *image, size_t bytes, uint32_t *nargs);
void spyre_kernel_record_profile(struct spyre_kernel *k, const spyre_launch_profile *p);
/* Fill a launch node from @k's arguments; INVALID_ARGUMENT if some are unset.
 * Adds the argument buffers to @job.  Takes a kernel reference. */
spyre_status spyre_kernel_make_node(struct spyre_kernel *k, struct spyre_node *node,
				    struct spyre_job *job);

/* Graph capture hook: record @node (and its buffers) on a capturing stream. */
spyre_status spyre_graph_capture_node(spyre_stream *s, const struct spyre_node *node,
				      const struct spyre_job *job, spyre_buffer *const *bufs,
				      int nbufs);
void spyre_graph_free_captured(struct spyre_graph *g);
void spyre_exec_put(struct spyre_graph_exec *e);
/*
 * A replay retiring: its launches' profiles are written straight into the
 * exec's array, under the exec's profile lock held from begin (which
 * returns the array and sets *count to its length) to end.
 */
spyre_launch_profile *spyre_exec_retire_begin(struct spyre_graph_exec *e, uint32_t *count);
void spyre_exec_retire_end(struct spyre_graph_exec *e, uint32_t written);

/* ---- profiles and traces (trace.c) ---- */

void spyre_profile_from_stats(spyre_launch_profile *p, const uint64_t *stats);
int spyre_trace_enabled(void);
/* A slice on a stream's track, device time in ns. */
void spyre_trace_slice(uint32_t pid, uint32_t tid, const char *name, const char *cat,
		       uint64_t start_ns, uint64_t end_ns, uint64_t bytes);
/* A launch: per-core busy slices under the device's core tracks. */
void spyre_trace_launch_cores(uint32_t pid, const char *name, uint64_t start_ns,
			      const spyre_launch_profile *p);
/* Name a track (@tid) or, with @tid 0, the device open @pid. */
void spyre_trace_name_track(uint32_t pid, uint32_t tid, const char *name);
/* Format the trace as JSON into a malloc'd string (for tests and writing). */
char *spyre_trace_json(void);

#endif /* SPYRE_INTERNAL_H */
