// SPDX-License-Identifier: MIT
/*
 * Replays the loader fuzz corpus (tests/fuzz/corpus/, or the files given)
 * through load and run, as one TAP test: every file must end with a status.  Built
 * with ASan/UBSan, this keeps every input the fuzzer ever kept a regression
 * test without needing clang's libFuzzer.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fuzz_engine_loader.h"

static int replay(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long len;
	int st;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc(len > 0 ? (size_t)len : 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	st = fuzz_engine_one(buf, (size_t)len);
	free(buf);
	return st;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "tests/fuzz/corpus";
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;
	DIR *d = opendir(dir);

	unsigned by_status[SPYRE_ENGINE_STATUS_COUNT] = { 0 }, unreadable = 0;

	printf("TAP version 13\n");
	if (!d) {
		printf("1..1\nnot ok 1 - corpus directory %s\n", dir);
		return 1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		int st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		st = replay(path);
		if (st < 0) {
			printf("  # %s: unreadable\n", path);
			unreadable++;
		} else if (st < SPYRE_ENGINE_STATUS_COUNT) {
			by_status[st]++;
		}
		free(names[i]);
	}
	/* Reaching here is the test: every input came back with a status. */
	for (int s = 0; s < SPYRE_ENGINE_STATUS_COUNT; s++)
		if (by_status[s])
			printf("  # %5u %s\n", by_status[s], spyre_engine_status_name(s));
	printf("1..1\n%s 1 - %zu corpus inputs from %s end with a status\n",
	       unreadable || !n ? "not ok" : "ok", n, dir);
	free(names);
	return 0;
}
