// SPDX-License-Identifier: MIT
/*
 * The processes using a card, as nvtop and gputop find them: every fd of
 * every process under /proc whose fdinfo carries the DRM usage keys
 * (Documentation/gpu/drm-usage-stats.rst) with drm-driver "spyre".  An
 * open file shared by several fds or processes (dup, fork, SCM_RIGHTS) is
 * counted once, by its drm-client-id.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "smi.h"

int smi_parse_size(const char *text, uint64_t *bytes)
{
	static const struct { const char *unit; unsigned int shift; } units[] = {
		{ "", 0 }, { "B", 0 }, { "KiB", 10 }, { "MiB", 20 }, { "GiB", 30 },
	};
	unsigned long long v;
	char *end;
	size_t i;

	while (isspace((unsigned char)*text))
		text++;
	if (!isdigit((unsigned char)*text))
		return -1;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno)
		return -1;
	while (isspace((unsigned char)*end))
		end++;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t len = strlen(units[i].unit);

		if (strncmp(end, units[i].unit, len) || (end[len] && !isspace((unsigned char)end[len])))
			continue;
		if (units[i].shift && v > (UINT64_MAX >> units[i].shift))
			return -1;
		*bytes = (uint64_t)v << units[i].shift;
		return 0;
	}
	return -1;
}

static int parse_u64(const char *text, uint64_t *v)
{
	char *end;

	while (isspace((unsigned char)*text))
		text++;
	if (!isdigit((unsigned char)*text))
		return -1;
	errno = 0;
	*v = strtoull(text, &end, 10);
	return errno ? -1 : 0;
}

/* A memory key "drm-<stat>-<region>" added to its field; 1 if it was one. */
static int parse_memory_key(const char *key, const char *val, struct smi_client *c)
{
	static const struct { const char *prefix; size_t off; } stats[] = {
		{ "drm-total-", offsetof(struct smi_client, mem_total) },
		{ "drm-shared-", offsetof(struct smi_client, mem_shared) },
		{ "drm-active-", offsetof(struct smi_client, mem_active) },
	};
	uint64_t bytes;
	size_t i;

	for (i = 0; i < sizeof(stats) / sizeof(stats[0]); i++) {
		if (strncmp(key, stats[i].prefix, strlen(stats[i].prefix)))
			continue;
		if (smi_parse_size(val, &bytes) == 0)
			*(uint64_t *)((char *)c + stats[i].off) += bytes;
		return 1;
	}
	return 0;
}

/* drm-engine-<name>: "<ns> ns"; queueN also kept per queue. */
static void parse_engine_key(const char *name, const char *val, struct smi_client *c)
{
	uint64_t ns;
	char *end;
	long q;

	if (parse_u64(val, &ns))
		return;
	c->engine_total_ns += ns;
	if (strncmp(name, "queue", 5))
		return;
	q = strtol(name + 5, &end, 10);
	if (end != name + 5 && !*end && q >= 0 && q < SMI_QUEUES)
		c->engine_ns[q] = ns;
}

int smi_fdinfo_parse(const char *text, struct smi_client *c)
{
	int is_spyre = 0, has_id = 0;
	const char *line = text;

	memset(c, 0, sizeof(*c));
	while (line && *line) {
		const char *nl = strchr(line, '\n'), *colon = strchr(line, ':');
		char key[64];
		size_t klen;

		if (!colon || (nl && colon > nl) || (size_t)(colon - line) >= sizeof(key))
			goto next;
		klen = (size_t)(colon - line);
		memcpy(key, line, klen);
		key[klen] = '\0';
		if (!strcmp(key, "drm-driver")) {
			const char *v = colon + 1;

			while (*v == ' ' || *v == '\t')
				v++;
			is_spyre = !strncmp(v, "spyre", 5) && (v[5] == '\n' || !v[5]);
		} else if (!strcmp(key, "drm-client-id")) {
			has_id = parse_u64(colon + 1, &c->client_id) == 0;
		} else if (!strcmp(key, "drm-pdev")) {
			const char *v = colon + 1;
			size_t n = 0;

			while (*v == ' ' || *v == '\t')
				v++;
			while (v[n] && v[n] != '\n' && n < sizeof(c->pdev) - 1)
				n++;
			memcpy(c->pdev, v, n);
			c->pdev[n] = '\0';
		} else if (!strncmp(key, "drm-engine-", 11)) {
			parse_engine_key(key + 11, colon + 1, c);
		} else {
			parse_memory_key(key, colon + 1, c);
		}
next:
		line = nl ? nl + 1 : NULL;
	}
	return is_spyre && has_id;
}

static int read_text(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return 0;
}

static int add_client(struct smi_clients *out, const struct smi_client *c)
{
	size_t i;

	for (i = 0; i < out->n; i++) {
		struct smi_client *o = &out->v[i];

		if (o->client_id != c->client_id || strcmp(o->pdev, c->pdev))
			continue;
		if (c->pid < o->pid)
			o->pid = c->pid;
		return 0;
	}
	if (out->n == out->cap) {
		size_t cap = out->cap ? out->cap * 2 : 16;
		struct smi_client *v = realloc(out->v, cap * sizeof(*v));

		if (!v)
			return -1;
		out->v = v;
		out->cap = cap;
	}
	out->v[out->n++] = *c;
	return 0;
}

/* Spyre clients among one process's fds; fds not naming a device are skipped unread. */
static int scan_pid(const char *proc_root, int pid, struct smi_clients *out)
{
	char dir[PATH_MAX], path[PATH_MAX + 300], target[PATH_MAX], text[4096];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	snprintf(dir, sizeof(dir), "%s/%d/fd", proc_root, pid);
	d = opendir(dir);
	if (!d)
		return 0;	/* gone, or another user's */
	while ((de = readdir(d)) && !ret) {
		struct smi_client c;
		ssize_t n;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 5 || strncmp(target, "/dev/", 5))
			continue;
		snprintf(path, sizeof(path), "%s/%d/fdinfo/%s", proc_root, pid, de->d_name);
		if (read_text(path, text, sizeof(text)) || !smi_fdinfo_parse(text, &c))
			continue;
		c.pid = pid;
		ret = add_client(out, &c);
	}
	closedir(d);
	return ret;
}

int smi_clients_scan(const char *proc_root, int skip_pid, struct smi_clients *out)
{
	struct dirent *de;
	DIR *d = opendir(proc_root);

	out->n = 0;
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || end == de->d_name || pid <= 0 || pid == skip_pid || pid > INT_MAX)
			continue;
		if (scan_pid(proc_root, (int)pid, out)) {
			closedir(d);
			errno = ENOMEM;
			return -1;
		}
	}
	closedir(d);
	return 0;
}

void smi_clients_free(struct smi_clients *c)
{
	free(c->v);
	memset(c, 0, sizeof(*c));
}

const struct smi_client *smi_clients_find(const struct smi_clients *c, const char *pdev,
					  uint64_t client_id)
{
	size_t i;

	for (i = 0; c && i < c->n; i++)
		if (c->v[i].client_id == client_id && !strcmp(c->v[i].pdev, pdev))
			return &c->v[i];
	return NULL;
}

static void proc_name(const char *proc_root, int pid, char *name, size_t size)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d/comm", proc_root, pid);
	if (read_text(path, name, size))
		snprintf(name, size, "?");
	name[strcspn(name, "\n")] = '\0';
}

static int cmp_pid(const void *a, const void *b)
{
	const struct smi_proc *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The engine time @c gained since @before; -1 if it was not seen then. */
static int64_t engine_gain(const struct smi_client *c, const struct smi_clients *before)
{
	const struct smi_client *b = smi_clients_find(before, c->pdev, c->client_id);

	if (!b)
		return -1;
	return c->engine_total_ns >= b->engine_total_ns ?
	       (int64_t)(c->engine_total_ns - b->engine_total_ns) : -1;
}

int smi_procs_of(const char *proc_root, const struct smi_clients *now,
		 const struct smi_clients *before, uint64_t interval_ns, const char *pdev,
		 struct smi_proc **out)
{
	struct smi_proc *v = calloc(now->n ? now->n : 1, sizeof(*v));
	size_t i;
	int n = 0, j;

	if (!v)
		return -1;
	for (i = 0; i < now->n; i++) {
		const struct smi_client *c = &now->v[i];
		int64_t gain = before && interval_ns ? engine_gain(c, before) : -1;
		struct smi_proc *p = NULL;

		if (strcmp(c->pdev, pdev))
			continue;
		for (j = 0; j < n && !p; j++)
			if (v[j].pid == c->pid)
				p = &v[j];
		if (!p) {
			p = &v[n++];
			p->pid = c->pid;
			p->busy_pct = 0;
			proc_name(proc_root, c->pid, p->name, sizeof(p->name));
		}
		p->clients++;
		p->mem_bytes += c->mem_total;
		p->engine_ns += c->engine_total_ns;
		if (gain < 0 || p->busy_pct < 0)
			p->busy_pct = -1;
		else
			p->busy_pct += 100.0 * (double)gain / (double)interval_ns;
	}
	qsort(v, (size_t)n, sizeof(*v), cmp_pid);
	*out = v;
	return n;
}
