// SPDX-License-Identifier: MIT
/*
 * Helpers for the vm suite's spyre-smi checks (the guest has no python):
 *
 *   smi_helper busy SECONDS MIB   keep card 0 busy: MIB MiB of device memory,
 *                                 copies within it until SECONDS pass; prints
 *                                 "ready" once the memory is allocated
 *   smi_helper json [--lines]     exit 0 if stdin is one JSON value (--lines:
 *                                 every line is one JSON object), else say
 *                                 where it is not and exit 1
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spyre/spyre.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(const char *what, spyre_status st)
{
	fprintf(stderr, "smi_helper: %s: %s (%s)\n", what, spyre_strerror(st),
		spyre_last_error_detail());
	return 1;
}

static int busy(double seconds, unsigned long mib)
{
	uint64_t half = (uint64_t)mib << 19, chunk = half < (1u << 20) ? half : (1u << 20);
	spyre_device *dev;
	spyre_stream *s;
	spyre_buffer *buf;
	spyre_status st;
	double end;
	uint64_t off = 0;

	st = spyre_device_open(0, &dev);
	if (st)
		return fail("open", st);
	st = spyre_stream_create(dev, SPYRE_STREAM_PRIORITY_NORMAL, &s);
	if (!st)
		st = spyre_buffer_alloc(dev, (uint64_t)mib << 20, SPYRE_MEM_DEVICE, &buf);
	if (st)
		return fail("stream and buffer", st);
	printf("ready\n");
	fflush(stdout);
	for (end = now_s() + seconds; now_s() < end; off = (off + chunk) % half) {
		st = spyre_memcpy_dtod_async(s, buf, half + off, buf, off, chunk);
		if (!st)
			st = spyre_stream_synchronize(s);
		if (st)
			return fail("copy", st);
	}
	return spyre_device_close(dev) ? 1 : 0;
}

/* A recursive-descent JSON checker: enough to say the output parses. */
static const char *value(const char *p, int depth);

static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (; *p != '"'; p++) {
		if (!*p || (unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\' && !strchr("\"\\/bfnrtu", *++p))
			return NULL;
	}
	return p + 1;
}

static const char *number(const char *p)
{
	const char *start = p;

	if (*p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return NULL;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.' && isdigit((unsigned char)p[1]))
		for (p++; isdigit((unsigned char)*p); p++)
			;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return NULL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return p > start ? p : NULL;
}

/* The members of an object ('{') or the elements of an array ('['). */
static const char *compound(const char *p, int depth)
{
	char close = *p == '{' ? '}' : ']';
	int object = *p == '{';

	p = ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (object) {
			p = string(ws(p));
			if (!p || *(p = ws(p)) != ':')
				return NULL;
			p++;
		}
		p = value(p, depth + 1);
		if (!p)
			return NULL;
		p = ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *value(const char *p, int depth)
{
	p = ws(p);
	if (depth > 64)
		return NULL;
	if (*p == '{' || *p == '[')
		return compound(p, depth);
	if (*p == '"')
		return string(p);
	if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	return number(p);
}

static int check(const char *text, const char *what)
{
	const char *end = value(text, 0);

	if (end && !*ws(end))
		return 0;
	fprintf(stderr, "smi_helper: %s is not JSON near \"%.40s\"\n", what,
		end ? end : text);
	return 1;
}

static int json(int lines)
{
	static char text[1 << 20];
	size_t n = fread(text, 1, sizeof(text) - 1, stdin);
	char *line, *save;
	int bad = 0, count = 0;

	text[n] = '\0';
	if (!lines)
		return check(text, "the input");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		count++;
		bad |= *ws(line) != '{' || check(line, "a line");
	}
	return bad || !count;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "busy"))
		return busy(atof(argv[2]), strtoul(argv[3], NULL, 10));
	if ((argc == 2 || argc == 3) && !strcmp(argv[1], "json"))
		return json(argc == 3 && !strcmp(argv[2], "--lines"));
	fprintf(stderr, "usage: smi_helper busy SECONDS MIB | json [--lines]\n");
	return 2;
}
