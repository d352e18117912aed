// SPDX-License-Identifier: MIT
/* spyre-smi's output helpers: JSON strings and numbers, sizes, the time. */
#include <stdio.h>
#include <time.h>

#include "smi.h"

/* The card's queue STATUS values (docs/hardware.md). */
const char *const smi_queue_states[4] = { "disabled", "idle", "busy", "stopped" };

void smi_json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

void smi_json_num(FILE *out, double v)
{
	if (v < 0)
		fputs("null", out);
	else
		fprintf(out, "%.1f", v);
}

const char *smi_bytes(char *buf, size_t size, uint64_t bytes)
{
	if (bytes < 1024)
		snprintf(buf, size, "%llu B", (unsigned long long)bytes);
	else if (bytes < (1ull << 20))
		snprintf(buf, size, "%.1f KiB", (double)bytes / 1024);
	else if (bytes < (1ull << 30))
		snprintf(buf, size, "%.1f MiB", (double)bytes / (1 << 20));
	else
		snprintf(buf, size, "%.2f GiB", (double)bytes / (1 << 30));
	return buf;
}

const char *smi_time(char *buf, size_t size, int iso)
{
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, size, iso ? "%Y-%m-%dT%H:%M:%S%z" : "%Y-%m-%d %H:%M:%S", &tm);
	return buf;
}
