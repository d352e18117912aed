/* SPDX-License-Identifier: MIT */
/*
 * spyre-smi's pieces: the cards (sysfs, hwmon, debugfs), the processes
 * using them (/proc/<pid>/fdinfo), and the three views (the default one,
 * -q, dmon).  docs/runtime.md "spyre-smi" is the user's description.
 */
#ifndef SPYRE_SMI_H
#define SPYRE_SMI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "spyre/spyre.h"

/* Exit codes, as `spyre-smi --help` lists them. */
#define SMI_EXIT_OK		0
#define SMI_EXIT_ERROR		1	/* anything else went wrong */
#define SMI_EXIT_USAGE		2	/* a bad argument */
#define SMI_EXIT_NO_CARD	3	/* no card, no driver, or no card with that index */
#define SMI_EXIT_PERMISSION	4	/* the accel node may not be opened by this user */

#define SMI_QUEUES		4	/* the card's hardware queues */
#define SMI_PDEV_LEN		32

/* ---- processes: fdinfo.c ---- */

/* One open file of a spyre card, as its fdinfo shows it. */
struct smi_client {
	int pid;			/* the process whose fd table has it (lowest pid if shared) */
	uint64_t client_id;		/* drm-client-id */
	char pdev[SMI_PDEV_LEN];	/* drm-pdev: the card's PCI address */
	uint64_t engine_ns[SMI_QUEUES];	/* drm-engine-queueN */
	uint64_t engine_total_ns;	/* every drm-engine-* key added up */
	uint64_t mem_total;		/* drm-total-*: buffers it holds handles to, bytes */
	uint64_t mem_shared;		/* drm-shared-* */
	uint64_t mem_active;		/* drm-active-*: buffers jobs in flight use */
};

struct smi_clients {
	struct smi_client *v;
	size_t n, cap;
};

/* Bytes from a DRM fdinfo memory value: "123", "4 KiB", "5 MiB", "1 GiB". */
int smi_parse_size(const char *text, uint64_t *bytes);

/* Parse one fdinfo file's text; 1 if it is an open file of a spyre card. */
int smi_fdinfo_parse(const char *text, struct smi_client *c);

/*
 * Every spyre client under @proc_root ("/proc"), one per (drm-pdev,
 * drm-client-id) however many fds or processes share it, except those of
 * @skip_pid.  Processes whose fds this user may not read are not seen.
 * 0, or -1 with errno if @proc_root cannot be read.
 */
int smi_clients_scan(const char *proc_root, int skip_pid, struct smi_clients *out);
void smi_clients_free(struct smi_clients *c);

/* The client with this pdev and id in @c, or NULL. */
const struct smi_client *smi_clients_find(const struct smi_clients *c, const char *pdev,
					  uint64_t client_id);

/* One process on one card: its clients added up. */
struct smi_proc {
	int pid;
	char name[64];			/* /proc/<pid>/comm */
	int clients;
	uint64_t mem_bytes;
	uint64_t engine_ns;
	double busy_pct;		/* engine time over the sampling interval; < 0 unknown */
};

/*
 * The processes of card @pdev in @now (sorted by pid), their busy share
 * from @before, taken @interval_ns earlier (NULL: unknown).  Returns how
 * many were written to *@out (malloc'ed), or -1.
 */
int smi_procs_of(const char *proc_root, const struct smi_clients *now,
		 const struct smi_clients *before, uint64_t interval_ns, const char *pdev,
		 struct smi_proc **out);

/* ---- cards: card.c ---- */

/* Counters of the card's spyre/ sysfs group, read at one instant. */
struct smi_counters {
	uint64_t t_ns;			/* CLOCK_MONOTONIC when read */
	int ok;				/* the three counters were read */
	uint64_t busy_ns, commands, dma_bytes;
	long reset_count;		/* -1: unreadable */
};

/* What root reads in the driver's debugfs directory; each part valid or not. */
struct smi_debugfs {
	int have_memory, have_contexts, have_faults, have_queues;
	uint64_t device_used, device_free, device_largest_free, device_buffers;
	uint64_t mappable_total, mappable_free, host_buffers, host_bytes;
	int open_files, banned_files;
	uint64_t faults;
	int queue_state[SMI_QUEUES];	/* the card's queue STATUS: 0 disabled .. 3 stopped */
};

enum smi_mem_source { SMI_MEM_UNKNOWN, SMI_MEM_DEBUGFS, SMI_MEM_FDINFO };

struct smi_card {
	int index;
	spyre_device_properties props;
	char sysfs[128];		/* /sys/bus/pci/devices/<pci> */
	char hwmon[512];		/* its hwmon directory, "" if none */
	char debugfs[128];		/* /sys/kernel/debug/accel/<pci>, "" if unreadable */
	char clock[16];			/* sysfs timestamp_clock, "" if absent */
	int have_temp, have_power;
	long temp_mc, power_uw;		/* hwmon temp1_input, power1_input */
	struct smi_counters before, now;
	struct smi_debugfs dbg;
	double util_pct;		/* < 0: unknown */
	uint64_t mem_used;
	enum smi_mem_source mem_source;
	int procs;			/* processes seen using it */
};

/*
 * Open every card (or only @only, if >= 0) to read its properties, then
 * close it again.  Returns an SMI_EXIT_* code, having said why on stderr.
 */
int smi_cards_get(int only, struct smi_card **cards, int *count);

/* sysfs counters now. */
void smi_card_counters(const struct smi_card *c, struct smi_counters *out);

/* hwmon, timestamp_clock and debugfs, now. */
void smi_card_refresh(struct smi_card *c);

/*
 * From c->before and c->now and the clients seen at c->now: utilisation,
 * memory used (debugfs if readable, else the clients' fdinfo memory) and
 * the number of processes.
 */
void smi_card_derive(struct smi_card *c, const struct smi_clients *now);

/* Commands and DMA bytes per second between c->before and c->now; -1 unknown. */
void smi_card_rates(const struct smi_card *c, double *cmds_per_s, double *bytes_per_s);

/* "ok", "resetting", "removed"; banned files are told apart (smi_card_banned). */
const char *smi_card_state(const struct smi_card *c);

/* Banned open files, -1 if unknown (debugfs is root's). */
int smi_card_banned(const struct smi_card *c);

/* Read every card's counters (into c->now, moving the old ones to c->before) and the clients. */
int smi_sample(struct smi_card *cards, int count, struct smi_clients *clients);

uint64_t smi_now_ns(void);
void smi_sleep_ns(uint64_t ns);

/* ---- output helpers: out.c ---- */

void smi_json_str(FILE *out, const char *s);
/* A JSON number or null: %.1f of @v, null if @v < 0. */
void smi_json_num(FILE *out, double v);
/* "12.3 MiB" and the like, into @buf. */
const char *smi_bytes(char *buf, size_t size, uint64_t bytes);
/* Local time as "2026-03-03 13:55:02" (text) or ISO 8601 (JSON). */
const char *smi_time(char *buf, size_t size, int iso);
extern const char *const smi_queue_states[4];

/* ---- the views ---- */

struct smi_opts {
	int only;			/* -i INDEX, -1 for all */
	int json, csv;
	double delay_s;			/* dmon -d */
	long count;			/* dmon -c, 0: until interrupted */
};

int smi_view_default(const struct smi_opts *o);	/* view.c */
int smi_view_query(const struct smi_opts *o);	/* query.c */
int smi_view_dmon(const struct smi_opts *o);	/* dmon.c */

/* snapshot.c: what the default view and -q show, sampled SMI_INTERVAL_NS apart. */
#define SMI_INTERVAL_NS		200000000ull

struct smi_snapshot {
	struct smi_card *cards;
	int count;
	struct smi_clients before, now;	/* the processes' fdinfo at each sample */
	struct smi_proc **procs;	/* per card */
	int *nprocs;
};

/* Returns an SMI_EXIT_* code, having said why on stderr. */
int smi_snapshot_take(struct smi_snapshot *s, int only);
void smi_snapshot_free(struct smi_snapshot *s);
/* Take one and print it: JSON (-q's fields too if @full) or with @print_text. */
int smi_snapshot_show(const struct smi_opts *o, int full,
		      void (*print_text)(const struct smi_snapshot *s));

/* json.c: a card's "temperature_c" .. "memory_used_source" members (dmon's too). */
void smi_json_use(const struct smi_card *c);

/* json.c: the default view's and -q's JSON document (@full: -q's fields too). */
void smi_print_json(const struct smi_snapshot *s, int full);

/* view.c: the processes table, shared with -q. */
void smi_print_procs_text(const struct smi_snapshot *s);

#endif
