// SPDX-License-Identifier: MIT
/*
 * Profiles and SPYRE_TRACE: a Chrome/Perfetto trace (JSON trace event
 * format, "X" complete events in microseconds of device time) of every copy
 * and launch: one process per device open, one track per stream, and one
 * track per core showing each launch's busy cycles.  A launch's slice is
 * named after its kernel and carries its LAUNCH statistics as args; a
 * copy's is named after its direction and carries its bytes.  spyre-prof
 * (libspyre/tools/spyre-prof.c) reads exactly these fields; docs/runtime.md
 * "Traces" is the format's reference.  The whole file is rewritten at device
 * close, at spyre_trace_flush() and at exit.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "discover.h"
#include "error.h"
#include "trace.h"

#define CORE_TID_BASE 100000u

static pthread_once_t trace_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *trace_path;
static char *events;		/* ",\n"-separated JSON objects */
static size_t events_len, events_cap;
static uint32_t cores_named[SPYRE_MAX_DEVICES];	/* pids whose core tracks have names */

void spyre_profile_from_stats(spyre_launch_profile *p, const uint64_t *stats)
{
	memset(p, 0, sizeof(*p));
	p->device_cycles = stats[0];
	p->device_ns = stats[1];
	p->dram_bytes_read = stats[2];
	p->dram_bytes_written = stats[3];
	p->ring_bytes = stats[4];
	p->ring_byte_hops = stats[5];
	p->op_firings = stats[6];
	p->macs = stats[7];
	for (int c = 0; c < SPYRE_MAX_CORES; c++)
		p->core_busy_cycles[c] = stats[8 + c];
}

static pid_t trace_pid;		/* the process that set the trace up */

static void trace_exit(void)
{
	/* A forked child exiting must not overwrite its parent's trace. */
	if (getpid() == trace_pid)
		spyre_trace_flush();
}

static void trace_init(void)
{
	const char *p = getenv("SPYRE_TRACE");

	if (p && *p) {
		trace_path = p;
		trace_pid = getpid();
		atexit(trace_exit);
	}
}

int spyre_trace_enabled(void)
{
	pthread_once(&trace_once, trace_init);
	return trace_path != NULL;
}

/* Append one event (under trace_lock). */
static void append(const char *json)
{
	size_t n = strlen(json);

	if (events_len + n + 3 > events_cap) {
		size_t cap = events_cap ? events_cap * 2 : 1 << 16;
		char *e;

		while (cap < events_len + n + 3)
			cap *= 2;
		e = realloc(events, cap);
		if (!e)
			return;	/* drop the event rather than fail the work */
		events = e;
		events_cap = cap;
	}
	if (events_len) {
		memcpy(events + events_len, ",\n", 2);
		events_len += 2;
	}
	memcpy(events + events_len, json, n + 1);
	events_len += n;
}

/* Copy @in into @out as a JSON string body (quotes, backslashes, controls). */
static void json_escape(char *out, size_t size, const char *in)
{
	size_t o = 0;

	for (; in && *in && o + 7 < size; in++) {
		unsigned char c = (unsigned char)*in;

		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20) {
			o += (size_t)snprintf(out + o, size - o, "\\u%04x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
}

void spyre_trace_name_track(uint32_t pid, uint32_t tid, const char *name)
{
	char buf[256], esc[128];

	json_escape(esc, sizeof(esc), name);
	/* tid 0 names the process (a device open), others a track in it. */
	snprintf(buf, sizeof(buf),
		 "{\"name\":\"%s_name\",\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
		 ",\"args\":{\"name\":\"%s\"}}", tid ? "thread" : "process", pid, tid, esc);
	pthread_mutex_lock(&trace_lock);
	append(buf);
	pthread_mutex_unlock(&trace_lock);
}

static void slice_locked(uint32_t pid, uint32_t tid, const char *name, const char *cat,
			 uint64_t start_ns, uint64_t dur_ns, const char *args)
{
	char buf[1024], esc[256];

	json_escape(esc, sizeof(esc), name);
	snprintf(buf, sizeof(buf),
		 "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%" PRIu32
		 ",\"tid\":%" PRIu32 ",\"ts\":%" PRIu64 ".%03" PRIu64 ",\"dur\":%" PRIu64
		 ".%03" PRIu64 ",\"args\":{%s}}", esc, cat, pid, tid, start_ns / 1000,
		 start_ns % 1000, dur_ns / 1000, dur_ns % 1000, args);
	append(buf);
}

void spyre_trace_slice(uint32_t pid, uint32_t tid, const char *name, const char *cat,
		       uint64_t start_ns, uint64_t end_ns, uint64_t bytes)
{
	char args[64];

	/* A copy's name is its direction: htod, dtoh, dtod or fill. */
	snprintf(args, sizeof(args), "\"bytes\":%" PRIu64, bytes);
	pthread_mutex_lock(&trace_lock);
	slice_locked(pid, tid, name ? name : "op", cat, start_ns,
		     end_ns > start_ns ? end_ns - start_ns : 0, args);
	pthread_mutex_unlock(&trace_lock);
}

/* Name the device's core tracks the first time one of its launches is traced. */
static void name_core_tracks(uint32_t pid)
{
	int named = 0;

	pthread_mutex_lock(&trace_lock);
	for (int i = 0; i < SPYRE_MAX_DEVICES && !named; i++) {
		if (cores_named[i] == pid)
			named = 1;
		else if (!cores_named[i]) {
			cores_named[i] = pid;
			break;
		}
	}
	pthread_mutex_unlock(&trace_lock);
	if (named)
		return;
	for (int c = 0; c < SPYRE_MAX_CORES; c++) {
		char n[32];

		snprintf(n, sizeof(n), "core %d", c);
		spyre_trace_name_track(pid, CORE_TID_BASE + (uint32_t)c, n);
	}
}

void spyre_trace_launch(uint32_t pid, uint32_t tid, const char *name,
			const spyre_launch_profile *p)
{
	char args[512];
	int cores = 0;

	if (!name)
		name = "launch";
	for (int c = 0; c < SPYRE_MAX_CORES; c++)
		cores += p->core_busy_cycles[c] != 0;
	name_core_tracks(pid);
	snprintf(args, sizeof(args),
		 "\"device_ns\":%" PRIu64 ",\"device_cycles\":%" PRIu64
		 ",\"dram_bytes_read\":%" PRIu64 ",\"dram_bytes_written\":%" PRIu64
		 ",\"ring_bytes\":%" PRIu64 ",\"ring_byte_hops\":%" PRIu64
		 ",\"op_firings\":%" PRIu64 ",\"macs\":%" PRIu64 ",\"cores\":%d",
		 p->device_ns, p->device_cycles, p->dram_bytes_read, p->dram_bytes_written,
		 p->ring_bytes, p->ring_byte_hops, p->op_firings, p->macs, cores);
	pthread_mutex_lock(&trace_lock);
	slice_locked(pid, tid, name, "launch", p->start_ns,
		     p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0, args);
	for (int c = 0; c < SPYRE_MAX_CORES; c++) {
		uint64_t dur;

		if (!p->core_busy_cycles[c])
			continue;
		/* Cycles to ns at the launch's own cycles-per-ns. */
		dur = p->device_cycles ?
		      (uint64_t)((double)p->core_busy_cycles[c] * (double)p->device_ns /
				 (double)p->device_cycles) : 0;
		snprintf(args, sizeof(args), "\"busy_cycles\":%" PRIu64 ",\"stream\":%" PRIu32,
			 p->core_busy_cycles[c], tid);
		slice_locked(pid, CORE_TID_BASE + (uint32_t)c, name, "core", p->start_ns, dur,
			     args);
	}
	pthread_mutex_unlock(&trace_lock);
}

char *spyre_trace_json(void)
{
	static const char head[] = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
	static const char tail[] = "\n]}\n";
	char *out;

	pthread_mutex_lock(&trace_lock);
	out = malloc(sizeof(head) + events_len + sizeof(tail));
	if (out) {
		memcpy(out, head, sizeof(head) - 1);
		if (events_len)
			memcpy(out + sizeof(head) - 1, events, events_len);
		memcpy(out + sizeof(head) - 1 + events_len, tail, sizeof(tail));
	}
	pthread_mutex_unlock(&trace_lock);
	return out;
}

SPYRE_EXPORT spyre_status spyre_trace_flush(void)
{
	char *json;
	FILE *f;
	int bad;

	if (!spyre_trace_enabled())
		return spyre_done(SPYRE_SUCCESS);
	json = spyre_trace_json();
	if (!json)
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for the trace");
	f = fopen(trace_path, "w");
	if (!f) {
		free(json);
		return spyre_set_error(SPYRE_ERROR_SYSTEM, "SPYRE_TRACE: cannot write %s",
				       trace_path);
	}
	bad = fputs(json, f) < 0;
	bad |= fclose(f) != 0;
	free(json);
	if (bad)
		return spyre_set_error(SPYRE_ERROR_SYSTEM, "SPYRE_TRACE: writing %s failed",
				       trace_path);
	spyre_log(SPYRE_LOG_INFO, "trace written to %s", trace_path);
	return spyre_done(SPYRE_SUCCESS);
}
