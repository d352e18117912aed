// SPDX-License-Identifier: MIT
/*
 * The engine's verdict on each kernel of tests/lib/broken_kernels.h: the
 * status, what the report's index counts, and which one it names.  The
 * guest suite (tests/vm/test_errors.c) checks the same verdicts arrive at
 * the user.
 */
#include <stdio.h>

#include "broken_kernels.h"
#include "engine.h"
#include "engine_testlib.h"
#include "tap.h"

static struct pb_program prog;

TEST(the_base_kernel_runs)
{
	struct spyre_engine_config cfg;
	struct spyre_engine_error err;
	struct test_mem mem;
	uint64_t args[BROKEN_ARGS] = { 0, 4096 };

	spyre_engine_config_default(&cfg);
	broken_base(&prog);
	test_mem_init(&mem, 1 << 16);
	EXPECT_EQ(test_run(&cfg, &prog, &mem, args, BROKEN_ARGS, NULL, &err), SPYRE_ENGINE_OK);
	test_mem_fini(&mem);
}

TEST(each_broken_kernel_gets_its_verdict)
{
	struct spyre_engine_config cfg;
	struct test_mem mem;
	uint64_t args[BROKEN_ARGS] = { 0, 4096 };

	spyre_engine_config_default(&cfg);
	test_mem_init(&mem, 1 << 16);
	for (unsigned i = 0; i < NUM_BROKEN_KERNELS; i++) {
		const struct broken_kernel *b = &broken_kernels[i];
		struct spyre_engine_error err;
		int st;

		broken_base(&prog);
		b->breaks(&prog);
		memset(&err, 0, sizeof(err));
		st = test_run(&cfg, &prog, &mem, args, BROKEN_ARGS, NULL, &err);
		printf("  # %s: %s at %d index %d core %d: %s\n", b->name,
		       spyre_engine_status_name(st), err.at, err.index, err.core, err.detail);
		EXPECT_EQ(st, b->status);
		EXPECT_EQ(err.status, b->status);
		EXPECT_EQ((int)err.at, b->site);
		EXPECT_EQ(err.index, b->index);
		EXPECT_EQ(err.core, 0);
		EXPECT_TRUE(err.detail[0] != '\0');
	}
	test_mem_fini(&mem);
}

TAP_MAIN()
