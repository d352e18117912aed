// SPDX-License-Identifier: MIT
/*
 * spyre-prof: a summary of a SPYRE_TRACE file, like `nsys stats`.  Per
 * kernel name: launches, total, mean, min and max time and share of the
 * kernels' total; per copy direction (htod, dtoh, dtod, fill, peer): copies,
 * bytes, time and bandwidth.  Text, or JSON with --json.
 *
 * It reads the Chrome/Perfetto JSON that libspyre's trace.c writes
 * (docs/runtime.md "Traces"): complete events ("ph":"X") of category
 * "launch" (named after the kernel; args device_ns, dram_bytes_read ...),
 * "copy" (named after the direction; args bytes) and "core", and metadata
 * events ("ph":"M").  Anything else in the file is read and skipped.  The
 * JSON parser below is a small, strict recursive-descent one: a file that
 * is not JSON, is cut short or has no trace events is refused with where
 * and why.  It needs nothing but libc (it does not link libspyre).
 *
 * Exit status: 0 summary printed; 1 the file cannot be read; 2 bad usage;
 * 3 the file is not a trace (not JSON, truncated, no traceEvents).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_UNREADABLE	1
#define EXIT_USAGE	2
#define EXIT_NOT_TRACE	3

#define MAX_DEPTH	64	/* nesting the parser follows before refusing */
#define NAME_BYTES	256	/* longer strings are cut (names are at most 63) */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: spyre-prof [--json] [--model] TRACE.json\n"
		"Summarise a SPYRE_TRACE file: per kernel name the launches, total,\n"
		"mean, min and max time and share of the kernels' time; per copy\n"
		"direction the copies, bytes, time and bandwidth.  TRACE may be -\n"
		"(standard input).\n"
		"  --json   the summary as JSON\n"
		"  --model  kernel times from the timing model (each launch's device_ns)\n"
		"           instead of its slice on the card's clock\n"
		"Exit status: 0 ok, 1 the file cannot be read, 2 bad usage,\n"
		"3 the file is not a trace (docs/runtime.md, \"spyre-prof\").\n");
}

/* ---- JSON ---- */

struct parser {
	const char *start, *p, *end;
	const char *err;		/* first error, or NULL */
	const char *err_at;
};

static int fail(struct parser *ps, const char *why)
{
	if (!ps->err) {
		ps->err = why;
		ps->err_at = ps->p;
	}
	return -1;
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' ||
				   *ps->p == '\r'))
		ps->p++;
}

/* The next significant character, or 0 at the end of the input. */
static char peek(struct parser *ps)
{
	skip_ws(ps);
	return ps->p < ps->end ? *ps->p : 0;
}

static int expect(struct parser *ps, char c)
{
	if (peek(ps) != c) {
		if (ps->p >= ps->end)
			return fail(ps, "the file ends early (truncated?)");
		return fail(ps, c == ':' ? "expected ':'" : c == '"' ? "expected a string" :
				"unexpected character");
	}
	ps->p++;
	return 0;
}

static void put_utf8(char *out, size_t size, size_t *o, unsigned cp)
{
	char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	}
	if (*o + n < size) {
		memcpy(out + *o, b, n);
		*o += n;
	}
}

static int hex4(struct parser *ps, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++, ps->p++) {
		char c = ps->p < ps->end ? *ps->p : 0;

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (unsigned)(c - 'A' + 10);
		else
			return fail(ps, ps->p >= ps->end ? "the file ends early (truncated?)" :
				    "bad \\u escape in a string");
	}
	return 0;
}

/* One escape after the backslash; characters outside the BMP become '?'. */
static int escape(struct parser *ps, char *out, size_t size, size_t *o)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e;
	unsigned cp;

	if (ps->p >= ps->end)
		return fail(ps, "the file ends early (truncated?)");
	e = strchr(from, *ps->p);
	if (*ps->p && e) {
		if (*o + 1 < size)
			out[(*o)++] = to[e - from];
		ps->p++;
		return 0;
	}
	if (*ps->p != 'u')
		return fail(ps, "bad escape in a string");
	ps->p++;
	if (hex4(ps, &cp))
		return -1;
	put_utf8(out, size, o, cp >= 0xd800 && cp < 0xe000 ? '?' : cp);
	return 0;
}

/* A string into @out (cut at @size - 1 bytes; NULL: only checked). */
static int string(struct parser *ps, char *out, size_t size)
{
	char scratch[1];
	size_t o = 0;

	if (!out) {
		out = scratch;
		size = 1;
	}
	if (expect(ps, '"'))
		return -1;
	while (ps->p < ps->end && *ps->p != '"') {
		unsigned char c = (unsigned char)*ps->p++;

		if (c < 0x20)
			return fail(ps, "a control character inside a string");
		if (c == '\\') {
			if (escape(ps, out, size, &o))
				return -1;
		} else if (o + 1 < size) {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
	if (ps->p >= ps->end)
		return fail(ps, "the file ends early inside a string (truncated?)");
	ps->p++;
	return 0;
}

static const char *digits(const char *p, const char *end)
{
	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p;
}

/* A number: *@d always, *@u too when it is a non-negative integer. */
static int number(struct parser *ps, double *d, uint64_t *u, int *is_uint)
{
	const char *s = ps->p, *q = s;
	char buf[64];
	int integral = 1;

	if (q < ps->end && *q == '-')
		q++;
	if (q >= ps->end || *q < '0' || *q > '9')
		return fail(ps, q >= ps->end ? "the file ends early (truncated?)" : "bad value");
	q = *q == '0' ? q + 1 : digits(q, ps->end);
	if (q < ps->end && *q == '.') {
		const char *f = digits(q + 1, ps->end);

		if (f == q + 1)
			return fail(ps, "bad number");
		q = f;
		integral = 0;
	}
	if (q < ps->end && (*q == 'e' || *q == 'E')) {
		const char *x = q + 1, *f;

		if (x < ps->end && (*x == '+' || *x == '-'))
			x++;
		f = digits(x, ps->end);
		if (f == x)
			return fail(ps, "bad number");
		q = f;
		integral = 0;
	}
	if ((size_t)(q - s) >= sizeof(buf))
		return fail(ps, "a number of more than 63 characters");
	memcpy(buf, s, (size_t)(q - s));
	buf[q - s] = '\0';
	ps->p = q;
	*d = strtod(buf, NULL);
	*is_uint = integral && *s != '-';
	*u = *is_uint ? strtoull(buf, NULL, 10) : 0;
	return 0;
}

static int literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) < n)
		return fail(ps, "the file ends early (truncated?)");
	if (memcmp(ps->p, word, n))
		return fail(ps, "bad value");
	ps->p += n;
	return 0;
}

static int skip_value(struct parser *ps, int depth);

/* Walk an object or array whose opening bracket is next, skipping its members. */
static int skip_container(struct parser *ps, int depth, char close)
{
	ps->p++;
	if (depth >= MAX_DEPTH)
		return fail(ps, "nested too deeply");
	if (peek(ps) == close) {
		ps->p++;
		return 0;
	}
	for (;;) {
		if (close == '}' && (string(ps, NULL, 0) || expect(ps, ':')))
			return -1;
		if (skip_value(ps, depth + 1))
			return -1;
		if (peek(ps) == ',') {
			ps->p++;
			continue;
		}
		return expect(ps, close);
	}
}

static int skip_value(struct parser *ps, int depth)
{
	double d;
	uint64_t u;
	int is_uint;

	switch (peek(ps)) {
	case 0:
		return fail(ps, "the file ends early (truncated?)");
	case '{':
		return skip_container(ps, depth, '}');
	case '[':
		return skip_container(ps, depth, ']');
	case '"':
		return string(ps, NULL, 0);
	case 't':
		return literal(ps, "true");
	case 'f':
		return literal(ps, "false");
	case 'n':
		return literal(ps, "null");
	default:
		return number(ps, &d, &u, &is_uint);
	}
}

/*
 * The members of an object whose '{' is next: @member is called with each
 * key, the parser at its value, and must consume the value.
 */
static int object(struct parser *ps, int (*member)(struct parser *, const char *, void *),
		  void *ctx)
{
	char key[64];

	if (expect(ps, '{'))
		return -1;
	if (peek(ps) == '}') {
		ps->p++;
		return 0;
	}
	for (;;) {
		if (string(ps, key, sizeof(key)) || expect(ps, ':') || member(ps, key, ctx))
			return -1;
		if (peek(ps) == ',') {
			ps->p++;
			continue;
		}
		return expect(ps, '}');
	}
}

/* ---- trace events ---- */

struct event {
	char name[NAME_BYTES], cat[32], ph[8], meta[NAME_BYTES];
	int has_ts, has_dur;
	double ts, dur;			/* microseconds */
	uint64_t device_ns, dram_read, dram_written, macs, firings, bytes;
	int has_device_ns;
};

/* A number member; a value of another type is skipped and leaves *@u alone. */
static int u64_value(struct parser *ps, uint64_t *u, int *found)
{
	double d;
	int is_uint;
	char c = peek(ps);

	if (c != '-' && (c < '0' || c > '9'))
		return skip_value(ps, 1);
	if (number(ps, &d, u, &is_uint))
		return -1;
	if (!is_uint)
		*u = d > 0 ? (uint64_t)d : 0;
	if (found)
		*found = 1;
	return 0;
}

static int arg_member(struct parser *ps, const char *key, void *ctx)
{
	struct event *e = ctx;

	if (!strcmp(key, "name") && peek(ps) == '"')
		return string(ps, e->meta, sizeof(e->meta));
	if (!strcmp(key, "device_ns"))
		return u64_value(ps, &e->device_ns, &e->has_device_ns);
	if (!strcmp(key, "dram_bytes_read"))
		return u64_value(ps, &e->dram_read, NULL);
	if (!strcmp(key, "dram_bytes_written"))
		return u64_value(ps, &e->dram_written, NULL);
	if (!strcmp(key, "macs"))
		return u64_value(ps, &e->macs, NULL);
	if (!strcmp(key, "op_firings"))
		return u64_value(ps, &e->firings, NULL);
	if (!strcmp(key, "bytes"))
		return u64_value(ps, &e->bytes, NULL);
	return skip_value(ps, 2);
}

static int time_value(struct parser *ps, double *t, int *found)
{
	uint64_t u;
	int is_uint;
	char c = peek(ps);

	if (c != '-' && (c < '0' || c > '9'))
		return skip_value(ps, 1);
	if (number(ps, t, &u, &is_uint))
		return -1;
	*found = 1;
	return 0;
}

static int event_member(struct parser *ps, const char *key, void *ctx)
{
	struct event *e = ctx;

	if (!strcmp(key, "name") && peek(ps) == '"')
		return string(ps, e->name, sizeof(e->name));
	if (!strcmp(key, "cat") && peek(ps) == '"')
		return string(ps, e->cat, sizeof(e->cat));
	if (!strcmp(key, "ph") && peek(ps) == '"')
		return string(ps, e->ph, sizeof(e->ph));
	if (!strcmp(key, "ts"))
		return time_value(ps, &e->ts, &e->has_ts);
	if (!strcmp(key, "dur"))
		return time_value(ps, &e->dur, &e->has_dur);
	if (!strcmp(key, "args") && peek(ps) == '{')
		return object(ps, arg_member, e);
	return skip_value(ps, 1);
}

/* ---- the summary ---- */

struct kernel {
	char *name;
	uint64_t count, total, min, max;	/* ns of the chosen time */
	uint64_t clock_total, model_total, dram_read, dram_written, macs, firings;
};

enum { HTOD, DTOH, DTOD, FILL, PEER, OTHER, NUM_DIRS };
static const char *const dir_names[NUM_DIRS] = { "htod", "dtoh", "dtod", "fill", "peer",
						   "other" };

struct summary {
	int model;			/* --model: kernel times from device_ns */
	struct kernel *k;		/* open-addressed by name */
	size_t nk, cap;
	uint64_t launches, devices, streams, skipped;
	/* "wall", "model", "mixed", or "" when the trace does not say */
	char clock[8];
	uint64_t copies[NUM_DIRS], copy_bytes[NUM_DIRS], copy_ns[NUM_DIRS];
};

static uint64_t to_ns(double us)
{
	return us > 0 ? (uint64_t)(us * 1000.0 + 0.5) : 0;
}

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static struct kernel *slot_for(struct kernel *tab, size_t cap, const char *name)
{
	size_t i = (size_t)hash(name) & (cap - 1);

	while (tab[i].name && strcmp(tab[i].name, name))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int grow(struct summary *s)
{
	size_t cap = s->cap ? s->cap * 2 : 64;
	struct kernel *t = calloc(cap, sizeof(*t));

	if (!t)
		return -1;
	for (size_t i = 0; i < s->cap; i++)
		if (s->k[i].name)
			*slot_for(t, cap, s->k[i].name) = s->k[i];
	free(s->k);
	s->k = t;
	s->cap = cap;
	return 0;
}

static int add_launch(struct summary *s, const struct event *e)
{
	uint64_t clock = to_ns(e->dur), t;
	struct kernel *k;

	if ((s->nk + 1) * 2 > s->cap && grow(s))
		return -1;
	k = slot_for(s->k, s->cap, e->name);
	if (!k->name) {
		k->name = strdup(e->name);
		if (!k->name)
			return -1;
		k->min = UINT64_MAX;
		s->nk++;
	}
	t = s->model ? e->device_ns : clock;
	k->count++;
	k->total += t;
	k->min = t < k->min ? t : k->min;
	k->max = t > k->max ? t : k->max;
	k->clock_total += clock;
	k->model_total += e->device_ns;
	k->dram_read += e->dram_read;
	k->dram_written += e->dram_written;
	k->macs += e->macs;
	k->firings += e->firings;
	s->launches++;
	return 0;
}

static void add_copy(struct summary *s, const struct event *e)
{
	int d = OTHER;

	for (int i = 0; i < OTHER; i++)
		if (!strcmp(e->name, dir_names[i]))
			d = i;
	s->copies[d]++;
	s->copy_bytes[d] += e->bytes;
	s->copy_ns[d] += to_ns(e->dur);
}

/* A device open's name says its card clock ("..., card clock: model)"). */
static void note_clock(struct summary *s, const char *process_name)
{
	const char *c = strstr(process_name, "card clock: ");
	const char *mode;

	if (!c)
		return;
	c += strlen("card clock: ");
	mode = !strncmp(c, "model", 5) ? "model" : !strncmp(c, "wall", 4) ? "wall" : NULL;
	if (!mode)
		return;
	if (!s->clock[0])
		snprintf(s->clock, sizeof(s->clock), "%s", mode);
	else if (strcmp(s->clock, mode))
		snprintf(s->clock, sizeof(s->clock), "mixed");
}

static const char *clock_text(const struct summary *s)
{
	if (!strcmp(s->clock, "model"))
		return "modelled: what the real card would take";
	if (!strcmp(s->clock, "wall"))
		return "wall: the emulator's time";
	if (!strcmp(s->clock, "mixed"))
		return "mixed: device opens on different clocks";
	return "not recorded in the trace";
}

static int add_event(struct summary *s, const struct event *e)
{
	if (!strcmp(e->ph, "M")) {
		if (!strcmp(e->name, "process_name"))
			note_clock(s, e->meta);
		s->devices += !strcmp(e->name, "process_name");
		s->streams += !strcmp(e->name, "thread_name") && strncmp(e->meta, "core ", 5);
		return 0;
	}
	if (strcmp(e->ph, "X"))
		return 0;
	if (!e->has_ts || !e->has_dur) {
		s->skipped++;
		return 0;
	}
	if (!strcmp(e->cat, "launch"))
		return add_launch(s, e);
	if (!strcmp(e->cat, "copy"))
		add_copy(s, e);
	return 0;
}

/* The traceEvents array (its '[' next), each event added to @s. */
static int events(struct parser *ps, struct summary *s)
{
	if (expect(ps, '['))
		return -1;
	if (peek(ps) == ']') {
		ps->p++;
		return 0;
	}
	for (;;) {
		struct event e;

		memset(&e, 0, sizeof(e));
		if (peek(ps) != '{')
			return ps->p >= ps->end ? fail(ps, "the file ends early (truncated?)") :
			       fail(ps, "a trace event is not an object");
		if (object(ps, event_member, &e))
			return -1;
		if (add_event(s, &e))
			return fail(ps, "out of memory");
		if (peek(ps) == ',') {
			ps->p++;
			continue;
		}
		return expect(ps, ']');
	}
}

struct top {
	struct summary *s;
	int found;
};

static int top_member(struct parser *ps, const char *key, void *ctx)
{
	struct top *t = ctx;

	if (!strcmp(key, "traceEvents") && peek(ps) == '[') {
		t->found = 1;
		return events(ps, t->s);
	}
	return skip_value(ps, 1);
}

/* The whole file: {"traceEvents":[...], ...} or a bare array of events. */
static int parse_trace(struct parser *ps, struct summary *s, const char **why)
{
	struct top t = { s, 0 };
	char c = peek(ps);

	*why = NULL;
	if (c == '[') {
		t.found = 1;
		if (events(ps, s))
			return -1;
	} else if (c == '{') {
		if (object(ps, top_member, &t))
			return -1;
	} else {
		return fail(ps, c ? "not JSON" : "the file is empty");
	}
	if (peek(ps))
		return fail(ps, "more data after the JSON value");
	if (!t.found)
		*why = "no \"traceEvents\" array: not a trace";
	return 0;
}

/* ---- output ---- */

static int by_total(const void *a, const void *b)
{
	const struct kernel *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The kernels, packed and sorted by total time, largest first. */
static size_t sorted(struct summary *s, uint64_t *sum)
{
	size_t n = 0;

	*sum = 0;
	for (size_t i = 0; i < s->cap; i++)
		if (s->k[i].name)
			s->k[n++] = s->k[i];
	/* Each name is now held once, in the first n entries. */
	memset(s->k + n, 0, (s->cap - n) * sizeof(*s->k));
	qsort(s->k, n, sizeof(*s->k), by_total);
	for (size_t i = 0; i < n; i++)
		*sum += s->k[i].total;
	return n;
}

static double us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

static void print_text(const char *path, struct summary *s)
{
	uint64_t sum;
	size_t n = sorted(s, &sum);
	int copies = 0;

	printf("%s: %llu launch%s of %zu kernel%s, %llu device open%s, %llu stream%s\n", path,
	       (unsigned long long)s->launches, s->launches == 1 ? "" : "es", n,
	       n == 1 ? "" : "s", (unsigned long long)s->devices, s->devices == 1 ? "" : "s",
	       (unsigned long long)s->streams, s->streams == 1 ? "" : "s");
	printf("card clock: %s\n", clock_text(s));
	printf("\nKernels (time: %s)\n", s->model ? "the timing model's device_ns" :
	       "slices on the card's clock");
	printf(" %7s %12s %7s %11s %11s %11s %11s  %s\n", "Time(%)", "Total(us)", "Count",
	       "Mean(us)", "Min(us)", "Max(us)", s->model ? "Clock(us)" : "Model(us)", "Name");
	for (size_t i = 0; i < n; i++) {
		const struct kernel *k = &s->k[i];

		printf(" %7.1f %12.3f %7llu %11.3f %11.3f %11.3f %11.3f  %s\n",
		       sum ? 100.0 * (double)k->total / (double)sum : 0.0, us(k->total),
		       (unsigned long long)k->count, us(k->total) / (double)k->count, us(k->min),
		       us(k->max), us(s->model ? k->clock_total : k->model_total), k->name);
	}
	if (!n)
		printf(" (no launches)\n");
	printf("\nCopies\n %-9s %7s %14s %12s %10s\n", "Direction", "Count", "Bytes", "Total(us)",
	       "GB/s");
	for (int d = 0; d < NUM_DIRS; d++) {
		if (!s->copies[d])
			continue;
		copies = 1;
		printf(" %-9s %7llu %14llu %12.3f %10.3f\n", dir_names[d],
		       (unsigned long long)s->copies[d], (unsigned long long)s->copy_bytes[d],
		       us(s->copy_ns[d]), s->copy_ns[d] ?
		       (double)s->copy_bytes[d] / (double)s->copy_ns[d] : 0.0);
	}
	if (!copies)
		printf(" (no copies)\n");
	if (s->skipped)
		printf("\n%llu complete event%s without ts or dur skipped\n",
		       (unsigned long long)s->skipped, s->skipped == 1 ? "" : "s");
}

static void json_string(const char *v)
{
	putchar('"');
	for (; *v; v++) {
		unsigned char c = (unsigned char)*v;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void print_json(const char *path, struct summary *s)
{
	uint64_t sum;
	size_t n = sorted(s, &sum);

	printf("{\n  \"trace\": ");
	json_string(path);
	printf(",\n  \"card_clock\": ");
	if (s->clock[0])
		json_string(s->clock);
	else
		printf("null");
	printf(",\n  \"time\": \"%s\",\n  \"launches\": %llu,\n  \"device_opens\": %llu,\n"
	       "  \"streams\": %llu,\n  \"skipped_events\": %llu,\n  \"kernel_total_ns\": %llu,\n"
	       "  \"kernels\": [", s->model ? "model" : "clock", (unsigned long long)s->launches,
	       (unsigned long long)s->devices, (unsigned long long)s->streams,
	       (unsigned long long)s->skipped, (unsigned long long)sum);
	for (size_t i = 0; i < n; i++) {
		const struct kernel *k = &s->k[i];

		printf("%s\n    {\"name\": ", i ? "," : "");
		json_string(k->name);
		printf(", \"count\": %llu, \"total_ns\": %llu, \"mean_ns\": %llu, \"min_ns\": %llu,"
		       " \"max_ns\": %llu, \"share\": %.6f, \"clock_total_ns\": %llu,"
		       " \"model_total_ns\": %llu, \"dram_bytes_read\": %llu,"
		       " \"dram_bytes_written\": %llu, \"macs\": %llu, \"op_firings\": %llu}",
		       (unsigned long long)k->count, (unsigned long long)k->total,
		       (unsigned long long)(k->total / k->count), (unsigned long long)k->min,
		       (unsigned long long)k->max, sum ? (double)k->total / (double)sum : 0.0,
		       (unsigned long long)k->clock_total, (unsigned long long)k->model_total,
		       (unsigned long long)k->dram_read, (unsigned long long)k->dram_written,
		       (unsigned long long)k->macs, (unsigned long long)k->firings);
	}
	printf("%s],\n  \"copies\": [", n ? "\n  " : "");
	for (int d = 0, first = 1; d < NUM_DIRS; d++) {
		if (!s->copies[d])
			continue;
		printf("%s\n    {\"direction\": \"%s\", \"count\": %llu, \"bytes\": %llu,"
		       " \"total_ns\": %llu, \"gbps\": %.3f}", first ? "" : ",", dir_names[d],
		       (unsigned long long)s->copies[d], (unsigned long long)s->copy_bytes[d],
		       (unsigned long long)s->copy_ns[d], s->copy_ns[d] ?
		       (double)s->copy_bytes[d] / (double)s->copy_ns[d] : 0.0);
		first = 0;
	}
	printf("\n  ]\n}\n");
}

/* ---- main ---- */

/* The whole of @f, NUL-terminated, in a malloc'd buffer. */
static char *slurp(FILE *f, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap), *b;

	while (buf) {
		n += fread(buf + n, 1, cap - n - 1, f);
		if (ferror(f))
			break;
		if (feof(f)) {
			buf[n] = '\0';
			*len = n;
			return buf;
		}
		b = realloc(buf, cap * 2);
		if (!b)
			break;
		buf = b;
		cap *= 2;
	}
	free(buf);
	return NULL;
}

/* Line and column of @at in the input, for messages. */
static void where(const struct parser *ps, const char *at, unsigned long *line,
		  unsigned long *col)
{
	*line = 1;
	*col = 1;
	for (const char *p = ps->start; p < at; p++) {
		if (*p == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

static int summarise(const char *path, const char *text, size_t len, int json, int model)
{
	struct parser ps = { text, text, text + len, NULL, NULL };
	struct summary s = { .model = model };
	const char *why;
	unsigned long line, col;
	int rc = 0;

	if (parse_trace(&ps, &s, &why)) {
		where(&ps, ps.err_at, &line, &col);
		fprintf(stderr, "spyre-prof: %s: not a trace: %s at line %lu, column %lu\n", path,
			ps.err, line, col);
		rc = EXIT_NOT_TRACE;
	} else if (why) {
		fprintf(stderr, "spyre-prof: %s: %s\n", path, why);
		rc = EXIT_NOT_TRACE;
	} else if (json) {
		print_json(path, &s);
	} else {
		print_text(path, &s);
	}
	for (size_t i = 0; i < s.cap; i++)
		free(s.k[i].name);
	free(s.k);
	return rc;
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	int json = 0, model = 0, rc;
	size_t len = 0;
	char *text;
	FILE *f;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--model")) {
			model = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!path && (argv[i][0] != '-' || !strcmp(argv[i], "-"))) {
			path = argv[i];
		} else {
			fprintf(stderr, "spyre-prof: unexpected argument '%s'\n", argv[i]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (!path) {
		fprintf(stderr, "spyre-prof: no trace file given\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f) {
		fprintf(stderr, "spyre-prof: cannot open %s: %s\n", path, strerror(errno));
		return EXIT_UNREADABLE;
	}
	text = slurp(f, &len);
	if (!text) {
		fprintf(stderr, "spyre-prof: cannot read %s: %s\n", path,
			errno ? strerror(errno) : "out of memory");
		if (f != stdin)
			fclose(f);
		return EXIT_UNREADABLE;
	}
	if (f != stdin)
		fclose(f);
	rc = summarise(path, text, len, json, model);
	free(text);
	return rc;
}
