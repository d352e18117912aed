/* SPDX-License-Identifier: MIT */
/*
 * Shared pieces of the engine's host tests: device memory as a flat host
 * array behind the engine's callbacks (with an optional failure), and a
 * load-and-run helper.
 */
#ifndef SPYRE_ENGINE_TESTLIB_H
#define SPYRE_ENGINE_TESTLIB_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "spyre_program_builder.h"

struct test_mem {
	uint8_t *bytes;
	uint64_t size;
	uint64_t fail_at;	/* an access touching this address fails; 0 = never */
	int no_map;		/* 1: no map callback (the engine copies every stick) */
	size_t max_len;		/* a longer read or write is refused; 0 = any */
	uint64_t maps;		/* map calls that returned a pointer */
	uint64_t read_bytes;	/* bytes read through the read callback */
};

static inline int test_mem_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
	struct test_mem *m = opaque;

	if (addr > m->size || len > m->size - addr || (m->max_len && len > m->max_len) ||
	    (m->fail_at && addr <= m->fail_at && m->fail_at < addr + len))
		return -1;
	memcpy(buf, m->bytes + addr, len);
	m->read_bytes += len;
	return 0;
}

static inline int test_mem_write(void *opaque, uint64_t addr, const void *buf, size_t len)
{
	struct test_mem *m = opaque;

	if (addr > m->size || len > m->size - addr || (m->max_len && len > m->max_len) ||
	    (m->fail_at && addr <= m->fail_at && m->fail_at < addr + len))
		return -1;
	memcpy(m->bytes + addr, buf, len);
	return 0;
}

static inline const void *test_mem_map(void *opaque, uint64_t addr, size_t len)
{
	struct test_mem *m = opaque;

	if (addr > m->size || len > m->size - addr ||
	    (m->fail_at && addr <= m->fail_at && m->fail_at < addr + len))
		return NULL;
	m->maps++;
	return m->bytes + addr;
}

static inline struct spyre_engine_mem test_mem_ops(struct test_mem *m)
{
	struct spyre_engine_mem ops = { m, test_mem_read, test_mem_write,
					m->no_map ? NULL : test_mem_map };
	return ops;
}

static inline void test_mem_init(struct test_mem *m, uint64_t size)
{
	m->bytes = calloc(1, size);
	m->size = size;
	m->fail_at = 0;
	m->no_map = 0;
	m->max_len = 0;
	m->maps = 0;
	m->read_bytes = 0;
}

static inline void test_mem_fini(struct test_mem *m)
{
	free(m->bytes);
	m->bytes = NULL;
}

/*
 * Serialize, load and run prog on mem with args; returns the status of the
 * first step that failed.  err and stats may be NULL.
 */
static inline enum spyre_engine_status test_run(const struct spyre_engine_config *cfg,
						const struct pb_program *prog,
						struct test_mem *mem, const uint64_t *args,
						unsigned nargs, struct spyre_engine_stats *stats,
						struct spyre_engine_error *err)
{
	struct spyre_engine_error local_err;
	struct spyre_engine_mem ops = test_mem_ops(mem);
	struct spyre_program *p = NULL;
	enum spyre_engine_status st;
	size_t len;
	uint8_t *img = pb_serialize(prog, &len);

	if (!err)
		err = &local_err;
	if (!img)
		return SPYRE_ENGINE_E_NOMEM;
	st = spyre_program_load(cfg, img, len, &p, err);
	free(img);
	if (st) {
		printf("  # load: %s core %d index %d: %s\n", spyre_engine_status_name(st),
		       err->core, err->index, err->detail);
		return st;
	}
	st = spyre_program_run(p, args, nargs, &ops, stats, err);
	if (st)
		printf("  # run: %s core %d index %d: %s\n", spyre_engine_status_name(st),
		       err->core, err->index, err->detail);
	spyre_program_free(p);
	return st;
}

#endif /* SPYRE_ENGINE_TESTLIB_H */
