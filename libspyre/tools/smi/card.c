// SPDX-License-Identifier: MIT
/*
 * A card as spyre-smi sees it: libspyre's properties (one open, closed at
 * once so that spyre-smi itself is not among the card's processes), the
 * driver's sysfs group and hwmon device on the PCI function, and, for
 * root, the driver's debugfs directory.  docs/uapi.md "sysfs, hwmon,
 * fdinfo" lists every file read here.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "smi.h"

uint64_t smi_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void smi_sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The first line of a small file, without its newline; -1 if unreadable. */
static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int read_u64(const char *dir, const char *name, uint64_t *v)
{
	char path[640], buf[32], *end;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (read_line(path, buf, sizeof(buf)))
		return -1;
	*v = strtoull(buf, &end, 10);
	return end == buf ? -1 : 0;
}

/* Why there is no card to show, on stderr. */
static void explain_no_card(void)
{
	const char *visible = getenv("SPYRE_VISIBLE_DEVICES");

	if (access("/sys/module/spyre", F_OK))
		fprintf(stderr, "spyre-smi: no Spyre card: the spyre driver is not loaded "
			"(modprobe spyre)\n");
	else if (visible)
		fprintf(stderr, "spyre-smi: no Spyre card visible: SPYRE_VISIBLE_DEVICES=\"%s\" "
			"hides them\n", visible);
	else
		fprintf(stderr, "spyre-smi: no Spyre card found (the spyre driver is loaded "
			"but has no card bound)\n");
}

/* A libspyre failure on card @index (-1: while listing the cards) as an exit code. */
static int open_error(int index, spyre_status st)
{
	if (index < 0)
		fprintf(stderr, "spyre-smi: listing the cards: %s (%s)\n", spyre_strerror(st),
			spyre_last_error_detail());
	else
		fprintf(stderr, "spyre-smi: card %d: %s (%s)\n", index, spyre_strerror(st),
			spyre_last_error_detail());
	if (st == SPYRE_ERROR_PERMISSION)
		return SMI_EXIT_PERMISSION;
	return st == SPYRE_ERROR_NO_DEVICE ? SMI_EXIT_NO_CARD : SMI_EXIT_ERROR;
}

/* The card's hwmon directory: <pci>/hwmon/hwmonN whose name is "spyre". */
static void find_hwmon(struct smi_card *c)
{
	char dir[160], path[480], name[32];
	struct dirent *de;
	DIR *d;

	c->hwmon[0] = '\0';
	snprintf(dir, sizeof(dir), "%s/hwmon", c->sysfs);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "hwmon", 5))
			continue;
		snprintf(path, sizeof(path), "%s/%s/name", dir, de->d_name);
		if (read_line(path, name, sizeof(name)) == 0 && !strcmp(name, "spyre")) {
			snprintf(c->hwmon, sizeof(c->hwmon), "%s/%s", dir, de->d_name);
			break;
		}
	}
	closedir(d);
}

static int get_one(struct smi_card *c, int index)
{
	spyre_device *dev;
	spyre_status st = spyre_device_open(index, &dev);

	if (st)
		return open_error(index, st);
	st = spyre_device_get_properties(dev, &c->props);
	spyre_device_close(dev);
	if (st)
		return open_error(index, st);
	c->index = index;
	c->util_pct = -1;
	snprintf(c->sysfs, sizeof(c->sysfs), "/sys/bus/pci/devices/%s", c->props.pci_address);
	find_hwmon(c);
	return SMI_EXIT_OK;
}

int smi_cards_get(int only, struct smi_card **cards, int *count)
{
	spyre_status st = spyre_device_count(count);
	int i, first = 0, n, ret;

	*cards = NULL;
	if (st)
		return open_error(-1, st);
	if (*count == 0) {
		explain_no_card();
		return SMI_EXIT_NO_CARD;
	}
	if (only >= *count) {
		fprintf(stderr, "spyre-smi: -i %d: no such card (this machine has %d, "
			"numbered from 0)\n", only, *count);
		return SMI_EXIT_NO_CARD;
	}
	n = *count;
	if (only >= 0) {
		first = only;
		n = 1;
	}
	*cards = calloc((size_t)n, sizeof(**cards));
	if (!*cards) {
		fprintf(stderr, "spyre-smi: out of memory\n");
		return SMI_EXIT_ERROR;
	}
	for (i = 0; i < n; i++) {
		ret = get_one(&(*cards)[i], first + i);
		if (ret) {
			free(*cards);
			*cards = NULL;
			return ret;
		}
	}
	*count = n;
	return SMI_EXIT_OK;
}

void smi_card_counters(const struct smi_card *c, struct smi_counters *out)
{
	char dir[160];
	uint64_t v;

	snprintf(dir, sizeof(dir), "%s/spyre", c->sysfs);
	out->t_ns = smi_now_ns();
	out->ok = !read_u64(dir, "busy_time_ns", &out->busy_ns) &&
		  !read_u64(dir, "commands_completed", &out->commands) &&
		  !read_u64(dir, "dma_bytes", &out->dma_bytes);
	out->reset_count = read_u64(dir, "reset_count", &v) ? -1 : (long)v;
}

static FILE *open_in(const char *dir, const char *file)
{
	char path[200];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return fopen(path, "r");
}

/* "key value" lines of a debugfs file into @keys' slots; 0 if it was read. */
static int read_keyed(const char *dir, const char *file, const char *const *keys,
		      uint64_t *const *vals)
{
	char line[128], name[64];
	unsigned long long v;
	FILE *f = open_in(dir, file);
	int i;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %llu", name, &v) != 2)
			continue;
		for (i = 0; keys[i]; i++)
			if (!strcmp(name, keys[i]))
				*vals[i] = v;
	}
	fclose(f);
	return 0;
}

/* debugfs contexts: one line per open file, its sixth column 1 if banned. */
static void read_contexts(struct smi_debugfs *d, const char *dir)
{
	FILE *f = open_in(dir, "contexts");
	char line[256];
	int banned;

	d->have_contexts = f != NULL;
	d->open_files = d->banned_files = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*u %*d %*u %*d %*s %d", &banned) != 1)
			continue;	/* the header */
		d->open_files++;
		d->banned_files += banned != 0;
	}
	if (f)
		fclose(f);
}

static void read_queues(struct smi_debugfs *d, const char *dir)
{
	FILE *f = open_in(dir, "queues");
	char line[256];
	int q, state;

	d->have_queues = f != NULL;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "queue %d: state %d", &q, &state) == 2 && q >= 0 && q < SMI_QUEUES)
			d->queue_state[q] = state;
	if (f)
		fclose(f);
}

static void read_debugfs(struct smi_card *c)
{
	static const char *const mem_keys[] = {
		"device_used", "device_free", "device_largest_free", "device_buffers",
		"mappable_total", "mappable_free", "host_buffers", "host_bytes", NULL,
	};
	static const char *const fault_keys[] = { "faults", NULL };
	struct smi_debugfs *d = &c->dbg;
	uint64_t *const mem_vals[] = {
		&d->device_used, &d->device_free, &d->device_largest_free, &d->device_buffers,
		&d->mappable_total, &d->mappable_free, &d->host_buffers, &d->host_bytes,
	};
	uint64_t *const fault_vals[] = { &d->faults };

	memset(d, 0, sizeof(*d));
	snprintf(c->debugfs, sizeof(c->debugfs), "/sys/kernel/debug/accel/%s",
		 c->props.pci_address);
	d->have_memory = !read_keyed(c->debugfs, "memory", mem_keys, mem_vals);
	d->have_faults = !read_keyed(c->debugfs, "faults", fault_keys, fault_vals);
	read_contexts(d, c->debugfs);
	read_queues(d, c->debugfs);
	if (!d->have_memory && !d->have_faults && !d->have_contexts && !d->have_queues)
		c->debugfs[0] = '\0';
}

void smi_card_refresh(struct smi_card *c)
{
	char path[240];
	uint64_t v;

	c->have_temp = c->have_power = 0;
	if (c->hwmon[0]) {
		c->have_temp = !read_u64(c->hwmon, "temp1_input", &v);
		c->temp_mc = (long)v;
		c->have_power = !read_u64(c->hwmon, "power1_input", &v);
		c->power_uw = (long)v;
	}
	snprintf(path, sizeof(path), "%s/spyre/timestamp_clock", c->sysfs);
	if (read_line(path, c->clock, sizeof(c->clock)))
		c->clock[0] = '\0';
	read_debugfs(c);
}

void smi_card_derive(struct smi_card *c, const struct smi_clients *now)
{
	const struct smi_counters *a = &c->before, *b = &c->now;
	size_t i;
	int pids[256], npids = 0, j;

	c->util_pct = -1;
	if (a->ok && b->ok && b->t_ns > a->t_ns && b->busy_ns >= a->busy_ns &&
	    a->reset_count == b->reset_count) {
		c->util_pct = 100.0 * (double)(b->busy_ns - a->busy_ns) / (double)(b->t_ns - a->t_ns);
		if (c->util_pct > 100)
			c->util_pct = 100;
	}
	c->mem_used = 0;
	c->mem_source = SMI_MEM_FDINFO;
	for (i = 0; i < now->n; i++) {
		const struct smi_client *cl = &now->v[i];

		if (strcmp(cl->pdev, c->props.pci_address))
			continue;
		c->mem_used += cl->mem_total;
		for (j = 0; j < npids && pids[j] != cl->pid; j++)
			;
		if (j == npids && npids < (int)(sizeof(pids) / sizeof(pids[0])))
			pids[npids++] = cl->pid;
	}
	c->procs = npids;
	if (c->dbg.have_memory) {
		c->mem_used = c->dbg.device_used;
		c->mem_source = SMI_MEM_DEBUGFS;
	}
}

void smi_card_rates(const struct smi_card *c, double *cmds_per_s, double *bytes_per_s)
{
	const struct smi_counters *a = &c->before, *b = &c->now;
	double dt = (double)(b->t_ns - a->t_ns) / 1e9;

	*cmds_per_s = *bytes_per_s = -1;
	if (!a->ok || !b->ok || b->t_ns <= a->t_ns || a->reset_count != b->reset_count ||
	    b->commands < a->commands || b->dma_bytes < a->dma_bytes)
		return;
	*cmds_per_s = (double)(b->commands - a->commands) / dt;
	*bytes_per_s = (double)(b->dma_bytes - a->dma_bytes) / dt;
}

const char *smi_card_state(const struct smi_card *c)
{
	int q;

	if (!c->now.ok)
		return "removed";
	if (c->before.reset_count >= 0 && c->before.reset_count != c->now.reset_count)
		return "resetting";
	for (q = 0; c->dbg.have_queues && q < SMI_QUEUES; q++)
		if (c->dbg.queue_state[q] == 0)
			return "resetting";	/* the driver keeps every queue enabled but in a reset */
	return "ok";
}

int smi_card_banned(const struct smi_card *c)
{
	return c->dbg.have_contexts ? c->dbg.banned_files : -1;
}

int smi_sample(struct smi_card *cards, int count, struct smi_clients *clients)
{
	int i;

	for (i = 0; i < count; i++) {
		cards[i].before = cards[i].now;
		smi_card_counters(&cards[i], &cards[i].now);
	}
	return smi_clients_scan("/proc", (int)getpid(), clients);
}
