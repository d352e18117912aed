// SPDX-License-Identifier: MIT
/*
 * spyre-smi: the Spyre cards of this machine, their use and the processes
 * using them (nvidia-smi, xpu-smi and amd-smi are the models).
 * docs/runtime.md "spyre-smi" describes the views; --help the arguments
 * and exit codes.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smi.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: spyre-smi [-i INDEX] [--json]\n"
		"       spyre-smi -q [-i INDEX] [--json]\n"
		"       spyre-smi dmon [-i INDEX] [-d SECONDS] [-c COUNT] [--csv | --json]\n"
		"       spyre-smi -h | --help\n"
		"\n"
		"With no command: each card (PCI address, temperature, power, memory used\n"
		"and total, utilisation over %llu ms, state) and the processes using it\n"
		"(their memory, engine time and busy share).\n"
		"  -q, --query     everything known about each card\n"
		"  dmon            one line per card every -d SECONDS (default 1, fractions\n"
		"                  allowed), -c COUNT times (default: until interrupted)\n"
		"  -i, --id INDEX  only card INDEX (numbered as libspyre numbers them:\n"
		"                  by PCI address, or as SPYRE_VISIBLE_DEVICES orders them)\n"
		"  --json          JSON; dmon prints one object per line\n"
		"  --csv           dmon only: CSV, one header line\n"
		"  -h, --help      this text\n"
		"\n"
		"Memory used, open and banned files, MMU faults and queue states come from\n"
		"the driver's debugfs, which only root reads; other users see memory used\n"
		"as their processes' buffers (fdinfo). Only root sees other users' processes.\n"
		"\n"
		"Exit status:\n"
		"  0  success\n"
		"  1  another error (the message says which)\n"
		"  2  bad usage: an unknown or malformed argument\n"
		"  3  no card: the driver is not loaded, it has no card, or no card INDEX\n"
		"  4  permission denied on the card's /dev/accel node (join its group)\n",
		SMI_INTERVAL_NS / 1000000);
}

static int bad(const char *fmt, const char *arg)
{
	fprintf(stderr, "spyre-smi: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'spyre-smi --help'.\n");
	return SMI_EXIT_USAGE;
}

/* The value of option @argv[*i], which must be there. */
static const char *value(int argc, char **argv, int *i)
{
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

static int parse_long(const char *s, long lo, long hi, long *v)
{
	char *end;

	errno = 0;
	*v = s ? strtol(s, &end, 10) : 0;
	return !s || !*s || *end || errno || *v < lo || *v > hi ? -1 : 0;
}

static int parse_seconds(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = s ? strtod(s, &end) : 0;
	return !s || !*s || *end || errno || !isfinite(*v) || *v < 0.01 || *v > 86400 ? -1 : 0;
}

/* One option at argv[*i]; SMI_EXIT_OK, SMI_EXIT_USAGE, or -1 for --help. */
static int parse_option(int argc, char **argv, int *i, struct smi_opts *o, int *query)
{
	const char *a = argv[*i], *v;
	long n;

	if (!strcmp(a, "-h") || !strcmp(a, "--help"))
		return -1;
	if (!strcmp(a, "--json")) {
		o->json = 1;
	} else if (!strcmp(a, "--csv")) {
		o->csv = 1;
	} else if (!strcmp(a, "-q") || !strcmp(a, "--query")) {
		*query = 1;
	} else if (!strcmp(a, "-i") || !strcmp(a, "--id")) {
		v = value(argc, argv, i);
		if (parse_long(v, 0, 1 << 20, &n))
			return bad("-i needs a card index (0, 1, ...), got \"%s\"", v ? v : "nothing");
		o->only = (int)n;
	} else if (!strcmp(a, "-d")) {
		v = value(argc, argv, i);
		if (parse_seconds(v, &o->delay_s))
			return bad("-d needs seconds between 0.01 and 86400, got \"%s\"",
				   v ? v : "nothing");
	} else if (!strcmp(a, "-c")) {
		v = value(argc, argv, i);
		if (parse_long(v, 1, 1L << 30, &o->count))
			return bad("-c needs a count of 1 or more, got \"%s\"", v ? v : "nothing");
	} else {
		return bad("unknown argument \"%s\"", a);
	}
	return SMI_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct smi_opts o = { .only = -1, .delay_s = 1 };
	const char *timing = NULL;	/* -d or -c, which only dmon takes */
	int i, ret, query = 0, dmon = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "dmon") && !dmon) {
			dmon = 1;
			continue;
		}
		if (!strcmp(argv[i], "-d") || !strcmp(argv[i], "-c"))
			timing = argv[i];
		ret = parse_option(argc, argv, &i, &o, &query);
		if (ret < 0) {
			usage(stdout);
			return SMI_EXIT_OK;
		}
		if (ret)
			return ret;
	}
	if (dmon && query)
		return bad("%s and dmon are two different views: choose one", "-q");
	if (o.csv && !dmon)
		return bad("%s is for dmon only", "--csv");
	if (o.csv && o.json)
		return bad("%s: choose --csv or --json", "--csv --json");
	if (timing && !dmon)
		return bad("%s is for dmon only", timing);
	if (dmon)
		return smi_view_dmon(&o);
	return query ? smi_view_query(&o) : smi_view_default(&o);
}
