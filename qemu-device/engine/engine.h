/* SPDX-License-Identifier: MIT */
/*
 * The dataflow engine: loads a Spyre kernel binary (include/spyre_program.h),
 * validates everything in it (the guest writes it), runs it functionally on
 * the host and reports the device time the timing model gives it.
 * Independent of QEMU: device memory is reached through callbacks.
 *
 *     struct spyre_engine_config cfg;
 *     spyre_engine_config_default(&cfg);
 *     st = spyre_program_load(&cfg, image, len, &prog, &err);
 *     st = spyre_program_run(prog, args, nargs, &mem, &stats, &err);
 *     spyre_program_free(prog);
 *
 * A loaded program is immutable; runs of one program must not overlap.
 * spyre_program_run_abortable() is a run its caller can stop (a device
 * reset) from another thread.
 */
#ifndef SPYRE_ENGINE_H
#define SPYRE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spyre_engine_status.h"

#define SPYRE_ENGINE_MAX_CORES 32
#define SPYRE_ENGINE_MAX_HOST_THREADS 64 /* host_threads is capped here */

/*
 * Host threads for the engine beside @busy_cpus threads that keep CPUs busy
 * (a VM's vCPUs) on a host of @host_cpus: the CPUs they leave, at least 1,
 * at most the cap.  QEMU's default engine-threads, and what a benchmark
 * comparing against it uses.
 */
static inline unsigned spyre_engine_threads_beside(long host_cpus,
                                                   long busy_cpus)
{
    long free_cpus = host_cpus - busy_cpus;

    if (free_cpus < 1) {
        return 1;
    }
    return free_cpus < SPYRE_ENGINE_MAX_HOST_THREADS
               ? (unsigned)free_cpus
               : SPYRE_ENGINE_MAX_HOST_THREADS;
}

/*
 * Timing parameters (docs/engine.md "Timing model" gives the source of
 * each).  Rates are per core unless they say otherwise.
 */
struct spyre_timing_params {
    double clock_ghz;         /* device cycles per ns */
    double pe_macs_per_cycle; /* PE arrays of both corelets, fp16/bf16 */
    double pe_fp32_factor;    /* fp32 inputs run at this fraction of it */
    /* fill and drain of the array, per matmul firing */
    double pe_firing_cycles;
    /* SFP element operations per cycle, both corelets */
    double sfp_lanes_per_cycle;
    double op_firing_cycles;     /* dispatch overhead of every op firing */
    double dram_bytes_per_ns;    /* whole card, one direction at a time */
    double dram_turnaround_ns;   /* paid when the DRAM direction changes */
    double dram_latency_ns;      /* request to first stick */
    double ring_bytes_per_cycle; /* per link per direction */
    double ring_hop_cycles;      /* latency per hop */
    /* each of a core's scratchpad read and write ports */
    double spad_bytes_per_cycle;
    double spad_request_cycles; /* port cycles per contiguous scratchpad run */
    /* sticks per DRAM/ring/scratchpad transfer at most */
    unsigned burst_sticks;
};

struct spyre_engine_config {
    unsigned num_cores;        /* 1..SPYRE_ENGINE_MAX_CORES */
    uint32_t scratchpad_bytes; /* per core */
    /* at the bottom of each scratchpad, for the program */
    uint32_t reserved_bytes;
    uint64_t max_work;     /* bound on sticks moved + op firings, per launch */
    unsigned host_threads; /* host threads for op kernels, 0 = all CPUs */
    /* a matmul firing of fewer multiply-adds runs on the calling thread */
    uint64_t pool_min_macs; /* default 2^21; 0: every firing on the pool */
    int host_portable;     /* 1: no SIMD kernels (same results, for tests) */
    struct spyre_timing_params timing;
};

/*
 * Device memory as the engine sees it: read and write return 0 on success,
 * non-zero fails the run.
 *
 * map (optional, may be NULL) returns a host pointer to the len bytes at
 * addr when they are one readable host range, else NULL (never an error:
 * the engine then calls read, which reports it).  The engine may read
 * through the pointer until the run returns instead of copying the bytes
 * when a stream takes them, so the bytes must stay there, changed only by
 * the run's own writes (the engine maps each write's range too, and
 * copies what it still needs from a range before writing over it).
 */
struct spyre_engine_mem {
    void *opaque;
    int (*read)(void *opaque, uint64_t addr, void *buf, size_t len);
    int (*write)(void *opaque, uint64_t addr, const void *buf, size_t len);
    const void *(*map)(void *opaque, uint64_t addr, size_t len);
};

/*
 * Where a failure was found.  The device latches every field into queue
 * registers (docs/hardware.md "Why a LAUNCH failed"), so keep them small.
 */
struct spyre_engine_error {
    enum spyre_engine_status status;
    int core;  /* -1 when not about one core */
    int index; /* stream, op or buffer index (see at), -1 otherwise */
    enum spyre_engine_site at;
    /* SPYRE_ENGINE_E_DEADLOCK: the stream the agent waits on and how */
    enum spyre_engine_wait wait;
    int stream;            /* -1 when no stream is waited on */
    uint32_t sticks_done;  /* sticks that entered that stream so far */
    uint32_t sticks_total; /* sticks it carries in all */
    char detail[128];
};

struct spyre_engine_stats {
    uint64_t device_cycles; /* launch to last store */
    uint64_t device_ns;
    uint64_t busy_cycles[SPYRE_ENGINE_MAX_CORES]; /* PE or SFP busy */
    uint64_t pe_busy_cycles[SPYRE_ENGINE_MAX_CORES];
    uint64_t dram_read_bytes;
    uint64_t dram_write_bytes;
    uint64_t ring_bytes;      /* payload sent */
    uint64_t ring_link_bytes; /* bytes times links crossed */
    uint64_t op_firings;
    uint64_t macs; /* multiply-accumulates performed */
};

/*
 * How a run learns that it must stop: aborted(opaque), polled between
 * firings, before each core's set-up and inside large matmul firings, by
 * the calling thread and by the run's pool threads (so it must be cheap
 * and thread-safe, an atomic load).  Once it returns true it must keep
 * doing so.  The run sees it within about a millisecond of host time
 * (docs/engine.md "Host execution"), then starts no further firing (no
 * read or write beyond one already under way) and returns
 * SPYRE_ENGINE_E_ABORTED; what it wrote is undefined.
 * The poll only bounds how long the run goes on: a write callback that
 * fails once aborted is what keeps the memory from any write after it.
 */
struct spyre_engine_abort {
    bool (*aborted)(void *opaque);
    void *opaque;
};

struct spyre_program;

void spyre_engine_config_default(struct spyre_engine_config *cfg);

enum spyre_engine_status spyre_program_load(
    const struct spyre_engine_config *cfg, const void *image, size_t len,
    struct spyre_program **out, struct spyre_engine_error *err);

/* Number of u64 arguments the program expects. */
unsigned spyre_program_num_args(const struct spyre_program *prog);

enum spyre_engine_status spyre_program_run(struct spyre_program *prog,
                                           const uint64_t *args, unsigned nargs,
                                           const struct spyre_engine_mem *mem,
                                           struct spyre_engine_stats *stats,
                                           struct spyre_engine_error *err);

/* spyre_program_run that ab can stop (ab NULL: it never stops early). */
enum spyre_engine_status spyre_program_run_abortable(
    struct spyre_program *prog, const uint64_t *args, unsigned nargs,
    const struct spyre_engine_mem *mem, const struct spyre_engine_abort *ab,
    struct spyre_engine_stats *stats, struct spyre_engine_error *err);

void spyre_program_free(struct spyre_program *prog);

#endif /* SPYRE_ENGINE_H */
