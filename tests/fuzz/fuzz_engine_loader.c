// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the engine's program loader (and, for images it accepts,
 * a run on a small device memory): whatever the bytes, load and run end
 * with a status, never a crash, a sanitizer report or a hang.
 *
 * libFuzzer:  make fuzz  (clang -fsanitize=fuzzer,address,undefined)
 * Replay:     build/tests/host/test_engine_corpus_san tests/fuzz/corpus/ *
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fuzz_engine_loader.h"

#define FUZZ_MEM_BYTES	(1u << 20)

struct fuzz_mem {
	uint8_t bytes[FUZZ_MEM_BYTES];
};

static int fuzz_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
	struct fuzz_mem *m = opaque;

	if (addr > FUZZ_MEM_BYTES || len > FUZZ_MEM_BYTES - addr)
		return -1;
	memcpy(buf, m->bytes + addr, len);
	return 0;
}

static int fuzz_write(void *opaque, uint64_t addr, const void *buf, size_t len)
{
	struct fuzz_mem *m = opaque;

	if (addr > FUZZ_MEM_BYTES || len > FUZZ_MEM_BYTES - addr)
		return -1;
	memcpy(m->bytes + addr, buf, len);
	return 0;
}

/* Matmul inputs are then read in place (the engine's lazy FIFOs). */
static const void *fuzz_map(void *opaque, uint64_t addr, size_t len)
{
	struct fuzz_mem *m = opaque;

	if (addr > FUZZ_MEM_BYTES || len > FUZZ_MEM_BYTES - addr)
		return NULL;
	return m->bytes + addr;
}

int fuzz_engine_one(const uint8_t *data, size_t size)
{
	static struct fuzz_mem mem;
	struct spyre_engine_mem ops = { &mem, fuzz_read, fuzz_write, fuzz_map };
	struct spyre_engine_config cfg;
	struct spyre_engine_error err;
	struct spyre_engine_stats stats;
	struct spyre_program *prog;
	uint64_t args[64];
	int st;

	spyre_engine_config_default(&cfg);
	cfg.max_work = 1u << 16;	/* keep each input quick */
	st = spyre_program_load(&cfg, data, size, &prog, &err);
	if (st)
		return st;
	/* Arguments 64 KiB apart inside the fuzz memory. */
	for (unsigned i = 0; i < 64; i++)
		args[i] = (uint64_t)(i % 16) << 16;
	st = spyre_program_run(prog, args, spyre_program_num_args(prog), &ops, &stats, &err);
	spyre_program_free(prog);
	return st;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_engine_one(data, size);
	return 0;
}
#endif
