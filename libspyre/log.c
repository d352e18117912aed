// SPDX-License-Identifier: MIT
/* SPYRE_LOG=error|warn|info|debug: messages on stderr, one line each. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static int log_level = SPYRE_LOG_OFF;

static const char *const level_names[] = { "off", "error", "warn", "info", "debug" };

int spyre_log_parse(const char *s)
{
	char *end;
	long n;

	if (!s || !*s)
		return SPYRE_LOG_OFF;
	for (int i = 0; i <= SPYRE_LOG_DEBUG; i++)
		if (!strcasecmp(s, level_names[i]))
			return i;
	if (!strcasecmp(s, "warning"))
		return SPYRE_LOG_WARN;
	n = strtol(s, &end, 10);
	if (*end || n < 0)
		return -1;
	return n > SPYRE_LOG_DEBUG ? SPYRE_LOG_DEBUG : (int)n;
}

static void log_init(void)
{
	const char *env = getenv("SPYRE_LOG");
	int level = spyre_log_parse(env);

	if (level < 0) {
		fprintf(stderr, "libspyre: SPYRE_LOG=\"%s\" is not off|error|warn|info|debug; "
			"using warn\n", env);
		level = SPYRE_LOG_WARN;
	}
	log_level = level;
}

int spyre_log_enabled(enum spyre_log_level level)
{
	pthread_once(&log_once, log_init);
	return level != SPYRE_LOG_OFF && (int)level <= log_level;
}

void spyre_log(enum spyre_log_level level, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!spyre_log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One fprintf per line keeps threads' lines whole. */
	fprintf(stderr, "libspyre %s: %s\n", level_names[level], line);
}
